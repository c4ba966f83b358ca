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

use std::sync::Arc;

use crate::batch::Events;
use crate::engine::block::{self, Block, BlockCtx, Outcome};
use crate::engine::call::calls::Session;
use crate::engine::hold::{self, Holds, Window};
use crate::engine::pending::{Chunk, Pending};
use crate::event::{Event, EventRef, FinishReason};
use crate::ids::IdSource;
use crate::lang::format::Trust;
use crate::lang::grammar::{Grammar, Watch};
use crate::options::{CallsInReasoning, Options};
use crate::read::json::JsonScanner;
use crate::scan::marker::StateID;
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
    pub(super) g: Arc<Grammar>,
    pub(super) stream: StreamState,
    pub(super) mode: Mode,
    /// The events of held calls (and of what followed them), while a
    /// [`Hold`] is on: sent at `finish`, dropped if the reasoning block
    /// closes.
    pub(super) deferred: Vec<Event>,
}

/// What every mode works with.
#[derive(Debug)]
pub(super) struct StreamState {
    /// No limit trips before a bare marker's next byte (see [`bare_room`]).
    pub(super) bare_room: bool,
    pub(super) session: Session,
    pub(super) pending: Pending,
    /// Reasoning separation is on.
    pub(super) reasoning: bool,
    /// Reasoning blocks are recognised: with separation on, or when calls
    /// inside them are not calls at once.
    pub(super) tracks_think: bool,
    /// Inside a reasoning block (between reasoning markers), whether or
    /// not its text goes out as reasoning.
    pub(super) think: bool,
    /// Calls held inside reasoning (see `hold.rs`).
    pub(super) holds: Holds,
    /// [`Options::complete_at_stop`].
    pub(super) complete_at_stop: bool,
    pub(super) finished: bool,
    /// The stream ended inside a call.
    pub(super) truncated: bool,
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
        if $self.stream.holds.holding() {
            &mut $self.deferred as &mut dyn Sink
        } else {
            &mut *$out
        }
    };
}

#[derive(Debug)]
pub(super) enum Mode {
    Text(TextState),
    Block(Box<Block>),
    Skip(Box<JsonScanner>),
}

/// Text mode: the marker automaton's state (its depth is the number of
/// bytes held back).
#[derive(Clone, Copy, Debug)]
pub(super) struct TextState {
    pub(super) sid: StateID,
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
            holds: Holds::new(hold_calls),
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

    /// Ends the stream; the remaining events, [`EventRef::Done`] last, go to
    /// `sink`.
    pub fn finish_with<S: Sink + ?Sized>(&mut self, sink: &mut S) {
        if self.stream.finished {
            return;
        }
        let out = &mut SinkRef(sink);
        self.stream.finished = true;
        // Text that a block gave back, or a value it skipped, went past the
        // hold's bound: the calls were quoted, as when more text follows.
        let s = &self.stream;
        if !matches!(self.mode, Mode::Block(_))
            && s.holds.passed_bound(&s.pending, &s.session.limits)
        {
            self.release_hold(true, out);
        }
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
    #[inline]
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
        let mut i = 0;
        while i < ch.bytes.len() {
            // While calls are held: the part of the chunk the mode may read.
            let s = &mut self.stream;
            let window = if s.holds.holding() {
                let in_block = matches!(self.mode, Mode::Block(_));
                let closers = self.g.closers.as_ref();
                s.holds
                    .window(in_block, closers, &s.pending, &s.session.limits, ch, i)
            } else {
                Some(Window::WHOLE)
            };
            let Some(w) = window else {
                // The hold reached its bound.
                self.release_hold(true, out);
                continue;
            };
            let head = w.head.map(|n| ch.head(n));
            let c = head.as_ref().unwrap_or(ch);
            let sink: &mut dyn Sink = if self.stream.holds.holding() {
                &mut self.deferred
            } else {
                out
            };
            let (next, after) = match &mut self.mode {
                Mode::Text(st) => self.stream.run_text(&self.g, st, c, i, sink),
                Mode::Block(b) => {
                    let prog = &self.g.openers[b.opener()].program;
                    let (n, outcome) = block::run(prog, b, &mut self.stream.env(sink), c, i);
                    (n, self.stream.after_block(outcome))
                }
                Mode::Skip(sc) => self.stream.run_skip(sc, c, i, sink),
            };
            i = next;
            if !matches!(after, After::Stay) {
                self.switch(after, out);
            } else if let Some(len) = w.closer {
                // The block read up to the end of a reasoning closer: the
                // reasoning block closed inside the call, which was quoted.
                self.closed_inside_block(len, out);
            } else if let Some(sid) = w.searched {
                self.stream.holds.searched(sid, ch);
            }
        }
    }

    /// A reasoning closer of `len` bytes ended with the last byte a held
    /// block read: the block is dropped, everything held before the closer
    /// is reasoning, and the closer closes the reasoning block.
    fn closed_inside_block(&mut self, len: usize, out: &mut dyn Sink) {
        if hold::closer_inside_block(&mut self.stream.pending, len) {
            self.mode = Mode::Text(self.stream.text_state(&self.g));
            self.switch(After::Think(false), out);
        }
    }

    /// A block ended (see `Holds::left_block`).
    fn left_block(&mut self, out: &mut dyn Sink) {
        let s = &mut self.stream;
        s.holds
            .left_block(&mut s.session, &mut s.pending, &mut self.deferred, out);
    }

    /// Ends the hold: its events go out (see `Holds::send`).
    fn send_held(&mut self, failures: bool, out: &mut dyn Sink) {
        let s = &mut self.stream;
        s.holds
            .send(failures, &mut s.pending, &mut self.deferred, out);
    }

    /// Ends the hold: the calls were quoted (see `Holds::release`).
    fn release_hold(&mut self, limit: bool, out: &mut dyn Sink) {
        let s = &mut self.stream;
        s.holds.release(
            limit,
            &mut s.session,
            &mut s.pending,
            &mut self.deferred,
            out,
        );
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

    /// At `finish`: completes a block whose end the end of the stream may
    /// stand for, or reports it as truncated (`block::finish_step`, step by
    /// step, what each step gives applied here).
    fn finish_block(&mut self, out: &mut dyn Sink) {
        let mut budget = 0usize;
        loop {
            let Mode::Block(b) = &mut self.mode else {
                return;
            };
            let prog = &self.g.openers[b.opener()].program;
            let env = &mut self.stream.env(held_or!(self, out));
            match block::finish_step(prog, b, env, &mut budget) {
                block::Finish::Ran(outcome) => {
                    let after = self.stream.after_block(outcome);
                    self.switch(after, out);
                }
                block::Finish::Reread(at, tail) => self.process(&Chunk::from_bytes(&tail, at), out),
                block::Finish::Over { truncated } => {
                    self.stream.truncated |= truncated;
                    self.mode = Mode::Text(self.stream.text_state(&self.g));
                    return;
                }
            }
        }
    }
}

/// A mode change decided by a mode's run.
pub(super) enum After {
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
    pub(super) fn env<'a>(&'a mut self, out: &'a mut dyn Sink) -> BlockCtx<'a> {
        BlockCtx {
            pending: &mut self.pending,
            session: &mut self.session,
            out,
        }
    }

    /// Which marker set of text is live.
    pub(super) fn watch(&self) -> Watch {
        match (self.tracks_think, self.think) {
            (false, _) => Watch::Openers,
            (true, false) => Watch::ThinkOpens,
            (true, true) => Watch::ThinkCloses,
        }
    }

    pub(super) fn text_state(&self, g: &Grammar) -> TextState {
        TextState {
            sid: g.text_set(self.watch()).set.start(),
        }
    }

    pub(super) fn after_block(&mut self, outcome: Outcome) -> After {
        match outcome {
            Outcome::NeedMore => After::Stay,
            Outcome::Text => After::Text,
            Outcome::Skip(sc) => After::Skip(sc),
            Outcome::Replay(bytes) => After::Replay(None, bytes),
            Outcome::Reread(bytes) => After::Reread(bytes),
        }
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
