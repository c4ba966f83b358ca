//! The fast paths of a token-sized chunk: what the parser does with the
//! commonest chunks of a stream — a token of text, a token of a long
//! argument — without its mode loop (`Parser::process`). Each gives
//! exactly the events the loop would give, in the same state (the test
//! `the_fast_paths_are_the_ordinary_way_or_sooner` checks every chunking),
//! and each is tried only when it is cheap to rule out.
//!
//! Which chunk takes which path, tried in this order (a chunk of at most
//! [`TOKEN_SIZED`] bytes; no calls held inside reasoning, whose bytes are
//! searched for the reasoning closer):
//!
//! | mode | what is held | the chunk | path | what it does |
//! |---|---|---|---|---|
//! | text | nothing; the marker automaton at its start | no byte of it can begin a marker | [`is_plain`](Parser::is_plain) | passes it as text |
//! | text | the first bytes of a possible marker (whole characters) | ends the automaton's match without a marker, the rest plain | [`is_held_then_plain`](Parser::is_held_then_plain) | releases what is held, passes the chunk |
//! | text | nothing; the automaton at its start | plain but for its last bytes, which may begin a marker | [`plain_then_held`](Parser::plain_then_held) | passes it but for those bytes, which it holds |
//! | block | a steady run is on (`block::steady`) | continues the run | `block::steady` | holds it and sends it as the argument delta |
//! | block | the step reads a JSON string or a raw value | meets no markup in it | [`inside_value`](Parser::inside_value) (`block::direct`) | the step's reader takes it without the loop |
//! | any other | | | — | the mode loop |
//!
//! A chunk longer than [`TOKEN_SIZED`] always goes the ordinary way: the
//! loop searches it once, where a fast path's look first would search it
//! twice whenever it does hold a rare byte.

use crate::engine::block;
use crate::engine::parser::{Mode, Parser};
use crate::scan::marker::StateID;
use crate::sink::Sink;

/// The largest chunk the fast paths take: a long chunk goes the ordinary
/// way, which searches it once too (a fast path's look first would search
/// it twice whenever it does hold a rare byte).
pub(super) const TOKEN_SIZED: usize = 64;

impl Parser {
    /// The fast paths of a token-sized chunk, `text` its UTF-8 check: plain
    /// text ([`is_plain`](Parser::is_plain)), text after a hold-back
    /// ([`is_held_then_plain`](Parser::is_held_then_plain)), text before a
    /// hold-back ([`plain_then_held`](Parser::plain_then_held)), the next
    /// chunk of a steady run or a chunk inside a string or value of a block
    /// ([`inside_value`](Parser::inside_value)). `true`: the chunk was fed;
    /// `false`: nothing was done.
    #[inline(always)]
    pub(super) fn fast<'c>(
        &mut self,
        chunk: &'c [u8],
        text: impl FnOnce(&'c [u8]) -> Option<&'c str>,
        out: &mut dyn Sink,
    ) -> bool {
        match &self.mode {
            Mode::Text(_) if self.is_plain(chunk) => text(chunk).is_some_and(|t| {
                self.stream.pending.pass_text(t, out);
                true
            }),
            Mode::Text(_) if self.is_held_then_plain(chunk) => text(chunk).is_some_and(|t| {
                self.pass_held_then_plain(t, out);
                true
            }),
            Mode::Text(_) => match self.plain_then_held(chunk) {
                Some((held, sid)) => {
                    text(chunk).is_some_and(|t| self.pass_plain_then_hold(t, held, sid, out))
                }
                None => false,
            },
            Mode::Block(_) if chunk.len() <= TOKEN_SIZED && !self.stream.holds.holding() => {
                let Some(t) = text(chunk) else {
                    return false;
                };
                // The next chunk of a steady run, here: the commonest
                // chunk of a long argument costs no call.
                if let Mode::Block(b) = &mut self.mode {
                    if block::steady(b, &mut self.stream.pending, out, t) {
                        return true;
                    }
                }
                self.inside_value(t, out)
            }
            _ => false,
        }
    }

    /// The direct path of a block's chunk that lies inside a JSON string
    /// (a long argument, token by token): the JSON reader takes it without
    /// the mode loop and the block runner around it, which would only find
    /// the step still reading. (Not while calls are held: their bytes are
    /// searched for a reasoning closer.) `false`: nothing was read. Out of
    /// line: the steady run tried before it takes the commoner chunk.
    #[inline(never)]
    fn inside_value(&mut self, text: &str, out: &mut dyn Sink) -> bool {
        let Mode::Block(b) = &mut self.mode else {
            return false;
        };
        let prog = &self.g.openers[b.opener()].program;
        block::direct(prog, b, &mut self.stream.env(out), text)
    }

    /// The fast path of the text mode for token-sized chunks: nothing is
    /// pending, the automaton is at its start, and nothing in `chunk` can
    /// begin a marker. (Its end is checked to be a whole character by the
    /// caller's UTF-8 check.) A long chunk goes the ordinary way, which
    /// searches it once too: looking at it here first would search it
    /// twice whenever it does hold a rare byte.
    #[inline]
    fn is_plain(&self, chunk: &[u8]) -> bool {
        let Mode::Text(st) = &self.mode else {
            return false;
        };
        if chunk.len() > TOKEN_SIZED {
            return false;
        }
        let set = &self.g.text_set(self.stream.watch()).set;
        let p = &self.stream.pending;
        p.buf.is_empty()
            && st.sid == set.start()
            && !self.stream.holds.holding()
            && set.is_plain(chunk, p.after_word)
    }

    /// The fast path of the text mode for a token-sized chunk that is
    /// plain but for its last bytes, which may begin a marker: nothing is
    /// pending, the automaton is at its start, and no marker is in `chunk`
    /// ([`MarkerSet::plain_then_held`](crate::scan::marker::MarkerSet::plain_then_held)).
    /// How many bytes are held, and the automaton's state after them.
    #[inline]
    fn plain_then_held(&self, chunk: &[u8]) -> Option<(usize, StateID)> {
        let Mode::Text(st) = &self.mode else {
            return None;
        };
        let set = &self.g.text_set(self.stream.watch()).set;
        let p = &self.stream.pending;
        if p.buf.is_empty() && st.sid == set.start() && !self.stream.holds.holding() {
            set.plain_then_held(chunk, p.after_word)
        } else {
            None
        }
    }

    /// Passes `text` but for its last `held` bytes, which are held with
    /// the automaton at `sid` (see [`plain_then_held`](Parser::plain_then_held)):
    /// what the ordinary way does with such a chunk. `false` (nothing
    /// done) if they do not begin a character.
    fn pass_plain_then_hold(
        &mut self,
        text: &str,
        held: usize,
        sid: StateID,
        out: &mut dyn Sink,
    ) -> bool {
        let Some((pass, hold)) = text
            .len()
            .checked_sub(held)
            .and_then(|cut| text.split_at_checked(cut))
        else {
            return false;
        };
        let p = &mut self.stream.pending;
        p.pass_text(pass, out);
        p.take_text(hold);
        if let Mode::Text(st) = &mut self.mode {
            st.sid = sid;
        }
        true
    }

    /// The fast path after a hold-back, for token-sized chunks: the held
    /// bytes (whole characters) may begin a marker; if the automaton, fed
    /// on with `chunk`, returns to its start at a character boundary without
    /// meeting a marker, and the rest of `chunk` is plain, then the held
    /// bytes and `chunk` are text. (The ordinary way decides the same,
    /// through the whole mode machinery.)
    #[inline]
    fn is_held_then_plain(&self, chunk: &[u8]) -> bool {
        let Mode::Text(st) = &self.mode else {
            return false;
        };
        let set = &self.g.text_set(self.stream.watch()).set;
        let p = &self.stream.pending;
        if chunk.len() > TOKEN_SIZED
            || p.buf.is_empty()
            || self.stream.holds.holding()
            || p.buf.len() > TOKEN_SIZED
            || st.sid == set.start()
            || crate::scan::utf8::complete_prefix_len(&p.buf) != p.buf.len()
        {
            return false;
        }
        let Some(q) = set.back_to_start(st.sid, chunk) else {
            return false;
        };
        // (`q` ≥ 1: the byte before it is the one that ended the prefix.)
        chunk.get(q).is_none_or(|&b| (b as i8) >= -0x40)
            && set.is_plain(&chunk[q..], crate::scan::marker::is_word(chunk[q - 1]))
    }

    /// Releases the held bytes and then `text` (see
    /// [`is_held_then_plain`](Parser::is_held_then_plain)).
    #[inline]
    fn pass_held_then_plain(&mut self, text: &str, out: &mut dyn Sink) {
        let p = &mut self.stream.pending;
        p.release_all(out);
        p.pass_text(text, out);
        if let Mode::Text(st) = &mut self.mode {
            st.sid = self.g.text_set(self.stream.watch()).set.start();
        }
    }
}
