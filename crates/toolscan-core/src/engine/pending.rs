//! The bytes between "fed" and "decided", and how text leaves the parser.
//!
//! Text that is decided while its chunk is being fed goes to the sink as a
//! `&str` borrowed from the chunk (validated once, when the chunk came in).
//! Only bytes whose fate is open when a chunk ends — a possible marker, an
//! unfinished character, a block that may still be a call — are copied into
//! the pending buffer, and leave it as text (copied once more) or are
//! dropped as a call's span.
//!
//! # The protocol
//!
//! Every offset is absolute (an [`Offset`], from the start of the
//! stream); the buffer holds `buf_start..pos`, and the chunk being fed
//! begins at its `base`. An offset becomes an index into the buffer or a
//! chunk only through [`Offset`]'s operations (`index_from`, exact where
//! the protocol guarantees the order; `index_in` and `since`, clamped). What the parser and the block's readers do with it, and nothing
//! else:
//!
//! - **hold**: [`Pending::take_n`] (the `n` bytes a reader just read, from
//!   `pos` on) or [`Pending::take`] (up to an offset): the bytes are copied
//!   in only when the chunk ends with their fate open;
//! - **give back**: [`Pending::untake`] — the last bytes held were not
//!   used (a JSON window read past the value's end) —, or
//!   [`Pending::untake_from`] an offset, the bytes returned to be read
//!   again (what followed a block's end, markup that may begin a marker);
//! - **refer**: [`Pending::src`] — a view by offset ([`HeldBytes`]) that call
//!   assembly keeps spans of, so arguments are not copied again;
//! - **drop**: [`Pending::drop_upto`] — the bytes up to an offset belong to
//!   a dispatched call (or are framing): they are gone, not text;
//! - **release**: [`Pending::flush`] (text up to an offset, cut on a
//!   character boundary, what may still begin a marker kept),
//!   [`Pending::release_front`], [`Pending::release_all`] — the bytes are
//!   text, borrowed from the chunk where they still are.
//!
//! A block's bytes are held from its marker on, so that a block that fails
//! can give every one of them back as text (nothing lost); a call's are
//! dropped when it is dispatched.

use std::str::Utf8Chunk;

use crate::event::{Diagnostic, DiagnosticKind, EventRef};
use crate::offset::Offset;
use crate::read::src::HeldBytes;
use crate::scan::marker::{is_word, line_tail};
use crate::scan::utf8::complete_prefix_len;
use crate::sink::Sink;

/// One chunk being fed, with the part of it known to be UTF-8.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Chunk<'a> {
    /// The bytes.
    pub bytes: &'a [u8],
    /// Absolute offset of `bytes[0]`.
    pub base: Offset,
    /// `bytes[valid_from..valid_from + valid.len()]`, valid UTF-8 starting
    /// at a character boundary: text in it is borrowed without another
    /// check.
    valid: &'a str,
    valid_from: usize,
}

impl<'a> Chunk<'a> {
    /// A chunk of bytes: validated here, once (SIMD-accelerated), skipping
    /// the continuation bytes that finish a character of the previous
    /// chunk.
    pub(crate) fn from_bytes(bytes: &'a [u8], base: Offset) -> Chunk<'a> {
        let from = match bytes.first() {
            Some(&b) if b & 0xC0 == 0x80 => bytes
                .iter()
                .take(3)
                .take_while(|&&b| b & 0xC0 == 0x80)
                .count(),
            _ => 0,
        };
        let rest = &bytes[from..];
        // The SIMD validator pays off past a few dozen bytes; a token-sized
        // ASCII chunk needs no validator at all.
        let fast = if rest.len() < 64 {
            crate::scan::utf8::as_text(rest)
        } else {
            crate::scan::utf8::check(rest)
        };
        let valid = match fast {
            Some(s) => s,
            None => match std::str::from_utf8(rest) {
                Ok(s) => s,
                Err(e) => std::str::from_utf8(&rest[..e.valid_up_to()]).unwrap_or_default(),
            },
        };
        Chunk {
            bytes,
            base,
            valid,
            valid_from: from,
        }
    }

    /// A chunk that is already text: nothing to validate.
    pub(crate) fn from_str(text: &'a str, base: Offset) -> Chunk<'a> {
        Chunk {
            bytes: text.as_bytes(),
            base,
            valid: text,
            valid_from: 0,
        }
    }

    pub(crate) fn end(&self) -> Offset {
        self.base.after(self.bytes.len())
    }

    /// The chunk's first `n` bytes (`n <= bytes.len()`).
    pub(crate) fn head(&self, n: usize) -> Chunk<'a> {
        let mut k = n.saturating_sub(self.valid_from).min(self.valid.len());
        while !self.valid.is_char_boundary(k) {
            k -= 1;
        }
        Chunk {
            bytes: &self.bytes[..n],
            base: self.base,
            valid: &self.valid[..k],
            valid_from: self.valid_from,
        }
    }

    /// The index in the chunk of an offset inside it (or at its end).
    #[inline]
    fn index(&self, at: Offset) -> usize {
        at.index_from(self.base)
    }

    /// The bytes between two absolute offsets inside the chunk.
    #[inline]
    fn range(&self, from: Offset, to: Offset) -> &'a [u8] {
        &self.bytes[self.index(from)..self.index(to)]
    }

    /// The text between two absolute offsets, if it lies in the validated
    /// part and both ends are character boundaries.
    #[inline]
    fn text(&self, from: Offset, to: Offset) -> Option<&'a str> {
        let a = self.index(from).checked_sub(self.valid_from)?;
        let b = self.index(to).checked_sub(self.valid_from)?;
        self.valid.get(a..b)
    }
}

/// [`LAST_BYTE`]: an ASCII letter or digit, or `_`.
const WORD: u8 = 1;
/// [`LAST_BYTE`]: neither blank (space, tab, CR, the byte-order mark's last
/// byte) nor a newline.
const INK: u8 = 2;

/// What the last byte of released text says, by byte.
static LAST_BYTE: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        if c.is_ascii_alphanumeric() || c == b'_' {
            t[b] |= WORD;
        }
        if !matches!(c, b' ' | b'\t' | b'\r' | b'\n' | 0xBF) {
            t[b] |= INK;
        }
        b += 1;
    }
    t
};

/// The pending bytes and where text goes.
#[derive(Debug)]
pub(crate) struct Pending {
    /// Absolute offset of the next byte to take from the input.
    pub pos: Offset,
    /// Bytes taken but not yet released as text nor dropped as a call's
    /// span: `buf_start..pos`. In text mode only the hold-back (a possible
    /// marker, an unfinished character); in a block, the whole block.
    pub buf: Vec<u8>,
    pub buf_start: Offset,
    /// Text goes out as reasoning.
    pub in_reasoning: bool,
    /// Only blanks (spaces, tabs, byte-order marks) were released or
    /// dropped since the last newline or the start of the stream: a
    /// line-start marker right after `buf_start` is at a line start.
    pub line_blank: bool,
    /// Some marker counts only at a line start: keep `line_blank` up to date.
    pub track_lines: bool,
    /// The last byte released or dropped before `buf_start` is a word byte
    /// (an ASCII letter or digit, or `_`): a marker that begins with one
    /// right after `buf_start` would be inside a word. Kept up to date only
    /// with `track_words`.
    pub after_word: bool,
    /// Some marker begins with a word byte: keep `after_word` up to date.
    pub track_words: bool,
    /// A copy of every byte taken from the input from an offset on, kept
    /// while calls inside an open reasoning block are held
    /// ([`CallsInReasoning::Text`](crate::CallsInReasoning::Text)): if the
    /// block closes, these bytes are reasoning.
    pub raw: Option<Raw>,
}

/// The input's bytes from `start` on, each copied the first time it is
/// taken (bytes read again after a failure are not copied twice).
#[derive(Debug, Default)]
pub(crate) struct Raw {
    pub start: Offset,
    pub bytes: Vec<u8>,
}

impl Raw {
    pub(crate) fn end(&self) -> Offset {
        self.start.after(self.bytes.len())
    }
}

impl Default for Pending {
    fn default() -> Pending {
        Pending {
            pos: Offset::START,
            buf: Vec::new(),
            buf_start: Offset::START,
            in_reasoning: false,
            line_blank: true,
            track_lines: true,
            after_word: false,
            track_words: true,
            raw: None,
        }
    }
}

impl Pending {
    /// Bytes of the current block (or hold-back).
    pub(crate) fn held(&self) -> usize {
        self.pos.index_from(self.buf_start)
    }

    /// Takes chunk bytes up to `to` into the buffer.
    pub(crate) fn take(&mut self, ch: &Chunk<'_>, to: Offset) {
        if to > self.pos {
            let bytes = ch.range(self.pos, to);
            if bytes.len() <= 8 {
                // A token's bytes: a call to `memcpy` costs more than they.
                for &b in bytes {
                    self.buf.push(b);
                }
            } else {
                self.buf.extend_from_slice(bytes);
            }
            self.record(ch, to);
            self.pos = to;
        }
    }

    /// Holds `text`, the whole of a chunk that is read at once (the direct
    /// path of a chunk inside a string or value): [`take_n`](Self::take_n)
    /// of all of it, without a [`Chunk`] around it.
    #[inline]
    pub(crate) fn take_text(&mut self, text: &str) {
        if self.raw.is_some() {
            let ch = Chunk::from_str(text, self.pos);
            return self.take_n(&ch, text.len());
        }
        self.buf.reserve(text.len());
        self.buf.extend_from_slice(text.as_bytes());
        self.pos = self.pos.after(text.len());
    }

    /// The input up to `to` leaves the chunk: copies what `raw` lacks.
    #[inline]
    fn record(&mut self, ch: &Chunk<'_>, to: Offset) {
        if let Some(raw) = &mut self.raw {
            let from = raw.end().max(ch.base);
            if to > from {
                raw.bytes.extend_from_slice(ch.range(from, to));
            }
        }
    }

    /// Starts copying the input taken, from the first pending byte on.
    pub(crate) fn start_raw(&mut self) {
        self.raw = Some(Raw {
            start: self.buf_start,
            bytes: self.buf.clone(),
        });
    }

    /// Stops copying the input; the copied bytes that left the pending
    /// buffer are released as text (or reasoning), the others stay pending.
    pub(crate) fn release_raw(&mut self, out: &mut dyn Sink) {
        if let Some(raw) = self.raw.take() {
            let n = self.buf_start.index_in(raw.start, raw.bytes.len());
            self.emit_bytes(&raw.bytes[..n], raw.start, out);
        }
    }

    /// Takes `n` bytes at the chunk's position `i` (which must be the next
    /// byte, `pos`).
    pub(crate) fn take_n(&mut self, ch: &Chunk<'_>, n: usize) {
        let to = self.pos.after(n);
        self.take(ch, to);
    }

    /// A whole chunk of plain text: released at once, nothing pending.
    #[inline]
    pub(crate) fn pass_text(&mut self, text: &str, out: &mut dyn Sink) {
        debug_assert!(self.raw.is_none(), "no fast path while calls are held");
        self.emit_str(text, out);
        self.pos = self.pos.after(text.len());
        self.buf_start = self.pos;
    }

    /// Gives back the last `n` bytes taken (they were not used).
    pub(crate) fn untake(&mut self, n: usize) {
        let keep = self.buf.len() - n.min(self.buf.len());
        self.buf.truncate(keep);
        self.pos = self.pos.before(n);
    }

    /// Gives back the bytes held from offset `from` on (none if it is at
    /// or past `pos`) and returns them, to be read again.
    pub(crate) fn untake_from(&mut self, from: Offset) -> Vec<u8> {
        let k = from.index_in(self.buf_start, self.buf.len());
        let tail = self.buf.split_off(k);
        self.pos = self.buf_start.after(k);
        tail
    }

    /// The pending bytes, for arguments that are a span of them.
    pub(crate) fn src(&self) -> HeldBytes<'_> {
        HeldBytes {
            buf: &self.buf,
            start: self.buf_start,
        }
    }

    /// Drops pending bytes up to `upto`: they belong to a call.
    pub(crate) fn drop_upto(&mut self, upto: Offset) {
        let n = upto.index_in(self.buf_start, self.buf.len());
        if let (true, Some(blank)) = (self.track_lines, line_tail(&self.buf[..n])) {
            self.line_blank = blank;
        }
        if let (true, Some(&b)) = (self.track_words, self.buf[..n].last()) {
            self.after_word = is_word(b);
        }
        self.buf.drain(..n);
        self.buf_start = self.buf_start.after(n);
    }

    /// The first `n` pending bytes are text (whole characters: they precede
    /// an ASCII marker byte).
    pub(crate) fn release_front(&mut self, n: usize, out: &mut dyn Sink) {
        let n = n.min(self.buf.len());
        let at = self.buf_start;
        let buf = std::mem::take(&mut self.buf);
        self.emit_bytes(&buf[..n], at, out);
        self.buf = buf;
        self.buf.drain(..n);
        self.buf_start = self.buf_start.after(n);
    }

    /// Everything up to `pos` has been decided to be text: releases it
    /// (no character is left unfinished: used when what follows cannot
    /// continue it, and at the end).
    pub(crate) fn release_all(&mut self, out: &mut dyn Sink) {
        let at = self.buf_start;
        let buf = std::mem::take(&mut self.buf);
        self.emit_bytes(&buf, at, out);
        self.buf = buf;
        self.buf.clear();
        self.buf_start = self.pos;
    }

    /// Takes chunk bytes up to `consumed` and releases as text everything
    /// before `upto` (`buf_start <= upto <= consumed`), cut back to a
    /// character boundary unless `force`. Bytes from the chunk are borrowed;
    /// the rest stays pending.
    pub(crate) fn flush(
        &mut self,
        ch: &Chunk<'_>,
        consumed: Offset,
        upto: Offset,
        force: bool,
        out: &mut dyn Sink,
    ) {
        // The common case: nothing pending, text up to an ASCII byte.
        if self.buf.is_empty() && upto > self.pos {
            let last = ch.bytes[ch.index(upto) - 1];
            if last < 0x80 || force {
                if let Some(t) = ch.text(self.pos, upto) {
                    self.emit_str(t, out);
                    self.record(ch, upto);
                    self.pos = upto;
                    self.buf_start = upto;
                    self.take(ch, consumed);
                    return;
                }
            }
        }
        let upto = if force {
            upto
        } else {
            upto.before(self.unfinished_tail(ch, upto))
        };
        if upto > self.buf_start && !self.buf.is_empty() {
            if upto > self.pos {
                // The whole buffer goes, with the continuation bytes that
                // finish its last character.
                let need = unfinished_need(&self.buf);
                let cont = ch
                    .range(self.pos, upto)
                    .iter()
                    .take(need)
                    .take_while(|&&b| b & 0xC0 == 0x80)
                    .count();
                self.take_n(ch, cont);
                self.release_all(out);
            } else {
                let n = upto.index_from(self.buf_start);
                let at = self.buf_start;
                let buf = std::mem::take(&mut self.buf);
                self.emit_bytes(&buf[..n], at, out);
                self.buf = buf;
                self.buf.drain(..n);
                self.buf_start = upto;
            }
        }
        if upto > self.pos {
            match ch.text(self.pos, upto) {
                Some(t) => self.emit_str(t, out),
                None => self.emit_bytes(ch.range(self.pos, upto), self.pos, out),
            }
            self.record(ch, upto);
            self.pos = upto;
            self.buf_start = upto;
        }
        self.take(ch, consumed);
    }

    /// How many bytes before `upto` (at most 3) are the start of a
    /// character that the next bytes may finish.
    fn unfinished_tail(&self, ch: &Chunk<'_>, upto: Offset) -> usize {
        let n = upto.since(self.buf_start).min(3);
        let from = upto.before(n);
        let mut tail = [0u8; 3];
        for (k, t) in tail[..n].iter_mut().enumerate() {
            let at = from.after(k);
            *t = if at < self.pos {
                self.buf[at.index_from(self.buf_start)]
            } else {
                ch.bytes[ch.index(at)]
            };
        }
        n - complete_prefix_len(&tail[..n])
    }

    /// Bytes leave the parser: keeps track of whether the last byte is a
    /// word byte and whether the line is blank (each only if the grammar
    /// needs it; one table lookup on the last byte in the common case).
    #[inline]
    fn passed(&mut self, bytes: &[u8]) {
        let Some(&last) = bytes.last() else {
            return;
        };
        let class = LAST_BYTE[usize::from(last)];
        // (A store the grammar may not need is cheaper than a branch.)
        self.after_word = self.track_words && class & WORD != 0;
        if !self.track_lines {
            return;
        }
        // Most text ends in a byte that is neither blank nor a newline, or
        // in one blank after such a byte. (Tested without branches but the
        // last: which of the two it is, is a coin toss for a predictor.)
        let n = bytes.len();
        let before = LAST_BYTE[usize::from(bytes[n.saturating_sub(2)])];
        let one_blank = u8::from(last == b' ') & u8::from(n > 1);
        if (class | (before & one_blank.wrapping_neg())) & INK != 0 {
            self.line_blank = false;
            return;
        }
        if let Some(blank) = line_tail(bytes) {
            self.line_blank = blank;
        }
    }

    #[inline]
    fn emit_str(&mut self, text: &str, out: &mut dyn Sink) {
        if text.is_empty() {
            return;
        }
        self.passed(text.as_bytes());
        out.event(if self.in_reasoning {
            EventRef::Reasoning(text)
        } else {
            EventRef::Text(text)
        });
    }

    /// Emits bytes that start at absolute offset `at` as text: each
    /// maximal invalid sequence becomes U+FFFD, after an `invalid_utf8`
    /// diagnostic at its offset.
    fn emit_bytes(&mut self, bytes: &[u8], at: Offset, out: &mut dyn Sink) {
        if let Ok(s) = std::str::from_utf8(bytes) {
            return self.emit_str(s, out);
        }
        self.passed(bytes);
        let mut off = at;
        for piece in bytes.utf8_chunks() {
            self.emit_str(piece.valid(), out);
            off = off.after(piece.valid().len());
            if !piece.invalid().is_empty() {
                invalid_utf8(&piece, off, out);
                self.emit_str("\u{FFFD}", out);
                off = off.after(piece.invalid().len());
            }
        }
    }
}

fn invalid_utf8(piece: &Utf8Chunk<'_>, at: Offset, out: &mut dyn Sink) {
    let at = at.get();
    let hex: Vec<String> = piece.invalid().iter().map(|b| format!("{b:02x}")).collect();
    let d = Diagnostic {
        kind: DiagnosticKind::InvalidUtf8,
        offset: at,
        message: format!("bytes {} are not UTF-8; they became U+FFFD", hex.join(" ")),
    };
    tracing::debug!(offset = at, "invalid UTF-8");
    out.event(EventRef::Diagnostic(&d));
}

/// How many continuation bytes the last character of `buf` still needs.
fn unfinished_need(buf: &[u8]) -> usize {
    let n = buf.len();
    for back in 1..=n.min(3) {
        let b = buf[n - back];
        if b & 0xC0 == 0x80 {
            continue;
        }
        return crate::scan::utf8::char_len(b).saturating_sub(back);
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::Event;

    #[test]
    fn unfinished_needs() {
        assert_eq!(unfinished_need(b"a"), 0);
        assert_eq!(unfinished_need(&[b'a', 0xE2]), 2);
        assert_eq!(unfinished_need(&[0xE2, 0x82]), 1);
        assert_eq!(unfinished_need(&[0xE2, 0x82, 0xAC]), 0);
        assert_eq!(unfinished_need(&[0x80]), 0);
    }

    #[test]
    fn chunk_validity_skips_a_finishing_tail() {
        let s = "é東".as_bytes(); // C3 A9 | E6 9D B1
        let at = Offset::new;
        let c = Chunk::from_bytes(&s[1..], at(1));
        assert_eq!(c.text(at(2), at(5)), Some("東"));
        assert_eq!(c.text(at(1), at(2)), None);
        let c = Chunk::from_bytes(&[b'a', 0xFF, b'b'], at(0));
        assert_eq!(c.text(at(0), at(1)), Some("a"));
        assert_eq!(c.text(at(0), at(2)), None);
    }

    /// Feeds `input` split at every pair of points through `flush` and
    /// checks the text is what lossy decoding of the whole gives, with one
    /// diagnostic per replacement.
    #[test]
    fn flushing_any_split_equals_lossy_decoding() {
        let inputs: [&[u8]; 3] = [
            "aé東😀z".as_bytes(),
            &[0xE2, 0x41, 0xF0, 0x9F, 0x98, b'x', 0xC3, 0xFF, b'y'],
            &[0xED, 0xA0, 0x80, b'q', 0xC3],
        ];
        for input in inputs {
            let whole = String::from_utf8_lossy(input).into_owned();
            let fffd = whole.matches('\u{FFFD}').count();
            for a in 0..=input.len() {
                for b in a..=input.len() {
                    let mut p = Pending::default();
                    let mut ev: Vec<Event> = Vec::new();
                    for (from, to) in [(0, a), (a, b), (b, input.len())] {
                        let ch = Chunk::from_bytes(&input[from..to], Offset::START.after(from));
                        let to = Offset::START.after(to);
                        p.flush(&ch, to, to, false, &mut ev);
                    }
                    p.release_all(&mut ev);
                    let text: String = ev
                        .iter()
                        .filter_map(|e| match e {
                            Event::Text { delta } => Some(delta.as_str()),
                            _ => None,
                        })
                        .collect();
                    let diags = ev
                        .iter()
                        .filter(|e| matches!(e, Event::Diagnostic(_)))
                        .count();
                    assert_eq!((&text, diags), (&whole, fffd), "{input:?} cut {a} {b}");
                }
            }
        }
    }
}
