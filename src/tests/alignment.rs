//! The citation checker (`ssr::align`) against the labelled sets, through the report
//! `cited check-citations` prints (`ssr::eval::citations`):
//! - `eval/citations/tune.jsonl` and `heldout.jsonl`: 4,091 pairs written for this project
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
    // Measured (2026-12-02, the twentieth held-out part, sealed before the change it
    // judged, `cited check-citations eval/citations/heldout.jsonl`, once before and once
    // after the change "across languages a date in full chooses the passage; a number
    // binds to what follows its `of`"): 200 pairs, accuracy 0.430, not checked 0.010,
    // P(supported) 0.833 (5/6), P(unsupported) 0.931 (27/29), no correct cross-lingual
    // citation called unsupported, the same before and after. The targets are
    // P(supported) 0.80, P(unsupported) 0.85, none accused, at most 0.40 not checked: all
    // four hold. (On the eighteenth and nineteenth parts, before this change, one
    // cross-lingual citation was accused; they are in the tuning part now.)
    let t = report.total;
    assert!(t.pairs >= 200, "{} pairs", t.pairs);
    assert_eq!(
        t.cross_lingual_accused, 0,
        "correct cross-lingual citations called unsupported"
    );
    let share = t.not_checked_share().unwrap_or(1.0);
    assert!(share <= 0.4, "not checked: {share:.2}");
    let unsupported = t.precision(Label::Unsupported).unwrap_or(0.0);
    assert!(unsupported >= 0.85, "P(unsupported) {unsupported:.2}");
    let supported = t.precision(Label::Supported).unwrap_or(0.0);
    assert!(supported >= 0.8, "P(supported) {supported:.2}");
    assert!(t.accuracy().unwrap_or(0.0) >= 0.42);
}

#[test]
fn the_tuning_part_and_the_first_set_stay_where_they_were_tuned() {
    // Measured (2026-12-02): accuracy 0.417, P(supported) 0.958 (115/120), P(unsupported)
    // 0.915 over 4,091 pairs (the thresholds and rules were chosen here,
    // `scripts/tune-citations.py`); no correct cross-lingual citation called unsupported
    // (three before a reversal across languages stopped accusing, t-850 among them; t-3951
    // before a date in full chose the passage across languages).
    // Accuracy fell from 0.494 (on the first 1,291) as names bound to other
    // words stopped accusing and 支持 came to need the sentence's neighbouring words
    // together in the passage (and, in Chinese, every word): a verdict is given where the
    // evidence holds, so what it cannot prove is "partial". The first set's accuracy 0.40
    // (it has no "not checked" label, and its partial pairs include contradictions).
    let tune = measured("tuning", include_str!("../../eval/citations/tune.jsonl"));
    assert!(tune.total.pairs >= 4090, "{} pairs", tune.total.pairs);
    assert_eq!(tune.total.cross_lingual_accused, 0);
    assert!(tune.total.precision(Label::Supported).unwrap_or(0.0) >= 0.9);
    assert!(tune.total.precision(Label::Unsupported).unwrap_or(0.0) >= 0.9);
    let first = measured("first set", include_str!("data/alignment.jsonl"));
    assert!(first.total.pairs >= 60);
    for (report, floor) in [(&tune, 0.415), (&first, 0.39)] {
        let accuracy = report.total.accuracy().unwrap_or(0.0);
        assert!(accuracy >= floor, "accuracy {accuracy:.2}");
    }
}
