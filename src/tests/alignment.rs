//! The citation checker (`ssr::align`) against the labelled sets, through the report
//! `cited check-citations` prints (`ssr::eval::citations`):
//! - `eval/citations/tune.jsonl` and `heldout.jsonl`: 891 pairs written for this project
//!   (Chinese and English, cross-lingual both ways, paraphrase, traps of a wrong number,
//!   name, date, comparison or negation, partial support). The thresholds were chosen on
//!   the tuning part only; the held-out figures are the ones reported.
//! - `data/alignment.jsonl`: the project's first 72 pairs (in-sample).
//!
//! Each test prints its report (`cargo test --features ssr tests::alignment -- --nocapture`)
//! and holds floors a little under what was measured, so a change that makes the checker
//! worse fails.

use crate::ssr::eval::citations::{judge_lexical, read_set, render, report, Label, Report};

fn measured(name: &str, text: &str) -> Report {
    assert!(
        !crate::ssr::align::dictionary::dictionary().is_empty(),
        "built without the Chinese–English dictionary: run `make cedict` (scripts/cedict.sh)"
    );
    let pairs = read_set(text).expect("the labelled set parses");
    let judged = judge_lexical(&pairs);
    let report = report(&judged);
    #[allow(clippy::print_stdout)]
    {
        println!("== {name}\n{}", render(&report));
        for one in &judged {
            if one.verdict != one.pair.label.level() {
                println!(
                    "{} ({}): labelled {:?}, found {:?}",
                    one.pair.id,
                    one.pair.kind.as_deref().unwrap_or("-"),
                    one.pair.label,
                    one.verdict
                );
            }
        }
    }
    report
}

#[test]
fn the_held_out_part_measures_the_checker() {
    let report = measured(
        "held-out",
        include_str!("../../eval/citations/heldout.jsonl"),
    );
    // Measured once (2026-11-27, the third held-out part, after the checker's last
    // change): 206 pairs, accuracy 0.456, not checked 0.01, P(supported) 0.846,
    // P(unsupported) 0.763, one correct cross-lingual citation called unsupported. The
    // targets for P(unsupported) (0.85) and for accusations (none) are not reached yet:
    // these floors hold what was measured.
    let t = report.total;
    assert!(t.pairs >= 200, "{} pairs", t.pairs);
    assert!(
        t.cross_lingual_accused <= 1,
        "{} correct cross-lingual citations called unsupported",
        t.cross_lingual_accused
    );
    let share = t.not_checked_share().unwrap_or(1.0);
    assert!(share <= 0.4, "not checked: {share:.2}");
    let unsupported = t.precision(Label::Unsupported).unwrap_or(0.0);
    let supported = t.precision(Label::Supported).unwrap_or(0.0);
    assert!(unsupported >= 0.75, "P(unsupported) {unsupported:.2}");
    assert!(supported >= 0.8, "P(supported) {supported:.2}");
    assert!(t.accuracy().unwrap_or(0.0) >= 0.45);
}

#[test]
fn the_tuning_part_and_the_first_set_stay_where_they_were_tuned() {
    // Measured (2026-11-27): accuracy 0.531, P(supported) 0.851, P(unsupported) 0.948 over
    // 685 pairs (the thresholds and rules were chosen here, `scripts/tune-citations.py`;
    // its last 200 pairs, in the third held-out part's style, cost P(supported) six
    // points); the first set's accuracy 0.42 (it has no "not checked" label, and its
    // partial pairs include contradictions).
    let tune = measured("tuning", include_str!("../../eval/citations/tune.jsonl"));
    assert!(tune.total.pairs >= 680, "{} pairs", tune.total.pairs);
    assert_eq!(tune.total.cross_lingual_accused, 0);
    assert!(tune.total.precision(Label::Supported).unwrap_or(0.0) >= 0.84);
    assert!(tune.total.precision(Label::Unsupported).unwrap_or(0.0) >= 0.93);
    let first = measured("first set", include_str!("data/alignment.jsonl"));
    assert!(first.total.pairs >= 60);
    for (report, floor) in [(&tune, 0.52), (&first, 0.4)] {
        let accuracy = report.total.accuracy().unwrap_or(0.0);
        assert!(accuracy >= floor, "accuracy {accuracy:.2}");
    }
}
