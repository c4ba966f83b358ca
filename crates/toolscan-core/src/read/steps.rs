//! The small resumable parsers a block's program is made of, one per kind
//! of step. Each `feed` looks at the bytes it is given (the next bytes of
//! the input) and says how far it got: it needs more, it is done (and
//! where the program goes on), or the block fails at a byte. Their state is
//! all they keep between chunks; the block runner (`block.rs`) takes the
//! bytes they consume into the pending buffer and acts on the outcome.

use crate::lang::format::Lit;
use crate::lang::program::{CaptureOp, ThenOpt};
use crate::offset::Offset;
use crate::read::reason::Reason;

/// How a reader's `feed` went: the one status every reader of a block's
/// step reports (the step parsers here, the value, Python and JSON
/// readers), as `httparse`'s `Status` with a failure. `T` is what a
/// reader found when it is done (which delimiter ended a word, which
/// literal matched, how a value ended).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Progress<T = ()> {
    /// Consumed this many bytes and needs more (all it was given, unless
    /// it stopped at a byte that decides something for its caller: the
    /// key that shows a Python call).
    Partial(usize),
    /// Consumed this many bytes and is complete, with what it found.
    Done(usize, T),
    /// Consumed this many bytes, then the byte after them does not fit.
    Fail(usize, Reason),
}

impl<T> Progress<T> {
    /// How many bytes the reader consumed.
    #[inline]
    pub(crate) fn read(&self) -> usize {
        match self {
            Progress::Partial(n) | Progress::Done(n, _) | Progress::Fail(n, _) => *n,
        }
    }
}

pub(crate) fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

/// Optional whitespace: done at the first other byte.
pub(crate) fn ws(input: &[u8]) -> Progress {
    match input.iter().position(|&b| !is_ws(b)) {
        Some(n) => Progress::Done(n, ()),
        None => Progress::Partial(input.len()),
    }
}

/// Optional spaces and tabs: done at the first other byte (a line break
/// included).
pub(crate) fn blank(input: &[u8]) -> Progress {
    match input.iter().position(|&b| b != b' ' && b != b'\t') {
        Some(n) => Progress::Done(n, ()),
        None => Progress::Partial(input.len()),
    }
}

/// A code fence's optional info word (` ```json `): done at the first byte
/// that cannot be in one.
pub(crate) fn word(input: &[u8]) -> Progress {
    let is_word = |c: &u8| c.is_ascii_alphanumeric() || b"_+.-".contains(c);
    match input.iter().position(|c| !is_word(c)) {
        Some(n) => Progress::Done(n, ()),
        None => Progress::Partial(input.len()),
    }
}

/// A literal, matched across chunks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct LitMatch {
    /// Bytes of the literal matched so far.
    pub at: usize,
}

impl LitMatch {
    /// `optional`: a first byte that does not match skips the literal.
    pub(crate) fn feed(&mut self, lit: &Lit, optional: bool, input: &[u8]) -> Progress {
        for (n, &b) in input.iter().enumerate() {
            if !lit.matches_at(self.at, b) {
                if self.at == 0 && optional {
                    return Progress::Done(n, ());
                }
                return Progress::Fail(n, Reason::ExpectedLit { found: b });
            }
            self.at += 1;
            if self.at == lit.bytes.len() {
                return Progress::Done(n + 1, ());
            }
        }
        Progress::Partial(input.len())
    }
}

/// A name-like word, ended by a delimiter literal (consumed) or a stop byte
/// (left for the next step). Whitespace around it is skipped; whitespace or
/// markup inside it fails the block.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct CaptureWord {
    /// The bytes read so far (a delimiter may be forming at its end).
    pub word: Vec<u8>,
    /// Whitespace followed the word: only a delimiter may come now.
    trailing: bool,
    /// Where the first byte that cannot be in a word is (it must be part
    /// of a delimiter being formed).
    foreign: Option<usize>,
}

/// How a captured word ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Captured {
    /// Ended before a stop byte; the program goes on with the next step.
    AtStop,
    /// Ended by delimiter `k` (consumed); the word is `word` minus it.
    ByDelim(usize),
}

impl CaptureWord {
    /// Reads bytes until the word ends; `max` bounds the name's length (the
    /// word may hold a delimiter besides).
    pub(crate) fn feed(&mut self, op: &CaptureOp, max: usize, input: &[u8]) -> Progress<Captured> {
        for (n, &b) in input.iter().enumerate() {
            if op.stop.contains(&b) {
                return Progress::Done(n, Captured::AtStop);
            }
            let delim_byte = op.delim_bytes[usize::from(b)];
            if self.word.is_empty() && is_ws(b) && !delim_byte {
                continue; // leading whitespace: consumed, not kept
            }
            if !crate::read::word::may_hold(op.field, b) && !is_ws(b) && !delim_byte {
                return Progress::Fail(n, Reason::NameByte { found: b });
            }
            if self.trailing && !is_ws(b) && !delim_byte {
                return Progress::Fail(n, Reason::NameSpace);
            }
            self.word.push(b);
            if let Some(k) = op
                .delims
                .iter()
                .position(|(d, _)| d.is_suffix_of(&self.word))
            {
                let len = op.delims[k].0.bytes.len();
                self.word.truncate(self.word.len() - len);
                return Progress::Done(n + 1, Captured::ByDelim(k));
            }
            if !crate::read::word::may_hold(op.field, b) && !is_ws(b) && self.foreign.is_none() {
                self.foreign = Some(self.word.len() - 1);
            }
            // Markup in the word is a delimiter being formed, or the word
            // fails here, at the first byte no delimiter can continue (so
            // the markup that follows is read again, not swallowed).
            if let Some(q) = self.foreign {
                if !op.delims.iter().any(|(d, _)| {
                    let len = self.word.len();
                    (len.saturating_sub(d.bytes.len() - 1)..=q.min(len))
                        .any(|s| is_proper_prefix(&self.word[s..], d))
                }) {
                    let found = self.word[q];
                    self.word.pop();
                    return Progress::Fail(n, Reason::NameByte { found });
                }
            }
            if is_ws(b) && self.word.iter().any(|&x| !is_ws(x)) {
                self.trailing = true;
            }
            if self.word.len() > max + 64 {
                return Progress::Fail(n + 1, Reason::NameTooLong { limit: max });
            }
        }
        Progress::Partial(input.len())
    }

    /// The word without surrounding whitespace.
    pub(crate) fn trimmed(&self) -> &[u8] {
        let w = &self.word;
        let start = w.iter().position(|&x| !is_ws(x)).unwrap_or(w.len());
        let end = w.iter().rposition(|&x| !is_ws(x)).map_or(start, |e| e + 1);
        &w[start..end]
    }
}

/// Whether `bytes` is a proper prefix of `lit`.
fn is_proper_prefix(bytes: &[u8], lit: &Lit) -> bool {
    bytes.len() < lit.bytes.len() && bytes.iter().enumerate().all(|(i, &b)| lit.matches_at(i, b))
}

/// The length of the longest suffix of `buf` that may begin one of the
/// literals (is a proper prefix of one).
pub(crate) fn literal_start<'a>(buf: &[u8], lits: impl Iterator<Item = &'a Lit> + Clone) -> usize {
    let longest = lits.clone().map(|l| l.bytes.len()).max().unwrap_or(1);
    let from = buf.len().saturating_sub(longest - 1);
    (from..buf.len())
        .find(|&s| lits.clone().any(|l| is_proper_prefix(&buf[s..], l)))
        .map_or(0, |s| buf.len() - s)
}

/// After a call: optional whitespace, then one of several literals — or
/// anything else, which ends the block. Also [`OneOf`](crate::lang::format::Step::OneOf)
/// (no whitespace; anything else fails) and the recovery seek (anything
/// else is text and the search goes on).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ThenMatch {
    /// Absolute offset where the step began: what came before belongs to
    /// the calls already made, what follows is handed back as text if no
    /// literal matches. A seek keeps it at the first byte it still holds.
    pub from: Offset,
    /// Bytes of the literals matched so far (after the whitespace).
    at: usize,
    /// Which literals still match.
    alive: Vec<bool>,
    /// Seek: the last bytes read, which may begin a literal.
    pub held: Vec<u8>,
}

/// How a [`ThenMatch`] ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ThenEnd {
    /// Literal `k` matched.
    Matched(usize),
    /// No literal can match: the block is over.
    Over,
}

impl ThenMatch {
    pub(crate) fn new(from: Offset, n: usize) -> ThenMatch {
        ThenMatch {
            from,
            at: 0,
            alive: vec![true; n],
            held: Vec::new(),
        }
    }

    /// Bytes of a literal matched so far (after the whitespace).
    pub(crate) fn matched(&self) -> usize {
        self.at
    }

    /// A recovery seek that already holds `held`, the bytes at `from`.
    pub(crate) fn seeking(from: Offset, held: Vec<u8>) -> ThenMatch {
        ThenMatch {
            held,
            ..ThenMatch::new(from, 0)
        }
    }

    /// `ws`: whitespace may come before the literal (`Then`; not `OneOf`).
    pub(crate) fn feed(&mut self, opts: &[ThenOpt], ws: bool, input: &[u8]) -> Progress<ThenEnd> {
        for (n, &b) in input.iter().enumerate() {
            if ws && self.at == 0 && is_ws(b) {
                continue;
            }
            let mut any = false;
            for (k, o) in opts.iter().enumerate() {
                self.alive[k] =
                    self.alive[k] && self.at < o.lit.bytes.len() && o.lit.matches_at(self.at, b);
                any |= self.alive[k];
            }
            if !any {
                return Progress::Done(n, ThenEnd::Over);
            }
            self.at += 1;
            let done =
                (0..opts.len()).find(|&k| self.alive[k] && opts[k].lit.bytes.len() == self.at);
            if let Some(k) = done {
                return Progress::Done(n + 1, ThenEnd::Matched(k));
            }
        }
        Progress::Partial(input.len())
    }

    /// Seeks the first literal to be complete: how many bytes were
    /// consumed and, done, the literal that completed with the last of them
    /// (its bytes are then `held`). Otherwise `held` is what may begin one
    /// and every byte before it is text.
    pub(crate) fn seek(&mut self, opts: &[ThenOpt], input: &[u8]) -> Progress<usize> {
        let starts = |b: u8| opts.iter().any(|o| o.lit.matches_at(0, b));
        // The bytes that may begin a literal: up to three are found with
        // memchr (a long raw value is mostly skipped this way).
        let mut firsts = [0u8; 3];
        let mut nf = 0;
        for o in opts {
            let b0 = o.lit.bytes[0];
            let (lo, up) = if o.lit.case_insensitive {
                (b0.to_ascii_lowercase(), b0.to_ascii_uppercase())
            } else {
                (b0, b0)
            };
            for b in [lo, up] {
                if !firsts[..nf.min(3)].contains(&b) {
                    if nf < 3 {
                        firsts[nf] = b;
                    }
                    nf += 1;
                }
            }
        }
        let next = |hay: &[u8]| match nf {
            1 => memchr::memchr(firsts[0], hay),
            2 => memchr::memchr2(firsts[0], firsts[1], hay),
            3 => memchr::memchr3(firsts[0], firsts[1], firsts[2], hay),
            _ => hay.iter().position(|&b| starts(b)),
        };
        let mut n = 0;
        while n < input.len() {
            if self.held.is_empty() {
                // Fast path: text up to the next byte that may begin one.
                match next(&input[n..]) {
                    Some(k) => n += k,
                    None => return Progress::Partial(input.len()),
                }
            }
            self.held.push(input[n]);
            n += 1;
            let h = &self.held;
            // The longest literal that ends here (the first to end wins).
            for s in 0..h.len() {
                let tail = &h[s..];
                let done = opts.iter().position(|o| {
                    o.lit.bytes.len() == tail.len()
                        && tail
                            .iter()
                            .enumerate()
                            .all(|(i, &b)| o.lit.matches_at(i, b))
                });
                if let Some(k) = done {
                    self.held.drain(..s);
                    return Progress::Done(n, k);
                }
            }
            let keep = literal_start(h, opts.iter().map(|o| &o.lit));
            let cut = h.len() - keep;
            self.held.drain(..cut);
        }
        Progress::Partial(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lang::format::{Field, Label};

    #[test]
    fn blanks_stop_at_a_line_break_and_whitespace_does_not() {
        assert_eq!(blank(b" \t x"), Progress::Done(3, ()));
        assert_eq!(blank(b" \n"), Progress::Done(1, ()));
        assert_eq!(blank(b"\r\n"), Progress::Done(0, ()));
        assert_eq!(blank(b" \t"), Progress::Partial(2));
        assert_eq!(blank(b""), Progress::Partial(0));
        assert_eq!(ws(b" \n\r\tx"), Progress::Done(4, ()));
    }

    fn cap(delims: &[&str], stop: &[u8]) -> CaptureOp {
        let mut c = crate::lang::format::Capture::until(
            Field::Name,
            delims
                .iter()
                .map(|d| (Lit::new(d), Some(Label::from("x"))))
                .collect(),
        );
        c.stop = stop.to_vec();
        let steps = [
            crate::lang::format::Step::label("x"),
            crate::lang::format::Step::Capture(c),
        ];
        match crate::lang::program::compile(&steps) {
            Ok(mut ops) => match ops.remove(0) {
                crate::lang::program::Op::Capture(c) => c,
                _ => unreachable!(),
            },
            Err(e) => panic!("{e}"),
        }
    }

    /// Every step parser, over a table of states and inputs, fed whole and
    /// byte by byte: the outcome and the bytes consumed must agree.
    #[test]
    fn table_of_steps_under_any_split() {
        let lit = Lit::new("</x>");
        let lit_cases: &[(&[u8], bool, Progress)] = &[
            (b"</x>rest", false, Progress::Done(4, ())),
            (b"</", false, Progress::Partial(2)),
            (
                b"</y>",
                false,
                Progress::Fail(2, Reason::ExpectedLit { found: b'y' }),
            ),
            (b"x", true, Progress::Done(0, ())),
            (
                b"<x",
                true,
                Progress::Fail(1, Reason::ExpectedLit { found: b'x' }),
            ),
        ];
        for &(input, optional, want) in lit_cases {
            assert_eq!(
                LitMatch::default().feed(&lit, optional, input),
                want,
                "{input:?}"
            );
            // byte by byte: the same total
            let mut m = LitMatch::default();
            let mut total = 0;
            let mut last = Progress::Partial(0);
            for &b in input {
                last = m.feed(&lit, optional, &[b]);
                match last {
                    Progress::Partial(n) => total += n,
                    Progress::Done(n, ()) | Progress::Fail(n, _) => {
                        total += n;
                        break;
                    }
                }
            }
            let got = match last {
                Progress::Partial(_) => Progress::Partial(total),
                Progress::Done(_, ()) => Progress::Done(total, ()),
                Progress::Fail(_, r) => Progress::Fail(total, r),
            };
            assert_eq!(got, want, "{input:?} byte by byte");
        }

        let op = cap(&["[ARGS]", "[CALL_ID]"], b"");
        let cap_cases: &[(&[u8], Progress<Captured>, &[u8])] = &[
            (
                b" get_time[ARGS]{",
                Progress::Done(15, Captured::ByDelim(0)),
                b"get_time",
            ),
            (
                b"f[CALL_ID]",
                Progress::Done(10, Captured::ByDelim(1)),
                b"f",
            ),
            (b"a b", Progress::Fail(2, Reason::NameSpace), b"a "),
            (
                b"a<",
                Progress::Fail(1, Reason::NameByte { found: b'<' }),
                b"a",
            ),
            (b"f[AR", Progress::Partial(4), b"f[AR"),
        ];
        for &(input, want, word) in cap_cases {
            let mut c = CaptureWord::default();
            assert_eq!(c.feed(&op, 64, input), want, "{input:?}");
            assert_eq!(c.word, word, "{input:?}");
            // byte by byte: the same end, what was found included
            let mut c = CaptureWord::default();
            let mut end = Progress::Partial(0);
            for &b in input {
                end = c.feed(&op, 64, &[b]);
                if !matches!(end, Progress::Partial(_)) {
                    break;
                }
            }
            let same = match (end, want) {
                (Progress::Done(_, a), Progress::Done(_, b)) => a == b,
                (Progress::Fail(_, a), Progress::Fail(_, b)) => a == b,
                (Progress::Partial(_), Progress::Partial(_)) => true,
                _ => false,
            };
            assert!(same, "{input:?} byte by byte: {end:?}");
            assert_eq!(c.word, word, "{input:?} byte by byte");
        }
        let stop = cap(&[], b" {");
        assert_eq!(
            CaptureWord::default().feed(&stop, 64, b"name {"),
            Progress::Done(4, Captured::AtStop)
        );
        assert_eq!(
            CaptureWord::default().feed(&stop, 3, &[b'a'; 80]),
            Progress::Fail(68, Reason::NameTooLong { limit: 3 })
        );

        let opts = [
            ThenOpt {
                lit: Lit::new(";"),
                to: 0,
                begins_call: true,
            },
            ThenOpt {
                lit: Lit::new("<|eom|>"),
                to: 1,
                begins_call: false,
            },
        ];
        let then_cases: &[(&[u8], Progress<ThenEnd>)] = &[
            (b" \n;", Progress::Done(3, ThenEnd::Matched(0))),
            (b"<|eom|>", Progress::Done(7, ThenEnd::Matched(1))),
            (b"<|x", Progress::Done(2, ThenEnd::Over)),
            (b" x", Progress::Done(1, ThenEnd::Over)),
            (b" <|e", Progress::Partial(4)),
        ];
        for &(input, want) in then_cases {
            assert_eq!(
                ThenMatch::new(Offset::START, 2).feed(&opts, true, input),
                want,
                "{input:?}"
            );
        }
        // without whitespace (`OneOf`)
        assert_eq!(
            ThenMatch::new(Offset::START, 2).feed(&opts, false, b" ;"),
            Progress::Done(0, ThenEnd::Over)
        );
        assert_eq!(ws(b"  x"), Progress::Done(2, ()));
        assert_eq!(ws(b"  "), Progress::Partial(2));
        assert_eq!(word(b"json\n"), Progress::Done(4, ()));
        assert_eq!(word(b"js"), Progress::Partial(2));
    }

    fn opts(lits: &[&str]) -> Vec<ThenOpt> {
        lits.iter()
            .enumerate()
            .map(|(k, l)| ThenOpt {
                lit: Lit::new(l),
                to: k,
                begins_call: false,
            })
            .collect()
    }

    /// Feeds `input` to a seek in pieces of `size`; returns the text it
    /// let go (what was consumed minus what it holds), the literal found
    /// and the bytes consumed.
    fn seek_in_pieces(o: &[ThenOpt], input: &[u8], size: usize) -> (Vec<u8>, Option<usize>, usize) {
        let mut m = ThenMatch::seeking(Offset::START, Vec::new());
        let mut at = 0;
        for piece in input.chunks(size) {
            let p = m.seek(o, piece);
            at += p.read();
            if let Progress::Done(_, k) = p {
                let found = Some(k);
                let text = input[..at - m.held.len()].to_vec();
                return (text, found, at);
            }
        }
        (input[..at - m.held.len()].to_vec(), None, at)
    }

    #[test]
    fn seek_finds_the_first_literal_to_end_under_any_split() {
        let o = opts(&["<|call|>", "<|calls_end|>", "ab"]);
        let cases: &[(&str, &str, Option<usize>, usize)] = &[
            ("text <|call|> rest", "text ", Some(0), 13),
            ("<|calls_end|>", "", Some(1), 13),
            // a partial marker that breaks off is text, and its tail may
            // begin the real one
            ("<|cal<|call|>", "<|cal", Some(0), 13),
            ("<|call_x <|calls_end|>", "<|call_x ", Some(1), 22),
            // a shorter literal inside a longer one's prefix ends first
            ("xaab", "xa", Some(2), 4),
            ("no marker <|ca", "no marker ", None, 14),
        ];
        for &(input, want_text, want, want_at) in cases {
            for size in 1..=input.len() {
                let (text, found, at) = seek_in_pieces(&o, input.as_bytes(), size);
                assert_eq!(
                    (text.as_slice(), found, at),
                    (want_text.as_bytes(), want, want_at),
                    "{input:?} in pieces of {size}"
                );
            }
        }
        let lits = || o.iter().map(|o| &o.lit);
        assert_eq!(literal_start(b"abc<|ca", lits()), 4);
        assert_eq!(literal_start(b"abc<|cx", lits()), 0);
        assert_eq!(literal_start(b"xa", lits()), 1);
        assert_eq!(literal_start(b"", lits()), 0);
    }

    #[test]
    fn a_capture_fails_at_the_first_byte_no_delimiter_continues() {
        let op = cap(&["<|sep|>"], b"");
        // `<|s` may still be the delimiter; `<|c` cannot: the word fails
        // at `c`, which is left for what reads on
        assert_eq!(
            CaptureWord::default().feed(&op, 64, b"get<|call|>"),
            Progress::Fail(5, Reason::NameByte { found: b'<' })
        );
        let mut c = CaptureWord::default();
        let mut end = Progress::Partial(0);
        let mut consumed = 0;
        for &b in b"get<|call|>" {
            end = c.feed(&op, 64, &[b]);
            consumed += end.read();
            if !matches!(end, Progress::Partial(_)) {
                break;
            }
        }
        assert!(matches!(end, Progress::Fail(..)), "{end:?}");
        assert_eq!((consumed, c.word.as_slice()), (5, &b"get<|"[..]));
        assert_eq!(
            CaptureWord::default().feed(&op, 64, b"get<|sep|>{"),
            Progress::Done(10, Captured::ByDelim(0))
        );
    }
}
