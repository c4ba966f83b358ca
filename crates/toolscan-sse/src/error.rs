//! What can go wrong while rewriting: a stream ([`RewriteError`], whose
//! decoding failure is a [`DecodeError`]) or a whole body ([`BodyError`]).

use std::fmt;

/// What can go wrong while rewriting a stream.
#[derive(Debug)]
#[non_exhaustive]
pub enum RewriteError<E> {
    /// The upstream body failed (a transport error).
    Upstream(E),
    /// The upstream body is not SSE the decoder can read (a field that is
    /// not UTF-8).
    Decode(DecodeError),
    /// A chunk brought more distinct choice indices than
    /// [`Config::max_choices`](crate::Config::max_choices) (the bound).
    TooManyChoices(usize),
}

impl<E: fmt::Display> fmt::Display for RewriteError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RewriteError::Upstream(e) => write!(f, "upstream body failed: {e}"),
            RewriteError::Decode(e) => write!(f, "{e}"),
            RewriteError::TooManyChoices(max) => {
                write!(f, "the upstream sent more than {max} choices")
            }
        }
    }
}

impl<E: std::error::Error + 'static> std::error::Error for RewriteError<E> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            RewriteError::Upstream(e) => Some(e),
            RewriteError::Decode(e) => Some(e),
            RewriteError::TooManyChoices(_) => None,
        }
    }
}

/// The upstream body could not be decoded as SSE: a field's value is not
/// UTF-8.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DecodeError(pub(crate) crate::sse::fields::NotUtf8);

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("upstream body is not valid SSE: a field is not UTF-8")
    }
}

impl std::error::Error for DecodeError {}

/// What can go wrong while rewriting a whole response.
#[derive(Debug)]
#[non_exhaustive]
pub enum BodyError {
    /// The body is not JSON.
    NotJson(serde_json::Error),
    /// The rewritten response could not be serialised.
    Encode(serde_json::Error),
}

impl fmt::Display for BodyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BodyError::NotJson(e) => write!(f, "response body is not JSON: {e}"),
            BodyError::Encode(e) => write!(f, "cannot serialise the rewritten response: {e}"),
        }
    }
}

impl std::error::Error for BodyError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            BodyError::NotJson(e) | BodyError::Encode(e) => Some(e),
        }
    }
}
