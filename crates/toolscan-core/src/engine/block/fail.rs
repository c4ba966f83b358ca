//! What a failure does: the failed call is reported (unless the block
//! never looked like a call) and its bytes are text again; with a recovery
//! armed, the block reads on (seeking the next call, or reading over the
//! rest of a failed list element). Also the block's normal end and the
//! releases of held text they share.

use super::reader::{BlockCtx, Outcome, Reading, StepState};
use crate::engine::call::calls::BlockCalls;
use crate::engine::pending::Chunk;
use crate::event::{Diagnostic, DiagnosticKind, EventRef};
use crate::lang::format::Lit;
use crate::lang::program::Op;
use crate::offset::Offset;
use crate::read::python::Skip;
use crate::read::reason::Stop;
use crate::read::steps::{self, ThenMatch};

/// Releases what is held as text, up to a character boundary.
pub(super) fn release(env: &mut BlockCtx<'_>) {
    let at = env.pending.pos;
    let empty = Chunk::from_str("", at);
    env.pending.flush(&empty, at, at, false, env.out);
}

/// Releases everything held as text, an unfinished character included
/// (what follows cannot finish it: it is read by the block).
pub(super) fn release_all(env: &mut BlockCtx<'_>) {
    env.pending.release_all(env.out);
}

/// The block ended normally: its bytes belong to its calls, or, if it made
/// none (or a failed call or element came after its last one), they are
/// text.
pub(crate) fn end_block(b: &Reading, env: &mut BlockCtx<'_>) {
    if b.owns_tail() {
        let at = env.pending.pos;
        env.pending.drop_upto(at);
    } else {
        release(env);
    }
}

/// What became of a block that failed.
pub(super) enum Failed {
    /// A recovery point was armed: the block goes on.
    Recovered,
    /// The block is over; text mode reads on from the byte that failed,
    /// after these bytes (a partly matched literal, which may begin a
    /// marker).
    Over(Option<Vec<u8>>),
}

/// How many of the last bytes held are markup the failed step was matching
/// (a literal, or a delimiter in a word): they may begin another marker, so
/// they are read again rather than swallowed.
fn partial_markup(b: &Reading, prog: &[Op]) -> usize {
    match (&b.st, prog.get(b.pc)) {
        (StepState::Lit(m), _) => m.at,
        // The literal that opens the next call (read again as markup).
        (_, Some(Op::DispatchBefore(n))) => *n,
        (StepState::Then(t), Some(Op::OneOf(_))) => t.matched(),
        (StepState::Capture(w), Some(Op::Capture(c))) => {
            steps::literal_start(&w.word, c.delims.iter().map(|(l, _)| l))
        }
        _ => 0,
    }
}

/// Reports a failed call, unless the block never looked like a call, and
/// drops it; `fate` says what becomes of its bytes.
pub(super) fn report(
    calls: &mut BlockCalls,
    env: &mut BlockCtx<'_>,
    stop: Stop,
    lit: Option<&Lit>,
    offset: Offset,
    fate: &str,
) {
    let offset = offset.get();
    let limit = stop.reason.is_limit();
    let silent = calls.silent() && !limit;
    let abandoned = calls.abandon(env.out, env.pending.src());
    if silent {
        return;
    }
    let mut message = stop.reason.message(lit);
    if let Some(i) = abandoned {
        message.push_str(&format!(" (call #{i} is not dispatched)"));
    }
    message.push_str(fate);
    let kind = if limit {
        DiagnosticKind::Limit
    } else if stop.reason.is_refusal() {
        DiagnosticKind::NotAllowed
    } else if stop.reason.is_unclosed() {
        DiagnosticKind::Unclosed
    } else {
        DiagnosticKind::Malformed
    };
    tracing::debug!(offset, kind = kind.as_str(), "{message}");
    let d = Diagnostic {
        kind,
        offset,
        message,
    };
    env.out.event(EventRef::Diagnostic(&d));
}

/// The block failed at the current byte: reports it unless it never looked
/// like a call, and gives its bytes back as text. With a recovery point
/// armed, only the failed call's bytes are text, and the block goes on,
/// seeking the literals of its `Step::Recover`.
pub(super) fn fail(b: &mut Reading, prog: &[Op], env: &mut BlockCtx<'_>, stop: Stop) -> Failed {
    let limit = stop.reason.is_limit();
    // A call the options refuse is no failure of the group: its end stays
    // the calls' (see `Reading::failed_at`).
    let refused = stop.reason.is_refusal();
    // (At a limit the step may count bytes it was not given room for.)
    let partial = if limit { 0 } else { partial_markup(b, prog) };
    let seek = b.recover.and_then(|pc| match prog.get(pc) {
        Some(Op::Then(t)) if t.seek => Some((pc, t)),
        _ => None,
    });
    // A list element recovers once the block is known to hold calls, and
    // where the failed step can say how to read on over the element.
    let skip = match b.recover.map(|pc| (pc, prog.get(pc))) {
        Some((pc, Some(Op::Skip(..)))) if !limit && !b.calls.silent() => {
            skip_from(&b.st, prog, b.pc).map(|sk| (pc, sk))
        }
        _ => None,
    };
    let lit: Option<&Lit> = match prog.get(b.pc) {
        Some(Op::Lit(l) | Op::OptLit(l) | Op::LitOrEof(l)) => Some(l),
        _ => None,
    };
    let fate = if skip.is_some() {
        "; the element is kept as text and the list reads on"
    } else if seek.is_some() {
        "; the call is kept as text and reading goes on after it"
    } else {
        "; the block is kept as text"
    };
    let offset = env.pending.pos;
    report(&mut b.calls, env, stop, lit, offset, fate);
    if let Some((pc, sk)) = skip {
        // What the element read so far is text; the rest of it is read
        // over from the failing byte.
        release(env);
        b.pc = pc;
        b.st = StepState::Skip(sk);
        if !refused {
            b.failed_at = Some(b.calls.done);
        }
        return Failed::Recovered;
    }
    if seek.is_some() && matches!(prog.get(b.pc), Some(Op::Dispatch)) {
        // The call failed once all its markup was read (a call the options
        // refuse, arguments that are not UTF-8): its bytes are text, and
        // the group reads on after it, as after a call that went through
        // (seeking would pass the call's end and take the group's closer
        // for the failed call's).
        release(env);
        b.next();
        if !refused {
            b.failed_at = Some(b.calls.done);
        }
        return Failed::Recovered;
    }
    if let (Some(_), Some(Op::DispatchBefore(n))) = (seek, prog.get(b.pc)) {
        // The same, for a call whose end is the next call's opener: that
        // opener stays held, the next call's first bytes.
        let p = &mut *env.pending;
        let text = p.buf.len().saturating_sub(*n);
        p.release_front(text, env.out);
        b.calls.begin();
        b.next();
        return Failed::Recovered;
    }
    let Some((pc, t)) = seek else {
        return over(env, partial);
    };
    // The failed call's bytes are text, but for a tail that may begin one
    // of the literals sought (a partly matched marker is read again).
    let p = &mut *env.pending;
    // A character the failing byte may still finish (the first bytes of
    // `ｔ` read as the start of `｜`) is not cut: it stays pending, ahead of
    // what the seek holds, and leaves with the bytes that finish it.
    let keep = steps::literal_start(&p.buf, t.opts.iter().map(|o| &o.lit));
    let at = p.pos;
    p.flush(
        &Chunk::from_str("", at),
        at,
        at.before(keep),
        keep > 0,
        env.out,
    );
    b.pc = pc;
    let held = p.buf[p.buf.len() - keep.min(p.buf.len())..].to_vec();
    b.st = StepState::Then(ThenMatch::seeking(p.buf_start, held));
    if !refused {
        b.failed_at = Some(b.calls.done);
    }
    Failed::Recovered
}

/// How to read over the rest of a list element from the failing byte of
/// the step in state `st`; `None` if it cannot be known.
fn skip_from(st: &StepState, prog: &[Op], pc: usize) -> Option<Skip> {
    match st {
        StepState::Py(r) => match prog.get(pc) {
            Some(Op::Py(step)) => r.skip(step),
            _ => None,
        },
        // Bad JSON: from the scanner's state before the byte it refused.
        StepState::Json(js) if js.refused => Some(js.scanner.skip()),
        // A call that failed inside JSON (the scanner read on: its state is
        // past the byte) or inside a raw value: not followed.
        StepState::Json(_) | StepState::Value(_) | StepState::Skip(_) => None,
        // Between the element's parts (its name, the markup after it).
        StepState::Fresh | StepState::Lit(_) | StepState::Capture(_) | StepState::Then(_) => {
            Some(Skip::top())
        }
    }
}

/// The block is over: its bytes are text, but for the last `partial`,
/// markup begun (a literal partly matched), which is read again.
fn over(env: &mut BlockCtx<'_>, partial: usize) -> Failed {
    let p = &mut *env.pending;
    let mut k = p.buf.len() - partial.min(p.buf.len());
    if k == 0 && !p.buf.is_empty() {
        // The literal that failed began at the block's own first byte (a
        // replayed marker its program refused): read again from there, the
        // marker would open the same block again, without end. Its first
        // character is text; the rest is read again.
        k = crate::scan::utf8::char_len(p.buf[0]).min(p.buf.len());
    }
    let markup = p.untake_from(p.buf_start.after(k));
    release(env);
    Failed::Over((!markup.is_empty()).then_some(markup))
}

/// The call fails with `stop` at the current byte, `tail` (bytes taken
/// back after it) to be read next: what the block does then.
pub(super) fn fail_before(
    prog: &[Op],
    b: &mut Reading,
    env: &mut BlockCtx<'_>,
    tail: Vec<u8>,
    stop: Stop,
) -> Outcome {
    match fail(b, prog, env, stop) {
        Failed::Recovered => Outcome::Reread(tail),
        Failed::Over(None) if tail.is_empty() => Outcome::Text,
        Failed::Over(held) => {
            let mut bytes = held.unwrap_or_default();
            bytes.extend_from_slice(&tail);
            Outcome::Replay(bytes)
        }
    }
}
