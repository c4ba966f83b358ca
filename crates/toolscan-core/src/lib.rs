//! Sans-IO core of toolscan: bytes of LLM output in, text and tool-call
//! events out, as the chunks arrive.
//!
//! ```
//! use toolscan_core::{Event, Parser};
//!
//! let mut p = Parser::for_format("hermes").unwrap();
//! let mut events = Vec::new();
//! for chunk in ["Let me check.\n<tool_", "call>{\"name\": \"get_weather\", ",
//!               "\"arguments\": {\"city\": \"Paris\"}}</tool_call>"] {
//!     events.extend(p.feed(chunk.as_bytes()));
//! }
//! events.extend(p.finish());
//! let end = events.iter().find_map(|e| match e {
//!     Event::ToolCallEnd { name, arguments, .. } => Some((name.clone(), arguments.clone())),
//!     _ => None,
//! });
//! let (name, args) = end.unwrap();
//! assert_eq!(name, "get_weather");
//! assert_eq!(args["city"], "Paris");
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod error;
mod event;
mod ids;
mod options;
mod parser;
mod registry;
mod response;
mod tools;

pub use error::Error;
pub use event::{Diagnostic, DiagnosticKind, Event, FinishReason};
pub use ids::IdMint;
pub use options::{Limits, Options};
pub use parser::Parser;
pub use registry::{format_for_model, Format, Grammar, Registry};
pub use response::{coalesce, Response, ToolCall};
pub use tools::Tools;
