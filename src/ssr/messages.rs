//! Every user-facing message the server writes, one module per language: [`zh`] (the
//! default, the seeds' wording) and [`en`]. Subsystems return typed errors; this is where
//! they become text for the person using cited.

mod en;
mod zh;

use crate::model::Lang;
use crate::ssr::llm::LlmError;
use crate::ssr::search::SearchError;

/// What went wrong with a search and how to fix it.
pub fn search_error(lang: Lang, error: &SearchError) -> String {
    match lang {
        Lang::ZhCn => zh::search_error(error),
        Lang::En => en::search_error(error),
    }
}

/// What went wrong with the model and what to do.
pub fn llm_error(lang: Lang, error: &LlmError) -> String {
    match lang {
        Lang::ZhCn => zh::llm_error(error),
        Lang::En => en::llm_error(error),
    }
}

/// Research found no evidence resting on any source: said plainly, no guess from memory.
pub fn no_evidence(lang: Lang) -> String {
    match lang {
        Lang::ZhCn => zh::NO_EVIDENCE,
        Lang::En => en::NO_EVIDENCE,
    }
    .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_tell_users_the_fix() {
        let json_off = SearchError::JsonDisabled {
            url: "http://localhost:8080/".into(),
        };
        assert!(search_error(Lang::ZhCn, &json_off).contains("search.formats"));
        assert!(search_error(Lang::En, &json_off).contains("search.formats"));
        let limited = SearchError::RateLimited { url: "u".into() };
        assert!(search_error(Lang::En, &limited).contains("server.limiter: false"));
        let engines = SearchError::EnginesFailed {
            unresponsive: vec![
                ("google".into(), "CAPTCHA".into()),
                ("brave".into(), "timeout".into()),
            ],
        };
        assert!(search_error(Lang::En, &engines).contains("google, brave"));
        assert!(search_error(Lang::ZhCn, &engines).contains("google、brave"));
    }
}
