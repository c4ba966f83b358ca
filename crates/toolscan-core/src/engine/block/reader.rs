//! What a step's reader works with and says: the [`Block`] being read,
//! its [`BlockCtx`] (the pending buffer, the parser's call context, the sink),
//! the [`Input`] the limits leave it, and the [`Flow`] it returns. The
//! readers (the other files of this folder) see the block through these
//! alone; `run` (in `mod.rs`) dispatches to them.

use crate::engine::block::steady::{Lag, Steady};
use crate::engine::call::calls::{BlockCalls, Session};
use crate::engine::call::json::JsonMapping;
use crate::engine::pending::{Chunk, Pending};
use crate::offset::Offset;
use crate::read::json::JsonScanner;
use crate::read::python::{PyReader, Skip};
use crate::read::reason::{Reason, Stop};
use crate::read::steps::{CaptureWord, LitMatch, ThenMatch};
use crate::read::value::ValueRead;
use crate::sink::Sink;

/// A block being read, as the parser keeps it: its [`Reading`] and the
/// steady run that may be on (see `steady.rs`). The reading is reached
/// only through [`reading`](Block::reading) or [`parts`](Block::parts),
/// which first bring the counters a steady run left behind up to date:
/// no reader ever sees them lag.
#[derive(Debug)]
pub(crate) struct Block {
    /// The steady run of a long argument's chunks, when one is on: the
    /// reader's and the call's counters in `reading` lag behind it.
    steady: Steady,
    /// Everything else; its counters lag while `steady` is on.
    reading: Reading,
}

impl Block {
    pub(crate) fn new(opener: usize, tentative: bool) -> Block {
        Block {
            steady: Steady::default(),
            reading: Reading {
                opener,
                pc: 0,
                st: StepState::Fresh,
                calls: BlockCalls::new(tentative),
                recover: None,
                failed_at: None,
                replayed_at: None,
                spin: Spin::default(),
            },
        }
    }

    /// A block whose marker, which began at `at`, is read again as its
    /// body (see [`Reading::replayed_at`]).
    pub(crate) fn replayed(mut self, at: Offset) -> Block {
        self.reading.replayed_at = Some(at);
        self
    }

    /// Index of the opener (its program) in the grammar.
    pub(crate) fn opener(&self) -> usize {
        self.reading.opener
    }

    /// The block as its readers see it, brought up to date.
    #[inline]
    pub(crate) fn reading(&mut self) -> &mut Reading {
        self.parts().0
    }

    /// The block brought up to date, and its steady run (off), which the
    /// direct path may begin.
    #[inline]
    pub(crate) fn parts(&mut self) -> (&mut Reading, &mut Steady) {
        if self.steady.is_on() {
            let lag = self.steady.end();
            self.reading.apply(lag);
        }
        (&mut self.reading, &mut self.steady)
    }

    /// The next chunk of the steady run, if one is on and `text` goes on
    /// with it: held in `pending` and sent as the delta, the block left
    /// lagging (see `Steady::take`).
    #[inline]
    pub(crate) fn steady(&mut self, text: &str, pending: &mut Pending, out: &mut dyn Sink) -> bool {
        self.steady.take(text, pending, out)
    }

    /// The step being run (which a steady run leaves as it is).
    #[cfg(test)]
    pub(crate) fn pc(&self) -> usize {
        self.reading.pc
    }

    /// Whether a steady run is on.
    #[cfg(test)]
    pub(crate) fn is_steady(&self) -> bool {
        self.steady.is_on()
    }
}

/// What a block's readers see of it: which program, where in it, and the
/// calls it made.
#[derive(Debug)]
pub(crate) struct Reading {
    /// Index of the opener (its program) in the grammar.
    pub opener: usize,
    /// The step being run.
    pub pc: usize,
    /// The state of that step; `Fresh` when it has read nothing yet.
    pub st: StepState,
    pub calls: BlockCalls,
    /// Where a failed call goes on (the seek of a `Step::Recover`), once
    /// armed.
    pub(crate) recover: Option<usize>,
    /// How many calls the block had dispatched when a failed call or
    /// element last recovered (its bytes went out as text): while no call
    /// completes after it, what the block reads on is text too — the
    /// group's closing markup included, which would otherwise vanish
    /// between two pieces of text.
    pub(crate) failed_at: Option<usize>,
    /// For a block whose marker is read again as its body (`replay`):
    /// where the marker began, the offset the block opened at. A failure
    /// there, before the block read a byte, would send text mode back to
    /// the same marker (see the block loop, `run`).
    pub(crate) replayed_at: Option<Offset>,
    /// Steps visited in a row without reading a byte (see [`Spin`]).
    pub(crate) spin: Spin,
}

/// Steps visited in a row at one place of the stream, counted across
/// the runs of a block (and so across chunks): a program that loops
/// without reading gives up after the same number of visits however the
/// input is cut. A step that read part of its bytes and waits for more is
/// one visit however many chunks it reads (`resumed`).
#[derive(Debug, Default)]
pub(crate) struct Spin {
    /// Where the visits were counted.
    at: Offset,
    /// How many, at `at`.
    visits: usize,
    /// The step being run read bytes and goes on reading: its next run is
    /// the same visit.
    pub(crate) resumed: bool,
}

impl Spin {
    /// A step visited at `pos` (unless it is resumed): how many visits in
    /// a row at `pos` now.
    pub(crate) fn visit(&mut self, pos: Offset) -> usize {
        if pos != self.at {
            (self.at, self.visits) = (pos, 0);
        }
        if !self.resumed {
            self.visits += 1;
        }
        self.visits
    }

    /// The visit just counted did not run the step (it waits for bytes).
    pub(crate) fn unvisit(&mut self) {
        if !self.resumed {
            self.visits = self.visits.saturating_sub(1);
        }
    }
}

impl Reading {
    /// Whether the bytes held now belong to the block's calls (and are
    /// dropped when it ends): it made a call, or is framing, and no failed
    /// call or element came after its last call.
    pub(crate) fn owns_tail(&self) -> bool {
        self.calls.owns_bytes() && self.failed_at != Some(self.calls.done)
    }

    /// A steady run's lag added to the counters it left behind.
    fn apply(&mut self, lag: Option<Lag>) {
        match lag {
            Some(Lag::Span { raw, escape }) => {
                self.calls.settle_span_run(raw);
                if let (true, StepState::Json(js)) = (escape, &mut self.st) {
                    js.scanner.hold_backslash();
                }
            }
            Some(Lag::Value { raw, text, start }) => {
                if let StepState::Value(vr) = &mut self.st {
                    vr.handed(raw);
                    if let Some(b) = start {
                        vr.hold_start(b);
                    }
                }
                self.calls.settle_value_run(raw, text);
            }
            None => {}
        }
    }

    pub(crate) fn goto(&mut self, pc: usize) {
        self.pc = pc;
        self.st = StepState::Fresh;
    }

    /// On to the next step.
    pub(crate) fn next(&mut self) {
        self.goto(self.pc + 1);
    }
}

/// What the current step has read so far. A reader takes its state out
/// for a read (`std::mem::take`: its own kind, or a fresh one if the state
/// is another step's, or `Fresh`) and puts it back while the step lasts;
/// a failure finds it there.
#[derive(Debug, Default)]
pub(crate) enum StepState {
    #[default]
    Fresh,
    Lit(LitMatch),
    Capture(CaptureWord),
    Json(Box<JsonState>),
    Then(ThenMatch),
    Value(Box<ValueRead>),
    Py(Box<PyReader>),
    /// Reading over a failed list element (see `Step::RecoverElement`).
    Skip(Skip),
}

/// A JSON value being read and mapped onto calls.
#[derive(Debug)]
pub(crate) struct JsonState {
    pub(crate) scanner: JsonScanner,
    pub(crate) calls: JsonMapping,
    /// The scanner refused the byte the step failed at (bad JSON, not a
    /// bad call): its state is the one before that byte.
    pub(crate) refused: bool,
}

impl JsonState {
    /// A value just ended inside the list and no `,` promised another.
    pub(crate) fn between_values(&self) -> bool {
        self.scanner.between_values()
    }
}

/// What became of the block after a run.
#[derive(Debug)]
pub(crate) enum Outcome {
    /// It read everything it was given and goes on.
    NeedMore,
    /// It is over (completed, or failed and given back as text): back to
    /// text at the current byte.
    Text,
    /// Not a call after all: the rest of this JSON value is text.
    Skip(Box<JsonScanner>),
    /// It is over, and these bytes it looked at are to be scanned again as
    /// text.
    Replay(Vec<u8>),
    /// It goes on, and reads these bytes it looked at again (what followed
    /// the markup that ended an unclosed value).
    Reread(Vec<u8>),
}

/// What the block runner works with besides the block.
pub(crate) struct BlockCtx<'a> {
    pub pending: &'a mut Pending,
    pub session: &'a mut Session,
    pub out: &'a mut dyn Sink,
}

/// What a step's reader says the run does next.
pub(crate) enum Flow {
    /// Run the step the block is at now (the same one, fed more, or the
    /// one it moved to).
    Go,
    /// The step failed: the call, or the block, is over.
    Fail(Stop),
    /// The step failed at a byte it had read past, where its bytes end
    /// (an unclosed value that holds markup): the bytes after it are taken
    /// back and read next, then the call, or the block, is over.
    FailBefore(Stop, Offset),
    /// This run of the block is over.
    Out(Outcome),
}

impl From<Result<(), Stop>> for Flow {
    fn from(r: Result<(), Stop>) -> Flow {
        match r {
            Ok(()) => Flow::Go,
            Err(stop) => Flow::Fail(stop),
        }
    }
}

/// The bytes a reading step is given, and the room the limits leave it.
pub(crate) struct Input<'c, 'a> {
    pub(crate) ch: &'c Chunk<'a>,
    /// The chunk's bytes from the current one, at most `room` (at least
    /// one).
    pub(crate) bytes: &'c [u8],
    /// How many more bytes the block may hold.
    pub(crate) room: usize,
    /// The limit `room` is counted against.
    pub(crate) limit: usize,
}

impl<'c, 'a> Input<'c, 'a> {
    /// The input at chunk byte `i`: a limit trips at exactly the byte that
    /// would exceed it. The call limit bounds every block; an unconfirmed
    /// one is bounded by the hold-back limit too (the smaller of the two,
    /// so that a call confirmed halfway through the bytes given here is
    /// still held to the call limit).
    pub(crate) fn new(
        ch: &'c Chunk<'a>,
        i: usize,
        b: &Reading,
        env: &BlockCtx<'_>,
    ) -> Input<'c, 'a> {
        let (room, limit) = room(b, env);
        let end = ch.bytes.len().min(i + room.max(1));
        Input {
            ch,
            bytes: &ch.bytes[i..end],
            room,
            limit,
        }
    }

    /// The failure of a block that reached its limit.
    pub(crate) fn too_long(&self, calls: &BlockCalls) -> Stop {
        Stop::fail(Reason::TooLong {
            limit: self.limit,
            confirmed: !calls.silent(),
        })
    }
}

/// How many more bytes the block may hold, and the limit that is counted
/// against (see [`Input::new`]).
pub(crate) fn room(b: &Reading, env: &BlockCtx<'_>) -> (usize, usize) {
    let limits = &env.session.limits;
    let limit = if b.calls.silent() {
        limits.max_holdback.min(limits.max_call_bytes)
    } else {
        limits.max_call_bytes
    };
    (limit.saturating_sub(env.pending.held()), limit)
}
