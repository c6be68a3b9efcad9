//! A PDF page's text through lopdf, with every stream decoded within a size limit.
//!
//! lopdf reads a font's `/Encoding` before its `/ToUnicode` map, so a CID font (`Type0`,
//! `/Identity-H`: every CJK font Chromium, LibreOffice or Word embeds) comes out as bytes
//! read one at a time. Here a font with a `/ToUnicode` map is read through that map (codes
//! of the width its code space gives); any other font through lopdf's encoding. Text moves
//! to a new line where the page's text does (`T*`, `'`, `"`, `ET`, a `Td`/`TD` downwards).
//! Form XObjects are not followed, so a form that draws itself costs nothing.

use std::collections::{BTreeMap, HashMap};

use lopdf::content::Content;
use lopdf::{Document, Encoding, Object, ObjectId};

/// At most this many codes one `/ToUnicode` map gives text for (a real font maps a few
/// thousand; a hostile range could name four billion).
const MAX_MAPPED_CODES: usize = 1 << 16;

/// How the bytes a font shows become text.
enum Decoder<'a> {
    /// Its `/ToUnicode` map: codes of `width` bytes to text.
    Map {
        width: usize,
        codes: HashMap<u32, String>,
    },
    /// lopdf's reading of its encoding.
    Encoded(Encoding<'a>),
}

impl Decoder<'_> {
    fn push(&self, bytes: &[u8], text: &mut String) {
        match self {
            Decoder::Map { width, codes } => {
                for code in bytes.chunks(*width) {
                    let code = code.iter().fold(0u32, |n, b| n << 8 | u32::from(*b));
                    if let Some(mapped) = codes.get(&code) {
                        text.extend(mapped.chars().flat_map(unradical));
                    }
                }
            }
            Decoder::Encoded(encoding) => {
                // A string the encoding cannot read shows nothing.
                let _ = encoding.write_to_string(bytes, text);
            }
        }
    }
}

/// The text of the page `page`, each stream it decodes (its content, its fonts' maps)
/// within `limit` bytes: past it, lopdf's decompression error.
pub fn page_text(
    document: &Document,
    page: ObjectId,
    limit: usize,
) -> Result<String, lopdf::Error> {
    let mut decoders: BTreeMap<Vec<u8>, Decoder> = BTreeMap::new();
    for (name, font) in document.get_page_fonts(page)? {
        let decoder = match to_unicode(document, font, limit)? {
            Some(decoder) => decoder,
            None => Decoder::Encoded(font.get_font_encoding_with_limit(document, limit)?),
        };
        decoders.insert(name, decoder);
    }
    let content = Content::decode(&document.get_page_content_with_limit(page, limit)?)?;
    let mut text = String::new();
    let mut font: Option<&Decoder> = None;
    for operation in &content.operations {
        let operands = &operation.operands;
        match operation.operator.as_str() {
            "Tf" => {
                font = operands
                    .first()
                    .and_then(|name| name.as_name().ok())
                    .and_then(|name| decoders.get(name));
            }
            "Tj" | "TJ" => show(&mut text, font, operands),
            "'" => {
                new_line(&mut text);
                show(&mut text, font, operands);
            }
            "\"" => {
                new_line(&mut text);
                show(&mut text, font, operands.get(2..).unwrap_or_default());
            }
            "T*" | "ET" => new_line(&mut text),
            "Td" | "TD" => {
                let down = operands
                    .get(1)
                    .and_then(|y| y.as_float().ok())
                    .is_some_and(|y| y.abs() > 0.01);
                if down {
                    new_line(&mut text);
                }
            }
            _ => {}
        }
    }
    Ok(text)
}

/// A Kangxi radical as the ideograph it stands for: CJK fonts share one glyph between the
/// two, and their ToUnicode maps often name the radical ("⼈" U+2F08 for "人" U+4EBA),
/// which no one types or searches for.
fn unradical(c: char) -> impl Iterator<Item = char> {
    use unicode_normalization::UnicodeNormalization;
    let radical = ('\u{2E80}'..='\u{2FDF}').contains(&c);
    let one = [c];
    let chars: Vec<char> = if radical {
        one.iter().copied().nfkc().collect()
    } else {
        one.to_vec()
    };
    chars.into_iter()
}

fn new_line(text: &mut String) {
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
}

/// The strings of a `Tj`/`TJ`; in a `TJ`, a gap wider than a tenth of the font's size
/// (an adjustment under -100) is a space.
fn show(text: &mut String, font: Option<&Decoder>, operands: &[Object]) {
    let Some(font) = font else {
        return;
    };
    for operand in operands {
        match operand {
            Object::String(bytes, _) => font.push(bytes, text),
            Object::Array(items) => show(text, Some(font), items),
            Object::Integer(gap) if *gap < -100 => text.push(' '),
            Object::Real(gap) if *gap < -100.0 => text.push(' '),
            _ => {}
        }
    }
}

/// The font's `/ToUnicode` map, if it has one that reads.
fn to_unicode<'a>(
    document: &Document,
    font: &lopdf::Dictionary,
    limit: usize,
) -> Result<Option<Decoder<'a>>, lopdf::Error> {
    let Ok(stream) = font
        .get_deref(b"ToUnicode", document)
        .and_then(Object::as_stream)
    else {
        return Ok(None);
    };
    let cmap = stream.get_plain_content_with_limit(limit)?;
    Ok(parse_cmap(&String::from_utf8_lossy(&cmap)))
}

/// What a CMap's text is made of: hex strings, array brackets and words.
#[derive(Debug, PartialEq)]
enum Token {
    Hex(Vec<u8>),
    Open,
    Close,
    Word(String),
}

fn tokens(cmap: &str) -> Vec<Token> {
    let mut out = Vec::new();
    let mut chars = cmap.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '<' => {
                let mut digits = String::new();
                for d in chars.by_ref() {
                    if d == '>' {
                        break;
                    }
                    if d.is_ascii_hexdigit() {
                        digits.push(d);
                    }
                }
                if digits.len() % 2 == 1 {
                    digits.push('0');
                }
                let bytes = (0..digits.len())
                    .step_by(2)
                    .filter_map(|i| u8::from_str_radix(&digits[i..i + 2], 16).ok())
                    .collect();
                out.push(Token::Hex(bytes));
            }
            '[' => out.push(Token::Open),
            ']' => out.push(Token::Close),
            '%' => {
                for d in chars.by_ref() {
                    if d == '\n' || d == '\r' {
                        break;
                    }
                }
            }
            c if c.is_whitespace() => {}
            c => {
                let mut word = c.to_string();
                while let Some(&d) = chars.peek() {
                    if d.is_whitespace() || "<>[]%".contains(d) {
                        break;
                    }
                    word.push(d);
                    chars.next();
                }
                out.push(Token::Word(word));
            }
        }
    }
    out
}

/// UTF-16BE bytes as text (a lone surrogate becomes U+FFFD).
fn utf16(bytes: &[u8]) -> String {
    let units: Vec<u16> = bytes
        .chunks(2)
        .map(|pair| u16::from_be_bytes([pair[0], *pair.get(1).unwrap_or(&0)]))
        .collect();
    String::from_utf16_lossy(&units)
}

fn code(bytes: &[u8]) -> u32 {
    bytes
        .iter()
        .take(4)
        .fold(0u32, |n, b| n << 8 | u32::from(*b))
}

/// A `/ToUnicode` CMap's `bfchar` and `bfrange` entries (at most [`MAX_MAPPED_CODES`]),
/// its codes as wide as its code space says (else as its first entry). `None` when it
/// maps nothing.
fn parse_cmap(cmap: &str) -> Option<Decoder<'static>> {
    let tokens = tokens(cmap);
    let mut width = None;
    let mut codes: HashMap<u32, String> = HashMap::new();
    let mut section = "";
    let mut i = 0;
    while i < tokens.len() && codes.len() < MAX_MAPPED_CODES {
        match &tokens[i] {
            Token::Word(word) if word.starts_with("begin") || word.starts_with("end") => {
                section = if word.starts_with("begin") {
                    word.as_str()
                } else {
                    ""
                };
                i += 1;
            }
            Token::Hex(low) if section == "begincodespacerange" => {
                width.get_or_insert(low.len());
                i += 2;
            }
            Token::Hex(source) if section == "beginbfchar" => {
                if let Some(Token::Hex(target)) = tokens.get(i + 1) {
                    width.get_or_insert(source.len());
                    codes.insert(code(source), utf16(target));
                }
                i += 2;
            }
            Token::Hex(low) if section == "beginbfrange" => {
                let (Some(Token::Hex(high)), Some(target)) = (tokens.get(i + 1), tokens.get(i + 2))
                else {
                    break;
                };
                width.get_or_insert(low.len());
                let (low, high) = (code(low), code(high));
                let room = (MAX_MAPPED_CODES - codes.len()) as u32;
                let high = high.min(low.saturating_add(room.saturating_sub(1)));
                match target {
                    Token::Hex(first) => {
                        for (offset, source) in (low..=high).enumerate() {
                            let mut units = first.clone();
                            // The last byte counts up along the range.
                            if let Some(last) = units.len().checked_sub(2) {
                                let unit = u16::from_be_bytes([units[last], units[last + 1]])
                                    .wrapping_add(offset as u16);
                                units[last..].copy_from_slice(&unit.to_be_bytes());
                            }
                            codes.insert(source, utf16(&units));
                        }
                        i += 3;
                    }
                    Token::Open => {
                        let mut j = i + 3;
                        let mut source = low;
                        while let Some(Token::Hex(each)) = tokens.get(j) {
                            if source <= high {
                                codes.insert(source, utf16(each));
                            }
                            source = source.saturating_add(1);
                            j += 1;
                        }
                        i = j + 1;
                    }
                    _ => i += 3,
                }
            }
            _ => i += 1,
        }
    }
    let width = width.filter(|w| (1..=4).contains(w))?;
    (!codes.is_empty()).then_some(Decoder::Map { width, codes })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_to_unicode_map_reads_two_byte_codes() {
        let cmap = "/CIDInit /ProcSet findresource begin\n12 dict begin\nbegincmap\n\
            1 begincodespacerange\n<0000> <FFFF>\nendcodespacerange\n\
            2 beginbfchar\n<0003> <0020>\n<0A1B> <4E2D>\nendbfchar\n\
            2 beginbfrange\n<0010> <0012> <0041>\n<0020> <0021> [<6587> <D83DDE00>]\nendbfrange\n\
            endcmap";
        let Some(decoder) = parse_cmap(cmap) else {
            panic!("the map reads");
        };
        let mut text = String::new();
        decoder.push(
            &[
                0x0A, 0x1B, 0x00, 0x03, 0x00, 0x10, 0x00, 0x12, 0x00, 0x20, 0x00, 0x21,
            ],
            &mut text,
        );
        assert_eq!(text, "中 AC文😀");
        // A font that names the Kangxi radical for the ideograph: read as the ideograph.
        let Some(radical) = parse_cmap("1 beginbfchar\n<01> <2F08>\nendbfchar") else {
            panic!("the map reads");
        };
        let mut text = String::new();
        radical.push(&[0x01], &mut text);
        assert_eq!(text, "人");
        // A range naming four billion codes maps at most MAX_MAPPED_CODES of them.
        let Some(Decoder::Map { codes, .. }) =
            parse_cmap("1 beginbfrange\n<00000000> <FFFFFFFF> <0041>\nendbfrange")
        else {
            panic!("the map reads");
        };
        assert_eq!(codes.len(), MAX_MAPPED_CODES);
        assert!(parse_cmap("garbage <<>> [[ ]").is_none());
    }
}
