//! The page shell and the router: wiring only. Views live in `components`.

use leptos::prelude::*;
use leptos_meta::{provide_meta_context, MetaTags, Title};
use leptos_router::components::{Route, Router, Routes};
use leptos_router::{ParamSegment, SsrMode, StaticSegment};

use crate::components::erase::SyncHydrated;
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

/// The language the server rendered the page in (in the browser; the default elsewhere,
/// such as when the server lists the routes at startup).
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
    view! {
        <Title text="cited"/>
        <Router>
            <Routes fallback=|| SyncHydrated(view! { <p class="not-found">"404"</p> })>
                // In order: the HTML arrives complete and in place, so the page reads the same
                // with JavaScript disabled.
                <Route path=StaticSegment("") view=HomePage ssr=SsrMode::InOrder/>
                <Route
                    path=(StaticSegment("c"), ParamSegment("id"))
                    view=ConversationPage
                    ssr=SsrMode::InOrder
                />
                <Route
                    path=(StaticSegment("s"), ParamSegment("token"))
                    view=SharedPage
                    ssr=SsrMode::InOrder
                />
            </Routes>
        </Router>
    }
}
