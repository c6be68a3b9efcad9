//! `GET /knowledge/<path>?p=<n>`: one indexed document, its passage `n` highlighted and
//! scrolled to. Only documents in the index are served (never an arbitrary file), and every
//! piece of their text is HTML-escaped. A long document is shown [`WINDOW`] passages at a
//! time (the ones around `p`, or from `from`), with links to the parts before and after.

use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{Html, IntoResponse, Response};

use crate::ssr::request::{lang_for, CurrentSession};
use crate::ssr::state::AppState;

#[derive(Debug, serde::Deserialize)]
pub struct PassageQuery {
    #[serde(default)]
    p: Option<usize>,
    /// The first passage shown (without `p`).
    #[serde(default)]
    from: Option<usize>,
}

/// Passages shown at once.
pub const WINDOW: usize = 200;

/// Text made safe inside HTML elements and attributes.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

pub async fn show(
    State(state): State<AppState>,
    Path(path): Path<String>,
    Query(query): Query<PassageQuery>,
    session: Option<axum::Extension<CurrentSession>>,
    headers: HeaderMap,
) -> Response {
    let lang = lang_for(session.as_ref().map(|s| &*s.0 .0), &headers);
    let t = lang.texts();
    // A conversation's file: only its owner sees it, only while the conversation exists.
    let (document, label) = match path.strip_prefix(crate::ssr::files::FILES_PREFIX) {
        Some(rest) => {
            let owner = session.as_ref().map(|s| s.0 .0.owner());
            (file(&state, owner, rest).await, t.file_label)
        }
        None => (state.knowledge.document(&path), t.knowledge_label),
    };
    let Some(document) = document else {
        let body = format!(
            "<!doctype html><html lang=\"{}\"><meta charset=\"utf-8\"><title>404</title><p>{}</p><p><a href=\"/\">cited</a></p></html>",
            t.html_lang,
            escape(&t.knowledge_missing.replace("{path}", &path))
        );
        return (StatusCode::NOT_FOUND, Html(body)).into_response();
    };
    let total = document.passages.len();
    let start = match (query.p, query.from) {
        (Some(p), _) => p,
        (None, Some(from)) => from,
        (None, None) => 0,
    };
    let start = (start.min(total.saturating_sub(1)) / WINDOW) * WINDOW;
    let end = (start + WINDOW).min(total);
    let mut body = String::new();
    // Where this part sits in a long document, and the way to the parts around it.
    let mut around = String::new();
    if total > WINDOW {
        let href = |from: usize| format!("?from={from}");
        if start > 0 {
            around.push_str(&format!(
                "<a rel=\"prev\" href=\"{}\">{}</a> ",
                href(start - WINDOW),
                escape(t.earlier_passages)
            ));
        }
        around.push_str(&escape(
            &t.passages_shown
                .replace("{from}", &(start + 1).to_string())
                .replace("{to}", &end.to_string())
                .replace("{total}", &total.to_string()),
        ));
        if end < total {
            around.push_str(&format!(
                " <a rel=\"next\" href=\"{}\">{}</a>",
                href(end),
                escape(t.later_passages)
            ));
        }
        around = format!("<p class=\"knowledge-around\">{around}</p>\n");
    }
    body.push_str(&around);
    let mut heading: Option<&str> = None;
    let mut page: Option<u32> = None;
    for (n, passage) in document.passages.iter().enumerate().take(end).skip(start) {
        if passage.page.is_some() && passage.page != page {
            page = passage.page;
            if let Some(number) = page {
                body.push_str(&format!("<h2 id=\"page-{number}\">p. {number}</h2>\n"));
            }
        }
        if passage.heading.as_deref() != heading {
            heading = passage.heading.as_deref();
            if let Some(text) = heading {
                body.push_str(&format!("<h2>{}</h2>\n", escape(text)));
            }
        }
        let paragraphs: String = passage
            .text
            .lines()
            .map(|line| format!("<p>{}</p>", escape(line)))
            .collect();
        if query.p == Some(n) {
            body.push_str(&format!(
                "<mark id=\"passage\" class=\"passage\">{paragraphs}</mark>\n"
            ));
        } else {
            body.push_str(&format!("<div class=\"passage\">{paragraphs}</div>\n"));
        }
    }
    body.push_str(&around);
    let html = format!(
        "<!doctype html><html lang=\"{lang}\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{title} · cited</title><link rel=\"stylesheet\" href=\"/pkg/{css}.css\"></head>\
         <body class=\"knowledge-page\"><main><p class=\"knowledge-crumb\"><a href=\"/\">cited</a> · {label} · <code>{path}</code></p>\
         <h1>{title}</h1>\n{body}</main></body></html>",
        lang = t.html_lang,
        css = state.leptos_options.output_name,
        title = escape(&document.title),
        label = escape(label),
        path = escape(document.shown.as_deref().unwrap_or(&document.path)),
    );
    Html(html).into_response()
}

/// `<conversation>/<file>` of the owner's conversation, as a document.
async fn file(
    state: &AppState,
    owner: Option<String>,
    rest: &str,
) -> Option<crate::ssr::knowledge::Document> {
    let owner = owner?;
    let (conversation, id) = rest.split_once('/')?;
    let files = state.store.files(&owner, conversation).await.ok()?;
    let file = files.into_iter().find(|file| file.id == id)?;
    let passages = serde_json::from_str(&file.passages).ok()?;
    Some(crate::ssr::files::document(
        conversation,
        &file.id,
        &file.name,
        passages,
    ))
}
