//! The conversation store at scale (the persistence issue's figures): with 10,000
//! conversations of 5 exchanges each in one browser's history, how long it takes to open
//! the history list (50 newest), to open one conversation, and to search, on SQLite and on
//! PostgreSQL (`CITED_TEST_DATABASE_URL`, default `postgres://postgres@127.0.0.1:5432/test`,
//! skipped with a note when unreachable); and the database size per 1,000 exchanges.
//!
//!     cargo bench --features ssr --bench store

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
    }
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
    }
    let _ = std::fs::remove_file(&sqlite_path);
}

criterion_group!(benches, bench);
criterion_main!(benches);
