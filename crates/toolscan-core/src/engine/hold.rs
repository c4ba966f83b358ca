//! Calls held inside a reasoning block (`CallsInReasoning::Text`): a call
//! written inside reasoning that has not closed may be quoted (the model
//! thinking about a call) or meant (the reasoning never closes). From the
//! first such call's marker on, the input is copied (`Pending::raw`) and
//! every event waits in the parser's deferred list; the reasoning closer
//! makes the copied bytes reasoning and drops the events
//! ([`Holds::release`]), the end of the stream sends them
//! ([`Holds::send`]). While a hold is on, the closer is searched for in a
//! held block's bytes as they come ([`Holds::window`]), each byte once
//! however the blocks and chunks fall.

use std::collections::HashSet;

use crate::engine::call::calls::Session;
use crate::engine::pending::{Chunk, Pending};
use crate::event::{Diagnostic, DiagnosticKind, Event, EventRef};
use crate::offset::Offset;
use crate::options::Limits;
use crate::scan::marker::{Found, MarkerSet, StateID};
use crate::sink::Sink;

/// The hold of calls inside reasoning, as the parser keeps it between
/// chunks.
#[derive(Debug)]
pub(crate) struct Holds {
    /// [`CallsInReasoning::Text`](crate::options::CallsInReasoning::Text):
    /// a call inside a reasoning block is held until the block closes
    /// (reasoning) or the stream ends (a call). Set once.
    on: bool,
    /// The calls held, if any.
    hold: Option<Hold>,
    /// The last search for a reasoning closer that read to a chunk's end:
    /// a later held block of the same chunk reuses its answer instead of
    /// searching the rest of the chunk once more (each held call would
    /// cost the rest of a chunk that holds them all, the square of it).
    /// Kept across holds: a held block that fails ends its hold, and the
    /// next one's, in the same chunk, asks the same question.
    closer_search: Option<Search>,
}

/// Calls inside a reasoning block that has not closed yet: from the opening
/// marker of the first (`Pending::raw` copies the input from there), every
/// event waits in `Parser::deferred`. The block's closer makes the copied
/// bytes reasoning; the end of the stream sends the events.
#[derive(Debug)]
struct Hold {
    /// Where the text after the last block that completed a call began
    /// (a block that completed none is text for this count: the marker
    /// scan may take a bare `{` for text without opening its block, and
    /// both must count the same).
    text_from: Offset,
    /// The calls completed when `text_from` was last set.
    counted: usize,
    /// The state of the search for a reasoning closer in the bytes of the
    /// current block (`Grammar::closers`), and where it got to.
    closer: StateID,
    searched_to: Offset,
    /// The call context when the hold began, restored if the calls were
    /// only quoted: their indices and ids are not used up.
    next_index: usize,
    completed: usize,
    text_ids: HashSet<u64>,
}

/// A search for a reasoning closer from `from` on (in any state) up to
/// `to`, a chunk's end: the first closer it found, where it ends and its
/// length, or none. It answers for the closers that begin at or after
/// `from`: a closer found that begins at or after a later point is the
/// first to begin there (any that ended sooner would have been found), and
/// where none was found none lies.
#[derive(Clone, Copy, Debug)]
struct Search {
    from: Offset,
    to: Offset,
    found: Option<(Offset, usize)>,
}

impl Hold {
    /// How many more bytes text (or a skipped value) may add to the hold:
    /// at most `max_holdback` after the last held block, and the hold at
    /// most `max_call_bytes` in all.
    fn room(&self, start: Offset, pos: Offset, limits: &Limits) -> usize {
        let text = limits
            .max_holdback
            .saturating_sub(pos.since(self.text_from));
        let all = limits.max_call_bytes.saturating_sub(pos.since(start));
        text.min(all)
    }

    /// Whether text (or a skipped value) read past the hold's bound: a
    /// text byte was read where [`Hold::room`] was 0. Text mode reads no
    /// such byte, but a block that ends in text or in a skipped value has
    /// read its bytes in a block's window, wherever the chunk ended, and
    /// the next byte only would find the bound passed.
    fn passed(&self, start: Offset, pos: Offset, limits: &Limits) -> bool {
        let text = pos.since(self.text_from);
        text > limits.max_holdback || (text > 0 && pos.since(start) > limits.max_call_bytes)
    }
}

/// What a chunk's mode may read of it while calls are held.
pub(crate) struct Window {
    /// The chunk ends here for the mode (its bytes up to this index): at
    /// the end of a reasoning closer inside a held call, or at the byte the
    /// hold's bound allows no more.
    pub(crate) head: Option<usize>,
    /// A reasoning closer of this many bytes ends at `head`.
    pub(crate) closer: Option<usize>,
    /// No closer ends in the chunk: the closer search's state at its end,
    /// for [`Holds::searched`].
    pub(crate) searched: Option<StateID>,
}

impl Window {
    /// All of the chunk: no calls are held.
    pub(crate) const WHOLE: Window = Window {
        head: None,
        closer: None,
        searched: None,
    };
}

impl Holds {
    pub(crate) fn new(on: bool) -> Holds {
        Holds {
            on,
            hold: None,
            closer_search: None,
        }
    }

    /// Whether calls are held now: every event waits.
    #[inline]
    pub(crate) fn holding(&self) -> bool {
        self.hold.is_some()
    }

    /// A block opens at `start`, its marker ending at `mend`; `closer` is
    /// the closer search's start state. Inside reasoning (`in_reasoning`),
    /// the first one begins a hold; while one is on, the search begins
    /// again after the marker.
    pub(crate) fn block_opens(
        &mut self,
        in_reasoning: bool,
        start: Offset,
        mend: Offset,
        closer: StateID,
        pending: &mut Pending,
        session: &Session,
    ) {
        if let Some(h) = &mut self.hold {
            h.closer = closer;
            h.searched_to = mend;
        } else if in_reasoning && self.on {
            // A call inside reasoning: held from its marker.
            tracing::trace!(offset = start.get(), "held inside reasoning");
            pending.start_raw();
            self.hold = Some(Hold {
                text_from: start,
                counted: session.completed,
                closer,
                searched_to: mend,
                next_index: session.next_index,
                completed: session.completed,
                text_ids: session.text_ids.clone(),
            });
        }
    }

    /// The part of `ch` from byte `i` on that the mode may read while calls
    /// are held (all of it when none are); `in_block`: the parser is in a
    /// block, whose bytes are searched for one of the reasoning `closers`.
    /// `None` when the hold has reached its bound, which ends it.
    pub(crate) fn window(
        &mut self,
        in_block: bool,
        closers: Option<&MarkerSet>,
        pending: &Pending,
        limits: &Limits,
        ch: &Chunk<'_>,
        i: usize,
    ) -> Option<Window> {
        let Some(h) = &self.hold else {
            return Some(Window::WHOLE);
        };
        match (in_block, closers) {
            (true, Some(set)) => Some(self.closer_window(set, ch, i)),
            (true, None) => Some(Window::WHOLE),
            (false, _) => {
                // Text may add only so much to the hold; the byte that
                // would exceed it ends the hold.
                let start = pending.raw.as_ref().map_or(pending.pos, |r| r.start);
                let room = h.room(start, pending.pos, limits);
                if room == 0 {
                    return None;
                }
                let head = (ch.bytes.len() - i > room).then_some(i + room);
                Some(Window {
                    head,
                    ..Window::WHOLE
                })
            }
        }
    }

    /// At the end of the stream, outside a block: whether the text after
    /// the last held call went past the hold's bound (see `Hold::passed`),
    /// which ends the hold as a text byte past it would have.
    pub(crate) fn passed_bound(&self, pending: &Pending, limits: &Limits) -> bool {
        self.hold.as_ref().is_some_and(|h| {
            let start = pending.raw.as_ref().map_or(pending.pos, |r| r.start);
            h.passed(start, pending.pos, limits)
        })
    }

    /// A held block read to the end of `ch` without meeting a closer: the
    /// search's state there (from [`Window::searched`]).
    pub(crate) fn searched(&mut self, sid: StateID, ch: &Chunk<'_>) {
        if let Some(h) = &mut self.hold {
            h.closer = sid;
            h.searched_to = h.searched_to.max(ch.end());
        }
    }

    /// Inside a held call: where a reasoning closer ends in `ch`, if one
    /// does (the chunk given to the block then ends there). Only bytes read
    /// for the first time are searched: bytes a block reads again were
    /// searched when they came.
    fn closer_window(&mut self, set: &MarkerSet, ch: &Chunk<'_>, i: usize) -> Window {
        let Some(h) = &self.hold else {
            return Window::WHOLE;
        };
        let len = ch.bytes.len();
        let fresh = h.searched_to.since(ch.base).clamp(i, len);
        let mut sid = h.closer;
        let scan = |sid: &mut StateID, from: usize, to: usize| {
            let hay = &ch.bytes[from..to];
            match set.scan(sid, hay, &[], false, &mut |_, _| true) {
                Found::Marker { pattern, end } => {
                    crate::work::count_closer_search(end);
                    let len = set.pattern(pattern).bytes.len();
                    Some((ch.base.after(from + end), len))
                }
                Found::Nothing => {
                    crate::work::count_closer_search(hay.len());
                    None
                }
            }
        };
        // First the bytes a closer begun before `fresh` (one the state
        // holds part of) may end in; past them, a closer begins after
        // `fresh`, and the last search of this chunk, begun before, knows
        // of it.
        let near = fresh.saturating_add(set.longest()).min(len);
        let mut found = scan(&mut sid, fresh, near);
        if found.is_none() && near < len {
            let at = ch.base.after(near);
            found = match self.known_closer(at, ch.end()) {
                Some(Some(f)) => Some(f),
                Some(None) => {
                    // None lies in the rest: the state at its end is that
                    // of its last bytes, as many as the longest closer
                    // (which none holds).
                    let tail = len.saturating_sub(set.longest());
                    if tail > near {
                        sid = set.start();
                    }
                    scan(&mut sid, tail.max(near), len)
                }
                None => {
                    // A search of the rest of the chunk, kept for the
                    // chunk's later blocks.
                    let f = scan(&mut sid, near, len);
                    self.closer_search = Some(Search {
                        from: at,
                        to: ch.end(),
                        found: f,
                    });
                    f
                }
            };
        }
        match found {
            Some((end, n)) => Window {
                head: Some(end.since(ch.base)),
                closer: Some(n),
                searched: None,
            },
            None => Window {
                searched: Some(sid),
                ..Window::WHOLE
            },
        }
    }

    /// What the kept closer search says of the bytes from `at` to `end`
    /// (a chunk's end): `Some(found)` if it answers for them, by their
    /// place in the stream — it began at or before `at` and read at least
    /// as far (in this chunk, or in the bytes a failed block gives back,
    /// read again from the pending buffer).
    fn known_closer(&self, at: Offset, end: Offset) -> Option<Option<(Offset, usize)>> {
        self.closer_search
            .filter(|s| s.from <= at && s.to >= end)
            .and_then(|s| match s.found {
                // A closer that begins at or after `at`: the first; past
                // this chunk's end, none ends in it.
                Some((e, n)) if e.before(n) >= at => Some((e <= end).then_some((e, n))),
                // One that began before `at` says nothing of the bytes
                // after it.
                Some(_) => None,
                None => Some(None),
            })
    }

    /// A block ended while calls are held. If none was completed since the
    /// hold began, there is nothing to hold: a call the block began and
    /// could not finish was quoted markup, reasoning as written; a block
    /// that began none (a text envelope, markup that is no call) gives
    /// what it gives outside reasoning, but for the report of its failure
    /// (markup inside reasoning is reasoning, not a broken call). Else, if
    /// it completed a call, the text after it starts counting.
    pub(crate) fn left_block(
        &mut self,
        session: &mut Session,
        pending: &mut Pending,
        deferred: &mut Vec<Event>,
        out: &mut dyn Sink,
    ) {
        let Some(h) = &mut self.hold else {
            return;
        };
        if session.completed == h.completed {
            if deferred
                .iter()
                .any(|e| matches!(e, Event::ToolCallStart { .. }))
            {
                self.release(false, session, pending, deferred, out);
            } else {
                self.send(false, pending, deferred, out);
            }
        } else if session.completed != h.counted {
            h.text_from = pending.pos;
            h.counted = session.completed;
        }
    }

    /// Ends the hold: its events go out as they were (`failures`: with the
    /// diagnostics of blocks that failed).
    pub(crate) fn send(
        &mut self,
        failures: bool,
        pending: &mut Pending,
        deferred: &mut Vec<Event>,
        out: &mut dyn Sink,
    ) {
        if self.hold.take().is_some() {
            pending.raw = None;
            for e in deferred.drain(..) {
                let failure =
                    matches!(&e, Event::Diagnostic(d) if d.kind != DiagnosticKind::InvalidUtf8);
                if failures || !failure {
                    out.event(e.as_ref());
                }
            }
        }
    }

    /// Ends the hold: the calls were quoted. Their events are dropped and
    /// the bytes from the first one's marker on are released as reasoning
    /// (as text, with separation off); `limit`: because the hold reached
    /// its bound (after a diagnostic).
    pub(crate) fn release(
        &mut self,
        limit: bool,
        session: &mut Session,
        pending: &mut Pending,
        deferred: &mut Vec<Event>,
        out: &mut dyn Sink,
    ) {
        let Some(h) = self.hold.take() else {
            return;
        };
        deferred.clear();
        session.next_index = h.next_index;
        session.completed = h.completed;
        if limit {
            out.event(EventRef::Diagnostic(&limit_reached(
                &h,
                pending.pos,
                &session.limits,
            )));
        }
        session.text_ids = h.text_ids;
        pending.release_raw(out);
    }
}

/// The diagnostic of a hold that reached its bound, at `pos`.
fn limit_reached(h: &Hold, pos: Offset, limits: &Limits) -> Diagnostic {
    // The byte at which the text after the last held call passed its
    // bound, if it did. (A block that turned out to be no call is text for
    // that count, but the check is made when the parser is back in text:
    // where that is, a block's reading window decides, not the input. The
    // bound of the whole hold is checked at the byte after a call being
    // read.)
    let offset = if pos.since(h.text_from) > limits.max_holdback {
        h.text_from.after(limits.max_holdback)
    } else {
        pos
    }
    .get();
    let message = format!(
        "a call inside a reasoning block that has not closed was held until \
         the hold's limit (max_holdback {} bytes of reasoning after it, \
         max_call_bytes {} in all); it is taken as quoted: its bytes are reasoning",
        limits.max_holdback, limits.max_call_bytes
    );
    tracing::debug!(offset, "{message}");
    Diagnostic {
        kind: DiagnosticKind::Limit,
        offset,
        message,
    }
}

/// A reasoning closer of `len` bytes ended with the last byte a held block
/// read: the block's bytes before the closer go back to the copy of the
/// input they came from, and the pending buffer holds the closer, the
/// marker text mode then reads (which closes the reasoning block and the
/// hold). `false`: no copy is kept (no hold is on), nothing changed.
pub(crate) fn closer_inside_block(pending: &mut Pending, len: usize) -> bool {
    let p = pending;
    let Some(raw) = &p.raw else {
        return false;
    };
    let at = p.pos.before(len);
    let to = p.pos.index_in(raw.start, raw.bytes.len());
    let from = at.index_in(raw.start, to);
    p.buf.clear();
    p.buf.extend_from_slice(&raw.bytes[from..to]);
    p.buf_start = at;
    tracing::trace!(offset = at.get(), "reasoning closes inside a held call");
    true
}
