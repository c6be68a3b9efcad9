//! Tolerant reading of JSON that a model wrote (Research mode's plan, reflect, verify…).
//!
//! Seed 004's tenth change: models wrap structured output in Markdown (`**充分性**：`, code
//! fences) and reasoning models add `<think>…</think>`; exact matching on such text failed
//! silently and looped. So before parsing: think blocks, code fences and emphasis markers
//! are removed; the first balanced `{…}` object is taken; if it does not parse, a repair
//! pass fixes the usual slips (trailing commas, smart quotes, a missing closing brace).
//! What still fails is a typed error the caller can show to the model once, then fall back.

use serde::de::DeserializeOwned;
use serde_json::Value;

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ParseError {
    #[error("the reply contains no JSON object")]
    NoObject,
    #[error("the JSON object is invalid: {0}")]
    Invalid(String),
    #[error("the JSON does not match the expected shape: {0}")]
    Shape(String),
}

/// Parses the first JSON object in `reply` into `T`.
pub fn parse<T: DeserializeOwned>(reply: &str) -> Result<T, ParseError> {
    let value = parse_value(reply)?;
    serde_json::from_value(value).map_err(|error| ParseError::Shape(error.to_string()))
}

/// The first JSON object in `reply`, cleaned and repaired as needed.
pub fn parse_value(reply: &str) -> Result<Value, ParseError> {
    let cleaned = clean(reply);
    let object = first_object(&cleaned).ok_or(ParseError::NoObject)?;
    match serde_json::from_str::<Value>(&object) {
        Ok(value) => Ok(value),
        Err(first_error) => serde_json::from_str::<Value>(&repair(&object))
            .map_err(|_| ParseError::Invalid(first_error.to_string())),
    }
}

/// Removes `<think>` blocks (an unclosed one runs to the end), code fence lines and
/// Markdown emphasis outside JSON strings.
pub fn clean(reply: &str) -> String {
    let mut text = reply.to_string();
    while let Some(start) = text.find("<think>") {
        match text[start..].find("</think>") {
            Some(end) => text.replace_range(start..start + end + "</think>".len(), ""),
            None => text.truncate(start),
        }
    }
    text.lines()
        .filter(|line| !line.trim_start().starts_with("```"))
        .collect::<Vec<_>>()
        .join("\n")
        .replace("**", "")
        .replace("__", "")
}

/// The first balanced `{…}` (braces inside strings ignored). An object cut off at the end
/// is returned as far as it goes, for the repair pass to close.
/// Follows a JSON text one character at a time, knowing when it is inside a string.
#[derive(Default)]
struct Strings {
    inside: bool,
    escaped: bool,
}

impl Strings {
    /// Feeds `c`; true when it is part of a string (its quotes included), so structure
    /// characters inside strings are never mistaken for structure.
    fn feed(&mut self, c: char) -> bool {
        if self.inside {
            match c {
                _ if self.escaped => self.escaped = false,
                '\\' => self.escaped = true,
                '"' => self.inside = false,
                _ => {}
            }
            return true;
        }
        self.inside = c == '"';
        self.inside
    }
}

fn first_object(text: &str) -> Option<String> {
    let start = text.find('{')?;
    let mut depth = 0usize;
    let mut strings = Strings::default();
    for (offset, c) in text[start..].char_indices() {
        if strings.feed(c) {
            continue;
        }
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(text[start..start + offset + 1].to_string());
                }
            }
            _ => {}
        }
    }
    Some(text[start..].to_string())
}

/// Fixes what models typically get wrong: smart quotes, trailing commas, unclosed strings,
/// arrays and objects.
fn repair(object: &str) -> String {
    let text = object.replace(['“', '”'], "\"");
    let mut out = String::with_capacity(text.len() + 4);
    let mut closers: Vec<char> = Vec::new();
    let mut strings = Strings::default();
    for c in text.chars() {
        if strings.feed(c) {
            out.push(c);
            continue;
        }
        match c {
            '{' => closers.push('}'),
            '[' => closers.push(']'),
            '}' | ']' => {
                // A comma right before a closer is a trailing comma.
                let trimmed = out.trim_end().len();
                if out[..trimmed].ends_with(',') {
                    out.truncate(trimmed - 1);
                }
                closers.pop();
            }
            _ => {}
        }
        out.push(c);
    }
    if strings.inside {
        out.push('"');
    }
    let trimmed = out.trim_end().len();
    if out[..trimmed].ends_with(',') {
        out.truncate(trimmed - 1);
    }
    while let Some(closer) = closers.pop() {
        out.push(closer);
    }
    out
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::json;

    use super::*;

    #[track_caller]
    fn check(reply: &str, expect: Value) {
        assert_eq!(parse_value(reply), Ok(expect), "reply: {reply:?}");
    }

    #[test]
    fn plain() {
        check(r#"{"sufficient": true}"#, json!({"sufficient": true}));
    }
    #[test]
    fn fenced() {
        check("Here you go:\n```json\n{\"a\": 1}\n```\n", json!({"a": 1}));
    }
    #[test]
    fn think_tags() {
        check("<think>maybe {\"a\": 0}</think>{\"a\": 2}", json!({"a": 2}));
    }
    #[test]
    fn unclosed_think_is_dropped() {
        check("{\"a\": 3}<think>and then {\"a\": 4}", json!({"a": 3}));
    }
    #[test]
    fn emphasis_around_keys() {
        check(r#"{"**充分性**": "充分"}"#, json!({"充分性": "充分"}));
    }
    #[test]
    fn prose_around() {
        check(
            "结论如下 {\"answer\": \"张欣\", \"n\": [1, 2]} 以上。",
            json!({"answer": "张欣", "n": [1, 2]}),
        );
    }
    #[test]
    fn braces_in_strings() {
        check(r#"{"text": "a } b { c"}"#, json!({"text": "a } b { c"}));
    }
    #[test]
    fn trailing_commas() {
        check(r#"{"a": [1, 2,], "b": 3,}"#, json!({"a": [1, 2], "b": 3}));
    }
    #[test]
    fn smart_quotes() {
        check("{“a”: “b”}", json!({"a": "b"}));
    }
    #[test]
    fn cut_off_at_the_end() {
        check(
            r#"{"subquestions": [{"q": "谁", "query": "张欣 配音"#,
            json!({"subquestions": [{"q": "谁", "query": "张欣 配音"}]}),
        );
    }

    #[test]
    fn no_object_and_invalid_are_typed() {
        assert_eq!(parse_value("no json here"), Err(ParseError::NoObject));
        assert!(matches!(
            parse_value("{\"a\": nope}"),
            Err(ParseError::Invalid(_))
        ));
        #[derive(serde::Deserialize, Debug)]
        struct Verdict {
            #[allow(dead_code, reason = "only the shape is checked")]
            sufficient: bool,
        }
        assert!(matches!(
            parse::<Verdict>("{\"sufficient\": \"maybe\"}"),
            Err(ParseError::Shape(_))
        ));
    }

    proptest! {
        #[test]
        fn never_panics(reply in "\\PC{0,300}") {
            let _ = parse_value(&reply);
        }

        #[test]
        fn valid_json_survives_noise(key in "[a-z]{1,8}", value in "[^\"\\\\*_“”]{0,20}", noise in "[^{}`<]{0,40}") {
            let object = json!({ key.clone(): value.clone() });
            let reply = format!("{noise}\n```json\n{object}\n```\n{noise}");
            prop_assert_eq!(parse_value(&reply), Ok(object));
        }
    }
}
