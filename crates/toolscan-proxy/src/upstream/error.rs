//! Why the upstream's answer could not be had ([`UpstreamError`]).

use std::fmt;
use std::io;
use std::time::Duration;

/// Why the upstream's answer could not be had, or its body not read to
/// its end.
#[derive(Debug)]
pub(crate) enum UpstreamError {
    /// reqwest's error, its URL removed (it may hold a secret).
    Transport(reqwest::Error),
    /// The upstream could not be connected to.
    Connect(io::Error),
    /// Reading from or writing to the upstream's connection failed.
    Io(io::Error),
    /// What the upstream sent is not HTTP/1.1 the proxy can read.
    Protocol(&'static str),
    /// Nothing came for this long (`--upstream-idle-timeout`).
    Idle(Duration),
    /// The request took longer than it was given, or its connection took
    /// longer than `--connect-timeout`.
    Timeout(Duration),
}

impl UpstreamError {
    /// Whether the upstream was too slow (a `504` before the answer began).
    pub(crate) fn is_timeout(&self) -> bool {
        match self {
            UpstreamError::Transport(e) => e.is_timeout(),
            UpstreamError::Idle(_) | UpstreamError::Timeout(_) => true,
            UpstreamError::Connect(e) | UpstreamError::Io(e) => e.kind() == io::ErrorKind::TimedOut,
            UpstreamError::Protocol(_) => false,
        }
    }
}

impl From<reqwest::Error> for UpstreamError {
    fn from(e: reqwest::Error) -> UpstreamError {
        UpstreamError::Transport(e.without_url())
    }
}

impl fmt::Display for UpstreamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UpstreamError::Transport(e) => f.write_str(&error_chain(e)),
            UpstreamError::Connect(e) => write!(f, "cannot connect: {e}"),
            UpstreamError::Io(e) => write!(f, "the connection failed: {e}"),
            UpstreamError::Protocol(why) => f.write_str(why),
            UpstreamError::Idle(after) => write!(
                f,
                "the upstream sent nothing for {} s (--upstream-idle-timeout)",
                after.as_secs_f64()
            ),
            UpstreamError::Timeout(after) => {
                write!(f, "no answer within {} s", after.as_secs_f64())
            }
        }
    }
}

impl std::error::Error for UpstreamError {}

/// An error and its sources, `: `-separated (how an upstream's failure
/// is told, here and in `errors.rs`).
pub(crate) fn error_chain(e: &dyn std::error::Error) -> String {
    let mut message = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let text = s.to_string();
        if !message.contains(&text) {
            message.push_str(": ");
            message.push_str(&text);
        }
        source = s.source();
    }
    message
}
