//! What the end of the stream does to the step a block waits at: steps
//! the end may complete (optional markup, a word or value the end may end,
//! a fork's end-of-stream branch, closing markup a stop sequence cut) move
//! on; the others are stuck.

use super::capture::captured;
use super::fail::{fail, Failed};
use super::reader::{Block, BlockCtx, Outcome, StepState};
use crate::lang::format::ByteSet;
use crate::lang::program::Op;
use crate::read::reason::Stop;

/// What the end of the stream does to the step a block waits at.
pub(crate) enum AtEnd {
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
pub(crate) fn at_end(prog: &[Op], b: &mut Block, env: &mut BlockCtx<'_>) -> AtEnd {
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
            b.calls.sync(env.out, env.pending.src());
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

fn failed_at_end(b: &mut Block, prog: &[Op], env: &mut BlockCtx<'_>, stop: Stop) -> AtEnd {
    match fail(b, prog, env, stop) {
        Failed::Over(Some(markup)) => AtEnd::Over(Outcome::Replay(markup)),
        Failed::Over(None) => AtEnd::Over(Outcome::Text),
        // Seeking the next call: the end of the stream finds none.
        Failed::Recovered => AtEnd::Moved,
    }
}
