//! The context budget: fits the system prompt, the conversation so far, the search results
//! and the new question into `CITED_LLM_CONTEXT_CHARS`, so a long conversation never
//! overflows the model's window (Perplexica users hit 355,724 tokens against 262,144).
//!
//! What gives way, in order: the oldest turns of history (whole turns, so a tool result is
//! never left without its call), then search results from the last one up (whole sources),
//! then the question itself is cut (it always keeps its start). The newest turn stays.

use crate::ssr::llm::Message;

/// What went into the budget, and what had to give.
#[derive(Debug, Clone, PartialEq)]
pub struct Fitted {
    pub messages: Vec<Message>,
    pub dropped_turns: usize,
    pub dropped_sources: usize,
    pub question_cut: bool,
}

/// Builds `[system, ...history, user]` within `budget` characters. `sources` are the
/// numbered source blocks (already formatted); they are joined into the system prompt
/// after `system`.
pub fn fit(
    system: &str,
    sources: &[String],
    history: &[Message],
    question: &str,
    budget: usize,
) -> Fitted {
    let chars = |text: &str| text.chars().count();
    let system_chars = chars(system);
    let mut sources: Vec<&String> = sources.iter().collect();
    let source_chars = |sources: &[&String]| sources.iter().map(|s| chars(s) + 2).sum::<usize>();

    // History in turns: each turn starts at a user message.
    let mut turns: Vec<&[Message]> = Vec::new();
    let mut start = 0;
    for (idx, message) in history.iter().enumerate() {
        if idx > start && matches!(message, Message::User(_)) {
            turns.push(&history[start..idx]);
            start = idx;
        }
    }
    if start < history.len() {
        turns.push(&history[start..]);
    }
    let turn_chars = |turn: &[Message]| turn.iter().map(Message::chars).sum::<usize>();

    let mut history_chars: usize = turns.iter().map(|turn| turn_chars(turn)).sum();
    let question_chars = chars(question);
    let mut dropped_turns = 0;
    while !turns.is_empty()
        && system_chars + source_chars(&sources) + history_chars + question_chars > budget
    {
        history_chars -= turn_chars(turns[0]);
        turns.remove(0);
        dropped_turns += 1;
    }
    let mut dropped_sources = 0;
    while !sources.is_empty() && system_chars + source_chars(&sources) + question_chars > budget {
        sources.pop();
        dropped_sources += 1;
    }
    let mut system_text = system.to_string();
    if system_chars > budget / 2 {
        // A system prompt larger than half the budget is cut too; the question comes first.
        system_text = system.chars().take(budget / 2).collect();
    }
    for source in &sources {
        system_text.push_str("\n\n");
        system_text.push_str(source);
    }
    let room = budget.saturating_sub(chars(&system_text));
    let question_cut = question_chars > room;
    let question_text: String = if question_cut {
        question.chars().take(room).collect()
    } else {
        question.to_string()
    };
    let mut messages = Vec::with_capacity(2 + history.len());
    messages.push(Message::System(system_text));
    for turn in turns {
        messages.extend(turn.iter().cloned());
    }
    messages.push(Message::User(question_text));
    Fitted {
        messages,
        dropped_turns,
        dropped_sources,
        question_cut,
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn total(messages: &[Message]) -> usize {
        messages.iter().map(Message::chars).sum()
    }

    fn conversation(turns: usize, size: usize) -> Vec<Message> {
        (0..turns)
            .flat_map(|i| {
                [
                    Message::User(format!("q{i} {}", "问".repeat(size))),
                    Message::assistant(format!("a{i} {}", "答".repeat(size))),
                ]
            })
            .collect()
    }

    #[test]
    fn everything_fits_when_small() {
        let history = conversation(3, 10);
        let fitted = fit("sys", &["[1] a".into()], &history, "new question", 10_000);
        assert_eq!(fitted.dropped_turns, 0);
        assert_eq!(fitted.messages.len(), 1 + 6 + 1);
        assert_eq!(
            fitted.messages.last(),
            Some(&Message::User("new question".into()))
        );
        assert!(matches!(&fitted.messages[0], Message::System(s) if s.ends_with("[1] a")));
    }

    #[test]
    fn oldest_turns_go_first() {
        let history = conversation(10, 100);
        let fitted = fit("sys", &[], &history, "newest", 700);
        assert!(fitted.dropped_turns > 0);
        assert!(total(&fitted.messages) <= 700);
        // What is left is the most recent turns, in order.
        let Message::User(first_kept) = &fitted.messages[1] else {
            panic!("{:?}", fitted.messages)
        };
        assert!(first_kept.starts_with(&format!("q{}", fitted.dropped_turns)));
    }

    #[test]
    fn tool_messages_go_with_their_turn() {
        let history = vec![
            Message::User("old".into()),
            Message::Assistant {
                content: String::new(),
                tool_calls: vec![crate::ssr::llm::ToolCall {
                    index: 0,
                    id: "c1".into(),
                    name: "web_search".into(),
                    arguments: "{}".into(),
                }],
            },
            Message::Tool {
                call_id: "c1".into(),
                content: "x".repeat(500),
            },
            Message::assistant("old answer"),
            Message::User("recent".into()),
            Message::assistant("recent answer"),
        ];
        let fitted = fit("sys", &[], &history, "now", 100);
        assert_eq!(fitted.dropped_turns, 1);
        assert!(!fitted
            .messages
            .iter()
            .any(|m| matches!(m, Message::Tool { .. })));
    }

    #[test]
    fn sources_give_way_after_history() {
        let sources: Vec<String> = (1..=5)
            .map(|i| format!("[{i}] {}", "s".repeat(100)))
            .collect();
        let fitted = fit("sys", &sources, &conversation(2, 50), "question", 350);
        assert_eq!(fitted.dropped_turns, 2);
        assert!(fitted.dropped_sources > 0);
        let Message::System(system) = &fitted.messages[0] else {
            panic!()
        };
        assert!(system.contains("[1] "), "the first sources are kept");
        assert!(total(&fitted.messages) <= 350);
    }

    proptest! {
        #[test]
        fn never_exceeds_the_budget_and_keeps_the_newest_turn(
            turns in 0usize..12,
            size in 0usize..300,
            n_sources in 0usize..8,
            question in "\\PC{1,400}",
            budget in 50usize..5000,
        ) {
            let sources: Vec<String> = (1..=n_sources).map(|i| format!("[{i}] {}", "源".repeat(size))).collect();
            let system = "You answer with citations.";
            let fitted = fit(system, &sources, &conversation(turns, size), &question, budget);
            prop_assert!(total(&fitted.messages) <= budget, "{} > {budget}", total(&fitted.messages));
            let Some(Message::User(last)) = fitted.messages.last() else { panic!("no user message") };
            prop_assert!(question.starts_with(last.as_str()));
            prop_assert!(!last.is_empty(), "the question always keeps its start");
        }
    }
}
