//! Finding citation markers in a run of Markdown *text* (the renderer never hands us code,
//! link text or raw HTML).
//!
//! Accepted forms: `[3]`, `[3][5]`, `[3, 5]`, `[3，5]`, `[3-5]`, `【3】`, `[citation:3]`,
//! `[cite:3]`, `[^3]`. A hand-written scanner rather than a regex: the context rules need a
//! look at the neighbouring bracket groups, and it is faster.
//!
//! Not markers: `[0]`, numbers with leading zeros (`[007]`), numbers past [`MAX_NUMBER`],
//! reversed or huge ranges, anything followed by `(` (a link `[3](url)`), a group that is
//! the second half of `[text][ref]`, or the first half of `[3][ref]`.

use std::ops::Range;

/// Larger numbers are never citations: no session registers a million sources.
pub const MAX_NUMBER: u32 = 999_999;

/// A range such as `[3-5]` may span at most this many numbers.
pub const MAX_RANGE: u32 = 50;

/// One marker group and the numbers it names, in the order written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Marker {
    /// Byte range of the whole group in the scanned text, brackets included.
    pub range: Range<usize>,
    pub numbers: Vec<u32>,
}

/// `text` with every marker group removed (the text around them kept as it is).
pub fn strip(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut pos = 0;
    for marker in scan(text) {
        out.push_str(&text[pos..marker.range.start]);
        pos = marker.range.end;
    }
    out.push_str(&text[pos..]);
    out
}

/// Markdown `text` with each marker that names a source turned into links to its sources
/// (`[1, 3]` becomes `[[1]](url1)[[3]](url3)`, seed 003), so the text keeps its citations
/// wherever it is pasted. Markers in code (fenced blocks, inline code) stay as written; so
/// do numbers without a source and sources that are not web pages (a file, the knowledge
/// base: their addresses mean nothing elsewhere). `url(n)`: source `n`'s address.
pub fn linked<'a>(text: &str, url: impl Fn(u32) -> Option<&'a str>) -> String {
    let web = |n: u32| url(n).filter(|u| crate::citation::urls::is_web_link(u));
    let mut out = String::with_capacity(text.len() + text.len() / 4);
    // The open fence: its character and its length (a closing fence is at least as long).
    let mut fence: Option<(char, usize)> = None;
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim_start_matches(' ');
        let indent = line.len() - trimmed.len();
        let opens = ['`', '~'].into_iter().find_map(|c| {
            let run = trimmed.chars().take_while(|t| *t == c).count();
            (run >= 3).then_some((c, run))
        });
        match (fence, opens) {
            (Some((open, length)), Some((mark, run)))
                if indent <= 3
                    && mark == open
                    && run >= length
                    && trimmed.trim_end().chars().all(|t| t == mark) =>
            {
                fence = None;
                out.push_str(line);
                continue;
            }
            (Some(_), _) => {
                out.push_str(line);
                continue;
            }
            (None, Some(mark)) if indent <= 3 => {
                fence = Some(mark);
                out.push_str(line);
                continue;
            }
            _ => {}
        }
        // Outside inline code: between backtick runs.
        let mut in_code = false;
        for (i, part) in line.split('`').enumerate() {
            if i > 0 {
                out.push('`');
            }
            if in_code {
                out.push_str(part);
            } else {
                let mut pos = 0;
                for marker in scan(part) {
                    let (start, end) = (marker.range.start, marker.range.end);
                    // Already a link: `[[1]](url)`.
                    let linked = part[..start].ends_with('[') && part[end..].starts_with("](");
                    if linked || !marker.numbers.iter().all(|n| web(*n).is_some()) {
                        continue;
                    }
                    out.push_str(&part[pos..marker.range.start]);
                    for n in &marker.numbers {
                        if let Some(u) = web(*n) {
                            out.push_str(&format!("[[{n}]]({u})"));
                        }
                    }
                    pos = marker.range.end;
                }
                out.push_str(&part[pos..]);
            }
            in_code = !in_code;
        }
    }
    out
}

/// All marker groups in `text`, in order.
pub fn scan(text: &str) -> Vec<Marker> {
    let bytes = text.as_bytes();
    let mut markers: Vec<Marker> = Vec::new();
    let mut pos = 0;
    while pos < bytes.len() {
        // A byte scan: `[` is 0x5B and `【` is E3 80 90, so look for 0x5B or 0xE3 and check.
        let Some(offset) = memchr::memchr2(b'[', 0xE3, &bytes[pos..]) else {
            break;
        };
        let start = pos + offset;
        if bytes[start] == 0xE3 && !text[start..].starts_with('【') {
            pos = start + 1;
            continue;
        }
        let Some(group) = parse_group(text, start) else {
            pos = start + open_len(bytes[start]);
            continue;
        };
        pos = group.end;
        // `[text][3]`: the second half of a reference-style link, unless the first half
        // was itself a marker (`[3][5]`).
        if start > 0 && bytes[start - 1] == b']' {
            let follows_marker = markers.last().is_some_and(|last| last.range.end == start);
            if !follows_marker {
                continue;
            }
        }
        let rest = &text[group.end..];
        // `[3](url)`: a link, even when the Markdown parser did not accept it as one.
        if rest.starts_with('(') {
            continue;
        }
        // `[3][ref]`: the first half of a reference-style link.
        if rest.starts_with('[') && parse_group(text, group.end).is_none() {
            continue;
        }
        markers.push(Marker {
            range: start..group.end,
            numbers: group.numbers,
        });
    }
    markers
}

/// Byte length of the opening bracket at this position (`[` is 1, `【` is 3).
fn open_len(first_byte: u8) -> usize {
    if first_byte == b'[' {
        1
    } else {
        '【'.len_utf8()
    }
}

struct Group {
    end: usize,
    numbers: Vec<u32>,
}

/// Parses one bracket group starting at `start` (which holds `[` or `【`).
fn parse_group(text: &str, start: usize) -> Option<Group> {
    let fullwidth = text.as_bytes()[start] != b'[';
    let close = if fullwidth { '】' } else { ']' };
    let mut cursor = Cursor {
        text,
        pos: start + open_len(text.as_bytes()[start]),
    };
    if !fullwidth {
        cursor.eat_prefix();
    }
    let mut numbers = Vec::new();
    loop {
        cursor.skip_spaces();
        let first = cursor.number()?;
        cursor.skip_spaces();
        if cursor.eat_any(&['-', '–', '—', '~']) {
            cursor.skip_spaces();
            let last = cursor.number()?;
            if last < first || last - first >= MAX_RANGE {
                return None;
            }
            numbers.extend(first..=last);
        } else {
            numbers.push(first);
        }
        cursor.skip_spaces();
        if cursor.eat_any(&[close]) {
            return Some(Group {
                end: cursor.pos,
                numbers,
            });
        }
        if !cursor.eat_any(&[',', '，', '、', ';', '；']) {
            return None;
        }
        // `[3, citation:5]` and `[^3, ^5]` are as common as `[3, 5]` in model output.
        if !fullwidth {
            cursor.skip_spaces();
            cursor.eat_prefix();
        }
    }
}

struct Cursor<'a> {
    text: &'a str,
    pos: usize,
}

impl Cursor<'_> {
    fn rest(&self) -> &str {
        &self.text[self.pos..]
    }

    fn skip_spaces(&mut self) {
        let rest = self.rest();
        self.pos += rest.len() - rest.trim_start_matches([' ', '\u{3000}']).len();
    }

    fn eat_any(&mut self, chars: &[char]) -> bool {
        match self.rest().chars().next() {
            Some(c) if chars.contains(&c) => {
                self.pos += c.len_utf8();
                true
            }
            _ => false,
        }
    }

    /// `^`, `citation:` or `cite:` (any case, optional space after the colon).
    fn eat_prefix(&mut self) {
        let rest = self.rest();
        if rest.starts_with('^') {
            self.pos += 1;
            return;
        }
        for prefix in ["citation:", "cite:"] {
            if rest
                .get(..prefix.len())
                .is_some_and(|head| head.eq_ignore_ascii_case(prefix))
            {
                self.pos += prefix.len();
                self.skip_spaces();
                return;
            }
        }
    }

    /// A number from 1 to [`MAX_NUMBER`] without leading zeros.
    fn number(&mut self) -> Option<u32> {
        let rest = self.rest();
        let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        if digits == 0 || digits > 6 || rest.starts_with('0') {
            return None;
        }
        let value: u32 = rest[..digits].parse().ok()?;
        self.pos += digits;
        (1..=MAX_NUMBER).contains(&value).then_some(value)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn markers_become_links_outside_code_and_only_to_web_pages() {
        let url = |n: u32| match n {
            1 => Some("https://docs.example.org/tokio/"),
            2 => Some("https://blog.example.com/a_(b)"),
            3 => Some("/knowledge/~files/c/f#p2"),
            _ => None,
        };
        let text = "Tokio is a runtime [1]. Two sources [1, 2]【2】.\n\
                    In code `[1]` stays, a file [3] stays, an unknown [9] stays.\n\
                    ```\nlet x = a[1];\n```\n- item [2]\n";
        assert_eq!(
            super::linked(text, url),
            "Tokio is a runtime [[1]](https://docs.example.org/tokio/). Two sources \
             [[1]](https://docs.example.org/tokio/)[[2]](https://blog.example.com/a_(b))\
             [[2]](https://blog.example.com/a_(b)).\n\
             In code `[1]` stays, a file [3] stays, an unknown [9] stays.\n\
             ```\nlet x = a[1];\n```\n- item [[2]](https://blog.example.com/a_(b))\n"
        );
        // The links are not markers any more: linking twice changes nothing.
        let once = super::linked(text, url);
        assert_eq!(super::linked(&once, url), once);
        // A longer fence holding a shorter one is closed only by a fence as long.
        let text = "````\n```\nlet y = b[1];\n````\nafter [1]\n";
        assert_eq!(
            super::linked(text, url),
            "````\n```\nlet y = b[1];\n````\nafter [[1]](https://docs.example.org/tokio/)\n"
        );
    }

    use super::*;

    /// Shows each marker as `«text»=numbers`, the rest as is.
    #[track_caller]
    fn check(text: &str, expect: &str) {
        let mut shown = String::new();
        let mut pos = 0;
        for marker in scan(text) {
            shown.push_str(&text[pos..marker.range.start]);
            let numbers: Vec<String> = marker.numbers.iter().map(u32::to_string).collect();
            shown.push_str(&format!(
                "«{}»={}",
                &text[marker.range.clone()],
                numbers.join(",")
            ));
            pos = marker.range.end;
        }
        shown.push_str(&text[pos..]);
        assert_eq!(shown, expect, "input: {text:?}");
    }

    #[test]
    fn plain() {
        check("A [3].", "A «[3]»=3.");
    }
    #[test]
    fn adjacent() {
        check("A [3][5].", "A «[3]»=3«[5]»=5.");
    }
    #[test]
    fn comma_list() {
        check("A [3, 5].", "A «[3, 5]»=3,5.");
    }
    #[test]
    fn comma_no_space() {
        check("A [3,5]", "A «[3,5]»=3,5");
    }
    #[test]
    fn fullwidth_comma() {
        check("甲[3，5]。", "甲«[3，5]»=3,5。");
    }
    #[test]
    fn ideographic_comma() {
        check("甲[3、5]", "甲«[3、5]»=3,5");
    }
    #[test]
    fn range() {
        check("A [3-5]", "A «[3-5]»=3,4,5");
    }
    #[test]
    fn en_dash_range() {
        check("A [3–5]", "A «[3–5]»=3,4,5");
    }
    #[test]
    fn fullwidth_brackets() {
        check("甲【3】乙", "甲«【3】»=3乙");
    }
    #[test]
    fn fullwidth_list() {
        check("甲【3，5】", "甲«【3，5】»=3,5");
    }
    #[test]
    fn citation_prefix() {
        check("A [citation:3]", "A «[citation:3]»=3");
    }
    #[test]
    fn citation_prefix_list() {
        check(
            "A [citation:3, citation:5]",
            "A «[citation:3, citation:5]»=3,5",
        );
    }
    #[test]
    fn cite_prefix() {
        check("A [cite:3] [Cite: 4]", "A «[cite:3]»=3 «[Cite: 4]»=4");
    }
    #[test]
    fn footnote_style() {
        check("A[^3] B[^4][^5]", "A«[^3]»=3 B«[^4]»=4«[^5]»=5");
    }
    #[test]
    fn mixed_list() {
        check("A [1, 3-4, 7]", "A «[1, 3-4, 7]»=1,3,4,7");
    }
    #[test]
    fn spaces_inside() {
        check("A [ 2 ]", "A «[ 2 ]»=2");
    }
    #[test]
    fn at_start_and_end() {
        check("[1]x[2]", "«[1]»=1x«[2]»=2");
    }
    #[test]
    fn zero_is_not_a_citation() {
        check("A [0] B", "A [0] B");
    }
    #[test]
    fn leading_zeros_are_not_citations() {
        check("A [007] B [03]", "A [007] B [03]");
    }
    #[test]
    fn huge_number_is_text() {
        check("A [99999999999]", "A [99999999999]");
    }
    #[test]
    fn max_number() {
        check("[999999] [1000000]", "«[999999]»=999999 [1000000]");
    }
    #[test]
    fn reversed_range_is_text() {
        check("A [5-3]", "A [5-3]");
    }
    #[test]
    fn huge_range_is_text() {
        check("A [1-1000]", "A [1-1000]");
    }
    #[test]
    fn words_are_not_citations() {
        check("A [abc] [3a] [a3] [3.5]", "A [abc] [3a] [a3] [3.5]");
    }
    #[test]
    fn link_is_not_a_citation() {
        check("A [3](https://x.org)", "A [3](https://x.org)");
    }
    #[test]
    fn reference_link_second_half() {
        check("[text][3]", "[text][3]");
    }
    #[test]
    fn reference_link_first_half() {
        check("[3][ref]", "[3][ref]");
    }
    #[test]
    fn nested_brackets() {
        check("[[3]]", "[«[3]»=3]");
    }
    #[test]
    fn unbalanced_open() {
        check("A [3 B", "A [3 B");
    }
    #[test]
    fn unbalanced_close() {
        check("A 3] [4]", "A 3] «[4]»=4");
    }
    #[test]
    fn mismatched_brackets() {
        check("A [3】 【4]", "A [3】 【4]");
    }
    #[test]
    fn unfinished_marker_while_streaming() {
        check("A [1", "A [1");
    }
    #[test]
    fn unfinished_list_while_streaming() {
        check("A [1, 2", "A [1, 2");
    }
    #[test]
    fn trailing_separator() {
        check("A [1,]", "A [1,]");
    }
    #[test]
    fn emoji_around() {
        check("🎉[2]👍🏽", "🎉«[2]»=2👍🏽");
    }
    #[test]
    fn cjk_punctuation_after() {
        check("是的【1】，对[2]。", "是的«【1】»=1，对«[2]»=2。");
    }
    #[test]
    fn lone_brackets() {
        check("[ ] 【】 [] [", "[ ] 【】 [] [");
    }
}
