//! A marker as a format writes it ([`Pattern`]), and what a word byte is.

/// A marker as written in a format definition.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Pattern {
    pub bytes: Vec<u8>,
    pub case_insensitive: bool,
    /// The marker only counts at the start of a line: after a newline, the
    /// start of the stream, or only spaces, tabs and a byte-order mark
    /// since one of them (checked by the caller's `accept`).
    pub line_start: bool,
}

impl Pattern {
    /// The marker begins with a word byte (`TOOL_CALL`, `functools[`): it
    /// counts only at the start of a word — after a byte that is not one,
    /// or at the start of the stream (checked by the caller's `accept`).
    /// `xTOOL_CALL` is no marker, and prose words that end like a marker
    /// begins (`of` and `functools`) are not held back.
    #[inline]
    pub(crate) fn word_start(&self) -> bool {
        is_word(self.bytes[0])
    }
}

/// A byte of a word: an ASCII letter or digit, or `_`.
#[inline]
pub(crate) fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}
