//! Numbers and names of a claim, and the words each is bound to: a passage that binds the
//! sentence's words to another number or name says something else of the same things.
//! "The tunnel opened in 1988" against "construction began in 1988 and the tunnel opened in
//! 1994" (the number moved); "the bridge opened in 1995" against "the bridge opened in
//! 1994" (the number replaced); but "the bridge opened in 1994 and was widened in 2005"
//! against a passage that says nothing of a widening states a number the passage lacks,
//! which is no contradiction: "2005" is bound to "widened", which no number there is.

use super::numbers::numbers;
use super::{
    clauses, dictionary, han_text, same_role_word, sentence_end, Word, CLAUSE_WORDS,
    MAX_ROLE_WORDS, MAX_SWAPPED_NAMES,
};
use std::collections::HashSet;

/// `names` but the common English words that open a sentence of `text`: "Construction
/// began …" names nothing, "Eurostar trains run …" names Eurostar.
pub(super) fn named<'a>(text: &str, names: &[&'a Word]) -> Vec<&'a Word> {
    names
        .iter()
        .copied()
        .filter(|w| w.han() || !opens_sentence(text, w) || !dictionary().is_english(&w.text))
        .collect()
}

/// Whether `word` is the first of a sentence of `text`.
fn opens_sentence(text: &str, word: &Word) -> bool {
    let before = text.get(..word.start).unwrap_or_default().trim_end();
    before.is_empty() || before.ends_with(['.', '!', '?', ':', ';', '。', '！', '？', '\n'])
}

/// Words that scale a number rather than count something.
const SCALES: &[&str] = &[
    "万", "亿", "千", "百", "百万", "千万", "万亿", "thousand", "million", "billion", "trillion",
];

/// What a number or a name of a claim is bound to: a number (its digits, whether it
/// reads as a year, the word after it: its unit, mostly, and the word itself) or a name.
enum Anchor<'a> {
    Number(String, bool, Option<&'a Word>, &'a Word),
    Name(&'a Word),
}

impl<'w> Anchor<'w> {
    /// The anchors of `words`, `None` for the other words.
    fn all(words: &[&'w Word], names: &[&Word]) -> Vec<Option<Anchor<'w>>> {
        words
            .iter()
            .map(|word| {
                // The longest word right after it (a space at most between): its unit, or
                // its scale, and then the word after that is ("1.1 万只").
                let after = |end: usize| {
                    words
                        .iter()
                        .filter(move |n| (end..=end + 1).contains(&n.start))
                        .max_by_key(|n| n.end)
                };
                let next = after(word.end).map(|n| {
                    if SCALES.contains(&n.text.as_str()) {
                        after(n.end).unwrap_or(n)
                    } else {
                        n
                    }
                });
                // A piece of a known word, or a known word and a character ("西汉时",
                // "二十四" of "二十四节气"): jieba's search mode cut it, it names nothing.
                let piece = word.han()
                    && word.glosses.is_empty()
                    && words.iter().any(|known| {
                        !known.glosses.is_empty()
                            && known.text.chars().count() >= 2
                            && ((known.start <= word.start && word.end <= known.end)
                                || (word.start <= known.start && known.end <= word.end))
                    });
                if piece {
                    return None;
                }
                Anchor::of(word, next.copied(), names)
            })
            .collect()
    }

    fn of(word: &'w Word, next: Option<&'w Word>, names: &[&Word]) -> Option<Anchor<'w>> {
        let digits: String = word.text.chars().filter(|c| *c != ',').collect();
        if !digits.is_empty()
            && digits.chars().any(|c| c.is_ascii_digit())
            && digits.chars().all(|c| c.is_ascii_digit() || c == '.')
        {
            let unit = next.filter(|n| Anchor::of(n, None, &[]).is_none());
            let year = digits.len() == 4
                && matches!(digits.parse::<u32>(), Ok(1000..=2100))
                && unit.is_none_or(|u| u.text == "年");
            return Some(Anchor::Number(digits, year, unit, word));
        }
        let unknown_han = word.han() && word.glosses.is_empty() && word.text.chars().count() >= 2;
        (unknown_han
            || names
                .iter()
                .any(|n| n.start == word.start && n.end == word.end))
        .then_some(Anchor::Name(word))
    }

    /// The values a number stands for, read with the unit or scale after it (`150` of
    /// `150万` is 1500000); none for a name. `text` is the text its offsets are in.
    fn values(&self, text: &str) -> HashSet<String> {
        match self {
            Anchor::Number(_, _, unit, at) => {
                let end = unit.map_or(at.end, |u| u.end);
                text.get(at.start..end).map(numbers).unwrap_or_default()
            }
            Anchor::Name(_) => HashSet::new(),
        }
    }

    /// The same number, or the same name.
    fn same(&self, other: &Anchor) -> bool {
        match (self, other) {
            (Anchor::Number(a, ..), Anchor::Number(b, ..)) => a == b,
            (Anchor::Name(a), Anchor::Name(b)) => a.meets(b),
            _ => false,
        }
    }

    /// Two numbers that could stand in each other's places: both years or neither (units
    /// aside: "500 多条" and "3000 多个" are both counts), or two names.
    fn swappable(&self, other: &Anchor) -> bool {
        match (self, other) {
            (Anchor::Number(_, a, ..), Anchor::Number(_, b, ..)) => a == b,
            (Anchor::Name(_), Anchor::Name(_)) => true,
            _ => false,
        }
    }

    /// A number for a number of the same sort (a year for a year, minutes for minutes), a
    /// name for a name.
    fn comparable(&self, other: &Anchor) -> bool {
        match (self, other) {
            (Anchor::Number(_, true, ..), Anchor::Number(_, true, ..)) => true,
            (Anchor::Number(_, false, a, _), Anchor::Number(_, false, b, _)) => match (a, b) {
                (Some(a), Some(b)) => a.meets(b),
                (None, None) => true,
                _ => false,
            },
            (Anchor::Name(_), Anchor::Name(_)) => true,
            _ => false,
        }
    }
}

/// The words a text binds to its anchor at `at`: for a number, those of its clause since
/// the clause's previous number (or, when none come before it, those after it up to the
/// next: "2008 年开工", reaching into the next clause when its own holds only its unit);
/// for a name, the rest of its clause, other anchors left out.
fn bound<'a>(
    words: &[&'a Word],
    (clause_ids, sentence_ids, chinese): (&[usize], &[usize], bool),
    anchors: &[Option<Anchor>],
    at: usize,
) -> Vec<&'a Word> {
    let mut said = bound_in_clause(words, clause_ids, anchors, at);
    let unit = match anchors[at] {
        Some(Anchor::Number(_, _, unit, _)) => unit,
        _ => None,
    };
    let name = matches!(anchors[at], Some(Anchor::Name(_)));
    // A year is said of what follows it as much as of what comes before ("2000年和2001年
    // 大昭寺…相继列入").
    let year = matches!(anchors[at], Some(Anchor::Number(_, true, ..)));
    // Nothing but its unit and light words; or nothing at all: a number right after
    // another ("1990 2000") has no words of its own and is said of the clause before.
    let says_little = !name
        && !year
        && (said.is_empty()
            || said
                .iter()
                .all(|w| unit.is_some_and(|u| std::ptr::eq(*w, u)) || light(w)));
    // The clauses of its sentence before it, up to one set against it ("Eurostar trains
    // run …, while Le Shuttle carries cars": each says its own).
    let same_sentence = |j: &usize| sentence_ids[*j] == sentence_ids[at];
    let since = (0..at)
        .rev()
        .take_while(same_sentence)
        .take_while(|j| !CLAUSE_WORDS.contains(&words[*j].text.as_str()))
        .last()
        .unwrap_or(at);
    let earlier: Vec<usize> = (since..at)
        .filter(|j| clause_ids[*j] != clause_ids[at])
        .filter(|j| !matches!(anchors[*j], Some(Anchor::Number(..))))
        .filter(|j| !name || anchors[*j].is_none())
        .collect();
    let clause_of = |j: Option<&usize>| j.map(|j| clause_ids[*j]);
    // A clause that says little but its number ("at around 5,900 metres per second",
    // "约有 492 头") is said of the clause before it ("and in steel faster still, at around
    // 5,900"); in Chinese, such a clause, or one that names who did something
    // ("由诗人苏舜钦购地营建"), is said of its sentence's topic too, the words of its first
    // clause: "洞庭湖是…湖泊，约有 492 头" binds 492 to 洞庭湖, as "鄱阳湖约 492 头" binds it
    // to 鄱阳湖. (An English clause names its own subject.)
    let mut clauses_said = Vec::new();
    if says_little {
        clauses_said.extend(clause_of(earlier.last()));
    }
    // (A Latin name in Chinese is mostly a thing acted on: "回退到 HTTP/2".)
    if chinese && (says_little || (name && words[at].han())) {
        clauses_said.extend(clause_of(earlier.first()));
    }
    said.extend(
        earlier
            .iter()
            .filter(|j| clauses_said.contains(&clause_ids[**j]))
            .map(|j| words[*j]),
    );
    // Every anchor is weighed against every other by these words: a few dozen tell.
    said.truncate(MAX_BOUND_WORDS);
    said
}

/// At most this many words are bound to an anchor, and this many anchors of a sentence
/// weighed: the work stays bounded whatever a sentence holds (real ones bind a dozen words
/// to each of a few anchors).
const MAX_BOUND_WORDS: usize = 48;
const MAX_CLAIM_ANCHORS: usize = 64;

/// [`bound`] within the anchor's own clause.
fn bound_in_clause<'a>(
    words: &[&'a Word],
    clause_ids: &[usize],
    anchors: &[Option<Anchor>],
    at: usize,
) -> Vec<&'a Word> {
    let clause = |j: usize| clause_ids[j] == clause_ids[at];
    let plain = |j: &usize| anchors[*j].is_none();
    if matches!(anchors[at], Some(Anchor::Name(_))) {
        return (0..words.len())
            .filter(|j| clause(*j) && plain(j))
            .map(|j| words[j])
            .collect();
    }
    // A number's words include the names beside it ("圈养" the dictionary does not know).
    let number = |j: usize| matches!(anchors[j], Some(Anchor::Number(..)));
    let before: Vec<&Word> = (0..at)
        .rev()
        .take_while(|j| clause(*j) && !number(*j))
        .map(|j| words[j])
        .collect();
    if !before.is_empty() {
        return before;
    }
    let unit = match anchors[at] {
        Some(Anchor::Number(_, _, unit, _)) => unit,
        _ => None,
    };
    let after = |reach: usize| -> Vec<&'a Word> {
        (at + 1..words.len())
            .take_while(|j| clause_ids[*j] <= clause_ids[at] + reach && !number(*j))
            .map(|j| words[j])
            .collect()
    };
    let own = after(0);
    if own
        .iter()
        .any(|w| !unit.is_some_and(|u| std::ptr::eq(*w, u)))
    {
        return own;
    }
    // A number alone in its clause but for its unit ("1994 年，布达拉宫被列入…", "In 1994,
    // the bridge opened") is said of the next clause.
    after(1)
}

/// A word that says little by itself: one Chinese character ("约", "有"), a short English
/// word ("about" aside, mostly function words the stop list lets through).
fn light(word: &Word) -> bool {
    if word.han() {
        word.text.chars().count() < 2
    } else {
        word.text.len() <= 3 || matches!(word.text.as_str(), "about" | "around" | "some")
    }
}

/// Last characters of Chinese names of places and institutions: 洞庭湖, 随州市, 灵隐寺.
const PLACE_ENDINGS: &[char] = &[
    '湖', '河', '江', '山', '省', '市', '县', '镇', '村', '岛', '洲', '寺', '庙', '园', '馆', '宫',
    '殿', '桥', '塔', '楼', '亭', '港', '湾', '峰', '岭', '州', '站', '海', '峡', '洞', '城', '院',
];

/// Whether the passage says the sentence's number or name of another place of the same
/// kind: "贝尔湖面积约 2339 平方公里" against "呼伦湖面积约 2339 平方公里". `said` are the
/// sentence's words bound to it, `there` the passage's, `sentence` all the sentence's words.
/// (A place the dictionary knows is no name to the other features.)
fn another_of_its_kind(said: &[&Word], there: &[&Word], sentence: &[&Word]) -> bool {
    let ending = |w: &Word| {
        let mut chars = w.text.chars();
        let last = chars.next_back().filter(|c| PLACE_ENDINGS.contains(c))?;
        (w.han() && chars.count() >= 2).then_some(last)
    };
    let mine: Vec<(&Word, char)> = said
        .iter()
        .filter_map(|w| ending(w).map(|kind| (*w, kind)))
        .collect();
    if mine.is_empty() {
        return false;
    }
    // The passage's place words the sentence does not use, found once.
    let theirs: Vec<(&Word, char)> = there
        .iter()
        .filter_map(|w| ending(w).map(|kind| (*w, kind)))
        .filter(|(w, _)| !sentence.iter().any(|s| same_role_word(s, w)))
        .collect();
    mine.iter().any(|(mine, kind)| {
        !there.iter().any(|t| same_role_word(mine, t))
            && theirs.iter().any(|(theirs, theirs_kind)| {
                theirs_kind == kind
                    && !mine.text.contains(&theirs.text)
                    && !theirs.text.contains(&mine.text)
            })
    })
}

/// The weight of the words of `said` that `there` holds too.
fn score(said: &[&Word], there: &[&Word], weight: &dyn Fn(&Word) -> f64) -> f64 {
    said.iter()
        .filter(|w| there.iter().any(|t| same_role_word(w, t)))
        .map(|w| weight(w))
        .sum()
}

/// The words of `text` with each number the tokenizer cut at its separators ("5,900" into
/// "5" and "900", "1.5" into "1" and "5") whole again.
fn joined(text: &str, words: &[&Word]) -> Vec<Word> {
    let digits = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_digit());
    let mut out: Vec<Word> = Vec::with_capacity(words.len());
    for word in words {
        if let Some(last) = out.last_mut() {
            let number = last.text.starts_with(|c: char| c.is_ascii_digit())
                && last
                    .text
                    .chars()
                    .all(|c| c.is_ascii_digit() || c == ',' || c == '.');
            let separated = match text.get(last.end..word.start) {
                Some(".") => true,
                Some(",") => super::thousands(text, last.end),
                _ => false,
            };
            if number && digits(&word.text) && separated {
                last.end = word.end;
                last.text = text
                    .get(last.start..word.end)
                    .unwrap_or_default()
                    .to_string();
                continue;
            }
        }
        out.push(Word {
            text: word.text.clone(),
            start: word.start,
            end: word.end,
            glosses: word.glosses.clone(),
            name: word.name,
            quantity: word.quantity,
        });
    }
    out
}

/// For each word, the sentence of `text` it stands in.
fn sentences_of(text: &str, words: &[&Word]) -> Vec<usize> {
    let ends: Vec<usize> = text
        .char_indices()
        .filter(|(at, c)| sentence_end(text, *at, *c))
        .map(|(at, _)| at)
        .collect();
    words
        .iter()
        .map(|w| ends.partition_point(|at| *at <= w.start))
        .collect()
}

/// What the passage does with the sentence's numbers and names.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(super) struct Anchored {
    /// A number or a name of the sentence stands in the passage where the sentence's
    /// words around it are not, and those words are bound there to another number or name
    /// the sentence does not state: "the tunnel opened in 1988" against "construction began
    /// in 1988 and the tunnel opened in 1994"; "圈养大熊猫的数量为 1864 只" against "野生大熊猫
    /// 数量为 1864 只，圈养数量为 375 只".
    pub moved: bool,
    /// `moved` by a name only (no number moved).
    pub name_moved: bool,
    /// A number of the sentence the passage lacks, whose words are bound there to another
    /// number of the same sort the sentence does not state: "opened in 1995" against
    /// "opened in 1994".
    pub number_replaced: bool,
    /// The same for a name: "designed by Strauss" against "designed by Moisseiff".
    pub name_replaced: bool,
}

/// [`Anchored`] for a sentence and a passage (its words in `window`, offsets into
/// `source`). Bound words count by their weight in the source.
pub(super) fn anchored(
    (sentence, claim, claim_names): (&str, &[&Word], &[&Word]),
    (source, window, window_names): (&str, &[&Word], &[&Word]),
    weight: &dyn Fn(&Word) -> f64,
) -> Anchored {
    // A long run of words without a break (a flattened table) says nothing of roles, and
    // each anchor is weighed against each other: the work stays bounded.
    if window.len() > MAX_ROLE_WORDS || claim.len() > MAX_ROLE_WORDS {
        return Anchored::default();
    }
    let (claim, window) = (joined(sentence, claim), joined(source, window));
    let (claim, window): (Vec<&Word>, Vec<&Word>) =
        (claim.iter().collect(), window.iter().collect());
    let (claim, window) = (&claim[..], &window[..]);
    let claim_names = named(sentence, claim_names);
    let window_names = named(source, window_names);
    let claim_anchors = Anchor::all(claim, &claim_names);
    let window_anchors = Anchor::all(window, &window_names);
    let claim_clauses = (
        clauses(sentence, claim),
        sentences_of(sentence, claim),
        han_text(sentence),
    );
    let window_clauses = (
        clauses(source, window),
        sentences_of(source, window),
        han_text(source),
    );
    // The values each side's numbers stand for, in one form (`150万` is `1.5 million`).
    let values = |text: &str, anchors: &[Option<Anchor>]| -> HashSet<String> {
        anchors
            .iter()
            .flatten()
            .flat_map(|a| a.values(text))
            .collect()
    };
    let claim_values = values(sentence, &claim_anchors);
    let window_values = values(source, &window_anchors);
    // What each of the passage's anchors binds, found once.
    let bound_there: Vec<Vec<&Word>> = (0..window.len())
        .map(|j| {
            if window_anchors[j].is_some() {
                bound(
                    window,
                    (&window_clauses.0, &window_clauses.1, window_clauses.2),
                    &window_anchors,
                    j,
                )
            } else {
                Vec::new()
            }
        })
        .collect();
    // Which of the passage's anchors the sentence states too, found once.
    let stated: Vec<bool> = window_anchors
        .iter()
        .map(|anchor| {
            anchor.as_ref().is_some_and(|anchor| {
                claim_anchors.iter().flatten().any(|a| a.same(anchor))
                    || anchor
                        .values(source)
                        .iter()
                        .any(|v| claim_values.contains(v))
            })
        })
        .collect();
    let mut found = Anchored::default();
    // Each anchor of the sentence the passage states: its words, and where the passage
    // binds them best.
    let mut placed: Vec<(usize, Vec<&Word>, usize)> = Vec::new();
    let weighed = claim_anchors
        .iter()
        .enumerate()
        .filter(|(_, a)| a.is_some())
        .take(MAX_CLAIM_ANCHORS);
    for (i, anchor) in weighed {
        let Some(anchor) = anchor else {
            continue;
        };
        let said = bound(
            claim,
            (&claim_clauses.0, &claim_clauses.1, claim_clauses.2),
            &claim_anchors,
            i,
        );
        // One pass over the passage's anchors: where it binds the sentence's words best
        // to this number (name), and to another of the same sort the sentence does not
        // state; and whether such another is bound to a word of the sentence's that says
        // something ("opened", "wood"), not only "about" or "约" (then it replaced it).
        let heavy: Vec<&Word> = said.iter().copied().filter(|w| !light(w)).collect();
        let better = |top: Option<(usize, f64)>, j: usize, s: f64| match top {
            Some((_, t)) if t >= s => top,
            _ => Some((j, s)),
        };
        let (mut same, mut elsewhere, mut heavy_elsewhere) = (None, None, false);
        for (j, there) in window_anchors.iter().enumerate() {
            let Some(there) = there else {
                continue;
            };
            if anchor.same(there) {
                same = better(same, j, score(&said, &bound_there[j], weight));
            }
            if anchor.comparable(there) && !stated[j] {
                elsewhere = better(elsewhere, j, score(&said, &bound_there[j], weight));
                heavy_elsewhere |= score(&heavy, &bound_there[j], weight) > 0.0;
            }
        }
        let elsewhere = elsewhere.map(|(_, s)| s);
        let absent = anchor.values(sentence).is_disjoint(&window_values);
        match same {
            Some((j, here)) => {
                let moved = matches!(elsewhere, Some(elsewhere) if elsewhere > here + 1e-9)
                    || another_of_its_kind(&said, &bound_there[j], claim);
                match anchor {
                    Anchor::Number(..) => found.moved |= moved,
                    Anchor::Name(_) => found.name_moved |= moved,
                }
                placed.push((i, said, j));
            }
            None if absent && heavy_elsewhere => match anchor {
                Anchor::Number(..) => found.number_replaced = true,
                Anchor::Name(_) => found.name_replaced = true,
            },
            None => {}
        }
    }
    // Two numbers (names) of the sentence each bound in the passage to the other's words:
    // "河流 500 多条、湖泊 3000 多个" against "河流 3000 多条、湖泊 500 多个". Its first few
    // only, so the pairs stay few whatever a sentence holds.
    let placed = &placed[..placed.len().min(MAX_SWAPPED_NAMES)];
    let swapped = placed.iter().enumerate().any(|(n, (a, said_a, at_a))| {
        placed[n + 1..].iter().any(|(b, said_b, at_b)| {
            let (Some(x), Some(y)) = (&claim_anchors[*a], &claim_anchors[*b]) else {
                return false;
            };
            at_a != at_b
                && claim_clauses.0[*a] != claim_clauses.0[*b]
                && !x.same(y)
                && x.swappable(y)
                && score(said_a, &bound_there[*at_b], weight)
                    > score(said_a, &bound_there[*at_a], weight) + 1e-9
                && score(said_b, &bound_there[*at_a], weight)
                    > score(said_b, &bound_there[*at_b], weight) + 1e-9
        })
    });
    found.moved |= swapped;
    found.name_moved &= !found.moved;
    found.moved |= found.name_moved;
    found
}
