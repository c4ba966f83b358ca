//! What can go wrong: before a run ([`SetupError`]: a bad URL, an
//! unreadable workload, an unknown format) and within one request
//! ([`RequestError`], recorded with the request: a run goes on past it).

use std::fmt;

use serde::{Deserialize, Serialize};

/// A run cannot start: the message says why, in one line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SetupError(pub String);

impl fmt::Display for SetupError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SetupError {}

/// Why one request failed: its kind (what a summary counts) and a message
/// for a person (one line).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RequestError {
    /// The kind, as JSON `error.kind`.
    pub kind: ErrorKind,
    /// One line: what happened, with the server's own words when it gave
    /// some.
    pub message: String,
}

impl RequestError {
    /// An error of `kind` saying `message`.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> RequestError {
        RequestError {
            kind,
            message: one_line(&message.into()),
        }
    }
}

impl fmt::Display for RequestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// The kinds of [`RequestError`]; their JSON names are in snake case.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// The server could not be reached (refused, no route, DNS, TLS).
    Connect,
    /// The server answered with an HTTP error status.
    Status,
    /// The answer was not an SSE stream (`text/event-stream`).
    NotSse,
    /// Nothing came for `--timeout` seconds: no answer, or a stalled
    /// stream.
    Timeout,
    /// The stream broke (the connection closed or failed mid-way).
    Broken,
    /// The stream carried an error object (`data: {"error": …}`).
    Upstream,
    /// The stream ended with neither `[DONE]` nor a `finish_reason`.
    Unfinished,
}

impl ErrorKind {
    /// The JSON name (`not_sse`, …), and what summaries print.
    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::Connect => "connect",
            ErrorKind::Status => "status",
            ErrorKind::NotSse => "not_sse",
            ErrorKind::Timeout => "timeout",
            ErrorKind::Broken => "broken",
            ErrorKind::Upstream => "upstream",
            ErrorKind::Unfinished => "unfinished",
        }
    }
}

/// `message` on one line: runs of whitespace with a line break in them
/// become one space.
pub(crate) fn one_line(message: &str) -> String {
    message
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}
