//! The offline extractive answerer, used when no model is configured.
//!
//! It splits the sources into sentences, ranks them against the question with BM25 over
//! Chinese-aware tokens (Han characters as unigrams and bigrams, other scripts as words),
//! and composes a short answer from the best few, each followed by the `[n]` of the source it
//! was taken from. It never cites a number it was not given and is fully deterministic.
//!
//! It also stands in for the model in the other modes: as an "agent" it searches the
//! question and then each distinct clause; as a "planner" ([`clauses`]) it splits a question
//! into clauses. The UI labels its answers "离线抽取模式（未配置语言模型）".

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::json;

use crate::citation::CitationEntry;
use crate::ssr::llm::{
    AnswerContext, ChatEvent, ChatModel, ChatRequest, ChatStream, FinishReason, LlmError, Message,
    ModelKind, ToolCall,
};
use crate::text::has_han;

/// Sentences in an answer.
const MAX_SENTENCES: usize = 3;
/// Sentences taken from one source.
const MAX_PER_SOURCE: usize = 2;
/// Searches the "agent" makes: the question and up to two more clauses.
const MAX_SEARCHES: usize = 3;

const EN_STOP: &[&str] = &[
    "a", "an", "the", "is", "are", "was", "were", "be", "been", "of", "to", "in", "on", "for",
    "and", "or", "how", "what", "which", "who", "why", "when", "where", "do", "does", "did", "i",
    "you", "it", "its", "with", "by", "at", "as", "can", "this", "that", "these", "those", "from",
    "my", "me", "we", "our", "your", "there", "their", "about", "into", "if",
];
const ZH_STOP: &[char] = &[
    '的', '了', '是', '在', '吗', '呢', '么', '怎', '如', '何', '什', '和', '与', '及', '或', '把',
    '被', '也', '都', '就', '吧', '啊', '请', '我', '你', '他', '她', '它', '们', '这', '那', '个',
    '中',
];

fn is_han(c: char) -> bool {
    has_han(c.encode_utf8(&mut [0; 4]))
}

/// Tokens for ranking: Han unigrams (minus stop characters) and bigrams, lowercase words of
/// other scripts (minus stop words, a plural `s` removed).
pub fn tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut previous_han: Option<char> = None;
    let flush = |word: &mut String, out: &mut Vec<String>| {
        if !word.is_empty() {
            let mut token = std::mem::take(word);
            if token.len() > 3 && token.ends_with('s') && !token.ends_with("ss") {
                token.pop();
            }
            if !EN_STOP.contains(&token.as_str()) {
                out.push(token);
            }
        }
    };
    for c in text.chars() {
        if is_han(c) {
            flush(&mut word, &mut out);
            if let Some(previous) = previous_han {
                if !(ZH_STOP.contains(&previous) && ZH_STOP.contains(&c)) {
                    out.push(format!("{previous}{c}"));
                }
            }
            if !ZH_STOP.contains(&c) {
                out.push(c.to_string());
            }
            previous_han = Some(c);
        } else if c.is_alphanumeric() {
            previous_han = None;
            word.extend(c.to_lowercase());
        } else {
            previous_han = None;
            flush(&mut word, &mut out);
        }
    }
    flush(&mut word, &mut out);
    out
}

/// Splits text into sentences at Chinese and Western sentence ends and line breaks.
pub fn sentences(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((idx, c)) = chars.next() {
        let next = chars.peek().map(|&(_, next)| next);
        let end = match c {
            '。' | '！' | '？' | '；' | '\n' => true,
            '.' | '!' | '?' | ';' => next.is_none_or(char::is_whitespace),
            _ => false,
        };
        if end {
            let stop = idx + c.len_utf8();
            push_sentence(&text[start..stop], &mut out);
            start = stop;
        }
    }
    push_sentence(&text[start..], &mut out);
    out
}

fn push_sentence<'a>(sentence: &'a str, out: &mut Vec<&'a str>) {
    let sentence = sentence.trim();
    if sentence.chars().filter(|c| c.is_alphanumeric()).count() >= 4 {
        out.push(sentence);
    }
}

/// A quoted sentence needs at least 1/NOVEL_SHARE of its tokens beyond the question's.
const NOVEL_SHARE: usize = 4;

/// A composed answer and the numbers it cites (in citation order).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Extract {
    pub text: String,
    pub cited: Vec<u32>,
}

struct Candidate {
    number: u32,
    position: usize,
    text: String,
    tokens: Vec<String>,
    /// A code block of the source, quoted as a block.
    code: bool,
}

/// Lines of a code block the answer quotes; a longer block is not quoted.
const MAX_CODE_LINES: usize = 16;

/// The text's prose and its fenced code blocks, in order: `(code, text)`, a code block's
/// text without its fences. A fence left open (a snippet cut short) runs to the end.
fn segments(text: &str) -> Vec<(bool, String)> {
    let mut out: Vec<(bool, String)> = Vec::new();
    let mut fence: Option<usize> = None;
    let mut current = String::new();
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim();
        let ticks = trimmed.chars().take_while(|c| *c == '`').count();
        match fence {
            None if ticks >= 3 => {
                out.push((false, std::mem::take(&mut current)));
                fence = Some(ticks);
            }
            Some(open) if ticks >= open && trimmed.chars().all(|c| c == '`') => {
                out.push((true, std::mem::take(&mut current)));
                fence = None;
            }
            _ => current.push_str(line),
        }
    }
    out.push((fence.is_some(), current));
    out.into_iter()
        .map(|(code, text)| (code, text.trim_end().to_string()))
        .filter(|(_, text)| !text.trim().is_empty())
        .collect()
}

/// A source sentence made safe to quote inside an answer: its own citation markers removed
/// (they would point at this answer's numbers), backticks neutralised (a stray fence would
/// turn the rest into code), and leading Markdown block syntax dropped.
fn clean(sentence: &str) -> String {
    let text = crate::citation::markers::strip(sentence).replace('`', "'");
    let trimmed = text.trim_start_matches(['#', '>', '-', '*', '+', '|', ' ', '\t']);
    let trimmed = match trimmed.split_once(". ") {
        Some((number, rest))
            if !number.is_empty() && number.bytes().all(|b| b.is_ascii_digit()) =>
        {
            rest
        }
        _ => trimmed,
    };
    trimmed.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The answer to `question` from `sources`: the best sentences by BM25, each cited.
pub fn answer(question: &str, sources: &[Arc<CitationEntry>]) -> Extract {
    let zh = has_han(question);
    let query: HashSet<String> = tokens(question).into_iter().collect();
    let mut candidates = candidates(sources);
    // A sentence that mostly repeats the question (a FAQ heading, a quoted example)
    // answers nothing: two of its distinct words, and a quarter of them, must be its own.
    candidates.retain(|candidate| {
        let distinct: HashSet<&String> = candidate.tokens.iter().collect();
        let novel = distinct
            .iter()
            .filter(|token| !query.contains(**token))
            .count();
        novel >= 2 && novel * NOVEL_SHARE >= distinct.len()
    });
    let scores = bm25(&query, &candidates);
    let mut ranked: Vec<(f64, &Candidate)> = scores
        .into_iter()
        .zip(&candidates)
        .filter(|(score, _)| *score > 0.0)
        .collect();
    ranked.sort_by(|(a, ca), (b, cb)| {
        b.total_cmp(a)
            .then(ca.number.cmp(&cb.number))
            .then(ca.position.cmp(&cb.position))
    });

    let mut chosen: Vec<&Candidate> = Vec::new();
    let mut per_source: HashMap<u32, usize> = HashMap::new();
    for (_, candidate) in ranked {
        if chosen.len() == MAX_SENTENCES {
            break;
        }
        if per_source.get(&candidate.number).copied().unwrap_or(0) >= MAX_PER_SOURCE {
            continue;
        }
        let words: HashSet<&String> = candidate.tokens.iter().collect();
        let near_duplicate = chosen.iter().any(|other| {
            let other_words: HashSet<&String> = other.tokens.iter().collect();
            let shared = words.intersection(&other_words).count();
            shared * 10 >= words.len().min(other_words.len()).max(1) * 8
        });
        if near_duplicate {
            continue;
        }
        *per_source.entry(candidate.number).or_default() += 1;
        chosen.push(candidate);
    }
    if chosen.is_empty() {
        let text = if zh {
            "检索到的资料中没有找到与问题直接相关的内容。"
        } else {
            "None of the sources answers this question directly."
        };
        return Extract {
            text: text.to_string(),
            cited: Vec::new(),
        };
    }
    compose(&chosen, zh)
}

/// Every sentence of the sources' snippets a quote could be, and each code block whole.
fn candidates(sources: &[Arc<CitationEntry>]) -> Vec<Candidate> {
    let mut candidates: Vec<Candidate> = Vec::new();
    for entry in sources {
        let mut position = 0;
        for (code, segment) in segments(&entry.snippet) {
            if code {
                if segment.lines().count() <= MAX_CODE_LINES {
                    candidates.push(Candidate {
                        number: entry.number,
                        position,
                        tokens: tokens(&segment),
                        text: segment,
                        code: true,
                    });
                }
                position += 1;
                continue;
            }
            for sentence in sentences(&segment) {
                let text = clean(sentence);
                position += 1;
                if text.chars().filter(|c| c.is_alphanumeric()).count() < 4 {
                    continue;
                }
                candidates.push(Candidate {
                    number: entry.number,
                    position,
                    tokens: tokens(&text),
                    text,
                    code: false,
                });
            }
        }
    }
    candidates
}

/// The answer the chosen candidates make: each sentence followed by its marker (a line
/// each in Chinese), each code block a block of its own led by a line that cites it.
fn compose(chosen: &[&Candidate], zh: bool) -> Extract {
    let mut text = String::new();
    let mut cited = Vec::new();
    for candidate in chosen {
        if candidate.code {
            // A block of its own, as written, led by a line that cites it.
            if !text.is_empty() && !text.ends_with('\n') {
                text.push('\n');
            }
            let lead = if zh { "示例" } else { "For example" };
            text.push_str(&format!(
                "{lead} [{}]:\n{}\n",
                candidate.number,
                crate::text::fenced(&candidate.text)
            ));
        } else {
            if !text.is_empty() && !zh && !text.ends_with('\n') {
                text.push(' ');
            }
            let sentence = candidate.text.trim_end_matches('…').trim_end();
            text.push_str(sentence);
            text.push_str(&format!(" [{}]", candidate.number));
            if zh {
                text.push('\n');
            }
        }
        if !cited.contains(&candidate.number) {
            cited.push(candidate.number);
        }
    }
    Extract {
        text: text.trim_end().to_string(),
        cited,
    }
}

/// BM25 (k1 = 1.2, b = 0.75) of each candidate sentence against the query terms.
fn bm25(query: &HashSet<String>, candidates: &[Candidate]) -> Vec<f64> {
    let n = candidates.len() as f64;
    if n == 0.0 {
        return Vec::new();
    }
    let average_len = candidates.iter().map(|c| c.tokens.len()).sum::<usize>() as f64 / n;
    let mut document_frequency: HashMap<&str, f64> = HashMap::new();
    for candidate in candidates {
        let unique: HashSet<&str> = candidate.tokens.iter().map(String::as_str).collect();
        for term in unique {
            if query.contains(term) {
                *document_frequency.entry(term).or_default() += 1.0;
            }
        }
    }
    candidates
        .iter()
        .map(|candidate| {
            let len = candidate.tokens.len() as f64;
            let mut term_frequency: HashMap<&str, f64> = HashMap::new();
            for token in &candidate.tokens {
                if query.contains(token) {
                    *term_frequency.entry(token).or_default() += 1.0;
                }
            }
            term_frequency
                .iter()
                .map(|(term, tf)| {
                    let df = document_frequency.get(term).copied().unwrap_or(0.0);
                    let idf = ((n - df + 0.5) / (df + 0.5) + 1.0).ln();
                    idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * len / average_len.max(1.0)))
                })
                .sum()
        })
        .collect()
}

/// Splits a question into its clauses, for the offline planner and agent: at commas,
/// semicolons and sentence ends, and at "and"/"以及"/"并且"/"还有". A question with one
/// clause comes back whole.
pub fn clauses(question: &str) -> Vec<String> {
    let mut text = question.to_string();
    for joiner in [" and ", " And ", "以及", "并且", "还有", "另外"] {
        text = text.replace(joiner, "\u{1}");
    }
    let mut out: Vec<String> = Vec::new();
    for part in text.split([
        '\u{1}', '，', ',', '；', ';', '。', '？', '?', '！', '!', '\n',
    ]) {
        let part = part
            .trim()
            .trim_start_matches(|c: char| !c.is_alphanumeric())
            .trim();
        if part.chars().filter(|c| c.is_alphanumeric()).count() >= 2
            && !out.iter().any(|seen| seen == part)
        {
            out.push(part.to_string());
        }
    }
    if out.len() <= 1 {
        return vec![question.trim().to_string()];
    }
    out
}

/// The offline answerer behind the `ChatModel` interface.
#[derive(Debug, Clone, Copy, Default)]
pub struct Extractive;

#[async_trait]
impl ChatModel for Extractive {
    fn kind(&self) -> ModelKind {
        ModelKind::Extractive
    }

    async fn stream(&self, request: ChatRequest) -> Result<ChatStream, LlmError> {
        let AnswerContext { question, sources } = request.context;
        let offers_search = request.tools.iter().any(|tool| tool.name == "web_search");
        let has_searched = request
            .messages
            .iter()
            .any(|m| matches!(m, Message::Tool { .. }));
        let events = if offers_search && !has_searched {
            let mut queries = vec![question.trim().to_string()];
            for clause in clauses(&question) {
                if queries.len() < MAX_SEARCHES && !queries.contains(&clause) {
                    queries.push(clause);
                }
            }
            let calls = queries
                .into_iter()
                .enumerate()
                .map(|(index, query)| ToolCall {
                    index: index as u32,
                    id: format!("offline_{index}"),
                    name: "web_search".to_string(),
                    arguments: json!({ "query": query }).to_string(),
                })
                .collect();
            vec![
                ChatEvent::ToolCalls(calls),
                ChatEvent::Done {
                    finish_reason: Some(FinishReason::ToolCalls),
                    usage: None,
                },
            ]
        } else {
            let extract = answer(&question, &sources);
            let mut events: Vec<ChatEvent> = extract
                .text
                .split_inclusive('\n')
                .map(|piece| ChatEvent::Text(piece.to_string()))
                .collect();
            events.push(ChatEvent::Done {
                finish_reason: Some(FinishReason::Stop),
                usage: None,
            });
            events
        };
        Ok(Box::pin(futures_util::stream::iter(
            events.into_iter().map(Ok),
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::citation::Registry;
    use crate::model::Source;

    fn sources(snippets: &[(&str, &str)]) -> Vec<Arc<CitationEntry>> {
        let sources: Vec<Source> = snippets
            .iter()
            .enumerate()
            .map(|(i, (title, snippet))| Source {
                url: format!("https://s{i}.example.org/"),
                title: title.to_string(),
                snippet: snippet.to_string(),
                ..Source::default()
            })
            .collect();
        Registry::single_round("q", &sources).entries().to_vec()
    }

    #[test]
    fn a_code_block_is_quoted_as_code() {
        let snippet = "Ask from the command line with curl.\n```\ncurl -s http://127.0.0.1:3000/v1/chat/completions \\\n  -H 'content-type: application/json' \\\n  -d '{\"model\": \"cited-chat\"}'\n```\nThe reply is JSON.";
        let extract = answer(
            "how do I call the chat completions api with curl",
            &sources(&[("API", snippet)]),
        );
        assert!(
            extract.text.contains("For example [1]:\n```\ncurl -s http://127.0.0.1:3000/v1/chat/completions \\\n  -H 'content-type: application/json' \\\n"),
            "{}",
            extract.text
        );
        assert!(extract.text.contains("\n```"), "{}", extract.text);
        assert_eq!(extract.cited, vec![1]);
        // A snippet cut inside its block keeps the lines it has as code.
        assert_eq!(
            segments("Run it:\n```sh\ncurl a\ncurl b"),
            vec![
                (false, "Run it:".to_string()),
                (true, "curl a\ncurl b".to_string())
            ]
        );
        // The knowledge base keeps a Markdown code block's lines, fenced.
        let (_, passages) = crate::ssr::knowledge::markdown_passages(
            "# API\n\nCall it:\n\n```sh\ncurl -s a \\\n  -d b\n```\n",
        );
        assert_eq!(passages[0].text, "Call it:\n```\ncurl -s a \\\n  -d b\n```");
    }

    #[test]
    fn chinese_tokens_are_unigrams_and_bigrams() {
        assert_eq!(
            tokens("量子计算"),
            vec!["量", "量子", "子", "子计", "计", "计算", "算"]
        );
        assert_eq!(tokens("Rust 的 runtimes"), vec!["rust", "runtime"]);
    }

    #[test]
    fn sentence_splitting() {
        assert_eq!(
            sentences("这是第一句。这是第二句！Third one. The 4th?"),
            vec!["这是第一句。", "这是第二句！", "Third one.", "The 4th?"]
        );
        assert_eq!(
            sentences("太短。OK."),
            Vec::<&str>::new(),
            "fragments are not sentences"
        );
        assert_eq!(
            sentences("version 1.5 is out. ok"),
            vec!["version 1.5 is out."]
        );
    }

    #[test]
    fn answers_chinese_from_the_best_sentences() {
        let sources = sources(&[
            ("天气", "今天北京天气晴朗。明天有小雨。"),
            ("SearXNG 配置", "SearXNG 默认只输出 HTML。要启用 JSON 格式，在 settings.yml 的 search.formats 中加入 json。然后重启服务。"),
            ("无关", "量子计算是一种新的计算方式。"),
        ]);
        let extract = answer("如何在 SearXNG 中启用 JSON 格式？", &sources);
        assert!(
            extract.text.contains("search.formats 中加入 json"),
            "{}",
            extract.text
        );
        assert_eq!(extract.cited[0], 2);
        assert!(
            !extract.cited.contains(&1),
            "weather is not cited: {extract:?}"
        );
    }

    #[test]
    fn a_sentence_that_only_repeats_the_question_is_not_an_answer() {
        let sources = sources(&[
            ("FAQ", "Try \"How do I run the tests?\""),
            ("Tests", "Run make test from the project root."),
        ]);
        let extract = answer("How do I run the tests?", &sources);
        assert_eq!(extract.cited, vec![2], "{extract:?}");
    }

    #[test]
    fn answers_english_and_cites_only_what_it_quoted() {
        let sources = sources(&[
            (
                "Tests",
                "Run make test to run every test. It installs what is missing first.",
            ),
            ("Other", "The weather is fine today."),
        ]);
        let extract = answer("How do I run the tests?", &sources);
        assert!(
            extract
                .text
                .starts_with("Run make test to run every test. [1]"),
            "{}",
            extract.text
        );
        assert_eq!(extract.cited, vec![1]);
        let mut registry_numbers: Vec<u32> = sources.iter().map(|e| e.number).collect();
        registry_numbers.sort();
        for number in crate::citation::markers::scan(&extract.text)
            .into_iter()
            .flat_map(|m| m.numbers)
        {
            assert!(extract.cited.contains(&number) && registry_numbers.contains(&number));
        }
    }

    #[test]
    fn nothing_relevant_means_no_citations() {
        let sources = sources(&[("a", "Bananas are yellow and sweet.")]);
        let extract = answer("How do compilers optimise loops?", &sources);
        assert!(extract.cited.is_empty());
        assert!(crate::citation::markers::scan(&extract.text).is_empty());
        assert!(answer("量子计算", &[]).cited.is_empty());
    }

    #[test]
    fn quoted_sentences_cannot_cite_or_break_markdown() {
        let sources = sources(&[
            (
                "a",
                "Rust 1.0 shipped in 2015 [2]. ```rust fn main() {} shipped with cargo.",
            ),
            ("b", "Unrelated text about weather."),
        ]);
        let extract = answer("When did Rust 1.0 ship with cargo?", &sources);
        assert_eq!(extract.cited, vec![1], "{extract:?}");
        assert!(
            !extract.text.contains("[2]") && !extract.text.contains('`'),
            "{}",
            extract.text
        );
        let numbers: Vec<u32> = crate::citation::markers::scan(&extract.text)
            .into_iter()
            .flat_map(|m| m.numbers)
            .collect();
        assert!(numbers.iter().all(|n| *n == 1), "{}", extract.text);
    }

    #[test]
    fn deterministic() {
        let sources = sources(&[
            ("a", "Tokio is an async runtime. Tokio is fast."),
            ("b", "async-std is an async runtime too. smol is small."),
            ("c", "Tokio powers many servers. Runtimes schedule tasks."),
        ]);
        let first = answer("Which async runtime is fast?", &sources);
        for _ in 0..20 {
            assert_eq!(answer("Which async runtime is fast?", &sources), first);
        }
    }

    #[test]
    fn clauses_split_questions() {
        assert_eq!(
            clauses("谁发明了 RepRap，以及它的灵感来源是什么？"),
            vec!["谁发明了 RepRap", "它的灵感来源是什么"]
        );
        assert_eq!(
            clauses("What is Tokio and who maintains it?"),
            vec!["What is Tokio", "who maintains it"]
        );
        assert_eq!(clauses("What is Tokio?"), vec!["What is Tokio?"]);
    }
}
