//! What every outgoing HTTP client of cited shares: the TLS provider and the user agent.

/// Must not start with a name SearXNG's bot detection blocks (curl, python-requests, Go-http-client, …).
pub const USER_AGENT_VALUE: &str = concat!(
    "Mozilla/5.0 (X11; Linux x86_64; compatible) cited/",
    env!("CARGO_PKG_VERSION")
);

/// Chooses rustls' crypto provider (ring) for every HTTPS client in the process. reqwest is
/// built without a default provider so that the slow-to-build aws-lc-sys is never compiled.
/// Safe to call more than once.
pub fn install_crypto_provider() {
    let _already_installed = rustls::crypto::ring::default_provider().install_default();
}
