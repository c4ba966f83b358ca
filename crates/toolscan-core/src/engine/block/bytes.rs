//! The steps whose outcome needs nothing but the bytes: blanks, words,
//! literals, and forks on the next byte.

use super::reader::{consumed, BlockCtx, Flow, Input, Reading, StepState};
use crate::lang::program::Op;
use crate::read::reason::{Reason, Stop};
use crate::read::steps::{self, LitMatch, Progress};

/// Reads `op`, one of the steps above.
pub(super) fn read(
    op: &Op,
    b: &mut Reading,
    env: &mut BlockCtx<'_>,
    input: &Input<'_, '_>,
    i: &mut usize,
) -> Flow {
    let bytes = input.bytes;
    let progress = match op {
        Op::Ws => steps::ws(bytes),
        Op::Blank => steps::blank(bytes),
        Op::Word => steps::word(bytes),
        Op::Lit(l) | Op::OptLit(l) | Op::LitOrEof(l) => {
            let m = state!(b, Lit, LitMatch::default());
            m.feed(l, matches!(op, Op::OptLit(_)), bytes)
        }
        Op::Fork(alts) => match alts.iter().find(|(set, _)| set.contains(bytes[0])) {
            Some(&(_, t)) => {
                b.goto(t);
                return Flow::Go;
            }
            None => Progress::Fail(0, Reason::Unexpected { found: bytes[0] }),
        },
        // (Every other step has a reader of its own, or reads nothing.)
        _ => Progress::Fail(0, Reason::NoProgress),
    };
    if let Err(stop) = input.take(&b.calls, env, i, consumed(progress)) {
        return Flow::Fail(stop);
    }
    match progress {
        Progress::Partial(_) => {}
        Progress::Done(_) => b.next(),
        Progress::Fail(_, r) => return Flow::Fail(Stop::fail(r)),
    }
    Flow::Go
}
