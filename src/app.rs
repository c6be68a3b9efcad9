//! The page shell and which page a path shows: wiring only. Views live in `components`.
//!
//! Every page is a full load (links are plain `<a href>`; the server renders each page
//! whole, in order), so the app picks its page once from the location and needs no
//! client-side router: `leptos_router`, with the views it instantiated, cost the browser
//! 35 KB of brotli.

use leptos::prelude::*;
use leptos_meta::{provide_meta_context, MetaTags, Title};

use crate::components::erase::Erase;
use crate::components::workspace::{ConversationPage, HomePage, SharedPage};
use crate::model::Lang;

/// The HTML document the server renders around the app.
pub fn shell(options: LeptosOptions) -> impl IntoView {
    let lang = crate::components::use_lang();
    view! {
        <!DOCTYPE html>
        <html lang=lang.code()>
            <head>
                <meta charset="utf-8"/>
                // The layout viewport shrinks above an open keyboard; the page pads the safe areas.
                <meta name="viewport" content="width=device-width, initial-scale=1, viewport-fit=cover, interactive-widget=resizes-content"/>
                <meta name="color-scheme" content="light dark"/>
                <link rel="icon" href="/favicon.svg" type="image/svg+xml"/>
                // The stylesheet carries the site's content-hashed name (see `ssr::assets`).
                <link rel="stylesheet" id="cited" href=format!("/{}/{}.css", options.site_pkg_dir, options.output_name)/>
                <HydrationScripts options/>
                <MetaTags/>
            </head>
            <body>
                <App/>
            </body>
        </html>
    }
}

/// The page a location names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Page {
    /// `/`, the conversation in progress; `/?q=…` searches the history.
    Home { query: Option<String> },
    /// `/c/<id>`: one of the browser's conversations.
    Conversation { id: String },
    /// `/s/<token>`: a shared conversation, read-only.
    Shared { token: String },
    /// Anything else.
    NotFound,
}

impl Page {
    /// The page for a path and its query string (without `?`), decoded as a browser
    /// encodes them.
    pub fn of(path: &str, query: &str) -> Page {
        let path = path.strip_prefix('/').unwrap_or(path);
        let segments: Vec<&str> = path.split('/').collect();
        match segments.as_slice() {
            [""] => Page::Home {
                query: query
                    .split('&')
                    .filter_map(|pair| pair.split_once('=').or(Some((pair, ""))))
                    .find(|(name, _)| *name == "q")
                    .map(|(_, value)| decode(value, true)),
            },
            ["c", id] if !id.is_empty() => Page::Conversation {
                id: decode(id, false),
            },
            ["s", token] if !token.is_empty() => Page::Shared {
                token: decode(token, false),
            },
            _ => Page::NotFound,
        }
    }
}

/// Percent-decoding (`%E4%BD%A0` → 你), `+` as a space in a query; a malformed escape stays
/// as written and invalid UTF-8 becomes U+FFFD.
fn decode(text: &str, plus_is_space: bool) -> String {
    let hex = |byte: Option<&u8>| byte.and_then(|&b| (b as char).to_digit(16));
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&byte) = bytes.get(i) {
        match (byte, hex(bytes.get(i + 1)), hex(bytes.get(i + 2))) {
            (b'%', Some(high), Some(low)) => {
                // Two hex digits: at most 0xff.
                out.push((high * 16 + low) as u8);
                i += 3;
                continue;
            }
            (b'+', _, _) if plus_is_space => out.push(b' '),
            _ => out.push(byte),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The page being rendered: the server provides the request's (`ssr::web::page_context`);
/// the browser reads its own location.
fn current_page() -> Page {
    if let Some(page) = use_context::<Page>() {
        return page;
    }
    if !cfg!(target_arch = "wasm32") {
        return Page::NotFound;
    }
    let location = window().location();
    let path = location.pathname().unwrap_or_default();
    let search = location.search().unwrap_or_default();
    Page::of(&path, search.trim_start_matches('?'))
}

/// The language the server rendered the page in (in the browser; the default elsewhere).
fn lang_of_document() -> Lang {
    if !cfg!(target_arch = "wasm32") {
        return Lang::default();
    }
    web_sys::window()
        .and_then(|window| window.document())
        .and_then(|document| document.document_element())
        .and_then(|html| html.get_attribute("lang"))
        .and_then(|tag| Lang::parse(&tag))
        .unwrap_or_default()
}

#[component]
pub fn App() -> impl IntoView {
    provide_meta_context();
    // The server provides the request's language; the browser reads it back from
    // `<html lang>`, so hydration renders the same strings.
    if use_context::<Lang>().is_none() {
        provide_context(lang_of_document());
    }
    let page = match current_page() {
        Page::Home { query } => view! { <HomePage query/> }.erased(),
        Page::Conversation { id } => view! { <ConversationPage id/> }.erased(),
        Page::Shared { token } => view! { <SharedPage token/> }.erased(),
        Page::NotFound => view! { <p class="not-found">"404"</p> }.erased(),
    };
    view! {
        <Title text="cited"/>
        {page}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_name_their_pages() {
        let home = |query: Option<&str>| Page::Home {
            query: query.map(str::to_owned),
        };
        assert_eq!(Page::of("/", ""), home(None));
        assert_eq!(Page::of("", ""), home(None));
        assert_eq!(Page::of("/", "q=rust+async"), home(Some("rust async")));
        assert_eq!(Page::of("/", "x=1&q=%E4%BD%A0%2B1"), home(Some("你+1")));
        assert_eq!(Page::of("/", "q"), home(Some("")));
        assert_eq!(Page::of("/", "q=100%"), home(Some("100%")));
        assert_eq!(Page::of("/", "q=%ff"), home(Some("\u{fffd}")));
        assert_eq!(
            Page::of("/c/3f2a", ""),
            Page::Conversation { id: "3f2a".into() }
        );
        assert_eq!(
            Page::of("/s/a%20b+c", ""),
            Page::Shared {
                token: "a b+c".into()
            }
        );
        for other in ["/c", "/c/", "/c/1/2", "/s/", "/x", "/knowledge/a", "//"] {
            assert_eq!(Page::of(other, ""), Page::NotFound, "{other}");
        }
    }
}
