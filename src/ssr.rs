//! Everything that only runs on the server: configuration, state, sessions and the HTTP
//! server. Nothing below this module compiles to wasm, and nothing outside it does IO.

pub mod agent;
pub mod align;
pub mod answer;
pub mod blocking;
pub mod chat;
pub mod cli;
pub mod config;
pub mod doctor;
pub mod eval;
pub mod fetch;
pub mod files;
pub mod framing;
pub mod knowledge;
pub mod limits;
pub mod live;
pub mod llm;
pub mod mcp;
pub mod media;
pub mod messages;
pub mod metrics;
pub mod net;
pub mod passwords;
pub mod pipeline;
pub mod prompts;
pub mod request;
pub mod research;
pub mod search;
pub mod session;
pub mod shared;
pub mod state;
pub mod store;
/// The scripted model the tests and benchmarks drive the answer path with.
#[cfg(any(test, feature = "testing"))]
pub mod testing;
pub mod tolerant;
pub mod web;
