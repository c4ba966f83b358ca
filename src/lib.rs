//! toolscan: pull tool calls out of LLM output while it streams.
//!
//! This facade re-exports the sans-IO core ([`toolscan_core`]) and the async
//! adapter ([`toolscan_stream`]).
//!
//! ```
//! use toolscan::{Event, Parser};
//! let mut p = Parser::for_format("auto").unwrap();
//! let mut events = p.feed("Sure.<tool_call>{\"name\": \"f\", \"arguments\": {}}</tool_call>".as_bytes());
//! events.extend(p.finish());
//! assert!(events.iter().any(|e| matches!(e, Event::ToolCallEnd { name, .. } if name == "f")));
//! ```
#![forbid(unsafe_code)]

pub use toolscan_core::*;
pub use toolscan_stream as stream;

/// The README's code, compiled and run as a doc-test so it cannot rot.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

/// The READMEs of the workspace's crates, doc-tested here (this crate's
/// dev-dependencies reach every one of them) so that their examples
/// compile and run.
#[cfg(doctest)]
mod crate_readmes {
    #[doc = include_str!("../crates/toolscan-core/README.md")]
    struct Core;
    #[doc = include_str!("../crates/toolscan-stream/README.md")]
    struct Stream;
    #[doc = include_str!("../crates/toolscan-sse/README.md")]
    struct Sse;
    #[doc = include_str!("../crates/toolscan-proxy/README.md")]
    struct Proxy;
    #[doc = include_str!("../crates/toolscan-cli/README.md")]
    struct Cli;
    #[doc = include_str!("../crates/toolscan-testkit/README.md")]
    struct Testkit;
}
