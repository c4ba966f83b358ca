//! A resumable JSON scanner: validates structure byte by byte, knows the exact
//! byte where a value ends, and reports what it sees to a [`Visitor`] (the
//! call assembly's `CallMapper`, or [`Ignore`]).
//!
//! It keeps only a container stack and a few flags between chunks, so feeding
//! a value in pieces costs the same as feeding it whole. It does not build
//! values: the call builder records the bytes it needs (the arguments text,
//! a name) and hands them to `serde_json` once.
//!
//! In *lenient* mode it also normalises what models write when told to
//! produce JSON by hand — single-quoted strings, raw control characters in
//! strings, Python `True`/`False`/`None`, trailing commas — and the
//! normalised text it outputs is canonical JSON, so argument deltas stay
//! prefixes of valid JSON.

/// What kind of value starts or ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Object,
    Array,
    String,
    Number,
    Literal,
}

use crate::offset::Offset;
use crate::read::reason::Reason;
use crate::read::steps::Progress;

/// What a [`Visitor`] answers after a callback.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Reply {
    /// Carry on.
    Go,
    /// Stop here: the current byte is rejected (not consumed).
    Fail(Reason),
    /// Carry on, but only in the next `feed`: it returns once this value
    /// has ended (answered only by `value_end`; elsewhere it is `Go`). A
    /// sink that has to act before anything after the value is read (a
    /// list element given back as text) asks for it.
    Pause,
}

/// Receives the scanner's findings. `depth` is the nesting level of the
/// value (0 for the top-level value, 1 for its members…).
pub(crate) trait Visitor {
    fn value_start(&mut self, at: Offset, depth: usize, kind: Kind) -> Reply;
    fn value_end(&mut self, at: Offset, depth: usize, kind: Kind) -> Reply;
    /// A member key of the object at nesting level `depth`. Keys longer than
    /// [`KEY_CAP`] bytes arrive truncated with `overflow` set.
    fn key(&mut self, at: Offset, depth: usize, key: &[u8], overflow: bool) -> Reply;
    /// The (normalised) JSON text of everything consumed, in order.
    fn output(&mut self, bytes: &[u8]);
}

/// The bytes that may follow `first`, the first bytes of a JSON value, as
/// a 256-bit set (bit `b` of word `b / 64`): a fresh scanner fed `first`
/// and then such a byte does not fail at it. `None` if `first` itself
/// fails or ends a value (nothing can be said then). Depth limits are not
/// considered (the caller checks them).
///
/// A bare `{` that opens a block which fails at once (`{{`, `{x` in
/// strict JSON) is text, silently: with this set, text mode sees so
/// without opening the block.
pub(crate) fn second_bytes(first: &[u8], lenient: bool) -> Option<[u64; 4]> {
    let mut head = JsonScanner::new(lenient, usize::MAX);
    if head.feed(first, Offset::START, &mut Ignore) != Ok(first.len()) || head.is_done() {
        return None;
    }
    let mut set = [0u64; 4];
    for b in 0..=255u8 {
        let mut s = JsonScanner::new(lenient, usize::MAX);
        let _ = s.feed(first, Offset::START, &mut Ignore);
        let next = Offset::START.after(first.len());
        let fails_here = matches!(s.feed(&[b], next, &mut Ignore), Err(e) if e.at == next);
        if !fails_here {
            set[usize::from(b >> 6)] |= 1 << (b & 63);
        }
    }
    Some(set)
}

/// Below this many bytes, the rest of a string is looked at byte by byte
/// rather than searched with `memchr`.
const SHORT_RUN: usize = 16;

/// What [`JsonScanner::string_run`] did with its bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum StringRun {
    /// Nothing: they are not a run of string content.
    No,
    /// Read, and passed on as they are, in one piece.
    Verbatim,
    /// Read, with escapes: what was passed on is not the bytes as they
    /// are (a backslash waits for its escape's second byte).
    Escapes,
}

/// Longest key the scanner keeps for [`Visitor::key`].
pub(crate) const KEY_CAP: usize = 64;

/// Why scanning stopped early. The byte at `at` was not consumed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct JsonError {
    pub at: Offset,
    pub reason: Reason,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum St {
    /// Expecting a value.
    Value,
    /// After `[`: a value or `]`.
    ArrFirst,
    /// After `,` in an array: a value (or, lenient, `]`).
    ArrNext,
    /// After `{`: a key or `}`.
    ObjFirst,
    /// After `,` in an object: a key (or, lenient, `}`).
    ObjNext,
    /// After a key: `:`.
    Colon,
    /// After a value inside a container: `,` or the closer.
    After,
    Str,
    Num(Num),
    Lit,
    Done,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Num {
    Minus,
    Zero,
    Int,
    Dot,
    Frac,
    Exp,
    ExpSign,
    ExpDigits,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Esc {
    None,
    /// After a backslash (not yet output: `\'` becomes `'`).
    Backslash,
    /// Inside `\uXXXX`, this many hex digits still to come.
    Hex(u8),
}

/// The scanner state.
#[derive(Clone, Debug)]
pub(crate) struct JsonScanner {
    lenient: bool,
    max_depth: usize,
    stack: Vec<u8>,
    st: St,
    quote: u8,
    is_key: bool,
    esc: Esc,
    key: [u8; KEY_CAP],
    key_len: usize,
    key_overflow: bool,
    lit: &'static [u8],
    lit_out: &'static [u8],
    lit_pos: usize,
    pending_comma: bool,
    /// The blanks after that comma, held with it: they go out after it
    /// (or alone, when the comma was a trailing one and is dropped), so
    /// the arguments keep the model's spacing.
    pending_ws: Vec<u8>,
    /// A sink asked for a pause after a value inside a container: `st` is
    /// `Done` until the next `feed`, which resumes at `After`.
    paused: bool,
    /// Value of the `\\u` escape being read.
    hex: u32,
    /// A high surrogate escape was read: a low one must follow at once.
    high: bool,
}

fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

fn err(at: Offset, reason: Reason) -> JsonError {
    JsonError { at, reason }
}

/// Whether `b` after a backslash makes one of JSON's two-byte escapes
/// (`\"`, `\\`, `\/`, `\b`, `\f`, `\n`, `\r`, `\t`; not `\u`).
pub(crate) fn is_two_byte_escape(b: u8) -> bool {
    matches!(b, b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't')
}

impl JsonScanner {
    pub(crate) fn new(lenient: bool, max_depth: usize) -> JsonScanner {
        JsonScanner {
            lenient,
            max_depth,
            stack: Vec::new(),
            st: St::Value,
            quote: b'"',
            is_key: false,
            esc: Esc::None,
            key: [0; KEY_CAP],
            key_len: 0,
            key_overflow: false,
            lit: b"",
            lit_out: b"",
            lit_pos: 0,
            pending_comma: false,
            pending_ws: Vec::new(),
            paused: false,
            hex: 0,
            high: false,
        }
    }

    /// Whether a value just ended inside a container and nothing after it
    /// was read yet (no `,` promising another).
    pub(crate) fn between_values(&self) -> bool {
        self.st == St::After || self.paused
    }

    /// How to read over the rest of the value from the byte the scanner
    /// refused (its state is the one before that byte): the brackets open
    /// and the string, if the byte is inside one.
    pub(crate) fn skip(&self) -> crate::read::python::Skip {
        let open = self
            .stack
            .iter()
            .map(|&b| if b == b'{' { b'}' } else { b']' })
            .collect();
        let string = (self.st == St::Str).then_some((self.quote, self.esc == Esc::Backslash));
        crate::read::python::Skip::inside(open, string)
    }

    /// Whether the top-level value has ended.
    pub(crate) fn is_done(&self) -> bool {
        self.st == St::Done && !self.paused
    }

    /// [`feed`](Self::feed) as the readers' shared status: done when the
    /// top-level value ended, failed at the byte the scanner (or the
    /// visitor) refused.
    #[inline]
    pub(crate) fn read<S: Visitor>(
        &mut self,
        input: &[u8],
        base: Offset,
        sink: &mut S,
    ) -> Progress {
        match self.feed(input, base, sink) {
            Ok(n) if self.is_done() => Progress::Done(n, ()),
            Ok(n) => Progress::Partial(n),
            Err(e) => Progress::Fail(e.at.index_from(base), e.reason),
        }
    }

    /// Feeds bytes (the first at absolute offset `base`). Returns how many
    /// were consumed: all of them, or fewer when the top-level value ended
    /// (then [`is_done`](Self::is_done) is true) or the sink paused after a
    /// value ([`Reply::Pause`]; the next call goes on after it).
    pub(crate) fn feed<S: Visitor>(
        &mut self,
        input: &[u8],
        base: Offset,
        sink: &mut S,
    ) -> Result<usize, JsonError> {
        if std::mem::take(&mut self.paused) {
            self.st = St::After;
        }
        let mut i = 0;
        while i < input.len() {
            if self.st == St::Done {
                return Ok(i);
            }
            if self.st == St::Str && self.esc == Esc::None && !self.high {
                // Fast path: jump to the next quote or backslash, then make
                // sure no control character was jumped over.
                let start = i;
                let rest = &input[i..];
                let ctl = if rest.len() < SHORT_RUN {
                    // A token-sized piece: one look at each byte costs less
                    // than a call to `memchr` (callgrind: about 80
                    // instructions a call on 4 bytes).
                    let quote = self.quote;
                    rest.iter()
                        .position(|&c| c == b'"' || c == b'\\' || c == quote || c < 0x20)
                        .unwrap_or(rest.len())
                } else {
                    let stop = if self.quote == b'"' {
                        memchr::memchr2(b'"', b'\\', rest)
                    } else {
                        memchr::memchr3(self.quote, b'"', b'\\', rest)
                    }
                    .unwrap_or(rest.len());
                    let run = &rest[..stop];
                    if run.iter().fold(false, |a, &c| a | (c < 0x20)) {
                        run.iter().position(|&c| c < 0x20).unwrap_or(stop)
                    } else {
                        stop
                    }
                };
                i += ctl;
                if i > start {
                    self.string_bytes(&input[start..i], sink);
                }
                if i == input.len() {
                    break;
                }
            }
            let at = base.after(i);
            if self.step(input[i], at, sink)? {
                i += 1;
            }
        }
        Ok(i)
    }

    /// Whether `bytes` lie wholly inside the double-quoted string being
    /// read, as plain content (no escape, no quote, no control character),
    /// of a value, not a key: reading them changes nothing here, and gives
    /// them on as they are (the first case of [`string_run`](Self::string_run),
    /// which the caller then does itself).
    pub(crate) fn is_plain_content(&self, bytes: &[u8]) -> bool {
        self.st == St::Str
            && self.quote == b'"'
            && !self.high
            && self.esc == Esc::None
            && !self.is_key
            && bytes.iter().all(|&b| b != b'"' && b != b'\\' && b >= 0x20)
    }

    /// Reads `bytes` if they lie wholly inside the double-quoted string
    /// being read, made of plain characters and two-byte escapes (`\n`,
    /// `\"`): the string goes on after them. `output` gets exactly what
    /// [`feed`](Self::feed) would give the sink, in fewer calls.
    /// [`StringRun::No`]: nothing was read (another state, a `\u` escape, a
    /// control character, the string's end), and `feed` is the way.
    ///
    /// The direct path of a token-sized chunk inside a long argument: the
    /// check is one look at each byte, and what the scanner does with such
    /// bytes is only to pass them on.
    pub(crate) fn string_run(&mut self, bytes: &[u8], mut output: impl FnMut(&[u8])) -> StringRun {
        if self.st != St::Str || self.quote != b'"' || self.high {
            return StringRun::No;
        }
        let escaped_before = match self.esc {
            Esc::None => false,
            Esc::Backslash => true,
            Esc::Hex(_) => return StringRun::No,
        };
        if !escaped_before && bytes.iter().all(|&b| b != b'"' && b != b'\\' && b >= 0x20) {
            // The common chunk: no escape at all.
            self.record_key(bytes);
            output(bytes);
            return StringRun::Verbatim;
        }
        let mut escaped = escaped_before;
        for &b in bytes {
            if escaped {
                if !is_two_byte_escape(b) {
                    return StringRun::No;
                }
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' || b < 0x20 {
                return StringRun::No;
            }
        }
        // A backslash is given on with the byte after it, as `feed` does.
        if escaped_before {
            self.record_key(b"\\");
            output(b"\\");
        }
        let end = bytes.len() - usize::from(escaped);
        if end > 0 {
            self.record_key(&bytes[..end]);
            output(&bytes[..end]);
        }
        self.esc = if escaped { Esc::Backslash } else { Esc::None };
        StringRun::Escapes
    }

    /// A run of plain content (see [`is_plain_content`](Self::is_plain_content))
    /// ended with a backslash that was not passed on: the next byte is its
    /// escape's second, as [`string_run`](Self::string_run) leaves it.
    pub(crate) fn hold_backslash(&mut self) {
        debug_assert!(
            self.st == St::Str && self.esc == Esc::None,
            "inside plain content"
        );
        self.esc = Esc::Backslash;
    }

    fn string_bytes<S: Visitor>(&mut self, bytes: &[u8], sink: &mut S) {
        self.record_key(bytes);
        sink.output(bytes);
    }

    /// Keeps string bytes of a key (up to [`KEY_CAP`]).
    #[inline]
    fn record_key(&mut self, bytes: &[u8]) {
        if self.is_key {
            let room = KEY_CAP - self.key_len;
            let n = bytes.len().min(room);
            self.key[self.key_len..self.key_len + n].copy_from_slice(&bytes[..n]);
            self.key_len += n;
            if n < bytes.len() {
                self.key_overflow = true;
            }
        }
    }

    fn flush_comma<S: Visitor>(&mut self, sink: &mut S) {
        if self.pending_comma {
            self.pending_comma = false;
            sink.output(b",");
            self.flush_ws(sink);
        }
    }

    /// A comma held back is dropped (it was a trailing one): the blanks
    /// after it go out.
    fn drop_comma<S: Visitor>(&mut self, sink: &mut S) {
        if self.pending_comma {
            self.pending_comma = false;
            self.flush_ws(sink);
        }
    }

    fn flush_ws<S: Visitor>(&mut self, sink: &mut S) {
        if !self.pending_ws.is_empty() {
            sink.output(&self.pending_ws);
            self.pending_ws.clear();
        }
    }

    /// A blank: out at once, or held behind a comma held back.
    fn blank<S: Visitor>(&mut self, b: u8, sink: &mut S) {
        if self.pending_comma {
            self.pending_ws.push(b);
        } else {
            sink.output(&[b]);
        }
    }

    fn go(flow: Reply, at: Offset) -> Result<(), JsonError> {
        match flow {
            Reply::Go | Reply::Pause => Ok(()),
            Reply::Fail(r) => Err(err(at, r)),
        }
    }

    /// One byte. Returns whether it was consumed (a number's terminator is
    /// not: it is seen again in the next state).
    fn step<S: Visitor>(&mut self, b: u8, at: Offset, sink: &mut S) -> Result<bool, JsonError> {
        match self.st {
            St::Value | St::ArrFirst | St::ArrNext => {
                if is_ws(b) {
                    self.blank(b, sink);
                    return Ok(true);
                }
                if b == b']'
                    && (self.st == St::ArrFirst || (self.st == St::ArrNext && self.lenient))
                {
                    self.drop_comma(sink);
                    return self.close(b, at, sink).map(|()| true);
                }
                self.value_start(b, at, sink).map(|()| true)
            }
            St::ObjFirst | St::ObjNext => {
                if is_ws(b) {
                    self.blank(b, sink);
                    return Ok(true);
                }
                if b == b'}' && (self.st == St::ObjFirst || self.lenient) {
                    self.drop_comma(sink);
                    return self.close(b, at, sink).map(|()| true);
                }
                if b == b'"' || (self.lenient && b == b'\'') {
                    self.flush_comma(sink);
                    self.quote = b;
                    self.is_key = true;
                    self.key_len = 0;
                    self.key_overflow = false;
                    self.st = St::Str;
                    sink.output(b"\"");
                    return Ok(true);
                }
                Err(err(at, Reason::ExpectedKey { found: b }))
            }
            St::Colon => {
                if is_ws(b) {
                    sink.output(&[b]);
                    Ok(true)
                } else if b == b':' {
                    sink.output(b":");
                    self.st = St::Value;
                    Ok(true)
                } else {
                    Err(err(at, Reason::ExpectedColon { found: b }))
                }
            }
            St::After => {
                if is_ws(b) {
                    sink.output(&[b]);
                    return Ok(true);
                }
                let top = self.stack.last().copied().unwrap_or(b'{');
                match b {
                    b',' => {
                        if self.lenient {
                            self.pending_comma = true;
                        } else {
                            sink.output(b",");
                        }
                        self.st = if top == b'{' {
                            St::ObjNext
                        } else {
                            St::ArrNext
                        };
                        Ok(true)
                    }
                    b'}' | b']' => self.close(b, at, sink).map(|()| true),
                    _ => Err(err(at, Reason::ExpectedCommaOrClose { found: b })),
                }
            }
            St::Str => self.string_special(b, at, sink).map(|()| true),
            St::Num(n) => self.number(n, b, at, sink),
            St::Lit => {
                if b == self.lit[self.lit_pos] {
                    self.lit_pos += 1;
                    if self.lit_pos == self.lit.len() {
                        sink.output(self.lit_out);
                        self.after_value(at, Kind::Literal, sink)?;
                    }
                    Ok(true)
                } else {
                    Err(err(at, Reason::BadLiteral { found: b }))
                }
            }
            St::Done => Ok(false),
        }
    }

    fn value_start<S: Visitor>(
        &mut self,
        b: u8,
        at: Offset,
        sink: &mut S,
    ) -> Result<(), JsonError> {
        let depth = self.stack.len();
        let kind = match b {
            b'{' => Kind::Object,
            b'[' => Kind::Array,
            b'"' => Kind::String,
            b'\'' if self.lenient => Kind::String,
            b'-' | b'0'..=b'9' => Kind::Number,
            b't' | b'f' | b'n' => Kind::Literal,
            b'T' | b'F' | b'N' if self.lenient => Kind::Literal,
            _ => return Err(err(at, Reason::ExpectedValue { found: b })),
        };
        if matches!(kind, Kind::Object | Kind::Array) && depth >= self.max_depth {
            return Err(err(
                at,
                Reason::TooDeep {
                    limit: self.max_depth,
                },
            ));
        }
        self.flush_comma(sink);
        Self::go(sink.value_start(at, depth, kind), at)?;
        match kind {
            Kind::Object | Kind::Array => {
                self.stack.push(b);
                sink.output(&[b]);
                self.st = if b == b'{' {
                    St::ObjFirst
                } else {
                    St::ArrFirst
                };
            }
            Kind::String => {
                self.quote = b;
                self.is_key = false;
                self.st = St::Str;
                sink.output(b"\"");
            }
            Kind::Number => {
                sink.output(&[b]);
                self.st = St::Num(if b == b'-' {
                    Num::Minus
                } else if b == b'0' {
                    Num::Zero
                } else {
                    Num::Int
                });
            }
            Kind::Literal => {
                let (lit, out): (&'static [u8], &'static [u8]) = match b {
                    b't' => (b"true", b"true"),
                    b'f' => (b"false", b"false"),
                    b'n' => (b"null", b"null"),
                    b'T' => (b"True", b"true"),
                    b'F' => (b"False", b"false"),
                    _ => (b"None", b"null"),
                };
                self.lit = lit;
                self.lit_out = out;
                self.lit_pos = 1;
                self.st = St::Lit;
            }
        }
        Ok(())
    }

    fn close<S: Visitor>(&mut self, b: u8, at: Offset, sink: &mut S) -> Result<(), JsonError> {
        let want = if b == b'}' { b'{' } else { b'[' };
        if self.stack.last() != Some(&want) {
            return Err(err(at, Reason::Unbalanced { found: b }));
        }
        self.stack.pop();
        sink.output(&[b]);
        let kind = if b == b'}' { Kind::Object } else { Kind::Array };
        self.after_value(at, kind, sink)
    }

    fn after_value<S: Visitor>(
        &mut self,
        at: Offset,
        kind: Kind,
        sink: &mut S,
    ) -> Result<(), JsonError> {
        let flow = sink.value_end(at, self.stack.len(), kind);
        Self::go(flow, at)?;
        self.st = if self.stack.is_empty() {
            St::Done
        } else if flow == Reply::Pause {
            // (`feed` returns at `Done`; the next one resumes at `After`.)
            self.paused = true;
            St::Done
        } else {
            St::After
        };
        Ok(())
    }

    fn string_special<S: Visitor>(
        &mut self,
        b: u8,
        at: Offset,
        sink: &mut S,
    ) -> Result<(), JsonError> {
        match self.esc {
            Esc::Backslash => {
                self.esc = Esc::None;
                if self.high && b != b'u' {
                    return Err(err(at, Reason::LoneSurrogate));
                }
                match b {
                    b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => {
                        self.string_bytes(&[b'\\', b], sink)
                    }
                    b'u' => {
                        self.string_bytes(b"\\u", sink);
                        self.esc = Esc::Hex(4);
                        self.hex = 0;
                    }
                    b'\'' if self.lenient => self.string_bytes(b"'", sink),
                    _ => return Err(err(at, Reason::BadEscape { found: b })),
                }
                Ok(())
            }
            Esc::Hex(n) => {
                let Some(d) = (b as char).to_digit(16) else {
                    return Err(err(at, Reason::BadHex { found: b }));
                };
                self.hex = self.hex * 16 + d;
                if n == 1 {
                    // A surrogate must come in a high-low pair.
                    let low = (0xDC00..0xE000).contains(&self.hex);
                    if low != self.high {
                        return Err(err(at, Reason::LoneSurrogate));
                    }
                    self.high = (0xD800..0xDC00).contains(&self.hex);
                }
                self.string_bytes(&[b], sink);
                self.esc = if n > 1 { Esc::Hex(n - 1) } else { Esc::None };
                Ok(())
            }
            Esc::None => {
                if self.high && b != b'\\' {
                    return Err(err(at, Reason::LoneSurrogate));
                }
                if b == self.quote {
                    sink.output(b"\"");
                    if self.is_key {
                        self.is_key = false;
                        self.st = St::Colon;
                        let depth = self.stack.len().saturating_sub(1);
                        let key = self.key;
                        let flow = sink.key(at, depth, &key[..self.key_len], self.key_overflow);
                        return Self::go(flow, at);
                    }
                    return self.after_value(at, Kind::String, sink);
                }
                match b {
                    b'\\' => {
                        self.esc = Esc::Backslash;
                        Ok(())
                    }
                    b'"' => {
                        // only reached inside a single-quoted (lenient) string
                        self.string_bytes(b"\\\"", sink);
                        Ok(())
                    }
                    _ if self.lenient => {
                        let esc: &[u8] = match b {
                            b'\n' => b"\\n",
                            b'\r' => b"\\r",
                            b'\t' => b"\\t",
                            _ => b"",
                        };
                        if esc.is_empty() {
                            const HEX: &[u8; 16] = b"0123456789abcdef";
                            let hex = [
                                b'\\',
                                b'u',
                                b'0',
                                b'0',
                                HEX[usize::from(b >> 4)],
                                HEX[usize::from(b & 15)],
                            ];
                            self.string_bytes(&hex, sink);
                        } else {
                            self.string_bytes(esc, sink);
                        }
                        Ok(())
                    }
                    _ => Err(err(at, Reason::ControlChar { found: b })),
                }
            }
        }
    }

    fn number<S: Visitor>(
        &mut self,
        n: Num,
        b: u8,
        at: Offset,
        sink: &mut S,
    ) -> Result<bool, JsonError> {
        let next = match (n, b) {
            (Num::Minus, b'0') => Some(Num::Zero),
            (Num::Minus, b'1'..=b'9') => Some(Num::Int),
            (Num::Int, b'0'..=b'9') => Some(Num::Int),
            (Num::Zero | Num::Int, b'.') => Some(Num::Dot),
            (Num::Dot | Num::Frac, b'0'..=b'9') => Some(Num::Frac),
            (Num::Zero | Num::Int | Num::Frac, b'e' | b'E') => Some(Num::Exp),
            (Num::Exp, b'+' | b'-') => Some(Num::ExpSign),
            (Num::Exp | Num::ExpSign | Num::ExpDigits, b'0'..=b'9') => Some(Num::ExpDigits),
            _ => None,
        };
        if let Some(next) = next {
            sink.output(&[b]);
            self.st = St::Num(next);
            return Ok(true);
        }
        if matches!(n, Num::Zero | Num::Int | Num::Frac | Num::ExpDigits) {
            // The number ended before this byte, which is seen again.
            self.after_value(at, Kind::Number, sink)?;
            return Ok(false);
        }
        Err(err(at, Reason::BadNumber { found: b }))
    }
}

/// A sink that ignores everything (a value scanned only for its end).
pub(crate) struct Ignore;

impl Visitor for Ignore {
    fn value_start(&mut self, _: Offset, _: usize, _: Kind) -> Reply {
        Reply::Go
    }
    fn value_end(&mut self, _: Offset, _: usize, _: Kind) -> Reply {
        Reply::Go
    }
    fn key(&mut self, _: Offset, _: usize, _: &[u8], _: bool) -> Reply {
        Reply::Go
    }
    fn output(&mut self, _: &[u8]) {}
}

/// Whether `text` is exactly one JSON object (surrounding whitespace
/// allowed), nested at most `max_depth` deep.
pub(crate) fn is_one_object(text: &[u8], max_depth: usize) -> bool {
    let start = text.iter().position(|&b| !is_ws(b));
    if start.map(|s| text[s]) != Some(b'{') {
        return false;
    }
    let mut s = JsonScanner::new(false, max_depth);
    match s.feed(text, Offset::START, &mut Ignore) {
        Ok(n) => s.is_done() && text[n..].iter().all(|&b| is_ws(b)),
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn in_set(set: [u64; 4], b: u8) -> bool {
        set[usize::from(b >> 6)] & (1 << (b & 63)) != 0
    }

    #[test]
    fn second_bytes_are_those_a_scanner_takes() {
        let obj = second_bytes(b"{", false).unwrap();
        let takes: Vec<u8> = (0..=255u8).filter(|&b| in_set(obj, b)).collect();
        assert_eq!(takes, b"\t\n\r \"}");
        let arr = second_bytes(b"[", false).unwrap();
        for b in *b"[{\"]-0123456789tfn \n" {
            assert!(in_set(arr, b), "{:?}", b as char);
        }
        for b in *b"}:,x'" {
            assert!(!in_set(arr, b), "{:?}", b as char);
        }
        // Lenient JSON takes single quotes too.
        let lenient = second_bytes(b"{", true).unwrap();
        assert!(in_set(lenient, b'\'') && !in_set(obj, b'\''));
        assert!(!in_set(lenient, b'{'));
        // A start that fails, or a whole value, says nothing.
        assert_eq!(second_bytes(b"}", false), None);
        assert_eq!(second_bytes(b"1 ", false), None);
    }

    #[test]
    fn one_object() {
        assert!(is_one_object(b" {\"a\": [1]} ", 8));
        assert!(!is_one_object(b"[1]", 8));
        assert!(!is_one_object(b"{} {}", 8));
        assert!(!is_one_object(b"{", 8));
        assert!(!is_one_object(b"{\"a\": \"\\ud800\"}", 8));
    }

    #[derive(Debug, Default)]
    struct Rec {
        out: Vec<u8>,
        keys: Vec<String>,
        ends: Vec<(u64, usize, Kind)>,
    }

    impl Visitor for Rec {
        fn value_start(&mut self, _: Offset, _: usize, _: Kind) -> Reply {
            Reply::Go
        }
        fn value_end(&mut self, at: Offset, depth: usize, kind: Kind) -> Reply {
            self.ends.push((at.get(), depth, kind));
            Reply::Go
        }
        fn key(&mut self, _: Offset, _: usize, key: &[u8], _: bool) -> Reply {
            self.keys.push(String::from_utf8_lossy(key).into_owned());
            Reply::Go
        }
        fn output(&mut self, bytes: &[u8]) {
            self.out.extend_from_slice(bytes);
        }
    }

    fn run(lenient: bool, input: &str, chunk: usize) -> Result<(usize, Rec), JsonError> {
        let mut s = JsonScanner::new(lenient, 64);
        let mut rec = Rec::default();
        let bytes = input.as_bytes();
        let mut pos = 0;
        for piece in bytes.chunks(chunk) {
            let n = s.feed(piece, Offset::START.after(pos), &mut rec)?;
            pos += n;
            if s.is_done() {
                return Ok((pos, rec));
            }
        }
        Ok((pos, rec))
    }

    #[test]
    fn finds_the_end_byte_under_any_chunking() {
        let v = r#"{"a": "x}\"]", "b": [1, -2.5e3, {"c": null}], "d": true} tail"#;
        for chunk in 1..=v.len() {
            let (end, rec) = run(false, v, chunk).unwrap();
            assert_eq!(&v[..end], &v[..v.len() - 5], "chunk {chunk}");
            assert_eq!(rec.out, &v.as_bytes()[..end]);
            assert_eq!(rec.keys, ["a", "b", "c", "d"]);
        }
    }

    #[test]
    fn number_at_end_of_container() {
        let (end, rec) = run(false, "[10]x", 1).unwrap();
        assert_eq!(end, 4);
        assert_eq!(rec.ends[0], (3, 1, Kind::Number));
    }

    #[test]
    fn strict_errors_point_at_the_byte() {
        for (input, at) in [
            (r#"{"a": }"#, 6),
            (r#"{"a": 1,}"#, 8),
            (r#"{"a" 1}"#, 5),
            (r#"{"a": 01}"#, 7),
            (r#"{"a": tru}"#, 9),
            (r#"{'a': 1}"#, 1),
            ("{\"a\": \"x\ny\"}", 8),
            (r#"{"a": "\x"}"#, 8),
            (r#"{"a": "\u12g4"}"#, 11),
            (r#"[1}"#, 2),
        ] {
            let e = run(false, input, 1).unwrap_err();
            assert_eq!(e.at.get(), at, "{input}: {:?}", e.reason);
        }
    }

    #[test]
    fn lenient_normalises_to_canonical_json() {
        let input = "{'a': 'it\\'s \"x\"', \"b\": [True, False, None,], 'c': \"l1\nl2\",}";
        for chunk in 1..=input.len() {
            let (end, rec) = run(true, input, chunk).unwrap();
            assert_eq!(end, input.len());
            let out = String::from_utf8(rec.out).unwrap();
            let v: serde_json::Value = serde_json::from_str(&out).unwrap();
            assert_eq!(
                v,
                serde_json::json!({"a": "it's \"x\"", "b": [true, false, null], "c": "l1\nl2"})
            );
        }
    }

    #[test]
    fn surrogates_come_in_pairs() {
        let ok = r#"["\ud83d\ude00", "\u00e9"]"#;
        assert_eq!(run(false, ok, 1).unwrap().0, ok.len());
        for bad in [
            r#"["\ud83d x"]"#,
            r#"["\ude00"]"#,
            r#"["\ud83d\n"]"#,
            r#"["\ud83d\u0041"]"#,
        ] {
            let e = run(false, bad, 1).unwrap_err();
            assert_eq!(e.reason, Reason::LoneSurrogate, "{bad}");
        }
    }

    /// A control character in a string is refused at its byte, whether the
    /// run it sits in is searched (`memchr`) or looked at byte by byte
    /// (under [`SHORT_RUN`] bytes), under every chunking.
    #[test]
    fn control_characters_are_found_inside_runs_of_any_length() {
        let long = format!("[\"{}\u{1}ij\"]", "abcdefgh".repeat(4));
        for (input, at) in [("[\"abcdefgh\u{1}ij\"]", 10), (long.as_str(), 34)] {
            for chunk in 1..=input.len() {
                let e = run(false, input, chunk).unwrap_err();
                assert_eq!(e.at.get(), at, "{input:?} in chunks of {chunk}");
            }
        }
    }

    /// Feeding each chunk through [`JsonScanner::string_run`] first (and
    /// `feed` when it declines) gives the sink exactly what `feed` alone
    /// does: the same text, keys, ends and error, under every chunking.
    #[test]
    fn a_string_run_reads_as_feed_does() {
        let inputs = [
            r#"{"content": "a \"quoted\" word,\nback\\slash and \/ \t tab"}"#,
            r#"{"k\"ey": "v", "u": "\u00e9 \ud83d\ude00 after", "e": "\x"}"#,
            "{\"c\": \"control \u{1} inside\"}",
            "{\"s\": \"lone \\ud800 x\"}",
            "{'single': 'it\\'s \"here\"', \"d\": \"x\\'y\"}",
            "[\"Grüße, 東京\", \"\\\\\", \"\\\"\"]",
        ];
        type Run = (Rec, Result<(), Offset>, usize);
        fn drive(lenient: bool, input: &str, chunk: usize, runs: bool) -> Run {
            let mut s = JsonScanner::new(lenient, 8);
            let mut rec = Rec::default();
            let (mut at, mut taken) = (Offset::START, 0);
            for c in input.as_bytes().chunks(chunk) {
                if runs && s.string_run(c, |b| rec.out.extend_from_slice(b)) != StringRun::No {
                    at = at.after(c.len());
                    taken += 1;
                    continue;
                }
                match s.feed(c, at, &mut rec) {
                    Ok(n) => at = at.after(n),
                    Err(e) => return (rec, Err(e.at), taken),
                }
            }
            (rec, Ok(()), taken)
        }
        for input in inputs {
            for lenient in [false, true] {
                for chunk in 1..=9 {
                    let (want, want_end, _) = drive(lenient, input, chunk, false);
                    let (got, got_end, taken) = drive(lenient, input, chunk, true);
                    let at = format!("{input:?}, lenient {lenient}, chunks of {chunk}");
                    assert_eq!(got.out, want.out, "{at}");
                    assert_eq!(got.keys, want.keys, "{at}");
                    assert_eq!(got.ends, want.ends, "{at}");
                    assert_eq!(got_end, want_end, "{at}");
                    // (Chunks of one byte inside these strings take the
                    // run, once the scanner reaches one.)
                    assert!(chunk > 1 || want.out.len() < 8 || taken > 0, "{at}");
                }
            }
        }
        // It declines what is not inside a double-quoted string.
        let mut s = JsonScanner::new(false, 8);
        let ignore = |_: &[u8]| {};
        assert_eq!(s.string_run(b"abc", ignore), StringRun::No);
        s.feed(b"[\"", Offset::START, &mut Rec::default()).unwrap();
        assert_eq!(s.string_run(b"a\"", ignore), StringRun::No);
        assert_eq!(s.string_run(b"\\u", ignore), StringRun::No);
        assert_eq!(s.string_run(b"ab", ignore), StringRun::Verbatim);
        assert_eq!(s.string_run(b"a\\", ignore), StringRun::Escapes);
        assert_eq!(s.string_run(b"x", ignore), StringRun::No, "not an escape");
    }

    #[test]
    fn depth_limit() {
        let mut s = JsonScanner::new(false, 3);
        let e = s
            .feed(b"[[[[1]]]]", Offset::START, &mut Rec::default())
            .unwrap_err();
        assert!(e.reason.is_limit());
        assert_eq!(e.at.get(), 3);
    }

    /// The scanner through the readers' shared status, against a table of
    /// states (fresh; inside a string; after a key; after a value in an
    /// array) × inputs (what completes the value, what continues it, a
    /// byte that fails it).
    #[test]
    fn read_by_state_and_input() {
        use crate::read::steps::Progress;
        let fail = |n, reason| Progress::Fail(n, reason);
        let table: &[(&str, &str, &str, Progress)] = &[
            ("fresh, whole", "", r#"{"a": 1}"#, Progress::Done(8, ())),
            (
                "fresh, whole, more after",
                "",
                r#"{"a": 1} x"#,
                Progress::Done(8, ()),
            ),
            ("fresh, cut", "", r#"{"a": "#, Progress::Partial(6)),
            (
                "fresh, bad",
                "",
                r#"{"a" 1}"#,
                fail(5, Reason::ExpectedColon { found: b'1' }),
            ),
            (
                "in a string, ends",
                r#"{"a": "x"#,
                r#"y"}"#,
                Progress::Done(3, ()),
            ),
            (
                "in a string, goes on",
                r#"{"a": "x"#,
                "y z",
                Progress::Partial(3),
            ),
            (
                "in a string, a control byte",
                r#"{"a": "x"#,
                "\u{1}",
                fail(0, Reason::ControlChar { found: 1 }),
            ),
            (
                "after a key, value",
                r#"{"a""#,
                ": [1]}",
                Progress::Done(6, ()),
            ),
            (
                "after a key, no colon",
                r#"{"a""#,
                " 1",
                fail(1, Reason::ExpectedColon { found: b'1' }),
            ),
            ("in an array, next", "[1", ", 2]", Progress::Done(4, ())),
            (
                "in an array, no comma",
                "[1",
                " 2",
                fail(1, Reason::ExpectedCommaOrClose { found: b'2' }),
            ),
            (
                "after a colon, no value",
                r#"{"a": "#,
                "}",
                fail(0, Reason::ExpectedValue { found: b'}' }),
            ),
        ];
        for &(what, before, input, want) in table {
            let mut s = JsonScanner::new(false, 8);
            let head = s.read(before.as_bytes(), Offset::START, &mut Ignore);
            assert_eq!(head, Progress::Partial(before.len()), "{what}: the state");
            let base = Offset::START.after(before.len());
            assert_eq!(s.read(input.as_bytes(), base, &mut Ignore), want, "{what}");
        }
    }
}
