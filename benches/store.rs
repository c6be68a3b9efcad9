//! The conversation store at scale, on SQLite and on PostgreSQL (`CITED_TEST_DATABASE_URL`,
//! default `postgres://postgres@127.0.0.1:5432/test`, skipped with a note when
//! unreachable):
//! - with 10,000 conversations of 5 exchanges each in one browser's history, how long it
//!   takes to open the history list (50 newest), to open one conversation, and to search;
//!   and the database size per 1,000 exchanges;
//! - with one conversation of 100 and one of 5,000 exchanges (the history issue's figures):
//!   what a question adds (the quota check, writing the exchange as it starts and as it
//!   ends, with its search terms), the history list, opening the conversation, searching
//!   it and its share page. Flat means the second column is not 50 times the first.
//!
//!     cargo bench --features ssr --bench store
//!
//! `CITED_BENCH_STORE=long` runs only the second part.

use std::time::Instant;

use cited::citation::Registry;
use cited::model::{ConversationSummary, Exchange, ExchangeState, Mode, Source};
use cited::ssr::session::SessionId;
use cited::ssr::store::{Store, StoredConversation};
use criterion::{criterion_group, criterion_main, Criterion};

const CONVERSATIONS: usize = 10_000;
const EXCHANGES: usize = 5;
const TOPICS: [&str; 8] = [
    "tokio runtime scheduler",
    "searxng json output limiter",
    "量子计算 入门 比特",
    "rust ownership borrowing",
    "猫眼三姐妹 配音 演员",
    "postgres full text search",
    "wasm bundle size brotli",
    "citation popover keyboard",
];

fn conversation(n: usize, now: i64) -> StoredConversation {
    let topic = TOPICS[n % TOPICS.len()];
    let mut registry = Registry::new();
    let sources: Vec<Source> = (0..5)
        .map(|i| Source {
            url: format!("https://example.org/{n}/{i}"),
            title: format!("{topic} source {i}"),
            domain: "example.org".into(),
            snippet: format!("A snippet about {topic}, number {i}, as a search engine returns it."),
            ..Source::default()
        })
        .collect();
    registry.add_round(topic, &sources);
    let exchanges = (0..EXCHANGES)
        .map(|e| Exchange {
            id: e as u64,
            mode: Mode::Chat,
            question: format!("Question {e} about {topic} (conversation {n})?"),
            answer: format!(
                "{} [1]. It depends on {topic} in practice [2][3], as the sources say [4]. \
                 Conversation marker c{n}x.",
                format!("An answer about {topic} ").repeat(12)
            ),
            sources: registry.entries().to_vec(),
            cited: vec![1, 2, 3, 4],
            done: true,
            state: ExchangeState::Done,
            ..Exchange::default()
        })
        .collect();
    let at = now - (CONVERSATIONS - n) as i64 * 60_000;
    StoredConversation {
        summary: ConversationSummary {
            id: SessionId::random().to_string(),
            title: format!("{topic} #{n}"),
            mode: Mode::Chat,
            created_at: at,
            updated_at: at,
            share_token: None,
        },
        exchanges,
        registry,
        earlier: 0,
    }
}

/// One conversation of `n` exchanges, each with its own marker word (`e<k>x`).
fn long_conversation(n: usize, now: i64) -> StoredConversation {
    let mut conversation = conversation(0, now);
    conversation.summary.title = format!("A long conversation of {n}");
    let template = conversation.exchanges[0].clone();
    conversation.exchanges = (0..n)
        .map(|k| Exchange {
            id: k as u64,
            question: format!("Question {k} of the long one?"),
            answer: format!("{} Marker e{k}x.", template.answer),
            ..template.clone()
        })
        .collect();
    conversation
}

#[allow(clippy::print_stdout, reason = "the figures are the bench's output")]
fn bench(c: &mut Criterion) {
    cited::ssr::net::install_crypto_provider();
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    // The pool's background tasks need the runtime even where nothing is awaited.
    let _entered = runtime.enter();
    let sqlite_path = std::env::temp_dir().join(format!("cited-bench-{}.db", SessionId::random()));
    let postgres = std::env::var("CITED_TEST_DATABASE_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".to_string());
    for (name, url) in [
        ("sqlite", format!("sqlite:{}", sqlite_path.display())),
        ("postgres", postgres),
    ] {
        let store = Store::open(&url).expect("a database URL");
        if let Err(error) = runtime.block_on(store.ready()) {
            println!("{name}: not reachable, skipped ({error})");
            continue;
        }
        if std::env::var("CITED_BENCH_STORE").is_ok_and(|part| part == "long") {
            for length in [100, 5_000] {
                long(c, &runtime, &store, name, length);
            }
            continue;
        }
        let owner = SessionId::random().to_string();
        let now = cited::ssr::store::now_millis();
        let before = runtime.block_on(store.size_bytes()).expect("a size");
        let started = Instant::now();
        let all: Vec<StoredConversation> =
            (0..CONVERSATIONS).map(|n| conversation(n, now)).collect();
        for batch in all.chunks(500) {
            runtime
                .block_on(store.insert_conversations(&owner, batch))
                .expect("stored");
        }
        let after = runtime.block_on(store.size_bytes()).expect("a size");
        let per_thousand = (after - before) as f64 / (CONVERSATIONS * EXCHANGES / 1000) as f64;
        println!(
            "{name}: stored {} conversations ({} exchanges) in {:.1} s; {:.0} KiB per 1,000 exchanges",
            CONVERSATIONS,
            CONVERSATIONS * EXCHANGES,
            started.elapsed().as_secs_f64(),
            per_thousand / 1024.0
        );
        let middle = all[CONVERSATIONS / 2].summary.id.clone();
        let mut group = c.benchmark_group(name);
        group.sample_size(30);
        group.bench_function("history list: 50 newest of 10,000", |b| {
            b.iter(|| {
                let listed = runtime.block_on(store.list(&owner, 50)).expect("listed");
                assert_eq!(listed.len(), 50);
            })
        });
        group.bench_function("open one conversation (5 exchanges)", |b| {
            b.iter(|| {
                let open = runtime
                    .block_on(store.conversation(&owner, &middle))
                    .expect("read");
                assert_eq!(open.map(|c| c.exchanges.len()), Some(EXCHANGES));
            })
        });
        group.bench_function("search: one conversation's marker", |b| {
            b.iter(|| {
                let found = runtime
                    .block_on(store.search(&owner, "c5000x", 50))
                    .expect("searched");
                assert_eq!(found.len(), 1);
            })
        });
        group.bench_function("search: a common topic (50 of 1,250)", |b| {
            b.iter(|| {
                let found = runtime
                    .block_on(store.search(&owner, "tokio scheduler", 50))
                    .expect("searched");
                assert_eq!(found.len(), 50);
            })
        });
        group.finish();
        runtime
            .block_on(store.forget_owner(&owner))
            .expect("the bench's data removed");
        for length in [100, 5_000] {
            long(c, &runtime, &store, name, length);
        }
    }
    let _ = std::fs::remove_file(&sqlite_path);
}

/// The figures of one conversation of `length` exchanges.
fn long(
    c: &mut Criterion,
    runtime: &tokio::runtime::Runtime,
    store: &Store,
    name: &str,
    length: usize,
) {
    let owner = SessionId::random().to_string();
    let conversation = long_conversation(length, cited::ssr::store::now_millis());
    let id = conversation.summary.id.clone();
    runtime
        .block_on(store.insert_conversations(&owner, &[conversation]))
        .expect("stored");
    let token = SessionId::random().to_string();
    runtime
        .block_on(store.set_share(&owner, &id, Some(&token)))
        .expect("shared");
    let mut group = c.benchmark_group(format!("{name}, one conversation of {length} exchanges"));
    group.sample_size(20);
    let template = long_conversation(1, 0).exchanges.remove(0);
    group.bench_function("a question's store work", |b| {
        b.iter(|| {
            let used = runtime.block_on(store.owner_bytes(&owner)).expect("usage");
            assert!(used > 0);
            let mut exchange = Exchange {
                answer: String::new(),
                state: ExchangeState::Answering,
                ..template.clone()
            };
            let seq = runtime
                .block_on(store.begin_exchange(&id, &exchange))
                .expect("begun");
            exchange.answer = template.answer.clone();
            exchange.state = ExchangeState::Done;
            runtime
                .block_on(store.finish_exchange(&id, seq, &exchange, None))
                .expect("finished");
        })
    });
    group.bench_function("history list", |b| {
        b.iter(|| {
            let listed = runtime.block_on(store.list(&owner, 50)).expect("listed");
            assert_eq!(listed.len(), 1);
        })
    });
    group.bench_function("open", |b| {
        b.iter(|| {
            let open = runtime
                .block_on(store.conversation_latest(&owner, &id, 200))
                .expect("read")
                .expect("there");
            assert!(!open.exchanges.is_empty());
        })
    });
    let marker = format!("e{}x", length / 2);
    group.bench_function("search", |b| {
        b.iter(|| {
            let found = runtime
                .block_on(store.search(&owner, &marker, 50))
                .expect("searched");
            assert_eq!(found.len(), 1);
        })
    });
    group.bench_function("share page", |b| {
        b.iter(|| {
            let shared = runtime
                .block_on(store.shared_latest(&token, 50))
                .expect("read")
                .expect("there");
            assert!(!shared.exchanges.is_empty());
        })
    });
    group.finish();
    runtime
        .block_on(store.forget_owner(&owner))
        .expect("the bench's data removed");
}

criterion_group!(benches, bench);
criterion_main!(benches);
