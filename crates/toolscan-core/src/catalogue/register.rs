//! Registering a described format: from its JSON text or from a file.

use std::path::Path;

use crate::catalogue::registry::Registry;
use crate::error::Error;
use crate::error::FormatFileError;
use crate::lang::format::Format;

impl Registry {
    /// Adds the format a JSON description gives (see
    /// [`format_file`](crate::lang::format_file) for the schema) and returns it.
    ///
    /// The description must be valid and its name new (not a built-in's):
    /// otherwise [`Error::FormatFile`] names the field at fault and why.
    ///
    /// ```
    /// use toolscan_core::Registry;
    /// let mut reg = Registry::builtin();
    /// let f = reg.register_json(r#"{
    ///     "name": "my-call",
    ///     "open": "<call>",
    ///     "arguments": {"json": "call"},
    ///     "close": "</call>"
    /// }"#).unwrap();
    /// assert_eq!(f.markers(), ["<call>"]);
    /// let e = reg.register_json(r#"{"name": "hermes", "open": "<x>", "arguments": {"json": "call"}}"#)
    ///     .unwrap_err();
    /// assert_eq!(e.to_string(), "invalid format description: /name: a format named `hermes` exists already");
    /// ```
    pub fn register_json(&mut self, text: &str) -> Result<&Format, Error> {
        let format = Format::from_json(text).map_err(Error::FormatFile)?;
        self.add_described(format).map_err(Error::FormatFile)
    }

    /// Like [`register_json`](Registry::register_json), with the
    /// description read from a file; errors name the file too.
    pub fn register_file(&mut self, path: impl AsRef<Path>) -> Result<&Format, Error> {
        let path = path.as_ref();
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| {
            Error::FormatFile(
                FormatFileError::new("", format!("cannot read it: {e}")).in_file(&shown),
            )
        })?;
        let format = Format::from_json(&text).map_err(|e| Error::FormatFile(e.in_file(&shown)))?;
        self.add_described(format)
            .map_err(|e| Error::FormatFile(e.in_file(&shown)))
    }

    /// Registers a format that compiled on its own: only its name can
    /// still clash.
    fn add_described(&mut self, format: Format) -> Result<&Format, FormatFileError> {
        let name = format.name().to_owned();
        if self.get(&name).is_some() {
            return Err(FormatFileError::new(
                "/name",
                format!("a format named `{name}` exists already"),
            ));
        }
        self.register(format)
            .map_err(|e| FormatFileError::new("", e.to_string()))?;
        self.get(&name)
            .ok_or_else(|| FormatFileError::new("/name", "the format was not registered"))
    }
}
