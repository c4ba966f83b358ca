//! `Op::Capture`: a word up to a delimiter (a name, an id, a parameter's
//! key or type), checked and handed to the call being built. A keyword is
//! markup instead: it sets nothing and jumps.

use super::reader::{BlockCtx, Flow, Reading, StepState};
use crate::engine::call::calls::BlockCalls;
use crate::lang::format::Field;
use crate::lang::program::CaptureOp;
use crate::read::reason::{Reason, Stop};
use crate::read::steps::{CaptureWord, Captured, Progress};
use crate::read::word::{check_field, fault_of};

/// What [`feed`] found: the word so far, and how the reading went.
pub(super) struct Fed {
    word: CaptureWord,
    progress: Progress<Captured>,
}

/// Reads the word of step `c` from `bytes`: how many bytes it read (the
/// runner holds them, then calls [`then`]).
pub(super) fn feed(
    c: &CaptureOp,
    b: &mut Reading,
    env: &BlockCtx<'_>,
    bytes: &[u8],
) -> (usize, Fed) {
    let mut word = match std::mem::take(&mut b.st) {
        StepState::Capture(w) => w,
        _ => CaptureWord::default(),
    };
    let progress = word.feed(c, env.session.limits.max_name_bytes, bytes);
    (progress.read(), Fed { word, progress })
}

/// What the step does once the bytes it read are held.
pub(super) fn then(c: &CaptureOp, b: &mut Reading, env: &mut BlockCtx<'_>, fed: Fed) -> Flow {
    let Fed { word, progress } = fed;
    let next = match progress {
        Progress::Done(_, Captured::AtStop) => Some(b.pc + 1),
        Progress::Done(_, Captured::ByDelim(k)) => Some(c.delims[k].1),
        Progress::Partial(_) | Progress::Fail(..) => None,
    };
    let Some(next) = next else {
        // Still reading, or failed: the word is kept (a failure reads what
        // of it may begin a delimiter again).
        b.st = StepState::Capture(word);
        let Progress::Fail(_, r) = progress else {
            return Flow::Go;
        };
        let r = fault_of(c.field, prose_word(r, &b.calls));
        return Flow::Fail(if r.is_limit() {
            Stop::fail(r)
        } else {
            Stop::not_a_call(r)
        });
    };
    let word = word.trimmed();
    // A keyword is markup: it sets nothing and jumps.
    if let Some((_, to)) = c.keywords.iter().find(|(k, _)| k.as_bytes() == word) {
        b.goto(*to);
        return Flow::Go;
    }
    if let Err(stop) = captured(b, c.field, word, env) {
        return Flow::Fail(stop);
    }
    b.goto(next);
    Flow::Go
}

/// A captured word: checks it and hands it to the call. A name from markup
/// may still be replaced (DeepSeek V3 writes a type word first) or followed
/// by an id: the call starts when its arguments do.
pub(super) fn captured(
    b: &mut Reading,
    field: Field,
    raw: &[u8],
    env: &mut BlockCtx<'_>,
) -> Result<(), Stop> {
    let word = check_field(raw, field, &env.session.limits)
        .map_err(|r| Stop::not_a_call(prose_word(r, &b.calls)))?;
    let at = env.pending.pos;
    let src = env.pending.src();
    match field {
        Field::Name => b.calls.set_name(env.session, env.out, at, word, false, src),
        Field::Id => b.calls.set_id(env.session, env.out, at, word, false, src),
        Field::Key => {
            b.calls.param_key(word);
            Ok(())
        }
        Field::Type => {
            b.calls.param_type(word);
            Ok(())
        }
        Field::NamedId => {
            let name = named_id(word).ok_or(Stop::not_a_call(Reason::BadNamedId))?;
            b.calls
                .set_name(env.session, env.out, at, name, false, src)?;
            b.calls.set_id(env.session, env.out, at, word, false, src)
        }
        Field::Discard | Field::Ordinal => Ok(()),
    }
}

/// The tool name inside an id `NAMESPACE.NAME:INDEX` (see
/// [`Field::NamedId`]).
fn named_id(id: &str) -> Option<&str> {
    let (head, index) = id.rsplit_once(':')?;
    if index.is_empty() || !index.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let name = head.rsplit_once('.').map_or(head, |(_, n)| n);
    (!name.is_empty()).then_some(name)
}

/// In a block not yet known to be a call (a bracket in prose), a word too
/// long to be a name is prose, not a limit that was hit.
fn prose_word(r: Reason, calls: &BlockCalls) -> Reason {
    match r {
        Reason::NameTooLong { .. } if calls.silent() => Reason::LongWord,
        r => r,
    }
}
