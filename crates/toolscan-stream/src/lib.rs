//! The async edge of toolscan: a [`Stream`](futures_core::Stream) of byte
//! chunks in, a stream of [`Event`](toolscan_core::Event)s out.
//!
//! ```
//! use bytes::Bytes;
//! use futures::{executor::block_on, stream, TryStreamExt};
//! use toolscan_core::{Event, Parser};
//! use toolscan_stream::EventStreamExt;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! // What an HTTP client hands over: chunks cut anywhere, each a `Result`.
//! let chunks = stream::iter([
//!     Ok::<_, std::io::Error>(Bytes::from_static(b"Let me check.\n<tool_")),
//!     Ok(Bytes::from_static(b"call>{\"name\": \"get_weather\", ")),
//!     Ok(Bytes::from_static(b"\"arguments\": {\"city\": \"Paris\"}}</tool_call>")),
//! ]);
//!
//! let events: Vec<Event> = block_on(
//!     chunks.tool_events(Parser::for_format("hermes")?).try_collect(),
//! )?;
//! for event in &events {
//!     println!("{event:?}");
//! }
//! assert!(matches!(events.last(), Some(Event::Done { .. })));
//! # Ok(())
//! # }
//! ```
//!
//! [`EventStream`] is to a [`Parser`](toolscan_core::Parser) what tokio-util's
//! `FramedRead` is to a decoder: it polls the inner stream only when every
//! event of the previous chunk has been yielded, feeds each chunk to the
//! parser, and calls [`Parser::finish`](toolscan_core::Parser::finish) once
//! when the inner stream ends, so the last event of a complete response is
//! always [`Event::Done`](toolscan_core::Event::Done). A transport error is
//! passed on as [`StreamError::Transport`] and ends the stream *without*
//! finishing the parser (see [`EventStream`] for why, and how to finish
//! anyway).
//!
//! [`Dispatcher`] runs a handler for every tool call the moment the call is
//! complete, while the rest of the response is still streaming, with
//! bounded concurrency and results in call order (see [`dispatch`]).
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod bytes_events;
pub mod dispatch;
mod error;
mod event_stream;
mod ext;
mod queue;

pub use bytes_events::{ByteEvent, ByteEvents};
pub use event_stream::OwnedEvents;

pub use dispatch::{CallOutput, Dispatch, Dispatched, Dispatcher};

pub use error::StreamError;
pub use event_stream::EventStream;
pub use ext::EventStreamExt;
