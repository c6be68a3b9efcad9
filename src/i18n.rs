//! Every user-facing string of the UI, in one place. zh-CN is the default and carries the
//! seeds' exact strings; PRODUCT.md's UI contract relies on these accessible names.

use crate::model::{Lang, Mode};

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
    /// Closes the settings sheet or the history drawer (phones).
    pub close: &'static str,
    pub conversation: &'static str,
    pub empty_conversation: &'static str,
    /// The empty page's card when neither SearXNG nor a model is there: its heading, what
    /// answers come from, and how to turn on the web and a model.
    pub first_run_title: &'static str,
    pub first_run_body: &'static str,
    pub first_run_fix: &'static str,
    /// Example questions the knowledge base answers offline, and their list's name.
    pub examples_label: &'static str,
    pub examples: [&'static str; 3],
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
    /// `/search on|off` answered, and `/search` without `on` or `off`.
    pub search_command_on: &'static str,
    pub search_command_off: &'static str,
    pub search_command_usage: &'static str,
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
    pub file_label: &'static str,
    pub add_files: &'static str,
    pub files_label: &'static str,
    pub file_added: &'static str,
    pub file_removed: &'static str,
    /// A conversation at `CITED_MAX_EXCHANGES` (`{max}`) questions.
    pub conversation_full: &'static str,
    pub file_not_found: &'static str,
    /// The button that takes `{name}` out of the conversation.
    pub remove_file: &'static str,
    pub file_unsupported: &'static str,
    pub file_too_large: &'static str,
    pub file_no_text: &'static str,
    pub file_unreadable: &'static str,
    /// A file whose reader ran out of memory or time.
    pub file_too_costly: &'static str,
    pub file_too_many: &'static str,
    pub no_tools: &'static str,
    /// Accounts: the sign-in page and the signed-in line.
    pub sign_in_title: &'static str,
    pub user_name: &'static str,
    pub password: &'static str,
    pub sign_in: &'static str,
    pub sign_in_failed: &'static str,
    pub sign_in_throttled: &'static str,
    /// `{name}`: the user.
    pub signed_in_as: &'static str,
    pub sign_out: &'static str,
    pub sign_out_everywhere: &'static str,
    /// A question refused because the user's stored conversations reached the quota.
    pub quota_full: &'static str,
    /// A question refused by the per-user rate limit; `{secs}`: when to try again.
    pub asking_too_fast: &'static str,
    pub not_saved: &'static str,
    /// The answer reached `CITED_MAX_ANSWER_KB` (`{max}` bytes).
    pub answer_too_long: &'static str,
    pub history: &'static str,
    pub new_chat: &'static str,
    pub search_history: &'static str,
    pub today: &'static str,
    pub yesterday: &'static str,
    pub earlier: &'static str,
    pub rename: &'static str,
    pub delete: &'static str,
    pub undo: &'static str,
    pub deleted_conversation: &'static str,
    pub share: &'static str,
    pub unshare: &'static str,
    pub share_link: &'static str,
    pub export: &'static str,
    /// The sources a conversation cites as BibTeX, RIS or CSL-JSON.
    pub export_citations: &'static str,
    pub title_empty: &'static str,
    pub no_conversations: &'static str,
    pub no_matches: &'static str,
    pub not_found: &'static str,
    /// Above a conversation whose earlier questions are not shown yet; `{n}`: how many.
    pub earlier_questions: &'static str,
    pub shared_label: &'static str,
    pub interrupted: &'static str,
    pub save: &'static str,
    pub cancel: &'static str,
    pub title_label: &'static str,
    pub search: &'static str,
    pub steps: &'static str,
    pub step_search: &'static str,
    pub step_results: &'static str,
    pub step_cached: &'static str,
    pub step_failed: &'static str,
    pub step_capped: &'static str,
    pub round_heading: &'static str,
    pub registry_conflict: &'static str,
    pub query_label: &'static str,
    /// `{reason}`: why SearXNG could not be used, and the fix.
    pub knowledge_fallback: &'static str,
    pub knowledge_missing: &'static str,
    /// A long document's page: the part shown (`{from}`, `{to}`, `{total}`) and the links
    /// to the parts before and after.
    pub passages_shown: &'static str,
    pub earlier_passages: &'static str,
    pub later_passages: &'static str,
    pub sources_label: &'static str,
    pub sources_auto: &'static str,
    pub sources_web: &'static str,
    pub sources_knowledge: &'static str,
    pub sources_both: &'static str,
    pub sources_help: &'static str,
    pub language_label: &'static str,
    pub sources_confirmed: &'static str,
    pub research_no_results: &'static str,
    pub research_encyclopedia: &'static str,
    pub research_timeout: &'static str,
    pub research_branch_crashed: &'static str,
    pub research_planning: &'static str,
    pub research_branches: &'static str,
    pub research_verifying: &'static str,
    pub research_summarising: &'static str,
    pub research_plan: &'static str,
    pub research_loop: &'static str,
    pub status_pending: &'static str,
    pub status_running: &'static str,
    pub status_done: &'static str,
    pub status_failed: &'static str,
    pub status_pruned: &'static str,
    pub reliability: &'static str,
    pub level_high: &'static str,
    pub level_medium: &'static str,
    pub level_low: &'static str,
    pub evidence: &'static str,
    pub evidence_chain: &'static str,
    pub verdict_sufficient: &'static str,
    pub verdict_insufficient: &'static str,
    pub pruned_directions: &'static str,
    pub conclusion: &'static str,
    pub confidence: &'static str,
    pub checked_in_encyclopedia: &'static str,
    pub read_in_full: &'static str,
    pub sub_question_label: &'static str,
    pub stop_sufficient: &'static str,
    pub stop_loop_cap: &'static str,
    pub stop_no_new_evidence: &'static str,
    pub stop_all_failed: &'static str,
    pub stop_nothing_to_plan: &'static str,
    pub stop_stopped: &'static str,
    pub stop_deadline: &'static str,
    pub cut_deadline: &'static str,
    pub cut_repetition: &'static str,
    /// `cited ask` on a terminal, after text the model took back: the answer follows anew.
    pub answer_reprinted: &'static str,
    pub cut_length: &'static str,
    pub research_deadline: &'static str,
    /// Research loops ended without a sufficient chain: the conclusion is a guess.
    pub research_best_guess: &'static str,
    /// `{missing}`: what the verifier said is still missing.
    pub research_missing: &'static str,
    pub research_degraded: &'static str,
    pub research_step_plan: &'static str,
    pub research_step_reflect: &'static str,
    pub research_step_evidence: &'static str,
    pub research_step_verify: &'static str,
    pub research_step_summary: &'static str,
    pub research_step_cut: &'static str,
    pub uncited_warning: &'static str,
    pub unsearched_note: &'static str,
    pub search_and_answer_again: &'static str,
    pub coverage_line: &'static str,
    /// "引用支持：{supported}/{checked}": citations whose source states their sentence.
    pub support_line: &'static str,
    pub aligning: &'static str,
    pub relating: &'static str,
    /// 网页, 学术, 讨论, 新闻, 代码 (in `Focus::ALL` order).
    pub focus_names: [&'static str; 5],
    /// Past day, week, month, year (in `Period::ALL` order).
    pub period_names: [&'static str; 4],
    pub filters: &'static str,
    /// The focus picker's label, and its confirmation (`{focus}`).
    pub focus_label: &'static str,
    pub focus_confirmed: &'static str,
    /// The time range select's label, its "any time", and its confirmation (`{period}`).
    pub period_label: &'static str,
    pub period_any: &'static str,
    pub period_confirmed: &'static str,
    pub model_label: &'static str,
    pub model_confirmed: &'static str,
    pub site_label: &'static str,
    pub site_help: &'static str,
    pub site_confirmed: &'static str,
    pub site_cleared: &'static str,
    /// `{site}`: what `--site` was given.
    pub bad_site: &'static str,
    pub unknown_model: &'static str,
    /// The follow-up questions under an answer (a list's accessible name and heading).
    pub related_questions: &'static str,
    pub images: &'static str,
    pub image: &'static str,
    /// The answer waits its turn; `{n}` is its place in the queue.
    pub queued: &'static str,
    pub support_supported: &'static str,
    pub support_partial: &'static str,
    pub support_not_found: &'static str,
    pub support_not_checked: &'static str,
    /// Under a citation whose source does not support its sentence: `{n}` does.
    pub better_source: &'static str,
    /// Appended to the support line: how many citations could not be checked.
    pub support_line_unchecked: &'static str,
    /// A citation cited added to a claim the model left uncited (its card, its name).
    pub added_by_cited: &'static str,
    /// Appended to the coverage line: how many of the cited claims cited attributed.
    pub coverage_line_added: &'static str,
    /// The discreet mark after a claim none of the answer's sources supports.
    pub claim_unsupported: &'static str,
    /// Above the passage quoted in a citation's card.
    pub supporting_passage: &'static str,
    /// The passage came from the search snippet: the page could not be read.
    pub from_snippet: &'static str,
    /// A link that opens the page at the passage.
    pub open_at_passage: &'static str,
    pub tokens_line: &'static str,
    pub tokens_estimated: &'static str,
    pub cost_line: &'static str,
    pub reasoning: &'static str,
    pub progress_secs: &'static str,
    pub progress_tokens: &'static str,
    pub sources_retrieved: &'static str,
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
    close: "关闭",
    conversation: "对话记录",
    empty_conversation: "提出一个问题，回答中的每个论断都会链接到它的来源。",
    first_run_title: "离线运行中",
    first_run_body: "没有可用的 SearXNG，也没有配置语言模型：cited 从本地知识库（它自己的文档）中摘出原文来回答，每句都链接到出处。",
    first_run_fix: "要联网搜索并由模型写回答，请设置 CITED_SEARXNG_URL 和 CITED_LLM_BASE_URL（见 docs/configuration.md），然后运行 cited doctor 检查。",
    examples_label: "试试这些问题",
    examples: [
        "如何在 SearXNG 中启用 JSON 格式？",
        "如何启动 cited？",
        "为什么回答标注为“离线抽取模式”？",
    ],
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
    unknown_command: "未知命令 {command}。可用命令：/reset —— 清空对话、引用编号和搜索缓存；/search on 或 /search off —— 开启或关闭联网搜索。",
    search_command_on: "联网搜索已开启：对话模式下的问题会先搜索。",
    search_command_off: "联网搜索已关闭：对话模式下的问题不再搜索。",
    search_command_usage: "用法：/search on 或 /search off",
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
    file_label: "文件",
    add_files: "添加文件",
    files_label: "对话中的文件",
    file_added: "已添加 {name}：之后的回答会一并搜索它",
    file_removed: "已移除 {name}：之后的回答不再搜索它",
    conversation_full: "这个对话已有 {max} 个问题，达到上限（CITED_MAX_EXCHANGES）。请点“新对话”继续提问；这个对话仍保留在历史中。",
    file_not_found: "这个对话中没有这个文件。",
    remove_file: "移除 {name}",
    file_unsupported: "只支持 PDF、Markdown、文本、HTML 和 DOCX 文件",
    file_too_large: "文件太大：最大 {max} MB",
    file_no_text: "文件里没有可读的文字（扫描的 PDF 需要先识别文字）",
    file_unreadable: "无法读取这个文件：{reason}",
    file_too_costly: "读取这个文件所需的内存或时间超出了单个文件的限制：文件可能已损坏，或是被刻意构造的。",
    file_too_many: "一个对话最多 {max} 个文件",
    no_tools: "当前模型不支持工具调用，已改为先搜索再回答。",
    sign_in_title: "登录 cited",
    user_name: "用户名",
    password: "密码",
    sign_in: "登录",
    sign_in_failed: "用户名或密码不正确。",
    sign_in_throttled: "尝试次数过多，请稍后再试。",
    signed_in_as: "已登录：{name}",
    sign_out: "退出登录",
    sign_out_everywhere: "在所有设备上退出",
    quota_full: "你保存的对话已达到存储上限：请先删除一些对话。",
    asking_too_fast: "提问太频繁了，请 {secs} 秒后再试。",
    not_saved: "数据库不可用：这次回答不会被保存。",
    answer_too_long: "回答超过 {max} 个字节的上限，后面的部分已舍弃。",
    history: "历史对话",
    new_chat: "新对话",
    search_history: "搜索对话",
    today: "今天",
    yesterday: "昨天",
    earlier: "更早",
    rename: "重命名",
    delete: "删除",
    undo: "撤销",
    deleted_conversation: "已删除对话：{title}",
    share: "分享",
    unshare: "停止分享",
    share_link: "分享链接",
    export: "导出",
    export_citations: "导出引用",
    title_empty: "标题不能为空。",
    no_conversations: "还没有对话。",
    no_matches: "没有找到匹配的对话。",
    not_found: "找不到这个对话：它不存在、已删除，或属于另一个浏览器。",
    earlier_questions: "显示更早的问题（还有 {n} 个）",
    shared_label: "只读分享",
    interrupted: "回答被中断（服务已重启）",
    save: "保存",
    cancel: "取消",
    title_label: "标题",
    search: "搜索",
    steps: "步骤",
    step_search: "搜索",
    step_results: "条结果",
    step_cached: "（缓存）",
    step_failed: "失败",
    step_capped: "已达搜索上限，让模型直接回答",
    round_heading: "第 {n} 次搜索",
    registry_conflict: "检测到引用编号冲突，已自动修复；之前回答中的编号可能已变化。",
    query_label: "查询",
    knowledge_fallback: "SearXNG 不可用，本次改用本地知识库回答。原因：{reason}",
    knowledge_missing: "知识库中没有 {path}。",
    passages_shown: "第 {from}–{to} 段，共 {total} 段",
    earlier_passages: "← 前面的段落",
    later_passages: "后面的段落 →",
    sources_label: "来源",
    sources_auto: "自动",
    sources_web: "网页",
    sources_knowledge: "知识库",
    sources_both: "两者",
    sources_help: "自动：SearXNG 可用时搜索网页，否则使用本地知识库。",
    language_label: "界面语言",
    sources_confirmed: "来源已切换为：{sources}",
    research_no_results: "没有找到结果",
    research_encyclopedia: "百科：",
    research_timeout: "超过 {secs} 秒未完成",
    research_branch_crashed: "研究分支内部出错",
    research_planning: "第 {n} 轮：正在规划子问题…",
    research_branches: "正在并行研究 {n} 个子问题…",
    research_verifying: "正在检验推理链…",
    research_summarising: "正在推导结论…",
    research_plan: "研究计划",
    research_loop: "第 {n} 轮（最多 {max} 轮）",
    status_pending: "待处理",
    status_running: "进行中",
    status_done: "完成",
    status_failed: "失败",
    status_pruned: "已剪枝",
    reliability: "可靠性",
    level_high: "高",
    level_medium: "中",
    level_low: "低",
    evidence: "证据",
    evidence_chain: "证据链",
    verdict_sufficient: "推理链充分",
    verdict_insufficient: "推理链不充分",
    pruned_directions: "剪枝方向",
    conclusion: "结论",
    confidence: "置信度",
    checked_in_encyclopedia: "百科核实",
    read_in_full: "深读",
    sub_question_label: "子问题",
    stop_sufficient: "推理链充分，研究结束",
    stop_loop_cap: "已达到最大轮数",
    stop_no_new_evidence: "本轮没有新增证据，研究结束",
    stop_all_failed: "本轮所有分支都失败了，研究结束",
    stop_nothing_to_plan: "没有新的缺口需要研究",
    stop_stopped: "已停止",
    stop_deadline: "已达到研究时限",
    cut_deadline: "模型在 {secs} 秒内没有写完，已截断（CITED_LLM_CALL_DEADLINE_SECS）；下面是已写出的部分。",
    cut_repetition: "模型开始重复同样的内容，重复部分已截断。",
    answer_reprinted: "上面的部分文字已撤回；以下是目前的回答：",
    cut_length: "回复达到长度上限（{tokens} 个 token），已截断（{var}）。",
    research_best_guess: "现有证据不足以确证答案：下面的结论是依据已找到的证据作出的最佳推测，置信度低。",
    research_missing: "尚缺：{missing}",
    research_deadline: "研究已达到时限（{secs} 秒，CITED_RESEARCH_DEADLINE_SECS）；下面的回答基于目前找到的证据，未完成：{cut}。",
    research_degraded: "模型的{step}输出无法解析，已改用保底结果。",
    research_step_plan: "规划",
    research_step_reflect: "分析",
    research_step_evidence: "证据",
    research_step_verify: "检验",
    research_step_summary: "结论",
    research_step_cut: "{step}被截断：{why}",
    uncited_warning: "这个回答没有引用任何检索到的来源，请对照下方来源自行核实。",
    unsearched_note: "这个回答没有经过搜索，来自模型自身的知识，可能不准确。",
    search_and_answer_again: "搜索后重答",
    coverage_line: "引用覆盖：{cited}/{claims} 句",
    support_line: "来源支持：{supported}/{checked} 处引用",
    aligning: "正在核对引用…",
    relating: "正在生成相关问题…",
    focus_names: ["网页", "学术", "讨论", "新闻", "代码"],
    period_names: ["一天内", "一周内", "一月内", "一年内"],
    filters: "筛选",
    focus_label: "搜索范围",
    focus_confirmed: "搜索范围：{focus}",
    period_label: "时间范围",
    period_any: "不限时间",
    period_confirmed: "时间范围：{period}",
    model_label: "模型",
    model_confirmed: "之后的回答由 {model} 写",
    site_label: "站点",
    site_help: "只搜索这个网站，如 docs.rs；留空则不限。问题里的 site: 优先。",
    site_confirmed: "只搜索 {site}",
    site_cleared: "不限站点",
    bad_site: "「{site}」不是一个网站域名：请写成 example.org 这样的形式。",
    unknown_model: "没有可用的模型「{model}」：请写模型名，或 CITED_LLM_ENDPOINTS 中的「端点|模型」；未配置语言模型时不能选择模型。",
    related_questions: "相关问题",
    images: "图片",
    image: "图片",
    queued: "排队中，第 {n} 位",
    support_supported: "支持",
    support_partial: "部分支持",
    support_not_found: "未找到支持",
    support_not_checked: "未能核对",
    better_source: "来源 [{n}] 支持此句",
    support_line_unchecked: "，{n} 处未能核对",
    added_by_cited: "由 cited 补充",
    coverage_line_added: "，其中 {n} 处由 cited 补充",
    claim_unsupported: "没有来源支持此句",
    supporting_passage: "来源中的相关段落",
    from_snippet: "（网页无法读取，取自搜索摘要）",
    open_at_passage: "在原文中打开此段",
    tokens_line: "{tokens} 个 token",
    tokens_estimated: "约 {tokens} 个 token",
    cost_line: "费用 {cost}",
    reasoning: "思考过程",
    progress_secs: "{secs} 秒",
    progress_tokens: "{secs} 秒 · {tokens} 个 token",
    sources_retrieved: "检索到的来源",
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
    close: "Close",
    conversation: "Conversation",
    empty_conversation: "Ask a question: every claim in the answer links to its source.",
    first_run_title: "Running offline",
    first_run_body: "No SearXNG answers and no model is configured: cited answers from its local knowledge base (its own documentation), quoting the passages it cites.",
    first_run_fix: "To search the web and have a model write the answers, set CITED_SEARXNG_URL and CITED_LLM_BASE_URL (see docs/configuration.md), then run cited doctor to check them.",
    examples_label: "Try these questions",
    examples: [
        "How do I run the tests?",
        "How do I enable JSON output in SearXNG?",
        "How do I use a local model?",
    ],
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
    unknown_command: "Unknown command {command}. Commands: /reset clears the conversation, citation numbers and search cache; /search on or /search off turns web search on or off.",
    search_command_on: "Web search is on: Chat questions are searched first.",
    search_command_off: "Web search is off: Chat questions are no longer searched.",
    search_command_usage: "Usage: /search on or /search off",
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
    file_label: "File",
    add_files: "Add files",
    files_label: "Files in this conversation",
    file_added: "Added {name}: the next answers search it too",
    file_removed: "Removed {name}: the next answers no longer search it",
    conversation_full: "This conversation holds {max} questions, its limit (CITED_MAX_EXCHANGES). Start a new chat to ask more; this one stays in the history.",
    file_not_found: "This conversation has no such file.",
    remove_file: "Remove {name}",
    file_unsupported: "Only PDF, Markdown, text, HTML and DOCX files can be added",
    file_too_large: "The file is too large: at most {max} MB",
    file_no_text: "The file has no readable text (a scanned PDF needs text recognition first)",
    file_unreadable: "This file cannot be read: {reason}",
    file_too_costly: "Reading this file takes more memory or time than one file may have: it may be damaged, or made to.",
    file_too_many: "A conversation holds at most {max} files",
    no_tools: "This model cannot call tools: cited searched first and then asked it.",
    sign_in_title: "Sign in to cited",
    user_name: "User name",
    password: "Password",
    sign_in: "Sign in",
    sign_in_failed: "Wrong user name or password.",
    sign_in_throttled: "Too many attempts; try again shortly.",
    signed_in_as: "Signed in as {name}",
    sign_out: "Sign out",
    sign_out_everywhere: "Sign out everywhere",
    quota_full: "Your saved conversations have reached the storage limit: delete some first.",
    asking_too_fast: "You are asking too fast; try again in {secs} s.",
    not_saved: "The database is unavailable: this answer will not be kept.",
    answer_too_long: "The answer passed the limit of {max} bytes; the rest was dropped.",
    history: "History",
    new_chat: "New chat",
    search_history: "Search conversations",
    today: "Today",
    yesterday: "Yesterday",
    earlier: "Earlier",
    rename: "Rename",
    delete: "Delete",
    undo: "Undo",
    deleted_conversation: "Deleted: {title}",
    share: "Share",
    unshare: "Stop sharing",
    share_link: "Share link",
    export: "Export",
    export_citations: "Export citations",
    title_empty: "A title cannot be empty.",
    no_conversations: "No conversations yet.",
    no_matches: "No conversation matches.",
    not_found: "This conversation does not exist, was deleted, or belongs to another browser.",
    earlier_questions: "Show earlier questions ({n} more)",
    shared_label: "Shared, read-only",
    interrupted: "Interrupted (the server stopped)",
    save: "Save",
    cancel: "Cancel",
    title_label: "Title",
    search: "Search",
    steps: "Steps",
    step_search: "Search",
    step_results: "results",
    step_cached: " (cached)",
    step_failed: "failed",
    step_capped: "search limit reached, the model answers now",
    round_heading: "Search {n}",
    registry_conflict: "Citation numbers conflicted and were repaired; numbers in earlier answers may have changed.",
    query_label: "query",
    knowledge_fallback: "SearXNG is unavailable, so this answer searches the local knowledge base. Why: {reason}",
    knowledge_missing: "{path} is not in the knowledge base.",
    passages_shown: "Passages {from}–{to} of {total}",
    earlier_passages: "← Earlier passages",
    later_passages: "Later passages →",
    sources_label: "Sources",
    sources_auto: "Auto",
    sources_web: "Web",
    sources_knowledge: "Knowledge",
    sources_both: "Both",
    sources_help: "Auto: the web through SearXNG while it is up, the local knowledge base when it is not.",
    language_label: "Language",
    sources_confirmed: "Sources set to: {sources}",
    research_no_results: "No results",
    research_encyclopedia: "Encyclopedia:",
    research_timeout: "Did not finish within {secs} s",
    research_branch_crashed: "The branch failed internally",
    research_planning: "Loop {n}: planning sub-questions…",
    research_branches: "Researching {n} sub-questions in parallel…",
    research_verifying: "Checking the reasoning chain…",
    research_summarising: "Deriving the conclusion…",
    research_plan: "Research plan",
    research_loop: "Loop {n} of at most {max}",
    status_pending: "pending",
    status_running: "running",
    status_done: "done",
    status_failed: "failed",
    status_pruned: "pruned",
    reliability: "reliability",
    level_high: "high",
    level_medium: "medium",
    level_low: "low",
    evidence: "Evidence",
    evidence_chain: "Evidence chain",
    verdict_sufficient: "The reasoning chain is sufficient",
    verdict_insufficient: "The reasoning chain is not sufficient",
    pruned_directions: "Pruned directions",
    conclusion: "Conclusion",
    confidence: "Confidence",
    checked_in_encyclopedia: "Checked in an encyclopedia",
    read_in_full: "Read in full",
    sub_question_label: "sub-question",
    stop_sufficient: "Stopped: the reasoning chain is sufficient",
    stop_loop_cap: "Stopped: the loop limit was reached",
    stop_no_new_evidence: "Stopped: the last loop added no evidence",
    stop_all_failed: "Stopped: every branch of the last loop failed",
    stop_nothing_to_plan: "Stopped: no new gap to research",
    stop_stopped: "Stopped",
    stop_deadline: "Reached the research time limit",
    cut_deadline: "The model did not finish within {secs} s and was cut off (CITED_LLM_CALL_DEADLINE_SECS); what it wrote so far is shown.",
    cut_repetition: "The model started repeating itself; the repetition was cut.",
    answer_reprinted: "Part of the text above was taken back; the answer as it now stands:",
    cut_length: "The reply reached its length limit ({tokens} tokens) and was cut ({var}).",
    research_best_guess: "The evidence found does not settle the question: the conclusion below is the best-supported guess, with low confidence.",
    research_missing: " Still missing: {missing}",
    research_deadline: "Research reached its time limit ({secs} s, CITED_RESEARCH_DEADLINE_SECS); the answer below uses the evidence found so far. Not finished: {cut}.",
    research_degraded: "The model's {step} output could not be read; a fallback was used.",
    research_step_plan: "plan",
    research_step_reflect: "reflection",
    research_step_evidence: "evidence",
    research_step_verify: "verdict",
    research_step_summary: "summary",
    research_step_cut: "{step} was cut: {why}",
    uncited_warning: "This answer cites none of the sources it retrieved; check it against the sources below.",
    unsearched_note: "This answer was written without searching, from the model's own knowledge, and may be wrong.",
    search_and_answer_again: "Search and answer again",
    coverage_line: "Cited: {cited} of {claims} sentences",
    support_line: "Supported by their sources: {supported} of {checked} citations",
    aligning: "Checking the citations…",
    relating: "Suggesting follow-up questions…",
    focus_names: ["Web", "Academic", "Discussions", "News", "Code"],
    period_names: ["Past day", "Past week", "Past month", "Past year"],
    filters: "Filters",
    focus_label: "Focus",
    focus_confirmed: "Focus: {focus}",
    period_label: "Time range",
    period_any: "Any time",
    period_confirmed: "Time range: {period}",
    model_label: "Model",
    model_confirmed: "Next answers are written by {model}",
    site_label: "Site",
    site_help: "Search only this site, e.g. docs.rs; empty for any. site: in a question wins.",
    site_confirmed: "Searching only {site}",
    site_cleared: "Any site",
    bad_site: "“{site}” is not a site's domain: write it like example.org.",
    unknown_model: "There is no model “{model}”: give a model name, or endpoint|model for one of CITED_LLM_ENDPOINTS; without a configured model there is nothing to choose.",
    related_questions: "Related questions",
    images: "Images",
    image: "Image",
    queued: "Queued: number {n} in line",
    support_supported: "supported",
    support_partial: "partly supported",
    support_not_found: "support not found",
    support_not_checked: "not checked",
    better_source: "Source [{n}] supports this sentence",
    support_line_unchecked: ", {n} not checked",
    added_by_cited: "added by cited",
    coverage_line_added: ", {n} of them added by cited",
    claim_unsupported: "No source supports this sentence",
    supporting_passage: "The passage in the source",
    from_snippet: "(the page could not be read: from the search snippet)",
    open_at_passage: "Open the page at this passage",
    tokens_line: "{tokens} tokens",
    tokens_estimated: "about {tokens} tokens",
    cost_line: "cost {cost}",
    reasoning: "Reasoning",
    progress_secs: "{secs} s",
    progress_tokens: "{secs} s · {tokens} tokens",
    sources_retrieved: "Retrieved sources",
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

/// The progress after the status line: `12 秒 · 340 个 token`.
pub fn progress_line(secs: u32, tokens: u64, t: &Texts) -> String {
    let template = if tokens == 0 {
        t.progress_secs
    } else {
        t.progress_tokens
    };
    template
        .replace("{secs}", &secs.to_string())
        .replace("{tokens}", &tokens.to_string())
}

/// The line under an answer: its citation coverage, how many citations their sources
/// support, tokens and cost, each when known.
pub fn answer_footer(
    coverage: Option<&crate::model::Coverage>,
    support: Option<&crate::model::SupportShare>,
    usage: Option<&crate::model::TokenUsage>,
    t: &Texts,
) -> String {
    let mut parts = Vec::new();
    if let Some(coverage) = coverage.filter(|c| c.claims > 0) {
        let mut line = t
            .coverage_line
            .replace("{cited}", &coverage.cited.to_string())
            .replace("{claims}", &coverage.claims.to_string());
        if coverage.added > 0 {
            line.push_str(
                &t.coverage_line_added
                    .replace("{n}", &coverage.added.to_string()),
            );
        }
        parts.push(line);
    }
    if let Some(support) = support.filter(|s| s.checked + s.not_checked > 0) {
        let mut line = t
            .support_line
            .replace("{supported}", &support.supported.to_string())
            .replace("{checked}", &support.checked.to_string());
        if support.not_checked > 0 {
            line.push_str(
                &t.support_line_unchecked
                    .replace("{n}", &support.not_checked.to_string()),
            );
        }
        parts.push(line);
    }
    if let Some(usage) = usage.filter(|u| u.total() > 0) {
        let template = if usage.estimated {
            t.tokens_estimated
        } else {
            t.tokens_line
        };
        parts.push(template.replace("{tokens}", &usage.total().to_string()));
        if let Some(micros) = usage.cost_micros {
            parts.push(t.cost_line.replace("{cost}", &four_decimals(micros)));
        }
    }
    parts.join(" · ")
}

/// Millionths as a number with four decimals, rounded half up (`1234567` → `1.2346`),
/// in integers: the browser's wasm then carries no float formatting.
fn four_decimals(micros: u64) -> String {
    let ten_thousandths = micros / 100 + u64::from(micros % 100 >= 50);
    format!(
        "{}.{:04}",
        ten_thousandths / 10_000,
        ten_thousandths % 10_000
    )
}

/// The status line for a typed status, in the UI language.
pub fn status_line(status: &crate::model::Status, t: &Texts) -> String {
    use crate::model::Status;
    match status {
        Status::Searching { query: None } => t.searching.to_string(),
        Status::Searching { query: Some(query) } => format!("{} {query}", t.searching),
        Status::Generating => t.generating.to_string(),
        Status::SearchFailed { message } => message.clone(),
        Status::Planning { round } => t.research_planning.replace("{n}", &round.to_string()),
        Status::Branches { count } => t.research_branches.replace("{n}", &count.to_string()),
        Status::Verifying => t.research_verifying.to_string(),
        Status::Summarising => t.research_summarising.to_string(),
        Status::Aligning => t.aligning.to_string(),
        Status::Relating => t.relating.to_string(),
        Status::Queued { position } => t.queued.replace("{n}", &position.to_string()),
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

impl Texts {
    pub fn branch_status(&self, status: crate::model::BranchStatus) -> &'static str {
        use crate::model::BranchStatus;
        match status {
            BranchStatus::Pending => self.status_pending,
            BranchStatus::Running => self.status_running,
            BranchStatus::Done => self.status_done,
            BranchStatus::Failed => self.status_failed,
            BranchStatus::Pruned => self.status_pruned,
        }
    }

    pub fn support(&self, support: crate::model::Support) -> &'static str {
        use crate::model::Support;
        match support {
            Support::Supported => self.support_supported,
            Support::Partial => self.support_partial,
            Support::NotFound => self.support_not_found,
            Support::NotChecked => self.support_not_checked,
        }
    }

    pub fn level(&self, level: crate::model::Reliability) -> &'static str {
        use crate::model::Reliability;
        match level {
            Reliability::High => self.level_high,
            Reliability::Medium => self.level_medium,
            Reliability::Low => self.level_low,
        }
    }

    pub fn stop_reason(&self, stop: crate::model::StopReason) -> &'static str {
        use crate::model::StopReason;
        match stop {
            StopReason::Sufficient => self.stop_sufficient,
            StopReason::LoopCap => self.stop_loop_cap,
            StopReason::NoNewEvidence => self.stop_no_new_evidence,
            StopReason::AllFailed => self.stop_all_failed,
            StopReason::NothingToPlan => self.stop_nothing_to_plan,
            StopReason::Stopped => self.stop_stopped,
            StopReason::Deadline => self.stop_deadline,
        }
    }
}

/// The Research plan as text lines, for `cited ask --mode research`: one line per loop
/// heading, sub-question (with its status, evidence or error), verdict and stop reason.
/// Printing each line the first time it appears shows the plan as it evolves.
pub fn plan_lines(plan: &crate::model::ResearchPlan, t: &Texts) -> Vec<String> {
    let mut lines = Vec::new();
    for research_loop in &plan.loops {
        lines.push(
            t.research_loop
                .replace("{n}", &research_loop.number.to_string())
                .replace("{max}", &plan.max_loops.to_string()),
        );
        for sub in &research_loop.sub_questions {
            let mut line = format!(
                "  Q{} [{}] {} ({})",
                sub.id,
                t.branch_status(sub.status),
                sub.question,
                sub.query
            );
            if let Some(evidence) = &sub.evidence {
                let numbers: String = evidence.numbers.iter().map(|n| format!("[{n}]")).collect();
                line.push_str(&format!(
                    "\n    {}: {} {numbers} ({} {})",
                    t.evidence,
                    evidence.statement,
                    t.reliability,
                    t.level(evidence.reliability)
                ));
            }
            if let Some(error) = &sub.error {
                line.push_str(&format!("\n    {}: {error}", t.status_failed));
            }
            lines.push(line);
        }
        if let Some(verdict) = &research_loop.verdict {
            let judged = if verdict.sufficient {
                t.verdict_sufficient
            } else {
                t.verdict_insufficient
            };
            let mut line = format!("  → {judged}: {}", verdict.chain);
            if !verdict.prune.is_empty() {
                line.push_str(&format!(
                    "\n    {}: {}",
                    t.pruned_directions,
                    verdict.prune.join("; ")
                ));
            }
            lines.push(line);
        }
    }
    if let Some(stop) = plan.stop {
        lines.push(format!("■ {}", t.stop_reason(stop)));
    }
    lines
}

/// What narrowed an answer's searches, as one line (`筛选: 学术 · 一周内 · site:docs.rs`);
/// empty when nothing did.
pub fn narrowing_line(narrowing: &crate::model::Narrowing, t: &Texts) -> String {
    let mut parts = Vec::new();
    if narrowing.focus != crate::model::Focus::Web {
        parts.push(focus_name(narrowing.focus, t).to_string());
    }
    if let Some(period) = narrowing.period {
        parts.push(period_name(period, t).to_string());
    }
    if let Some(site) = &narrowing.site {
        parts.push(format!("site:{site}"));
    }
    if parts.is_empty() {
        String::new()
    } else {
        format!("{}: {}", t.filters, parts.join(" · "))
    }
}

/// What a same-origin source is: a conversation's file ("文件") or the knowledge base.
pub fn local_kind(url: &str, t: &Texts) -> &'static str {
    if url.starts_with("/knowledge/~files/") {
        t.file_label
    } else {
        t.knowledge_label
    }
}

/// A focus's name in the UI's language.
pub fn focus_name(focus: crate::model::Focus, t: &Texts) -> &'static str {
    let index = crate::model::Focus::ALL
        .iter()
        .position(|known| *known == focus)
        .unwrap_or(0);
    t.focus_names[index]
}

/// A period's name in the UI's language.
pub fn period_name(period: crate::model::Period, t: &Texts) -> &'static str {
    let index = crate::model::Period::ALL
        .iter()
        .position(|known| *known == period)
        .unwrap_or(0);
    t.period_names[index]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{
        BranchStatus, Evidence, Reliability, ResearchLoop, ResearchPlan, StopReason, SubQuestion,
        Verdict,
    };

    #[test]
    fn costs_show_four_decimals_rounded_half_up() {
        for (micros, shown) in [
            (0, "0.0000"),
            (49, "0.0000"),
            (50, "0.0001"),
            (2000, "0.0020"),
            (1_234_567, "1.2346"),
            (9_999_950, "10.0000"),
            (12_000_000, "12.0000"),
        ] {
            assert_eq!(four_decimals(micros), shown, "{micros}");
        }
    }

    #[test]
    fn accept_language_picks_the_preferred_supported_language() {
        for (header, expected) in [
            ("en-US,en;q=0.9", Lang::En),
            ("zh-CN,zh;q=0.9,en;q=0.8", Lang::ZhCn),
            ("fr-FR,fr;q=0.9,en;q=0.5,zh;q=0.4", Lang::En),
            ("de,ja", Lang::ZhCn),
            ("zh;q=0.2, en;q=0.7", Lang::En),
            ("en;q=0, zh-TW", Lang::ZhCn),
            ("", Lang::ZhCn),
            (";;;,,q=", Lang::ZhCn),
        ] {
            assert_eq!(Lang::from_accept_language(header), expected, "{header:?}");
        }
        assert_eq!(Lang::parse("zh-Hans"), Some(Lang::ZhCn));
        assert_eq!(Lang::parse(Lang::En.code()), Some(Lang::En));
        assert_eq!(Lang::parse("klingon"), None);
    }

    /// What `cited ask --mode research` prints: each change is a new line.
    #[test]
    fn plan_lines_show_status_evidence_verdict_and_stop() {
        let mut plan = ResearchPlan {
            max_loops: 4,
            loops: vec![ResearchLoop {
                number: 1,
                sub_questions: vec![SubQuestion {
                    id: 1,
                    question: "《猫眼三姐妹》的配音是谁？".into(),
                    query: "猫眼三姐妹 配音".into(),
                    status: BranchStatus::Running,
                    ..SubQuestion::default()
                }],
                verdict: None,
            }],
            ..ResearchPlan::default()
        };
        let t = Lang::ZhCn.texts();
        let running = plan_lines(&plan, t);
        assert_eq!(running[0], "第 1 轮（最多 4 轮）");
        assert_eq!(
            running[1],
            "  Q1 [进行中] 《猫眼三姐妹》的配音是谁？ (猫眼三姐妹 配音)"
        );
        plan.loops[0].sub_questions[0].status = BranchStatus::Done;
        plan.loops[0].sub_questions[0].evidence = Some(Evidence {
            statement: "张欣为内海俊夫配音（推测）".into(),
            reliability: Reliability::Low,
            numbers: vec![3, 7],
        });
        plan.loops[0].verdict = Some(Verdict {
            sufficient: true,
            chain: "锚点 → [3]".into(),
            prune: vec![],
            missing: String::new(),
        });
        plan.stop = Some(StopReason::Sufficient);
        let done = plan_lines(&plan, t);
        assert!(
            done[1].contains("[完成]")
                && done[1].contains("证据: 张欣为内海俊夫配音（推测） [3][7] (可靠性 低)"),
            "{done:?}"
        );
        assert_eq!(done[2], "  → 推理链充分: 锚点 → [3]");
        assert_eq!(done[3], "■ 推理链充分，研究结束");
        assert_ne!(running[1], done[1], "a changed status prints again");
    }
}
