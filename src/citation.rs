//! The citation core: markers, the registry, safe rendering, reference lists and the
//! prompt-side formatting of sources.
//!
//! Pure Rust with no IO and no `cfg(feature)`: the server uses it to number sources and
//! build prompts and lists, the browser (wasm) to render answers as they stream. Nothing
//! here logs; problems (unknown numbers, registry conflicts) are returned to the caller.
//!
//! Flow: search results → [`Registry::add_round`] assigns numbers → the model sees them via
//! [`prompt`] → its answer goes through [`render()`] (markers resolved to entries) and
//! [`lists`] (only what the answer cites).

pub mod coverage;
pub mod export;
pub mod lists;
pub mod markers;
pub mod prompt;
pub mod registry;
pub mod render;
pub mod stream;
pub mod urls;

pub use registry::{Allocation, CitationEntry, Conflict, Registry, Round};
pub use render::{render, used_numbers, Block, Cite, Inline, Lookup, Problem, Rendered, SourceMap};
pub use stream::{Delta, Incremental};

#[cfg(test)]
mod tests;
