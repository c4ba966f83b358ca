//! `Op::Then` and `Op::OneOf`: one of several literals after a call (or
//! the block is over) or within it (or the block fails); and the seek of a
//! recovery, where bytes before a literal are text and the search goes on.

use super::fail::{end_block, release_all};
use super::reader::{consumed, BlockCtx, Flow, Input, Outcome, Reading, StepState};
use crate::lang::program::{ThenOp, ThenOpt};
use crate::read::reason::{Reason, Stop};
use crate::read::steps::{ThenEnd, ThenMatch};

/// Reads one of `opts`. `then`: a continuation, whose absence ends the
/// block (what the step held is then read again as text), not a failure.
pub(super) fn read(
    opts: &[ThenOpt],
    then: bool,
    b: &mut Reading,
    env: &mut BlockCtx<'_>,
    input: &Input<'_, '_>,
    i: &mut usize,
) -> Flow {
    let t = state!(b, Then, ThenMatch::new(env.pending.pos, opts.len()));
    let (p, how) = t.feed(opts, then, input.bytes);
    let from = t.from;
    if let Err(stop) = input.take(&b.calls, env, i, consumed(p)) {
        return Flow::Fail(stop);
    }
    match how {
        ThenEnd::No => {}
        ThenEnd::Matched(k) => {
            if opts[k].begins_call {
                b.calls.begin();
            }
            b.goto(opts[k].to);
        }
        ThenEnd::Over if !then => {
            let found = input.bytes[consumed(p)];
            return Flow::Fail(Stop::not_a_call(Reason::Unexpected { found }));
        }
        ThenEnd::Over => {
            // Not a continuation: the block is over and what this step
            // held is scanned as text again.
            if b.owns_tail() {
                env.pending.drop_upto(from);
            }
            let held = env.pending.untake_from(from);
            end_block(b, env);
            return Flow::Out(Outcome::Replay(held));
        }
    }
    Flow::Go
}

/// Seeks the literals of a recovery: text up to one of them.
pub(super) fn seek(
    t: &ThenOp,
    b: &mut Reading,
    env: &mut BlockCtx<'_>,
    input: &Input<'_, '_>,
    i: &mut usize,
) -> Flow {
    let m = state!(
        b,
        Then,
        ThenMatch::seeking(env.pending.buf_start, Vec::new())
    );
    let (n, found) = m.seek(&t.opts, input.bytes);
    let to = env.pending.pos.after(n);
    let held = m.held.len();
    *i += n;
    let Some(k) = found else {
        // Text, but for what may begin a literal.
        env.pending
            .flush(input.ch, to, to.before(held), false, env.out);
        m.from = env.pending.buf_start;
        return Flow::Go;
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
    Flow::Go
}
