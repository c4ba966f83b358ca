//! The reader of call arguments in Python-like notation: Python keyword
//! arguments (`city='Paris', days=[1, 2]`) and the brace notation with bare
//! keys and delimited strings (`city:<escape>Paris<escape>`). It reads the
//! arguments after their opening bracket, up to and including the closing
//! one, and writes them as canonical JSON while it reads.
//!
//! It works on bytes and keeps all its state between chunks, so any
//! chunking of the input gives the same output. Non-ASCII text is copied
//! byte by byte; nothing is ever indexed by character.
//!
//! Decisions the notation leaves open:
//!
//! - an integer with leading zeros (`07`, which Python 3 refuses) reads as
//!   the decimal number (`7`): models zero-pad months and hours;
//! - a positional argument fails the call (the arguments would need the
//!   tool's parameter order, which the text does not carry);
//! - a dictionary key that is a number becomes its text (`{1: 'a'}` →
//!   `{"1":"a"}`, as Python's `json.dumps` writes it); any other key that
//!   is not a string fails the call;
//! - a tuple is an array; a parenthesised value that is not a tuple (`(1)`)
//!   fails the call, since Python would read the bare value;
//! - raw control characters in a string are kept (escaped in the JSON);
//! - an unknown escape (`\d`) keeps its backslash, as Python does; `\N{…}`
//!   fails the call; a `\u`/`\U` surrogate must be a high one directly
//!   followed by a low one (they combine), else the call fails.
//!
//! The same reader also reads one whole Python literal, alone
//! ([`PyReader::literal`]): a raw parameter value a model wrote in Python.
//! There it follows Python's `ast.literal_eval` and `json.dumps` more
//! closely: an integer with leading zeros fails, so does an underscore
//! that is not between two digits (`1_`), and a dictionary key that
//! is `True`, `False` or `None` becomes its JSON text (`{None: 1}` →
//! `{"null":1}`).

use std::collections::HashSet;

use crate::lang::format::{PyArgs, PyStep, PyStrings};
use crate::read::escape::{push_json_str, push_json_str_content};
use crate::read::reason::Reason;
use crate::read::steps::{is_ws, Progress};

/// What a container is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// The call's arguments (a JSON object).
    Args,
    /// `[…]`.
    List,
    /// `(…)`, an array.
    Tuple,
    /// `{…}`, an object.
    Dict,
}

/// An open container.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Frame {
    /// What the container is; fixed when it opens.
    kind: Kind,
    /// Items begun so far (key–value pairs of objects); a `,` is written
    /// before every item but the first.
    items: u32,
    /// A `,` was read after the last item and no item began since.
    comma: bool,
    /// In a dictionary with literal keys: the value read last was a key,
    /// so `:` must follow.
    at_key: bool,
}

impl Frame {
    fn new(kind: Kind) -> Frame {
        Frame {
            kind,
            items: 0,
            comma: false,
            at_key: false,
        }
    }
}

/// An escape sequence being read inside a Python string.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Esc {
    /// None.
    No,
    /// A backslash was read.
    Backslash,
    /// `\x`, `\u` or `\U` (`kind`): `left` hex digits still to come, the
    /// value so far in `acc`.
    Hex { kind: u8, left: u8, acc: u32 },
    /// An octal escape: `n` digits (1 to 3) read, the value so far in `acc`.
    Octal { n: u8, acc: u32 },
    /// A backslash and a carriage return: a line continuation, which takes
    /// the line feed that may follow too.
    Cr,
}

/// A Python string being read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Str {
    /// The quote byte, `'` or `"`.
    q: u8,
    /// Triple-quoted: three quotes in a row end it.
    triple: bool,
    /// Raw (`r'…'`): a backslash escapes nothing, but keeps a quote after
    /// it from ending the string.
    raw: bool,
    /// (Triple-quoted) quotes read in a row, fewer than three, not yet
    /// written as content.
    run: u8,
    /// The escape sequence being read (raw strings: only `Backslash`).
    esc: Esc,
    /// A high surrogate from a `\u` escape, waiting for its low half (the
    /// very next escape).
    hi: Option<u32>,
}

/// Where the reader is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum St {
    /// After an opening bracket or a `,`: an item or the closing bracket.
    Item,
    /// A keyword's name or a bare key, in `tok`.
    Key,
    /// After a keyword's name: whitespace, then `=`.
    Sep,
    /// A value (whitespace before it skipped).
    Value,
    /// A Python string's opening quotes: `n` (1 or 2) of `q` read.
    Quote { q: u8, n: u8, raw: bool },
    /// Inside a Python string.
    Str(Str),
    /// The opening delimiter of a delimited string: `m` bytes matched.
    DOpen(usize),
    /// Inside a delimited string: `m` bytes of the closing delimiter
    /// matched (not yet written as content).
    DStr(usize),
    /// A number, in `tok`.
    Num,
    /// A bare word, in `tok`.
    Word,
    /// After a value: `,`, a closing bracket, or `:` after a dictionary key.
    After,
    /// The arguments closed.
    Done,
}

/// Reads the arguments of one call.
#[derive(Debug)]
pub(crate) struct PyReader {
    /// Where the reader is.
    st: St,
    /// Open containers, outermost (the arguments) first; empty once they
    /// closed.
    frames: Vec<Frame>,
    /// The key, number or word being read (bounded by the call's size
    /// limit, which the block runner enforces).
    tok: Vec<u8>,
    /// A key was read, or the arguments closed: the text is a call.
    shown: bool,
    /// The arguments' own keys read so far (not those of nested
    /// dictionaries).
    seen: HashSet<Vec<u8>>,
    /// The value being read belongs to a key named before: it is written
    /// to `discard`, not to the arguments (the first value has already
    /// streamed).
    dropping: bool,
    /// A repeated key was read, and not yet reported
    /// ([`take_repeated`](PyReader::take_repeated)).
    repeated: bool,
    /// Where a dropped value is written (cleared after each step).
    discard: Vec<u8>,
    /// Reading one literal ([`PyReader::literal`]), not a call's
    /// arguments: there are no arguments around the value.
    literal: bool,
}

/// Writes a decoded character as JSON string content.
fn push_char(c: char, out: &mut Vec<u8>) {
    let mut buf = [0u8; 4];
    push_json_str_content(c.encode_utf8(&mut buf).as_bytes(), out);
}

fn is_ident_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_' || b >= 0x80
}

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80
}

/// The canonical JSON of a Python number (`tok`), appended to `out`.
/// Underscores between digits are dropped, leading zeros of the integer
/// part too; `.5` and `5.` get their zero; hexadecimal, octal and binary
/// integers are converted. Complex numbers, `inf` and `nan` fail.
pub(crate) fn push_number(tok: &[u8], out: &mut Vec<u8>) -> Result<(), Reason> {
    let bad = |at: usize| Reason::BadNumber {
        found: tok.get(at).or(tok.last()).copied().unwrap_or(b' '),
    };
    let (neg, start) = match tok.first() {
        Some(b'-') => (true, 1),
        Some(b'+') => (false, 1),
        _ => (false, 0),
    };
    let rest: Vec<u8> = tok
        .get(start..)
        .unwrap_or_default()
        .iter()
        .copied()
        .filter(|&b| b != b'_')
        .collect();
    if rest.is_empty() {
        return Err(bad(tok.len()));
    }
    if let [b'0', r, digits @ ..] = rest.as_slice() {
        let radix = match r {
            b'x' | b'X' => 16,
            b'o' | b'O' => 8,
            b'b' | b'B' => 2,
            _ => 0,
        };
        if radix != 0 {
            let s = std::str::from_utf8(digits).map_err(|_| bad(2))?;
            let v = u128::from_str_radix(s, radix).map_err(|_| bad(tok.len() - 1))?;
            if neg && v != 0 {
                out.push(b'-');
            }
            out.extend_from_slice(v.to_string().as_bytes());
            return Ok(());
        }
    }
    let digits_at = |from: usize| {
        rest.get(from..)
            .unwrap_or_default()
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count()
    };
    let int_len = digits_at(0);
    let mut i = int_len;
    let mut frac: Option<&[u8]> = None;
    if rest.get(i) == Some(&b'.') {
        let n = digits_at(i + 1);
        frac = rest.get(i + 1..i + 1 + n);
        i += 1 + n;
    }
    let mut exp: Option<(Option<u8>, &[u8])> = None;
    if matches!(rest.get(i), Some(b'e' | b'E')) {
        i += 1;
        let sign = match rest.get(i) {
            Some(&s @ (b'+' | b'-')) => {
                i += 1;
                Some(s)
            }
            _ => None,
        };
        let n = digits_at(i);
        if n == 0 {
            return Err(bad(start + i));
        }
        exp = rest.get(i..i + n).map(|d| (sign, d));
        i += n;
    }
    if i != rest.len() || (int_len == 0 && frac.is_none_or(|f| f.is_empty())) {
        return Err(bad((start + i).min(tok.len().saturating_sub(1))));
    }
    if neg {
        out.push(b'-');
    }
    let int = rest.get(..int_len).unwrap_or_default();
    let zeros = int.iter().take_while(|&&b| b == b'0').count();
    match int.get(zeros..) {
        Some(d) if !d.is_empty() => out.extend_from_slice(d),
        _ => out.push(b'0'),
    }
    if let Some(f) = frac {
        out.push(b'.');
        if f.is_empty() {
            out.push(b'0');
        } else {
            out.extend_from_slice(f);
        }
    }
    if let Some((sign, d)) = exp {
        out.push(b'e');
        if let Some(s) = sign {
            out.push(s);
        }
        out.extend_from_slice(d);
    }
    Ok(())
}

/// Whether Python refuses the number `tok`, which [`push_number`] reads:
/// a decimal integer written with a leading zero before another digit
/// (`07`; `00`, `0.5` and `07.5` Python reads), or an underscore that is
/// not between two digits (`1_`, `1__0`, `1_.5`; `0x_1F` Python reads).
fn python_refuses(tok: &[u8]) -> bool {
    let digits = tok
        .strip_prefix(b"-")
        .or(tok.strip_prefix(b"+"))
        .unwrap_or(tok);
    let radix = match digits {
        [b'0', b'x' | b'X', ..] => 16,
        [b'0', b'o' | b'O', ..] => 8,
        [b'0', b'b' | b'B', ..] => 2,
        _ => 10,
    };
    let is_digit = |b: u8| char::from(b).is_digit(radix);
    let misplaced = digits.iter().enumerate().any(|(k, &b)| {
        b == b'_'
            && !(k
                .checked_sub(1)
                .and_then(|j| digits.get(j))
                .is_some_and(|&a| is_digit(a) || (radix != 10 && k == 2))
                && digits.get(k + 1).is_some_and(|&c| is_digit(c)))
    });
    if misplaced {
        return true;
    }
    let mut it = digits.iter().copied().filter(|&b| b != b'_');
    if radix != 10 || it.next() != Some(b'0') {
        return false;
    }
    let mut nonzero = false;
    for b in it {
        match b {
            b'0' => {}
            b'1'..=b'9' => nonzero = true,
            _ => return false, // a point or an exponent: not an integer
        }
    }
    nonzero
}

impl PyReader {
    /// A reader at the start of the arguments (their opening bracket was
    /// read); writes the arguments object's `{` to `out`.
    pub(crate) fn new(out: &mut Vec<u8>) -> PyReader {
        out.push(b'{');
        PyReader {
            st: St::Item,
            frames: vec![Frame::new(Kind::Args)],
            tok: Vec::new(),
            shown: false,
            seen: HashSet::new(),
            dropping: false,
            repeated: false,
            discard: Vec::new(),
            literal: false,
        }
    }

    /// A reader of one Python literal alone (`{'a': (1, 2)}`, `True`,
    /// `'x'`), not of a call's arguments: feed it the literal, then call
    /// [`finish`](PyReader::finish). Use it with [`PyStep::keywords`] (so
    /// dictionary keys are literals and parentheses make tuples). Nothing
    /// but whitespace may follow the value; no key is ever dropped.
    pub(crate) fn literal() -> PyReader {
        PyReader {
            st: St::Value,
            frames: Vec::new(),
            tok: Vec::new(),
            shown: false,
            seen: HashSet::new(),
            dropping: false,
            repeated: false,
            discard: Vec::new(),
            literal: true,
        }
    }

    /// The end of the input of a [`literal`](PyReader::literal) reader:
    /// ends a number or a word still being read, then tells whether one
    /// whole literal was read.
    pub(crate) fn finish(&mut self, step: &PyStep, out: &mut Vec<u8>) -> Result<(), Reason> {
        if matches!(self.st, St::Num | St::Word | St::Quote { n: 2, .. }) {
            // These end at any byte that cannot continue them; a space is
            // one.
            let mut i = 0;
            self.step(step, 0, b" ", &mut i, out)?;
        }
        if self.literal && self.st == St::After && self.frames.is_empty() {
            Ok(())
        } else {
            Err(Reason::ArgsUnfinished)
        }
    }

    /// Whether a repeated key was read since the last call: the reader
    /// stops right after such a key, so the caller notes it at that byte,
    /// however the input was cut.
    pub(crate) fn take_repeated(&mut self) -> bool {
        std::mem::take(&mut self.repeated)
    }

    /// A key was read, or the arguments closed: the text is a call.
    pub(crate) fn shown(&self) -> bool {
        self.shown
    }

    /// After a failure: how to read over the rest of the call for the end
    /// of the list element it is (the failing byte is read again). `None`
    /// in a delimited string, whose end the skip cannot follow.
    pub(crate) fn skip(&self, step: &PyStep) -> Option<Skip> {
        let open = self
            .frames
            .iter()
            .map(|f| match f.kind {
                Kind::Args if step.args == PyArgs::Keywords => b')',
                Kind::Tuple => b')',
                Kind::List => b']',
                Kind::Args | Kind::Dict => b'}',
            })
            .collect();
        let st = match self.st {
            St::Str(s) => SkipSt::In {
                q: s.q,
                triple: s.triple,
                esc: s.esc == Esc::Backslash,
                run: s.run,
            },
            St::Quote { q, n, .. } => SkipSt::Open { q, n },
            St::DOpen(_) | St::DStr(_) => return None,
            _ => SkipSt::Code,
        };
        Some(Skip { open, st })
    }

    /// Reads `input`, writing the arguments to `out`: `Done(n)` once the
    /// closing bracket (the `n`th byte) was read, `Fail(n, why)` at byte
    /// `n`, else `Partial(n)`: all of it, or the first `n` bytes, after
    /// which the reader became [`shown`](PyReader::shown) (so the caller
    /// decides whether the text is a call at that byte, however the input
    /// was cut; it feeds the rest again).
    pub(crate) fn feed(
        &mut self,
        step: &PyStep,
        max_depth: usize,
        input: &[u8],
        out: &mut Vec<u8>,
    ) -> Progress {
        let mut i = 0;
        while i < input.len() {
            let was_shown = self.shown;
            let stepped = if self.dropping {
                // A repeated key's value: read, and written nowhere.
                let mut discard = std::mem::take(&mut self.discard);
                let r = self.step(step, max_depth, input, &mut i, &mut discard);
                discard.clear();
                self.discard = discard;
                if self.st == St::After && self.frames.len() == 1 {
                    self.dropping = false;
                }
                r
            } else {
                self.step(step, max_depth, input, &mut i, out)
            };
            if let Err(reason) = stepped {
                return Progress::Fail(i, reason);
            }
            if self.st == St::Done {
                return Progress::Done(i, ());
            }
            if (self.shown && !was_shown) || self.repeated {
                return Progress::Partial(i);
            }
        }
        Progress::Partial(input.len())
    }

    /// Reads from `input[*i]` on: at least one byte, or a change of state
    /// that reads it again; `*i` is where it stopped. An error leaves `*i`
    /// at the byte that does not fit. (One method per state.)
    fn step(
        &mut self,
        step: &PyStep,
        max_depth: usize,
        input: &[u8],
        i: &mut usize,
        out: &mut Vec<u8>,
    ) -> Result<(), Reason> {
        let Some(&b) = input.get(*i) else {
            return Ok(());
        };
        match self.st {
            St::Item => self.item(step, b, i, out),
            St::Key => self.key(step, b, i, out),
            St::Sep => {
                if b == b'=' {
                    self.write_key(out);
                    self.st = St::Value;
                } else if !is_ws(b) {
                    return Err(Reason::PositionalArg);
                }
                *i += 1;
                Ok(())
            }
            St::Value => {
                if !is_ws(b) {
                    self.value_start(step, max_depth, b, out)?;
                }
                *i += 1;
                Ok(())
            }
            St::Quote { q, n, raw } => {
                self.quote(q, n, raw, b, i, out);
                Ok(())
            }
            St::Str(mut s) => {
                let r = self.string(&mut s, input, i, out);
                if matches!(self.st, St::Str(_)) {
                    self.st = St::Str(s);
                }
                r
            }
            St::DOpen(m) => self.delimiter_open(step, m, b, i, out),
            St::DStr(m) => self.delimited(step, m, input, i, out),
            St::Num => self.number_byte(b, i, out),
            St::Word => {
                if is_ident(b) || b == b'.' {
                    self.tok.push(b);
                    *i += 1;
                    return Ok(());
                }
                self.word_end(step, b, i, out)
            }
            St::After => self.after(step, b, i, out),
            St::Done => Err(Reason::Unexpected { found: b }),
        }
    }

    /// [`St::Item`]: a key, a value, or the container's end.
    fn item(
        &mut self,
        step: &PyStep,
        b: u8,
        i: &mut usize,
        out: &mut Vec<u8>,
    ) -> Result<(), Reason> {
        if is_ws(b) {
            *i += 1;
            return Ok(());
        }
        if self.closes(step, b) {
            return self.close(i, out);
        }
        let keywords = step.args == PyArgs::Keywords;
        let Some(top) = self.frames.last_mut() else {
            return Err(Reason::Unexpected { found: b });
        };
        match (top.kind, keywords) {
            (Kind::Args, true) => {
                if !is_ident_start(b) {
                    return Err(Reason::PositionalArg);
                }
                self.tok.clear();
                self.st = St::Key;
            }
            (Kind::Args | Kind::Dict, false) => {
                if b == b':' || b"{}[],".contains(&b) || b < 0x20 {
                    return Err(Reason::ExpectedKey { found: b });
                }
                self.tok.clear();
                self.st = St::Key;
            }
            (Kind::Dict, true) => {
                begin_item(top, out);
                top.at_key = true;
                self.st = St::Value;
            }
            (Kind::List | Kind::Tuple, _) => {
                begin_item(top, out);
                self.st = St::Value;
            }
        }
        Ok(())
    }

    /// [`St::Key`]: a keyword (`city=`) or a bare key (`city:`).
    fn key(
        &mut self,
        step: &PyStep,
        b: u8,
        i: &mut usize,
        out: &mut Vec<u8>,
    ) -> Result<(), Reason> {
        if step.args == PyArgs::Keywords {
            if is_ident(b) {
                self.tok.push(b);
            } else if is_ws(b) {
                self.st = St::Sep;
            } else if b == b'=' {
                self.write_key(out);
                self.st = St::Value;
            } else {
                return Err(Reason::PositionalArg);
            }
        } else if b == b':' {
            while self.tok.last().is_some_and(|&c| is_ws(c)) {
                self.tok.pop();
            }
            self.write_key(out);
            self.st = St::Value;
        } else if b"{}[],".contains(&b) || (b < 0x20 && !is_ws(b)) {
            return Err(Reason::ExpectedColon { found: b });
        } else {
            self.tok.push(b);
        }
        *i += 1;
        Ok(())
    }

    /// [`St::Quote`]: after `n` quotes `q` — a string, a triple-quoted
    /// one, or the empty string.
    fn quote(&mut self, q: u8, n: u8, raw: bool, b: u8, i: &mut usize, out: &mut Vec<u8>) {
        let string = |triple| {
            St::Str(Str {
                q,
                triple,
                raw,
                run: 0,
                esc: Esc::No,
                hi: None,
            })
        };
        if b == q && n == 1 {
            self.st = St::Quote { q, n: 2, raw };
            *i += 1;
        } else if b == q {
            self.st = string(true);
            *i += 1;
        } else if n == 2 {
            // `''`: the empty string; this byte is read again.
            out.push(b'"');
            self.st = St::After;
        } else {
            self.st = string(false);
        }
    }

    /// [`St::DOpen`]: the `m`th byte of a string's opening delimiter.
    fn delimiter_open(
        &mut self,
        step: &PyStep,
        m: usize,
        b: u8,
        i: &mut usize,
        out: &mut Vec<u8>,
    ) -> Result<(), Reason> {
        let PyStrings::Delimited(d) = &step.strings else {
            return Err(Reason::ExpectedValue { found: b });
        };
        if !d.matches_at(m, b) {
            return Err(Reason::ExpectedValue { found: b });
        }
        *i += 1;
        if m + 1 == d.bytes.len() {
            out.push(b'"');
            self.st = St::DStr(0);
        } else {
            self.st = St::DOpen(m + 1);
        }
        Ok(())
    }

    /// [`St::DStr`]: inside a delimited string, `m` bytes of the closing
    /// delimiter matched.
    fn delimited(
        &mut self,
        step: &PyStep,
        m: usize,
        input: &[u8],
        i: &mut usize,
        out: &mut Vec<u8>,
    ) -> Result<(), Reason> {
        let b = input.get(*i).copied().unwrap_or_default();
        let PyStrings::Delimited(d) = &step.strings else {
            return Err(Reason::ExpectedValue { found: b });
        };
        let (Some(&first), rest) = (d.bytes.first(), input.get(*i..).unwrap_or_default()) else {
            return Err(Reason::ExpectedValue { found: b });
        };
        if m == 0 {
            // Verbatim text up to the delimiter's first byte.
            let k = memchr::memchr(first, rest).unwrap_or(rest.len());
            if k > 0 {
                push_json_str_content(&rest[..k], out);
                *i += k;
                return Ok(());
            }
        }
        *i += 1;
        if d.matches_at(m, b) {
            if m + 1 == d.bytes.len() {
                out.push(b'"');
                self.st = St::After;
            } else {
                self.st = St::DStr(m + 1);
            }
            return Ok(());
        }
        // The partial delimiter and this byte: text, but for a
        // tail that may begin the delimiter again.
        let mut held: Vec<u8> = d.bytes.get(..m).unwrap_or_default().to_vec();
        held.push(b);
        let s = (1..=held.len())
            .find(|&s| {
                let tail = held.get(s..).unwrap_or_default();
                tail.iter().enumerate().all(|(k, &c)| d.matches_at(k, c))
            })
            .unwrap_or(held.len());
        push_json_str_content(held.get(..s).unwrap_or_default(), out);
        self.st = St::DStr(held.len() - s);
        Ok(())
    }

    /// [`St::Num`]: a number's next byte, or its end.
    fn number_byte(&mut self, b: u8, i: &mut usize, out: &mut Vec<u8>) -> Result<(), Reason> {
        let sign_ok = (b == b'+' || b == b'-')
            && matches!(self.tok.last(), Some(b'e' | b'E'))
            && !self.tok.iter().any(|&c| c == b'x' || c == b'X');
        if b.is_ascii_alphanumeric() || b == b'_' || b == b'.' || sign_ok {
            self.tok.push(b);
            *i += 1;
            return Ok(());
        }
        if self.literal && python_refuses(&self.tok) {
            // Python refuses `07` and `1_`; the call reader reads `7` and
            // `1`.
            return Err(Reason::BadNumber {
                found: self.tok.first().copied().unwrap_or(b'0'),
            });
        }
        let mut num = Vec::new();
        push_number(&self.tok, &mut num)?;
        if self.frames.last().is_some_and(|f| f.at_key) {
            // A number as a dictionary key: its text.
            push_json_str(&num, out);
        } else {
            out.extend_from_slice(&num);
        }
        self.st = St::After;
        Ok(())
    }

    /// [`St::After`]: a value ended — a `:` after a key, a `,`, or the
    /// container's end.
    fn after(
        &mut self,
        step: &PyStep,
        b: u8,
        i: &mut usize,
        out: &mut Vec<u8>,
    ) -> Result<(), Reason> {
        if is_ws(b) {
            *i += 1;
            return Ok(());
        }
        let Some(top) = self.frames.last_mut() else {
            return Err(Reason::Unexpected { found: b });
        };
        if top.at_key {
            if b != b':' {
                return Err(Reason::ExpectedColon { found: b });
            }
            out.push(b':');
            top.at_key = false;
            self.st = St::Value;
            *i += 1;
            return Ok(());
        }
        if b == b',' {
            top.comma = true;
            self.st = St::Item;
            *i += 1;
            return Ok(());
        }
        if self.closes(step, b) {
            return self.close(i, out);
        }
        Err(Reason::ExpectedCommaOrClose { found: b })
    }

    /// Whether `b` closes the innermost container.
    fn closes(&self, step: &PyStep, b: u8) -> bool {
        let want = match self.frames.last().map(|f| f.kind) {
            Some(Kind::Args) => match step.args {
                PyArgs::Keywords => b')',
                PyArgs::BareKeys => b'}',
            },
            Some(Kind::List) => b']',
            Some(Kind::Tuple) => b')',
            Some(Kind::Dict) => b'}',
            None => return false,
        };
        b == want
    }

    /// Closes the innermost container at `input[*i]`, its closing bracket.
    fn close(&mut self, i: &mut usize, out: &mut Vec<u8>) -> Result<(), Reason> {
        let Some(f) = self.frames.pop() else {
            return Err(Reason::Unbalanced { found: b')' });
        };
        if f.kind == Kind::Tuple && f.items == 1 && !f.comma {
            // `(x)` is `x` in Python, not a tuple.
            return Err(Reason::Parenthesised);
        }
        out.push(match f.kind {
            Kind::List | Kind::Tuple => b']',
            Kind::Args | Kind::Dict => b'}',
        });
        *i += 1;
        if f.kind == Kind::Args {
            self.shown = true;
            self.st = St::Done;
        } else {
            self.st = St::After;
        }
        Ok(())
    }

    /// Writes the key in `tok`: `,` before all but the first, the key as a
    /// JSON string, `:`.
    fn write_key(&mut self, out: &mut Vec<u8>) {
        let in_args = matches!(self.frames.as_slice(), [f] if f.kind == Kind::Args);
        if in_args && !self.seen.insert(self.tok.clone()) {
            // The arguments name this key again: its value is dropped.
            self.dropping = true;
            self.repeated = true;
            self.shown = true;
            return;
        }
        if let Some(top) = self.frames.last_mut() {
            begin_item(top, out);
        }
        push_json_str(&self.tok, out);
        out.push(b':');
        self.shown = true;
    }

    /// The first byte of a value.
    fn value_start(
        &mut self,
        step: &PyStep,
        max_depth: usize,
        b: u8,
        out: &mut Vec<u8>,
    ) -> Result<(), Reason> {
        let keywords = step.args == PyArgs::Keywords;
        let at_key = self.frames.last().is_some_and(|f| f.at_key);
        match &step.strings {
            PyStrings::Quoted if b == b'\'' || b == b'"' => {
                out.push(b'"');
                self.st = St::Quote {
                    q: b,
                    n: 1,
                    raw: false,
                };
                return Ok(());
            }
            PyStrings::Delimited(d) if d.matches_at(0, b) => {
                if d.bytes.len() == 1 {
                    out.push(b'"');
                    self.st = St::DStr(0);
                } else {
                    self.st = St::DOpen(1);
                }
                return Ok(());
            }
            _ => {}
        }
        if b.is_ascii_digit() || b == b'-' || b == b'+' || b == b'.' {
            self.tok.clear();
            self.tok.push(b);
            self.st = St::Num;
            return Ok(());
        }
        let word = b.is_ascii_alphabetic() || b == b'_';
        if at_key && !(self.literal && word) {
            // (A literal's dict key may be `True`, `False` or `None`.)
            return Err(Reason::DictKey { found: b });
        }
        let kind = match b {
            b'[' => Kind::List,
            b'{' => Kind::Dict,
            b'(' if keywords => Kind::Tuple,
            _ if word => {
                self.tok.clear();
                self.tok.push(b);
                self.st = St::Word;
                return Ok(());
            }
            _ => return Err(Reason::ExpectedValue { found: b }),
        };
        if self.frames.len() >= max_depth {
            return Err(Reason::TooDeep { limit: max_depth });
        }
        out.push(if kind == Kind::Dict { b'{' } else { b'[' });
        self.frames.push(Frame::new(kind));
        self.st = St::Item;
        Ok(())
    }

    /// A bare word ended before `b`: a literal, or a string prefix before
    /// its quote; anything else fails the call.
    fn word_end(
        &mut self,
        step: &PyStep,
        b: u8,
        i: &mut usize,
        out: &mut Vec<u8>,
    ) -> Result<(), Reason> {
        let at_key = self.frames.last().is_some_and(|f| f.at_key);
        let quoted = step.strings == PyStrings::Quoted;
        if quoted && (b == b'\'' || b == b'"') {
            let raw = match self.tok.to_ascii_lowercase().as_slice() {
                b"r" => true,
                b"u" => false,
                _ => return Err(Reason::StringPrefix),
            };
            out.push(b'"');
            self.st = St::Quote { q: b, n: 1, raw };
            *i += 1;
            return Ok(());
        }
        let json: &[u8] = match self.tok.as_slice() {
            b"True" if step.python_literals => b"true",
            b"False" if step.python_literals => b"false",
            b"None" if step.python_literals => b"null",
            b"true" if step.json_literals => b"true",
            b"false" if step.json_literals => b"false",
            b"null" if step.json_literals => b"null",
            _ if b == b'(' => return Err(Reason::NestedCall),
            _ => return Err(Reason::NotALiteral),
        };
        if at_key && self.literal {
            // As `json.dumps` writes such a key: its JSON text.
            push_json_str(json, out);
        } else if at_key {
            return Err(Reason::DictKey { found: b });
        } else {
            out.extend_from_slice(json);
        }
        self.st = St::After;
        Ok(())
    }

    /// Reads a Python string from `input[*i]`.
    fn string(
        &mut self,
        s: &mut Str,
        input: &[u8],
        i: &mut usize,
        out: &mut Vec<u8>,
    ) -> Result<(), Reason> {
        let Some(&b) = input.get(*i) else {
            return Ok(());
        };
        if !matches!(s.esc, Esc::No) {
            return escape(s, b, i, out);
        }
        if s.triple && b == s.q {
            *i += 1;
            s.run += 1;
            if s.run == 3 {
                if s.hi.is_some() {
                    return Err(Reason::LoneSurrogate);
                }
                out.push(b'"');
                self.st = St::After;
            }
            return Ok(());
        }
        if s.run > 0 {
            // Quotes that did not end a triple-quoted string are text.
            if s.hi.is_some() {
                return Err(Reason::LoneSurrogate);
            }
            for _ in 0..s.run {
                push_json_str_content(&[s.q], out);
            }
            s.run = 0;
        }
        if b == b'\\' {
            *i += 1;
            s.esc = Esc::Backslash;
            return Ok(());
        }
        if b == s.q {
            // (single-quoted; a triple quote was handled above)
            if s.hi.is_some() {
                return Err(Reason::LoneSurrogate);
            }
            *i += 1;
            out.push(b'"');
            self.st = St::After;
            return Ok(());
        }
        if s.hi.is_some() {
            return Err(Reason::LoneSurrogate);
        }
        // Text up to the next quote or backslash, in one go.
        let rest = input.get(*i..).unwrap_or_default();
        let k = memchr::memchr2(s.q, b'\\', rest).unwrap_or(rest.len());
        push_json_str_content(rest.get(..k).unwrap_or_default(), out);
        *i += k;
        Ok(())
    }
}

/// The byte `b` inside an escape of string `s` (`s.esc` is not
/// [`Esc::No`]): one function per kind of escape.
fn escape(s: &mut Str, b: u8, i: &mut usize, out: &mut Vec<u8>) -> Result<(), Reason> {
    match s.esc {
        Esc::No => Ok(()),
        Esc::Backslash => backslash(s, b, i, out),
        Esc::Cr => {
            s.esc = Esc::No;
            if b == b'\n' {
                *i += 1;
                return Ok(());
            }
            // Any other byte is read again.
            Ok(())
        }
        Esc::Octal { n, acc } => {
            if (b'0'..=b'7').contains(&b) && n < 3 {
                let acc = acc * 8 + u32::from(b - b'0');
                *i += 1;
                if n + 1 == 3 {
                    s.esc = Esc::No;
                    return emit(s, acc, out);
                }
                s.esc = Esc::Octal { n: n + 1, acc };
                return Ok(());
            }
            // The escape ended before this byte, which is read again.
            s.esc = Esc::No;
            emit(s, acc, out)
        }
        Esc::Hex { kind, left, acc } => {
            let Some(d) = (b as char).to_digit(16) else {
                return Err(Reason::BadHex { found: b });
            };
            *i += 1;
            let acc = acc * 16 + d;
            if left > 1 {
                s.esc = Esc::Hex {
                    kind,
                    left: left - 1,
                    acc,
                };
                return Ok(());
            }
            s.esc = Esc::No;
            if kind == b'x' {
                return emit(s, acc, out);
            }
            unicode(s, acc, out)
        }
    }
}

/// The byte after a backslash in string `s`.
fn backslash(s: &mut Str, b: u8, i: &mut usize, out: &mut Vec<u8>) -> Result<(), Reason> {
    *i += 1;
    s.esc = Esc::No;
    if s.raw {
        push_json_str_content(&[b'\\', b], out);
        return Ok(());
    }
    if s.hi.is_some() && b != b'u' {
        return Err(Reason::LoneSurrogate);
    }
    let short = match b {
        b'\n' => return Ok(()), // a line continuation
        b'\r' => {
            s.esc = Esc::Cr;
            return Ok(());
        }
        b'\\' | b'\'' | b'"' => b,
        b'a' => 0x07,
        b'b' => 0x08,
        b'f' => 0x0c,
        b'n' => b'\n',
        b'r' => b'\r',
        b't' => b'\t',
        b'v' => 0x0b,
        b'0'..=b'7' => {
            s.esc = Esc::Octal {
                n: 1,
                acc: u32::from(b - b'0'),
            };
            return Ok(());
        }
        b'x' | b'u' | b'U' => {
            let left = match b {
                b'x' => 2,
                b'u' => 4,
                _ => 8,
            };
            s.esc = Esc::Hex {
                kind: b,
                left,
                acc: 0,
            };
            return Ok(());
        }
        b'N' => {
            *i -= 1;
            return Err(Reason::BadEscape { found: b });
        }
        // Python keeps the backslash of an unknown escape.
        _ => {
            push_json_str_content(&[b'\\', b], out);
            return Ok(());
        }
    };
    push_json_str_content(&[short], out);
    Ok(())
}

/// Begins an item of `f`: a `,` before all but the first.
fn begin_item(f: &mut Frame, out: &mut Vec<u8>) {
    if f.items > 0 {
        out.push(b',');
    }
    f.items = f.items.saturating_add(1);
    f.comma = false;
}

/// Writes the character of an octal or `\x` escape (a code point below
/// 512).
fn emit(s: &Str, cp: u32, out: &mut Vec<u8>) -> Result<(), Reason> {
    if s.hi.is_some() {
        return Err(Reason::LoneSurrogate);
    }
    match char::from_u32(cp) {
        Some(c) => {
            push_char(c, out);
            Ok(())
        }
        None => Err(Reason::LoneSurrogate),
    }
}

/// Writes the character of a `\u` or `\U` escape, pairing surrogates.
fn unicode(s: &mut Str, cp: u32, out: &mut Vec<u8>) -> Result<(), Reason> {
    let cp = match (s.hi.take(), cp) {
        (Some(hi), 0xDC00..=0xDFFF) => 0x10000 + ((hi - 0xD800) << 10) + (cp - 0xDC00),
        (Some(_), _) | (None, 0xDC00..=0xDFFF) => return Err(Reason::LoneSurrogate),
        (None, 0xD800..=0xDBFF) => {
            s.hi = Some(cp);
            return Ok(());
        }
        (None, cp) => cp,
    };
    match char::from_u32(cp) {
        Some(c) => {
            push_char(c, out);
            Ok(())
        }
        None => Err(Reason::BadEscape { found: b'U' }),
    }
}

/// Where a [`Skip`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SkipSt {
    /// Outside strings.
    Code,
    /// A string's opening quotes: `n` (1 or 2) of `q` read.
    Open { q: u8, n: u8 },
    /// Inside a string: `esc`, a backslash was read (the next byte is
    /// content, a quote too); `run`, quotes of a triple-quoted string read
    /// in a row.
    In {
        q: u8,
        triple: bool,
        esc: bool,
        run: u8,
    },
}

/// Reads over the rest of a list element that failed, for its end only:
/// brackets are matched and strings followed (Python's quoting, which
/// takes JSON's strings too), so a separator inside either is not the
/// element's end. Nothing is decoded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Skip {
    /// The closing bracket of each bracket open in the element, innermost
    /// last.
    open: Vec<u8>,
    st: SkipSt,
}

/// How a [`Skip`] read its input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Skipped {
    /// All of it is the element's.
    More,
    /// The element ends before this byte (one of the ending bytes, at the
    /// element's own level).
    End(usize),
    /// This byte breaks the brackets (a closing bracket that closes
    /// nothing open, or another than the innermost; a bracket past the
    /// depth limit): the element's end cannot be known.
    Broken(usize),
}

impl Skip {
    /// At the element's own level, outside strings.
    pub(crate) fn top() -> Skip {
        Skip {
            open: Vec::new(),
            st: SkipSt::Code,
        }
    }

    /// Inside brackets whose closers are `open` (innermost last); inside a
    /// string quoted with `q` (one quote) when `string` is `Some((q,
    /// escaped))`, `escaped` if a backslash was the last byte read.
    pub(crate) fn inside(open: Vec<u8>, string: Option<(u8, bool)>) -> Skip {
        let st = match string {
            Some((q, esc)) => SkipSt::In {
                q,
                triple: false,
                esc,
                run: 0,
            },
            None => SkipSt::Code,
        };
        Skip { open, st }
    }

    /// Whether `b` is a closing bracket.
    fn is_closer(b: u8) -> bool {
        matches!(b, b')' | b']' | b'}')
    }

    /// Reads `input` up to the element's end: the first byte of `ends`
    /// at its own level outside strings (not read). Brackets nest up to
    /// `max_depth`.
    pub(crate) fn feed(&mut self, ends: &[u8], max_depth: usize, input: &[u8]) -> Skipped {
        let mut i = 0;
        while let Some(&b) = input.get(i) {
            match self.st {
                SkipSt::Code => {
                    if self.open.is_empty() && ends.contains(&b) {
                        return Skipped::End(i);
                    }
                    let close = match b {
                        b'(' => Some(b')'),
                        b'[' => Some(b']'),
                        b'{' => Some(b'}'),
                        _ => None,
                    };
                    if let Some(c) = close {
                        if self.open.len() >= max_depth {
                            return Skipped::Broken(i);
                        }
                        self.open.push(c);
                    } else if Self::is_closer(b) {
                        if self.open.last() != Some(&b) {
                            return Skipped::Broken(i);
                        }
                        self.open.pop();
                    } else if b == b'\'' || b == b'"' {
                        self.st = SkipSt::Open { q: b, n: 1 };
                    }
                }
                SkipSt::Open { q, n } => {
                    if b == q && n == 1 {
                        self.st = SkipSt::Open { q, n: 2 };
                    } else if b == q {
                        self.st = SkipSt::In {
                            q,
                            triple: true,
                            esc: false,
                            run: 0,
                        };
                    } else {
                        // `''` is an empty string; else the string began.
                        // Either way this byte is read again.
                        self.st = if n == 2 {
                            SkipSt::Code
                        } else {
                            SkipSt::In {
                                q,
                                triple: false,
                                esc: false,
                                run: 0,
                            }
                        };
                        continue;
                    }
                }
                SkipSt::In {
                    q,
                    triple,
                    esc,
                    run,
                } => {
                    let run = if b == q && !esc { run + 1 } else { 0 };
                    self.st = if !esc && b == q && (!triple || run == 3) {
                        SkipSt::Code
                    } else {
                        SkipSt::In {
                            q,
                            triple,
                            esc: !esc && b == b'\\',
                            run,
                        }
                    };
                }
            }
            i += 1;
        }
        Skipped::More
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// How a read ended: the closing bracket's end, a failure at a byte,
    /// or still reading.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    enum End {
        Done(usize),
        Fail(usize, Reason),
        Partial,
    }

    /// Reads `input` cut at `cuts`; returns the JSON written and the end.
    fn read_cut(step: &PyStep, depth: usize, input: &[u8], cuts: &[usize]) -> (String, End) {
        let mut out = Vec::new();
        let mut r = PyReader::new(&mut out);
        let mut from = 0;
        for &to in cuts.iter().chain(std::iter::once(&input.len())) {
            let to = to.clamp(from, input.len());
            // The reader stops once where the text shows a call, and
            // after each key named again.
            let mut at = from;
            let p = loop {
                let shown = r.shown();
                match r.feed(step, depth, &input[at..to], &mut out) {
                    Progress::Partial(n) if at + n < to => {
                        assert!(
                            (!shown && r.shown()) | r.take_repeated(),
                            "stopped early but not where it showed or repeated a key"
                        );
                        at += n;
                    }
                    p => break p,
                }
            };
            r.take_repeated();
            match p {
                Progress::Partial(n) => assert_eq!(at + n, to),
                Progress::Done(n, ()) => {
                    return (String::from_utf8(out).unwrap(), End::Done(at + n));
                }
                Progress::Fail(n, why) => {
                    return (
                        String::from_utf8_lossy(&out).into_owned(),
                        End::Fail(at + n, why),
                    );
                }
            }
            from = to;
        }
        (String::from_utf8_lossy(&out).into_owned(), End::Partial)
    }

    /// Reads `input` whole, checks the JSON and the end, then checks that
    /// every cut into two pieces and byte-by-byte feeding agree.
    fn check(step: &PyStep, depth: usize, input: &str, json: &str, end: End) {
        let bytes = input.as_bytes();
        let whole = read_cut(step, depth, bytes, &[]);
        assert_eq!(whole, (json.to_string(), end), "whole: {input}");
        for k in 0..=bytes.len() {
            assert_eq!(
                read_cut(step, depth, bytes, &[k]),
                whole,
                "cut at {k}: {input}"
            );
        }
        let ones: Vec<usize> = (1..bytes.len()).collect();
        assert_eq!(
            read_cut(step, depth, bytes, &ones),
            whole,
            "bytewise: {input}"
        );
        if let End::Done(_) = end {
            // what is written is JSON
            let v: serde_json::Value = serde_json::from_str(json).unwrap();
            assert!(v.is_object(), "{json}");
        }
    }

    fn ok(step: &PyStep, input: &str, json: &str) {
        check(step, 128, input, json, End::Done(input.len()));
    }

    #[test]
    fn python_literals() {
        let py = PyStep::keywords();
        ok(&py, ")", "{}");
        ok(&py, " \n)", "{}");
        ok(&py, "city='Paris')", r#"{"city":"Paris"}"#);
        ok(&py, "a = 1 ,\n b= \"x\" ,)", r#"{"a":1,"b":"x"}"#);
        ok(
            &py,
            "t=True, f=False, n=None)",
            r#"{"t":true,"f":false,"n":null}"#,
        );
        ok(
            &py,
            "a=1, b=-2.5, c=1.5e-05, d=07, e=0x1F, f=1_000, g=.5, h=5., i=+3, j=-0o17, k=1E+3)",
            r#"{"a":1,"b":-2.5,"c":1.5e-05,"d":7,"e":31,"f":1000,"g":0.5,"h":5.0,"i":3,"j":-15,"k":1e+3}"#,
        );
        ok(&py, "z=00, y=0.0, x=-0)", r#"{"z":0,"y":0.0,"x":-0}"#);
        ok(
            &py,
            "l=[1, [2, []], (3,), ()], t=(1, 2,), d={'k': {1: 'a', \"q\": [None]}, 2.5: 0})",
            r#"{"l":[1,[2,[]],[3],[]],"t":[1,2],"d":{"k":{"1":"a","q":[null]},"2.5":0}}"#,
        );
        ok(
            &py,
            "d={}, l=[], e={'a': 1,})",
            r#"{"d":{},"l":[],"e":{"a":1}}"#,
        );
        ok(&py, "名前='東京')", r#"{"名前":"東京"}"#);
    }

    #[test]
    fn python_strings() {
        let py = PyStep::keywords();
        ok(
            &py,
            "s='', t=\"\", u='''''', v=\"\"\"\"\"\")",
            r#"{"s":"","t":"","u":"","v":""}"#,
        );
        ok(
            &py,
            "s=\"\"\"a\"b\"\"c\"\"\", t='''x\ny''', u='it\"s')",
            r#"{"s":"a\"b\"\"c","t":"x\ny","u":"it\"s"}"#,
        );
        ok(
            &py,
            r#"s='\n\t\\\'\"\x41\u00e9\U0001F600\101\0\a\v', t="\d", u='a\
b')"#,
            r#"{"s":"\n\t\\'\"Aé😀A\u0000\u0007\u000b","t":"\\d","u":"ab"}"#,
        );
        ok(&py, r"s='\ud83d\ude00')", r#"{"s":"😀"}"#);
        // line continuations, Unix and Windows
        ok(&py, "s='a\\\nb\\\r\nc\\\rd')", r#"{"s":"abcd"}"#);
        ok(
            &py,
            r"s=r'\n\'', t=u'x', v=R'\\')",
            r#"{"s":"\\n\\'","t":"x","v":"\\\\"}"#,
        );
        ok(&py, "s='東京 🎉 café')", r#"{"s":"東京 🎉 café"}"#);
        // a raw control character is kept, escaped
        ok(&py, "s='a\tb')", r#"{"s":"a\tb"}"#);
        // the triple quote ends at the first three quotes: a fourth is
        // not a value's continuation
        check(
            &py,
            128,
            "s='''a'''')",
            r#"{"s":"a""#,
            End::Fail(9, Reason::ExpectedCommaOrClose { found: b'\'' }),
        );
    }

    #[test]
    fn python_failures() {
        let py = PyStep::keywords();
        let fail = |input: &str, json: &str, at: usize, why: Reason| {
            check(&py, 128, input, json, End::Fail(at, why));
        };
        fail("x)", "{", 1, Reason::PositionalArg);
        fail("'x')", "{", 0, Reason::PositionalArg);
        fail("x y=1)", "{", 2, Reason::PositionalArg);
        fail("f=g(1))", r#"{"f":"#, 3, Reason::NestedCall);
        fail("f=mod.g(1))", r#"{"f":"#, 7, Reason::NestedCall);
        fail("f=y)", r#"{"f":"#, 3, Reason::NotALiteral);
        fail("f=true)", r#"{"f":"#, 6, Reason::NotALiteral);
        fail("f=(1))", r#"{"f":[1"#, 4, Reason::Parenthesised);
        fail(
            "f={True: 1})",
            r#"{"f":{"#,
            3,
            Reason::DictKey { found: b'T' },
        );
        fail(
            "f={[1]: 1})",
            r#"{"f":{"#,
            3,
            Reason::DictKey { found: b'[' },
        );
        fail("f=b'a')", r#"{"f":"#, 3, Reason::StringPrefix);
        fail(
            r"f='\N{DASH}')",
            r#"{"f":""#,
            4,
            Reason::BadEscape { found: b'N' },
        );
        fail(r"f='\x4g')", r#"{"f":""#, 6, Reason::BadHex { found: b'g' });
        fail(r"f='\ud83d')", r#"{"f":""#, 9, Reason::LoneSurrogate);
        fail(r"f='\ude00')", r#"{"f":""#, 9, Reason::LoneSurrogate);
        fail(r"f='\ud83dx')", r#"{"f":""#, 9, Reason::LoneSurrogate);
        fail(
            "f=1 2)",
            r#"{"f":1"#,
            4,
            Reason::ExpectedCommaOrClose { found: b'2' },
        );
        fail(
            "f=[1)",
            r#"{"f":[1"#,
            4,
            Reason::ExpectedCommaOrClose { found: b')' },
        );
        fail("f=1j)", r#"{"f":"#, 4, Reason::BadNumber { found: b'j' });
        fail("f=1e)", r#"{"f":"#, 4, Reason::BadNumber { found: b'e' });
        fail("f=-)", r#"{"f":"#, 3, Reason::BadNumber { found: b'-' });
        fail(
            "f=, g=1)",
            r#"{"f":"#,
            2,
            Reason::ExpectedValue { found: b',' },
        );
        fail(
            "f={'a' 1})",
            r#"{"f":{"a""#,
            7,
            Reason::ExpectedColon { found: b'1' },
        );
        fail(
            "f=[,])",
            r#"{"f":["#,
            3,
            Reason::ExpectedValue { found: b',' },
        );
    }

    #[test]
    fn json_literals_when_allowed() {
        let olmo = PyStep::keywords().json_literals();
        ok(
            &olmo,
            "a=true, b=null, c=False)",
            r#"{"a":true,"b":null,"c":false}"#,
        );
        let gemma = PyStep::bare_keys("<|\"|>");
        check(
            &gemma,
            128,
            "a:True}",
            r#"{"a":"#,
            End::Fail(6, Reason::NotALiteral),
        );
    }

    #[test]
    fn brace_notation() {
        let gemma = PyStep::bare_keys("<|\"|>");
        ok(&gemma, "}", "{}");
        ok(
            &gemma,
            "city:<|\"|>Zürich<|\"|>,n:{max:3,tags:[<|\"|>a<|\"|>,<|\"|>b<|\"|>]},r:1.5e-05,ok:true,x:null,e:[]}",
            r#"{"city":"Zürich","n":{"max":3,"tags":["a","b"]},"r":1.5e-05,"ok":true,"x":null,"e":[]}"#,
        );
        ok(
            &gemma,
            "display name:<|\"|>Zoë<|\"|>, age : 41 }",
            r#"{"display name":"Zoë","age":41}"#,
        );
        // nothing is escaped inside; a partial delimiter is text
        ok(
            &gemma,
            "s:<|\"|>a \\n <| b <|\"x {}[]\"<<|\"|>}",
            r#"{"s":"a \\n <| b <|\"x {}[]\"<"}"#,
        );
        let fg = PyStep::bare_keys("<escape>");
        ok(&fg, "s:<escape><esc <e<escape>}", r#"{"s":"<esc <e"}"#);
        let fail = |step: &PyStep, input: &str, json: &str, at: usize, why: Reason| {
            check(step, 128, input, json, End::Fail(at, why));
        };
        fail(
            &gemma,
            "city:Paris}",
            r#"{"city":"#,
            10,
            Reason::NotALiteral,
        );
        fail(&gemma, ":1}", "{", 0, Reason::ExpectedKey { found: b':' });
        fail(
            &gemma,
            "a{:1}",
            "{",
            1,
            Reason::ExpectedColon { found: b'{' },
        );
        fail(
            &gemma,
            "a:<|x",
            r#"{"a":"#,
            4,
            Reason::ExpectedValue { found: b'x' },
        );
        fail(
            &gemma,
            "a:(1)}",
            r#"{"a":"#,
            2,
            Reason::ExpectedValue { found: b'(' },
        );
        fail(
            &gemma,
            "a:'x'}",
            r#"{"a":"#,
            2,
            Reason::ExpectedValue { found: b'\'' },
        );
    }

    /// State × input: a key named again keeps its first value; the later
    /// one is read (a scalar, a container, a string) and written nowhere.
    #[test]
    fn a_repeated_key_keeps_its_first_value() {
        let py = PyStep::keywords();
        ok(&py, "a=1, a=2)", r#"{"a":1}"#);
        ok(&py, "a=1, a=[2, {'a': 3}], b='x')", r#"{"a":1,"b":"x"}"#);
        ok(&py, "a='x', b=2, a='y, z')", r#"{"a":"x","b":2}"#);
        // Keys inside a nested dictionary are the value's own.
        ok(&py, "a={'k': 1}, b=2)", r#"{"a":{"k":1},"b":2}"#);
        let gemma = PyStep::bare_keys("<|\"|>");
        ok(
            &gemma,
            "a:1,a:<|\"|>two<|\"|>,b:{c:1,c:2}}",
            r#"{"a":1,"b":{"c":1,"c":2}}"#,
        );
    }

    #[test]
    fn depth_limit_trips_at_the_opening_bracket() {
        let py = PyStep::keywords();
        check(&py, 3, "a=[[1]])", r#"{"a":[[1]]}"#, End::Done(8));
        check(
            &py,
            3,
            "a=[[[1]]])",
            r#"{"a":[["#,
            End::Fail(4, Reason::TooDeep { limit: 3 }),
        );
        check(&py, 1, "a=1)", r#"{"a":1}"#, End::Done(4));
        check(
            &py,
            1,
            "a={})",
            r#"{"a":"#,
            End::Fail(2, Reason::TooDeep { limit: 1 }),
        );
    }

    /// The reader through the readers' shared status, against a table of
    /// states (fresh; inside a string; after a key; inside a list) ×
    /// inputs (what completes the arguments, what continues them, a byte
    /// that fails them); the JSON written so far.
    #[test]
    fn feed_by_state_and_input() {
        let py = PyStep::keywords();
        let table: &[(&str, &str, &str, Progress, &str)] = &[
            (
                "fresh, whole",
                "",
                "a=1)",
                Progress::Done(4, ()),
                r#"{"a":1}"#,
            ),
            (
                "fresh, more after",
                "",
                "a=1) x",
                Progress::Done(4, ()),
                r#"{"a":1}"#,
            ),
            ("fresh, none", "", ")", Progress::Done(1, ()), "{}"),
            (
                "fresh, a positional",
                "",
                "1)",
                Progress::Fail(0, Reason::PositionalArg),
                "{",
            ),
            (
                "in a string, ends",
                "a='x",
                "y')",
                Progress::Done(3, ()),
                r#"{"a":"xy"}"#,
            ),
            (
                "in a string, goes on",
                "a='x",
                "y z",
                Progress::Partial(3),
                r#"{"a":"xy z"#,
            ),
            (
                "after a key, value",
                "a",
                "=None)",
                Progress::Done(6, ()),
                r#"{"a":null}"#,
            ),
            (
                "in a list, next",
                "a=[1",
                ", 2])",
                Progress::Done(5, ()),
                r#"{"a":[1,2]}"#,
            ),
            (
                "in a list, the wrong bracket",
                "a=[1",
                "}",
                Progress::Fail(0, Reason::ExpectedCommaOrClose { found: b'}' }),
                r#"{"a":[1"#,
            ),
        ];
        for &(what, before, input, want, json) in table {
            let mut out = Vec::new();
            let mut r = PyReader::new(&mut out);
            let mut read = 0;
            while read < before.len() {
                match r.feed(&py, 8, &before.as_bytes()[read..], &mut out) {
                    Progress::Partial(n) => read += n,
                    other => panic!("{what}: the state: {other:?}"),
                }
            }
            let mut got = r.feed(&py, 8, input.as_bytes(), &mut out);
            // (A key that shows the call stops the reader at it: on.)
            while let Progress::Partial(n) = got {
                if n >= input.len() {
                    break;
                }
                let mut rest = r.feed(&py, 8, &input.as_bytes()[n..], &mut out);
                rest = match rest {
                    Progress::Partial(k) => Progress::Partial(n + k),
                    Progress::Done(k, ()) => Progress::Done(n + k, ()),
                    Progress::Fail(k, why) => Progress::Fail(n + k, why),
                };
                if rest == got {
                    break;
                }
                got = rest;
            }
            assert_eq!(got, want, "{what}");
            assert_eq!(String::from_utf8_lossy(&out), json, "{what}: the JSON");
        }
    }

    #[test]
    fn shown_once_a_key_or_the_end_is_read() {
        let py = PyStep::keywords();
        let mut out = Vec::new();
        let mut r = PyReader::new(&mut out);
        assert_eq!(r.feed(&py, 8, b"cit", &mut out), Progress::Partial(3));
        assert!(!r.shown());
        assert_eq!(r.feed(&py, 8, b"y=", &mut out), Progress::Partial(2));
        assert!(r.shown());
        // It stops at the byte that shows the call, then reads on.
        let mut out = Vec::new();
        let mut r = PyReader::new(&mut out);
        assert_eq!(r.feed(&py, 8, b"city='x", &mut out), Progress::Partial(5));
        assert!(r.shown());
        assert_eq!(r.feed(&py, 8, b"'x", &mut out), Progress::Partial(2));
        let mut out = Vec::new();
        let mut r = PyReader::new(&mut out);
        assert_eq!(r.feed(&py, 8, b" )x", &mut out), Progress::Done(2, ()));
        assert!(r.shown());
    }

    #[test]
    fn numbers() {
        let n = |s: &str| {
            let mut out = Vec::new();
            push_number(s.as_bytes(), &mut out).map(|()| String::from_utf8(out).unwrap())
        };
        assert_eq!(n("007.50"), Ok("7.50".into()));
        assert_eq!(n("0b101"), Ok("5".into()));
        assert_eq!(n("-0x0"), Ok("0".into()));
        assert_eq!(n("1_000.000_1"), Ok("1000.0001".into()));
        assert!(n(".").is_err());
        assert!(n("1.2.3").is_err());
        assert!(n("0x").is_err());
        assert!(n("inf").is_err());
        assert!(n("1e5x").is_err());
        assert!(n("0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF").is_err());
    }
}

#[cfg(test)]
mod literal_tests {
    use super::*;

    /// Reads `input` as one literal, whole and cut at every byte; the JSON,
    /// or the failure.
    fn lit(input: &str) -> Result<String, Reason> {
        let step = PyStep::keywords().json_literals();
        let read = |cut: usize| {
            let mut out = Vec::new();
            let mut r = PyReader::literal();
            let (a, b) = input.as_bytes().split_at(cut);
            for part in [a, b] {
                if let Progress::Fail(_, why) = r.feed(&step, 127, part, &mut out) {
                    return Err(why);
                }
            }
            r.finish(&step, &mut out)?;
            Ok(String::from_utf8(out).expect("UTF-8"))
        };
        let whole = read(input.len());
        for cut in 0..input.len() {
            if input.is_char_boundary(cut) {
                assert_eq!(read(cut), whole, "cut at {cut}: {input}");
            }
        }
        whole
    }

    #[test]
    fn one_literal() {
        let ok = |input: &str, json: &str| assert_eq!(lit(input), Ok(json.to_owned()), "{input}");
        ok("1", "1");
        ok(" -2.5e3 ", "-2.5e3");
        ok("0x1F", "31");
        ok("1_000", "1000");
        ok("1_000.000_1e1_0", "1000.0001e10");
        ok("0x_1F", "31");
        ok("-0b1_0", "-2");
        ok("00", "0");
        ok("07.5", "7.5");
        ok("'x'", "\"x\"");
        ok("''", "\"\"");
        ok("r'\\d'", "\"\\\\d\"");
        ok("True", "true");
        ok("null", "null");
        ok("(1, (2,), [])", "[1,[2],[]]");
        ok(
            "{1: 'a', None: 'b', True: +2}",
            r#"{"1":"a","null":"b","true":2}"#,
        );
        ok("{'a': {'b': ()}}", r#"{"a":{"b":[]}}"#);
        // The arguments' repeated-key rule does not apply to a dict.
        ok("{'a': 1, 'a': 2}", r#"{"a":1,"a":2}"#);
        let bad = |input: &str| assert!(lit(input).is_err(), "{input}");
        bad("");
        bad("07");
        bad("-0_7");
        bad("1_");
        bad("1__0");
        bad("1_.5");
        bad("1._5");
        bad("1e_5");
        bad("+_0");
        bad("0x1F_");
        bad("[1, 007]");
        bad("{07: 1}");
        bad("(1)");
        bad("1, 2");
        bad("[1] [2]");
        bad("{1, 2}");
        bad("'open");
        bad("[1,");
        bad("x");
        bad("{x: 1}");
        bad("'\\N{DASH}'");
    }

    #[test]
    fn literal_depth_is_bounded() {
        let step = PyStep::keywords();
        let deep = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        let mut out = Vec::new();
        let mut r = PyReader::literal();
        assert!(matches!(
            r.feed(&step, 3, deep(3).as_bytes(), &mut out),
            Progress::Partial(6)
        ));
        assert_eq!(r.finish(&step, &mut out), Ok(()));
        let mut r = PyReader::literal();
        assert!(matches!(
            r.feed(&step, 3, deep(4).as_bytes(), &mut Vec::new()),
            Progress::Fail(3, Reason::TooDeep { limit: 3 })
        ));
    }
}
