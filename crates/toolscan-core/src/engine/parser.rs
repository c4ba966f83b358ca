//! The streaming parser: one state machine over the bytes of a response.
//!
//! It is always in one of three modes:
//! - **text**: stepping the grammar's marker automaton; bytes that can no
//!   longer start a marker are released as text at once, borrowed from the
//!   chunk;
//! - **block**: running the program of the opener that matched
//!   (`block.rs`), with every byte of the block kept until the block's fate
//!   is known (a completed call drops them, a failure releases them as
//!   text);
//! - **skip**: a tentative block turned out not to be a call; the rest of its
//!   JSON value is scanned (so nothing inside it opens a call) and released
//!   as text.
//!
//! The parser is its mode plus the state every mode shares (`StreamState`), so a
//! mode's code borrows the stream state and its own state separately.
//! Everything it needs between chunks is in the struct, so a feed costs
//! O(bytes fed) however the input is chunked.

use std::collections::HashSet;
use std::sync::Arc;

use crate::batch::Events;
use crate::engine::block::{self, Block, BlockCtx, Outcome};
use crate::engine::call::calls::Session;
use crate::engine::pending::{Chunk, Pending};
use crate::event::{DiagnosticKind, Event, EventRef, FinishReason};
use crate::ids::IdSource;
use crate::lang::format::Trust;
use crate::lang::grammar::{Grammar, PatKind, Watch};
use crate::lang::program::Op;
use crate::offset::Offset;
use crate::options::{CallsInReasoning, Limits, Options};
use crate::read::json::{Ignore, JsonScanner};
use crate::scan::marker::{is_word, line_tail2, Found, StateID};
use crate::sink::Sink;

/// A streaming tool-call parser for one response.
///
/// Feed it chunks as they arrive and finish it once at the end. Two ways
/// to receive events:
///
/// - [`feed_with`](Parser::feed_with) / [`feed_str_with`](Parser::feed_str_with)
///   / [`finish_with`](Parser::finish_with) hand each event to a
///   [`Sink`] as an [`EventRef`] borrowing its text (from the chunk itself
///   whenever it can): no allocation per event;
/// - [`feed`](Parser::feed) / [`finish`](Parser::finish) return owned
///   [`Event`]s in a `Vec`.
///
/// After `finish`, feeding does nothing.
///
/// ```
/// use toolscan_core::{Event, Parser};
/// let mut p = Parser::for_format("mistral-v11").unwrap();
/// let mut ev = p.feed(b"[TOOL_CALLS]get_time[ARGS]{}");
/// // no end marker: the call is dispatched as its JSON value closes
/// assert!(matches!(ev.last(), Some(Event::ToolCallEnd { .. })));
/// ev.extend(p.finish());
/// ```
#[derive(Debug)]
pub struct Parser {
    g: Arc<Grammar>,
    stream: StreamState,
    mode: Mode,
    /// The events of held calls (and of what followed them), while a
    /// [`Hold`] is on: sent at `finish`, dropped if the reasoning block
    /// closes.
    deferred: Vec<Event>,
}

/// What every mode works with.
#[derive(Debug)]
struct StreamState {
    /// No limit trips before a bare marker's next byte (see [`bare_room`]).
    bare_room: bool,
    session: Session,
    pending: Pending,
    /// Reasoning separation is on.
    reasoning: bool,
    /// Reasoning blocks are recognised: with separation on, or when calls
    /// inside them are not calls at once.
    tracks_think: bool,
    /// Inside a reasoning block (between reasoning markers), whether or
    /// not its text goes out as reasoning.
    think: bool,
    /// [`CallsInReasoning::Text`]: a call inside a reasoning block is held
    /// until the block closes (reasoning) or the stream ends (a call).
    hold_calls: bool,
    /// The calls held, if any.
    hold: Option<Hold>,
    /// The last search for a reasoning closer that read to a chunk's end:
    /// a later held block of the same chunk reuses its answer instead of
    /// searching the rest of the chunk once more (each held call would
    /// cost the rest of a chunk that holds them all, the square of it).
    /// Kept across holds: a held block that fails ends its hold, and the
    /// next one's, in the same chunk, asks the same question.
    closer_search: Option<Search>,
    /// [`Options::complete_at_stop`].
    complete_at_stop: bool,
    finished: bool,
    /// The stream ended inside a call.
    truncated: bool,
}

/// A bare block opened by a marker of up to `marker_len` bytes would read
/// the byte after it: no limit trips first (a limit's diagnostic is never
/// silent, so the marker scan may stand for such a block, with
/// `MarkerSet::scan`'s `follow`, only when the block would fail on that
/// byte).
fn bare_room(limits: &crate::options::Limits, marker_len: usize) -> bool {
    limits.max_holdback.min(limits.max_call_bytes) > marker_len && limits.max_depth >= 2
}

/// The sink of a step at `finish`: the held events while calls are held
/// (what the end of the stream makes a block read again may begin a hold:
/// the events of that block then follow the held ones), else `out`.
macro_rules! held_or {
    ($self:ident, $out:ident) => {
        if $self.stream.hold.is_some() {
            &mut $self.deferred as &mut dyn Sink
        } else {
            &mut *$out
        }
    };
}

/// The largest chunk the fast paths take: a long chunk goes the ordinary
/// way, which searches it once too (a fast path's look first would search
/// it twice whenever it does hold a rare byte).
const TOKEN_SIZED: usize = 64;

#[derive(Debug)]
enum Mode {
    Text(TextState),
    Block(Box<Block>),
    Skip(Box<JsonScanner>),
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
}

/// Text mode: the marker automaton's state (its depth is the number of
/// bytes held back).
#[derive(Clone, Copy, Debug)]
struct TextState {
    sid: StateID,
}

impl Parser {
    /// A parser for a compiled grammar.
    pub fn new(grammar: Arc<Grammar>, options: Options) -> Parser {
        let hold_calls = options.calls_in_reasoning == CallsInReasoning::Text;
        let tracks_think = options.reasoning || hold_calls;
        let think = tracks_think && options.starts_in_reasoning;
        let in_reasoning = options.reasoning && think;
        let bare_room = bare_room(&options.limits, grammar.follow_len);
        let mut session = Session::new(IdSource::new(&options.ids), options.tools, options.limits);
        session.admit = options.admit;
        session.check = options.check_calls;
        session.normalize_names = options.normalize_tool_names;
        let stream = StreamState {
            bare_room,
            session,
            pending: Pending {
                in_reasoning,
                track_lines: grammar.text_sets().any(|t| t.set.has_line_start()),
                track_words: grammar.text_sets().any(|t| t.set.has_word_start()),
                ..Pending::default()
            },
            reasoning: options.reasoning,
            tracks_think,
            think,
            hold_calls,
            hold: None,
            closer_search: None,
            complete_at_stop: options.complete_at_stop,
            finished: false,
            truncated: false,
        };
        let mode = match grammar.start {
            // The completion begins inside the format's markup.
            Some(k) => Mode::Block(Box::new(Block::new(
                k,
                grammar.openers[k].trust != Trust::Definite,
            ))),
            None => Mode::Text(stream.text_state(&grammar)),
        };
        Parser {
            g: grammar,
            stream,
            mode,
            deferred: Vec::new(),
        }
    }

    /// How many bytes were fed so far.
    pub fn offset(&self) -> u64 {
        self.stream.pending.pos.get()
    }

    /// Whether [`finish`](Parser::finish) was called.
    pub fn is_finished(&self) -> bool {
        self.stream.finished
    }

    /// Feeds the next chunk of bytes; its events go to `sink`.
    ///
    /// The chunk is checked for UTF-8 once (bytes that are not become
    /// U+FFFD in the text, with an `invalid_utf8` diagnostic); text that is
    /// decided within it reaches the sink borrowed from it.
    pub fn feed_with<S: Sink + ?Sized>(&mut self, chunk: &[u8], sink: &mut S) {
        if self.stream.finished || chunk.is_empty() {
            return;
        }
        if self.fast(chunk, crate::scan::utf8::as_text, &mut SinkRef(sink)) {
            return;
        }
        let ch = Chunk::from_bytes(chunk, self.stream.pending.pos);
        self.process(&ch, &mut SinkRef(sink));
    }

    /// Feeds the next chunk of text (e.g. an SSE `delta.content`, already
    /// decoded): like [`feed_with`](Parser::feed_with) without the UTF-8
    /// check.
    pub fn feed_str_with<S: Sink + ?Sized>(&mut self, chunk: &str, sink: &mut S) {
        if self.stream.finished || chunk.is_empty() {
            return;
        }
        if self.fast(chunk.as_bytes(), |_| Some(chunk), &mut SinkRef(sink)) {
            return;
        }
        let ch = Chunk::from_str(chunk, self.stream.pending.pos);
        self.process(&ch, &mut SinkRef(sink));
    }

    /// The fast paths of a token-sized chunk, `text` its UTF-8 check: plain
    /// text ([`plain`](Parser::plain)), text after a hold-back
    /// ([`held_then_plain`](Parser::held_then_plain)), text before a
    /// hold-back ([`plain_then_held`](Parser::plain_then_held)), the next
    /// chunk of a steady run or a chunk inside a string or value of a block
    /// ([`string_run`](Parser::string_run)). `true`: the chunk was fed;
    /// `false`: nothing was done.
    #[inline]
    fn fast<'c>(
        &mut self,
        chunk: &'c [u8],
        text: impl FnOnce(&'c [u8]) -> Option<&'c str>,
        out: &mut dyn Sink,
    ) -> bool {
        match &self.mode {
            Mode::Text(_) if self.plain(chunk) => text(chunk).is_some_and(|t| {
                self.stream.pending.pass_text(t, out);
                true
            }),
            Mode::Text(_) if self.held_then_plain(chunk) => text(chunk).is_some_and(|t| {
                self.release_held_and_pass(t, out);
                true
            }),
            Mode::Text(_) => match self.plain_then_held(chunk) {
                Some((held, sid)) => {
                    text(chunk).is_some_and(|t| self.pass_and_hold(t, held, sid, out))
                }
                None => false,
            },
            Mode::Block(_) if chunk.len() <= TOKEN_SIZED && self.stream.hold.is_none() => {
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
                self.string_run(t, out)
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
    fn string_run(&mut self, text: &str, out: &mut dyn Sink) -> bool {
        let Mode::Block(b) = &mut self.mode else {
            return false;
        };
        let prog = &self.g.openers[b.opener].program;
        block::direct(prog, b, &mut self.stream.env(out), text)
    }

    /// Brings the block's counters up to date after a steady run (see
    /// `block::Block::settle`): the first thing every way into the block
    /// but the run's own does (`block::direct` and `block::run` do it
    /// too).
    #[inline]
    fn settle(&mut self) {
        if let Mode::Block(b) = &mut self.mode {
            b.settle();
        }
    }

    /// The fast path of the text mode for token-sized chunks: nothing is
    /// pending, the automaton is at its start, and nothing in `chunk` can
    /// begin a marker. (Its end is checked to be a whole character by the
    /// caller's UTF-8 check.) A long chunk goes the ordinary way, which
    /// searches it once too: looking at it here first would search it
    /// twice whenever it does hold a rare byte.
    #[inline]
    fn plain(&self, chunk: &[u8]) -> bool {
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
            && self.stream.hold.is_none()
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
        if p.buf.is_empty() && st.sid == set.start() && self.stream.hold.is_none() {
            set.plain_then_held(chunk, p.after_word)
        } else {
            None
        }
    }

    /// Passes `text` but for its last `held` bytes, which are held with
    /// the automaton at `sid` (see [`plain_then_held`](Parser::plain_then_held)):
    /// what the ordinary way does with such a chunk. `false` (nothing
    /// done) if they do not begin a character.
    fn pass_and_hold(&mut self, text: &str, held: usize, sid: StateID, out: &mut dyn Sink) -> bool {
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
    fn held_then_plain(&self, chunk: &[u8]) -> bool {
        let Mode::Text(st) = &self.mode else {
            return false;
        };
        let set = &self.g.text_set(self.stream.watch()).set;
        let p = &self.stream.pending;
        if chunk.len() > TOKEN_SIZED
            || p.buf.is_empty()
            || self.stream.hold.is_some()
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
    /// [`held_then_plain`](Parser::held_then_plain)).
    #[inline]
    fn release_held_and_pass(&mut self, text: &str, out: &mut dyn Sink) {
        let p = &mut self.stream.pending;
        p.release_all(out);
        p.pass_text(text, out);
        if let Mode::Text(st) = &mut self.mode {
            st.sid = self.g.text_set(self.stream.watch()).set.start();
        }
    }

    /// Ends the stream; the remaining events, [`EventRef::Done`] last, go to
    /// `sink`.
    pub fn finish_with<S: Sink + ?Sized>(&mut self, sink: &mut S) {
        if self.stream.finished {
            return;
        }
        let out = &mut SinkRef(sink);
        self.settle();
        self.stream.finished = true;
        // The reasoning block never closed: the held calls were meant.
        self.send_held(true, out);
        self.finish_block(out);
        // What the end of the stream made a block read again (an unclosed
        // value's tail) may have begun another hold: it is as unclosed.
        self.send_held(true, out);
        self.stream.pending.release_all(out);
        let finish_reason = if self.stream.truncated {
            FinishReason::Length
        } else if self.stream.session.completed > 0 {
            FinishReason::ToolCalls
        } else {
            FinishReason::Stop
        };
        out.event(EventRef::Done { finish_reason });
    }

    /// Ends the stream at a stop sequence (the upstream said
    /// `finish_reason: "stop"`): like [`finish_with`](Parser::finish_with),
    /// but with [`Options::complete_at_stop`] a call whose arguments are
    /// complete and whose closing markup the stop sequence cut is
    /// completed rather than truncated.
    ///
    /// ```
    /// use toolscan_core::{Event, Options, Parser, Registry};
    ///
    /// let g = Registry::builtin().grammar("hermes").unwrap();
    /// // The client asked to stop at `</tool_call>`.
    /// let input = b"<tool_call>{\"name\": \"f\", \"arguments\": {\"a\": 1}}";
    /// let mut p = Parser::new(g.clone(), Options::new().with_complete_at_stop(true));
    /// let mut events = p.feed(input);
    /// p.finish_at_stop_with(&mut events);
    /// assert!(events.iter().any(|e| matches!(e, Event::ToolCallEnd { .. })));
    ///
    /// // An ordinary end of the stream: the call was cut short.
    /// let mut p = Parser::new(g, Options::new().with_complete_at_stop(true));
    /// let mut events = p.feed(input);
    /// p.finish_with(&mut events);
    /// assert!(!events.iter().any(|e| matches!(e, Event::ToolCallEnd { .. })));
    /// ```
    pub fn finish_at_stop_with<S: Sink + ?Sized>(&mut self, sink: &mut S) {
        self.stream.session.at_stop = self.stream.complete_at_stop;
        self.finish_with(sink);
    }

    /// [`finish_at_stop_with`](Parser::finish_at_stop_with), returning the
    /// remaining events, `done` last.
    pub fn finish_at_stop(&mut self) -> Events {
        let mut out = Events::new();
        self.finish_at_stop_with(&mut out);
        out
    }

    /// Feeds the next chunk; returns the events it completes.
    ///
    /// The one event a token-sized chunk makes is kept inline in
    /// [`Events`]: no allocation.
    pub fn feed(&mut self, chunk: &[u8]) -> Events {
        let mut out = Events::new();
        self.feed_with(chunk, &mut out);
        out
    }

    /// Feeds the next chunk, appending the events it completes to `out`
    /// (a delta continuing `out`'s last event is merged into it).
    #[inline]
    pub fn feed_into(&mut self, chunk: &[u8], out: &mut Vec<Event>) {
        self.feed_with(chunk, out);
    }

    /// Ends the stream; returns the remaining events, `done` last.
    pub fn finish(&mut self) -> Events {
        let mut out = Events::new();
        self.finish_with(&mut out);
        out
    }

    /// Ends the stream, appending the remaining events (`done` last) to
    /// `out`.
    pub fn finish_into(&mut self, out: &mut Vec<Event>) {
        self.finish_with(out);
    }

    fn process(&mut self, ch: &Chunk<'_>, out: &mut dyn Sink) {
        self.settle();
        let mut i = 0;
        while i < ch.bytes.len() {
            // While calls are held, text may add only so much to the hold;
            // the byte that would exceed it ends the hold.
            let mut head = None;
            // Inside a held call: where a reasoning closer ends, if one does
            // in this chunk (the chunk given to the block then ends there).
            let mut closer = None;
            let mut searched = None;
            // A search of the rest of the chunk, for the chunk's later
            // blocks.
            let mut search = None;
            match (&self.stream.hold, &self.mode, &self.g.closers) {
                // (Only bytes read for the first time: bytes a block reads
                // again were searched when they came.)
                (Some(h), Mode::Block(_), Some(set)) => {
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
                    // First the bytes a closer begun before `fresh` (one
                    // the state holds part of) may end in; past them, a
                    // closer begins after `fresh`, and the last search of
                    // this chunk, begun before, knows of it.
                    let near = fresh.saturating_add(set.longest()).min(len);
                    let mut found = scan(&mut sid, fresh, near);
                    if found.is_none() && near < len {
                        let at = ch.base.after(near);
                        // The kept search answers for the bytes it read,
                        // by their place in the stream: this chunk's (or
                        // the bytes a failed block gives back, read again
                        // from the pending buffer) when it began at or
                        // before `at` and read at least as far.
                        let known = self
                            .stream
                            .closer_search
                            .filter(|s| s.from <= at && s.to >= ch.end())
                            .and_then(|s| match s.found {
                                // A closer that begins at or after `at`:
                                // the first; past this chunk's end, none
                                // ends in it.
                                Some((end, n)) if end.before(n) >= at => {
                                    Some((end <= ch.end()).then_some((end, n)))
                                }
                                // One that began before `at` says nothing
                                // of the bytes after it.
                                Some(_) => None,
                                None => Some(None),
                            });
                        found = match known {
                            Some(Some(f)) => Some(f),
                            Some(None) => {
                                // None lies in the rest: the state at its
                                // end is that of its last bytes, as many
                                // as the longest closer (which none holds).
                                let tail = len.saturating_sub(set.longest());
                                if tail > near {
                                    sid = set.start();
                                }
                                scan(&mut sid, tail.max(near), len)
                            }
                            None => {
                                let f = scan(&mut sid, near, len);
                                search = Some(Search {
                                    from: at,
                                    to: ch.end(),
                                    found: f,
                                });
                                f
                            }
                        };
                    }
                    match found {
                        Some((end, n)) => {
                            head = Some(ch.head(end.since(ch.base)));
                            closer = Some(n);
                        }
                        None => searched = Some(sid),
                    }
                }
                (Some(h), Mode::Text(_) | Mode::Skip(_), _) => {
                    let p = &self.stream.pending;
                    let start = p.raw.as_ref().map_or(p.pos, |r| r.start);
                    let room = h.room(start, p.pos, &self.stream.session.limits);
                    if room == 0 {
                        self.release_hold(true, out);
                        continue;
                    }
                    if ch.bytes.len() - i > room {
                        head = Some(ch.head(i + room));
                    }
                }
                _ => {}
            }
            if search.is_some() {
                self.stream.closer_search = search;
            }
            let c = head.as_ref().unwrap_or(ch);
            let sink: &mut dyn Sink = if self.stream.hold.is_some() {
                &mut self.deferred
            } else {
                out
            };
            let (next, after) = match &mut self.mode {
                Mode::Text(st) => self.stream.run_text(&self.g, st, c, i, sink),
                Mode::Block(b) => {
                    let prog = &self.g.openers[b.opener].program;
                    let (n, outcome) = block::run(prog, b, &mut self.stream.env(sink), c, i);
                    (n, self.stream.after_block(outcome))
                }
                Mode::Skip(sc) => self.stream.run_skip(sc, c, i, sink),
            };
            i = next;
            if !matches!(after, After::Stay) {
                self.switch(after, out);
            } else if let Some(len) = closer {
                // The block read up to the end of a reasoning closer: the
                // reasoning block closed inside the call, which was quoted.
                self.closed_inside_block(len, out);
            } else if let (Some(h), Some(sid)) = (&mut self.stream.hold, searched) {
                h.closer = sid;
                h.searched_to = h.searched_to.max(ch.end());
            }
        }
    }

    /// A reasoning closer of `len` bytes ended with the last byte a held
    /// block read: the block is dropped, everything held before the closer
    /// is reasoning, and the closer closes the reasoning block.
    fn closed_inside_block(&mut self, len: usize, out: &mut dyn Sink) {
        let p = &mut self.stream.pending;
        let Some(raw) = &p.raw else {
            return;
        };
        let at = p.pos.before(len);
        let to = p.pos.index_in(raw.start, raw.bytes.len());
        let from = at.index_in(raw.start, to);
        p.buf.clear();
        p.buf.extend_from_slice(&raw.bytes[from..to]);
        p.buf_start = at;
        tracing::trace!(offset = at.get(), "reasoning closes inside a held call");
        self.mode = Mode::Text(self.stream.text_state(&self.g));
        self.switch(After::Think(false), out);
    }

    /// Applies a mode change.
    #[inline(never)]
    fn switch(&mut self, after: After, out: &mut dyn Sink) {
        let from_block = matches!(self.mode, Mode::Block(_));
        match after {
            After::Stay => {}
            After::Text => self.mode = Mode::Text(self.stream.text_state(&self.g)),
            After::Skip(sc) => self.mode = Mode::Skip(sc),
            After::Block(b) => self.mode = Mode::Block(b),
            After::Think(open) => {
                // The marker is the pending bytes. Calls held inside the
                // block that closes are reasoning.
                self.release_hold(false, out);
                let p = &mut self.stream.pending;
                if self.stream.reasoning {
                    let at = p.pos;
                    p.drop_upto(at);
                } else {
                    p.release_all(out);
                }
                self.stream.think = open;
                p.in_reasoning = open && self.stream.reasoning;
                self.mode = Mode::Text(self.stream.text_state(&self.g));
            }
            After::Replay(mode, bytes) => {
                // Bytes taken back from the pending buffer are fed again,
                // in the new mode, from where they began.
                let to_block = mode.is_some();
                self.mode = match mode {
                    Some(b) => Mode::Block(b),
                    None => Mode::Text(self.stream.text_state(&self.g)),
                };
                if from_block && !to_block {
                    self.left_block(out);
                }
                let ch = Chunk::from_bytes(&bytes, self.stream.pending.pos);
                self.process(&ch, out);
                return;
            }
            After::Reread(bytes) => {
                let ch = Chunk::from_bytes(&bytes, self.stream.pending.pos);
                self.process(&ch, out);
                return;
            }
        }
        if from_block && !matches!(self.mode, Mode::Block(_)) {
            self.left_block(out);
        }
    }

    /// A block ended while calls are held. If none was completed since the
    /// hold began, there is nothing to hold: a call the block began and
    /// could not finish was quoted markup, reasoning as written; a block
    /// that began none (a text envelope, markup that is no call) gives
    /// what it gives outside reasoning, but for the report of its failure
    /// (markup inside reasoning is reasoning, not a broken call). Else, if
    /// it completed a call, the text after it starts counting.
    fn left_block(&mut self, out: &mut dyn Sink) {
        let Some(h) = &mut self.stream.hold else {
            return;
        };
        if self.stream.session.completed == h.completed {
            if self
                .deferred
                .iter()
                .any(|e| matches!(e, Event::ToolCallStart { .. }))
            {
                self.release_hold(false, out);
            } else {
                self.send_held(false, out);
            }
        } else if self.stream.session.completed != h.counted {
            h.text_from = self.stream.pending.pos;
            h.counted = self.stream.session.completed;
        }
    }

    /// Ends the hold of calls inside a reasoning block: its events go out
    /// as they were (`failures`: with the diagnostics of blocks that failed).
    fn send_held(&mut self, failures: bool, out: &mut dyn Sink) {
        if self.stream.hold.take().is_some() {
            self.stream.pending.raw = None;
            for e in self.deferred.drain(..) {
                let failure =
                    matches!(&e, Event::Diagnostic(d) if d.kind != DiagnosticKind::InvalidUtf8);
                if failures || !failure {
                    out.event(e.as_ref());
                }
            }
        }
    }

    /// Ends the hold of calls inside a reasoning block: they were quoted.
    /// Their events are dropped and the bytes from the first one's marker
    /// on are released as reasoning (as text, with separation off);
    /// `limit`: because the hold reached its bound (after a diagnostic).
    fn release_hold(&mut self, limit: bool, out: &mut dyn Sink) {
        let Some(h) = self.stream.hold.take() else {
            return;
        };
        self.deferred.clear();
        let session = &mut self.stream.session;
        session.next_index = h.next_index;
        session.completed = h.completed;
        session.text_ids = h.text_ids;
        let p = &mut self.stream.pending;
        if limit {
            // The byte at which the text after the last held call passed
            // its bound, if it did. (A block that turned out to be no call
            // is text for that count, but the check is made when the parser
            // is back in text: where that is, a block's reading window
            // decides, not the input. The bound of the whole hold is
            // checked at the byte after a call being read.)
            let offset = if p.pos.since(h.text_from) > session.limits.max_holdback {
                h.text_from.after(session.limits.max_holdback)
            } else {
                p.pos
            }
            .get();
            let message = format!(
                "a call inside a reasoning block that has not closed was held until \
                 the hold's limit (max_holdback {} bytes of reasoning after it, \
                 max_call_bytes {} in all); it is taken as quoted: its bytes are reasoning",
                session.limits.max_holdback, session.limits.max_call_bytes
            );
            tracing::debug!(offset, "{message}");
            let d = crate::event::Diagnostic {
                kind: crate::event::DiagnosticKind::Limit,
                offset,
                message,
            };
            out.event(EventRef::Diagnostic(&d));
        }
        p.release_raw(out);
    }

    /// At `finish`: completes a block whose end the end of the stream may
    /// stand for, or reports it as truncated.
    fn finish_block(&mut self, out: &mut dyn Sink) {
        // Every step the end of the stream completes moves the program on;
        // a program that loops without reading gives up here.
        let mut budget = 0usize;
        loop {
            let Mode::Block(b) = &mut self.mode else {
                return;
            };
            let prog = &self.g.openers[b.opener].program;
            let ended = block::end_value_at_eof(prog, b, &mut self.stream.env(held_or!(self, out)));
            if let Some(block::Ended::Out(outcome)) = ended {
                // The call failed there: its bytes are text.
                let after = self.stream.after_block(outcome);
                self.switch(after, out);
                continue;
            }
            if let Some(block::Ended::Reread(at, tail)) = ended {
                // An unclosed value ended at markup it held: the block
                // reads what followed that markup again (and with nothing
                // after it, runs the steps that read nothing: Dispatch).
                let ch = Chunk::from_bytes(&tail, at);
                if tail.is_empty() {
                    let prog = &self.g.openers[b.opener].program;
                    let (_, outcome) =
                        block::run(prog, b, &mut self.stream.env(held_or!(self, out)), &ch, 0);
                    let after = self.stream.after_block(outcome);
                    self.switch(after, out);
                } else {
                    self.process(&ch, out);
                }
                continue;
            }
            let prog = &self.g.openers[b.opener].program;
            budget += 1;
            let moved = if budget > 2 * prog.len() + 2 {
                block::AtEnd::Stuck
            } else {
                block::at_end(prog, b, &mut self.stream.env(held_or!(self, out)))
            };
            match moved {
                block::AtEnd::Moved => {
                    // Run the steps that read nothing (Dispatch, End).
                    let empty = Chunk::from_str("", self.stream.pending.pos);
                    let (_, outcome) = block::run(
                        prog,
                        b,
                        &mut self.stream.env(held_or!(self, out)),
                        &empty,
                        0,
                    );
                    let after = self.stream.after_block(outcome);
                    self.switch(after, out);
                    continue;
                }
                block::AtEnd::Over(outcome) => {
                    let after = self.stream.after_block(outcome);
                    self.switch(after, out);
                    continue;
                }
                block::AtEnd::Stuck => {}
            }
            match prog.get(b.pc) {
                Some(Op::Then(_)) => {
                    // What earlier steps read belongs to the calls.
                    let from = match &b.st {
                        block::StepState::Then(t) => t.from,
                        _ => self.stream.pending.pos,
                    };
                    let p = &mut self.stream.pending;
                    // (Unless a failed call came after the last one:
                    // then they are text, as the failed call's.)
                    if b.failed_at != Some(b.calls.done) {
                        p.drop_upto(from);
                    }
                    p.release_all(held_or!(self, out));
                    block::end_block(b, &mut self.stream.env(held_or!(self, out)));
                    self.mode = Mode::Text(self.stream.text_state(&self.g));
                    return;
                }
                _ => {
                    // After a completed call, with no other one begun (an
                    // unclosed list of calls), the stream ended between
                    // calls: not a truncation.
                    let between_calls = b.calls.done > 0
                        && b.calls.call.is_none()
                        && match &b.st {
                            // `[{…}, ` promises another call
                            block::StepState::Json(js) => js.between_values(),
                            _ => true,
                        };
                    if !b.calls.silent() && !between_calls {
                        self.stream.truncated = true;
                        let mut message = "the stream ended inside a call".to_string();
                        if let Some(i) = b.calls.abandon() {
                            message.push_str(&format!(" (call #{i} is not dispatched)"));
                        }
                        message.push_str("; its bytes are kept as text");
                        let offset = self.stream.pending.pos.get();
                        tracing::debug!(offset, "{message}");
                        let d = crate::event::Diagnostic {
                            kind: crate::event::DiagnosticKind::Truncated,
                            offset,
                            message,
                        };
                        held_or!(self, out).event(EventRef::Diagnostic(&d));
                    }
                    self.stream.pending.release_all(held_or!(self, out));
                    self.mode = Mode::Text(self.stream.text_state(&self.g));
                    return;
                }
            }
        }
    }
}

/// A mode change decided by a mode's run.
enum After {
    Stay,
    Text,
    Skip(Box<JsonScanner>),
    Block(Box<Block>),
    /// Switch to the block (or to text), then feed these bytes again.
    Replay(Option<Box<Block>>, Vec<u8>),
    /// A reasoning block opens (`true`) or closes: its marker is the
    /// pending bytes.
    Think(bool),
    /// Stay in the block, and feed these bytes again.
    Reread(Vec<u8>),
}

impl StreamState {
    fn env<'a>(&'a mut self, out: &'a mut dyn Sink) -> BlockCtx<'a> {
        BlockCtx {
            pending: &mut self.pending,
            session: &mut self.session,
            out,
        }
    }

    /// Which marker set of text is live.
    fn watch(&self) -> Watch {
        match (self.tracks_think, self.think) {
            (false, _) => Watch::Openers,
            (true, false) => Watch::ThinkOpens,
            (true, true) => Watch::ThinkCloses,
        }
    }

    fn text_state(&self, g: &Grammar) -> TextState {
        TextState {
            sid: g.text_set(self.watch()).set.start(),
        }
    }

    fn after_block(&mut self, outcome: Outcome) -> After {
        match outcome {
            Outcome::NeedMore => After::Stay,
            Outcome::Text => After::Text,
            Outcome::Skip(sc) => After::Skip(sc),
            Outcome::Replay(bytes) => After::Replay(None, bytes),
            Outcome::Reread(bytes) => After::Reread(bytes),
        }
    }

    fn run_text(
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
                        if let Some(h) = &mut self.hold {
                            h.closer = closer;
                            h.searched_to = mend;
                        } else if self.think && self.hold_calls {
                            // A call inside reasoning: held from its marker.
                            tracing::trace!(offset = start.get(), "held inside reasoning");
                            p.start_raw();
                            self.hold = Some(Hold {
                                text_from: start,
                                counted: self.session.completed,
                                closer,
                                searched_to: mend,
                                next_index: self.session.next_index,
                                completed: self.session.completed,
                                text_ids: self.session.text_ids.clone(),
                            });
                        }
                        let mut b = Box::new(Block::new(k, op.trust != Trust::Definite));
                        if op.replay {
                            // The marker is the start of the body: read it
                            // again as the block's first bytes.
                            let marker = std::mem::take(&mut p.buf);
                            p.pos = p.buf_start;
                            b.replayed_at = Some(p.buf_start);
                            After::Replay(Some(b), marker)
                        } else {
                            After::Block(b)
                        }
                    }
                };
                (i + end, after)
            }
        }
    }

    fn run_skip(
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

/// A `dyn Sink` view of any sink.
struct SinkRef<'a, S: ?Sized>(&'a mut S);

impl<S: Sink + ?Sized> Sink for SinkRef<'_, S> {
    #[inline]
    fn event(&mut self, event: EventRef<'_>) {
        self.0.event(event)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalogue::registry::Registry;
    use crate::ids::IdMint;
    use crate::lang::format::{Format, Opener, Step};

    fn run(format: Format, input: &[u8]) -> Vec<Event> {
        let mut reg = Registry::builtin();
        let name = format.name().to_string();
        reg.register(format).unwrap();
        let mut p = Parser::new(reg.grammar(&name).unwrap(), Options::default());
        let mut ev = p.feed(input);
        ev.extend(p.finish());
        ev.into_vec()
    }

    /// The fast paths of token-sized chunks against the ordinary way
    /// (`process`) alone, chunk by chunk: the same calls in the same
    /// chunks, text and reasoning released no later (a fast path may
    /// release sooner: the ordinary way holds the `f` of `of` for a marker
    /// that only begins a word), the same events in the end. Text and
    /// reasoning with marker fragments, in 1- to 8-byte chunks, under
    /// formats with many markers.
    #[test]
    fn the_fast_paths_are_the_ordinary_way_or_sooner() {
        // Text, reasoning, and every other event.
        fn released(events: &[Event]) -> (String, String, Vec<Event>) {
            let (mut text, mut reasoning, mut other) = (String::new(), String::new(), Vec::new());
            for e in events {
                match e {
                    Event::Text { delta } => text.push_str(delta),
                    Event::Reasoning { delta } => reasoning.push_str(delta),
                    e => other.push(e.clone()),
                }
            }
            (text, reasoning, other)
        }
        const PIECES: [&str; 24] = [
            " fun",
            "functools[",
            "<tool",
            "_call>",
            "<｜",
            "tool▁calls▁begin｜>",
            "[TOOL",
            "_CALLS]",
            "TOOL_CALL",
            "tool",
            "\n",
            "a ",
            "often ",
            "<func",
            "tion=f>",
            "[",
            "{\"name\": \"f\", \"arguments\": {}}",
            "</tool_call>",
            "Let ",
            "é ☂",
            "<think>",
            "</think>",
            "{\"x\": \"a<b\\n\"}",
            "<parameter=k>\nv <\n</parameter>",
        ];
        let mut rng = toolscan_testkit::rng::Rng::new(7);
        let options = || Options {
            ids: IdMint::Seeded(1),
            reasoning: true,
            ..Options::default()
        };
        for format in ["auto", "hermes", "deepseek-v3.1", "mistral", "qwen3-coder"] {
            let g = Registry::builtin().grammar(format).expect("format");
            for _ in 0..150 {
                let n = 1 + rng.below(10);
                let input: String = (0..n).map(|_| PIECES[rng.below(PIECES.len())]).collect();
                let size = 1 + rng.below(8);
                let (mut fast, mut ordinary) = (
                    Parser::new(g.clone(), options()),
                    Parser::new(g.clone(), options()),
                );
                let (mut a, mut b): (Vec<Event>, Vec<Event>) = (Vec::new(), Vec::new());
                for piece in toolscan_testkit::prose::pieces(&input, size) {
                    fast.feed_str_with(piece, &mut a);
                    let ch = Chunk::from_str(piece, ordinary.stream.pending.pos);
                    ordinary.process(&ch, &mut b);
                    let (fa, or) = (released(&a), released(&b));
                    let at = format!("{format}: {input:?} in pieces of {size}, at {piece:?}");
                    assert_eq!(fa.2, or.2, "{at}");
                    assert!(fa.0.starts_with(&or.0), "{at}: text {:?}, {:?}", fa.0, or.0);
                    assert!(
                        fa.1.starts_with(&or.1),
                        "{at}: reasoning {:?}, {:?}",
                        fa.1,
                        or.1
                    );
                }
                fast.finish_with(&mut a);
                ordinary.finish_with(&mut b);
                assert_eq!(
                    crate::coalesce(a),
                    crate::coalesce(b),
                    "{format}: {input:?} in pieces of {size}, at the end"
                );
            }
        }
    }

    fn text(ev: &[Event]) -> String {
        ev.iter()
            .filter_map(|e| match e {
                Event::Text { delta } => Some(delta.as_str()),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn a_program_that_loops_fails_instead_of_hanging() {
        let f = Format::new("loop", "", "").opener(Opener::definite(
            "<x>",
            vec![
                Step::label("a"),
                Step::goto("b"),
                Step::label("b"),
                Step::goto("a"),
            ],
        ));
        let ev = run(f, b"a<x>b");
        assert!(ev
            .iter()
            .any(|e| matches!(e, Event::Diagnostic(d) if d.message.contains("does not advance"))));
        assert_eq!(text(&ev), "a<x>b");
    }

    #[test]
    fn holdback_is_exactly_the_possible_marker_prefix() {
        let mut p = Parser::for_format("deepseek-v3.1").unwrap();
        let marker = "<｜tool▁calls▁begin｜>".as_bytes();
        // every proper prefix of the marker is held, nothing before it
        for k in 1..marker.len() {
            let mut p2 = Parser::for_format("deepseek-v3.1").unwrap();
            let mut input = b"ab".to_vec();
            input.extend_from_slice(&marker[..k]);
            let ev = p2.feed(&input);
            assert_eq!(ev, vec![Event::Text { delta: "ab".into() }], "prefix {k}");
        }
        let ev = p.feed(b"x<\xef\xbd");
        assert_eq!(ev, vec![Event::Text { delta: "x".into() }]);
        // the next byte rules the marker out: all of it is released
        let ev = p.feed(b"\x9cz");
        assert_eq!(
            ev,
            vec![Event::Text {
                delta: "<｜z".into()
            }]
        );
    }

    #[test]
    fn line_start_markers_only_at_line_start() {
        let mut p = Parser::for_format("tool-arguments").unwrap();
        let mut ev = p.feed(b"xTOOL: a\nARGUMENTS: {}\nTOOL: b\nARGUMENTS: {}");
        ev.extend(p.finish());
        let names: Vec<&str> = ev
            .iter()
            .filter_map(|e| match e {
                Event::ToolCallEnd { name, .. } => Some(name.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(names, ["b"]);
    }

    #[test]
    fn an_unclosed_list_after_a_complete_call_is_not_a_truncation() {
        let done = |input: &[u8]| {
            let mut p = Parser::for_format("mistral").unwrap();
            let mut ev = p.feed(input);
            ev.extend(p.finish());
            let diags = ev
                .iter()
                .filter(|e| matches!(e, Event::Diagnostic(_)))
                .count();
            (ev.last().cloned(), diags)
        };
        let (last, diags) = done(b"[TOOL_CALLS][{\"name\": \"a\", \"arguments\": {}}");
        assert_eq!(
            last,
            Some(Event::Done {
                finish_reason: FinishReason::ToolCalls
            })
        );
        assert_eq!(diags, 0);
        // a separator promises another call
        let (last, diags) = done(b"[TOOL_CALLS][{\"name\": \"a\", \"arguments\": {}}, ");
        assert_eq!(
            last,
            Some(Event::Done {
                finish_reason: FinishReason::Length
            })
        );
        assert_eq!(diags, 1);
        let (last, diags) = done(b"[TOOL_CALLS][{\"name\": \"a\", \"arguments\": {}}, {\"na");
        assert_eq!(
            last,
            Some(Event::Done {
                finish_reason: FinishReason::Length
            })
        );
        assert_eq!(diags, 1);
    }

    #[test]
    fn arguments_keep_the_models_text() {
        let mut p = Parser::for_format("hermes").unwrap();
        let ev = p
            .feed(b"<tool_call>{\"name\": \"f\", \"arguments\": {\"b\": 1, \"a\": 2}}</tool_call>");
        let Some(Event::ToolCallEnd { arguments, .. }) = ev.last() else {
            panic!("{ev:?}")
        };
        assert_eq!(arguments.as_str(), "{\"b\": 1, \"a\": 2}");
        let keys: Vec<String> = arguments.parse().unwrap().keys().cloned().collect();
        assert_eq!(keys, ["b", "a"]);
    }

    #[test]
    fn markup_words_in_prose_are_not_reported() {
        let mut p = Parser::for_format("auto").unwrap();
        let mut ev = p.feed(b"Use the <tool> element, or <tools> and <response> tags.");
        ev.extend(p.finish());
        assert!(
            !ev.iter().any(|e| matches!(e, Event::Diagnostic(_))),
            "{ev:?}"
        );
    }

    #[test]
    fn arguments_given_as_a_json_string_are_decoded_as_they_stream() {
        let mut p = Parser::for_format("mistral-v11").unwrap();
        let mut ev = Vec::new();
        for b in br#"[TOOL_CALLS]f[ARGS]"{\"city\": \"Z\u00fcrich \ud83d\ude00\"}""#.chunks(1) {
            p.feed_into(b, &mut ev);
        }
        let args: String = ev
            .iter()
            .filter_map(|e| match e {
                Event::ToolCallArgs { delta, .. } => Some(delta.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(args, "{\"city\": \"Zürich 😀\"}");
        let Some(Event::ToolCallEnd { arguments, .. }) = ev.last() else {
            panic!("{ev:?}")
        };
        assert_eq!(arguments.parse().unwrap()["city"], "Zürich 😀");
    }
}
