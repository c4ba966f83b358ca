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
//! a set of the bytes that could change anything (markup, a string's end,
//! a limit), holds the chunk and sends the delta, and counts what the
//! block's counters lag behind. [`Steady::end`] ends the run and says by
//! how much ([`Lag`]); the block adds that to its counters before anything
//! else reads it (`Block::settle`).
//!
//! Invariant: while a run is on, the block's state is the one the direct
//! path would have left after the same chunks, except that the step's
//! reader and the call count `raw` bytes handed on (and the call `text`
//! bytes of deltas) fewer than they should. A raw value may hold a chunk's
//! last byte back, as the reader does: it is in the pending buffer, not
//! handed on, and goes out with the next chunk if that shows it is value.
//! It is a newline that may be markup (Qwen3-Coder's template writes one
//! before the closing tag), or a byte that may begin the end markup (the
//! `<` of `if (a <` where the chunk ends), which the reader's matcher
//! holds as markup half met: [`Lag::Value`] says so.

use crate::engine::pending::Pending;
use crate::event::EventRef;
use crate::lang::format::Trim;
use crate::read::escape::{write_json_str_byte, ESCAPED};
use crate::read::value::{trailing_markup, RunBytes};
use crate::sink::Sink;

/// A 256-bit set of bytes.
type ByteSet = [u64; 4];

fn has(set: &ByteSet, b: u8) -> bool {
    set[usize::from(b >> 6)] >> (b & 63) & 1 != 0
}

fn add(set: &mut ByteSet, b: u8) {
    set[usize::from(b >> 6)] |= 1 << (b & 63);
}

/// Room for a token-sized chunk of a raw value escaped (the parser's
/// direct path takes chunks of up to 64 bytes), after a held byte.
const TOKEN_ROOM: usize = 6 + 6 * 64;

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
    /// The last byte taken, if it is held back ([`Kind::Value`] only).
    held: Held,
    /// Bytes of deltas sent since the run began that the call has not
    /// counted yet.
    text: usize,
    /// Bytes that end the run: the general way reads a chunk holding one.
    /// For [`Kind::Span`], a backslash is taken with the byte after it
    /// when that makes a two-byte escape.
    stops: ByteSet,
    /// For [`Kind::Value`]: `stops` and the bytes a JSON string escapes.
    escapes: ByteSet,
    /// For [`Kind::Value`]: the bytes that may come second in its end
    /// markup; a byte of `stops` followed in the chunk by none of them
    /// begins no markup (but `&` where `entities`).
    seconds: ByteSet,
    /// For [`Kind::Value`]: `&` begins an entity (and is in `stops`).
    entities: bool,
    /// For [`Kind::Value`]: which of its trailing whitespace may be
    /// markup. One newline ([`Trim::Newline`]) is held back within the
    /// run (`held`); any other ([`Trim::All`]) ends it.
    trim: Trim,
    /// For [`Kind::Value`]: a byte of `stops` that ends a chunk may be
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
            text: 0,
            stops: [0; 4],
            escapes: [0; 4],
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
        self.stops = ESCAPED;
        self.escapes = ESCAPED;
    }

    /// A run of a raw string value begins (the chunk just read was one),
    /// for call `index` under `limit`, watching for what `watch` says.
    pub(crate) fn begin_value(&mut self, index: usize, limit: usize, watch: RunBytes) {
        self.begin(Kind::Value, index, limit);
        let mut stops = watch.starts;
        if watch.entities {
            add(&mut stops, b'&');
        }
        self.stops = stops;
        self.escapes = std::array::from_fn(|k| stops[k] | ESCAPED[k]);
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
            Some(Kind::Span) if self.is_span_run(bytes) => (text, bytes.len()),
            Some(Kind::Value)
                if self.held == Held::Nothing && is_plain(&self.escapes, self.trim, bytes) =>
            {
                (text, bytes.len())
            }
            Some(Kind::Value) => match value_delta(
                &Watch {
                    stops: &self.stops,
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
            _ => return false,
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

    /// Whether `bytes` are JSON string content that leaves the scanner
    /// where it was: no quote, no control byte, and each backslash with
    /// the byte of a two-byte escape after it.
    fn is_span_run(&self, bytes: &[u8]) -> bool {
        let mut i = 0;
        while let Some(&b) = bytes.get(i) {
            if has(&self.stops, b) {
                let pair = b == b'\\'
                    && matches!(
                        bytes.get(i + 1),
                        Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't')
                    );
                if !pair {
                    return false;
                }
                i += 1;
            }
            i += 1;
        }
        true
    }

    /// Ends the run: what the block's counters lag behind, which the block
    /// adds to them (`Block::settle`). `None` if no run was on.
    pub(crate) fn end(&mut self) -> Option<Lag> {
        let kind = self.kind.take()?;
        let start = match std::mem::replace(&mut self.held, Held::Nothing) {
            Held::Start(b) => Some(b),
            Held::Nothing | Held::Newline => None,
        };
        let (raw, text) = (
            std::mem::take(&mut self.raw),
            std::mem::take(&mut self.text),
        );
        Some(match kind {
            Kind::Span => Lag::Span { raw },
            Kind::Value => Lag::Value { raw, text, start },
        })
    }
}

/// What a run left the block's counters behind by (see [`Steady::end`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Lag {
    /// `raw` more bytes of arguments that are a span of the input, held
    /// and sent.
    Span { raw: usize },
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

/// Whether `bytes`, a chunk of a raw value, is its own delta: none of
/// `escapes` (the bytes that stop the run, and those a JSON string
/// escapes), and no trailing whitespace that may be markup. One look at
/// each byte.
#[inline]
fn is_plain(escapes: &ByteSet, trim: Trim, bytes: &[u8]) -> bool {
    !bytes.is_empty()
        && trailing_markup(trim, bytes) == 0
        && bytes
            .iter()
            .fold(0, |any, &b| any | u8::from(has(escapes, b)))
            == 0
}

/// What [`value_delta`] watches for (see the fields of [`Steady`]).
struct Watch<'a> {
    stops: &'a ByteSet,
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
#[cold]
#[inline(never)]
fn value_delta<'s>(
    watch: &Watch<'_>,
    held: &mut Held,
    scratch: &'s mut Vec<u8>,
    text: &'s str,
) -> Option<(&'s str, usize)> {
    let (stops, trim) = (watch.stops, watch.trim);
    let bytes = text.as_bytes();
    let (&first, &last) = (bytes.first()?, bytes.last()?);
    if matches!(*held, Held::Start(_)) && has(watch.seconds, first) {
        // The markup the held byte may begin goes on.
        return None;
    }
    // Only one newline is held back within the run.
    let tail = trailing_markup(trim, bytes);
    if tail > usize::from(trim == Trim::Newline) || (tail == 1 && has(stops, last)) {
        return None;
    }
    let start = tail == 0 && watch.holds && has(stops, last) && !(watch.entities && last == b'&');
    let body = &bytes[..bytes.len() - tail - usize::from(start)];
    if start && (trailing_markup(trim, body) > 0 || (body.is_empty() && *held == Held::Newline)) {
        // The reader would hold that whitespace back with the byte.
        return None;
    }
    // Room for the held byte and every byte escaped in six.
    let room = 6 + 6 * body.len();
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
        if has(stops, b) {
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
        (false, 1) => Held::Newline,
        _ => Held::Nothing,
    };
    Some((delta, handed))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_json_escaped_set_is_what_the_escaper_escapes() {
        for b in 0..=u8::MAX {
            let mut out = [0; 6];
            let n = write_json_str_byte(b, &mut out, 0).expect("room");
            assert_eq!(has(&ESCAPED, b), out[..n] != [b], "byte {b:#04x}");
        }
    }

    #[test]
    fn a_chunk_of_a_raw_value_by_what_it_holds() {
        use Held::{Newline as Nl, Nothing as No, Start as St};
        // A value ended by `</v>` or `<w>`, entities decoded.
        let (mut stops, mut seconds) = ([0; 4], [0; 4]);
        for b in [b'<', b'&'] {
            add(&mut stops, b);
        }
        for b in [b'/', b'w'] {
            add(&mut seconds, b);
        }
        let escapes = std::array::from_fn(|k| stops[k] | ESCAPED[k]);
        // (chunk, byte held before, trim, delta and bytes handed on, byte
        // held after)
        type Row = (
            &'static str,
            Held,
            Trim,
            Option<(&'static str, usize)>,
            Held,
        );
        let table: [Row; 25] = [
            ("ab", No, Trim::Newline, Some(("ab", 2)), No),
            ("a\"b", No, Trim::Newline, Some(("a\\\"b", 3)), No),
            ("ab\n", No, Trim::Newline, Some(("ab", 2)), Nl),
            ("ab", Nl, Trim::Newline, Some(("\\nab", 3)), No),
            ("\n", Nl, Trim::Newline, Some(("\\n", 1)), Nl),
            ("\n", No, Trim::Newline, Some(("", 0)), Nl),
            ("ab\n", No, Trim::None, Some(("ab\\n", 3)), No),
            ("ab ", No, Trim::All, None, No),
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
            let plain = before == No && is_plain(&escapes, trim, chunk.as_bytes());
            let (mut held, mut scratch) = (before, Vec::new());
            let got = if plain {
                Some((chunk, chunk.len()))
            } else {
                let watch = Watch {
                    stops: &stops,
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
        let watch = Watch {
            stops: &stops,
            seconds: &seconds,
            entities: false,
            trim: Trim::None,
            holds: false,
        };
        let mut held = No;
        assert_eq!(value_delta(&watch, &mut held, &mut Vec::new(), "a <"), None);
    }
}
