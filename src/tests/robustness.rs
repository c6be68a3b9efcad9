//! Everything that reads outside input never panics: the citation marker scanner, the
//! Markdown renderer (and its incremental form), SearXNG's JSON, the answer stream's NDJSON
//! and the tolerant reader of model JSON. Property tests over arbitrary text and bytes, and
//! over real fixtures cut and mutated at random; the case counts are the `with_cases`
//! numbers below (`cargo test robustness` runs them).

use proptest::prelude::*;
use serde_json::Value;

use crate::citation::registry::Registry;
use crate::citation::render::render;
use crate::model::{AnswerEvent, LineDecoder, Source};
use crate::ssr::search::searxng::{normalise, parse};

const FIXTURES: [&str; 4] = [
    include_str!("fixtures/searxng/zh_quantum_8_results.json"),
    include_str!("fixtures/searxng/en_merged_duplicates_6_results.json"),
    include_str!("fixtures/searxng/infobox_and_answers.json"),
    include_str!("fixtures/searxng/empty_unresponsive_engines.json"),
];

fn registry() -> Registry {
    let mut registry = Registry::new();
    let sources: Vec<Source> = (1..=6)
        .map(|n| Source {
            url: format!("https://example.org/{n}"),
            title: format!("Source {n}"),
            ..Source::default()
        })
        .collect();
    registry.add_round("q", &sources);
    registry
}

/// Text rich in what the scanner and the renderer look at.
fn tricky_text() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("[".to_string()),
        Just("]".to_string()),
        Just("【".to_string()),
        Just("】".to_string()),
        Just("[^".to_string()),
        Just("[citation:".to_string()),
        Just("](".to_string()),
        Just("]:".to_string()),
        Just("`".to_string()),
        Just("```\n".to_string()),
        Just("\n".to_string()),
        Just("\n\n".to_string()),
        Just("- ".to_string()),
        Just("1. ".to_string()),
        Just("> ".to_string()),
        Just("| a | b |\n|---|---|\n".to_string()),
        Just("<b>".to_string()),
        Just("，".to_string()),
        Just("-".to_string()),
        "[0-9]{1,25}",
        "[a-z 量子计算]{0,8}",
        any::<char>().prop_map(String::from),
    ];
    proptest::collection::vec(piece, 0..60).prop_map(|pieces| pieces.concat())
}

/// A fixture cut, with some of its bytes flipped, inserted or removed.
fn mutated_fixture() -> impl Strategy<Value = Vec<u8>> {
    (
        0..FIXTURES.len(),
        proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>(), 0u8..3), 0..12),
        any::<prop::sample::Index>(),
    )
        .prop_map(|(which, edits, cut)| {
            let mut bytes = FIXTURES[which].as_bytes().to_vec();
            for (at, byte, kind) in edits {
                if bytes.is_empty() {
                    break;
                }
                let at = at.index(bytes.len());
                match kind {
                    0 => bytes[at] = byte,
                    1 => bytes.insert(at, byte),
                    _ => {
                        bytes.remove(at);
                    }
                }
            }
            let keep = cut.index(bytes.len() + 1);
            if keep > bytes.len() / 2 {
                bytes.truncate(keep);
            }
            bytes
        })
}

/// Any JSON value, a few levels deep.
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
        ".{0,20}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 64, 8, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..8).prop_map(Value::Array),
            proptest::collection::btree_map(
                prop_oneof![
                    Just("url".to_string()),
                    Just("title".to_string()),
                    Just("content".to_string()),
                    Just("engines".to_string()),
                    Just("publishedDate".to_string()),
                    Just("score".to_string()),
                    "[a-z]{1,8}",
                ],
                inner,
                0..6
            )
            .prop_map(|map| Value::Object(map.into_iter().collect())),
        ]
    })
}

/// SearXNG's shape with any values where its results go.
fn searxng_like() -> impl Strategy<Value = Vec<u8>> {
    (json_value(), json_value(), json_value()).prop_map(|(results, infoboxes, unresponsive)| {
        serde_json::json!({
            "query": "q",
            "number_of_results": 3,
            "results": results,
            "infoboxes": infoboxes,
            "unresponsive_engines": unresponsive,
        })
        .to_string()
        .into_bytes()
    })
}

fn read_searxng(body: &[u8]) {
    if let Ok(raw) = parse(body) {
        let results = normalise(raw, "q", 8, 200);
        assert!(results.sources.len() <= 8);
        for source in &results.sources {
            assert!(
                crate::citation::urls::is_web_link(&source.url),
                "{}",
                source.url
            );
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn markers_and_rendering_take_any_text(text in any::<String>()) {
        let _ = crate::citation::markers::scan(&text);
        let _ = render(&text, &registry());
    }

    #[test]
    fn markers_and_rendering_take_tricky_text(text in tricky_text()) {
        let _ = crate::citation::markers::scan(&text);
        let rendered = render(&text, &registry());
        let _ = rendered.text(true);
    }

    #[test]
    fn searxng_bodies_of_any_bytes(body in proptest::collection::vec(any::<u8>(), 0..512)) {
        read_searxng(&body);
    }

    #[test]
    fn searxng_fixtures_mutated(body in mutated_fixture()) {
        read_searxng(&body);
    }

    #[test]
    fn searxng_shaped_json_with_any_values(body in searxng_like()) {
        read_searxng(&body);
    }

    #[test]
    fn tolerant_json_takes_any_reply(reply in any::<String>()) {
        let _ = crate::ssr::tolerant::parse_value(&reply);
        let _ = crate::ssr::tolerant::clean(&reply);
    }

    #[test]
    fn tolerant_json_takes_broken_json(body in mutated_fixture(), wrap in 0u8..4) {
        let text = String::from_utf8_lossy(&body).into_owned();
        let reply = match wrap {
            0 => text,
            1 => format!("```json\n{text}\n```"),
            2 => format!("<think>{text}</think>{text}"),
            _ => format!("好的：{text}，以上。"),
        };
        let _ = crate::ssr::tolerant::parse_value(&reply);
    }

    #[test]
    fn ndjson_takes_any_bytes_in_any_pieces(
        chunks in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..64), 0..16)
    ) {
        let mut decoder = LineDecoder::default();
        for chunk in &chunks {
            let _ = decoder.push(chunk);
        }
    }

    #[test]
    fn ndjson_events_survive_any_cut(
        texts in proptest::collection::vec(any::<String>(), 1..6),
        cuts in proptest::collection::vec(any::<prop::sample::Index>(), 0..8),
    ) {
        let events: Vec<AnswerEvent> = texts
            .into_iter()
            .map(|text| AnswerEvent::Token { text })
            .collect();
        let stream: Vec<u8> = events.iter().flat_map(|e| e.to_line().into_bytes()).collect();
        let mut points: Vec<usize> = cuts.iter().map(|cut| cut.index(stream.len() + 1)).collect();
        points.sort_unstable();
        let mut decoder = LineDecoder::default();
        let mut decoded = Vec::new();
        let mut from = 0;
        for point in points.into_iter().chain(std::iter::once(stream.len())) {
            decoded.extend(decoder.push(&stream[from..point]));
            from = point;
        }
        prop_assert_eq!(decoded, events);
    }
}
