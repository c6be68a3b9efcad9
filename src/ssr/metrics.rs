//! Counters and histograms for `/metrics` (Prometheus's text format): answers by mode and
//! outcome, answer and first-token latency, searches by outcome, model tokens, streams
//! open. One registry per process, recorded from wherever the event happens; counts only,
//! nothing about anyone.

use std::sync::OnceLock;

use prometheus::{
    Encoder, HistogramOpts, HistogramVec, IntCounterVec, IntGauge, Opts, Registry, TextEncoder,
};

pub struct Metrics {
    registry: Registry,
    /// Answers ended, by `mode` (chat, agent, research) and `outcome` (done, stopped,
    /// failed).
    pub answers: IntCounterVec,
    /// Seconds from the question to the answer's end, by mode.
    pub answer_seconds: HistogramVec,
    /// Seconds from the question to the answer's first word, by mode.
    pub first_token_seconds: HistogramVec,
    /// Searches by `outcome`: `hit` (a cache), `ok`, or the error's kind.
    pub searches: IntCounterVec,
    /// Model tokens by `kind` (prompt, completion).
    pub model_tokens: IntCounterVec,
    /// Answer streams being sent to browsers (asked or followed).
    pub streams: IntGauge,
    /// Connections closed at once, by `reason` (`connections_per_address`).
    pub refused: IntCounterVec,
    /// Requests answered 429 by an address's rate, by `rate` (`requests`, `media`, `shares`).
    pub limited: IntCounterVec,
}

const LATENCY_BUCKETS: &[f64] = &[
    0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 60.0, 120.0, 300.0,
];

fn build() -> Result<Metrics, prometheus::Error> {
    let registry = Registry::new();
    let answers = IntCounterVec::new(
        Opts::new("cited_answers_total", "Answers ended, by mode and outcome."),
        &["mode", "outcome"],
    )?;
    let answer_seconds = HistogramVec::new(
        HistogramOpts::new(
            "cited_answer_seconds",
            "Seconds from the question to the end of its answer.",
        )
        .buckets(LATENCY_BUCKETS.to_vec()),
        &["mode"],
    )?;
    let first_token_seconds = HistogramVec::new(
        HistogramOpts::new(
            "cited_first_token_seconds",
            "Seconds from the question to the first word of its answer.",
        )
        .buckets(LATENCY_BUCKETS.to_vec()),
        &["mode"],
    )?;
    let searches = IntCounterVec::new(
        Opts::new(
            "cited_searches_total",
            "Searches, by outcome: hit (cache), ok, or the error's kind.",
        ),
        &["outcome"],
    )?;
    let model_tokens = IntCounterVec::new(
        Opts::new("cited_model_tokens_total", "Model tokens, by kind."),
        &["kind"],
    )?;
    let streams = IntGauge::new(
        "cited_answer_streams",
        "Answer streams being sent (asked or followed).",
    )?;
    registry.register(Box::new(answers.clone()))?;
    registry.register(Box::new(answer_seconds.clone()))?;
    registry.register(Box::new(first_token_seconds.clone()))?;
    registry.register(Box::new(searches.clone()))?;
    registry.register(Box::new(model_tokens.clone()))?;
    let refused = IntCounterVec::new(
        Opts::new(
            "cited_connections_refused_total",
            "Connections closed at once, by reason.",
        ),
        &["reason"],
    )?;
    registry.register(Box::new(streams.clone()))?;
    registry.register(Box::new(refused.clone()))?;
    let limited = IntCounterVec::new(
        Opts::new(
            "cited_requests_limited_total",
            "Requests refused by an address's rate, by rate.",
        ),
        &["rate"],
    )?;
    registry.register(Box::new(limited.clone()))?;
    Ok(Metrics {
        registry,
        answers,
        answer_seconds,
        first_token_seconds,
        searches,
        model_tokens,
        streams,
        refused,
        limited,
    })
}

/// The process's metrics.
pub fn metrics() -> &'static Metrics {
    static METRICS: OnceLock<Metrics> = OnceLock::new();
    METRICS.get_or_init(|| build().expect("the metric names and labels are valid"))
}

impl Metrics {
    /// Everything recorded, in Prometheus's text format.
    pub fn text(&self) -> String {
        let mut buffer = Vec::new();
        if let Err(error) = TextEncoder::new().encode(&self.registry.gather(), &mut buffer) {
            tracing::warn!(%error, "cannot encode the metrics");
        }
        String::from_utf8(buffer).unwrap_or_default()
    }
}

/// Counts a stream as open while it lives.
pub struct OpenStream(());

impl OpenStream {
    pub fn new() -> OpenStream {
        metrics().streams.inc();
        OpenStream(())
    }
}

impl Default for OpenStream {
    fn default() -> Self {
        OpenStream::new()
    }
}

impl Drop for OpenStream {
    fn drop(&mut self) {
        metrics().streams.dec();
    }
}
