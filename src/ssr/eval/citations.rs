//! `cited check-citations`: the citation checker measured on a labelled set, like a
//! benchmark. Each line of the set is a sentence of an answer, the source it cites and what
//! a person judged (`supported`, `partial`, `unsupported`); the checker's verdict is one of
//! those or `not_checked`. The report gives each level's precision and recall, the
//! accuracy, the share left unchecked, the same by `kind`, and how many correct
//! cross-lingual citations were called unsupported. The format is in `docs/eval.md`.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Deserialize;

use crate::model::Support;
use crate::ssr::align::{align, Features};

/// One labelled pair of the set.
#[derive(Debug, Clone, Deserialize)]
pub struct Pair {
    pub id: String,
    pub sentence: String,
    pub source: PairSource,
    pub label: Label,
    /// What the pair tests (`cross-zh-en`, `trap-number`, …); free text.
    #[serde(default)]
    pub kind: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct PairSource {
    #[serde(default)]
    pub title: String,
    #[serde(default)]
    pub url: String,
    pub text: String,
}

/// What a person judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Label {
    Supported,
    Partial,
    Unsupported,
}

impl Label {
    /// The checker's level that agrees with this label.
    pub fn level(self) -> Support {
        match self {
            Label::Supported => Support::Supported,
            Label::Partial => Support::Partial,
            Label::Unsupported => Support::NotFound,
        }
    }
}

/// The verdict's name in the report and in `--json` lines.
pub fn verdict_name(support: Support) -> &'static str {
    match support {
        Support::Supported => "supported",
        Support::Partial => "partial",
        Support::NotFound => "unsupported",
        Support::NotChecked => "not_checked",
    }
}

/// Reads a set: one JSON object per line; blank lines are skipped. An unreadable line is
/// an error that names it.
pub fn read_set(text: &str) -> Result<Vec<Pair>, String> {
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(index, line)| {
            serde_json::from_str::<Pair>(line)
                .map_err(|error| format!("line {}: {error}", index + 1))
        })
        .collect()
}

/// One pair judged.
#[derive(Debug, Clone)]
pub struct Judged {
    pub pair: Pair,
    pub verdict: Support,
    /// What the offline checker decided from.
    pub features: Option<Features>,
    /// The passage the offline checker compared the sentence with.
    pub passage: String,
}

/// The offline checker's verdict on every pair.
pub fn judge_lexical(pairs: &[Pair]) -> Vec<Judged> {
    pairs
        .iter()
        .map(|pair| {
            let aligned = align(&pair.sentence, &pair.source.text);
            Judged {
                verdict: aligned.support,
                features: Some(aligned.features),
                passage: aligned.passage,
                pair: pair.clone(),
            }
        })
        .collect()
}

/// Pairs judged by the model at once.
pub const BATCH: usize = 8;

/// The model's verdicts (`--check model`), in batches of [`BATCH`] the way an answer's
/// citations are judged: the offline checker's best passage shown with its surroundings, a
/// verdict kept only when its quote is in the source; the offline verdict where the model
/// gives none. Also returns how many pairs the model judged.
pub async fn judge_model(
    llm: &dyn crate::ssr::llm::ChatModel,
    limits: &crate::ssr::llm::ModelLimits,
    pairs: &[Pair],
) -> (Vec<Judged>, usize) {
    use crate::ssr::align::judge::{judge, Case};
    let mut judged = judge_lexical(pairs);
    let mut by_model = 0;
    for (batch, start) in pairs.chunks(BATCH).zip((0..).step_by(BATCH)) {
        let cases: Vec<Case> = batch
            .iter()
            .map(|pair| {
                let found = align(&pair.sentence, &pair.source.text);
                Case {
                    sentence: pair.sentence.clone(),
                    source: pair.source.text.clone(),
                    passage: (found.offset, found.offset + found.passage.len()),
                }
            })
            .collect();
        let Some(verdicts) = judge(llm, limits, &cases, limits.call_deadline, None).await else {
            continue;
        };
        for (i, verdict) in verdicts.verdicts.into_iter().enumerate() {
            if let Some(verdict) = verdict {
                judged[start + i].verdict = verdict.support;
                by_model += 1;
            }
        }
    }
    (judged, by_model)
}

/// `--explain`: each pair's label, verdict and the features the verdict came from, one
/// JSON object per line.
pub fn explain_lines(judged: &[Judged]) -> Vec<String> {
    judged
        .iter()
        .map(|one| {
            serde_json::json!({
                "id": one.pair.id,
                "kind": one.pair.kind,
                "label": verdict_name(one.pair.label.level()),
                "verdict": verdict_name(one.verdict),
                "features": one.features,
                "passage": one.passage,
            })
            .to_string()
        })
        .collect()
}

/// Counts over a group of judged pairs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    pub pairs: usize,
    pub correct: usize,
    pub not_checked: usize,
    /// `[label][verdict]`: labels supported, partial, unsupported; verdicts the same, then
    /// not checked.
    pub confusion: [[usize; 4]; 3],
    /// Correct citations (labelled supported or partial) in another language than their
    /// source that were called unsupported.
    pub cross_lingual_accused: usize,
}

const LABELS: [Label; 3] = [Label::Supported, Label::Partial, Label::Unsupported];
const VERDICTS: [Support; 4] = [
    Support::Supported,
    Support::Partial,
    Support::NotFound,
    Support::NotChecked,
];

fn verdict_index(support: Support) -> usize {
    VERDICTS.iter().position(|v| *v == support).unwrap_or(3)
}

/// Whether a pair's sentence and source are in different scripts (Chinese against Latin).
pub fn cross_lingual(pair: &Pair) -> bool {
    crate::ssr::align::han_text(&pair.sentence) != crate::ssr::align::han_text(&pair.source.text)
}

impl Tally {
    pub fn add(&mut self, judged: &Judged) {
        let label = LABELS
            .iter()
            .position(|l| *l == judged.pair.label)
            .unwrap_or(0);
        let verdict = verdict_index(judged.verdict);
        self.pairs += 1;
        self.confusion[label][verdict] += 1;
        if judged.verdict == judged.pair.label.level() {
            self.correct += 1;
        }
        if judged.verdict == Support::NotChecked {
            self.not_checked += 1;
        }
        if judged.pair.label != Label::Unsupported
            && judged.verdict == Support::NotFound
            && cross_lingual(&judged.pair)
        {
            self.cross_lingual_accused += 1;
        }
    }

    /// Of the pairs given `level`, the share labelled so (`None`: the level was never given).
    pub fn precision(&self, level: Label) -> Option<f64> {
        let column = verdict_index(level.level());
        let given: usize = (0..3).map(|l| self.confusion[l][column]).sum();
        let index = LABELS.iter().position(|l| *l == level).unwrap_or(0);
        ratio(self.confusion[index][column], given)
    }

    /// Of the pairs labelled `level`, the share given it.
    pub fn recall(&self, level: Label) -> Option<f64> {
        let index = LABELS.iter().position(|l| *l == level).unwrap_or(0);
        let column = verdict_index(level.level());
        ratio(
            self.confusion[index][column],
            self.confusion[index].iter().sum(),
        )
    }

    pub fn accuracy(&self) -> Option<f64> {
        ratio(self.correct, self.pairs)
    }

    /// Accuracy over the pairs given a verdict.
    pub fn checked_accuracy(&self) -> Option<f64> {
        ratio(self.correct, self.pairs - self.not_checked)
    }

    pub fn not_checked_share(&self) -> Option<f64> {
        ratio(self.not_checked, self.pairs)
    }
}

fn ratio(part: usize, whole: usize) -> Option<f64> {
    (whole > 0).then(|| part as f64 / whole as f64)
}

/// The totals and the same by kind.
#[derive(Debug, Clone, Default)]
pub struct Report {
    pub total: Tally,
    pub by_kind: BTreeMap<String, Tally>,
}

pub fn report(judged: &[Judged]) -> Report {
    let mut report = Report::default();
    for one in judged {
        report.total.add(one);
        let kind = one.pair.kind.clone().unwrap_or_else(|| "-".to_string());
        report.by_kind.entry(kind).or_default().add(one);
    }
    report
}

fn percent(value: Option<f64>) -> String {
    value.map_or("–".to_string(), |v| format!("{:.1} %", v * 100.0))
}

/// The report as the terminal shows it.
pub fn render(report: &Report) -> String {
    let t = &report.total;
    let mut out = String::new();
    let _ = writeln!(out, "pairs: {}", t.pairs);
    let _ = writeln!(
        out,
        "accuracy: {} (over the pairs given a verdict: {})",
        percent(t.accuracy()),
        percent(t.checked_accuracy())
    );
    let _ = writeln!(
        out,
        "not checked: {} ({} pairs)",
        percent(t.not_checked_share()),
        t.not_checked
    );
    let _ = writeln!(
        out,
        "correct cross-lingual citations called unsupported: {}",
        t.cross_lingual_accused
    );
    let _ = writeln!(out, "\nlevel        precision  recall");
    for level in LABELS {
        let _ = writeln!(
            out,
            "{:<12} {:>9}  {:>6}",
            verdict_name(level.level()),
            percent(t.precision(level)),
            percent(t.recall(level))
        );
    }
    let _ = writeln!(
        out,
        "\nkind               pairs  accuracy  not checked  P(supported)  P(unsupported)"
    );
    for (kind, tally) in &report.by_kind {
        let _ = writeln!(
            out,
            "{:<18} {:>5}  {:>8}  {:>11}  {:>12}  {:>14}",
            kind,
            tally.pairs,
            percent(tally.accuracy()),
            percent(tally.not_checked_share()),
            percent(tally.precision(Label::Supported)),
            percent(tally.precision(Label::Unsupported)),
        );
    }
    out
}

/// `--json`: one line per pair, then one of totals.
pub fn json_lines(judged: &[Judged], report: &Report) -> Vec<String> {
    let label_name = |label: Label| verdict_name(label.level());
    let mut lines: Vec<String> = judged
        .iter()
        .map(|one| {
            serde_json::json!({
                "id": one.pair.id,
                "label": label_name(one.pair.label),
                "verdict": verdict_name(one.verdict),
                "kind": one.pair.kind,
            })
            .to_string()
        })
        .collect();
    let t = &report.total;
    let levels: serde_json::Map<String, serde_json::Value> = LABELS
        .iter()
        .map(|level| {
            (
                label_name(*level).to_string(),
                serde_json::json!({
                    "precision": t.precision(*level),
                    "recall": t.recall(*level),
                }),
            )
        })
        .collect();
    lines.push(
        serde_json::json!({
            "totals": {
                "pairs": t.pairs,
                "accuracy": t.accuracy(),
                "checked_accuracy": t.checked_accuracy(),
                "not_checked": t.not_checked_share(),
                "cross_lingual_accused": t.cross_lingual_accused,
                "levels": levels,
            }
        })
        .to_string(),
    );
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair(id: &str, label: Label, kind: &str) -> Pair {
        Pair {
            id: id.to_string(),
            sentence: "s".to_string(),
            source: PairSource {
                title: String::new(),
                url: String::new(),
                text: "t".to_string(),
            },
            label,
            kind: Some(kind.to_string()),
        }
    }

    #[test]
    fn a_tally_counts_precision_recall_and_unchecked() {
        let judged = vec![
            Judged {
                pair: pair("1", Label::Supported, "a"),
                verdict: Support::Supported,
                features: None,
                passage: String::new(),
            },
            Judged {
                pair: pair("2", Label::Unsupported, "a"),
                verdict: Support::Supported,
                features: None,
                passage: String::new(),
            },
            Judged {
                pair: pair("3", Label::Partial, "b"),
                verdict: Support::NotChecked,
                features: None,
                passage: String::new(),
            },
            Judged {
                pair: pair("4", Label::Unsupported, "b"),
                verdict: Support::NotFound,
                features: None,
                passage: String::new(),
            },
        ];
        let report = report(&judged);
        let t = report.total;
        assert_eq!((t.pairs, t.correct, t.not_checked), (4, 2, 1));
        assert_eq!(t.precision(Label::Supported), Some(0.5));
        assert_eq!(t.recall(Label::Unsupported), Some(0.5));
        assert_eq!(t.precision(Label::Unsupported), Some(1.0));
        assert_eq!(t.precision(Label::Partial), None);
        assert_eq!(t.not_checked_share(), Some(0.25));
        assert_eq!(report.by_kind["b"].pairs, 2);
        let lines = json_lines(&judged, &report);
        assert_eq!(lines.len(), 5);
        assert!(
            lines[2].contains(r#""verdict":"not_checked""#),
            "{}",
            lines[2]
        );
        assert!(lines[4].starts_with(r#"{"totals":"#), "{}", lines[4]);
    }

    #[test]
    fn an_unreadable_line_is_named() {
        let error = read_set("\n{\"id\": 1}\n").unwrap_err();
        assert!(error.starts_with("line 2:"), "{error}");
    }
}
