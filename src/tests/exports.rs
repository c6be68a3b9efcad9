//! Citation exports read by real consumers: `pandoc --citeproc` renders a document citing
//! the BibTeX and the CSL-JSON without a warning; Python's `bibtexparser` and `rispy` (from
//! PyPI, in the tests' venv) read every entry back with its title and URL; hostile titles
//! (braces, `%`, `@`, quotes, newlines, right-to-left text) survive the round trip. And the
//! download at `/c/<id>/citations.{bib,ris,json}`, for the conversation's owner only.

use std::process::Command;
use std::sync::Arc;

use super::{browser, TestServer};
use crate::citation::export::{references, Format, Reference};
use crate::citation::CitationEntry;
use crate::model::{Alignment, Exchange, SourceKind, Support};

const TITLES: [&str; 4] = [
    "Tokio: an asynchronous runtime",
    "Braces {and} 100% of @everything \"quoted\" & $5 #1 a_b ~c ^d",
    "A title\nover two lines",
    "مرحبا بالعالم: RTL text",
];

fn entry(number: u32, title: &str) -> Arc<CitationEntry> {
    Arc::new(CitationEntry {
        number,
        title: title.to_string(),
        url: format!("https://site{number}.example.org/page?id={number}&x=%20"),
        domain: format!("site{number}.example.org"),
        snippet: String::new(),
        query: "q".into(),
        round: 1,
        kind: SourceKind::Web,
        also_in_rounds: Vec::new(),
    })
}

fn exported() -> Vec<Reference> {
    let sources: Vec<Arc<CitationEntry>> = TITLES
        .iter()
        .enumerate()
        .map(|(i, title)| entry(i as u32 + 1, title))
        .collect();
    let exchange = Exchange {
        question: "q".into(),
        answer: "a [1][2][3][4]".into(),
        sources,
        cited: vec![1, 2, 3, 4],
        alignments: vec![Alignment {
            ordinal: 0,
            number: 1,
            support: Support::Supported,
            passage: "Tokio is an asynchronous runtime {for} Rust.".into(),
            matched: Vec::new(),
            offset: None,
            better: None,
        }],
        ..Exchange::default()
    };
    references(&[exchange], "2026-11-25")
}

/// A tool the tests need: present, or (under CI) a failure, else the test is skipped.
fn tool(path: &str) -> bool {
    let present = std::path::Path::new(path).exists();
    assert!(
        present || std::env::var_os("CI").is_none(),
        "{path} is missing: `make browser` installs it"
    );
    present
}

#[test]
fn pandoc_renders_a_document_citing_the_bibtex_and_the_csl_json() {
    if !tool("/usr/bin/pandoc") {
        return;
    }
    let references = exported();
    let dir = std::env::temp_dir().join(format!("cited-export-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let keys: Vec<String> = references.iter().map(|r| format!("[@{}]", r.key)).collect();
    let document = dir.join("doc.md");
    std::fs::write(&document, format!("Cited: {}.\n", keys.join(" "))).unwrap();
    for format in [Format::Bibtex, Format::CslJson] {
        let file = dir.join(format!("refs.{}", format.extension()));
        std::fs::write(&file, format.write(&references)).unwrap();
        let out = Command::new("/usr/bin/pandoc")
            .arg("--citeproc")
            .arg("--bibliography")
            .arg(&file)
            .arg("-t")
            .arg("plain")
            .arg(&document)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{format:?}: {stderr}");
        assert!(
            !stderr.contains("WARNING") && !stderr.contains("not found"),
            "{format:?}: {stderr}"
        );
        // Every entry is in the bibliography, titles intact (the style capitalises them).
        let lower = text
            .to_lowercase()
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        for needle in [
            "tokio: an asynchronous runtime",
            // (citeproc turns inner quotes into typographic ones)
            "braces {and} 100% of @everything",
            "quoted",
            "& $5 #1 a_b ~c ^d",
            "a title over two lines",
            "مرحبا بالعالم",
        ] {
            assert!(lower.contains(needle), "{format:?}: {needle} in\n{text}");
        }
        assert!(text.contains("site1.example.org"), "{format:?}: {text}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn python_parsers_read_every_entry_back() {
    let python = super::searxng::python();
    let references = exported();
    let bib = Format::Bibtex.write(&references);
    let ris = Format::Ris.write(&references);
    let script = r##"
import json, sys, bibtexparser, rispy
from bibtexparser.bparser import BibTexParser
bib, ris = sys.stdin.read().split("\n\x00\n")
parser = BibTexParser(common_strings=True, ignore_nonstandard_types=False)
db = bibtexparser.loads(bib, parser=parser)
# The parser reads the fields as written; LaTeX's escapes (the only markup cited writes)
# are undone here, as a LaTeX-aware reader (pandoc, above) does.
def latex(text):
    if text is None:
        return None
    for escaped, plain in [("\\textbackslash{}", "\\"), ("\\textasciitilde{}", "~"), ("\\textasciicircum{}", "^"),
                           ("\\{", "{"), ("\\}", "}"), ("\\%", "%"), ("\\&", "&"), ("\\$", "$"), ("\\#", "#"), ("\\_", "_")]:
        text = text.replace(escaped, plain)
    return text
out = {"bib": [{"id": e["ID"], "title": latex(e.get("title")), "url": e.get("url"), "note": latex(e.get("note"))} for e in db.entries],
       "ris": [{"title": e.get("title"), "url": (e.get("urls") or [None])[0], "id": e.get("id")} for e in rispy.loads(ris)]}
print(json.dumps(out))
"##;
    let mut child = Command::new(&python)
        .arg("-c")
        .arg(script)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        stdin
            .write_all(format!("{bib}\n\0\n{ris}").as_bytes())
            .unwrap();
    }
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let read: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let bib = read["bib"].as_array().unwrap();
    let ris = read["ris"].as_array().unwrap();
    assert_eq!(bib.len(), references.len(), "{read}");
    assert_eq!(ris.len(), references.len(), "{read}");
    for reference in &references {
        // One line, as written: newlines become spaces.
        let title: String = reference
            .title
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        let from_bib = bib
            .iter()
            .find(|e| e["id"] == reference.key.as_str())
            .unwrap_or_else(|| panic!("{} in {read}", reference.key));
        assert_eq!(from_bib["title"], title.as_str(), "{read}");
        assert_eq!(from_bib["url"], reference.url.as_str(), "{read}");
        let from_ris = ris
            .iter()
            .find(|e| e["id"] == reference.key.as_str())
            .unwrap_or_else(|| panic!("{} in {read}", reference.key));
        assert_eq!(from_ris["title"], title.as_str(), "{read}");
        assert_eq!(from_ris["url"], reference.url.as_str(), "{read}");
    }
    // The checked passage travels as a note.
    assert_eq!(
        bib.iter().find(|e| e["id"] == "cited-1-1").unwrap()["note"],
        "Tokio is an asynchronous runtime {for} Rust."
    );
}

#[tokio::test]
async fn a_conversations_citations_download_for_its_owner_only() {
    let server = TestServer::start(&[]).await;
    let me = browser();
    let events = super::chat::post_ask(&me, &server, "How do I run the tests?")
        .await
        .unwrap();
    assert!(super::done_event(&events).is_some());
    let history = super::exposure::history_of(&me, &server).await;
    let id = &history.conversations[0].id;
    for (extension, starts) in [
        ("bib", "@online{cited-1-"),
        ("ris", "TY  - ELEC"),
        ("json", "["),
    ] {
        let response = me
            .get(server.url(&format!("/c/{id}/citations.{extension}")))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
        assert!(response.headers()["content-disposition"]
            .to_str()
            .unwrap()
            .starts_with("attachment"));
        let body = response.text().await.unwrap();
        assert!(body.starts_with(starts), "{extension}: {body}");
        let stranger = browser()
            .get(server.url(&format!("/c/{id}/citations.{extension}")))
            .send()
            .await
            .unwrap();
        assert_eq!(stranger.status(), 404);
    }
    // One answer's citations alone (`?answer=<id>`, under its reference list).
    let events = super::chat::post_ask(&me, &server, "如何在 SearXNG 中启用 JSON 格式？")
        .await
        .unwrap();
    assert!(super::done_event(&events).is_some());
    let urls = |query: &'static str| {
        let me = me.clone();
        let url = server.url(&format!("/c/{id}/citations.json{query}"));
        async move {
            let response = me.get(url).send().await.unwrap();
            if response.status() != 200 {
                return None;
            }
            let items: Vec<serde_json::Value> = response.json().await.unwrap();
            let mut urls: Vec<String> = items
                .iter()
                .map(|item| item["URL"].as_str().unwrap().to_string())
                .collect();
            urls.sort();
            Some(urls)
        }
    };
    let whole = urls("").await.unwrap();
    let first = urls("?answer=1").await.unwrap();
    let second = urls("?answer=2").await.unwrap();
    assert!(!first.is_empty() && !second.is_empty());
    assert_ne!(first, second);
    for url in first.iter().chain(&second) {
        assert!(whole.contains(url), "{url} in {whole:?}");
    }
    assert_eq!(urls("?answer=99").await, None, "no such answer");
    // Any other file of a conversation is not here.
    let other = me
        .get(server.url(&format!("/c/{id}/citations.doc")))
        .send()
        .await
        .unwrap();
    assert_eq!(other.status(), 404);
}
