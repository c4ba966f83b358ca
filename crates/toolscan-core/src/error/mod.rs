//! Errors of configuration (not of model output: bad model output never
//! errors, it becomes text plus a [`Diagnostic`](crate::Diagnostic)).

use std::fmt;

mod file;

pub(crate) use file::child;
pub use file::FormatFileError;

/// What went wrong while setting a parser up.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// No format of that name (or alias) is registered.
    UnknownFormat {
        /// The name as given.
        name: String,
        /// A known name close to it, if there is one.
        suggestion: Option<String>,
    },
    /// A format definition is inconsistent (empty marker, a marker that is a
    /// substring of another active marker, a jump out of range…).
    InvalidFormat {
        /// The format's name.
        format: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A `tools` array could not be read.
    Tools(String),
    /// A format description (JSON) is invalid: the field at fault and why
    /// (see [`format_file`](crate::format_file)).
    FormatFile(FormatFileError),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::UnknownFormat { name, suggestion } => {
                write!(f, "unknown format `{name}`")?;
                if let Some(s) = suggestion {
                    write!(f, "; did you mean `{s}`?")?;
                }
                write!(f, " (`toolscan formats` lists the known ones)")
            }
            Error::InvalidFormat { format, reason } => {
                write!(f, "invalid format `{format}`: {reason}")
            }
            Error::Tools(why) => write!(f, "invalid tools array: {why}"),
            Error::FormatFile(e) => write!(f, "invalid format description: {e}"),
        }
    }
}

impl std::error::Error for Error {}
