//! How far the arguments of a call are: the state the readers of every
//! notation and the call's assembly share.

use crate::engine::call::unescape::Unescaper;

/// How far the arguments of a call are.
#[derive(Debug, Default)]
pub(crate) enum Args {
    /// Not seen yet.
    #[default]
    Missing,
    /// An object being recorded; it started at this depth.
    Object(usize),
    /// A JSON string holding the arguments, being decoded.
    Encoded(Unescaper),
    /// A literal being read (only `null` is allowed).
    Literal,
    /// An object being built from parameters (`{` written, `}` not yet).
    Params,
    /// An object being written by a reader of another notation (Python
    /// keyword arguments), which writes its closing bracket itself.
    Written,
    /// `null`.
    Null,
    /// Complete.
    Done,
}
