//! Comparisons and their direction: "robusta has twice the caffeine of arabica" and
//! "arabica has twice the caffeine of robusta" share every word; what differs is which
//! side of the comparison each thing stands on. A comparison word gives a direction (more:
//! +1, less: −1); the things compared are the nearest shared word before its pivot and the
//! farthest after it (the pivot is the comparison word, or `比`/`是` in Chinese). A
//! sentence whose direction, read through the sides its things stand on in the passage,
//! is the opposite of the passage's is reversed.

/// Comparison words and their direction, English and Chinese.
const MORE: &[&str] = &[
    "more",
    "greater",
    "higher",
    "larger",
    "bigger",
    "wider",
    "widest",
    "widened",
    "extended",
    "lengthened",
    "longer",
    "faster",
    "heavier",
    "older",
    "taller",
    "earlier",
    "before",
    "exceeds",
    "exceeded",
    "exceed",
    "surpass",
    "surpassed",
    "outnumber",
    "twice",
    "double",
    "doubled",
    "triple",
    "tripled",
    "largest",
    "better",
    "superior",
    "highest",
    "richer",
    "stronger",
    "expensive",
    "warmer",
    "hotter",
    "increase",
    "increased",
    "rise",
    "rose",
    "多",
    "更多",
    "多出",
    "多了",
    "高出",
    "高于",
    "超过",
    "大于",
    "多于",
    "快",
    "更快",
    "早于",
    "早",
    "更早",
    "之前",
    "两倍",
    "倍",
    "翻倍",
    "高",
    "更高",
    "大",
    "更大",
    "长",
    "更长",
    "重",
    "贵",
    "增加",
    "扩大",
    "延长",
    "上升",
    "增长",
    "最多",
    "最高",
    "最大",
    "强",
    "暖",
    "以上",
];
const LESS: &[&str] = &[
    "less",
    "fewer",
    "lower",
    "smaller",
    "shorter",
    "narrower",
    "narrowest",
    "narrowed",
    "shortened",
    "cut",
    "reduced",
    "slower",
    "lighter",
    "younger",
    "later",
    "after",
    "half",
    "halved",
    "lowest",
    "smallest",
    "cheaper",
    "cheap",
    "worse",
    "inferior",
    "weaker",
    "colder",
    "cooler",
    "decrease",
    "decreased",
    "fell",
    "fall",
    "drop",
    "dropped",
    "少",
    "更少",
    "少了",
    "低于",
    "小于",
    "少于",
    "慢",
    "更慢",
    "晚于",
    "晚",
    "更晚",
    "之后",
    "一半",
    "减半",
    "低",
    "更低",
    "小",
    "更小",
    "短",
    "更短",
    "轻",
    "便宜",
    "减少",
    "缩小",
    "缩短",
    "下降",
    "最少",
    "最低",
    "最小",
    "弱",
    "冷",
    "以下",
];

/// The direction a word gives a comparison.
pub fn polarity(word: &str) -> i8 {
    if MORE.contains(&word) {
        1
    } else if LESS.contains(&word) {
        -1
    } else {
        0
    }
}

/// A comparison in a run of words: its direction and the index it pivots on.
fn comparison(words: &[&str]) -> Option<(i8, usize)> {
    let (at, direction) = words
        .iter()
        .enumerate()
        .find_map(|(i, w)| Some((i, polarity(w))).filter(|(_, p)| *p != 0))?;
    let before = |pivot: &str| words[..at].iter().rposition(|w| *w == pivot);
    // "A 比 B 多": 比 splits A from B. "A 是 B 的两倍": the comparison word ends the
    // sentence, and 是 does.
    let pivot = before("比")
        .or_else(|| (at + 1 >= words.len()).then(|| before("是")).flatten())
        .unwrap_or(at);
    Some((direction, pivot))
}

/// Whether a run of words has exactly one comparison word.
fn single(words: &[&str]) -> bool {
    words.iter().filter(|w| polarity(w) != 0).count() == 1
}

/// Whether the sentence reverses the passage's comparison. `claim` and `passage` are the
/// words in order; `shared(i, j)` says whether claim word `i` is passage word `j` (the same
/// word, an inflection, or a translation). `None` when either has no comparison or the
/// things compared cannot be placed.
pub fn reversed(
    claim: &[&str],
    passage: &[&str],
    shared: impl Fn(usize, usize) -> bool,
) -> Option<bool> {
    let (claim_direction, claim_pivot) = comparison(claim)?;
    let (passage_direction, passage_pivot) = comparison(passage)?;
    let placed = |i: usize| {
        (polarity(claim[i]) == 0)
            .then(|| (0..passage.len()).find(|&j| shared(i, j)))
            .flatten()
    };
    let first = (0..claim_pivot).rev().find_map(&placed);
    let second = (claim_pivot + 1..claim.len()).rev().find_map(placed);
    let side = |j: usize| (j > passage_pivot) as i8 * 2 - 1;
    let order = match (first.map(side), second.map(side)) {
        (Some(-1), Some(1)) => 1,
        (Some(1), Some(-1)) => -1,
        // One thing compared ("the largest of the three", "whichever is lower"): each
        // side's only comparison word says the direction.
        _ if single(claim) && single(passage) => 1,
        _ => return None,
    };
    Some(claim_direction != passage_direction * order)
}

/// The one direction of the comparison words of a run of words: `Some(1)` when all say
/// "more", `Some(-1)` when all say "less", `None` when there are none or they disagree.
pub fn direction<'a>(words: impl IntoIterator<Item = &'a str>) -> Option<i8> {
    let mut found = None;
    for p in words.into_iter().map(polarity).filter(|p| *p != 0) {
        match found {
            None => found = Some(p),
            Some(q) if q != p => return None,
            Some(_) => {}
        }
    }
    found
}

/// Words of opposite meaning that are no comparison of two sides: a sentence saying one
/// where the passage says the other (and not the first) says the opposite. Chinese words
/// as jieba cuts them; English words as written, inflections allowed.
const OPPOSITES: &[(&str, &str)] = &[
    ("lunar", "solar"),
    ("increase", "decrease"),
    ("increased", "decreased"),
    ("rose", "fell"),
    ("raised", "lowered"),
    ("upgraded", "downgraded"),
    ("north", "south"),
    ("east", "west"),
    ("northern", "southern"),
    ("eastern", "western"),
    ("upstream", "downstream"),
    ("maximum", "minimum"),
    ("legal", "illegal"),
    ("allowed", "banned"),
    ("allowed", "forbidden"),
    ("allowed", "prohibited"),
    ("permitted", "prohibited"),
    ("permitted", "forbidden"),
    ("mandatory", "optional"),
    ("required", "optional"),
    ("inbound", "outbound"),
    ("male", "female"),
    ("acidic", "alkaline"),
    ("indoor", "outdoor"),
    ("inside", "outside"),
    ("clockwise", "counterclockwise"),
    ("won", "lost"),
    ("easier", "harder"),
    ("victory", "defeat"),
    ("profit", "loss"),
    ("surplus", "deficit"),
    ("accepted", "rejected"),
    ("approved", "rejected"),
    ("encrypted", "unencrypted"),
    ("retained", "removed"),
    ("kept", "removed"),
    ("added", "removed"),
    ("阴历", "阳历"),
    ("农历", "公历"),
    ("上调", "下调"),
    ("升级", "降级"),
    ("增加", "减少"),
    ("上升", "下降"),
    ("提高", "降低"),
    ("进口", "出口"),
    ("南方", "北方"),
    ("南部", "北部"),
    ("东部", "西部"),
    ("东岸", "西岸"),
    ("上游", "下游"),
    ("最高", "最低"),
    ("最多", "最少"),
    ("合法", "违法"),
    ("允许", "禁止"),
    ("必须", "可选"),
    ("雄性", "雌性"),
    ("酸性", "碱性"),
    ("盈利", "亏损"),
    ("顺差", "逆差"),
    ("顺时针", "逆时针"),
    ("室内", "室外"),
    ("获胜", "落败"),
    ("批准", "拒绝"),
    ("加密", "明文"),
    ("保留", "取消"),
    ("保留", "删除"),
    ("新增", "删除"),
];

/// The table's word `word` is (`same` tells inflections apart from other words) and its
/// opposite, when it has one.
pub fn opposite(
    word: &str,
    same: impl Fn(&str, &str) -> bool,
) -> Option<(&'static str, &'static str)> {
    OPPOSITES.iter().find_map(|&(a, b)| {
        if same(word, a) {
            Some((a, b))
        } else if same(word, b) {
            Some((b, a))
        } else {
            None
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<&str> {
        text.split(' ').collect()
    }

    fn check(claim: &str, passage: &str) -> Option<bool> {
        let (c, p) = (words(claim), words(passage));
        reversed(&c, &p, |i, j| c[i] == p[j])
    }

    #[test]
    fn a_swapped_or_opposite_comparison_is_reversed() {
        // Content words only, as `align` passes them.
        let source = "robusta about twice caffeine arabica";
        assert_eq!(check("arabica twice caffeine robusta", source), Some(true));
        assert_eq!(check("robusta twice caffeine arabica", source), Some(false));
        assert_eq!(check("caffeine robusta twice arabica", source), Some(false));
        let planes = "planes faster trains";
        assert_eq!(check("trains slower planes", planes), Some(false));
        assert_eq!(check("trains faster planes", planes), Some(true));
        assert_eq!(
            check("阿拉比卡 比 罗布斯塔 多", "罗布斯塔 比 阿拉比卡 多"),
            Some(true)
        );
        assert_eq!(check("tower tall", planes), None);
        assert_eq!(check("pit one smallest", "pit one largest"), Some(true));
        assert_eq!(
            check("whichever lower", "whichever higher applies"),
            Some(true)
        );
    }
}
