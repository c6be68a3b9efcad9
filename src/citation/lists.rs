//! Reference lists under an answer: only what the answer cites, in number order.
//!
//! Chat mode: "参考文献", one line per source (number, title, URL, domain). Agent and
//! Research: "📚 引用文章列表" grouped by search round under `**第 N 次搜索** (查询: …)`, in
//! the exact layout of seed 002. Each list exists as data (for the UI) and as Markdown (for
//! copy and export); when nothing is cited there is no list at all.

use std::fmt::Write;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::citation::registry::CitationEntry;
use crate::citation::render::Lookup;
use crate::citation::urls;

pub const CHAT_HEADING: &str = "参考文献";
pub const AGENT_HEADING: &str = "📚 引用文章列表";

/// The words of a Markdown list, in one language: seed 002's Chinese, or English for a
/// question asked in English (`cited ask`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListWords {
    pub chat_heading: &'static str,
    pub agent_heading: &'static str,
    /// A round's label before and after its number (`**第 ` 3 ` 次搜索**`).
    pub round: (&'static str, &'static str),
    pub sub_question: &'static str,
    pub query: &'static str,
    /// The rounds an entry came from (`来自: 第1次搜索, 第2次搜索`).
    pub from: &'static str,
    pub from_round: (&'static str, &'static str),
}

impl ListWords {
    pub const ZH: ListWords = ListWords {
        chat_heading: CHAT_HEADING,
        agent_heading: AGENT_HEADING,
        round: ("第 ", " 次搜索"),
        sub_question: "子问题",
        query: "查询",
        from: "来自",
        from_round: ("第", "次搜索"),
    };
    pub const EN: ListWords = ListWords {
        chat_heading: "References",
        agent_heading: "📚 Cited articles",
        round: ("Search ", ""),
        sub_question: "sub-question",
        query: "query",
        from: "from",
        from_round: ("search ", ""),
    };

    pub fn of(lang: crate::model::Lang) -> &'static ListWords {
        match lang {
            crate::model::Lang::ZhCn => &ListWords::ZH,
            crate::model::Lang::En => &ListWords::EN,
        }
    }
}

/// One search round's cited sources.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RoundGroup {
    pub round: u32,
    pub query: String,
    pub entries: Vec<Arc<CitationEntry>>,
}

/// The cited entries, in number order. Unknown numbers are skipped.
pub fn cited_entries(registry: &impl Lookup, used: &[u32]) -> Vec<Arc<CitationEntry>> {
    let mut numbers = used.to_vec();
    numbers.sort_unstable();
    numbers.dedup();
    numbers
        .into_iter()
        .filter_map(|number| registry.lookup(number).cloned())
        .collect()
}

/// The cited entries grouped by the round that first found them, rounds in order.
pub fn grouped_by_round(registry: &impl Lookup, used: &[u32]) -> Vec<RoundGroup> {
    let mut groups: Vec<RoundGroup> = Vec::new();
    let mut entries = cited_entries(registry, used);
    entries.sort_by_key(|entry| (entry.round, entry.number));
    for entry in entries {
        match groups.last_mut() {
            Some(group) if group.round == entry.round => group.entries.push(entry),
            _ => groups.push(RoundGroup {
                round: entry.round,
                query: entry.query.clone(),
                entries: vec![entry],
            }),
        }
    }
    groups
}

/// Chat's list as Markdown; empty when nothing is cited.
pub fn chat_markdown(registry: &impl Lookup, used: &[u32]) -> String {
    chat_markdown_in(&ListWords::ZH, registry, used)
}

/// Chat's list as Markdown in `words`' language.
pub fn chat_markdown_in(words: &ListWords, registry: &impl Lookup, used: &[u32]) -> String {
    let entries = cited_entries(registry, used);
    if entries.is_empty() {
        return String::new();
    }
    let mut out = format!("\n\n---\n**{}:**\n", words.chat_heading);
    for entry in &entries {
        out.push('\n');
        push_entry_line(&mut out, entry);
    }
    out
}

/// Agent/Research's grouped list as Markdown (seed 002 layout); empty when nothing is
/// cited. In dedup mode an entry found in several rounds says so ("来自: 第1次搜索, …").
pub fn agent_markdown(registry: &impl Lookup, used: &[u32]) -> String {
    grouped_markdown(&ListWords::ZH, registry, used, |_| None)
}

/// Agent's list in `words`' language.
pub fn agent_markdown_in(words: &ListWords, registry: &impl Lookup, used: &[u32]) -> String {
    grouped_markdown(words, registry, used, |_| None)
}

/// Research's grouped list: each group is labelled with the sub-question its round
/// researched (`label(round)`), or with its query when it has none.
pub fn research_markdown(
    registry: &impl Lookup,
    used: &[u32],
    label: impl Fn(u32) -> Option<String>,
) -> String {
    grouped_markdown(&ListWords::ZH, registry, used, label)
}

/// Research's list in `words`' language.
pub fn research_markdown_in(
    words: &ListWords,
    registry: &impl Lookup,
    used: &[u32],
    label: impl Fn(u32) -> Option<String>,
) -> String {
    grouped_markdown(words, registry, used, label)
}

fn grouped_markdown(
    words: &ListWords,
    registry: &impl Lookup,
    used: &[u32],
    label: impl Fn(u32) -> Option<String>,
) -> String {
    let groups = grouped_by_round(registry, used);
    if groups.is_empty() {
        return String::new();
    }
    let mut out = format!("\n\n---\n**{}:**\n", words.agent_heading);
    for group in &groups {
        let (before, after) = words.round;
        let _ = write!(out, "\n**{before}{}{after}** (", group.round);
        match label(group.round) {
            Some(sub_question) => {
                let _ = write!(out, "{}: ", words.sub_question);
                push_one_line(&mut out, &sub_question);
            }
            None => {
                let _ = write!(out, "{}: ", words.query);
                push_one_line(&mut out, &group.query);
            }
        }
        out.push(')');
        for entry in &group.entries {
            out.push('\n');
            push_entry_line(&mut out, entry);
            if !entry.also_in_rounds.is_empty() {
                let _ = write!(out, " - {}: ", words.from);
                for (idx, round) in std::iter::once(entry.round)
                    .chain(entry.also_in_rounds.iter().copied())
                    .enumerate()
                {
                    if idx > 0 {
                        out.push_str(", ");
                    }
                    let (before, after) = words.from_round;
                    let _ = write!(out, "{before}{round}{after}");
                }
            }
        }
        out.push('\n');
    }
    out.pop();
    out
}

/// `3. [Title](URL) - `domain``, with the title escaped so it cannot break the link.
fn push_entry_line(out: &mut String, entry: &CitationEntry) {
    let title = if entry.title.trim().is_empty() {
        &entry.url
    } else {
        &entry.title
    };
    let _ = write!(out, "{}. ", entry.number);
    let link = urls::is_safe_link(&entry.url);
    if link {
        out.push('[');
    }
    for (idx, word) in title.split_whitespace().enumerate() {
        if idx > 0 {
            out.push(' ');
        }
        let mut rest = word;
        while let Some(at) = rest.find(['\\', '[', ']', '*', '_', '`', '<', '>']) {
            out.push_str(&rest[..at]);
            out.push('\\');
            out.push_str(&rest[at..at + 1]);
            rest = &rest[at + 1..];
        }
        out.push_str(rest);
    }
    if link {
        out.push_str("](");
        let mut rest = entry.url.as_str();
        while let Some(at) = rest.find(['(', ')', '<', '>']) {
            out.push_str(&rest[..at]);
            out.push_str(match &rest[at..at + 1] {
                "(" => "%28",
                ")" => "%29",
                "<" => "%3C",
                _ => "%3E",
            });
            rest = &rest[at + 1..];
        }
        out.push_str(rest);
        out.push(')');
    }
    out.push_str(" - `");
    out.push_str(&entry.domain);
    out.push('`');
}

fn push_one_line(out: &mut String, text: &str) {
    for (idx, word) in text.split_whitespace().enumerate() {
        if idx > 0 {
            out.push(' ');
        }
        out.push_str(word);
    }
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use super::*;
    use crate::citation::registry::tests::sources;
    use crate::citation::Registry;
    use crate::model::Source;

    fn two_rounds() -> Registry {
        let mut registry = Registry::new();
        registry.add_round("rust async", &sources("a", 5));
        registry.add_round("tokio 教程", &sources("b", 3));
        registry
    }

    #[test]
    fn nothing_cited_means_no_list() {
        let registry = two_rounds();
        assert_eq!(chat_markdown(&registry, &[]), "");
        assert_eq!(agent_markdown(&registry, &[]), "");
        assert_eq!(
            agent_markdown(&registry, &[42]),
            "",
            "unknown numbers list nothing"
        );
    }

    #[test]
    fn agent_list_groups_by_round_in_number_order() {
        let registry = two_rounds();
        expect![[r#"


            ---
            **📚 引用文章列表:**

            **第 1 次搜索** (查询: rust async)
            1. [a title 1](https://a.example.org/1) - `a.example.org`
            3. [a title 3](https://a.example.org/3) - `a.example.org`

            **第 2 次搜索** (查询: tokio 教程)
            7. [b title 2](https://b.example.org/2) - `b.example.org`"#]]
        .assert_eq(&agent_markdown(&registry, &[7, 3, 1, 3]));
    }

    #[test]
    fn chat_list() {
        let registry = Registry::single_round("q", &sources("a", 4));
        expect![[r#"


            ---
            **参考文献:**

            2. [a title 2](https://a.example.org/2) - `a.example.org`
            4. [a title 4](https://a.example.org/4) - `a.example.org`"#]]
        .assert_eq(&chat_markdown(&registry, &[4, 2]));
    }

    #[test]
    fn dedup_list_names_every_round() {
        let mut registry = Registry::with_dedup();
        registry.add_round("q1", &sources("a", 2));
        registry.add_round("q2", &sources("b", 1));
        registry.add_round("q3", &sources("a", 1));
        expect![[r#"


            ---
            **📚 引用文章列表:**

            **第 1 次搜索** (查询: q1)
            1. [a title 1](https://a.example.org/1) - `a.example.org` - 来自: 第1次搜索, 第3次搜索"#]]
        .assert_eq(&agent_markdown(&registry, &[1]));
    }

    #[test]
    fn lists_in_english_for_english_questions() {
        let registry = Registry::single_round("q", &sources("a", 2));
        expect![[r#"


            ---
            **References:**

            2. [a title 2](https://a.example.org/2) - `a.example.org`"#]]
        .assert_eq(&chat_markdown_in(&ListWords::EN, &registry, &[2]));
        let mut registry = Registry::with_dedup();
        registry.add_round("q1", &sources("a", 2));
        registry.add_round("q2", &sources("b", 1));
        registry.add_round("q3", &sources("a", 1));
        expect![[r#"


            ---
            **📚 Cited articles:**

            **Search 1** (query: q1)
            1. [a title 1](https://a.example.org/1) - `a.example.org` - from: search 1, search 3

            **Search 2** (sub-question: What is b?)
            3. [b title 1](https://b.example.org/1) - `b.example.org`"#]]
        .assert_eq(&research_markdown_in(
            ListWords::of(crate::model::Lang::En),
            &registry,
            &[1, 3],
            |round| (round == 2).then(|| "What is b?".to_string()),
        ));
        assert_eq!(
            ListWords::of(crate::model::Lang::ZhCn),
            &ListWords::ZH,
            "Chinese questions keep seed 002's words"
        );
    }

    #[test]
    fn hostile_titles_and_urls_cannot_break_out() {
        let registry = Registry::single_round(
            "q\nwith newline",
            &[
                Source {
                    url: "https://example.org/a_(b)".into(),
                    title: "x](javascript:alert(1)) <img src=x onerror=alert(1)>".into(),
                    ..Source::default()
                },
                Source {
                    url: "javascript:alert(1)".into(),
                    title: "evil".into(),
                    ..Source::default()
                },
            ],
        );
        expect![[r#"


            ---
            **参考文献:**

            1. [x\](javascript:alert(1)) \<img src=x onerror=alert(1)\>](https://example.org/a_%28b%29) - `example.org`
            2. evil - `javascript`"#]]
        .assert_eq(&chat_markdown(&registry, &[1, 2]));
    }
}
