//! Every prompt cited sends to a model, in one place. Each comes in the question's language,
//! which also nudges the model to answer in it.

use crate::ssr::search::has_han;

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
