//! What is wrong with a format description: the field, and why.

use std::fmt;

/// A format description that cannot be used: the field at fault, as a JSON
/// pointer into the description, and why.
///
/// ```
/// use toolscan_core::Format;
/// let e = Format::from_json(r#"{"name": "x", "open": "", "arguments": {"json": "call"}}"#)
///     .unwrap_err();
/// assert_eq!(e.pointer(), "/open");
/// assert_eq!(e.to_string(), "/open: must be a non-empty string");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FormatFileError {
    /// The file the description was read from, when it was read from one
    /// (for messages); `None` for a description given as a string.
    file: Option<String>,
    /// The field at fault as a JSON pointer (`/arguments/params/close`;
    /// `~` and `/` in keys escaped as `~0` and `~1`); empty for the
    /// description as a whole (its text is not JSON, or not an object).
    pointer: String,
    /// Why the field is wrong: one line, no trailing period.
    reason: String,
}

impl FormatFileError {
    /// The field at `pointer` is wrong, for `reason`.
    pub(crate) fn new(pointer: impl Into<String>, reason: impl Into<String>) -> FormatFileError {
        FormatFileError {
            file: None,
            pointer: pointer.into(),
            reason: reason.into(),
        }
    }

    /// The same error, about the description in `file`.
    pub(crate) fn in_file(mut self, file: impl Into<String>) -> FormatFileError {
        self.file = Some(file.into());
        self
    }

    /// The field at fault, as a JSON pointer (`/arguments/params/close`);
    /// empty when the description as a whole is wrong (not JSON, not an
    /// object, an unreadable file).
    pub fn pointer(&self) -> &str {
        &self.pointer
    }

    /// Why the field is wrong.
    pub fn reason(&self) -> &str {
        &self.reason
    }

    /// The file the description was read from, if any.
    pub fn file(&self) -> Option<&str> {
        self.file.as_deref()
    }
}

impl fmt::Display for FormatFileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(file) = &self.file {
            write!(f, "{file}: ")?;
        }
        if self.pointer.is_empty() {
            write!(f, "{}", self.reason)
        } else {
            write!(f, "{}: {}", self.pointer, self.reason)
        }
    }
}

impl std::error::Error for FormatFileError {}

/// A JSON pointer one level down: `parent` + `/` + `key`, escaped.
pub(crate) fn child(parent: &str, key: &str) -> String {
    format!("{parent}/{}", key.replace('~', "~0").replace('/', "~1"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pointers_escape_keys() {
        assert_eq!(child("", "open"), "/open");
        assert_eq!(child("/openers/0", "a/b~c"), "/openers/0/a~1b~0c");
    }

    #[test]
    fn display_names_the_file_and_the_field() {
        let e = FormatFileError::new("/open", "must be a non-empty string");
        assert_eq!(e.to_string(), "/open: must be a non-empty string");
        let e = e.in_file("my.json");
        assert_eq!(e.to_string(), "my.json: /open: must be a non-empty string");
        assert_eq!(
            FormatFileError::new("", "not JSON: x").to_string(),
            "not JSON: x"
        );
    }
}
