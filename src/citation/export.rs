//! Citations for reference managers: the sources an answer (or a conversation) cites as
//! BibTeX (`@online`), RIS (`ELEC`) and CSL-JSON (`webpage`), each with its title, URL, site,
//! the date it was read and, when the citation check found one, the passage as a note.
//!
//! Pure and shared: the server serves them (`/c/<id>/citations.{bib,ris,json}`,
//! `cited history export --format`). Titles and passages are untrusted text: every format
//! escapes what its syntax would read (BibTeX's braces and specials, RIS's line structure,
//! JSON through serde), so no title can end a field, an entry or the file.

use serde_json::json;

use crate::citation::CitationEntry;
use crate::model::Exchange;

/// The sources a conversation's answers cite (what the model cited, then what cited
/// added), each once (by URL, the first citation's), with the passage its best check found;
/// read on `accessed` (`YYYY-MM-DD`). Keys are `cited-<answer>-<number>`.
pub fn references(exchanges: &[Exchange], accessed: &str) -> Vec<Reference> {
    let mut out: Vec<Reference> = Vec::new();
    for (index, exchange) in exchanges.iter().enumerate() {
        let checks = crate::model::all_checks(&exchange.alignments, &exchange.claims);
        let mut numbers = exchange.cited.clone();
        numbers.extend(crate::model::added_numbers(
            &exchange.cited,
            &exchange.claims,
        ));
        for number in numbers {
            let Some(entry) = exchange.sources.iter().find(|e| e.number == number) else {
                continue;
            };
            if out.iter().any(|r| r.url == entry.url) {
                continue;
            }
            let passage = crate::model::best_check(&checks, number)
                .filter(|check| check.support != crate::model::Support::NotFound)
                .map(|check| check.passage.as_str());
            let key = format!("cited-{}-{number}", index + 1);
            out.push(Reference::of(key, entry, accessed, passage));
        }
    }
    out
}

/// A time (ms since the Unix epoch) as `YYYY-MM-DD HH:MM` UTC.
pub fn utc(ms: i64) -> String {
    let secs = ms.div_euclid(1000);
    let (days, rest) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Howard Hinnant's days-to-civil.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}",
        rest / 3600,
        rest % 3600 / 60
    )
}

/// One cited source as a reference manager gets it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reference {
    /// Unique within one export (`cited-3`, or `cited-2-3` across answers).
    pub key: String,
    pub title: String,
    pub url: String,
    /// The site (the source's domain).
    pub site: String,
    /// The day the source was read: `YYYY-MM-DD`.
    pub accessed: String,
    /// The passage that supports the sentence citing it, when checked.
    pub passage: Option<String>,
}

impl Reference {
    pub fn of(
        key: String,
        entry: &CitationEntry,
        accessed: &str,
        passage: Option<&str>,
    ) -> Reference {
        let title = if entry.title.trim().is_empty() {
            entry.url.clone()
        } else {
            entry.title.clone()
        };
        Reference {
            key,
            title,
            url: entry.url.clone(),
            site: entry.domain.clone(),
            accessed: accessed.to_string(),
            passage: passage.filter(|p| !p.trim().is_empty()).map(str::to_string),
        }
    }
}

/// The export formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Bibtex,
    Ris,
    CslJson,
}

impl Format {
    /// By a file extension or a name: `bib`/`bibtex`, `ris`, `json`/`csl`/`csl-json`.
    pub fn parse(raw: &str) -> Option<Format> {
        match raw.trim().to_ascii_lowercase().as_str() {
            "bib" | "bibtex" => Some(Format::Bibtex),
            "ris" => Some(Format::Ris),
            "json" | "csl" | "csl-json" | "csljson" => Some(Format::CslJson),
            _ => None,
        }
    }

    pub fn extension(self) -> &'static str {
        match self {
            Format::Bibtex => "bib",
            Format::Ris => "ris",
            Format::CslJson => "json",
        }
    }

    pub fn content_type(self) -> &'static str {
        match self {
            Format::Bibtex => "application/x-bibtex; charset=utf-8",
            Format::Ris => "application/x-research-info-systems; charset=utf-8",
            Format::CslJson => "application/vnd.citationstyles.csl+json; charset=utf-8",
        }
    }

    pub fn write(self, references: &[Reference]) -> String {
        match self {
            Format::Bibtex => bibtex(references),
            Format::Ris => ris(references),
            Format::CslJson => csl_json(references),
        }
    }
}

/// Text on one line: newlines and other control characters become spaces.
fn one_line(text: &str) -> String {
    let spaced: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    spaced.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A BibTeX field's value: braces, backslashes and LaTeX's specials escaped, so the value
/// is balanced and prints as written.
fn bib_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    for c in one_line(text).chars() {
        match c {
            '\\' => out.push_str("\\textbackslash{}"),
            '{' => out.push_str("\\{"),
            '}' => out.push_str("\\}"),
            '%' | '&' | '$' | '#' | '_' => {
                out.push('\\');
                out.push(c);
            }
            '~' => out.push_str("\\textasciitilde{}"),
            '^' => out.push_str("\\textasciicircum{}"),
            c => out.push(c),
        }
    }
    out
}

/// A URL in BibTeX's `url` field (read verbatim by biblatex): only what would unbalance
/// the braces or break the line is percent-encoded.
fn bib_url(url: &str) -> String {
    let mut out = String::with_capacity(url.len());
    for c in url.chars() {
        match c {
            '{' => out.push_str("%7B"),
            '}' => out.push_str("%7D"),
            '\\' => out.push_str("%5C"),
            c if c.is_whitespace() || c.is_control() => out.push_str("%20"),
            c => out.push(c),
        }
    }
    out
}

pub fn bibtex(references: &[Reference]) -> String {
    let mut out = String::new();
    for r in references {
        out.push_str(&format!("@online{{{},\n", r.key));
        out.push_str(&format!("  title = {{{}}},\n", bib_text(&r.title)));
        out.push_str(&format!("  url = {{{}}},\n", bib_url(&r.url)));
        out.push_str(&format!("  organization = {{{}}},\n", bib_text(&r.site)));
        out.push_str(&format!("  urldate = {{{}}},\n", r.accessed));
        if let Some(passage) = &r.passage {
            out.push_str(&format!("  note = {{{}}},\n", bib_text(passage)));
        }
        out.push_str("}\n\n");
    }
    out
}

pub fn ris(references: &[Reference]) -> String {
    let mut out = String::new();
    for r in references {
        out.push_str("TY  - ELEC\r\n");
        out.push_str(&format!("TI  - {}\r\n", one_line(&r.title)));
        out.push_str(&format!("UR  - {}\r\n", one_line(&r.url)));
        out.push_str(&format!("T2  - {}\r\n", one_line(&r.site)));
        out.push_str(&format!("Y2  - {}\r\n", r.accessed.replace('-', "/")));
        if let Some(passage) = &r.passage {
            out.push_str(&format!("N1  - {}\r\n", one_line(passage)));
        }
        out.push_str(&format!("ID  - {}\r\n", r.key));
        out.push_str("ER  - \r\n\r\n");
    }
    out
}

pub fn csl_json(references: &[Reference]) -> String {
    let items: Vec<serde_json::Value> = references
        .iter()
        .map(|r| {
            let parts: Vec<u32> = r
                .accessed
                .split('-')
                .filter_map(|p| p.parse().ok())
                .collect();
            let mut item = json!({
                "id": r.key,
                "type": "webpage",
                "title": r.title,
                "URL": r.url,
                "container-title": r.site,
                "accessed": { "date-parts": [parts] },
            });
            if let Some(passage) = &r.passage {
                item["note"] = json!(passage);
            }
            item
        })
        .collect();
    serde_json::to_string_pretty(&items).unwrap_or_else(|_| "[]".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hostile() -> Reference {
        Reference {
            key: "cited-1".into(),
            title: "Braces {and} 100% of @everything\n\"quoted\" \\ & $ # _ ~ ^ مرحبا".into(),
            url: "https://example.org/a b{c}?q=1&r=%20".into(),
            site: "example.org".into(),
            accessed: "2026-11-25".into(),
            passage: Some("A passage\r\nwith lines } and { braces".into()),
        }
    }

    #[test]
    fn bibtex_fields_stay_balanced_whatever_the_title() {
        let bib = bibtex(&[hostile()]);
        // Every brace the text had is escaped: the file's own braces balance.
        let mut depth = 0i32;
        let mut escaped = false;
        for c in bib.chars() {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '{') => depth += 1,
                (false, '}') => depth -= 1,
                _ => {}
            }
            assert!(depth >= 0, "{bib}");
        }
        assert_eq!(depth, 0, "{bib}");
        assert!(bib.starts_with("@online{cited-1,\n"), "{bib}");
        assert!(bib.contains("title = {Braces \\{and\\} 100\\% of @everything \"quoted\" \\textbackslash{} \\& \\$ \\# \\_ \\textasciitilde{} \\textasciicircum{} مرحبا},"), "{bib}");
        assert!(
            bib.contains("url = {https://example.org/a%20b%7Bc%7D?q=1&r=%20},"),
            "{bib}"
        );
        assert!(bib.contains("urldate = {2026-11-25},"));
        assert!(
            bib.contains("note = {A passage with lines \\} and \\{ braces},"),
            "{bib}"
        );
    }

    #[test]
    fn ris_keeps_one_field_per_line_and_csl_json_is_json() {
        let ris = ris(&[hostile()]);
        let lines: Vec<&str> = ris.split("\r\n").filter(|l| !l.is_empty()).collect();
        assert!(
            lines.iter().all(|l| l.len() >= 5 && &l[2..5] == "  -"),
            "{lines:?}"
        );
        assert_eq!(lines[0], "TY  - ELEC");
        assert_eq!(lines.last(), Some(&"ER  - "));
        assert!(lines.contains(&"Y2  - 2026/11/25"));
        let csl: serde_json::Value = serde_json::from_str(&csl_json(&[hostile()])).unwrap();
        assert_eq!(csl[0]["title"], hostile().title);
        assert_eq!(csl[0]["type"], "webpage");
        assert_eq!(csl[0]["accessed"]["date-parts"][0][2], 25);
        assert_eq!(Format::parse("BIB"), Some(Format::Bibtex));
        assert_eq!(Format::parse("csl"), Some(Format::CslJson));
        assert_eq!(Format::parse("doc"), None);
    }
}
