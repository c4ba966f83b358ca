//! Placeholder registry while the engine lands.
use std::sync::Arc;

use crate::error::Error;

/// A format definition.
#[derive(Clone, Debug)]
pub struct Format {
    name: String,
}

impl Format {
    /// The format's name.
    pub fn name(&self) -> &str {
        &self.name
    }
    /// The catalogue entry (e.g. `F01, F02`).
    pub fn catalogue(&self) -> &str {
        ""
    }
    /// One-line description.
    pub fn description(&self) -> &str {
        ""
    }
    /// Human-readable markers.
    pub fn markers(&self) -> Vec<String> {
        Vec::new()
    }
}

/// A compiled set of formats.
#[derive(Debug)]
pub struct Grammar {
    name: String,
}

impl Grammar {
    /// The grammar's name (a format name or `auto`).
    pub fn name(&self) -> &str {
        &self.name
    }
}

/// Named formats.
#[derive(Clone, Debug)]
pub struct Registry {
    formats: Vec<Format>,
}

impl Registry {
    /// The built-in formats.
    pub fn builtin() -> Registry {
        Registry { formats: vec![Format { name: "hermes".into() }] }
    }
    /// All formats.
    pub fn formats(&self) -> &[Format] {
        &self.formats
    }
    /// The compiled grammar of a format name, or of `auto`.
    pub fn grammar(&self, name: &str) -> Result<Arc<Grammar>, Error> {
        if name == "auto" || self.formats.iter().any(|f| f.name == name) {
            Ok(Arc::new(Grammar { name: name.into() }))
        } else {
            Err(Error::UnknownFormat(name.into()))
        }
    }
}

/// The format a model id is known to use.
pub fn format_for_model(model: &str) -> Option<&'static str> {
    let _ = model;
    None
}
