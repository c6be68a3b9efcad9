//! Every prompt cited sends to a model, in one place. Each comes in the question's language,
//! which also nudges the model to answer in it.

pub mod research;

use crate::ssr::llm::Message;
use crate::text::has_han;

/// What the Chat prompt says about search.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChatSearch {
    /// The switch is off: no search was made.
    Off,
    /// Numbered results follow.
    Results,
    /// The search found nothing.
    NoResults,
    /// The search failed.
    Failed,
}

/// The Chat system prompt (seed 003 搜索结果处理): numbered results with title, source and
/// snippet follow it; the model cites them as `[n]`.
pub fn chat_system(question: &str, search: ChatSearch) -> String {
    let zh = has_han(question);
    let base = if zh {
        "你是 cited，一个严谨、简洁的问答助手。请使用与用户问题相同的语言回答（用户用中文提问就用中文回答）。"
    } else {
        "You are cited, a careful and concise assistant. Answer in the language of the user's question."
    };
    let search_part = match (search, zh) {
        (ChatSearch::Off, _) => "",
        (ChatSearch::Results, true) => {
            "\n\n下面是针对用户问题的网络搜索结果，每条都有编号、标题、来源和摘要。回答要求：\n\
             1. 优先依据搜索结果回答，每个来自搜索结果的论断后面紧跟来源编号，格式为 [1] 或 [1][3]。\n\
             2. 只使用下面列出的编号，不要编造编号，不要写出网址。\n\
             3. 搜索结果不足以回答时如实说明，可以补充你自己的知识，但这部分不要加编号。\n\n搜索结果："
        }
        (ChatSearch::Results, false) => {
            "\n\nBelow are web search results for the user's question, each with a number, title, source and snippet. When you answer:\n\
             1. Base the answer on the results and put the source number right after each claim taken from them, as [1] or [1][3].\n\
             2. Use only the numbers listed below; never invent numbers and never write URLs.\n\
             3. If the results are not enough, say so; you may add your own knowledge, without numbers.\n\nSearch results:"
        }
        (ChatSearch::NoResults, true) => {
            "\n\n本次网络搜索没有找到相关结果。请基于你自己的知识回答，并提醒用户这些内容未经搜索核实。不要使用 [n] 形式的引用编号。"
        }
        (ChatSearch::NoResults, false) => {
            "\n\nThe web search found no relevant results. Answer from your own knowledge and tell the user it was not verified by search. Do not use [n] citation numbers."
        }
        (ChatSearch::Failed, true) => {
            "\n\n网络搜索暂时不可用。请基于你自己的知识回答，并提醒用户这些内容未经搜索核实。不要使用 [n] 形式的引用编号。"
        }
        (ChatSearch::Failed, false) => {
            "\n\nWeb search is unavailable right now. Answer from your own knowledge and tell the user it was not verified by search. Do not use [n] citation numbers."
        }
    };
    format!("{base}{search_part}")
}

/// The Agent's search tool, named and described exactly as seed 003 (搜索工具描述) words it.
pub fn web_search_tool() -> crate::ssr::llm::ToolSpec {
    crate::ssr::llm::ToolSpec {
        name: "web_search".to_string(),
        description:
            "搜索互联网获取实时信息。当需要了解最新事件、实时数据、当前新闻或验证信息时使用此工具。"
                .to_string(),
        parameters: serde_json::json!({
            "type": "object",
            "properties": {
                "query": {
                    "type": "string",
                    "description": "搜索查询关键词,应该具体、清晰、针对性强",
                    "examples": ["2026年诺贝尔物理学奖得主", "Rust 1.90 release notes", "量子计算 纠错 最新进展"]
                }
            },
            "required": ["query"]
        }),
    }
}

/// The Agent system prompt: when and how to search, and how to cite the global numbers.
/// Asks for a conversation's title, in the question's language.
pub fn title_messages(question: &str, answer: &str) -> Vec<Message> {
    let answer: String = answer.chars().take(1200).collect();
    let system = if has_han(question) {
        "为这段对话写一个标题：不超过 12 个字，与问题同一种语言，不加引号、标点结尾或编号。只输出标题。"
    } else {
        "Write a title for this conversation: at most 8 words, in the language of the question, without quotes, final punctuation or citation numbers. Reply with the title only."
    };
    vec![
        Message::System(system.to_string()),
        Message::User(format!("{question}\n\n{answer}")),
    ]
}

/// Asks for three short follow-up questions, one per line, in the question's language.
pub fn related_messages(question: &str, answer: &str) -> Vec<Message> {
    let answer: String = answer.chars().take(1500).collect();
    let system = if has_han(question) {
        "根据这段问答，写 3 个用户接下来可能会问的简短追问：与问题同一种语言，每行一个，不加编号、引号或引用编号，每个不超过 30 个字。只输出这 3 行。"
    } else {
        "Write 3 short follow-up questions the user might ask next about this exchange: in the language of the question, one per line, without numbering, quotes or citation numbers, at most 15 words each. Reply with the 3 lines only."
    };
    vec![
        Message::System(system.to_string()),
        Message::User(format!("{question}\n\n{answer}")),
    ]
}

pub fn agent_system(question: &str) -> String {
    if has_han(question) {
        "你是 cited，一个会使用工具的严谨助手。请使用与用户问题相同的语言回答。\n\
         需要最新事件、实时数据、当前新闻或需要核实信息时，调用 web_search 工具；可以多次搜索，每次使用具体、清晰的关键词，\
         例如 {\"query\": \"2026年诺贝尔物理学奖得主\"}，不要用“它”“这个”之类的指代词。\n\
         搜索结果的每一条都带有编号，格式为 “[编号] 标题 - 网址” 加摘要。回答时在依据搜索结果的论断后紧跟编号，例如 [6] 或 [6][8]；\
         只使用搜索结果给出的编号，不要编造编号，不要写出网址。信息足够时直接给出最终回答。"
            .to_string()
    } else {
        "You are cited, a careful assistant that can use tools. Answer in the language of the user's question.\n\
         When you need recent events, live data, current news or to verify a fact, call the web_search tool. You may search \
         several times; use specific, self-contained queries such as {\"query\": \"Rust 1.90 release notes\"}, never pronouns.\n\
         Each search result carries a number, as \"[number] title - URL\" plus a snippet. In your answer put the number right after \
         each claim taken from a result, as [6] or [6][8]; use only numbers the results gave you, never invent numbers or write URLs. \
         Answer as soon as you have enough."
            .to_string()
    }
}

/// What the tool answers once the search cap is reached (never an error).
pub fn search_cap_reached(question: &str, cap: usize) -> String {
    if has_han(question) {
        format!(
            "本次回答的搜索次数已达上限（{cap} 次）。请不要再搜索，根据已有的搜索结果直接回答。"
        )
    } else {
        format!("The search limit for this answer ({cap} searches) is reached. Do not search again; answer now from the results you have.")
    }
}
