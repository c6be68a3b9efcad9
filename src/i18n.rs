//! Every user-facing string of the UI, in one place. zh-CN is the default and carries the
//! seeds' exact strings; PRODUCT.md's UI contract relies on these accessible names.

use serde::{Deserialize, Serialize};

use crate::model::Mode;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum Lang {
    #[default]
    ZhCn,
    En,
}

/// The strings of one UI language.
#[derive(Debug)]
pub struct Texts {
    pub html_lang: &'static str,
    pub app_title: &'static str,
    pub tagline: &'static str,
    pub ask: &'static str,
    pub ask_placeholder: &'static str,
    pub send: &'static str,
    pub stop: &'static str,
    pub mode: &'static str,
    pub settings: &'static str,
    pub conversation: &'static str,
    pub empty_conversation: &'static str,
    pub search_switch: &'static str,
    pub search_switch_help: &'static str,
    pub search_switch_auto: &'static str,
    pub search_switch_auto_research: &'static str,
    pub search_on_confirmed: &'static str,
    pub search_off_confirmed: &'static str,
    pub mode_confirmed: &'static str,
    pub save_failed: &'static str,
    pub no_script: &'static str,
    pub searxng_checking: &'static str,
    pub searxng_ok: &'static str,
    pub searxng_bad: &'static str,
    pub recheck: &'static str,
    pub searching: &'static str,
    pub generating: &'static str,
    pub no_results: &'static str,
    pub empty_question: &'static str,
    pub question_too_long: &'static str,
    pub busy: &'static str,
    pub reset_done: &'static str,
    pub unknown_command: &'static str,
    pub offline_label: &'static str,
    pub you: &'static str,
    pub assistant: &'static str,
    pub references: &'static str,
    pub references_agent: &'static str,
    pub all_results: &'static str,
    pub copy: &'static str,
    pub copied: &'static str,
    pub stopped: &'static str,
    pub citation: &'static str,
    pub open_source: &'static str,
    pub show_references: &'static str,
    pub knowledge_label: &'static str,
    pub no_tools: &'static str,
    pub steps: &'static str,
    pub step_search: &'static str,
    pub step_results: &'static str,
    pub step_cached: &'static str,
    pub step_failed: &'static str,
    pub step_capped: &'static str,
    pub round_heading: &'static str,
    pub registry_conflict: &'static str,
}

pub const ZH_CN: Texts = Texts {
    html_lang: "zh-CN",
    app_title: "cited",
    tagline: "每一句回答都有出处",
    ask: "提问",
    ask_placeholder: "输入问题，Enter 发送，Shift+Enter 换行",
    send: "发送",
    stop: "停止",
    mode: "模式",
    settings: "设置",
    conversation: "对话记录",
    empty_conversation: "提出一个问题，回答中的每个论断都会链接到它的来源。",
    search_switch: "联网搜索",
    search_switch_help: "启用后将使用SearXNG搜索实时信息",
    search_switch_auto: "Agent 模式下由 AI 自动决策搜索",
    search_switch_auto_research: "深度研究模式下由 AI 自动决策搜索",
    search_on_confirmed: "已开启联网搜索",
    search_off_confirmed: "已关闭联网搜索",
    mode_confirmed: "已切换到",
    save_failed: "设置未能保存",
    no_script: "此页面需要 JavaScript 才能提问；设置和对话记录仍可查看。",
    searxng_checking: "正在检查 SearXNG…",
    searxng_ok: "SearXNG 正常",
    searxng_bad: "SearXNG 不可用",
    recheck: "重新检查",
    searching: "正在搜索…",
    generating: "正在生成回答…",
    no_results: "未找到相关搜索结果，本次回答基于模型自身知识，未经搜索核实。",
    empty_question: "请输入问题。",
    question_too_long: "问题太长：最多 {max} 个字符，当前 {len} 个。",
    busy: "上一个回答还在生成中：请等它完成，或按“停止”。",
    reset_done: "已重置：对话、引用编号和搜索缓存都已清空，编号将从 1 重新开始。",
    unknown_command: "未知命令 {command}。可用命令：/reset —— 清空对话、引用编号和搜索缓存。",
    offline_label: "离线抽取模式（未配置语言模型）",
    you: "你",
    assistant: "cited",
    references: "参考文献",
    references_agent: "引用文章列表",
    all_results: "全部检索结果",
    copy: "复制",
    copied: "已复制",
    stopped: "已停止",
    citation: "引用",
    open_source: "打开来源",
    show_references: "参考文献",
    knowledge_label: "知识库",
    no_tools: "当前模型不支持工具调用，已改为先搜索再回答。",
    steps: "步骤",
    step_search: "搜索",
    step_results: "条结果",
    step_cached: "（缓存）",
    step_failed: "失败",
    step_capped: "已达搜索上限，让模型直接回答",
    round_heading: "第 {n} 次搜索",
    registry_conflict: "检测到引用编号冲突，已自动修复；之前回答中的编号可能已变化。",
};

pub const EN: Texts = Texts {
    html_lang: "en",
    app_title: "cited",
    tagline: "Every answer shows where it came from",
    ask: "Ask",
    ask_placeholder: "Ask a question. Enter sends, Shift+Enter adds a line",
    send: "Send",
    stop: "Stop",
    mode: "Mode",
    settings: "Settings",
    conversation: "Conversation",
    empty_conversation: "Ask a question: every claim in the answer links to its source.",
    search_switch: "Web search",
    search_switch_help: "When on, cited searches SearXNG for current information",
    search_switch_auto: "In Agent mode the AI decides when to search",
    search_switch_auto_research: "In Research mode the AI decides when to search",
    search_on_confirmed: "Web search is on",
    search_off_confirmed: "Web search is off",
    mode_confirmed: "Switched to",
    save_failed: "The setting was not saved",
    no_script: "Asking needs JavaScript; settings and the conversation stay readable.",
    searxng_checking: "Checking SearXNG…",
    searxng_ok: "SearXNG is working",
    searxng_bad: "SearXNG is unavailable",
    recheck: "Check again",
    searching: "Searching…",
    generating: "Writing the answer…",
    no_results: "The search found nothing relevant; this answer comes from the model's own knowledge, not verified by search.",
    empty_question: "Type a question first.",
    question_too_long: "The question is too long: at most {max} characters, this one has {len}.",
    busy: "The previous answer is still being written: wait for it, or press Stop.",
    reset_done: "Reset: the conversation, citation numbers and search cache are cleared; numbering starts again at 1.",
    unknown_command: "Unknown command {command}. Commands: /reset clears the conversation, citation numbers and search cache.",
    offline_label: "Offline extractive mode (no language model configured)",
    you: "You",
    assistant: "cited",
    references: "References",
    references_agent: "Cited articles",
    all_results: "All retrieved results",
    copy: "Copy",
    copied: "Copied",
    stopped: "Stopped",
    citation: "Citation",
    open_source: "Open source",
    show_references: "References",
    knowledge_label: "Knowledge base",
    no_tools: "This model cannot call tools: cited searched first and then asked it.",
    steps: "Steps",
    step_search: "Search",
    step_results: "results",
    step_cached: " (cached)",
    step_failed: "failed",
    step_capped: "search limit reached, the model answers now",
    round_heading: "Search {n}",
    registry_conflict: "Citation numbers conflicted and were repaired; numbers in earlier answers may have changed.",
};

impl Lang {
    pub fn texts(self) -> &'static Texts {
        match self {
            Lang::ZhCn => &ZH_CN,
            Lang::En => &EN,
        }
    }

    pub fn mode_name(self, mode: Mode) -> &'static str {
        match (self, mode) {
            (Lang::ZhCn, Mode::Chat) => "对话",
            (Lang::ZhCn, Mode::Agent) => "智能体",
            (Lang::ZhCn, Mode::Research) => "深度研究",
            (Lang::En, Mode::Chat) => "Chat",
            (Lang::En, Mode::Agent) => "Agent",
            (Lang::En, Mode::Research) => "Research",
        }
    }
}

/// One line of an Agent trace: `搜索 "q" → 5 条结果 [1]–[5]`, cache hits and failures
/// marked. Used by the page and by `cited ask`.
pub fn step_line(step: &crate::model::Step, t: &Texts) -> String {
    use crate::model::Step;
    match step {
        Step::Search {
            query,
            results,
            first,
            last,
            cached,
            error,
        } => {
            let mut text = format!("{} \"{query}\" → ", t.step_search);
            match (error, first, last) {
                (Some(error), _, _) => text.push_str(&format!("{}：{error}", t.step_failed)),
                (None, Some(first), Some(last)) => {
                    text.push_str(&format!("{results} {} [{first}]–[{last}]", t.step_results))
                }
                (None, _, _) => text.push_str(&format!("0 {}", t.step_results)),
            }
            if *cached {
                text.push_str(t.step_cached);
            }
            text
        }
        Step::Capped { query } => format!("{} \"{query}\" → {}", t.step_search, t.step_capped),
        Step::Thought { text } => text.trim().to_string(),
    }
}
