//! `Op::Then` and `Op::OneOf`: one of several literals after a call (or
//! the block is over) or within it (or the block fails); and the seek of a
//! recovery, where bytes before a literal are text and the search goes on.

use super::fail::{end_block, release_all};
use super::reader::{BlockCtx, Flow, Input, Outcome, Reading, StepState};
use crate::lang::program::{ThenOp, ThenOpt};
use crate::offset::Offset;
use crate::read::reason::{Reason, Stop};
use crate::read::steps::{Progress, ThenEnd, ThenMatch};

/// What [`feed`] found.
pub(super) struct Fed {
    /// The literal matched, or none can (the block is over); `None`: not
    /// yet.
    how: Option<ThenEnd>,
    /// Where the step began.
    from: Offset,
    /// The byte after those read, if any (the one no literal takes).
    next: Option<u8>,
}

/// Reads one of `opts` from `bytes`. `then`: a continuation, whose
/// absence ends the block (what the step held is then read again as
/// text), not a failure. How many bytes it read (the runner holds them,
/// then calls [`then`]).
pub(super) fn feed(
    opts: &[ThenOpt],
    then: bool,
    b: &mut Reading,
    env: &BlockCtx<'_>,
    bytes: &[u8],
) -> (usize, Fed) {
    let mut t = match std::mem::take(&mut b.st) {
        StepState::Then(t) => t,
        _ => ThenMatch::new(env.pending.pos, opts.len()),
    };
    let progress = t.feed(opts, then, bytes);
    let how = match progress {
        Progress::Done(_, how) => Some(how),
        Progress::Partial(_) | Progress::Fail(..) => None,
    };
    let (n, from) = (progress.read(), t.from);
    b.st = StepState::Then(t);
    let next = bytes.get(n).copied();
    (n, Fed { how, from, next })
}

/// What the step does once the bytes it read are held.
pub(super) fn then(
    opts: &[ThenOpt],
    then: bool,
    b: &mut Reading,
    env: &mut BlockCtx<'_>,
    fed: Fed,
) -> Flow {
    match fed.how {
        None => Flow::Go,
        Some(ThenEnd::Matched(k)) => {
            if opts[k].begins_call {
                b.calls.begin();
            }
            b.goto(opts[k].to);
            Flow::Go
        }
        Some(ThenEnd::Over) if !then => {
            let found = fed.next.unwrap_or_default();
            Flow::Fail(Stop::not_a_call(Reason::Unexpected { found }))
        }
        Some(ThenEnd::Over) => {
            // Not a continuation: the block is over and what this step
            // held is scanned as text again.
            if b.owns_tail() {
                env.pending.drop_upto(fed.from);
            }
            let held = env.pending.untake_from(fed.from);
            end_block(b, env);
            Flow::Out(Outcome::Replay(held))
        }
    }
}

/// Seeks the literals of a recovery: text up to one of them. The bytes it
/// read go out as text (but for what may begin a literal, held): how many.
pub(super) fn seek(
    t: &ThenOp,
    b: &mut Reading,
    env: &mut BlockCtx<'_>,
    input: &Input<'_, '_>,
) -> (usize, Flow) {
    let mut m = match std::mem::take(&mut b.st) {
        StepState::Then(m) => m,
        _ => ThenMatch::seeking(env.pending.buf_start, Vec::new()),
    };
    let sought = m.seek(&t.opts, input.bytes);
    let (n, found) = match sought {
        Progress::Done(n, k) => (n, Some(k)),
        Progress::Partial(n) | Progress::Fail(n, _) => (n, None),
    };
    let to = env.pending.pos.after(n);
    let held = m.held.len();
    let Some(k) = found else {
        // Text, but for what may begin a literal.
        env.pending
            .flush(input.ch, to, to.before(held), false, env.out);
        m.from = env.pending.buf_start;
        b.st = StepState::Then(m);
        return (n, Flow::Go);
    };
    // Everything before the literal is text.
    env.pending
        .flush(input.ch, to, to.before(held), true, env.out);
    let o = &t.opts[k];
    if o.begins_call {
        b.calls.begin();
    } else {
        // It ends the failed call: text too.
        release_all(env);
    }
    b.goto(o.to);
    (n, Flow::Go)
}
