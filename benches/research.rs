//! Research branches run concurrently: with simulated latencies (each search 100 ms, each
//! model call 50 ms) one loop with 4 sub-questions should take about as long as one with a
//! single sub-question, and far less than the same 4 run one at a time
//! (`CITED_RESEARCH_MAX_BRANCHES=1`).
//!
//!     cargo bench --features ssr,testing --bench research
//!
//! Expected, per answer: 1 branch ≈ 400 ms (plan, search, reflect, evidence, verify,
//! summary, format); 4 concurrent ≈ 400 ms; 4 sequential ≈ 1000 ms.

use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use cited::model::Lang;
use cited::model::{Mode, Source};
use cited::ssr::config::Config;
use cited::ssr::pipeline::TurnInput;
use cited::ssr::search::{SearchError, SearchOptions, SearchProvider, SearchResults};
use cited::ssr::session::SessionStore;
use cited::ssr::state::AppState;
use cited::ssr::testing::{research_step, Model, Reply, ResearchStep};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use tokio_util::sync::CancellationToken;

const SEARCH_LATENCY: Duration = Duration::from_millis(100);
const MODEL_LATENCY: Duration = Duration::from_millis(50);

/// Three results per query, after a fixed delay.
struct SlowSearch;

#[async_trait]
impl SearchProvider for SlowSearch {
    async fn search(
        &self,
        query: &str,
        _options: &SearchOptions,
    ) -> Result<SearchResults, SearchError> {
        tokio::time::sleep(SEARCH_LATENCY).await;
        let sources = (1..=3)
            .map(|i| Source {
                url: format!("https://example.org/{}/{i}", query.replace(' ', "-")),
                title: format!("{query} {i}"),
                snippet: format!("About {query}, part {i}."),
                ..Source::default()
            })
            .collect();
        Ok(SearchResults {
            query: query.to_string(),
            sources,
            ..SearchResults::default()
        })
    }
}

/// Plans `branches` sub-questions, then answers every step after a fixed delay.
fn slow_model(branches: usize) -> Arc<Model> {
    Model::new(move |request| {
        let reply = match research_step(request) {
            Some(ResearchStep::Plan) => {
                let subs: Vec<serde_json::Value> = (0..branches)
                    .map(|i| serde_json::json!({ "question": format!("topic {i}?"), "query": format!("topic {i}"), "language": "en" }))
                    .collect();
                serde_json::json!({ "sub_questions": subs })
            }
            Some(ResearchStep::Reflect) => serde_json::json!({ "relevant": [1] }),
            Some(ResearchStep::Evidence) => serde_json::json!(
                { "statement": "A finding.", "reliability": "high", "sources": [1] }
            ),
            Some(ResearchStep::Verify) => {
                serde_json::json!({ "sufficient": true, "chain": "done" })
            }
            Some(ResearchStep::Summary) => serde_json::json!(
                { "answer": "X", "confidence": "high", "reasoning": "[1]" }
            ),
            Some(ResearchStep::Format) | None => return Reply::text("X [1].").after(MODEL_LATENCY),
        };
        Reply::text(reply.to_string()).after(MODEL_LATENCY)
    })
}

fn state(branches: usize, max_branches: usize) -> AppState {
    let max = max_branches.to_string();
    let (config, _) = Config::from_vars(|name| match name {
        "CITED_RESEARCH_MAX_BRANCHES" => Some(max.clone()),
        "CITED_RESEARCH_ENCYCLOPEDIA_ENGINES" => Some("none".to_string()),
        "CITED_CHECK" => Some("lexical".to_string()),
        "CITED_DATABASE_URL" => Some("sqlite::memory:".to_string()),
        _ => None,
    });
    let mut state = AppState::new(config);
    state.search = Arc::new(SlowSearch);
    state.llm = slow_model(branches);
    state
}

async fn answer(state: &AppState) {
    // A new session each time: the search cache must not answer.
    let session = SessionStore::new(Duration::from_secs(60)).create(Instant::now());
    let (sender, mut receiver) = tokio::sync::mpsc::channel(1024);
    let drain = tokio::spawn(async move { while receiver.recv().await.is_some() {} });
    let input = TurnInput {
        id: 1,
        question: "Which topic?".to_string(),
        search_enabled: true,
        lang: Lang::En,
        mode: Mode::Research,
        force_search: false,
        site: None,
        model: None,
        files: Vec::new(),
    };
    let exchange = cited::ssr::answer::run(
        state.clone(),
        session,
        input,
        CancellationToken::new(),
        sender,
    )
    .await;
    assert!(exchange.cited.contains(&1), "{}", exchange.answer);
    let _ = drain.await;
}

fn branches(c: &mut Criterion) {
    cited::ssr::net::install_crypto_provider();
    let runtime = tokio::runtime::Runtime::new().expect("a tokio runtime");
    // The database pool's background tasks need the runtime.
    let _entered = runtime.enter();
    let mut group = c.benchmark_group("research_loop");
    group.sample_size(10);
    for (name, branches, max_branches) in [
        ("1_branch", 1, 4),
        ("4_branches_concurrent", 4, 4),
        ("4_branches_sequential", 4, 1),
    ] {
        let state = state(branches, max_branches);
        group.bench_with_input(BenchmarkId::from_parameter(name), &state, |b, state| {
            b.iter(|| runtime.block_on(answer(state)));
        });
    }
    group.finish();
}

criterion_group!(benches, branches);
criterion_main!(benches);
