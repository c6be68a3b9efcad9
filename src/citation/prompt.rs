//! What the model sees of the sources: always the registry's numbers, never numbers of its
//! own. The Agent tool output (seed 002: `[global number] title - URL` plus the snippet) and
//! the Chat prompt block (number, title, source, snippet).

use unicode_segmentation::UnicodeSegmentation;

use crate::citation::registry::{CitationEntry, Registry};

/// Cuts `text` to at most `max_chars` characters, counted as user-perceived characters
/// (grapheme clusters), so a CJK character, an emoji or a flag is never split. Adds `…`
/// when something was cut. Whitespace runs are collapsed first.
pub fn truncate_chars(text: &str, max_chars: usize) -> String {
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut graphemes = text.grapheme_indices(true);
    match graphemes.nth(max_chars) {
        None => text,
        Some((cut, _)) => {
            let kept = text[..cut].trim_end();
            // Keep room for the ellipsis inside the limit.
            let kept = match kept.grapheme_indices(true).nth(max_chars.saturating_sub(1)) {
                Some((idx, _)) => &kept[..idx],
                None => kept,
            };
            format!("{kept}…")
        }
    }
}

/// The Agent `web_search` tool's output for one round: what the model reads.
pub fn tool_output(registry: &Registry, numbers: &[u32], snippet_chars: usize) -> String {
    let mut out = String::new();
    for entry in numbers.iter().filter_map(|&number| registry.get(number)) {
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(&format!(
            "[{}] {} - {}\n",
            entry.number,
            one_line(&entry.title),
            entry.url
        ));
        let snippet = truncate_chars(&entry.snippet, snippet_chars);
        if !snippet.is_empty() {
            out.push_str(&snippet);
            out.push('\n');
        }
    }
    out
}

/// Labels of the Chat prompt block, in the question's language.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PromptLang {
    Zh,
    En,
}

/// The numbered sources of a Chat answer, as injected into the prompt.
pub fn chat_block<'a>(
    entries: impl IntoIterator<Item = &'a CitationEntry>,
    snippet_chars: usize,
    lang: PromptLang,
) -> String {
    let (source_label, snippet_label) = match lang {
        PromptLang::Zh => ("来源", "摘要"),
        PromptLang::En => ("Source", "Snippet"),
    };
    let mut out = String::new();
    for entry in entries {
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(&format!("[{}] {}\n", entry.number, one_line(&entry.title)));
        out.push_str(&format!(
            "{source_label}: {} ({})\n",
            entry.domain, entry.url
        ));
        let snippet = truncate_chars(&entry.snippet, snippet_chars);
        if !snippet.is_empty() {
            out.push_str(&format!("{snippet_label}: {snippet}\n"));
        }
    }
    out
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use super::*;
    use crate::citation::registry::tests::sources;

    #[track_caller]
    fn check_cut(text: &str, max: usize, expect: &str) {
        let cut = truncate_chars(text, max);
        assert_eq!(cut, expect);
        assert!(
            cut.graphemes(true).count() <= max.max(1),
            "{cut:?} longer than {max}"
        );
    }

    #[test]
    fn short_text_is_kept() {
        check_cut("hello", 5, "hello");
    }
    #[test]
    fn ascii_cut() {
        check_cut("hello world", 6, "hello…");
    }
    #[test]
    fn cjk_cut() {
        check_cut("量子计算是一种新的计算方式", 5, "量子计算…");
    }
    #[test]
    fn emoji_cut() {
        check_cut("👍🏽👍🏽👍🏽👍🏽", 3, "👍🏽👍🏽…");
    }
    #[test]
    fn flag_cut() {
        check_cut("🇨🇳🇺🇸🇬🇧🇫🇷", 2, "🇨🇳…");
    }
    #[test]
    fn zwj_family_cut() {
        check_cut("👨‍👩‍👧‍👦👨‍👩‍👧‍👦x", 2, "👨‍👩‍👧‍👦…");
    }
    #[test]
    fn whitespace_collapsed() {
        check_cut("  a \n\n b\t c ", 10, "a b c");
    }
    #[test]
    fn zero_limit() {
        check_cut("abc", 0, "…");
    }

    #[test]
    fn tool_output_uses_registry_numbers() {
        let mut registry = Registry::new();
        registry.add_round("first", &sources("a", 5));
        let allocation = registry.add_round("second", &sources("b", 2));
        expect![[r#"
            [6] b title 1 - https://b.example.org/1
            b snippet 1

            [7] b title 2 - https://b.example.org/2
            b snippet 2
        "#]]
        .assert_eq(&tool_output(&registry, &allocation.numbers, 200));
    }

    #[test]
    fn chat_block_lists_number_title_source_snippet() {
        let registry = Registry::single_round("q", &sources("a", 2));
        expect![[r#"
            [1] a title 1
            来源: a.example.org (https://a.example.org/1)
            摘要: a snippet 1

            [2] a title 2
            来源: a.example.org (https://a.example.org/2)
            摘要: a snippet 2
        "#]]
        .assert_eq(&chat_block(
            registry.entries().iter().map(|e| &**e),
            200,
            PromptLang::Zh,
        ));
    }
}
