//! "相关问题": three short follow-up questions under a finished answer. The model writes
//! them in a cheap second call (`CITED_RELATED=model`, the default with a model); whatever
//! it leaves missing, and every one offline, comes from the sources' headings and titles.
//! Pure text here; the call itself is in [`super::Turn`].

use std::collections::HashSet;
use std::sync::Arc;

use crate::model::{CitationEntry, Lang, SourceKind};

/// How many follow-ups an answer gets.
pub const COUNT: usize = 3;

/// The questions in a model's reply: one per line, numbering, bullets, quotes and citation
/// markers taken off; lines too short or too long, repeats and the question itself left out.
pub fn from_reply(reply: &str, question: &str) -> Vec<String> {
    let mut seen = HashSet::new();
    seen.insert(key(question));
    reply
        .lines()
        .map(clean_line)
        .filter(|line| {
            let length = line.chars().count();
            (4..=120).contains(&length) && seen.insert(key(line))
        })
        .take(COUNT)
        .collect()
}

/// What a source is about, as a follow-up, for the sources the answer cites first, then the
/// others: a knowledge passage's heading (`README.md › Tests` → `Tests`), a page's title
/// before its site name (`Tokio tutorial - Tokio` → `Tokio tutorial`).
pub fn from_sources(
    question: &str,
    sources: &[Arc<CitationEntry>],
    cited: &[u32],
    lang: Lang,
    already: &[String],
) -> Vec<String> {
    let mut seen: HashSet<String> = already.iter().map(|q| key(q)).collect();
    let asked = key(question);
    let mut ordered: Vec<&Arc<CitationEntry>> = sources
        .iter()
        .filter(|entry| cited.contains(&entry.number))
        .collect();
    ordered.extend(
        sources
            .iter()
            .filter(|entry| !cited.contains(&entry.number)),
    );
    let mut topics = HashSet::new();
    let mut questions = Vec::new();
    for entry in ordered {
        let Some(topic) = topic(entry) else { continue };
        let topic_key = key(&topic);
        if asked.contains(&topic_key) || !topics.insert(topic_key) {
            continue;
        }
        let question = match lang {
            Lang::ZhCn => format!("关于「{topic}」还有哪些要点？"),
            Lang::En => format!("What else should I know about {topic}?"),
        };
        if seen.insert(key(&question)) {
            questions.push(question);
        }
        if questions.len() + already.len() >= COUNT {
            break;
        }
    }
    questions
}

fn topic(entry: &CitationEntry) -> Option<String> {
    let title = entry.title.trim();
    let topic = match entry.kind {
        SourceKind::Knowledge => title.rsplit('›').next().unwrap_or(title),
        _ => [" - ", " | ", " — ", " – ", " · "]
            .iter()
            .filter_map(|separator| title.find(separator))
            .min()
            .map_or(title, |end| &title[..end]),
    };
    let topic = topic
        .trim()
        .trim_end_matches(".md")
        .trim_matches(|c: char| c.is_ascii_punctuation() || c.is_whitespace());
    let length = topic.chars().count();
    (2..=60).contains(&length).then(|| topic.to_string())
}

/// A line without its numbering, bullet, quotes and citation markers.
fn clean_line(line: &str) -> String {
    let mut line = line.trim();
    loop {
        let before = line;
        line = line
            .trim_start_matches(['-', '*', '•', '·', '>', '#'])
            .trim_start();
        let digits = line.len() - line.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        if digits > 0 && digits <= 2 {
            let rest = &line[digits..];
            if let Some(rest) = rest
                .strip_prefix('.')
                .or_else(|| rest.strip_prefix(')'))
                .or_else(|| rest.strip_prefix('、'))
                .or_else(|| rest.strip_prefix('．'))
            {
                line = rest.trim_start();
            }
        }
        if line == before {
            break;
        }
    }
    let mut text = String::new();
    let mut rest = line;
    // Citation markers are not part of a question.
    while let Some(open) = rest.find(['[', '【']) {
        text.push_str(&rest[..open]);
        let after = &rest[open..];
        let close = after
            .find([']', '】'])
            .map(|at| at + after[at..].chars().next().map_or(1, char::len_utf8));
        match close {
            Some(end)
                if after[..end].chars().filter(char::is_ascii_digit).count() > 0
                    && after[..end]
                        .chars()
                        .all(|c| c.is_ascii_digit() || "[]【】,，- ".contains(c)) =>
            {
                rest = &after[end..];
            }
            _ => {
                text.push_str(&after[..after.chars().next().map_or(1, char::len_utf8)]);
                rest = &after[after.chars().next().map_or(1, char::len_utf8)..];
            }
        }
    }
    text.push_str(rest);
    text.trim()
        .trim_matches(['"', '“', '”', '「', '」', '\'', '*', '`'])
        .trim()
        .to_string()
}

/// Questions compared without case, spaces or final punctuation.
fn key(text: &str) -> String {
    text.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reply_becomes_three_clean_questions() {
        let reply = "1. How does Tokio schedule tasks? [2]\n- \"What is async-std?\"\n\n2) How does Tokio schedule tasks\n3、Is Tokio fast?【1】\nok\n4. One more question?";
        assert_eq!(
            from_reply(reply, "What is Tokio?"),
            vec![
                "How does Tokio schedule tasks?",
                "What is async-std?",
                "Is Tokio fast?",
            ]
        );
        assert!(from_reply("What is Tokio?\n", "what is tokio").is_empty());
    }

    fn entry(number: u32, title: &str, kind: SourceKind) -> Arc<CitationEntry> {
        Arc::new(CitationEntry {
            number,
            url: format!("https://example.org/{number}"),
            title: title.into(),
            domain: "example.org".into(),
            snippet: String::new(),
            query: "q".into(),
            round: 1,
            kind,
            also_in_rounds: Vec::new(),
        })
    }

    #[test]
    fn sources_give_follow_ups_about_their_topics() {
        let sources = vec![
            entry(1, "Tokio tutorial - Tokio", SourceKind::Web),
            entry(2, "README.md › Tests", SourceKind::Knowledge),
            entry(3, "Tokio tutorial | docs", SourceKind::Web),
            entry(4, "Scale out", SourceKind::Knowledge),
        ];
        assert_eq!(
            from_sources("How do I run cited?", &sources, &[2], Lang::En, &[]),
            vec![
                "What else should I know about Tests?",
                "What else should I know about Tokio tutorial?",
                "What else should I know about Scale out?",
            ]
        );
        assert_eq!(
            from_sources(
                "Tokio tutorial?",
                &sources,
                &[],
                Lang::ZhCn,
                &["a".into(), "b".into()]
            ),
            vec!["关于「Tests」还有哪些要点？"],
            "fills up to three, never about the question itself"
        );
    }
}
