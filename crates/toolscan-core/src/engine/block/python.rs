//! `Op::Py`: a Python call's arguments (`PyReader`), written into the call
//! as they are read; and `Op::Skip`: reading over the rest of a failed list
//! element (brackets and strings followed), whose bytes are text.

use super::fail::{end_block, release, release_all};
use super::reader::{consumed, BlockCtx, Flow, Input, Outcome, Reading, StepState};
use crate::engine::call::calls::Args;
use crate::lang::format::PyStep;
use crate::read::python::{PyReader, Skip, Skipped};
use crate::read::reason::{Reason, Stop};
use crate::read::steps::Progress;

/// Reads the arguments of step `py`.
pub(super) fn read(
    py: &PyStep,
    b: &mut Reading,
    env: &mut BlockCtx<'_>,
    input: &Input<'_, '_>,
    i: &mut usize,
) -> Flow {
    if !matches!(b.st, StepState::Py(_)) {
        let c = b.calls.cur();
        if c.span.is_some() || !matches!(c.args_state, Args::Missing) {
            return Flow::Fail(Stop::fail(Reason::TwoArgs));
        }
        c.args.clear();
        b.st = StepState::Py(Box::new(PyReader::new(&mut c.args)));
    }
    let StepState::Py(r) = &mut b.st else {
        return Flow::Fail(Stop::fail(Reason::NoProgress));
    };
    let c = b.calls.cur();
    let p = r.feed(py, env.session.limits.max_depth, input.bytes, &mut c.args);
    if let Err(stop) = input.take(&b.calls, env, i, consumed(p)) {
        return Flow::Fail(stop);
    }
    if r.take_repeated() {
        let at = env.pending.pos;
        b.calls.notes.push(crate::event::Diagnostic {
            kind: crate::event::DiagnosticKind::DuplicateParameter,
            offset: at.get(),
            message: "a keyword is named again in the call; its first value is kept and this \
                one dropped"
                .into(),
        });
    }
    let c = b.calls.cur();
    if r.shown() && matches!(c.args_state, Args::Missing) {
        // A key (or the end of the arguments) shows a call: the reader
        // stopped at the byte that showed it, so the call starts (or the
        // block fails) there, however the input was cut.
        c.args_state = Args::Written;
        let at = env.pending.pos;
        if let Err(stop) = b
            .calls
            .try_start(env.session, env.out, at, env.pending.src())
        {
            return Flow::Fail(stop);
        }
    }
    match p {
        Progress::Partial(_) => {}
        Progress::Done(_) => {
            b.calls.args_complete();
            b.next();
        }
        Progress::Fail(_, r) => return Flow::Fail(Stop::fail(r)),
    }
    Flow::Go
}

/// Reads over a failed element: its bytes are text as they come, up to its
/// end (one of `ends`), which the step at `to` reads.
pub(super) fn skip(
    ends: &[u8],
    to: usize,
    b: &mut Reading,
    env: &mut BlockCtx<'_>,
    input: &Input<'_, '_>,
    i: &mut usize,
) -> Flow {
    let sk = state!(b, Skip, Skip::top());
    let end = sk.feed(ends, env.session.limits.max_depth, input.bytes);
    let n = match end {
        Skipped::More => input.bytes.len(),
        Skipped::End(n) | Skipped::Broken(n) => n,
    };
    input.take_unbounded(env, i, n);
    match end {
        Skipped::More => release(env),
        Skipped::End(_) => {
            // (An ASCII byte follows: nothing held can be part of a
            // character it would finish.)
            release_all(env);
            b.goto(to);
        }
        Skipped::Broken(_) => {
            // A bracket that does not fit: where the element ends cannot be
            // known, so the list ends here (the failure was reported), and
            // this byte is text again.
            release_all(env);
            end_block(b, env);
            return Flow::Out(Outcome::Text);
        }
    }
    Flow::Go
}
