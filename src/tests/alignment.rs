//! The citation checker (`ssr::align`) against the labelled sets, through the report
//! `cited check-citations` prints (`ssr::eval::citations`):
//! - `eval/citations/tune.jsonl` and `heldout.jsonl`: 3,091 pairs written for this project
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
    // Measured (2026-11-27, the fourteenth held-out part, `cited check-citations
    // eval/citations/heldout.jsonl`, once before and once after the change it judged, "早
    // and 晚 compare, 'easier' is the opposite of 'harder', months are no names"): 200
    // pairs, accuracy 0.390, not checked 0.000, P(supported) 0.500 (1/2), P(unsupported)
    // 0.793 (23/29), one correct cross-lingual citation called unsupported; the same
    // verdicts before it. The targets are P(supported) 0.80, P(unsupported) 0.85, none
    // accused, at most 0.40 not checked: only the last holds on this part. Over the six
    // latest fresh parts (the ninth to the thirteenth, now t-1892…t-2891, and this one,
    // each measured with the checker it judged) P(supported) was 0.676 (23/34) and
    // P(unsupported) 0.872 (136/156), with one cross-lingual accusation in 1,200 pairs.
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
    assert!(supported >= 0.5, "P(supported) {supported:.2}");
    assert!(t.accuracy().unwrap_or(0.0) >= 0.37);
}

#[test]
fn the_tuning_part_and_the_first_set_stay_where_they_were_tuned() {
    // Measured (2026-11-27): accuracy 0.426, P(supported) 0.960 (95/99), P(unsupported)
    // 0.929 (355/382) over 2,891 pairs (the thresholds and rules were chosen here,
    // `scripts/tune-citations.py`); one correct cross-lingual citation called unsupported
    // (t-850, a partial sentence whose extra year and comparison words read as a
    // reversal). Accuracy fell from 0.494 (on the first 1,291) as names bound to other
    // words stopped accusing and 支持 came to need the sentence's neighbouring words
    // together in the passage (and, in Chinese, every word): a verdict is given where the
    // evidence holds, so what it cannot prove is "partial". The first set's accuracy 0.40
    // (it has no "not checked" label, and its partial pairs include contradictions).
    let tune = measured("tuning", include_str!("../../eval/citations/tune.jsonl"));
    assert!(tune.total.pairs >= 2880, "{} pairs", tune.total.pairs);
    assert!(tune.total.cross_lingual_accused <= 1);
    assert!(tune.total.precision(Label::Supported).unwrap_or(0.0) >= 0.9);
    assert!(tune.total.precision(Label::Unsupported).unwrap_or(0.0) >= 0.9);
    let first = measured("first set", include_str!("data/alignment.jsonl"));
    assert!(first.total.pairs >= 60);
    for (report, floor) in [(&tune, 0.42), (&first, 0.39)] {
        let accuracy = report.total.accuracy().unwrap_or(0.0);
        assert!(accuracy >= floor, "accuracy {accuracy:.2}");
    }
}
