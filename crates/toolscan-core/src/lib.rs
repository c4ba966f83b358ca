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
//! assert_eq!(args.as_str(), r#"{"city": "Paris"}"#);
//! assert_eq!(args.parse().unwrap()["city"], "Paris");
//! ```
//!
//! Without allocating per event, through a [`Sink`] that receives
//! [`EventRef`]s borrowing from the chunk:
//!
//! ```
//! use toolscan_core::{sink, EventRef, Parser};
//! let mut p = Parser::for_format("auto").unwrap();
//! let mut calls = 0;
//! let mut s = sink::from_fn(|e: EventRef<'_>| {
//!     if let EventRef::ToolCallEnd { name, arguments, .. } = e {
//!         assert_eq!((name, arguments), ("get_time", "{}"));
//!         calls += 1;
//!     }
//! });
//! p.feed_with(b"[TOOL_CALLS]get_time[ARGS]{}", &mut s);
//! p.finish_with(&mut s);
//! assert_eq!(calls, 1);
//! ```
//!
//! Nothing is lost: every input byte reaches a [`Event::Text`] (or, with
//! reasoning separation, [`Event::Reasoning`]) delta, except the bytes
//! that are dropped — the span of a dispatched call (its markers, and the
//! wrappers and separators of a group of calls); a format's framing, the
//! markup around ordinary content (Harmony's message headers up to
//! `<|message|>`, its `<|end|>`, `<|return|>` and `<|call|>`;
//! Functionary v3.2's `all` recipient lines; Kimi K3's
//! `<|open|>response<|sep|>` and `<|close|>response<|sep|>`; Cohere's
//! `<|START_RESPONSE|>`, `<|END_RESPONSE|>`, `<|START_TEXT|>`,
//! `<|END_TEXT|>` and `directly-answer` pseudo-calls; `json`'s
//! `{"response": …}` envelope, whose string is text, decoded); and, with
//! reasoning separation, the reasoning markers. A call written inside
//! reasoning is reasoning unless the stream never closes the reasoning
//! block ([`CallsInReasoning`]).
//!
//! The pieces: [`Registry`] names the formats and compiles a [`Grammar`]
//! (the marker automata and block programs of one format, or of `auto`);
//! a [`Parser`] runs one response through it; [`Response`] collects events
//! into the final object; [`parse`] does both at once.
// `unsafe` is denied but in two places, each measured to pay (see
// ARCHITECTURE.md and BENCHMARKS.md) and each block with its soundness
// argument beside it: `utf8::as_text` (ASCII used as text unchecked) and
// the AVX2 and AVX-512 searches of `simd`, whose `#[target_feature]`
// functions are reached only through wrappers that take a CPU token of
// `cpu` (made only after the CPU said it has the instructions).
#![deny(unsafe_code)]
#![warn(missing_docs)]

mod batch;
mod catalogue;
mod engine;
mod error;
mod event;
mod ids;
mod lang;
pub mod manifest;
mod offset;
mod options;
mod read;
pub mod render;
mod response;
mod scan;
pub mod sink;
mod tools;
#[doc(hidden)]
pub mod work;

pub use catalogue::aliases;
pub use lang::format_file;

pub use batch::{Events, EventsIter};
pub use catalogue::registry::{format_for_model, Registry};
pub use engine::parser::Parser;
pub use error::Error;
pub use event::{Arguments, Delta, Diagnostic, DiagnosticKind, Event, EventRef, FinishReason};
pub use ids::IdMint;
pub use lang::format::Format;
pub use lang::format_file::FormatFileError;
pub use lang::grammar::{reasoning_markers, Grammar};
pub use manifest::{Manifest, ManifestError, Notation};
pub use options::{Admit, CallsInReasoning, Check, Limits, Options};
pub use render::{Call, RenderError, RenderLimit, RenderedResults, ToolResult};
pub use response::{coalesce, Response, ToolCall};
pub use sink::Sink;
pub use tools::{Tool, Tools};

/// Parses a whole response at once: exactly what collecting the events of
/// feeding it in any chunks gives (streaming equals one-shot).
///
/// ```
/// use toolscan_core::{parse, FinishReason, Options, Registry};
/// let g = Registry::builtin().grammar("auto").unwrap();
/// let r = parse(g, Options::default(), b"[TOOL_CALLS]get_time[ARGS]{}");
/// assert_eq!(r.tool_calls[0].name, "get_time");
/// assert_eq!(r.finish_reason, FinishReason::ToolCalls);
/// ```
pub fn parse(grammar: std::sync::Arc<Grammar>, options: Options, input: &[u8]) -> Response {
    let mut p = Parser::new(grammar, options);
    let mut r = Response::default();
    p.feed_with(input, &mut r);
    p.finish_with(&mut r);
    r
}
