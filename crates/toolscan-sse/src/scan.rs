//! A chunk's JSON read in one pass without a deserializer: the fields the
//! fast path looks at are found, every other value is checked as JSON and
//! skipped ([`Cursor`]). It accepts no more than `serde_json` does: where
//! it is unsure (a key with escapes, a value nested deeper than
//! `serde_json` reads, a number the field does not take) it gives up, and
//! the caller takes the general path, which reads the chunk with
//! `serde_json`.

/// How deep values may nest (`serde_json`'s own limit).
const MAX_DEPTH: usize = 128;

/// A position in a JSON text. Every method reads one construct at the
/// cursor (after any blanks) and leaves the cursor after it; `None`: it is
/// not there, or not valid JSON.
pub(crate) struct Cursor<'a> {
    /// The text.
    text: &'a str,
    /// The next byte to read; `at <= text.len()`, and on a character
    /// boundary.
    at: usize,
    /// The arrays and objects open around the cursor.
    depth: usize,
    /// The first [`NUMBERS`] numbers [`Cursor::value`] skipped, as spans
    /// of the text in its order; `numbers[..counted]` are set.
    numbers: [(usize, usize); NUMBERS],
    /// How many of `numbers` are set; `counted <= NUMBERS`.
    counted: usize,
}

/// How many skipped numbers a cursor notes (the envelope's `created`, a
/// server's timings or stamps: fields of a chunk that change from chunk to
/// chunk of a stream).
pub(crate) const NUMBERS: usize = 4;

/// A string as it stands in the text: its contents between the quotes,
/// and whether they hold escapes (then they are not its value).
#[derive(Clone, Copy)]
pub(crate) struct RawStr<'a> {
    pub(crate) inner: &'a str,
    pub(crate) escaped: bool,
}

impl<'a> Cursor<'a> {
    pub(crate) fn new(text: &'a str) -> Cursor<'a> {
        Cursor {
            text,
            at: 0,
            depth: 0,
            numbers: [(0, 0); NUMBERS],
            counted: 0,
        }
    }

    /// The spans of the first [`NUMBERS`] numbers [`Cursor::value`]
    /// skipped, in the text's order.
    pub(crate) fn skipped_numbers(&self) -> &[(usize, usize)] {
        &self.numbers[..self.counted]
    }

    /// Where the cursor is.
    pub(crate) fn position(&self) -> usize {
        self.at
    }

    /// A cursor at `at` of `text`, at depth 0 (the caller knows what
    /// stands there); `None` if `at` is not a character boundary.
    pub(crate) fn at(text: &'a str, at: usize) -> Option<Cursor<'a>> {
        let mut c = Cursor::new(text);
        c.at = text.is_char_boundary(at).then_some(at)?;
        Some(c)
    }

    fn bytes(&self) -> &'a [u8] {
        self.text.as_bytes()
    }

    /// Skips blanks; the next byte, if any.
    fn peek(&mut self) -> Option<u8> {
        let b = self.bytes();
        while let Some(&c) = b.get(self.at) {
            if !matches!(c, b' ' | b'\n' | b'\r' | b'\t') {
                return Some(c);
            }
            self.at += 1;
        }
        None
    }

    /// Reads `byte` (after blanks).
    fn eat(&mut self, byte: u8) -> Option<()> {
        (self.peek()? == byte).then(|| self.at += 1)
    }

    /// Only blanks are left.
    pub(crate) fn at_end(&mut self) -> bool {
        self.peek().is_none()
    }

    /// Reads `null` if it is next.
    pub(crate) fn null(&mut self) -> bool {
        if self.peek() == Some(b'n') && self.bytes()[self.at..].starts_with(b"null") {
            self.at += 4;
            return true;
        }
        false
    }

    /// A string.
    pub(crate) fn string(&mut self) -> Option<RawStr<'a>> {
        self.eat(b'"')?;
        let b = self.bytes();
        let start = self.at;
        let mut at = start;
        let mut escaped = false;
        loop {
            at += stop(b.get(at..)?)?;
            match *b.get(at)? {
                b'"' => {
                    // Both ends are ASCII bytes: character boundaries.
                    let inner = self.text.get(start..at)?;
                    self.at = at + 1;
                    return Some(RawStr { inner, escaped });
                }
                b'\\' => {
                    escaped = true;
                    match *b.get(at + 1)? {
                        b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => at += 2,
                        b'u' => {
                            let hex = b.get(at + 2..at + 6)?;
                            if !hex.iter().all(u8::is_ascii_hexdigit) {
                                return None;
                            }
                            at += 6;
                        }
                        _ => return None,
                    }
                }
                // A control character must be escaped.
                _ => return None,
            }
        }
    }

    /// A number: its text.
    pub(crate) fn number(&mut self) -> Option<&'a str> {
        self.peek()?;
        let b = self.bytes();
        let start = self.at;
        let digits = |at: &mut usize| {
            let run = b.get(*at..).map_or(0, |rest| {
                rest.iter().take_while(|d| d.is_ascii_digit()).count()
            });
            *at += run;
            run > 0
        };
        let mut at = self.at;
        if b.get(at) == Some(&b'-') {
            at += 1;
        }
        match b.get(at) {
            Some(b'0') => at += 1,
            Some(b'1'..=b'9') => {
                digits(&mut at);
            }
            _ => return None,
        }
        if b.get(at) == Some(&b'.') {
            at += 1;
            if !digits(&mut at) {
                return None;
            }
        }
        if matches!(b.get(at), Some(b'e' | b'E')) {
            at += 1;
            if matches!(b.get(at), Some(b'+' | b'-')) {
                at += 1;
            }
            if !digits(&mut at) {
                return None;
            }
        }
        self.at = at;
        Some(&self.text[start..at])
    }

    /// An unsigned integer as `serde_json` reads one into a `u64`: digits
    /// only, no sign, fraction or exponent, within range.
    pub(crate) fn u64(&mut self) -> Option<u64> {
        let n = self.number()?;
        if !n.bytes().all(|c| c.is_ascii_digit()) {
            return None;
        }
        n.parse().ok()
    }

    /// Any value, checked and skipped: its text.
    pub(crate) fn value(&mut self) -> Option<&'a str> {
        let first = self.peek()?;
        let start = self.at;
        match first {
            b'"' => {
                self.string()?;
            }
            b'{' => self.object(|_, c| c.value().map(|_| ()))?,
            b'[' => self.array(|c| c.value().map(|_| ()))?,
            b't' | b'f' | b'n' => {
                let word: &[u8] = match first {
                    b't' => b"true",
                    b'f' => b"false",
                    _ => b"null",
                };
                if !self.bytes()[self.at..].starts_with(word) {
                    return None;
                }
                self.at += word.len();
            }
            _ => {
                self.number()?;
                if let Some(slot) = self.numbers.get_mut(self.counted) {
                    *slot = (start, self.at);
                    self.counted += 1;
                }
            }
        }
        Some(&self.text[start..self.at])
    }

    /// Opens an array or object.
    fn open(&mut self, byte: u8) -> Option<()> {
        self.eat(byte)?;
        self.depth += 1;
        (self.depth <= MAX_DEPTH).then_some(())
    }

    /// An object, each field given to `field` with the cursor at its value
    /// (which `field` must read). A key with escapes gives up: its name is
    /// not its text.
    pub(crate) fn object(
        &mut self,
        mut field: impl FnMut(&'a str, &mut Cursor<'a>) -> Option<()>,
    ) -> Option<()> {
        self.open(b'{')?;
        if self.eat(b'}').is_none() {
            loop {
                let key = self.string()?;
                if key.escaped {
                    return None;
                }
                self.eat(b':')?;
                field(key.inner, self)?;
                match self.peek()? {
                    b',' => self.at += 1,
                    b'}' => {
                        self.at += 1;
                        break;
                    }
                    _ => return None,
                }
            }
        }
        self.depth -= 1;
        Some(())
    }

    /// An array, each element given to `element` with the cursor at it
    /// (which `element` must read).
    pub(crate) fn array(
        &mut self,
        mut element: impl FnMut(&mut Cursor<'a>) -> Option<()>,
    ) -> Option<()> {
        self.open(b'[')?;
        if self.eat(b']').is_none() {
            loop {
                element(self)?;
                match self.peek()? {
                    b',' => self.at += 1,
                    b']' => {
                        self.at += 1;
                        break;
                    }
                    _ => return None,
                }
            }
        }
        self.depth -= 1;
        Some(())
    }
}

/// Where the first quote, backslash or control character of `bytes` is:
/// eight bytes a step (a word's bytes tested at once, as `serde_json`
/// skips a string), the last few bytes in one more word padded with a
/// plain byte. Most strings of a chunk (its keys, short values) end in the
/// first word.
fn stop(bytes: &[u8]) -> Option<usize> {
    let mut at = 0;
    while let Some(word) = bytes.get(at..at + 8) {
        let mut w = [0; 8];
        w.copy_from_slice(word);
        if let Some(k) = first_stop(u64::from_le_bytes(w)) {
            return Some(at + k);
        }
        at += 8;
    }
    let rest = bytes.get(at..)?;
    let mut w = [b'a'; 8];
    w.get_mut(..rest.len())?.copy_from_slice(rest);
    first_stop(u64::from_le_bytes(w)).map(|k| at + k)
}

/// The first byte of the little-endian word `x` that is a quote, a
/// backslash or a control character.
#[inline(always)]
fn first_stop(x: u64) -> Option<usize> {
    const ONES: u64 = u64::from_ne_bytes([1; 8]);
    const HIGH: u64 = u64::from_ne_bytes([0x80; 8]);
    // The high bit of each byte of `x` that is zero; a byte above the
    // first such one may be marked wrongly, the first never.
    let zero = |x: u64| x.wrapping_sub(ONES) & !x & HIGH;
    let marks = zero(x ^ (ONES * u64::from(b'"')))
        | zero(x ^ (ONES * u64::from(b'\\')))
        // Bytes below 0x20 (their high bits: `x - 0x20…` borrows).
        | (x.wrapping_sub(ONES * 0x20) & !x & HIGH);
    (marks != 0).then(|| (marks.trailing_zeros() / 8) as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_finds_the_first_quote_backslash_or_control_character() {
        // Every stop byte at every place of a 19-byte run, after plain
        // bytes of every kind (high bytes of UTF-8 included).
        let plain: Vec<u8> = (0x20..=0xffu8)
            .filter(|&c| c != b'"' && c != b'\\')
            .collect();
        for stop_byte in (0..0x20).chain([b'"', b'\\']) {
            for place in 0..19 {
                for shift in 0..plain.len() {
                    let mut run: Vec<u8> =
                        (0..19).map(|i| plain[(i + shift) % plain.len()]).collect();
                    run[place] = stop_byte;
                    assert_eq!(stop(&run), Some(place), "{run:?}");
                }
            }
        }
        assert_eq!(stop(&plain), None);
        assert_eq!(stop(b""), None);
    }

    /// Whether the cursor reads `text` as one JSON value.
    fn reads(text: &str) -> bool {
        let mut c = Cursor::new(text);
        c.value().is_some() && c.at_end()
    }

    #[test]
    fn what_it_reads_is_what_serde_json_reads() {
        let cases = [
            ("{}", true),
            ("[]", true),
            (" { \"a\" : [1, -2.5e+3, true, false, null, \"x\"] } ", true),
            ("0", true),
            ("-0.0e0", true),
            ("\"\\u00e9\\n\\\"\"", true),
            ("\"\\ud800\"", true),
            ("01", false),
            ("1.", false),
            (".5", false),
            ("-", false),
            ("1e", false),
            ("+1", false),
            ("[1,]", false),
            ("{\"a\":1,}", false),
            ("{\"a\" 1}", false),
            ("{1:2}", false),
            ("\"a\u{1}b\"", false),
            ("\"\\x\"", false),
            ("\"\\u12g4\"", false),
            ("\"abc", false),
            ("tru", false),
            ("nul", false),
            ("[1] x", false),
            ("", false),
        ];
        for (text, ok) in cases {
            assert_eq!(reads(text), ok, "{text:?}");
            assert_eq!(
                serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok(),
                ok,
                "serde_json disagrees with the table on {text:?}"
            );
        }
    }

    #[test]
    fn nesting_deeper_than_serde_json_reads_gives_up() {
        let deep = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        assert!(reads(&deep(MAX_DEPTH)));
        assert!(!reads(&deep(MAX_DEPTH + 1)));
    }

    #[test]
    fn u64_takes_plain_digits_in_range_only() {
        let read = |t: &str| Cursor::new(t).u64();
        assert_eq!(read("7"), Some(7));
        assert_eq!(read("18446744073709551615"), Some(u64::MAX));
        assert_eq!(read("18446744073709551616"), None);
        assert_eq!(read("-1"), None);
        assert_eq!(read("1.0"), None);
        assert_eq!(read("1e2"), None);
    }
}
