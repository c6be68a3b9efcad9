//! `AppState`: what every request handler and server function can reach.

use std::sync::Arc;

use axum::extract::FromRef;
use leptos::config::LeptosOptions;

use crate::ssr::config::Config;
use crate::ssr::session::SessionStore;

#[derive(Clone)]
pub struct AppState {
    pub config: Arc<Config>,
    pub sessions: Arc<SessionStore>,
    pub leptos_options: LeptosOptions,
}

impl AppState {
    pub fn new(config: Config) -> AppState {
        let leptos_options = LeptosOptions::builder()
            .output_name("cited")
            .site_root(config.site_root.to_string_lossy().into_owned())
            .site_pkg_dir("pkg")
            .site_addr(config.addr)
            .build();
        AppState {
            sessions: Arc::new(SessionStore::new(config.session_idle)),
            config: Arc::new(config),
            leptos_options,
        }
    }
}

impl FromRef<AppState> for LeptosOptions {
    fn from_ref(state: &AppState) -> LeptosOptions {
        state.leptos_options.clone()
    }
}
