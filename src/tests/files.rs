//! Files in a conversation: PDF (by page), DOCX, Markdown, HTML and text extracted; an
//! upload over HTTP searched alongside the real SearXNG and cited with its name and page;
//! its passage page only for its owner; limits with clear messages; gone with the
//! conversation.

use std::io::Write;

use super::{browser, searxng, TestServer};
use crate::model::AnswerEvent;
use crate::ssr::files::extract;

/// A PDF of `pages`, one line of Helvetica text each, with a correct cross-reference table.
pub fn pdf(pages: &[&str]) -> Vec<u8> {
    let count = pages.len();
    // Objects: 1 catalog, 2 pages, 3 font, then per page: page, content.
    let mut objects: Vec<String> = vec![
        "<< /Type /Catalog /Pages 2 0 R >>".to_string(),
        format!(
            "<< /Type /Pages /Kids [{}] /Count {count} >>",
            (0..count)
                .map(|i| format!("{} 0 R", 4 + 2 * i))
                .collect::<Vec<_>>()
                .join(" ")
        ),
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"
            .to_string(),
    ];
    for (i, text) in pages.iter().enumerate() {
        let content = format!("BT /F1 12 Tf 72 720 Td ({text}) Tj ET");
        objects.push(format!(
            "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents {} 0 R >>",
            5 + 2 * i
        ));
        objects.push(format!(
            "<< /Length {} >>\nstream\n{content}\nendstream",
            content.len()
        ));
    }
    let mut out = b"%PDF-1.4\n".to_vec();
    let mut offsets = Vec::new();
    for (n, object) in objects.iter().enumerate() {
        offsets.push(out.len());
        write!(out, "{} 0 obj\n{object}\nendobj\n", n + 1).unwrap();
    }
    let xref = out.len();
    write!(out, "xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1).unwrap();
    for offset in offsets {
        writeln!(out, "{offset:010} 00000 n ").unwrap();
    }
    write!(
        out,
        "trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n",
        objects.len() + 1
    )
    .unwrap();
    out
}

/// A DOCX whose body is `paragraphs`.
pub fn docx(paragraphs: &[&str]) -> Vec<u8> {
    let body: String = paragraphs
        .iter()
        .map(|p| format!("<w:p><w:r><w:t>{p}</w:t></w:r></w:p>"))
        .collect();
    let document = format!(
        r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>{body}</w:body></w:document>"#
    );
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default();
    zip.start_file("[Content_Types].xml", options).unwrap();
    zip.write_all(br#"<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>"#).unwrap();
    zip.start_file("word/document.xml", options).unwrap();
    zip.write_all(document.as_bytes()).unwrap();
    zip.finish().unwrap().into_inner()
}

#[test]
fn every_kind_gives_its_text() {
    let passages = extract(
        "notes.PDF",
        &pdf(&[
            "Tokio schedules tasks.",
            "The lighthouse keeper logs every ship.",
        ]),
    )
    .unwrap();
    let pages: Vec<(Option<u32>, &str)> =
        passages.iter().map(|p| (p.page, p.text.trim())).collect();
    assert_eq!(
        pages,
        [
            (Some(1), "Tokio schedules tasks."),
            (Some(2), "The lighthouse keeper logs every ship.")
        ]
    );

    let passages = extract("report.docx", &docx(&["First &amp; foremost.", "第二段。"])).unwrap();
    assert_eq!(passages.len(), 1, "short paragraphs merge into one passage");
    assert_eq!(passages[0].text, "First & foremost.\n第二段。");

    let passages = extract("a.md", "# Title\n\nBody *text* here.\n".as_bytes()).unwrap();
    assert_eq!(passages[0].heading.as_deref(), Some("Title"));
    assert_eq!(passages[0].text, "Body text here.");
    let passages = extract(
        "a.html",
        b"<html><head><title>T</title></head><body><article><p>An HTML page about keepers of lights and the ships they guide at night, with enough text to be an article that Readability keeps as the content.</p></article><script>alert(1)</script></body></html>",
    )
    .unwrap();
    assert!(
        passages[0].text.contains("keepers of lights"),
        "{passages:?}"
    );
    assert!(passages.iter().all(|p| !p.text.contains("alert")));
    let passages = extract("a.txt", "one\n\ntwo".as_bytes()).unwrap();
    assert_eq!(passages[0].text, "one\ntwo");
}

fn vars(searxng: &str) -> Vec<(&'static str, String)> {
    vec![
        ("CITED_SEARXNG_URL", searxng.to_string()),
        ("CITED_SOURCES", "web".into()),
        ("CITED_FILE_MAX_MB", "1".into()),
    ]
}

async fn upload(
    client: &reqwest::Client,
    server: &TestServer,
    name: &str,
    body: Vec<u8>,
) -> (u16, serde_json::Value) {
    let response = client
        .post(server.url("/api/files"))
        .query(&[("name", name)])
        .body(body)
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or_default())
}

/// A PDF as people have them: printed by Chromium, its Chinese in an embedded CID font
/// read through the font's ToUnicode map.
#[test]
fn a_pdf_printed_by_a_browser_keeps_its_chinese_and_english() {
    let chromium = std::path::Path::new("/usr/bin/chromium");
    if !chromium.exists() {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "Chromium is required under CI (make browser installs it)"
        );
        #[allow(clippy::print_stderr)]
        {
            eprintln!("skipped: no /usr/bin/chromium");
        }
        return;
    }
    let dir = searxng::TempDir::new("printed-pdf");
    let html = dir.0.join("page.html");
    std::fs::write(
        &html,
        "<html><head><meta charset=\"utf-8\"></head><body>\
         <h1>灯塔守护人</h1><p>灯塔守护人每晚记录经过的每一艘船，并在黎明时熄灯。</p>\
         <p>The lighthouse keeper logs every ship that passes at night.</p>\
         <pre>curl -s http://127.0.0.1:3000/healthz</pre></body></html>",
    )
    .unwrap();
    let pdf = dir.0.join("page.pdf");
    let printed = std::process::Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-pdf-header-footer",
        ])
        .arg(format!("--print-to-pdf={}", pdf.display()))
        .arg(&html)
        .output()
        .unwrap();
    assert!(printed.status.success(), "{printed:?}");
    let passages = extract("page.pdf", &std::fs::read(&pdf).unwrap()).unwrap();
    let text: String = passages
        .iter()
        .map(|p| p.text.as_str())
        .collect::<Vec<_>>()
        .join("\n");
    let squeezed: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    assert!(
        squeezed.contains("灯塔守护人每晚记录经过的每一艘船，并在黎明时熄灯。"),
        "{text}"
    );
    assert!(
        text.contains("The lighthouse keeper logs every ship that passes at night."),
        "{text}"
    );
    assert!(
        text.contains("curl -s http://127.0.0.1:3000/healthz"),
        "{text}"
    );
    assert!(passages.iter().all(|p| p.page == Some(1)));
}

#[tokio::test]
async fn an_uploaded_file_is_searched_cited_by_page_and_kept_to_its_owner() {
    let vars = vars(&searxng::shared().url);
    let vars: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let server = TestServer::start(&vars).await;
    let me = browser();

    // Refused with a message that says why, and nothing is lost.
    let (status, reply) = upload(&me, &server, "setup.exe", b"MZ".to_vec()).await;
    assert_eq!(status, 400);
    assert!(reply["error"].as_str().unwrap().contains("PDF"), "{reply}");
    let (status, reply) = upload(&me, &server, "big.txt", vec![b'a'; 2 * 1024 * 1024]).await;
    assert_eq!(status, 413);
    assert!(reply["error"].as_str().unwrap().contains("1 MB"), "{reply}");
    let (status, reply) = upload(&me, &server, "scan.pdf", pdf(&[""])).await;
    assert_eq!(status, 400, "{reply}");

    let (status, reply) = upload(
        &me,
        &server,
        "notes.pdf",
        pdf(&[
            "Tokio schedules tasks.",
            "The lighthouse keeper logs every ship.",
        ]),
    )
    .await;
    assert_eq!(status, 200, "{reply}");
    assert_eq!(reply["files"], serde_json::json!(["notes.pdf"]));
    assert!(reply["message"].as_str().unwrap().contains("notes.pdf"));

    let events = super::chat::post_ask(&me, &server, "What does the lighthouse keeper log?")
        .await
        .unwrap();
    let sources: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            AnswerEvent::Sources { sources } => Some(sources.clone()),
            _ => None,
        })
        .flatten()
        .collect();
    let cited = sources
        .iter()
        .find(|s| s.title == "notes.pdf, p. 2")
        .unwrap_or_else(|| panic!("{sources:#?}"));
    // The conversation's files were indexed once; the next question reuses the index
    // until a file is added.
    assert_eq!(server.state.file_indexes.built(), 1);
    super::chat::post_ask(&me, &server, "And what does the keeper do at night?")
        .await
        .unwrap();
    assert_eq!(server.state.file_indexes.built(), 1, "reused");
    let (status, _) = upload(
        &me,
        &server,
        "more.md",
        b"# More\n\nThe keeper sleeps by day.".to_vec(),
    )
    .await;
    assert_eq!(status, 200);
    super::chat::post_ask(&me, &server, "When does the keeper sleep?")
        .await
        .unwrap();
    assert_eq!(
        server.state.file_indexes.built(),
        2,
        "built again with the new file"
    );
    // A file can be taken out again: listed with its id, removed by it, searched no more.
    let listed: serde_json::Value = server.call(&me, "/api/files/list", &[]).await;
    assert_eq!(listed["files"], serde_json::json!(["notes.pdf", "more.md"]));
    let more = listed["items"][1]["id"].as_str().unwrap().to_string();
    assert_eq!(listed["items"][1]["name"], "more.md");
    let stranger = browser();
    let refused = stranger
        .post(server.url("/api/files/remove"))
        .query(&[("id", more.as_str())])
        .send()
        .await
        .unwrap();
    assert_eq!(
        refused.status(),
        404,
        "only the conversation's owner removes"
    );
    let removed = me
        .post(server.url("/api/files/remove"))
        .query(&[("id", more.as_str())])
        .send()
        .await
        .unwrap();
    assert_eq!(removed.status(), 200);
    let removed: serde_json::Value = removed.json().await.unwrap();
    assert_eq!(removed["files"], serde_json::json!(["notes.pdf"]));
    assert!(
        removed["message"].as_str().unwrap().contains("more.md"),
        "{removed}"
    );
    let again = me
        .post(server.url("/api/files/remove"))
        .query(&[("id", more.as_str())])
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), 404);
    let events = super::chat::post_ask(&me, &server, "When does the keeper sleep by day?")
        .await
        .unwrap();
    let titles: Vec<String> = events
        .iter()
        .filter_map(|e| match e {
            AnswerEvent::Sources { sources } => Some(sources.clone()),
            _ => None,
        })
        .flatten()
        .map(|s| s.title.clone())
        .collect();
    assert!(
        titles.iter().all(|title| !title.starts_with("more.md")),
        "a removed file is not searched: {titles:?}"
    );
    // The index of the one file left is still kept (keyed by the files' ids).
    assert_eq!(
        server.state.file_indexes.built(),
        2,
        "reused, never built with it"
    );
    assert_eq!(cited.domain, "notes.pdf");
    assert!(cited.snippet.contains("lighthouse keeper"));
    assert!(
        crate::citation::urls::is_safe_link(&cited.url),
        "{}",
        cited.url
    );
    assert!(cited.url.starts_with("/knowledge/~files/"), "{}", cited.url);

    // The passage opens highlighted for its owner; for anybody else there is nothing.
    let page = server.text(&me, &cited.url).await;
    assert!(page.contains("<mark id=\"passage\""), "{page}");
    assert!(page.contains("The lighthouse keeper logs every ship."));
    assert!(page.contains("p. 2"));
    let stranger = browser();
    let response = stranger.get(server.url(&cited.url)).send().await.unwrap();
    assert_eq!(response.status(), 404);
    let (_, listed) = {
        let response = server.send(&stranger, "/api/files/list", &[]).await;
        (
            response.status(),
            response.json::<serde_json::Value>().await.unwrap(),
        )
    };
    assert_eq!(listed["files"], serde_json::json!([]));

    // Gone with the conversation.
    let conversation = cited
        .url
        .trim_start_matches("/knowledge/~files/")
        .split('/')
        .next()
        .unwrap()
        .to_string();
    let deleted = server
        .send(
            &me,
            "/api/delete_conversation",
            &[("id", conversation.as_str()), ("deleted", "true")],
        )
        .await;
    assert_eq!(deleted.status(), 200);
    let response = me.get(server.url(&cited.url)).send().await.unwrap();
    assert_eq!(response.status(), 404);
}

#[tokio::test]
async fn research_branches_search_the_files_too() {
    let mut state =
        crate::ssr::state::AppState::new(super::pipeline_config(&searxng::shared().url, &[]));
    state.llm = std::sync::Arc::new(crate::ssr::llm::extractive::Extractive);
    let passages = extract(
        "keeper.md",
        "# Keeper notes\n\nThe lighthouse keeper logs every passing ship in the tower book.\n"
            .as_bytes(),
    )
    .unwrap();
    let input = crate::ssr::pipeline::TurnInput {
        files: vec![crate::ssr::files::document("c", "1", "keeper.md", passages)],
        ..crate::ssr::pipeline::TurnInput::standalone(
            "What does the lighthouse keeper log?".into(),
            crate::model::Mode::Research,
        )
    };
    let (exchange, _) = super::answer_collecting(&state, input).await;
    let plan = exchange.research.clone().expect("a research plan");
    assert!(
        plan.sub_questions()
            .any(|s| s.status == crate::model::BranchStatus::Done),
        "{plan:#?}"
    );
    assert!(
        exchange.sources.iter().any(|s| s.domain == "keeper.md"),
        "{:#?}",
        exchange.sources
    );
}

/// A bounded fuzz pass over every extractor (run by `make test`): valid files with bytes
/// flipped, cut or spliced, and arbitrary bytes, under every name. No input panics past
/// `extract` or yields text beyond the characters one file may hold; each is a list of
/// passages or a file error.
mod fuzz {
    use proptest::prelude::*;

    use super::{docx, pdf};
    use crate::ssr::files::extract;

    const NAMES: [&str; 5] = ["f.pdf", "f.docx", "f.md", "f.html", "f.txt"];

    fn seeds() -> Vec<Vec<u8>> {
        vec![
            pdf(&["The keeper logs ships.", "Tokio schedules tasks."]),
            docx(&["First paragraph.", "第二段。"]),
            b"# Title\n\nSome *markdown* [link](https://example.org) text.\n".to_vec(),
            b"<html><body><article><p>Lights guide ships at night.</p></article></body></html>"
                .to_vec(),
        ]
    }

    fn mutated() -> impl Strategy<Value = Vec<u8>> {
        (
            0..seeds().len(),
            prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..16),
            any::<prop::sample::Index>(),
            prop::collection::vec(any::<u8>(), 0..64),
        )
            .prop_map(|(seed, flips, cut, splice)| {
                let mut bytes = seeds()[seed].clone();
                for (at, byte) in flips {
                    let at = at.index(bytes.len());
                    bytes[at] = byte;
                }
                let cut = cut.index(bytes.len() + 1);
                bytes.truncate(cut.max(bytes.len() / 2));
                bytes.extend(splice);
                bytes
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

        #[test]
        fn mutated_files_never_panic(bytes in mutated(), name in 0..NAMES.len()) {
            if let Ok(passages) = extract(NAMES[name], &bytes) {
                let chars: usize = passages.iter().map(|p| p.text.chars().count()).sum();
                prop_assert!(chars <= 2_000_000 + passages.len());
            }
        }

        #[test]
        fn arbitrary_bytes_give_passages_with_text_or_an_error(
            bytes in prop::collection::vec(any::<u8>(), 0..2048),
            name in 0..NAMES.len(),
        ) {
            if let Ok(passages) = extract(NAMES[name], &bytes) {
                prop_assert!(!passages.is_empty());
                prop_assert!(passages
                    .iter()
                    .all(|p| p.text.chars().any(char::is_alphanumeric)));
            }
        }
    }
}

#[tokio::test]
async fn a_long_file_is_shown_a_window_of_passages_at_a_time() {
    use crate::ssr::web::knowledge_page::WINDOW;
    let vars = vars(&searxng::shared().url);
    let vars: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let server = TestServer::start(&vars).await;
    let me = browser();
    let sections = WINDOW * 2 + 50;
    let markdown: String = (0..sections)
        .map(|n| format!("# Section {n}\n\nThe keeper wrote line number {n}.\n\n"))
        .collect();
    let (status, reply) = upload(&me, &server, "long.md", markdown.into_bytes()).await;
    assert_eq!(status, 200, "{reply}");
    let file = reply["items"][0]["id"].as_str().unwrap().to_string();
    let history = super::exposure::history_of(&me, &server).await;
    let conversation = &history.conversations[0].id;
    let url = format!("/knowledge/~files/{conversation}/{file}");
    // Around passage 430: the last part, with the way back.
    let page = server.text(&me, &format!("{url}?p=430")).await;
    assert!(page.contains("<mark id=\"passage\""), "{page}");
    assert!(page.contains("line number 420."), "{page}");
    assert!(!page.contains("line number 10."), "only its part");
    assert!(page.contains(&format!("?from={}", WINDOW)), "{page}");
    assert!(page.contains(&format!(
        "第 {}–{sections} 段，共 {sections} 段",
        2 * WINDOW + 1
    )));
    // The first part, without a passage: forward only.
    let first = server.text(&me, &url).await;
    assert!(first.contains("line number 0."));
    assert!(!first.contains(&format!("line number {}.", WINDOW + 5)));
    assert!(first.contains(&format!("?from={WINDOW}")) && !first.contains("rel=\"prev\""));
    // Any `from` lands on its part; past the end, the last one.
    let middle = server
        .text(&me, &format!("{url}?from={}", WINDOW + 7))
        .await;
    assert!(middle.contains(&format!("line number {}.", WINDOW + 50)));
    assert!(!middle.contains("line number 10."));
    let past = server.text(&me, &format!("{url}?from=99999")).await;
    assert!(past.contains(&format!("line number {}.", sections - 1)));
}
