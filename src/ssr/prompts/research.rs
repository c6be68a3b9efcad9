//! Research mode's prompts (seed 004). Each asks for one JSON object with a fixed shape and
//! carries the rules seed 004's change log learned from real failures: anchors first, no
//! pronouns in queries (5th change), exhaustive candidate checks and multi-anchor joint
//! queries (9th), entity names only for the encyclopedia (8th), Occam's razor and
//! reasoning-chain sufficiency instead of a percentage (12th). Loop control is not here:
//! the code decides when to plan, stop and summarise.

/// Everything a planning turn knows.
pub struct PlanContext<'a> {
    pub question: &'a str,
    pub loop_number: usize,
    pub max_loops: usize,
    pub max_sub_questions: usize,
    /// Evidence so far, one line each, with registry numbers.
    pub evidence: &'a [String],
    /// Sub-questions already researched.
    pub completed: &'a [String],
    /// Directions judged dead ends.
    pub pruned: &'a [String],
    /// Candidates found but not yet verified.
    pub candidates: &'a [String],
    /// The verifier's account of the chain and its gaps, after the first loop.
    pub chain: &'a str,
}

pub fn plan_system(zh: bool) -> String {
    if zh {
        "你是一个严谨的研究规划者，负责把一个困难的多跳问题拆成可以直接搜索的子问题（思维树：先分析，再按奥卡姆剃刀筛选）。\n\
         规则：\n\
         1. 先提取问题中的锚点（已知的人名、作品名、地名、时间、数字等确定信息），写入 anchors。\n\
         2. 若非必要，勿增子问题：只为推理链中的缺口生成子问题，不要重复已完成或已剪枝的子问题，已有证据覆盖的方面不要再问。\n\
         3. 每轮最多 {max} 个子问题；一个就够时只给一个。\n\
         4. 每个子问题必须自包含：搜索引擎没有上下文，禁止使用任何指代词（这部、该、那个、这个、此、其、它、他、她、this、that、it）。\n\
            错误：\"这部动漫大陆国语版男主角的配音演员是谁？\"  正确：\"《猫眼三姐妹》大陆国语版男主角内海俊夫的配音演员是谁？\"\n\
         5. 有多个已确认的锚点时，把它们组合进同一个查询（多锚点联合查询），例如 \"张欣 贞观之治 配音\"，不要只搜单个常见名字。\n\
         6. 证据中出现了一组候选（例如若干人名），必须为每个尚未验证的候选各生成一个验证子问题，不能只验证一部分就放弃。\n\
         7. 证据中出现了尚未追查的具体实体，就以它为核心生成定向追查子问题。\n\
         8. query 是直接发给搜索引擎的文字：中文用完整的自然语言句子，英文用精准的关键词组合；不要写\"搜索\"\"查找\"之类的指令前缀，不要用 site: 等运算符。\n\
         9. language 只能是 \"zh\"（中文资料）或 \"en\"（英文资料）；需要两种语言的资料时拆成两个子问题。\n\
         只输出一个 JSON 对象，不要输出其他文字：\n\
         {\"anchors\": [\"锚点\"], \"sub_questions\": [{\"question\": \"自包含的子问题\", \"query\": \"搜索查询\", \"language\": \"zh\", \"purpose\": \"它补上推理链的哪个缺口\"}]}\n\
         没有值得研究的新缺口时，sub_questions 为空数组。"
    } else {
        "You are a careful research planner. Split a hard multi-hop question into sub-questions that can be searched directly (tree of thought: analyse, then keep only what Occam's razor allows).\n\
         Rules:\n\
         1. First extract the anchors of the question (known names, titles, places, dates, numbers) into anchors.\n\
         2. Do not multiply sub-questions beyond necessity: ask only for gaps in the reasoning chain; never repeat a completed or pruned sub-question; do not ask again what the evidence already covers.\n\
         3. At most {max} sub-questions per round; give one when one is enough.\n\
         4. Every sub-question must be self-contained: the search engine has no context, so no pronouns or references (this, that, it, the film, 这部, 该).\n\
            Wrong: \"Who voiced the male lead in the mainland dub of this anime?\"  Right: \"Who voiced Toshio Utsumi in the mainland Mandarin dub of Cat's Eye?\"\n\
         5. When several anchors are confirmed, combine them in one query (a multi-anchor joint query) instead of searching one common name alone.\n\
         6. When the evidence holds a set of candidates (for example several names), give every candidate not yet verified its own verification sub-question; never check only some and give up.\n\
         7. When the evidence names a concrete entity not yet followed up, make it the core of a targeted sub-question.\n\
         8. query is the text sent to the search engine: precise keywords for English, a full natural sentence for Chinese; no prefixes like \"search for\", no operators like site:.\n\
         9. language is \"en\" (English sources) or \"zh\" (Chinese sources); if both are needed, make two sub-questions.\n\
         Output one JSON object and nothing else:\n\
         {\"anchors\": [\"anchor\"], \"sub_questions\": [{\"question\": \"self-contained sub-question\", \"query\": \"search query\", \"language\": \"en\", \"purpose\": \"which gap in the chain it fills\"}]}\n\
         When no new gap is worth researching, sub_questions is an empty array."
    }
    .replace("{max}", "4")
}

pub fn plan_user(zh: bool, context: &PlanContext<'_>) -> String {
    let list = |items: &[String]| {
        if items.is_empty() {
            if zh {
                "（无）".to_string()
            } else {
                "(none)".to_string()
            }
        } else {
            items
                .iter()
                .map(|item| format!("- {item}"))
                .collect::<Vec<_>>()
                .join("\n")
        }
    };
    let question = context.question;
    let (round, max_loops, max_sub) = (
        context.loop_number,
        context.max_loops,
        context.max_sub_questions,
    );
    let evidence = list(context.evidence);
    let completed = list(context.completed);
    let pruned = list(context.pruned);
    let candidates = list(context.candidates);
    let chain = match (context.chain.is_empty(), zh) {
        (true, true) => "（第一轮，尚无）",
        (true, false) => "(first round, none yet)",
        (false, _) => context.chain,
    };
    if zh {
        format!("原始问题：{question}\n\n第 {round} 轮规划（最多 {max_loops} 轮，本轮最多 {max_sub} 个子问题）。\n\n已有证据：\n{evidence}\n\n已完成的子问题（不要重复）：\n{completed}\n\n已剪枝的方向（不要再生成）：\n{pruned}\n\n待验证的候选：\n{candidates}\n\n上一轮的推理链与缺口：\n{chain}")
    } else {
        format!("Original question: {question}\n\nPlanning round {round} (at most {max_loops} rounds, at most {max_sub} sub-questions this round).\n\nEvidence so far:\n{evidence}\n\nCompleted sub-questions (do not repeat):\n{completed}\n\nPruned directions (never plan again):\n{pruned}\n\nCandidates still to verify:\n{candidates}\n\nThe reasoning chain and its gaps after the last round:\n{chain}")
    }
}

pub fn reflect_system(zh: bool) -> String {
    if zh {
        "你是研究分支的分析者（思维链），阅读一个子问题的搜索结果并反思。步骤：\n\
         1. 相关性过滤：哪些编号的结果与子问题相关（relevant）。\n\
         2. 实体提取：结果中出现的具体人名、作品名、机构名等，写原文名称（entities），这是最重要的一步。\n\
         3. 多锚点命中：同一条结果同时提到原始问题中多个锚点的编号（multi_anchor_hits），这类结果价值极高；注意同名多义。\n\
         4. 候选验证状态：发现一组候选时，逐个标注 ✓ 已验证 / ✗ 已排除 / ? 待验证（candidates）。\n\
         5. 演绎推理：用排除法等从已知推出未知，每条推断都以\"推测：\"开头（deductions）。\n\
         6. 百科验证：最值得用百科核实的 1–2 个实体，只写实体名词本身（encyclopedia）。错误：\"猫眼三姐妹的配音演员是谁？\"；正确：\"猫眼三姐妹\"。\n\
         7. 深读：最值得读全文的 0–2 个结果编号（deep_read），例如百科、维基或有表格、名单的页面。\n\
         只使用给出的编号。只输出一个 JSON 对象：\n\
         {\"relevant\": [1], \"entities\": [\"实体\"], \"multi_anchor_hits\": [1], \"candidates\": [{\"name\": \"候选\", \"status\": \"?\"}], \"deductions\": [\"推测：…\"], \"encyclopedia\": [\"实体名\"], \"deep_read\": [1], \"notes\": \"关键发现\"}"
            .to_string()
    } else {
        "You analyse one research branch (chain of thought): read the search results for a sub-question and reflect. Steps:\n\
         1. Relevance: which numbered results bear on the sub-question (relevant).\n\
         2. Entities: concrete names of people, works, organisations in the results, as written (entities). This is the most important step.\n\
         3. Multi-anchor hits: numbers of results that mention several anchors of the original question at once (multi_anchor_hits); they are worth the most. Beware of namesakes.\n\
         4. Candidates: when the results hold a set of candidates, mark each ✓ verified / ✗ excluded / ? to verify (candidates).\n\
         5. Deductions: infer the unknown from the known (elimination and the like); start each with \"Speculation:\" (deductions).\n\
         6. Encyclopedia: the 1–2 entities most worth checking in an encyclopedia, as bare entity names (encyclopedia). Wrong: \"who voiced Cat's Eye\"; right: \"Cat's Eye\".\n\
         7. Deep-read: 0–2 result numbers most worth reading in full (deep_read), such as encyclopedia pages or pages with tables or lists.\n\
         Use only the numbers given. Output one JSON object:\n\
         {\"relevant\": [1], \"entities\": [\"entity\"], \"multi_anchor_hits\": [1], \"candidates\": [{\"name\": \"candidate\", \"status\": \"?\"}], \"deductions\": [\"Speculation: …\"], \"encyclopedia\": [\"entity\"], \"deep_read\": [1], \"notes\": \"key findings\"}"
            .to_string()
    }
}

/// The question, the sub-question, then labelled sections (`(zh label, en label, text)`):
/// what a branch's reflect and evidence steps read.
fn branch_user(
    zh: bool,
    question: &str,
    sub_question: &str,
    sections: &[(&str, &str, &str)],
) -> String {
    let mut out = if zh {
        format!("原始问题：{question}\n子问题：{sub_question}")
    } else {
        format!("Original question: {question}\nSub-question: {sub_question}")
    };
    for (zh_label, en_label, text) in sections {
        let label = if zh { zh_label } else { en_label };
        out.push_str(&format!("\n\n{label}\n{text}"));
    }
    out
}

pub fn reflect_user(zh: bool, question: &str, sub_question: &str, results: &str) -> String {
    branch_user(
        zh,
        question,
        sub_question,
        &[("搜索结果：", "Search results:", results)],
    )
}

pub fn evidence_system(zh: bool) -> String {
    if zh {
        "你把一个研究分支的发现浓缩成一条证据陈述。要求：\n\
         1. 一句陈述性语句，回答子问题；保留具体实体名称（原文名和中文名都写上）。\n\
         2. 反思中的推断必须纳入陈述，并标注\"推测\"。\n\
         3. 保留候选验证进度（哪些已验证、哪些已排除、哪些待验证）。\n\
         4. sources 列出陈述所依据的结果编号，只能使用给出的编号。\n\
         5. reliability：多个来源一致或百科证实为 high；单一可靠来源为 medium；推测或来源薄弱为 low。\n\
         只输出一个 JSON 对象：{\"statement\": \"证据陈述\", \"reliability\": \"high\", \"sources\": [1, 2]}"
            .to_string()
    } else {
        "You condense one research branch's findings into one evidence statement. Requirements:\n\
         1. One declarative sentence answering the sub-question; keep concrete entity names (original and translated forms).\n\
         2. Deductions from the reflection must be kept and marked \"speculation\".\n\
         3. Keep the progress of candidate checks (verified, excluded, still to verify).\n\
         4. sources lists the result numbers the statement rests on; use only the numbers given.\n\
         5. reliability: high when several sources agree or an encyclopedia confirms; medium for one reliable source; low for speculation or weak sources.\n\
         Output one JSON object: {\"statement\": \"evidence statement\", \"reliability\": \"high\", \"sources\": [1, 2]}"
            .to_string()
    }
}

pub fn evidence_user(
    zh: bool,
    question: &str,
    sub_question: &str,
    reflection: &str,
    material: &str,
) -> String {
    branch_user(
        zh,
        question,
        sub_question,
        &[
            ("反思：", "Reflection:", reflection),
            (
                "资料（编号即可引用的编号）：",
                "Material (the numbers are the ones you may cite):",
                material,
            ),
        ],
    )
}

pub fn verify_system(zh: bool) -> String {
    if zh {
        "你评估研究的推理链是否完整（思维图）：把证据连成一条从锚点通向答案的推理链。\n\
         判断标准是逻辑，而不是百分比：能从证据合乎逻辑地推出问题的确切答案，就是充分；几条高质量证据可能就够了。\n\
         不充分时，说明推理链断在哪里（chain 里写清缺口），用一句话写出还缺什么证据（missing），并列出应当放弃的无效方向（prune），例如反复搜索都没有结果的方向。\n\
         只输出一个 JSON 对象：{\"sufficient\": false, \"chain\": \"锚点 → 证据 [3] → … → 缺口\", \"missing\": \"还缺的证据\", \"prune\": [\"无效方向\"]}"
            .to_string()
    } else {
        "You judge whether the research's reasoning chain is complete (graph of thought): link the evidence into a chain from the anchors to the answer.\n\
         The test is logic, not a percentage: if the exact answer follows logically from the evidence, it is sufficient; a few strong pieces may be enough.\n\
         When it is not sufficient, say where the chain breaks (write the gaps in chain), say in one sentence what evidence is still missing (missing), and list the directions to abandon (prune), such as directions that kept finding nothing.\n\
         Output one JSON object: {\"sufficient\": false, \"chain\": \"anchor → evidence [3] → … → gap\", \"missing\": \"the evidence still missing\", \"prune\": [\"dead-end direction\"]}"
            .to_string()
    }
}

/// The question, the reasoning chain so far (for the summary) and the evidence lines:
/// what the verify and summary steps read.
pub fn chain_user(zh: bool, question: &str, chain: Option<&str>, evidence: &[String]) -> String {
    let lines = evidence.join("\n");
    let chain = match (chain, zh) {
        (None, _) => String::new(),
        (Some(chain), true) => format!("推理链：{chain}\n\n"),
        (Some(chain), false) => format!("Reasoning chain: {chain}\n\n"),
    };
    if zh {
        format!("原始问题：{question}\n\n{chain}证据（方括号内是来源编号）：\n{lines}")
    } else {
        format!("Original question: {question}\n\n{chain}Evidence (source numbers in brackets):\n{lines}")
    }
}

pub fn summary_system(zh: bool) -> String {
    if zh {
        "你根据推理链推导最终答案（思维链）：按逻辑顺序排列证据，逐步推导，给出问题的确切答案。\n\
         answer 是结论本身，尽可能短（一个名字、一个数字、一个短语）；confidence 是 high、medium 或 low；reasoning 写推导过程，引用证据的来源编号如 [3]。\n\
         证据不完整时给出最佳推断，并降低 confidence。\n\
         只输出一个 JSON 对象：{\"answer\": \"确切答案\", \"confidence\": \"medium\", \"reasoning\": \"推导过程 [3]\"}"
            .to_string()
    } else {
        "You derive the final answer from the reasoning chain (chain of thought): order the evidence logically, reason step by step, and give the exact answer.\n\
         answer is the conclusion itself, as short as possible (a name, a number, a phrase); confidence is high, medium or low; reasoning shows the derivation, citing source numbers like [3].\n\
         When the evidence is incomplete, give the best inference and lower the confidence.\n\
         Output one JSON object: {\"answer\": \"exact answer\", \"confidence\": \"medium\", \"reasoning\": \"derivation [3]\"}"
            .to_string()
    }
}

/// The last, streamed step: the explanation under the 结论 line, citing registry numbers.
pub fn format_system(zh: bool) -> String {
    if zh {
        "你是 cited。根据研究得到的结论、推导和证据，用中文写出简洁的解释（不要重复\"结论\"这一行，它已经显示在上方）。\n\
         每个来自证据的论断后紧跟来源编号，格式为 [3] 或 [3][5]；只使用下面给出的编号，不要编造编号，不要写出网址。推测的内容要说明是推测。"
            .to_string()
    } else {
        "You are cited. From the research's conclusion, derivation and evidence, write a concise explanation in the language of the question (do not repeat the conclusion line; it is shown above).\n\
         Put the source number right after each claim taken from the evidence, as [3] or [3][5]; use only the numbers given below, never invent numbers or write URLs. Say so when something is speculation."
            .to_string()
    }
}

pub fn format_user(
    zh: bool,
    question: &str,
    conclusion: &str,
    reasoning: &str,
    evidence: &[String],
    sources: &str,
) -> String {
    let lines = evidence.join("\n");
    if zh {
        format!("问题：{question}\n结论：{conclusion}\n推导：{reasoning}\n\n证据：\n{lines}\n\n来源：\n{sources}")
    } else {
        format!("Question: {question}\nConclusion: {conclusion}\nDerivation: {reasoning}\n\nEvidence:\n{lines}\n\nSources:\n{sources}")
    }
}

/// The example values the prompts above show in their JSON shapes. A reply that gives one
/// back as its content echoed the example instead of answering; it is read as unreadable.
pub const PLACEHOLDERS: &[&str] = &[
    "自包含的子问题",
    "搜索查询",
    "self-contained sub-question",
    "search query",
    "证据陈述",
    "evidence statement",
    "锚点 → 证据 [3] → … → 缺口",
    "anchor → evidence [3] → … → gap",
    "还缺的证据",
    "the evidence still missing",
    "确切答案",
    "exact answer",
    "推导过程 [3]",
    "derivation [3]",
];

/// Whether `value` is one of the prompts' example values (case, spaces and final
/// punctuation aside).
pub fn is_placeholder(value: &str) -> bool {
    let normal = |text: &str| {
        text.trim()
            .trim_end_matches(['.', '。', '!', '！'])
            .trim()
            .to_lowercase()
    };
    let value = normal(value);
    !value.is_empty() && PLACEHOLDERS.iter().any(|p| normal(p) == value)
}

/// Sent once when a reply could not be read, with the reason.
pub fn retry(zh: bool, error: &str) -> String {
    if zh {
        format!(
            "上面的回复无法解析：{error}。请只输出一个符合要求格式的 JSON 对象，不要输出其他文字。"
        )
    } else {
        format!("The reply above could not be parsed: {error}. Output only one JSON object in the required shape, nothing else.")
    }
}

/// The JSON schemas the thinker's replies must follow where the server enforces
/// `response_format` (llama.cpp turns them into a grammar). Strings and lists are bounded
/// so a small model cannot loop inside one; the prompts above describe the same shapes.
pub mod schemas {
    use serde_json::{json, Value};

    use crate::ssr::llm::Schema;

    fn text(max: u32) -> Value {
        json!({ "type": "string", "maxLength": max })
    }

    fn texts(items: u32, max: u32) -> Value {
        json!({ "type": "array", "items": text(max), "maxItems": items })
    }

    fn numbers(items: u32) -> Value {
        json!({ "type": "array", "items": { "type": "integer", "minimum": 1 }, "maxItems": items })
    }

    /// Every property is required (OpenAI's strict mode wants that; a model can always
    /// write an empty list or string).
    fn object(properties: Value) -> Value {
        let required: Vec<String> = properties
            .as_object()
            .map(|p| p.keys().cloned().collect())
            .unwrap_or_default();
        json!({
            "type": "object",
            "properties": properties,
            "required": required,
            "additionalProperties": false,
        })
    }

    fn level() -> Value {
        json!({ "type": "string", "enum": ["high", "medium", "low"] })
    }

    pub fn plan() -> Schema {
        let sub_question = object(json!({
            "question": text(300),
            "query": text(200),
            "language": { "type": "string", "enum": ["zh", "en"] },
            "purpose": text(200),
        }));
        Schema {
            name: "research_plan",
            schema: object(json!({
                "anchors": texts(8, 100),
                "sub_questions": { "type": "array", "items": sub_question, "maxItems": 4 },
            })),
        }
    }

    pub fn reflection() -> Schema {
        let candidate = object(
            json!({ "name": text(100), "status": { "type": "string", "enum": ["✓", "✗", "?"] } }),
        );
        Schema {
            name: "branch_reflection",
            schema: object(json!({
                "relevant": numbers(20),
                "entities": texts(10, 100),
                "multi_anchor_hits": numbers(20),
                "candidates": { "type": "array", "items": candidate, "maxItems": 10 },
                "deductions": texts(5, 300),
                "encyclopedia": texts(2, 100),
                "deep_read": numbers(2),
                "notes": text(500),
            })),
        }
    }

    pub fn evidence() -> Schema {
        Schema {
            name: "branch_evidence",
            schema: object(
                json!({ "statement": text(600), "reliability": level(), "sources": numbers(10) }),
            ),
        }
    }

    pub fn verdict() -> Schema {
        Schema {
            name: "chain_verdict",
            schema: object(
                json!({ "sufficient": { "type": "boolean" }, "chain": text(800), "missing": text(300), "prune": texts(4, 200) }),
            ),
        }
    }

    pub fn summary() -> Schema {
        Schema {
            name: "research_summary",
            schema: object(
                json!({ "answer": text(300), "confidence": level(), "reasoning": text(1200) }),
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_placeholder_is_an_example_the_prompts_show() {
        let prompts: String = [true, false]
            .into_iter()
            .flat_map(|zh| {
                [
                    plan_system(zh),
                    evidence_system(zh),
                    verify_system(zh),
                    summary_system(zh),
                ]
            })
            .collect();
        for placeholder in PLACEHOLDERS {
            assert!(
                prompts.contains(&format!("\"{placeholder}\"")),
                "{placeholder} is not an example value of any prompt"
            );
        }
        assert!(is_placeholder(" Exact answer. "));
        assert!(is_placeholder("确切答案。"));
        assert!(!is_placeholder("Tokio"));
        assert!(!is_placeholder(""));
    }
}
