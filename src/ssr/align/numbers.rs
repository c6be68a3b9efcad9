//! The numbers a text states, in one form whatever the language wrote them in, so that a
//! Chinese sentence's `150万` meets an English page's `1.5 million` and `三倍` meets `3`.

use std::collections::HashSet;
use std::sync::OnceLock;

use regex::Regex;

/// English number words that stand for a number (not `one`: "one of the…").
const WORDS: &[(&str, f64)] = &[
    ("two", 2.0),
    ("three", 3.0),
    ("four", 4.0),
    ("five", 5.0),
    ("six", 6.0),
    ("seven", 7.0),
    ("eight", 8.0),
    ("nine", 9.0),
    ("ten", 10.0),
    ("eleven", 11.0),
    ("twelve", 12.0),
    ("twenty", 20.0),
    ("thirty", 30.0),
    ("hundred", 100.0),
];

/// Month names (capitalised) stand for their number: `December 1994` is `1994 年 12 月`.
pub(super) const MONTHS: &[&str] = &[
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];

/// Scales written after a number.
const SCALES: &[(&str, f64)] = &[
    ("thousand", 1e3),
    ("million", 1e6),
    ("billion", 1e9),
    ("trillion", 1e12),
];

fn digit(c: char) -> Option<f64> {
    Some(match c {
        '零' | '〇' => 0.0,
        '一' => 1.0,
        '二' | '两' => 2.0,
        '三' => 3.0,
        '四' => 4.0,
        '五' => 5.0,
        '六' => 6.0,
        '七' => 7.0,
        '八' => 8.0,
        '九' => 9.0,
        _ => return None,
    })
}

fn unit(c: char) -> Option<f64> {
    Some(match c {
        '十' => 10.0,
        '百' => 100.0,
        '千' => 1e3,
        '万' => 1e4,
        '亿' => 1e8,
        _ => return None,
    })
}

/// A Chinese numeral (`三百二十`, `两千`, `十五`, `1.5万` after its digits) as a value.
fn chinese_value(run: &[char]) -> f64 {
    let (mut total, mut section, mut number) = (0.0, 0.0, 0.0);
    for &c in run {
        if let Some(d) = digit(c) {
            number = d;
        } else if let Some(u) = unit(c) {
            if u >= 1e4 {
                section = (section + number) * u;
                total += section;
                section = 0.0;
            } else {
                section += if number == 0.0 { 1.0 } else { number } * u;
            }
            number = 0.0;
        }
    }
    total + section + number
}

/// One canonical spelling of a value: `1500000`, `1.5`.
fn canonical(value: f64) -> String {
    if value.fract() == 0.0 && value.abs() < 1e15 {
        format!("{}", value as i64)
    } else {
        let text = format!("{value:.6}");
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

/// What a number counts, as far as the text says: a year, a percentage, or the unit
/// written after it (`米`, `km`, `million` is a scale, not a unit).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Kind {
    Year,
    Percent,
    Unit(String),
    Bare,
}

/// The kind of the number that ends at char `end` of `chars` (with value `value`).
fn kind_after(chars: &[char], end: usize, value: f64) -> Kind {
    let mut j = end;
    while chars.get(j).is_some_and(|c| *c == ' ') {
        j += 1;
    }
    let year = value.fract() == 0.0 && (1000.0..=2100.0).contains(&value);
    match chars.get(j) {
        Some('%' | '％') => Kind::Percent,
        Some('年') if year => Kind::Year,
        Some(c) if crate::text::has_han(&c.to_string()) => Kind::Unit(c.to_string()),
        Some(c) if c.is_ascii_alphabetic() => {
            let word: String = chars[j..]
                .iter()
                .take_while(|c| c.is_ascii_alphabetic())
                .collect::<String>()
                .to_ascii_lowercase();
            match word.as_str() {
                "percent" | "per" => Kind::Percent,
                _ if year && !word.starts_with("year") => Kind::Year,
                _ => Kind::Unit(word.chars().take(4).collect()),
            }
        }
        _ if year => Kind::Year,
        _ => Kind::Bare,
    }
}

/// The numbers in `text` ([`counted`]) without their kinds.
pub fn numbers(text: &str) -> HashSet<String> {
    counted(text).into_iter().map(|(value, _)| value).collect()
}

/// The numbers in `text`: digit runs with inner `.` or `,` (`10,000` is `10000`; a
/// trailing `.` is a full stop), scaled by a following `万`/`亿`/`千` or `thousand`/
/// `million`/`billion`; Chinese numerals with a unit (`三百`, `两千`) or before `倍`; and
/// the English words two to twelve, twenty, thirty and hundred. A run with two dots (a
/// version, `3.12.1`) is kept as written.
pub fn counted(text: &str) -> HashSet<(String, Kind)> {
    let chars: Vec<char> = text.chars().collect();
    let mut found = HashSet::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_ascii_digit() {
            let mut raw = String::new();
            while i < chars.len() {
                let c = chars[i];
                let inner = (c == '.' || c == ',')
                    && !raw.is_empty()
                    && chars.get(i + 1).is_some_and(char::is_ascii_digit);
                if c.is_ascii_digit() {
                    raw.push(c);
                } else if inner {
                    if c == '.' {
                        raw.push(c);
                    }
                } else {
                    break;
                }
                i += 1;
            }
            let Ok(mut value) = raw.parse::<f64>() else {
                found.insert((raw, Kind::Bare));
                continue;
            };
            // A scale right after (`150万`, `1.5 million`).
            let mut j = i;
            while chars.get(j).is_some_and(|c| *c == ' ') {
                j += 1;
            }
            if chars
                .get(j)
                .copied()
                .and_then(unit)
                .is_some_and(|u| u >= 1e3)
            {
                // `7.3万亿`: each scale multiplies.
                while let Some(u) = chars.get(j).copied().and_then(unit).filter(|u| *u >= 1e3) {
                    value *= u;
                    j += 1;
                }
                i = j;
            } else {
                let rest: String = chars[j..chars.len().min(j + 9)].iter().collect();
                let rest = rest.to_ascii_lowercase();
                if let Some((word, scale)) = SCALES.iter().find(|(w, _)| rest.starts_with(w)) {
                    value *= scale;
                    i = j + word.len();
                }
            }
            found.insert((canonical(value), kind_after(&chars, i, value)));
        } else if digit(c).is_some() || unit(c).is_some() {
            let start = i;
            while i < chars.len() && (digit(chars[i]).is_some() || unit(chars[i]).is_some()) {
                i += 1;
            }
            let run = &chars[start..i];
            let has_unit = run.iter().any(|c| unit(*c).is_some());
            let before_times = run.len() == 1 && chars.get(i) == Some(&'倍') && c != '一';
            // A numeral starts with a digit or `十` (`十五`); `一` alone is an article more
            // often than a number, and `十分`, `万一`, `千万` are words.
            let starts = digit(run[0]).is_some() || (run[0] == '十' && run.len() >= 2);
            if starts && has_unit && run.len() >= 2 || before_times {
                let value = chinese_value(run);
                found.insert((canonical(value), kind_after(&chars, i, value)));
            }
        } else if c.is_ascii_alphabetic() {
            let start = i;
            while i < chars.len() && chars[i].is_ascii_alphabetic() {
                i += 1;
            }
            let word: String = chars[start..i]
                .iter()
                .collect::<String>()
                .to_ascii_lowercase();
            if let Some((_, value)) = WORDS.iter().find(|(w, _)| *w == word) {
                found.insert((canonical(*value), kind_after(&chars, i, *value)));
            } else if chars[start].is_uppercase() {
                if let Some(month) = MONTHS.iter().position(|m| *m == word) {
                    found.insert((canonical(month as f64 + 1.0), Kind::Unit("月".into())));
                }
            }
        } else {
            i += 1;
        }
    }
    // One is "a", "an", "一", "one of…" as often as a number: it proves nothing.
    found.retain(|(value, _)| value != "1");
    found
}

/// The dates `text` states in full, day, month and year, as `(year, month, day)`: "30
/// September 1968", "September 30, 1968", "1968年9月30日". Across languages such a date is
/// the surest sign of which event a passage is about.
pub fn full_dates(text: &str) -> HashSet<(u32, u32, u32)> {
    static PATTERNS: OnceLock<[Regex; 3]> = OnceLock::new();
    let month = "(?<m>January|February|March|April|May|June|July|August|September|October|November|December)";
    let patterns = PATTERNS.get_or_init(|| {
        [
            format!(r"\b(?<d>\d{{1,2}})(?:st|nd|rd|th)? {month},? (?<y>\d{{4}})\b"),
            format!(r"\b{month} (?<d>\d{{1,2}})(?:st|nd|rd|th)?,? (?<y>\d{{4}})\b"),
            r"(?<y>\d{4}) ?年 ?(?<m>\d{1,2}) ?月 ?(?<d>\d{1,2}) ?[日号]".to_string(),
        ]
        .map(|pattern| Regex::new(&pattern).expect("the date patterns are valid"))
    });
    // A month by its number or its English name.
    let month = |text: &str| {
        text.parse::<u32>().ok().or_else(|| {
            MONTHS
                .iter()
                .position(|m| m.eq_ignore_ascii_case(text))
                .map(|i| i as u32 + 1)
        })
    };
    let mut found: HashSet<(u32, u32, u32)> = patterns
        .iter()
        .flat_map(|pattern| pattern.captures_iter(text))
        .filter_map(|c| Some((c["y"].parse().ok()?, month(&c["m"])?, c["d"].parse().ok()?)))
        .collect();
    found.retain(|&(_, m, d)| (1..=12).contains(&m) && (1..=31).contains(&d));
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_date_in_full_is_one_date_in_either_language() {
        let date = HashSet::from([(1968, 9, 30)]);
        assert_eq!(full_dates("The deck opened on 30 September 1968."), date);
        assert_eq!(
            full_dates("It opened on September 30th, 1968, at noon."),
            date
        );
        assert_eq!(full_dates("1968年9月30日铁路桥通车。"), date);
        // A month and a year, or a day without its year, are no full date.
        assert!(full_dates("It opened in September 1968; on 30 September the deck.").is_empty());
        assert!(full_dates("1968年9月铁路桥通车").is_empty());
        assert!(full_dates("on 45 September 1968").is_empty());
    }

    fn set(items: &[&str]) -> HashSet<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn every_language_writes_the_same_number() {
        assert_eq!(
            numbers("版本 1.50，共 10,000 次，2016年。"),
            set(&["1.5", "10000", "2016"])
        );
        assert_eq!(numbers("约150万人"), numbers("about 1.5 million people"));
        assert_eq!(numbers("两千多名"), set(&["2000"]));
        assert_eq!(numbers("三百二十米"), set(&["320"]));
        assert_eq!(numbers("咖啡因含量是其三倍"), set(&["3"]));
        assert_eq!(numbers("three times the caffeine"), set(&["3"]));
        assert_eq!(numbers("2亿"), set(&["200000000"]));
        assert_eq!(numbers("Python 3.12.1"), set(&["3.12.1"]));
        assert_eq!(numbers("一个统一的方案"), set(&[]));
        assert_eq!(numbers("It ends."), set(&[]));
        assert_eq!(numbers("7.3 万亿元"), numbers("7.3 trillion yuan"));
        assert_eq!(numbers("1 到 4 个字节"), numbers("one to four bytes"));
        assert_eq!(
            numbers("began in December 1994"),
            numbers("1994 年 12 月开工")
        );
        assert_eq!(numbers("you may go"), set(&[]));
        let kinds = |text: &str| {
            counted(text)
                .into_iter()
                .map(|(_, k)| k)
                .collect::<Vec<_>>()
        };
        assert_eq!(kinds("建于 1889 年"), [Kind::Year]);
        assert_eq!(kinds("built in 1889."), [Kind::Year]);
        assert_eq!(kinds("约 40%"), [Kind::Percent]);
        assert_eq!(kinds("330 metres"), [Kind::Unit("metr".into())]);
        assert_eq!(kinds("高 330 米"), [Kind::Unit("米".into())]);
    }
}
