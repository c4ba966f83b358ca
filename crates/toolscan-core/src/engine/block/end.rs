//! What the end of the stream does to a block ([`finish_step`]): an
//! unclosed value ends at markup it met; steps the end may complete
//! (optional markup, a word or value the end may end, a fork's
//! end-of-stream branch, closing markup a stop sequence cut) move on and
//! the steps that read nothing after them run; a block stuck at a step
//! that needs more bytes is over, its bytes text, and a call it was in is
//! reported truncated.

use super::capture::captured;
use super::fail::{end_block, fail, fail_before, Failed};
use super::reader::{Block, BlockCtx, Outcome, Reading, StepState};
use super::run::{run, synced};
use super::value::{end_value_at_eof, Ended};
use crate::engine::pending::Chunk;
use crate::event::{Diagnostic, DiagnosticKind, EventRef};
use crate::lang::format::ByteSet;
use crate::lang::program::Op;
use crate::offset::Offset;
use crate::read::reason::{Reason, Stop};

/// What one step of the end of the stream did to a block.
pub(crate) enum Finish {
    /// The block ran on with no more bytes: what became of it.
    Ran(Outcome),
    /// The block reads these bytes, taken back from where they began, at
    /// this offset, again (what followed markup that ended an unclosed
    /// value).
    Reread(Offset, Vec<u8>),
    /// The block is over and its bytes went out as text; `truncated`: the
    /// stream ended inside a call.
    Over { truncated: bool },
}

/// One step of the end of the stream in a block (the parser repeats it
/// while the block lasts). `budget` counts the steps the end completed:
/// a program that loops without reading gives up.
pub(crate) fn finish_step(
    prog: &[Op],
    block: &mut Block,
    env: &mut BlockCtx<'_>,
    budget: &mut usize,
) -> Finish {
    let b = block.reading();
    match synced(b, env, |b, env| end_value_at_eof(prog, b, env)) {
        // The call failed there: its bytes are text.
        Some(Ended::Out(outcome)) => return Finish::Ran(outcome),
        // It fails there because the value held markup: what followed is
        // read again.
        Some(Ended::FailBefore(from)) => {
            let tail = env.pending.untake_from(from);
            let stop = Stop::fail(Reason::UnclosedMarkup);
            return Finish::Ran(fail_before(prog, b, env, tail, stop));
        }
        // An unclosed value ended at markup it held: the block reads what
        // followed that markup again (and with nothing after it, runs the
        // steps that read nothing: Dispatch).
        Some(Ended::Reread(at, tail)) if tail.is_empty() => {
            let (_, outcome) = run(prog, block, env, &Chunk::from_bytes(&tail, at), 0);
            return Finish::Ran(outcome);
        }
        Some(Ended::Reread(at, tail)) => return Finish::Reread(at, tail),
        None => {}
    }
    *budget += 1;
    let moved = if *budget > 2 * prog.len() + 2 {
        AtEnd::Stuck
    } else {
        synced(b, env, |b, env| at_end(prog, b, env))
    };
    match moved {
        AtEnd::Moved => {
            // Run the steps that read nothing (Dispatch, End).
            let empty = Chunk::from_str("", env.pending.pos);
            let (_, outcome) = run(prog, block, env, &empty, 0);
            Finish::Ran(outcome)
        }
        AtEnd::Over(outcome) => Finish::Ran(outcome),
        AtEnd::Stuck => Finish::Over {
            truncated: stuck(prog, b, env),
        },
    }
}

/// Ends a block the end of the stream left at a step that needs bytes:
/// its bytes are text, but for those of the calls it completed. Whether a
/// call was cut short (reported here).
fn stuck(prog: &[Op], b: &mut Reading, env: &mut BlockCtx<'_>) -> bool {
    if let Some(Op::Then(_)) = prog.get(b.pc) {
        // What earlier steps read belongs to the calls.
        let from = match &b.st {
            StepState::Then(t) => t.from,
            _ => env.pending.pos,
        };
        // (Unless a failed call came after the last one: then they are
        // text, as the failed call's.)
        if b.failed_at != Some(b.calls.done) {
            env.pending.drop_upto(from);
        }
        env.pending.release_all(env.out);
        end_block(b, env);
        return false;
    }
    // After a completed call, with no other one begun (an unclosed list of
    // calls), the stream ended between calls: not a truncation.
    let between_calls = b.calls.done > 0
        && b.calls.call.is_none()
        && match &b.st {
            // `[{…}, ` promises another call
            StepState::Json(js) => js.between_values(),
            _ => true,
        };
    let truncated = !b.calls.silent() && !between_calls;
    if truncated {
        let mut message = "the stream ended inside a call".to_string();
        if let Some(i) = b.calls.abandon(env.out, env.pending.src()) {
            message.push_str(&format!(" (call #{i} is not dispatched)"));
        }
        message.push_str("; its bytes are kept as text");
        let offset = env.pending.pos.get();
        tracing::debug!(offset, "{message}");
        let d = Diagnostic {
            kind: DiagnosticKind::Truncated,
            offset,
            message,
        };
        env.out.event(EventRef::Diagnostic(&d));
    }
    env.pending.release_all(env.out);
    truncated
}

/// What the end of the stream does to the step a block waits at.
enum AtEnd {
    /// The step is complete (optional markup, a word or value that the end
    /// may end, a fork's end-of-stream branch): the program goes on with
    /// no more bytes.
    Moved,
    /// The step failed: the block is over.
    Over(Outcome),
    /// The step needs bytes the stream will not bring.
    Stuck,
}

/// At the end of the stream: completes the step the block waits at if the
/// end may complete it.
fn at_end(prog: &[Op], b: &mut Reading, env: &mut BlockCtx<'_>) -> AtEnd {
    if env.session.at_stop && b.calls.args_closed() {
        // A stop sequence cut the call's closing markup: on to its
        // dispatch, if nothing but closing markup stands before it.
        if let Some(to) = dispatch_after_closers(prog, b.pc) {
            b.goto(to);
            return AtEnd::Moved;
        }
    }
    let fresh = !matches!(&b.st, StepState::Lit(m) if m.at > 0);
    match prog.get(b.pc) {
        // Steps that read nothing run as they would with bytes (a block
        // whose marker came last has not run yet).
        Some(
            Op::Frame
            | Op::Reasoning(_)
            | Op::StringParam(_)
            | Op::Dispatch
            | Op::DispatchBefore(_)
            | Op::Definite
            | Op::Recover(_)
            | Op::Goto(_)
            | Op::End
            | Op::Open(_)
            | Op::CloseOpen
            | Op::Unhold(_),
        ) => {}
        Some(Op::Ws | Op::Blank | Op::Word) => b.goto(b.pc + 1),
        Some(Op::OptLit(_) | Op::LitOrEof(_)) if fresh => b.goto(b.pc + 1),
        Some(Op::Fork(alts)) => match alts.iter().find(|(set, _)| *set == ByteSet::End) {
            Some(&(_, to)) => b.goto(to),
            None => return AtEnd::Stuck,
        },
        Some(Op::Capture(c)) if c.at_end => {
            let StepState::Capture(w) = &mut b.st else {
                return AtEnd::Stuck;
            };
            let word = std::mem::take(w);
            if let Err(stop) = captured(b, c.field, word.trimmed(), env) {
                return failed_at_end(b, prog, env, stop);
            }
            b.next();
        }
        Some(Op::Value(_)) => {
            let pos = env.pending.pos;
            let StepState::Value(vr) = &mut b.st else {
                return AtEnd::Stuck;
            };
            if !vr.ends_at_eof(pos) {
                return AtEnd::Stuck;
            }
            vr.end_at_eof();
            vr.hand(env.pending.src(), pos, true, &mut b.calls);
            if let Err(stop) = b.calls.value_end(pos, env.pending.src()) {
                return failed_at_end(b, prog, env, stop);
            }
            b.next();
        }
        _ => return AtEnd::Stuck,
    }
    AtEnd::Moved
}

/// The `Dispatch` that the program reaches from `pc` through closing
/// markup alone (literals, whitespace, a choice among literals, jumps), if
/// any: what a stop sequence may have cut.
fn dispatch_after_closers(prog: &[Op], pc: usize) -> Option<usize> {
    let mut seen = vec![false; prog.len()];
    let mut todo = vec![pc];
    while let Some(pc) = todo.pop() {
        if std::mem::replace(seen.get_mut(pc)?, true) {
            continue;
        }
        match prog.get(pc)? {
            Op::Dispatch => return Some(pc),
            Op::Ws | Op::Blank | Op::Lit(_) | Op::OptLit(_) | Op::LitOrEof(_) => todo.push(pc + 1),
            Op::Goto(to) => todo.push(*to),
            Op::OneOf(opts) => todo.extend(opts.iter().map(|o| o.to)),
            _ => {}
        }
    }
    None
}

fn failed_at_end(b: &mut Reading, prog: &[Op], env: &mut BlockCtx<'_>, stop: Stop) -> AtEnd {
    match fail(b, prog, env, stop) {
        Failed::Over(Some(markup)) => AtEnd::Over(Outcome::Replay(markup)),
        Failed::Over(None) => AtEnd::Over(Outcome::Text),
        // Seeking the next call: the end of the stream finds none.
        Failed::Recovered => AtEnd::Moved,
    }
}
