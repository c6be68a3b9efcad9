//! A Chinese–English dictionary for reading a citation across languages: each simplified
//! headword of CC-CEDICT (CC BY-SA 4.0, MDBG; `docs/licences.md`) with the content words of
//! its English glosses, embedded in the server (`build.rs`, `scripts/cedict.sh`) and read
//! once, on first use. `引用` → `quote cite recommend appoint reference`.

use std::collections::{HashMap, HashSet};
use std::io::Read;
use std::sync::OnceLock;

/// The table `build.rs` put in `OUT_DIR`: gzipped lines of `headword<TAB>word word…`;
/// empty when the server was built without it.
static TABLE: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/cedict.tsv.gz"));

/// The table's last line: the gloss words that are names (`scripts/cedict-table.py`).
const NAMES: &str = "*names";

/// The most a table may decompress to (it is ours, built in; this only bounds a mistake).
const MAX_TEXT: u64 = 64 << 20;

pub struct Dictionary {
    glosses: HashMap<&'static str, &'static str>,
    /// Every word of the glosses: the English the dictionary knows.
    english: HashSet<&'static str>,
}

impl Dictionary {
    fn load(gzipped: &[u8]) -> Dictionary {
        let mut text = String::new();
        if !gzipped.is_empty() {
            let read = flate2::read::GzDecoder::new(gzipped)
                .take(MAX_TEXT)
                .read_to_string(&mut text);
            if let Err(error) = read {
                tracing::error!(%error, "the built-in dictionary cannot be read");
                text.clear();
            }
        }
        // Read once and kept for the life of the process.
        let text: &'static str = Box::leak(text.into_boxed_str());
        let mut glosses: HashMap<&'static str, &'static str> = text
            .lines()
            .filter_map(|line| line.split_once('\t'))
            .collect();
        // The words the dictionary only writes capitalised: names, not English words.
        let names: HashSet<&str> = glosses
            .remove(NAMES)
            .unwrap_or_default()
            .split(' ')
            .collect();
        let english = glosses
            .values()
            .flat_map(|words| words.split(' '))
            .filter(|w| !w.is_empty() && !names.contains(w))
            .collect();
        Dictionary { glosses, english }
    }

    /// The English content words glossing a Chinese word (none when it is not listed).
    pub fn glosses(&self, word: &str) -> impl Iterator<Item = &'static str> {
        self.glosses
            .get(word)
            .copied()
            .unwrap_or("")
            .split(' ')
            .filter(|w| !w.is_empty())
    }

    /// Whether `word` (lowercase) is an English word some gloss uses, not only as a name:
    /// "construction" is, "singapore" and "eurostar" are not.
    pub fn is_english(&self, word: &str) -> bool {
        self.english.contains(word)
    }

    /// Headwords listed.
    pub fn len(&self) -> usize {
        self.glosses.len()
    }

    pub fn is_empty(&self) -> bool {
        self.glosses.is_empty()
    }
}

/// The built-in dictionary.
pub fn dictionary() -> &'static Dictionary {
    static DICTIONARY: OnceLock<Dictionary> = OnceLock::new();
    DICTIONARY.get_or_init(|| Dictionary::load(TABLE))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_is_read_line_by_line() {
        use std::io::Write;
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(
            "咖啡因\tcaffeine\n铁路\trailroad railway\nbroken line\n新加坡\tsingapore\n*names\tsingapore\n"
                .as_bytes(),
        )
        .unwrap();
        let dictionary = Dictionary::load(&gz.finish().unwrap());
        assert_eq!(dictionary.len(), 3);
        assert_eq!(
            dictionary.glosses("铁路").collect::<Vec<_>>(),
            ["railroad", "railway"]
        );
        assert_eq!(dictionary.glosses("没有").count(), 0);
        assert!(dictionary.is_english("railway") && !dictionary.is_english("铁路"));
        assert_eq!(
            dictionary.glosses("新加坡").collect::<Vec<_>>(),
            ["singapore"]
        );
        assert!(!dictionary.is_english("singapore"), "a name");
        assert!(Dictionary::load(b"").is_empty());
        assert!(Dictionary::load(b"not gzip").is_empty());
    }
}
