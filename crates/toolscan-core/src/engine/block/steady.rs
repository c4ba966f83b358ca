//! A steady run: the chunks of a long argument taken with no look at the
//! block.
//!
//! Once the direct path (`block::direct`) has read a chunk whole inside a
//! JSON string or a raw string value, and every byte before it went out,
//! the block is in a state that the next such chunk leaves unchanged but
//! for a handful of counters: the pending buffer holds the chunk, the
//! arguments (a span of the input, or a raw value's segment) grow by it,
//! the reader's and the call's counts of what was handed on and sent grow
//! with them, and the chunk (escaped, for a raw value) is the delta. A
//! [`Steady`] is that state remembered: it checks a chunk's bytes against
//! a table of what each byte is to the run (markup, a string's end or
//! escape, a byte a JSON string escapes) and its length against the
//! limit, holds the chunk and sends the delta, and counts what the
//! block's counters lag behind. [`Steady::end`] ends the run and says by
//! how much ([`Lag`]); the block adds that to its counters before anything
//! else reads it (`Block::parts`).
//!
//! Invariant: while a run is on, the block's state is the one the direct
//! path would have left after the same chunks, except that the step's
//! reader and the call count `raw` bytes handed on (and the call `text`
//! bytes of deltas) fewer than they should. A run may hold a chunk's last
//! byte back, as the reader does: it is in the pending buffer, not handed
//! on, and goes out with the next chunk if that allows. In a JSON string
//! it is a backslash, whose escape the next byte makes (the scanner holds
//! it: [`Lag::Span`] says so). In a raw value it is a newline that may be
//! markup (Qwen3-Coder's template writes one before the closing tag), or
//! a byte that may begin the end markup (the `<` of `if (a <` where the
//! chunk ends), which the reader's matcher holds as markup half met:
//! [`Lag::Value`] says so.

use crate::engine::pending::Pending;
use crate::event::EventRef;
use crate::lang::format::Trim;
use crate::read::escape::{write_json_str_byte, ESCAPED};
use crate::read::json::is_two_byte_escape;
use crate::read::value::{trailing_markup, RunBytes};
use crate::sink::Sink;

/// A 256-bit set of bytes.
type ByteSet = [u64; 4];

fn has(set: &ByteSet, b: u8) -> bool {
    set[usize::from(b >> 6)] >> (b & 63) & 1 != 0
}

/// What each byte is to a run: a mask of [`ESC`], [`STOP`] and [`TRAIL`].
/// One load a byte tells a plain chunk from one that needs a look.
type Classes = [u8; 256];

/// A JSON string escapes the byte.
const ESC: u8 = 1;
/// The byte may change what the reader does (markup may begin there, an
/// entity, a string's end or escape): the run looks at what follows it.
const STOP: u8 = 2;
/// Last in a chunk of a raw value, the byte is whitespace that may be
/// markup (the value trims it).
const TRAIL: u8 = 4;

/// The classes of a run of JSON string content: every byte a JSON string
/// escapes stops it (a backslash is looked at with the byte after it).
const SPAN: Classes = {
    let mut c = [0; 256];
    let mut b = 0;
    while b < 256 {
        if ESCAPED[b / 64] >> (b % 64) & 1 != 0 {
            c[b] = STOP;
        }
        b += 1;
    }
    c
};

/// The classes of a run of a raw value that `watch` describes.
fn value_classes(watch: &RunBytes) -> Classes {
    std::array::from_fn(|b| {
        let b = b as u8;
        let esc = if has(&ESCAPED, b) { ESC } else { 0 };
        let stop = has(&watch.starts, b) || (watch.entities && b == b'&');
        let trail = trailing_markup(watch.trim, &[b]) == 1;
        esc | if stop { STOP } else { 0 } | if trail { TRAIL } else { 0 }
    })
}

/// Room for a token-sized chunk of a raw value escaped (the parser's
/// direct path takes chunks of up to 64 bytes), after a held byte, and
/// the eight bytes the last store writes.
const TOKEN_ROOM: usize = 6 + 6 * 64 + 8;

/// The last byte of the chunk a raw value's run took, held back (in the
/// pending buffer, not handed on) until the next chunk decides it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Held {
    Nothing,
    /// A newline that may be markup ([`Trim::Newline`]).
    Newline,
    /// A byte that may begin the end markup, after bytes with no trailing
    /// whitespace that may be markup.
    Start(u8),
}

/// What the run's chunks grow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// The content of a JSON string in arguments that are a span of the
    /// input: the chunk is the delta as it stands.
    Span,
    /// A raw string value, a segment of the input: the chunk escaped is
    /// the delta.
    Value,
}

/// The run a block is in, if any (see the module's documentation).
#[derive(Debug)]
pub(crate) struct Steady {
    /// What the run grows; `None`: no run is on, and the fields below
    /// mean nothing (`raw` and `text` are 0).
    kind: Option<Kind>,
    /// The index of the call whose deltas the chunks are.
    index: usize,
    /// The most bytes the block may hold (the limit in force for it).
    limit: usize,
    /// Bytes handed on since the run began that the step's reader and the
    /// call have not counted yet.
    raw: usize,
    /// For [`Kind::Value`]: the last byte taken, if it is held back.
    held: Held,
    /// For [`Kind::Span`]: the last byte taken is a backslash, held back:
    /// the byte after it, which comes with the next chunk, makes the
    /// escape.
    backslash: bool,
    /// Bytes of deltas sent since the run began that the call has not
    /// counted yet.
    text: usize,
    /// For [`Kind::Value`]: what each byte is to the run. A byte of
    /// [`STOP`] ends it, unless followed in the chunk by one not in
    /// `seconds` (but `&` where `entities`), or last and held back
    /// (`holds`). ([`Kind::Span`] has [`SPAN`].)
    classes: Classes,
    /// For [`Kind::Value`]: the bytes that may come second in its end
    /// markup.
    seconds: ByteSet,
    /// For [`Kind::Value`]: `&` begins an entity (and is a [`STOP`]).
    entities: bool,
    /// For [`Kind::Value`]: which of its trailing whitespace may be
    /// markup. One newline ([`Trim::Newline`]) is held back within the
    /// run (`held`); any other ([`Trim::All`]) ends it.
    trim: Trim,
    /// For [`Kind::Value`]: a [`STOP`] byte that ends a chunk may be
    /// held back (`held`); otherwise it ends the run.
    holds: bool,
    /// A raw value's delta, when it is not the chunk as it stands (kept
    /// from run to run).
    scratch: Vec<u8>,
}

impl Default for Steady {
    fn default() -> Steady {
        Steady {
            kind: None,
            index: 0,
            limit: 0,
            raw: 0,
            held: Held::Nothing,
            backslash: false,
            text: 0,
            classes: [0; 256],
            seconds: [0; 4],
            entities: false,
            trim: Trim::None,
            holds: false,
            scratch: Vec::new(),
        }
    }
}

impl Steady {
    /// Whether a run is on.
    #[inline]
    pub(crate) fn is_on(&self) -> bool {
        self.kind.is_some()
    }

    /// A run of JSON string content begins (the chunk just read was one),
    /// for call `index` under `limit`.
    pub(crate) fn begin_span(&mut self, index: usize, limit: usize) {
        self.begin(Kind::Span, index, limit);
    }

    /// A run of a raw string value begins (the chunk just read was one),
    /// for call `index` under `limit`, watching for what `watch` says.
    pub(crate) fn begin_value(&mut self, index: usize, limit: usize, watch: RunBytes) {
        self.begin(Kind::Value, index, limit);
        self.classes = value_classes(&watch);
        self.seconds = watch.seconds;
        self.entities = watch.entities;
        self.trim = watch.trim;
        self.holds = watch.holds;
    }

    /// A run begins: the fields every kind has (the others are the
    /// caller's to set).
    fn begin(&mut self, kind: Kind, index: usize, limit: usize) {
        debug_assert!(!self.is_on(), "a run begins only after the last ended");
        self.kind = Some(kind);
        self.index = index;
        self.limit = limit;
        self.raw = 0;
        self.held = Held::Nothing;
        self.backslash = false;
        self.text = 0;
    }

    /// Takes `text`, the next chunk, if the run reads it whole: holds it in
    /// `pending` and sends its delta. `false`: nothing changed, and the
    /// block must be settled before it reads the chunk the general way.
    #[inline]
    pub(crate) fn take(&mut self, text: &str, pending: &mut Pending, out: &mut dyn Sink) -> bool {
        let bytes = text.as_bytes();
        if pending.held() + bytes.len() > self.limit {
            return false;
        }
        let (delta, handed) = match self.kind {
            Some(Kind::Value) if self.held == Held::Nothing && is_plain(&self.classes, bytes) => {
                (text, bytes.len())
            }
            Some(Kind::Value) => match value_delta(
                &Watch {
                    classes: &self.classes,
                    seconds: &self.seconds,
                    entities: self.entities,
                    trim: self.trim,
                    holds: self.holds,
                },
                &mut self.held,
                &mut self.scratch,
                text,
            ) {
                Some(d) => d,
                None => return false,
            },
            Some(Kind::Span) => match span_delta(&mut self.backslash, &mut self.scratch, text) {
                Some(d) => d,
                None => return false,
            },
            None => return false,
        };
        if !delta.is_empty() {
            out.event(EventRef::ToolCallArgs {
                index: self.index,
                delta,
            });
        }
        self.text += delta.len();
        self.raw += handed;
        pending.take_text(text);
        true
    }

    /// Ends the run: what the block's counters lag behind, which the block
    /// adds to them (`Block::parts`). `None` if no run was on.
    pub(crate) fn end(&mut self) -> Option<Lag> {
        let kind = self.kind.take()?;
        let start = match std::mem::replace(&mut self.held, Held::Nothing) {
            Held::Start(b) => Some(b),
            Held::Nothing | Held::Newline => None,
        };
        let escape = std::mem::take(&mut self.backslash);
        let (raw, text) = (
            std::mem::take(&mut self.raw),
            std::mem::take(&mut self.text),
        );
        Some(match kind {
            Kind::Span => Lag::Span { raw, escape },
            Kind::Value => Lag::Value { raw, text, start },
        })
    }
}

/// What a run left the block's counters behind by (see [`Steady::end`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Lag {
    /// `raw` more bytes of arguments that are a span of the input, held
    /// and sent; `escape`: a backslash after them is held, not handed on,
    /// and the JSON scanner reads the next byte as its escape's second.
    Span { raw: usize, escape: bool },
    /// `raw` more bytes of a raw value handed on (its reader's and its
    /// segment's), and `text` more bytes of deltas sent; `start`: the
    /// last byte held is one that may begin the end markup, which the
    /// reader's matcher holds (a held newline needs nothing: the reader
    /// finds it again at the end of what it has not handed on).
    Value {
        raw: usize,
        text: usize,
        start: Option<u8>,
    },
}

/// The delta of `text`, a chunk of JSON string content in arguments that
/// are a span of the input, and how many of its bytes (and of a backslash
/// held before it) it hands on: the chunk as it stands when nothing is
/// held before it and it does not end in a backslash. A backslash is
/// taken with the byte after it when that makes a two-byte escape (the
/// scanner passes both on, as they stand); one that ends the chunk is
/// held back. `None`: the run ends here and nothing changed (the string
/// ends, a control byte, a `\u` escape).
#[inline]
fn span_delta<'s>(
    backslash: &mut bool,
    scratch: &'s mut Vec<u8>,
    text: &'s str,
) -> Option<(&'s str, usize)> {
    let bytes = text.as_bytes();
    let two_byte = |b: Option<&u8>| b.is_some_and(|&b| is_two_byte_escape(b));
    let after_backslash = *backslash;
    if after_backslash && !two_byte(bytes.first()) {
        return None;
    }
    let mut i = usize::from(after_backslash);
    let mut end = bytes.len();
    while let Some(&b) = bytes.get(i) {
        if SPAN[usize::from(b)] & STOP != 0 {
            if b != b'\\' {
                return None;
            }
            if i + 1 == bytes.len() {
                end = i;
                break;
            }
            if !two_byte(bytes.get(i + 1)) {
                return None;
            }
            i += 1;
        }
        i += 1;
    }
    // (`end` is at the chunk's end or at its last byte, a backslash.)
    let taken = text.get(..end)?;
    let delta = if after_backslash {
        scratch.clear();
        scratch.push(b'\\');
        scratch.extend_from_slice(taken.as_bytes());
        crate::scan::utf8::as_text(scratch)?
    } else {
        taken
    };
    *backslash = end < bytes.len();
    Some((delta, usize::from(after_backslash) + end))
}

/// Whether `bytes`, a chunk of a raw value, is its own delta: no byte
/// stops the run or is escaped, and the last is no whitespace that may be
/// markup. One load a byte.
#[inline]
fn is_plain(classes: &Classes, bytes: &[u8]) -> bool {
    let Some(&last) = bytes.last() else {
        return false;
    };
    let any = bytes
        .iter()
        .fold(0, |any, &b| any | classes[usize::from(b)]);
    (any & (ESC | STOP)) | (classes[usize::from(last)] & TRAIL) == 0
}

/// What [`value_delta`] watches for (see the fields of [`Steady`]).
struct Watch<'a> {
    classes: &'a Classes,
    seconds: &'a ByteSet,
    entities: bool,
    trim: Trim,
    holds: bool,
}

/// The delta of `text`, a chunk of a raw value, and how many of its bytes
/// (and of the byte held before it) it hands on — when it is not
/// [`is_plain`]: it escapes bytes, or follows a held byte, or ends in one
/// it holds back (a newline that may be markup; a byte that may begin
/// markup, after bytes with no trailing whitespace that may be markup), or
/// has a byte that may begin markup but is followed by one that no markup
/// has second. `None`: the run ends here and nothing changed (markup may
/// begin, an entity does, or trailing whitespace that may be markup is
/// more than one newline or comes before a byte held).
#[inline]
fn value_delta<'s>(
    watch: &Watch<'_>,
    held: &mut Held,
    scratch: &'s mut Vec<u8>,
    text: &'s str,
) -> Option<(&'s str, usize)> {
    let classes = watch.classes;
    let class = |b: u8| classes[usize::from(b)];
    let bytes = text.as_bytes();
    let (&first, &last) = (bytes.first()?, bytes.last()?);
    if matches!(*held, Held::Start(_)) && has(watch.seconds, first) {
        // The markup the held byte may begin goes on.
        return None;
    }
    // Only one newline is held back within the run.
    let tail = class(last) & TRAIL != 0;
    if tail && (watch.trim != Trim::Newline || class(last) & STOP != 0) {
        return None;
    }
    let start =
        !tail && watch.holds && class(last) & STOP != 0 && !(watch.entities && last == b'&');
    let body = &bytes[..bytes.len() - usize::from(tail) - usize::from(start)];
    let body_tail = body.last().is_some_and(|&b| class(b) & TRAIL != 0);
    if start && (body_tail || (body.is_empty() && *held == Held::Newline)) {
        // The reader would hold that whitespace back with the byte.
        return None;
    }
    // Room for the held byte and every byte escaped in six, and the
    // eight bytes the last store writes.
    let room = 6 + 6 * body.len() + 8;
    if scratch.len() < room {
        scratch.resize(room.max(TOKEN_ROOM), 0);
    }
    // The byte held goes first: what follows shows it is value.
    let mut o = match *held {
        Held::Nothing => 0,
        Held::Newline => write_json_str_byte(b'\n', scratch, 0)?,
        Held::Start(b) => write_json_str_byte(b, scratch, 0)?,
    };
    for (i, &b) in body.iter().enumerate() {
        if class(b) & STOP != 0 {
            // It begins no markup if the next byte, in this chunk, is
            // one no markup has second (the `<` of `a < b`).
            let next = bytes.get(i + 1);
            let entity = watch.entities && b == b'&';
            if entity || next.is_none_or(|&n| has(watch.seconds, n)) {
                return None;
            }
        }
        o = write_json_str_byte(b, scratch, o)?;
    }
    let handed = usize::from(*held != Held::Nothing) + body.len();
    // Escapes are ASCII and every other byte is copied: whole characters
    // stay whole, so this is text (not checked again when short and ASCII).
    let delta = crate::scan::utf8::as_text(scratch.get(..o)?)?;
    *held = match (start, tail) {
        (true, _) => Held::Start(last),
        (false, true) => Held::Newline,
        (false, false) => Held::Nothing,
    };
    Some((delta, handed))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn add(set: &mut ByteSet, b: u8) {
        set[usize::from(b >> 6)] |= 1 << (b & 63);
    }

    #[test]
    fn the_json_escaped_set_is_what_the_escaper_escapes() {
        for b in 0..=u8::MAX {
            let mut out = [0; 8];
            let n = write_json_str_byte(b, &mut out, 0).expect("room");
            assert_eq!(has(&ESCAPED, b), out[..n] != [b], "byte {b:#04x}");
            assert_eq!(SPAN[usize::from(b)] == STOP, out[..n] != [b], "{b:#04x}");
        }
    }

    #[test]
    fn a_chunk_of_json_string_content_by_what_it_holds() {
        let (bs, no) = (true, false);
        // (chunk, backslash held before, delta and bytes handed on,
        // backslash held after)
        type Row = (&'static str, bool, Option<(&'static str, usize)>, bool);
        let table: [Row; 14] = [
            ("ab", no, Some(("ab", 2)), no),
            ("a\\nb", no, Some(("a\\nb", 4)), no),
            ("é\\\"", no, Some(("é\\\"", 4)), no),
            // A backslash last: held back.
            ("ab\\", no, Some(("ab", 2)), bs),
            ("\\", no, Some(("", 0)), bs),
            ("a\\\\\\", no, Some(("a\\\\", 3)), bs),
            // ... and the next byte makes its escape.
            ("n", bs, Some(("\\n", 2)), no),
            ("\"ab", bs, Some(("\\\"ab", 4)), no),
            ("\\", bs, Some(("\\\\", 2)), no),
            ("/\\", bs, Some(("\\/", 2)), bs),
            // The run ends: a `\u` escape, the string's end, a control
            // byte.
            ("u00e9", bs, None, bs),
            ("a\\u", no, None, no),
            ("a\"", no, None, no),
            ("a\u{1}", no, None, no),
        ];
        for (chunk, before, want, after) in table {
            let (mut held, mut scratch) = (before, Vec::new());
            let got = span_delta(&mut held, &mut scratch, chunk);
            assert_eq!(got, want, "{chunk:?} after {before:?}");
            assert_eq!(held, after, "{chunk:?} after {before:?}: held after");
        }
    }

    #[test]
    fn a_chunk_of_a_raw_value_by_what_it_holds() {
        use Held::{Newline as Nl, Nothing as No, Start as St};
        // A value ended by `</v>` or `<w>`, entities decoded.
        let (mut starts, mut seconds) = ([0; 4], [0; 4]);
        add(&mut starts, b'<');
        for b in [b'/', b'w'] {
            add(&mut seconds, b);
        }
        let watch = |trim, holds| RunBytes {
            starts,
            seconds,
            entities: true,
            trim,
            holds,
        };
        // (chunk, byte held before, trim, delta and bytes handed on, byte
        // held after)
        type Row = (
            &'static str,
            Held,
            Trim,
            Option<(&'static str, usize)>,
            Held,
        );
        let table: [Row; 27] = [
            ("ab", No, Trim::Newline, Some(("ab", 2)), No),
            ("a\"b", No, Trim::Newline, Some(("a\\\"b", 3)), No),
            ("ab\n", No, Trim::Newline, Some(("ab", 2)), Nl),
            ("ab", Nl, Trim::Newline, Some(("\\nab", 3)), No),
            ("\n", Nl, Trim::Newline, Some(("\\n", 1)), Nl),
            ("\n", No, Trim::Newline, Some(("", 0)), Nl),
            ("ab\n", No, Trim::None, Some(("ab\\n", 3)), No),
            ("ab ", No, Trim::All, None, No),
            ("a b", No, Trim::All, Some(("a b", 3)), No),
            ("ab ", No, Trim::None, Some(("ab ", 3)), No),
            ("a<b", No, Trim::None, Some(("a<b", 3)), No),
            ("a</", No, Trim::None, None, No),
            ("a<w", No, Trim::None, None, No),
            ("a&b", No, Trim::None, None, No),
            ("<\n", No, Trim::Newline, Some(("<", 1)), Nl),
            // A byte that may begin markup, last: held back.
            ("a <", No, Trim::None, Some(("a ", 2)), St(b'<')),
            ("\"<", No, Trim::None, Some(("\\\"", 1)), St(b'<')),
            ("<", No, Trim::Newline, Some(("", 0)), St(b'<')),
            ("a<<", No, Trim::None, Some(("a<", 2)), St(b'<')),
            // ... and what comes next decides it.
            (" b", St(b'<'), Trim::None, Some(("< b", 3)), No),
            ("<", St(b'<'), Trim::None, Some(("<", 1)), St(b'<')),
            ("/v", St(b'<'), Trim::None, None, St(b'<')),
            ("w", St(b'<'), Trim::None, None, St(b'<')),
            // Whitespace that may be markup before it: the reader holds
            // both, the run cannot.
            ("a\n<", No, Trim::Newline, None, No),
            ("<", Nl, Trim::Newline, None, Nl),
            ("a <", No, Trim::All, None, No),
            // `&` is an entity's: never held.
            ("a&", No, Trim::None, None, No),
        ];
        for (chunk, before, trim, want, after) in table {
            let classes = value_classes(&watch(trim, true));
            let plain = before == No && is_plain(&classes, chunk.as_bytes());
            let (mut held, mut scratch) = (before, Vec::new());
            let got = if plain {
                Some((chunk, chunk.len()))
            } else {
                let watch = Watch {
                    classes: &classes,
                    seconds: &seconds,
                    entities: true,
                    trim,
                    holds: true,
                };
                value_delta(&watch, &mut held, &mut scratch, chunk)
            };
            assert_eq!(got, want, "{chunk:?} after {before:?}");
            assert_eq!(held, after, "{chunk:?} after {before:?}: held after");
        }
        // Where one markup is a single byte, the byte ends the run.
        let classes = value_classes(&watch(Trim::None, false));
        let watch = Watch {
            classes: &classes,
            seconds: &seconds,
            entities: true,
            trim: Trim::None,
            holds: false,
        };
        let mut held = No;
        assert_eq!(value_delta(&watch, &mut held, &mut Vec::new(), "a <"), None);
    }
}
