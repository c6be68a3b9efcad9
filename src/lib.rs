//! cited: a self-hosted answer engine in which every claim links to its source.
//!
//! One crate, two builds. With `ssr` it is the axum server (binary `cited`); with `hydrate`
//! it is the wasm that hydrates the server-rendered page in the browser. The modules shared
//! by both builds (`app`, `components`, `model`, `error`, `i18n`) contain no
//! `cfg(feature)`; everything server-only lives under `ssr`. See ARCHITECTURE.md.
#![cfg_attr(test, allow(clippy::unwrap_used))]
#![recursion_limit = "512"]

pub mod app;
pub mod citation;
pub mod components;
pub mod error;
pub mod i18n;
pub mod model;
pub mod server_fns;
pub mod text;

#[cfg(feature = "ssr")]
pub mod ssr;

#[cfg(all(test, feature = "ssr"))]
mod tests;

/// The wasm entry point: attaches the client to the server-rendered page.
#[cfg(feature = "hydrate")]
#[wasm_bindgen::prelude::wasm_bindgen]
pub fn hydrate() {
    console_error_panic_hook::set_once();
    leptos::mount::hydrate_body(app::App);
}
