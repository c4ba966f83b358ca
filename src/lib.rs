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
