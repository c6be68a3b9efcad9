//! Everything that only runs on the server: configuration, state, sessions and the HTTP
//! server. Nothing below this module compiles to wasm, and nothing outside it does IO.

pub mod agent;
pub mod chat;
pub mod config;
pub mod doctor;
pub mod fetch;
pub mod knowledge;
pub mod llm;
pub mod prompts;
pub mod research;
pub mod search;
pub mod serve;
pub mod session;
pub mod state;
pub mod tolerant;

/// Chooses rustls' crypto provider (ring) for every HTTPS client in the process. reqwest is
/// built without a default provider so that the slow-to-build aws-lc-sys is never compiled.
/// Safe to call more than once.
pub fn install_crypto_provider() {
    let _already_installed = rustls::crypto::ring::default_provider().install_default();
}
