//! Server messages in Chinese (zh-CN): what a failed search or model call means and how to fix
//! it.

use crate::ssr::llm::LlmError;
use crate::ssr::search::SearchError;

pub const NO_EVIDENCE: &str = "没有找到足够的证据来回答这个问题，因此不作猜测。可以换一种问法、补充已知的线索，或检查 SearXNG 是否能搜到相关网页。";

pub fn search_error(error: &SearchError) -> String {
    match error {
        SearchError::Timeout { url, timeout } => {
            format!("搜索超时：SearXNG（{url}）{} 秒内没有回答。本次回答不使用搜索；可稍后再试，或调大 CITED_SEARCH_TIMEOUT_SECS。", timeout.as_secs())
        }
        SearchError::Unreachable { url, .. } => {
            format!("搜索服务不可用：SearXNG 没有在 {url} 运行。启动它：`docker compose -f searxng/docker-compose.yml up -d`，或把 CITED_SEARXNG_URL 指向你的实例。")
        }
        SearchError::JsonDisabled { url } => {
            format!("搜索服务不可用：SearXNG（{url}）未启用 JSON 输出（403）。在 settings.yml 的 `search.formats` 中加入 `json`（`formats: [html, json]`），然后重启 SearXNG。")
        }
        SearchError::RateLimited { url } => {
            format!("搜索服务不可用：SearXNG（{url}）的限流器拒绝了请求（429）。在 settings.yml 中设置 `server.limiter: false`，或把本应用的 IP 加入 limiter.toml 的 `pass_ip`。")
        }
        SearchError::Redirect { url, location } => {
            format!("搜索服务不可用：SearXNG（{url}）把搜索重定向到了 {location}。以 `!!` 开头的查询会跳转到外部网站；若不是这个原因，请关闭限流器（`server.limiter: false`）。")
        }
        SearchError::BadRequest { url, message } => {
            format!("搜索服务不可用：SearXNG（{url}）拒绝了请求：{message}。请检查 CITED_SEARCH_LANGUAGE。")
        }
        SearchError::Status { url, status } => {
            format!("搜索服务不可用：SearXNG（{url}）返回 {status}。查看它的日志：`docker compose -f searxng/docker-compose.yml logs searxng`。")
        }
        SearchError::NotJson { url, content_type } => {
            format!("搜索服务不可用：{url} 返回的是 {content_type} 而不是 JSON。CITED_SEARXNG_URL 是否指向 SearXNG？是否启用了 JSON 输出？")
        }
        SearchError::Malformed { url, .. } => {
            format!(
                "搜索服务不可用：SearXNG（{url}）返回的 JSON 无法解析（可能被截断）。请稍后再试。"
            )
        }
        SearchError::EnginesFailed { unresponsive } => {
            let names: Vec<&str> = unresponsive.iter().map(|(name, _)| name.as_str()).collect();
            format!("搜索无结果：所有搜索引擎都没有响应（{}）。它们可能被验证码或限流暂停；请在 SearXNG 中启用更多引擎，或稍后再试。", names.join("、"))
        }
        SearchError::Transport { url, .. } => {
            format!(
                "搜索服务不可用：与 SearXNG（{url}）的连接出错。请检查网络，或暂时关闭联网搜索。"
            )
        }
    }
}

pub fn llm_error(error: &LlmError) -> String {
    match error {
        LlmError::Unreachable { url, .. } => {
            format!("语言模型不可用：无法连接 {url}。请确认模型服务正在运行（Ollama：`ollama serve`），并检查 CITED_LLM_BASE_URL。")
        }
        LlmError::Timeout { url, after } => {
            format!(
                "语言模型超时：{url} 在 {} 秒内没有回答。请稍后再试。",
                after.as_secs()
            )
        }
        LlmError::IdleTimeout { after } => {
            format!(
                "语言模型中途停止了输出（{} 秒无响应）。回答可能不完整，请重试。",
                after.as_secs()
            )
        }
        LlmError::Unauthorized { status } => {
            format!("语言模型拒绝了 API 密钥（{status}）。请检查 CITED_LLM_API_KEY（或 OPENAI_API_KEY）。")
        }
        LlmError::ModelNotFound { model } => {
            format!("模型服务没有名为 {model} 的模型。请把 CITED_LLM_MODEL 设为它提供的模型（`cited doctor` 会列出）。")
        }
        LlmError::ContextTooLong { .. } => {
            "对话超出了模型的上下文长度。请用 /reset 开始新的对话，或调小 CITED_LLM_CONTEXT_CHARS。"
                .to_string()
        }
        LlmError::RateLimited { retry_after } => {
            let wait = retry_after.map(|d| d.as_secs()).unwrap_or(30);
            format!("模型服务限流（429），重试后仍失败。请约 {wait} 秒后再试。")
        }
        LlmError::Server { status, .. } => {
            format!("模型服务出错（{status}），重试后仍失败。请稍后再试。")
        }
        LlmError::BadRequest { status, message } => {
            format!("模型服务拒绝了请求（{status}）：{message}")
        }
        LlmError::Truncated => "模型的输出在结束前被切断。回答可能不完整，请重试。".to_string(),
        LlmError::Malformed { .. } => {
            "模型服务返回了无法解析的数据。它是否兼容 OpenAI 接口？".to_string()
        }
        LlmError::ToolArgs { name, .. } => {
            format!("模型调用工具 {name} 时给出了无效的参数。")
        }
        LlmError::Transport { .. } => "与模型服务的连接出错。请检查网络后重试。".to_string(),
    }
}
