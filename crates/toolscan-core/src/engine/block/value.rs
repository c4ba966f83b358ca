//! `Op::Value`: a raw parameter value (`ValueRead`), handed to the call as
//! it is read; its end by its closing tag, by markup that ends it unclosed,
//! or, for a container, by the step it nests into.

use super::reader::{room, Block, BlockCtx, Flow, Input, Outcome, StepState};
use crate::engine::call::calls::BlockCalls;
use crate::event::{Diagnostic, DiagnosticKind};
use crate::lang::program::ValueOp;
use crate::offset::Offset;
use crate::read::reason::{Reason, Stop};
use crate::read::value::{End, ValueRead};

/// Reads the value of step `v`.
pub(super) fn read(
    v: &ValueOp,
    b: &mut Block,
    env: &mut BlockCtx<'_>,
    input: &Input<'_, '_>,
    i: &mut usize,
) -> Flow {
    if !matches!(b.st, StepState::Value(_)) {
        let at = env.pending.pos;
        let vr = ValueRead::new(v, at, b.calls.param_name());
        b.st = StepState::Value(Box::new(vr));
        let src = env.pending.src();
        if let Err(stop) = b.calls.value_begin(env.session, env.out, at, v.null, src) {
            return Flow::Fail(stop);
        }
    }
    let StepState::Value(vr) = &mut b.st else {
        return Flow::Fail(Stop::fail(Reason::NoProgress));
    };
    let (n, end) = vr.feed(input.bytes, env.pending.pos, env.pending.src());
    if let End::Bad(found) = end {
        return Flow::Fail(Stop::fail(Reason::Unexpected { found }));
    }
    if let Err(stop) = input.take(&b.calls, env, i, n) {
        return Flow::Fail(stop);
    }
    if end == End::Closed {
        // The value ended at the call's closer it met: the block reads what
        // followed that closer again.
        return match end_value_at_candidate(b, env) {
            Ok(Some((_, tail))) => Flow::Out(Outcome::Reread(tail)),
            Ok(None) => Flow::Fail(Stop::fail(Reason::NoProgress)),
            Err(stop) => Flow::Fail(stop),
        };
    }
    let pos = env.pending.pos;
    vr.hand(env.pending.src(), pos, end != End::No, &mut b.calls);
    let next = match end {
        End::No | End::Bad(_) | End::Closed => None,
        End::Nest(to) => {
            // A container, not text: no value to end.
            b.goto(to);
            b.calls.sync(env.out, env.pending.src());
            return Flow::Go;
        }
        End::Close => Some(b.pc + 1),
        End::Recover(to) => {
            unclosed(&mut b.calls, vr.end_offset(pos));
            Some(to)
        }
    };
    if let Some(next) = next {
        if let Err(stop) = b.calls.value_end(pos, env.pending.src()) {
            return Flow::Fail(stop);
        }
        b.goto(next);
    }
    b.calls.sync(env.out, env.pending.src());
    Flow::Go
}

/// A token-sized chunk (`text`, within the limits) in which the raw value
/// being read meets no markup — the common chunk of a long parameter: the
/// bytes are held and handed to the call, and the argument delta goes out,
/// exactly as [`read`] would do. `false`: nothing was read (see
/// `block::direct`).
pub(super) fn plain_run(b: &mut Block, env: &mut BlockCtx<'_>, text: &str) -> bool {
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
            b.steady.begin_value(index, limit, watch);
        }
        return true;
    }
    env.pending.take_text(text);
    let pos = env.pending.pos;
    vr.hand(env.pending.src(), pos, false, &mut b.calls);
    b.calls.sync(env.out, env.pending.src());
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

/// At the end of the stream, a value that met markup which may end it (a
/// call's closer inside an unclosed value) ends there. Returns where that
/// markup ends and the bytes after it, which the block reads again from
/// the markup's label; `None` if the block is not in such a value.
pub(crate) fn end_value_at_eof(b: &mut Block, env: &mut BlockCtx<'_>) -> Option<(Offset, Vec<u8>)> {
    end_value_at_candidate(b, env).ok().flatten()
}

/// Ends the value the block is in at the markup met in it that may end it
/// (see [`end_value_at_eof`]); the next call's markup after that markup
/// does so at once. `Ok(None)`: no such markup was met.
fn end_value_at_candidate(
    b: &mut Block,
    env: &mut BlockCtx<'_>,
) -> Result<Option<(Offset, Vec<u8>)>, Stop> {
    let StepState::Value(vr) = &mut b.st else {
        return Ok(None);
    };
    if !vr.has_candidate() {
        return Ok(None);
    }
    let Some((at, len, to)) = vr.end_at_candidate(env.pending.src(), &mut b.calls) else {
        return Ok(None);
    };
    b.calls.value_end(at, env.pending.src())?;
    unclosed(&mut b.calls, at);
    b.calls.sync(env.out, env.pending.src());
    let tail = env.pending.untake_from(at.after(len));
    b.goto(to);
    Ok(Some((env.pending.pos, tail)))
}
