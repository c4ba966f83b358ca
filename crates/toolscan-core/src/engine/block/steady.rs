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
//! bytes of deltas) fewer than they should. A raw value whose trailing
//! newline may be markup (Qwen3-Coder's template writes one before the
//! closing tag) holds a chunk's last newline back, as the reader does: it
//! is in the pending buffer, not handed on, and goes out with the next
//! chunk.

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
/// direct path takes chunks of up to 64 bytes), after a held newline.
const TOKEN_ROOM: usize = 2 + 6 * 64;

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
    /// The last byte held is a newline that may be markup, not handed on
    /// yet ([`Kind::Value`] with [`Trim::Newline`] only).
    newline: bool,
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
    /// run (`newline`); any other ([`Trim::All`]) ends it.
    trim: Trim,
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
            newline: false,
            text: 0,
            stops: [0; 4],
            escapes: [0; 4],
            seconds: [0; 4],
            entities: false,
            trim: Trim::None,
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
    }

    /// A run begins: the fields every kind has (the others are the
    /// caller's to set).
    fn begin(&mut self, kind: Kind, index: usize, limit: usize) {
        debug_assert!(!self.is_on(), "a run begins only after the last ended");
        self.kind = Some(kind);
        self.index = index;
        self.limit = limit;
        self.raw = 0;
        self.newline = false;
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
            Some(Kind::Value) if !self.newline && is_plain(&self.escapes, self.trim, bytes) => {
                (text, bytes.len())
            }
            Some(Kind::Value) => match value_delta(
                &Watch {
                    stops: &self.stops,
                    seconds: &self.seconds,
                    entities: self.entities,
                    trim: self.trim,
                },
                &mut self.newline,
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
        self.newline = false;
        let (raw, text) = (
            std::mem::take(&mut self.raw),
            std::mem::take(&mut self.text),
        );
        Some(match kind {
            Kind::Span => Lag::Span { raw },
            Kind::Value => Lag::Value { raw, text },
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
    /// segment's), and `text` more bytes of deltas sent.
    Value { raw: usize, text: usize },
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
}

/// The delta of `text`, a chunk of a raw value, and how many of its bytes
/// (and of the newline held before it) it hands on — when it is not
/// [`is_plain`]: it escapes bytes, or ends in a newline that is held back,
/// or follows one, or has a byte that may begin markup but is followed by
/// one that no markup has second. `None`: the run ends here (a byte that
/// may begin markup, trailing whitespace that may be markup other than one
/// newline).
#[cold]
#[inline(never)]
fn value_delta<'s>(
    watch: &Watch<'_>,
    newline: &mut bool,
    scratch: &'s mut Vec<u8>,
    text: &'s str,
) -> Option<(&'s str, usize)> {
    let (stops, trim) = (watch.stops, watch.trim);
    let bytes = text.as_bytes();
    let &last = bytes.last()?;
    // Only one newline is held back within the run.
    let tail = trailing_markup(trim, bytes);
    if tail > usize::from(trim == Trim::Newline) || (tail == 1 && has(stops, last)) {
        return None;
    }
    let body = &bytes[..bytes.len() - tail];
    // Room for the held newline and every byte escaped in six.
    let room = 2 + 6 * body.len();
    if scratch.len() < room {
        scratch.resize(room.max(TOKEN_ROOM), 0);
    }
    let mut o = if *newline {
        // The newline held goes first.
        scratch.get_mut(..2)?.copy_from_slice(b"\\n");
        2
    } else {
        0
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
    let end = o;
    let handed = usize::from(*newline) + body.len();
    // Escapes are ASCII and every other byte is copied: whole characters
    // stay whole, so this is text (not checked again when short and ASCII).
    let delta = crate::scan::utf8::as_text(scratch.get(..end)?)?;
    *newline = tail == 1;
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
        // A value ended by `</v>` or `<w>`, entities decoded.
        let (mut stops, mut seconds) = ([0; 4], [0; 4]);
        for b in [b'<', b'&'] {
            add(&mut stops, b);
        }
        for b in [b'/', b'w'] {
            add(&mut seconds, b);
        }
        let escapes = std::array::from_fn(|k| stops[k] | ESCAPED[k]);
        // (chunk, newline held before, trim, delta and bytes handed on,
        // newline held after)
        type Row = (
            &'static str,
            bool,
            Trim,
            Option<(&'static str, usize)>,
            bool,
        );
        let table: [Row; 14] = [
            ("ab", false, Trim::Newline, Some(("ab", 2)), false),
            ("a\"b", false, Trim::Newline, Some(("a\\\"b", 3)), false),
            ("ab\n", false, Trim::Newline, Some(("ab", 2)), true),
            ("ab", true, Trim::Newline, Some(("\\nab", 3)), false),
            ("\n", true, Trim::Newline, Some(("\\n", 1)), true),
            ("\n", false, Trim::Newline, Some(("", 0)), true),
            ("ab\n", false, Trim::None, Some(("ab\\n", 3)), false),
            ("ab ", false, Trim::All, None, false),
            ("a<b", false, Trim::None, Some(("a<b", 3)), false),
            ("a</", false, Trim::None, None, false),
            ("a<w", false, Trim::None, None, false),
            ("a <", false, Trim::None, None, false),
            ("a&b", false, Trim::None, None, false),
            ("<\n", false, Trim::Newline, Some(("<", 1)), true),
        ];
        for (chunk, before, trim, want, after) in table {
            let plain = !before && is_plain(&escapes, trim, chunk.as_bytes());
            let (mut newline, mut scratch) = (before, Vec::new());
            let got = if plain {
                Some((chunk, chunk.len()))
            } else {
                let watch = Watch {
                    stops: &stops,
                    seconds: &seconds,
                    entities: true,
                    trim,
                };
                value_delta(&watch, &mut newline, &mut scratch, chunk)
            };
            assert_eq!(got, want, "{chunk:?} after a newline: {before}");
            if want.is_some() {
                assert_eq!(newline, after, "{chunk:?}: newline held after");
            }
        }
    }
}
