//! `Op::Py`: a Python call's arguments (`PyReader`), written into the call
//! as they are read; and `Op::Skip`: reading over the rest of a failed list
//! element (brackets and strings followed), whose bytes are text.

use super::fail::{end_block, release, release_all};
use super::reader::{BlockCtx, Flow, Input, Outcome, Reading, StepState};
use crate::engine::call::calls::Args;
use crate::event::{Diagnostic, DiagnosticKind};
use crate::lang::format::PyStep;
use crate::read::python::{PyReader, Skip, Skipped};
use crate::read::reason::{Reason, Stop};
use crate::read::steps::Progress;

/// What [`feed`] found.
pub(super) struct Fed {
    progress: Progress,
    /// A keyword was named again (its value dropped).
    repeated: bool,
    /// What was read shows a call (a key, or the end of the arguments).
    shown: bool,
}

/// Reads the arguments of step `py` from `bytes`, written into the call
/// as they are read: how many bytes it read (the runner holds them, then
/// calls [`then`]). A call that has arguments already fails at once.
#[inline]
pub(super) fn feed(
    py: &PyStep,
    b: &mut Reading,
    env: &BlockCtx<'_>,
    bytes: &[u8],
) -> Result<(usize, Fed), Stop> {
    let depth = env.session.limits.max_depth;
    // The reader is read in place (the commonest step of pythonic
    // arguments: no move a chunk); a fresh one is put in place after its
    // first read.
    let fed = match &mut b.st {
        StepState::Py(r) => read_py(r, py, depth, bytes, &mut b.calls.cur().args),
        st => {
            let c = b.calls.cur();
            if c.span.is_some() || !matches!(c.args_state, Args::Missing) {
                return Err(Stop::fail(Reason::TwoArgs));
            }
            c.args.clear();
            let mut r = Box::new(PyReader::new(&mut c.args));
            let fed = read_py(&mut r, py, depth, bytes, &mut c.args);
            *st = StepState::Py(r);
            fed
        }
    };
    let progress = fed.progress;
    Ok((progress.read(), fed))
}

/// One read of the Python reader `r`, writing into `args`.
#[inline]
fn read_py(r: &mut PyReader, py: &PyStep, depth: usize, bytes: &[u8], args: &mut Vec<u8>) -> Fed {
    let progress = r.feed(py, depth, bytes, args);
    Fed {
        progress,
        repeated: r.take_repeated(),
        shown: r.shown(),
    }
}

/// What the step does once the bytes it read are held.
#[inline]
pub(super) fn then(b: &mut Reading, env: &mut BlockCtx<'_>, fed: Fed) -> Flow {
    if fed.repeated {
        b.calls.notes.push(Diagnostic {
            kind: DiagnosticKind::DuplicateParameter,
            offset: env.pending.pos.get(),
            message: "a keyword is named again in the call; its first value is kept and this \
                one dropped"
                .into(),
        });
    }
    let c = b.calls.cur();
    if fed.shown && matches!(c.args_state, Args::Missing) {
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
    match fed.progress {
        Progress::Partial(_) => Flow::Go,
        Progress::Done(..) => {
            b.calls.args_complete();
            b.next();
            Flow::Go
        }
        Progress::Fail(_, r) => Flow::Fail(Stop::fail(r)),
    }
}

/// Reads over a failed element: its bytes are text as they come, up to its
/// end (one of `ends`), which the step at `to` reads. How many bytes it
/// read (released as text, whatever the limits).
pub(super) fn skip(
    ends: &[u8],
    to: usize,
    b: &mut Reading,
    env: &mut BlockCtx<'_>,
    input: &Input<'_, '_>,
) -> (usize, Flow) {
    let mut sk = match std::mem::take(&mut b.st) {
        StepState::Skip(sk) => sk,
        _ => Skip::top(),
    };
    let end = sk.feed(ends, env.session.limits.max_depth, input.bytes);
    let n = match end {
        Skipped::More => input.bytes.len(),
        Skipped::End(n) | Skipped::Broken(n) => n,
    };
    env.pending.take_n(input.ch, n);
    let flow = match end {
        Skipped::More => {
            b.st = StepState::Skip(sk);
            release(env);
            Flow::Go
        }
        Skipped::End(_) => {
            // (An ASCII byte follows: nothing held can be part of a
            // character it would finish.)
            release_all(env);
            b.goto(to);
            Flow::Go
        }
        Skipped::Broken(_) => {
            // A bracket that does not fit: where the element ends cannot be
            // known, so the list ends here (the failure was reported), and
            // this byte is text again.
            release_all(env);
            end_block(b, env);
            Flow::Out(Outcome::Text)
        }
    };
    (n, flow)
}
