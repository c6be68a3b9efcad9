//! `cited eval` on the shipped set (`eval/cited-30.jsonl`) out of the box: no SearXNG (an
//! address where nothing listens), no model, so the knowledge base (the project's own
//! docs) answers through the extractive answerer. Deterministic: two runs score alike, and
//! a run started again skips what its folder already holds.

use std::time::Duration;

use crate::model::Mode;
use crate::ssr::eval::{parse_set, run};
use crate::ssr::state::AppState;

fn state() -> AppState {
    let config = super::pipeline_config("http://127.0.0.1:9", &[("CITED_SOURCES", "auto")]);
    assert!(config.llm.is_none(), "out of the box: no model");
    AppState::new(config)
}

#[tokio::test]
async fn the_shipped_set_scores_alike_twice_and_resumes() {
    let set = parse_set(include_str!("../../eval/cited-30.jsonl")).unwrap();
    assert_eq!(set.len(), 30);
    let folder = std::env::temp_dir().join(format!("cited-eval-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&folder);
    let deadline = Duration::from_secs(60);

    // Interrupted after 6 questions…
    let first = run(
        state(),
        set[..6].to_vec(),
        Mode::Chat,
        2,
        deadline,
        &folder,
        false,
    )
    .await
    .unwrap();
    assert_eq!(first.questions, 6);
    let lines = |folder: &std::path::Path| {
        std::fs::read_to_string(folder.join("results.jsonl"))
            .unwrap()
            .lines()
            .count()
    };
    assert_eq!(lines(&folder), 6);
    // …and resumed: only the other 24 are answered.
    let resumed = run(
        state(),
        set.clone(),
        Mode::Chat,
        2,
        deadline,
        &folder,
        false,
    )
    .await
    .unwrap();
    assert_eq!(resumed.questions, 30);
    assert_eq!(lines(&folder), 30, "the first 6 were not answered again");
    assert!(std::fs::read_to_string(folder.join("report.md"))
        .unwrap()
        .contains("citation precision"));

    // A second run from nothing scores the same.
    let again = folder.with_extension("again");
    let _ = std::fs::remove_dir_all(&again);
    let fresh = run(state(), set, Mode::Chat, 2, deadline, &again, false)
        .await
        .unwrap();
    assert_eq!(
        (
            fresh.correct,
            fresh.citation_validity_tenths,
            fresh.citation_precision_tenths,
            fresh.mean_coverage_percent
        ),
        (
            resumed.correct,
            resumed.citation_validity_tenths,
            resumed.citation_precision_tenths,
            resumed.mean_coverage_percent
        )
    );
    // Every answer cites the docs, and every citation resolves.
    assert_eq!(fresh.citation_validity_tenths, Some(1000));
    assert_eq!(fresh.timed_out, 0);
    #[allow(clippy::print_stdout)]
    {
        println!("{}", crate::ssr::eval::markdown(&fresh));
    }
    let _ = std::fs::remove_dir_all(&folder);
    let _ = std::fs::remove_dir_all(&again);
}

/// Answers every question "…Paris [1]." and, as a judge, says yes when the graded answer
/// holds the expected one.
fn paris_and_judge() -> std::sync::Arc<super::model::Model> {
    use super::model::{last_user, Model, Reply};
    Model::new(|request| {
        let user = last_user(request);
        let reply = match user.split_once("Expected answer: ") {
            Some((_, rest)) => {
                let (expected, graded) = rest.split_once("\nAnswer to grade: ").unwrap_or_default();
                if graded.contains(expected) {
                    "Yes."
                } else {
                    "No."
                }
            }
            None => "The capital of France is Paris [1].",
        };
        Reply::text(reply).finish(Some(crate::ssr::llm::FinishReason::Stop), None)
    })
}

#[tokio::test]
async fn the_model_can_grade_the_answers() {
    let config = super::pipeline_config("http://127.0.0.1:9", &[("CITED_SOURCES", "knowledge")]);
    let mut judged = AppState::new(config);
    judged.llm = paris_and_judge();
    let set = parse_set(
        "{\"id\":\"1\",\"question\":\"What is the capital of France?\",\"answer\":\"Paris\"}\n\
         {\"id\":\"2\",\"question\":\"Which city hosts the 2024 games?\",\"answer\":\"Lyon\"}\n",
    )
    .unwrap();
    let folder = std::env::temp_dir().join(format!("cited-eval-judge-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&folder);
    let report = run(
        judged,
        set,
        Mode::Chat,
        2,
        Duration::from_secs(30),
        &folder,
        true,
    )
    .await
    .unwrap();
    assert_eq!((report.judged, report.judged_correct), (2, 1));
    assert_eq!(report.judged_accuracy_tenths, Some(500));
    assert!(std::fs::read_to_string(folder.join("report.md"))
        .unwrap()
        .contains("50.0 % (1/2 graded)"));
    // Without a model there is nobody to ask.
    let offline = run(
        state(),
        Vec::new(),
        Mode::Chat,
        1,
        Duration::from_secs(1),
        &folder,
        true,
    )
    .await;
    assert!(offline.is_err());
}
