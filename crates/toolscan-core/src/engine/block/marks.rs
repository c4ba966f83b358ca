//! The steps that read no byte: markup decisions (dispatch a call, open a
//! container, jump, arm a recovery, drop a frame). They run even at the end
//! of the input, so a call is dispatched in the feed that completes it.

use super::fail::{end_block, release_all};
use super::reader::{BlockCtx, Flow, Outcome, Reading, StepState};
use crate::lang::program::Op;

/// Runs `op` if it reads nothing; `None` if it reads bytes (its reader
/// runs when there are some).
pub(super) fn run(op: &Op, b: &mut Reading, env: &mut BlockCtx<'_>) -> Option<Flow> {
    let flow = match op {
        Op::Dispatch => dispatch(b, env, 0),
        Op::DispatchBefore(n) => dispatch(b, env, *n),
        Op::Open(array) => {
            let r = b.calls.open_container(*array, env.session.limits.max_depth);
            next_unless_failed(b, r)
        }
        Op::CloseOpen => {
            let r = b.calls.close_container();
            next_unless_failed(b, r)
        }
        Op::Definite => {
            b.calls.tentative = false;
            next(b)
        }
        Op::StringParam(key) => {
            let name = b.calls.call.as_ref().and_then(|c| c.name.as_deref());
            let sole = match (name, env.session.tools.as_ref()) {
                (Some(n), Some(t)) => t.sole_string_param(n),
                _ => None,
            };
            let key = sole.unwrap_or(key).to_owned();
            b.calls.param_key(&key);
            next(b)
        }
        Op::Frame => {
            let at = env.pending.pos;
            env.pending.drop_upto(at);
            next(b)
        }
        Op::Reasoning(on) => {
            // The format's own marking (Harmony's `analysis` channel): so
            // with reasoning separation off too.
            env.pending.in_reasoning = *on;
            next(b)
        }
        Op::Recover(seek) => {
            b.recover = Some(*seek);
            next(b)
        }
        Op::End => {
            end_block(b, env);
            Flow::Out(Outcome::Text)
        }
        Op::Goto(t) => {
            b.goto(*t);
            Flow::Go
        }
        Op::Unhold(n) => {
            env.pending.release_front(*n, env.out);
            next(b)
        }
        Op::Then(t) if !t.seek && !b.calls.owns_bytes() && matches!(b.st, StepState::Fresh) => {
            // A continuation with no completed call before it (after a
            // recovered failure): nothing held belongs to a call. (The
            // step then reads.)
            release_all(env);
            return None;
        }
        _ => return None,
    };
    Some(flow)
}

/// Dispatches the call being built: its bytes are no longer held.
/// Dispatches the call, whose bytes end `before` bytes before the current
/// one: those (the literal that opens the next call) stay held, the next
/// call's first bytes.
fn dispatch(b: &mut Reading, env: &mut BlockCtx<'_>, before: usize) -> Flow {
    let had = b.calls.call.is_some();
    let before = before.min(env.pending.buf.len());
    let at = env.pending.pos.before(before);
    if let Err(stop) = b
        .calls
        .dispatch(env.session, env.out, at, env.pending.src())
    {
        return Flow::Fail(stop);
    }
    if had {
        env.pending.drop_upto(at);
    }
    if before > 0 {
        b.calls.begin();
    }
    next(b)
}

/// After a change of containers: the program goes on, unless it failed.
fn next_unless_failed(b: &mut Reading, r: Result<(), crate::read::reason::Stop>) -> Flow {
    match r {
        Ok(()) => next(b),
        Err(stop) => Flow::Fail(stop),
    }
}

fn next(b: &mut Reading) -> Flow {
    b.next();
    Flow::Go
}
