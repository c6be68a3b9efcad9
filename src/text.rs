//! Text utilities shared by the server and the browser: pure functions on `str`, no IO.

/// True when the text contains Han (Chinese) characters.
pub fn has_han(text: &str) -> bool {
    text.chars().any(|c| {
        matches!(c as u32,
            0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF | 0x20000..=0x2A6DF | 0x2A700..=0x2EBEF | 0x30000..=0x3134F)
    })
}
