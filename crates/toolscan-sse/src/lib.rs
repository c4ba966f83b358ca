//! OpenAI `chat.completions` in, OpenAI `chat.completions` out: the text
//! tool calls of a server that only sends text become proper
//! `tool_calls`, in streaming (SSE) responses and in whole ones.
//!
//! - [`rewrite_stream`] adapts an upstream SSE body (byte chunks cut
//!   anywhere) to a rewritten SSE body, as the chunks arrive;
//! - [`rewrite_body`] rewrites a whole `chat.completion` object;
//! - [`ChunkRewriter`] is the streaming rewrite over each chunk's JSON
//!   text, without SSE (what bindings in other languages build on).
//!
//! Both read only the fields they need (`choices[].index`,
//! `delta.content`/`message.content`, `delta.tool_calls[].index`,
//! `finish_reason`, `usage`) and keep every other field as it came, in its
//! place (keys in the upstream's order with the feature `preserve-order`;
//! sorted without it, serde_json's default map).
//!
//! # What a streamed chunk becomes
//!
//! Each choice (by its `index`; `n > 1` works) has its own parser, fed the
//! choice's `delta.content`:
//!
//! - text stays `delta.content`; reasoning (with
//!   [`Options::reasoning`](toolscan_core::Options::reasoning)) goes to `delta.reasoning_content`;
//! - a text call becomes one `delta.tool_calls` entry,
//!   `{"index", "id", "type": "function", "function": {"name", "arguments"}}`
//!   with all its arguments, in the chunk where the call's end is
//!   confirmed (the chunk that brings its closing markup: still long
//!   before `[DONE]`). A block that fails — malformed JSON, a stray closer,
//!   cut by the token limit — never produces an entry: its markup is
//!   `content`, as the upstream sent it, so a client never sees a call the
//!   model did not complete (a *phantom call*). With
//!   [`Config::stream_arguments`] a call's first entry (`index`, `id`,
//!   `type`, `function.name`, and the arguments that came in the same
//!   chunk, maybe `""`) is sent when it starts and
//!   `{"index", "function": {"arguments": DELTA}}` entries as its
//!   arguments come, for UIs that show them live; a call that then breaks
//!   has sent entries whose arguments are not JSON, and its markup follows
//!   as `content`. Either way the concatenated arguments of a call's
//!   entries are its arguments JSON text, and a chunk holds at most one
//!   entry per call (OpenAI's clients read one per index);
//! - the upstream's own `delta.tool_calls` are passed on; a native call
//!   keeps its index unless a text call of the same choice already took
//!   it, in which case it gets the next free index (one above every index
//!   used in that choice) for the rest of the stream. Text calls get the
//!   next free index when they start, so with text calls only they are
//!   numbered `0, 1, 2…`;
//! - `finish_reason`: the upstream's `"length"` is kept (the output was
//!   cut); otherwise `"tool_calls"` when a text call completed in the
//!   choice; otherwise the upstream's. With `"stop"` the parser ends with
//!   [`Parser::finish_at_stop_with`](toolscan_core::Parser::finish_at_stop_with)
//!   (a call whose closing markup a stop sequence cut is completed, see
//!   [`Config::complete_at_stop`]); with anything else with
//!   [`finish_with`](toolscan_core::Parser::finish_with) (a call cut short
//!   comes back as text: `content`, with `"length"` kept). With
//!   [`Config::stream_arguments`], entries already sent for a call that is
//!   then cut short stay sent, as OpenAI's own truncated calls do.
//!   A rewritten chunk whose choice carries tool calls and ends the choice
//!   is sent as two: the calls with `finish_reason: null`, then the
//!   envelope with an empty delta and the `finish_reason` (the stream
//!   helper of OpenAI's Python client finishes a call's arguments only
//!   when a later chunk comes);
//! - text the parser holds back (a possible marker) is sent in the chunk
//!   that releases it. A chunk left with nothing — every delta only empty
//!   text or nulls, no `finish_reason`, nothing beyond the envelope (`id`,
//!   `object`, `created`, `model`, `system_fingerprint`, `service_tier`,
//!   `obfuscation`) non-null — is not sent; one with anything else
//!   (`role`, `logprobs`, `usage`, an unknown field) is, with empty
//!   `content`;
//! - what a choice still holds when the upstream ends it without a
//!   `finish_reason` (at `[DONE]`, at the usage-only chunk, or when the
//!   body ends) is sent in one extra chunk copying the last chunk's
//!   envelope;
//! - a chunk the rewrite does not change is passed on byte for byte; data
//!   that is not JSON is passed on unchanged, with a `tracing` warning;
//!   anything that is not a chunk (an error object, an event without data)
//!   too; SSE comments (keep-alives) are dropped by the decoder;
//! - `[DONE]` is sent once, last, and only if the upstream sent it; the
//!   upstream is not read after it.
//!
//! A transport error of the upstream ends the stream with
//! [`RewriteError::Upstream`] after everything before it, without `[DONE]`;
//! text a parser still held then is not sent. So does a chunk that brings
//! more distinct choices than [`Config::max_choices`]
//! ([`RewriteError::TooManyChoices`]: one parser is kept per choice).
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod body;
mod choice;
mod chunks;
mod config;
mod deltas;
mod error;
mod light;
mod scan;
mod sse;
mod stream;
mod tally;

pub use chunks::{ChunkRewriter, Emit};
pub use config::Config;
pub use deltas::{Call, Delta, DeltaSink, Deltas, Entry};
pub use error::{BodyError, DecodeError, RewriteError};
pub use tally::Tally;

use bytes::Bytes;
use futures_core::Stream;

use crate::stream::Rewritten;

/// Rewrites an upstream streaming `chat.completions` body (SSE, as byte
/// chunks cut anywhere) into an SSE body in which text tool calls are
/// `delta.tool_calls` (see the [crate documentation](crate) for the
/// rules). Each item is the bytes of one or more whole SSE events, sent as
/// soon as the upstream event that produced them is decoded.
///
/// ```
/// use bytes::Bytes;
/// use futures_util::StreamExt;
/// use toolscan_core::Registry;
/// use toolscan_sse::{rewrite_stream, Config};
///
/// let upstream = [
///     r#"data: {"id":"c1","choices":[{"index":0,"delta":{"content":"<tool_call>{\"name\": \"f\", "},"finish_reason":null}]}"#,
///     "\n\n",
///     r#"data: {"id":"c1","choices":[{"index":0,"delta":{"content":"\"arguments\": {}}</tool_call>"},"finish_reason":"stop"}]}"#,
///     "\n\ndata: [DONE]\n\n",
/// ]
/// .map(|s| Ok::<_, std::io::Error>(Bytes::from(s)));
/// let config = Config::new(Registry::builtin().grammar("hermes").unwrap());
/// let out = futures_util::stream::iter(upstream);
/// let out: Vec<_> = futures::executor::block_on(rewrite_stream(out, config).collect());
/// let sse: String = out.into_iter().map(|b| String::from_utf8(b.unwrap().to_vec()).unwrap()).collect();
/// assert!(sse.contains(r#""tool_calls":[{"index":0,"id":"call_"#));
/// assert!(sse.contains(r#""type":"function","function":{"name":"f","arguments":"{}"}}"#));
/// assert!(sse.contains(r#""finish_reason":"tool_calls""#));
/// assert!(sse.ends_with("data: [DONE]\n\n"));
/// ```
pub fn rewrite_stream<S, E>(
    upstream: S,
    config: Config,
) -> impl Stream<Item = Result<Bytes, RewriteError<E>>> + Send + 'static
where
    S: Stream<Item = Result<Bytes, E>> + Send + 'static,
    E: std::error::Error + Send + Sync + 'static,
{
    Rewritten::new(upstream, config)
}

/// Rewrites a whole (non-streaming) `chat.completion` body: each choice's
/// `message.content` is parsed, its text tool calls become
/// `message.tool_calls` (`[{id, type: "function", function: {name,
/// arguments}}]`, after any the upstream sent), the content the remaining
/// text (`null` if that is empty and there are calls), reasoning
/// `message.reasoning_content`, and `finish_reason` `"tool_calls"` when
/// calls were found (a `"length"` is kept). A body without text calls, or
/// JSON that is not a completion, is returned byte for byte.
///
/// ```
/// use toolscan_core::Registry;
/// use toolscan_sse::{rewrite_body, Config};
///
/// let body = br#"{"id":"c1","choices":[{"index":0,"message":{"role":"assistant","content":"Sure.<tool_call>{\"name\": \"f\", \"arguments\": {\"a\": 1}}</tool_call>"},"finish_reason":"stop"}]}"#;
/// let config = Config::new(Registry::builtin().grammar("hermes").unwrap());
/// let out: serde_json::Value = serde_json::from_slice(&rewrite_body(body, &config).unwrap()).unwrap();
/// let choice = &out["choices"][0];
/// assert_eq!(choice["message"]["content"], "Sure.");
/// assert_eq!(choice["message"]["tool_calls"][0]["function"]["name"], "f");
/// assert_eq!(choice["message"]["tool_calls"][0]["function"]["arguments"], r#"{"a": 1}"#);
/// assert_eq!(choice["finish_reason"], "tool_calls");
/// ```
pub fn rewrite_body(body: &[u8], config: &Config) -> Result<Vec<u8>, BodyError> {
    body::rewrite(body, config)
}
