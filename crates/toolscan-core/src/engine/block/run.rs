//! The block runner: the loop that feeds a block's program to the step
//! readers ([`run`]), and the two shortcuts of a token-sized chunk into a
//! block ([`steady`], [`direct`]).

use super::fail::{end_block, fail, fail_before, Failed};
use super::reader::{room, Block, BlockCtx, Flow, Input, Outcome, Reading};
use super::{bytes, capture, json, marks, python, then, value};
use crate::engine::pending::{Chunk, Pending};
use crate::lang::program::Op;
use crate::read::reason::{Reason, Stop};
use crate::sink::Sink;

/// Runs the block from chunk byte `i`; returns where it stopped.
pub(crate) fn run(
    prog: &[Op],
    block: &mut Block,
    env: &mut BlockCtx<'_>,
    ch: &Chunk<'_>,
    mut i: usize,
) -> (usize, Outcome) {
    let b = block.reading();
    // Steps that read nothing must not loop (a custom program may jump to
    // itself): give up after visiting every step twice without progress
    // (counted at the place in the stream, whatever the chunks: `Spin`).
    loop {
        let Some(op) = prog.get(b.pc) else {
            // Falling off the end of a program ends the block.
            end_block(b, env);
            return (i, Outcome::Text);
        };
        let flow = if b.spin.visit(env.pending.pos) > 2 * prog.len() + 2 {
            // Not a failure of one call: the block is over.
            b.recover = None;
            b.spin.resumed = false;
            Flow::Fail(Stop::fail(Reason::NoProgress))
        } else if let Some(flow) = marks::run(op, b, env) {
            // Steps that read no byte run even at the end of the input, so
            // a call is dispatched in the feed that completes it.
            b.spin.resumed = false;
            flow
        } else if i == ch.bytes.len() {
            // (Not a visit: the step runs when bytes come.)
            b.spin.unvisit();
            return (i, Outcome::NeedMore);
        } else {
            let pc = b.pc;
            let (n, flow) = read(prog, op, b, env, &Input::new(ch, i, b, env));
            i += n;
            b.spin.resumed = n > 0 && b.pc == pc && matches!(flow, Flow::Go);
            flow
        };
        // What the step added to the call goes out before anything the
        // flow does next (see [`synced`]).
        b.calls.sync(env.out, env.pending.src());
        match flow {
            Flow::Go => {}
            Flow::Out(outcome) => return (i, outcome),
            Flow::FailBefore(stop, from) => {
                let tail = env.pending.untake_from(from);
                return (i, fail_before(prog, b, env, tail, stop));
            }
            // A failure ends the block (back to text at the current byte),
            // or, with a recovery point armed, the failed call and the
            // block goes on.
            Flow::Fail(stop) => {
                let refused_at_once = b.replayed_at == Some(env.pending.pos)
                    && env.pending.buf.is_empty()
                    && i < ch.bytes.len();
                if refused_at_once {
                    // A replayed marker refused at its first byte: nothing
                    // is held to give back, and text mode would find the
                    // same marker here and open the block again, without
                    // end. Its first character is text (as `fail` makes it
                    // when the refused literal had begun to match).
                    let n = crate::scan::utf8::char_len(ch.bytes[i]).min(ch.bytes.len() - i);
                    env.pending.take_n(ch, n);
                    i += n;
                }
                match fail(b, prog, env, stop) {
                    Failed::Recovered => {}
                    Failed::Over(None) => return (i, Outcome::Text),
                    Failed::Over(Some(markup)) => return (i, Outcome::Replay(markup)),
                }
            }
        }
    }
}

/// The steadiest path of a token-sized chunk `text`: the next chunk of
/// the steady run the block is in, if one is on (see `steady.rs`: a run
/// begins when [`direct`] reads the plain content of a string or raw
/// value whose every earlier byte went out), held in `pending` and sent
/// as the delta with no look at the block. `false`: nothing changed;
/// [`direct`] or [`run`] reads the chunk, and brings the block up to date
/// first.
#[inline]
pub(crate) fn steady(b: &mut Block, pending: &mut Pending, out: &mut dyn Sink, text: &str) -> bool {
    b.steady(text, pending, out)
}

/// The direct path of a token-sized chunk `text` that the current step
/// reads whole without meeting anything: a run inside a JSON string
/// (`json::direct`) or inside a raw value (`value::direct`) — the
/// chunks of a long argument. The step's reader takes it as [`run`] would,
/// without the loop around it, which would only find the step still
/// reading and ask for more. `false`: nothing was read; `run` is the way.
#[inline]
pub(crate) fn direct(prog: &[Op], block: &mut Block, env: &mut BlockCtx<'_>, text: &str) -> bool {
    let (b, steady) = block.parts();
    if text.len() > room(b, env).0 {
        return false;
    }
    let read = match prog.get(b.pc) {
        Some(Op::Json(_)) => json::direct(b, steady, env, text),
        Some(Op::Value(_)) => value::direct(b, steady, env, text),
        _ => return false,
    };
    if read {
        synced(b, env, |_, _| ());
    }
    read
}

/// Runs `piece` of a block's reading (a chunk read directly, what the end
/// of the stream does), then sends what it added to the call's arguments,
/// as the loop of [`run`] does after each step. These are the only two
/// places where the reading sends argument deltas; a call's own ends
/// (`BlockCalls::dispatch`, `BlockCalls::abandon`) send what is left
/// first. So a call's events come in order, and as they would with a
/// chunk boundary after the piece: how the input is cut changes nothing.
pub(super) fn synced<T>(
    b: &mut Reading,
    env: &mut BlockCtx<'_>,
    piece: impl FnOnce(&mut Reading, &mut BlockCtx<'_>) -> T,
) -> T {
    let r = piece(b, env);
    b.calls.sync(env.out, env.pending.src());
    r
}

/// Hands the step that reads bytes to its reader: how many of the bytes
/// of `input` it read, and what the run does next. Most readers only
/// read: the runner holds what they read (within the room the limits
/// leave: the byte past it fails the block), then lets them act on it
/// ([`held`]). Three place their bytes themselves: a recovery's seek and
/// the reading over a failed element release them as text, and the JSON
/// step holds its window before it reads (arguments are spans of the held
/// bytes).
fn read(
    prog: &[Op],
    op: &Op,
    b: &mut Reading,
    env: &mut BlockCtx<'_>,
    input: &Input<'_, '_>,
) -> (usize, Flow) {
    let bytes = input.bytes;
    match op {
        Op::Capture(c) => {
            let fed = Ok(capture::feed(c, b, env, bytes));
            held(b, env, input, fed, |b, env, fed| {
                capture::then(c, b, env, fed)
            })
        }
        Op::Then(t) if t.seek => then::seek(t, b, env, input),
        Op::Then(t) => {
            let fed = Ok(then::feed(&t.opts, true, b, env, bytes));
            held(b, env, input, fed, |b, env, fed| {
                then::then(&t.opts, true, b, env, fed)
            })
        }
        Op::OneOf(opts) => {
            let fed = Ok(then::feed(opts, false, b, env, bytes));
            held(b, env, input, fed, |b, env, fed| {
                then::then(opts, false, b, env, fed)
            })
        }
        Op::Value(v) => {
            let fed = value::feed(v, b, env, bytes);
            held(b, env, input, fed, |b, env, fed| {
                value::then(v, b, env, fed)
            })
        }
        Op::Py(py) => {
            let fed = python::feed(py, b, env, bytes);
            held(b, env, input, fed, python::then)
        }
        Op::Skip(ends, to) => python::skip(ends, *to, b, env, input),
        Op::Json(j) => json::read(prog, j, b, env, input),
        _ => {
            let progress = bytes::feed(op, b, bytes);
            let fed = Ok((progress.read(), progress));
            held(b, env, input, fed, |b, _, p| bytes::then(b, p))
        }
    }
}

/// What a reader read, `fed` (how many bytes, and what it found — or a
/// failure before it read any), held in the pending buffer within the
/// room the limits leave; then `then`, the reader's act on it.
#[inline]
fn held<F>(
    b: &mut Reading,
    env: &mut BlockCtx<'_>,
    input: &Input<'_, '_>,
    fed: Result<(usize, F), Stop>,
    then: impl FnOnce(&mut Reading, &mut BlockCtx<'_>, F) -> Flow,
) -> (usize, Flow) {
    let (n, found) = match fed {
        Ok(fed) => fed,
        Err(stop) => return (0, Flow::Fail(stop)),
    };
    if n > 0 && input.room == 0 {
        // (A failure at a limit reads nothing of the step's state.)
        return (0, Flow::Fail(input.too_long(&b.calls)));
    }
    env.pending.take_n(input.ch, n);
    (n, then(b, env, found))
}
