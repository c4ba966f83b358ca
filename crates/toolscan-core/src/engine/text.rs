//! Text mode and skip mode, over the stream state: the marker automaton
//! stepped over a chunk (text released as soon as it cannot begin a
//! marker; a marker found opens its block, or a reasoning block), and the
//! rest of a JSON value that turned out to be no call, scanned and
//! released as text.

use crate::engine::block::Block;
use crate::engine::parser::{After, StreamState, TextState};
use crate::engine::pending::Chunk;
use crate::lang::format::Trust;
use crate::lang::grammar::{Grammar, PatKind};
use crate::read::json::{Ignore, JsonScanner};
use crate::scan::marker::{is_word, line_tail2, Found};
use crate::sink::Sink;

impl StreamState {
    /// Text mode from chunk byte `i`: where the run stopped, and the mode
    /// change it decided.
    pub(super) fn run_text(
        &mut self,
        g: &Grammar,
        st: &mut TextState,
        ch: &Chunk<'_>,
        i: usize,
        out: &mut dyn Sink,
    ) -> (usize, After) {
        let ts = &g.text_set(self.watch());
        let p = &mut self.pending;
        let hay = &ch.bytes[i..];
        // A line-start marker counts if only blanks precede it on its line,
        // a marker that begins with a word byte if no word byte precedes
        // it: look back through the chunk, then the held bytes, then what
        // the pending buffer knows of the bytes already gone.
        let mut accept = |pid: usize, end: usize| {
            let pat = ts.set.pattern(pid);
            let len = pat.bytes.len();
            let (in_buf, in_hay) = match end.checked_sub(len) {
                Some(k) => (p.buf.len(), k),
                None => (p.buf.len().saturating_sub(len - end), 0),
            };
            let before = match (in_hay, in_buf) {
                (0, 0) => None,
                (0, n) => Some(p.buf[n - 1]),
                (k, _) => Some(hay[k - 1]),
            };
            let word_ok = !pat.word_start() || !before.map_or(p.after_word, is_word);
            let line_ok = !pat.line_start
                || line_tail2(&p.buf[..in_buf], &hay[..in_hay]).unwrap_or(p.line_blank);
            word_ok && line_ok
        };
        match ts
            .set
            .scan(&mut st.sid, hay, &p.buf, self.bare_room, &mut accept)
        {
            Found::Nothing => {
                let end = ch.end();
                let hold = ts.set.held(st.sid, &p.buf, hay);
                p.flush(ch, end, end.before(hold), false, out);
                (ch.bytes.len(), After::Stay)
            }
            Found::Marker { pattern, end } => {
                let mend = ch.base.after(i + end);
                let pat = ts.set.pattern(pattern);
                let start = mend.before(pat.bytes.len());
                // Everything before the marker is text; the marker is held.
                p.flush(ch, mend, start, true, out);
                let after = match ts.kinds[pattern] {
                    PatKind::ThinkOpen => After::Think(true),
                    PatKind::ThinkClose => After::Think(false),
                    PatKind::Opener(k) => {
                        let op = &g.openers[k];
                        tracing::trace!(offset = start.get(), opener = k, "block opens");
                        // (unused without closers)
                        let closer = g.closers.as_ref().map_or(st.sid, |c| c.start());
                        let in_reasoning = self.think;
                        let (holds, session) = (&mut self.holds, &self.session);
                        holds.block_opens(in_reasoning, start, mend, closer, p, session);
                        let b = Block::new(k, op.trust != Trust::Definite);
                        if op.replay {
                            // The marker is the start of the body: read it
                            // again as the block's first bytes.
                            let marker = std::mem::take(&mut p.buf);
                            p.pos = p.buf_start;
                            After::Replay(Some(Box::new(b.replayed(p.buf_start))), marker)
                        } else {
                            After::Block(Box::new(b))
                        }
                    }
                };
                (i + end, after)
            }
        }
    }

    /// Skip mode from chunk byte `i`: the rest of a JSON value that is no
    /// call, released as text.
    pub(super) fn run_skip(
        &mut self,
        sc: &mut JsonScanner,
        ch: &Chunk<'_>,
        i: usize,
        out: &mut dyn Sink,
    ) -> (usize, After) {
        let p = &mut self.pending;
        let r = sc.feed(&ch.bytes[i..], p.pos, &mut Ignore);
        let (n, failed) = match r {
            Ok(n) => (n, false),
            Err(e) => (e.at.index_from(p.pos), true),
        };
        let to = p.pos.after(n);
        p.flush(ch, to, to, false, out);
        let after = if sc.is_done() || failed {
            After::Text
        } else {
            After::Stay
        };
        (i + n, after)
    }
}
