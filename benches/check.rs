//! The offline citation check of one answer: 24 claim sentences, each against 8 sources
//! (the most pages an answer's check reads), as `ssr::pipeline::turn::checking` does for
//! the claims an answer left uncited. Each source segmented again for every sentence
//! (`align`) against once for all of them (`Page` and `align_in`); and one sentence
//! against one source. Sentences and sources are the labelled set's (`eval/citations`).
//!
//!     cargo bench --features ssr --bench check

use std::hint::black_box;

use cited::ssr::align::{align, align_in, Page};
use criterion::{criterion_group, criterion_main, Criterion};

/// The first `sources` distinct sources of the tuning part, half English, half Chinese,
/// with three of the sentences citing each.
fn answer(sources: usize) -> (Vec<String>, Vec<String>) {
    let set = include_str!("../eval/citations/tune.jsonl");
    let mut texts: Vec<String> = Vec::new();
    let mut sentences = Vec::new();
    let (mut english, mut chinese) = (0, 0);
    for line in set.lines() {
        let pair: serde_json::Value = serde_json::from_str(line).expect("the set is JSON");
        let text = pair["source"]["text"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let sentence = pair["sentence"].as_str().unwrap_or_default().to_string();
        if !texts.contains(&text) {
            let han = cited::ssr::align::han_text(&text);
            let room = if han { &mut chinese } else { &mut english };
            if texts.len() == sources || *room == sources / 2 {
                continue;
            }
            *room += 1;
            texts.push(text.clone());
        }
        let cites = sentences.iter().filter(|(t, _)| *t == text).count();
        if cites < 3 {
            sentences.push((text, sentence));
        }
    }
    (texts, sentences.into_iter().map(|(_, s)| s).collect())
}

fn bench(c: &mut Criterion) {
    let (sources, sentences) = answer(8);
    assert_eq!((sources.len(), sentences.len()), (8, 24));
    let mut group = c.benchmark_group("check 24 sentences x 8 sources");
    group.sample_size(10);
    group.bench_function("each source segmented per sentence (align)", |b| {
        b.iter(|| {
            for sentence in &sentences {
                for source in &sources {
                    black_box(align(sentence, source));
                }
            }
        })
    });
    group.bench_function("each source segmented once (Page, align_in)", |b| {
        b.iter(|| {
            let pages: Vec<Page> = sources.iter().map(|s| Page::new(s)).collect();
            for sentence in &sentences {
                for page in &pages {
                    black_box(align_in(sentence, page));
                }
            }
        })
    });
    group.finish();
    c.bench_function("one sentence against its source (align)", |b| {
        b.iter(|| black_box(align(&sentences[0], &sources[0])))
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
