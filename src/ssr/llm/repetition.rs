//! Runaway generation: small models at low temperature fall into loops and write the same
//! sentence (or character) until `max_tokens`. [`RepetitionGuard`] watches the end of a
//! growing text and says where to cut once it ends in a loop.
//!
//! The rule: the text ends with some unit of 1 to [`MAX_UNIT`] characters written at least
//! [`MIN_REPEATS`] times in a row, together at least [`MIN_SPAN`] characters long. A
//! numbered list (`1. x`, `2. x`) is not a loop (its numbers differ); a Markdown table row
//! or a rule is far shorter than [`MIN_SPAN`]. The cut keeps the first unit.

/// The longest repeating unit looked for, in characters.
pub const MAX_UNIT: usize = 300;
/// Times in a row a unit must appear.
pub const MIN_REPEATS: usize = 3;
/// Characters the repeats must cover together.
pub const MIN_SPAN: usize = 200;
/// How much of the end of the text is examined.
const WINDOW: usize = MAX_UNIT * 4;
/// The text is examined again once it has grown by this many bytes.
const EVERY: usize = 24;

#[derive(Debug, Default)]
pub struct RepetitionGuard {
    checked: usize,
}

impl RepetitionGuard {
    /// `Some(len)`: `text` ends in a loop; keep its first `len` bytes.
    pub fn check(&mut self, text: &str) -> Option<usize> {
        if text.len() < self.checked + EVERY {
            return None;
        }
        self.checked = text.len();
        repeated_tail(text)
    }
}

/// Where a looping tail's repeats begin (a byte index into `text`), if it ends in one.
pub fn repeated_tail(text: &str) -> Option<usize> {
    let start = text
        .char_indices()
        .rev()
        .nth(WINDOW - 1)
        .map_or(0, |(at, _)| at);
    let window: Vec<(usize, char)> = text[start..]
        .char_indices()
        .map(|(at, c)| (start + at, c))
        .collect();
    let n = window.len();
    for unit in 1..=MAX_UNIT.min(n / MIN_REPEATS) {
        // How far back from the end the text equals itself shifted by `unit`.
        let run = (0..n - unit)
            .take_while(|k| window[n - 1 - k].1 == window[n - 1 - k - unit].1)
            .count();
        let span = run + unit;
        if span >= MIN_SPAN && span >= unit * MIN_REPEATS {
            // The first repeat ends one unit after the loop begins.
            let first_end = n - span + unit;
            return Some(window.get(first_end).map_or(text.len(), |(at, _)| *at));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sentence_written_over_and_over_is_cut_after_its_first_time() {
        let intro = "Tokio is an asynchronous runtime for Rust [1]. ";
        let unit = "It provides a scheduler and timers. ";
        let looping = format!("{intro}{}", unit.repeat(8));
        let keep = repeated_tail(&looping).expect("a loop");
        // The loop may be found to begin a character or two early (". " ends both the
        // intro and the unit); what stays is the intro and the unit once.
        assert!(looping[..keep].starts_with(&format!("{intro}It provides a scheduler and timers")));
        assert!(keep <= intro.len() + unit.len());
        // Chinese, a character at a time, through the guard as a stream would feed it.
        let mut guard = RepetitionGuard::default();
        let mut text = String::from("答案如下：");
        let mut cut = None;
        for _ in 0..400 {
            text.push('啊');
            if let Some(keep) = guard.check(&text) {
                cut = Some(keep);
                break;
            }
        }
        let keep = cut.expect("a one-character loop is cut");
        assert_eq!(&text[..keep], "答案如下：啊");
    }

    #[test]
    fn ordinary_answers_are_left_alone() {
        let list: String = (1..=40)
            .map(|i| format!("{i}. The same item text [{i}].\n"))
            .collect();
        assert_eq!(repeated_tail(&list), None);
        let table = format!("| a | b |\n|---|---|\n{}", "| x | y |\n".repeat(3));
        assert_eq!(repeated_tail(&table), None);
        let prose = "Rust's ownership rules make data races impossible at compile time [1]. \
            Tokio builds on async/await [2]. Its scheduler steals work between threads [3].";
        assert_eq!(repeated_tail(prose), None);
        // Two repeats are not yet a loop.
        let twice =
            "A long sentence that a model might well say twice in a row, once for emphasis. "
                .repeat(2);
        assert_eq!(repeated_tail(&twice), None);
    }
}
