//! Why a response cannot be rendered.

use std::fmt;

/// Why a response cannot be rendered in a format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RenderError {
    /// This call's name is empty.
    EmptyName(usize),
    /// No way of writing these calls in this format reads back as them:
    /// the format cannot hold them (a value holding the format's closing
    /// markup where nothing escapes it, several calls where a format has
    /// one, a name or key its markup cannot hold, text that would be read
    /// as markup).
    Unwritable,
    /// The search for a way of writing them ran out of steps.
    TooComplex,
    /// The response is over one of the bounds of a rendering.
    Limit(RenderLimit),
    /// The format does not say how tool results are written
    /// ([`Format::render_tool_results`](crate::lang::format::Format::render_tool_results)).
    NoResultNotation,
}

impl fmt::Display for RenderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RenderError::EmptyName(i) => write!(f, "call #{i} has an empty name"),
            RenderError::Unwritable => f.write_str(
                "the format cannot write this response so that it reads back the same \
                 (a value, name or text it cannot hold, or more calls than it writes)",
            ),
            RenderError::TooComplex => {
                f.write_str("the search for a way of writing this response ran out of steps")
            }
            RenderError::Limit(l) => write!(
                f,
                "the response holds more than {} {}, the most one rendering takes",
                l.max(),
                l.what()
            ),
            RenderError::NoResultNotation => {
                f.write_str("the format does not say how tool results are written")
            }
        }
    }
}

impl std::error::Error for RenderError {}

/// A bound of one rendering ([`RenderError::Limit`]). Rendering is linear
/// in each; the bounds keep one request's work and memory small.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RenderLimit {
    /// Calls in one response: 10 000.
    Calls,
    /// Parameters in all its calls — every member of an arguments object
    /// and of the objects in it, and every item of a list in it: 100 000.
    Params,
    /// Bytes of its text, names, ids and arguments' JSON: 32 MiB.
    Bytes,
}

impl RenderLimit {
    /// The bound.
    pub const fn max(self) -> usize {
        match self {
            RenderLimit::Calls => 10_000,
            RenderLimit::Params => 100_000,
            RenderLimit::Bytes => 32 << 20,
        }
    }

    /// What is counted, in the plural.
    pub const fn what(self) -> &'static str {
        match self {
            RenderLimit::Calls => "calls",
            RenderLimit::Params => "parameters (keys and list items)",
            RenderLimit::Bytes => "bytes",
        }
    }
}
