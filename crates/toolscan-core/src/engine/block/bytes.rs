//! The steps whose outcome needs nothing but the bytes: blanks, words,
//! literals, and forks on the next byte.

use super::reader::{Flow, Reading, StepState};
use crate::lang::program::Op;
use crate::read::reason::{Reason, Stop};
use crate::read::steps::{self, LitMatch, Progress};

/// Reads `op`, one of the steps above, from `bytes`: how far it got (the
/// runner holds the bytes read, then calls [`then`]).
pub(super) fn feed(op: &Op, b: &mut Reading, bytes: &[u8]) -> Progress {
    match op {
        Op::Ws => steps::ws(bytes),
        Op::Blank => steps::blank(bytes),
        Op::Word => steps::word(bytes),
        Op::Lit(l) | Op::OptLit(l) | Op::LitOrEof(l) => {
            let mut m = match std::mem::take(&mut b.st) {
                StepState::Lit(m) => m,
                _ => LitMatch::default(),
            };
            let p = m.feed(l, matches!(op, Op::OptLit(_)), bytes);
            b.st = StepState::Lit(m);
            p
        }
        Op::Fork(alts) => match alts.iter().find(|(set, _)| set.contains(bytes[0])) {
            Some(&(_, t)) => {
                b.goto(t);
                Progress::Partial(0)
            }
            None => Progress::Fail(0, Reason::Unexpected { found: bytes[0] }),
        },
        // (Every other step has a reader of its own, or reads nothing.)
        _ => Progress::Fail(0, Reason::NoProgress),
    }
}

/// What the step does once the bytes it read are held.
pub(super) fn then(b: &mut Reading, progress: Progress) -> Flow {
    match progress {
        Progress::Partial(_) => Flow::Go,
        Progress::Done(..) => {
            b.next();
            Flow::Go
        }
        Progress::Fail(_, r) => Flow::Fail(Stop::fail(r)),
    }
}
