//! Text utilities shared by the server and the browser: pure functions on `str`, no IO.

/// True when the text contains Han (Chinese) characters.
pub fn has_han(text: &str) -> bool {
    text.chars().any(|c| {
        matches!(c as u32,
            0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF | 0x20000..=0x2A6DF | 0x2A700..=0x2EBEF | 0x30000..=0x3134F)
    })
}

/// A host name for `site:` (`example.org`, `docs.rs`), lower-cased; `None` for anything
/// else (a URL, spaces, a lone word).
pub fn valid_site(raw: &str) -> Option<String> {
    let site = raw.trim().trim_end_matches('.').to_lowercase();
    let labels: Vec<&str> = site.split('.').collect();
    let ok = site.len() <= 253
        && labels.len() >= 2
        && labels.iter().all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && !label.starts_with('-')
                && !label.ends_with('-')
                && label.chars().all(|c| c.is_alphanumeric() || c == '-')
        });
    ok.then_some(site)
}

/// The site a question names with `site:example.org`, if any (a valid host name).
pub fn site_in(question: &str) -> Option<String> {
    question
        .split_whitespace()
        .filter_map(|word| word.strip_prefix("site:"))
        .find_map(valid_site)
}

/// Terms for full-text search: lowercase words of other scripts, and every Han character
/// and pair of neighbouring Han characters, so Chinese matches without a word list.
pub fn search_terms(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut previous_han: Option<char> = None;
    for c in text.chars() {
        if has_han(c.encode_utf8(&mut [0; 4])) {
            if !word.is_empty() {
                out.push(std::mem::take(&mut word));
            }
            if let Some(previous) = previous_han {
                out.push(format!("{previous}{c}"));
            }
            out.push(c.to_string());
            previous_han = Some(c);
        } else {
            previous_han = None;
            if c.is_alphanumeric() {
                word.extend(c.to_lowercase());
            } else if !word.is_empty() {
                out.push(std::mem::take(&mut word));
            }
        }
    }
    if !word.is_empty() {
        out.push(word);
    }
    out
}

/// `code` between fences longer than any run of backticks it holds.
pub fn fenced(code: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in code.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat(longest.max(2) + 1);
    format!("{fence}\n{code}\n{fence}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sites_are_host_names() {
        assert_eq!(valid_site(" Docs.RS "), Some("docs.rs".to_string()));
        assert_eq!(valid_site("例子.中国"), Some("例子.中国".to_string()));
        assert_eq!(valid_site("example.org."), Some("example.org".to_string()));
        for bad in [
            "docs",
            "https://docs.rs",
            "a b.org",
            "-x.org",
            "x..org",
            "x.org/path",
            "",
        ] {
            assert_eq!(valid_site(bad), None, "{bad:?}");
        }
        assert_eq!(
            site_in("tokio runtime site:Docs.rs please"),
            Some("docs.rs".to_string())
        );
        assert_eq!(site_in("what is site:nothing"), None);
        assert_eq!(site_in("no site here"), None);
    }

    #[test]
    fn search_terms_cover_words_and_han_pairs() {
        assert_eq!(
            search_terms("Rust 的 async-runtime 量子计算"),
            vec![
                "rust", "的", "async", "runtime", "量", "量子", "子", "子计", "计", "计算", "算"
            ]
        );
        assert!(search_terms(" ,.;\"*").is_empty());
    }
}
