//! How a format writes a call's arguments, read off its program: the
//! first step that reads arguments, in the first opener that has one —
//! the opener the renderer tries first. A format loaded from a file is
//! classified the same way as a built-in one.

use crate::lang::format::{Format, Step};

/// How a format writes the arguments of a call, which decides how its
/// manifest describes the tools.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Notation {
    /// A JSON value (the arguments object, or a call object holding it):
    /// tools are described by their JSON Schema.
    Json,
    /// Each parameter a raw value in markup (`<parameter=city>Paris`):
    /// tools are described parameter by parameter, with how lists and
    /// nested objects are written.
    Parameters,
    /// Python-like call arguments (`f(city='Paris')`): tools are
    /// described as Python signatures.
    Python,
}

impl Notation {
    /// The notation of `format`'s first opener that reads arguments;
    /// `None` when no program reads any.
    pub fn of(format: &Format) -> Option<Notation> {
        format
            .openers
            .iter()
            .flat_map(|o| &o.program)
            .find_map(|s| match s {
                Step::Json(_) => Some(Notation::Json),
                Step::Value(_) => Some(Notation::Parameters),
                Step::Py(_) => Some(Notation::Python),
                _ => None,
            })
    }

    /// The notation's name, as the CLI shows it.
    pub fn name(self) -> &'static str {
        match self {
            Notation::Json => "json",
            Notation::Parameters => "parameters",
            Notation::Python => "python",
        }
    }
}
