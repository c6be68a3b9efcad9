//! The citation checker (`ssr::align`) against the labelled sets, through the report
//! `cited check-citations` prints (`ssr::eval::citations`):
//! - `eval/citations/tune.jsonl` and `heldout.jsonl`: 3,491 pairs written for this project
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
    // Measured (2026-12-01, the sixteenth held-out part, `cited check-citations
    // eval/citations/heldout.jsonl`, once before and once after the change it judged,
    // "places exchanged between two dates, a verb's -s and -d forms, and across languages
    // only a number accuses"): 200 pairs, accuracy 0.410, not checked 0.005, one
    // "supported" given and it was wrong (0/1; before: the same), P(unsupported) 0.900
    // (27/30; before 0.903, 28/31), no correct cross-lingual citation called unsupported
    // (before: none). The targets are P(supported) 0.80, P(unsupported) 0.85, none
    // accused, at most 0.40 not checked: all but the first hold on this part.
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
    // "Supported" wrongly given (to a pair labelled partial or unsupported): one measured.
    let false_supported = t.confusion[1][0] + t.confusion[2][0];
    assert!(
        false_supported <= 1,
        "{false_supported} false \"supported\""
    );
    assert!(t.accuracy().unwrap_or(0.0) >= 0.39);
}

#[test]
fn the_tuning_part_and_the_first_set_stay_where_they_were_tuned() {
    // Measured (2026-12-01): accuracy 0.420, P(supported) 0.943 (99/105), P(unsupported)
    // 0.920 (390/424) over 3,291 pairs (the thresholds and rules were chosen here,
    // `scripts/tune-citations.py`); no correct cross-lingual citation called unsupported
    // (three before a reversal across languages stopped accusing, t-850 among them). Accuracy fell from 0.494 (on the first 1,291) as names bound to other
    // words stopped accusing and 支持 came to need the sentence's neighbouring words
    // together in the passage (and, in Chinese, every word): a verdict is given where the
    // evidence holds, so what it cannot prove is "partial". The first set's accuracy 0.40
    // (it has no "not checked" label, and its partial pairs include contradictions).
    let tune = measured("tuning", include_str!("../../eval/citations/tune.jsonl"));
    assert!(tune.total.pairs >= 3280, "{} pairs", tune.total.pairs);
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
