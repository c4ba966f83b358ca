//! `Op::Json`: a JSON value read by the scanner and mapped onto calls as it
//! is read (`CallMapper`); a value that turns out to be no call is text, and
//! so is the rest of it.

use super::fail::{release, report};
use super::reader::{room, BlockCtx, Flow, Input, JsonState, Outcome, Reading, StepState};
use super::steady::Steady;
use crate::engine::call::json::{CallMapper, JsonMapping};
use crate::lang::format::JsonStep;
use crate::lang::program::Op;
use crate::offset::Offset;
use crate::read::json::{JsonScanner, StringRun};
use crate::read::reason::Stop;
use crate::read::steps::Progress;

/// The fewest bytes a JSON step takes from the chunk at once (see [`read`]).
const JSON_WINDOW: usize = 256;

/// A token-sized chunk (`text`, within the limits) that lies wholly inside
/// a string of the JSON value being read — the common chunk of a long
/// argument: the bytes are held, the scanner passes them on, and the
/// argument delta goes out, exactly as [`read`] would do. `false`: nothing
/// was read (see `block::direct`).
#[inline]
pub(super) fn direct(
    b: &mut Reading,
    steady: &mut Steady,
    env: &mut BlockCtx<'_>,
    text: &str,
) -> bool {
    let StepState::Json(js) = &mut b.st else {
        return false;
    };
    // The common run of a long argument: plain content that goes on the
    // arguments' span and out as the delta, with no second look.
    if js.scanner.is_plain_content(text.as_bytes())
        && js.calls.passes_content_on()
        && b.calls.extend_span_run(text, env.out)
    {
        env.pending.take_text(text);
        // The next such chunks need no look at the block.
        if let Some(index) = b.calls.started_index() {
            steady.begin_span(index, room(b, env).1);
        }
        return true;
    }
    // The scanner first: such bytes only pass through `JsonMapping::output`,
    // which reads nothing of the held bytes; then they are held.
    let (json, calls, out) = (&mut js.calls, &mut b.calls, &mut *env.out);
    let reasoning = env.pending.in_reasoning;
    let before = calls.args_len();
    let run = js.scanner.string_run(text.as_bytes(), |bytes| {
        json.output(calls, out, reasoning, bytes)
    });
    if run == StringRun::No {
        return false;
    }
    env.pending.take_text(text);
    if let Some(d) = js.calls.drop_upto.take() {
        env.pending.drop_upto(d);
    }
    if let (Some(before), StringRun::Verbatim) = (before, run) {
        // The arguments grew by `text` as it is: it may be the delta.
        b.calls.sync_text(env.out, env.pending.src(), before, text);
    }
    true
}

/// Reads the value of step `j` (of program `prog`): how many bytes it
/// read. The JSON step holds its bytes itself, before it reads them, so
/// that arguments can be spans of the held bytes, and gives back those it
/// did not read.
pub(super) fn read(
    prog: &[Op],
    j: &JsonStep,
    b: &mut Reading,
    env: &mut BlockCtx<'_>,
    input: &Input<'_, '_>,
) -> (usize, Flow) {
    if input.room == 0 {
        return (0, Flow::Fail(input.too_long(&b.calls)));
    }
    let mut js = match std::mem::take(&mut b.st) {
        StepState::Json(js) => js,
        _ => Box::new(JsonState {
            scanner: JsonScanner::new(j.lenient, env.session.limits.max_depth),
            calls: JsonMapping::new(),
            refused: false,
        }),
    };
    // The bytes are taken in windows no larger than the block so far (at
    // least `JSON_WINDOW`): a value that ends early in a long chunk copies
    // a few bytes more than it reads, not the rest of the chunk (which made
    // one chunk of many calls quadratic), and a long value is still copied
    // once, in windows that double.
    let want = env.pending.held().max(JSON_WINDOW);
    let bytes = &input.bytes[..input.bytes.len().min(want)];
    let base = env.pending.pos;
    env.pending.take_n(input.ch, bytes.len());
    let element = matches!(b.recover.map(|pc| prog.get(pc)), Some(Some(Op::Skip(..))));
    let mut builder = CallMapper {
        session: env.session,
        calls: &mut b.calls,
        json: &mut js.calls,
        step: j,
        out: env.out,
        src: env.pending.src(),
        reasoning: env.pending.in_reasoning,
        element,
    };
    let progress = js.scanner.read(bytes, base, &mut builder);
    let n = progress.read();
    env.pending.untake(bytes.len() - n);
    if let Some(d) = js.calls.drop_upto.take() {
        env.pending.drop_upto(d);
    }
    let done = js.scanner.is_done();
    if let Some((stop, at)) = js.calls.take_given_back() {
        if let Some(flow) = element_failed(b, env, stop, at, done) {
            return (n, flow);
        }
    }
    if js.calls.skip {
        // Not a call after all: what was held is text, and so is the rest
        // of the value (skipped, unless it ended or failed).
        release(env);
        if !matches!(progress, Progress::Fail(..)) && !done {
            return (n, Flow::Out(Outcome::Skip(Box::new(js.scanner))));
        }
        return (n, Flow::Out(Outcome::Text));
    }
    let flow = match progress {
        Progress::Done(..) => {
            b.next();
            return (n, Flow::Go);
        }
        Progress::Partial(_) => Flow::Go,
        Progress::Fail(_, reason) => Flow::Fail(js.calls.take_failure().unwrap_or_else(|| {
            // The scanner refused the byte (bad JSON, not a bad call): its
            // state is the one before it.
            js.refused = true;
            Stop::fail(reason)
        })),
    };
    b.st = StepState::Json(js);
    (n, flow)
}

/// A list element failed and has ended (the scanner paused after it): it
/// is text, from the end of the call before it (or the block's start), and
/// the list reads on — where its recovery says, if the failed element was
/// the whole value (`done`: a call object of a list read call by call).
fn element_failed(
    b: &mut Reading,
    env: &mut BlockCtx<'_>,
    stop: Stop,
    at: Offset,
    done: bool,
) -> Option<Flow> {
    let fate = "; the element is kept as text and the list reads on";
    // (A refused call is no failure: the list's end stays the calls'.)
    if !stop.reason.is_refusal() {
        b.failed_at = Some(b.calls.done);
    }
    report(&mut b.calls, env, stop, None, at, fate);
    release(env);
    let pc = b.recover.filter(|_| done)?;
    b.goto(pc);
    Some(Flow::Go)
}
