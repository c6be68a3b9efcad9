//! `cited ask` through the real binary, offline (the extractive answerer over the project's
//! own docs): the reference list and the follow-up questions come in the question's
//! language.
#![cfg(feature = "ssr")]
#![allow(clippy::unwrap_used, reason = "a test")]

use std::process::Command;

fn ask(question: &str) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_cited"))
        .args(["ask", question])
        .env("CITED_DATABASE_URL", "sqlite::memory:")
        .env("CITED_SOURCES", "knowledge")
        .env("CITED_ALIGN_DEADLINE_SECS", "0")
        .env("CITED_LOG", "warn")
        .env_remove("CITED_LLM_BASE_URL")
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    String::from_utf8(output.stdout).unwrap()
}

#[test]
fn lists_follow_the_language_of_the_question() {
    let english = ask("How do I run the tests?");
    assert!(english.contains("\n**References:**\n"), "{english}");
    assert!(!english.contains("参考文献"), "{english}");
    let follow_ups = english
        .split("**Related questions:**")
        .nth(1)
        .unwrap_or_else(|| panic!("{english}"));
    assert_eq!(
        follow_ups.lines().filter(|l| l.starts_with("- ")).count(),
        3,
        "{english}"
    );

    let chinese = ask("如何在 SearXNG 中启用 JSON 格式？");
    assert!(chinese.contains("\n**参考文献:**\n"), "{chinese}");
    assert!(chinese.contains("**相关问题:**"), "{chinese}");
    assert!(!chinese.contains("References"), "{chinese}");
}
