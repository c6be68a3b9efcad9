//! The page shell and the router: wiring only. Views live in `components`.

use leptos::prelude::*;
use leptos_meta::{provide_meta_context, MetaTags, Stylesheet, Title};
use leptos_router::components::{Route, Router, Routes};
use leptos_router::{SsrMode, StaticSegment};

use crate::components::workspace::HomePage;
use crate::i18n::Lang;

/// The HTML document the server renders around the app.
pub fn shell(options: LeptosOptions) -> impl IntoView {
    view! {
        <!DOCTYPE html>
        <html lang="zh-CN">
            <head>
                <meta charset="utf-8"/>
                <meta name="viewport" content="width=device-width, initial-scale=1"/>
                <meta name="color-scheme" content="light dark"/>
                <link rel="icon" href="/favicon.svg" type="image/svg+xml"/>
                <HydrationScripts options/>
                <MetaTags/>
            </head>
            <body>
                <App/>
            </body>
        </html>
    }
}

#[component]
pub fn App() -> impl IntoView {
    provide_meta_context();
    provide_context(Lang::default());
    view! {
        <Stylesheet id="cited" href="/pkg/cited.css"/>
        <Title text="cited"/>
        <Router>
            <Routes fallback=|| view! { <p class="not-found">"404"</p> }>
                // In order: the HTML arrives complete and in place, so the page reads the same
                // with JavaScript disabled.
                <Route path=StaticSegment("") view=HomePage ssr=SsrMode::InOrder/>
            </Routes>
        </Router>
    }
}
