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
            RenderError::NoResultNotation => {
                f.write_str("the format does not say how tool results are written")
            }
        }
    }
}

impl std::error::Error for RenderError {}
