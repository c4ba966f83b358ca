//! OpenAI `chat.completions` in, OpenAI `chat.completions` out: the text
//! tool calls of a server that only sends text become proper
//! `tool_calls`, in streaming (SSE) responses and in whole ones.
//!
//! (Being built for issue 7: the signatures below are the interface the
//! proxy builds on.)
#![forbid(unsafe_code)]
#![warn(missing_docs)]

use std::sync::Arc;

use bytes::Bytes;
use futures_core::Stream;
use toolscan_core::{Grammar, Options};

/// How responses are rewritten: the format each choice's content is read
/// with, and the parser options (tools, reasoning, ids).
#[derive(Clone, Debug)]
pub struct Config {
    /// The compiled format (`Registry::grammar`).
    pub grammar: Arc<Grammar>,
    /// Options for each choice's parser.
    pub options: Options,
}

impl Config {
    /// Reads content with `grammar`, default options.
    pub fn new(grammar: Arc<Grammar>) -> Config {
        Config {
            grammar,
            options: Options::default(),
        }
    }

    /// Sets the parser options.
    pub fn with_options(mut self, options: Options) -> Config {
        self.options = options;
        self
    }
}

/// What can go wrong while rewriting a stream.
#[derive(Debug)]
#[non_exhaustive]
pub enum RewriteError<E> {
    /// The upstream body failed (a transport error).
    Upstream(E),
}

/// What can go wrong while rewriting a whole response.
#[derive(Debug)]
#[non_exhaustive]
pub enum BodyError {
    /// The body is not a JSON `chat.completion` object.
    NotJson(serde_json::Error),
}

/// Rewrites an upstream streaming `chat.completions` body (SSE, as byte
/// chunks cut anywhere) into an SSE body in which text tool calls are
/// `delta.tool_calls`.
pub fn rewrite_stream<S, E>(
    upstream: S,
    config: Config,
) -> impl Stream<Item = Result<Bytes, RewriteError<E>>> + Send + 'static
where
    S: Stream<Item = Result<Bytes, E>> + Send + 'static,
    E: std::error::Error + Send + Sync + 'static,
{
    let _ = (config, upstream);
    futures_util::stream::empty()
}

/// Rewrites a whole (non-streaming) `chat.completion` body: each choice's
/// `message.content` is parsed, its text tool calls become
/// `message.tool_calls`.
pub fn rewrite_body(body: &[u8], config: &Config) -> Result<Vec<u8>, BodyError> {
    let _ = config;
    serde_json::from_slice::<serde_json::Value>(body).map_err(BodyError::NotJson)?;
    Ok(body.to_vec())
}
