//! `Op::Value`: a raw parameter value (`ValueRead`), handed to the call as
//! it is read; its end by its closing tag, by markup that ends it unclosed,
//! or, for a container, by the step it nests into.

use super::fail::fail_before;
use super::reader::{room, BlockCtx, Flow, Outcome, Reading, StepState};
use super::steady::Steady;
use crate::engine::call::calls::BlockCalls;
use crate::event::{Diagnostic, DiagnosticKind};
use crate::lang::program::{Op, ValueOp};
use crate::offset::Offset;
use crate::read::reason::{Reason, Stop};
use crate::read::steps::Progress;
use crate::read::value::{End, ValueRead};

/// What [`feed`] found: the value's reader, and how the value ended, if it
/// did.
pub(super) struct Fed {
    vr: Box<ValueRead>,
    end: End,
}

/// Reads the value of step `v` from `bytes`: how many bytes it read (the
/// runner holds them, then calls [`then`]). The value begins (its call
/// told) at its first byte; a byte no value may hold fails it at once.
pub(super) fn feed(
    v: &ValueOp,
    b: &mut Reading,
    env: &mut BlockCtx<'_>,
    bytes: &[u8],
) -> Result<(usize, Fed), Stop> {
    let mut vr = match std::mem::take(&mut b.st) {
        StepState::Value(vr) => vr,
        _ => {
            let at = env.pending.pos;
            let vr = Box::new(ValueRead::new(v, at, b.calls.param_name()));
            let src = env.pending.src();
            if let Err(stop) = b.calls.value_begin(env.session, env.out, at, v.null, src) {
                b.st = StepState::Value(vr);
                return Err(stop);
            }
            vr
        }
    };
    match vr.read(bytes, env.pending.pos, env.pending.src(), &v.after) {
        Progress::Partial(n) => Ok((n, Fed { vr, end: End::No })),
        Progress::Done(n, end) => Ok((n, Fed { vr, end })),
        Progress::Fail(_, r) => {
            b.st = StepState::Value(vr);
            Err(Stop::fail(r))
        }
    }
}

/// What the step does once the bytes it read are held. (The value's reader
/// goes back into the block's state unless the program moves on: a failure
/// reads it.)
pub(super) fn then(v: &ValueOp, b: &mut Reading, env: &mut BlockCtx<'_>, fed: Fed) -> Flow {
    let Fed { mut vr, end } = fed;
    let pos = env.pending.pos;
    match end {
        End::Closed => {
            // The value ended at the call's closer it met: the block reads
            // what followed that closer again.
            b.st = StepState::Value(vr);
            return match end_value_at_candidate(b, env) {
                Ok(Some(Ended::Reread(_, tail))) => Flow::Out(Outcome::Reread(tail)),
                Ok(Some(Ended::Out(outcome))) => Flow::Out(outcome),
                Ok(Some(Ended::FailBefore(from))) => unclosed_markup(from),
                Ok(None) => Flow::Fail(Stop::fail(Reason::NoProgress)),
                Err(stop) => Flow::Fail(stop),
            };
        }
        End::Rescan(from) => {
            // A closer that was part of the value: what followed it is
            // value too, read again.
            b.st = StepState::Value(vr);
            let tail = env.pending.untake_from(from);
            return Flow::Out(Outcome::Reread(tail));
        }
        End::Recover(_) if vr.holds_markup(vr.end_offset(pos)) => {
            // Markup inside the value: the markup after it cannot end it
            // (`unclosed_markup`). What was decided goes out first, as it
            // would have at a chunk boundary.
            vr.hand(env.pending.src(), pos, false, &mut b.calls);
            let from = vr.end_offset(pos);
            b.st = StepState::Value(vr);
            return unclosed_markup(from);
        }
        _ => {}
    }
    vr.hand(env.pending.src(), pos, end != End::No, &mut b.calls);
    let next = match end {
        End::No | End::Bad(_) | End::Closed | End::Rescan(_) => None,
        End::After(k) => {
            // The closer counted: the program goes on after the literal
            // that followed it (as the `one_of` there would).
            let ended = b.calls.value_end(pos, env.pending.src());
            b.st = StepState::Value(vr);
            if let Err(stop) = ended {
                return Flow::Fail(stop);
            }
            let Some(o) = v.after.get(k) else {
                return Flow::Fail(Stop::fail(Reason::NoProgress));
            };
            if o.begins_call {
                b.calls.begin();
            }
            b.goto(o.to);
            return Flow::Go;
        }
        End::Nest(to) => {
            // A container, not text: no value to end.
            b.goto(to);
            return Flow::Go;
        }
        End::Close => Some(b.pc + 1),
        End::Recover(to) => {
            unclosed(&mut b.calls, vr.end_offset(pos));
            Some(to)
        }
    };
    let ended = match next {
        Some(_) => b.calls.value_end(pos, env.pending.src()),
        None => Ok(()),
    };
    b.st = StepState::Value(vr);
    match (next, ended) {
        (_, Err(stop)) => Flow::Fail(stop),
        (Some(next), Ok(())) => {
            b.goto(next);
            Flow::Go
        }
        (None, Ok(())) => Flow::Go,
    }
}

/// A token-sized chunk (`text`, within the limits) in which the raw value
/// being read meets no markup — the common chunk of a long parameter: the
/// bytes are held and handed to the call, and the argument delta goes out,
/// exactly as [`read`] would do. `false`: nothing was read (see
/// `block::direct`).
#[inline]
pub(super) fn direct(
    b: &mut Reading,
    steady: &mut Steady,
    env: &mut BlockCtx<'_>,
    text: &str,
) -> bool {
    let StepState::Value(vr) = &mut b.st else {
        return false;
    };
    if !vr.is_plain_run(text.as_bytes()) {
        return false;
    }
    // The common run of a long string value: it goes on the value's
    // segment and out as the delta, with no second look.
    let pos = env.pending.pos;
    if vr.hands_whole(pos, text.as_bytes()) && b.calls.extend_run(pos, text, env.out) {
        env.pending.take_text(text);
        vr.handed(text.len());
        // The next such chunks need no look at the block.
        if let Some(index) = b.calls.started_index() {
            let watch = vr.run_bytes();
            let limit = room(b, env).1;
            steady.begin_value(index, limit, watch);
        }
        return true;
    }
    env.pending.take_text(text);
    let pos = env.pending.pos;
    vr.hand(env.pending.src(), pos, false, &mut b.calls);
    true
}

/// Notes a value whose closing tag is missing (reported with its call).
fn unclosed(calls: &mut BlockCalls, offset: Offset) {
    let offset = offset.get();
    let message = format!(
        "the value of `{}` has no closing tag: it ends at the markup that follows it",
        calls.param_name()
    );
    tracing::debug!(offset, "{message}");
    calls.notes.push(Diagnostic {
        kind: DiagnosticKind::Unclosed,
        offset,
        message,
    });
}

/// The call fails because its value, which has no closing tag, holds
/// markup (`unclosed`): its bytes up to `from` are text, and what follows
/// is read again — as text, or by the block's recovery, which seeks the
/// next call — so the calls around it are still read.
fn unclosed_markup(from: Offset) -> Flow {
    Flow::FailBefore(Stop::fail(Reason::UnclosedMarkup), from)
}

/// How a value the block was in ended at markup it had met.
pub(super) enum Ended {
    /// At that markup, which ends at this offset: the block reads the bytes
    /// after it again, from the markup's label.
    Reread(Offset, Vec<u8>),
    /// The call failed there: what the block does next.
    Out(Outcome),
    /// The call fails there, at this offset, because the value held markup
    /// (see [`unclosed_markup`]).
    FailBefore(Offset),
}

/// At the end of the stream, a value that met markup which may end it
/// ends there: a closer whose sequel was still undecided (it is the one
/// reading left), or a call's closer inside an unclosed value — unless the
/// value holds markup, which fails the call. `None` if the block is not in
/// such a value.
pub(super) fn end_value_at_eof(
    prog: &[Op],
    b: &mut Reading,
    env: &mut BlockCtx<'_>,
) -> Option<Ended> {
    let StepState::Value(vr) = &mut b.st else {
        return None;
    };
    if let Some((_, close_end)) = vr.open_close() {
        let tail = env.pending.untake_from(close_end);
        vr.hand(env.pending.src(), close_end, true, &mut b.calls);
        if let Err(stop) = b.calls.value_end(close_end, env.pending.src()) {
            return Some(Ended::Out(fail_before(prog, b, env, tail, stop)));
        }
        b.next();
        return Some(Ended::Reread(close_end, tail));
    }
    end_value_at_candidate(b, env).ok().flatten()
}

/// Ends the value the block is in at the markup met in it that may end it
/// (see [`end_value_at_eof`]); the next call's markup after that markup
/// does so at once. `Ok(None)`: no such markup was met.
fn end_value_at_candidate(b: &mut Reading, env: &mut BlockCtx<'_>) -> Result<Option<Ended>, Stop> {
    let StepState::Value(vr) = &mut b.st else {
        return Ok(None);
    };
    if !vr.has_candidate() {
        return Ok(None);
    }
    if let Some((at, len)) = vr.candidate().filter(|&(at, _)| vr.holds_markup(at)) {
        // Markup inside the value: the call's closer after it cannot end it.
        // (What was decided goes out first, as at a chunk boundary.)
        let pos = env.pending.pos;
        vr.hand(env.pending.src(), pos, false, &mut b.calls);
        return Ok(Some(Ended::FailBefore(at.after(len))));
    }
    let Some((at, len, to)) = vr.end_at_candidate(env.pending.src(), &mut b.calls) else {
        return Ok(None);
    };
    b.calls.value_end(at, env.pending.src())?;
    unclosed(&mut b.calls, at);
    let tail = env.pending.untake_from(at.after(len));
    b.goto(to);
    Ok(Some(Ended::Reread(env.pending.pos, tail)))
}
