//! Running a block's program: the step parsers of `steps.rs` (and the JSON
//! scanner) fed with the block's bytes, the pending buffer keeping them
//! until the block's fate is known, and what each outcome means — a call
//! dispatched, a block that ends, a block that fails and becomes text.

use crate::call::calls::Args;
use crate::call::{check_field, fault_of, Builder, Calls, Ctx, JsonCalls};
use crate::event::{Diagnostic, DiagnosticKind, EventRef};
use crate::format::{ByteSet, Field, Lit};
use crate::json::JsonScanner;
use crate::pending::{Chunk, Pending};
use crate::program::{Op, ThenOp};
use crate::python::{PyReader, Skip, Skipped};
use crate::reason::{Reason, Stop};
use crate::sink::Sink;
use crate::steps::{self, CaptureWord, Captured, LitMatch, Progress, ThenEnd, ThenMatch};
use crate::value::{End, ValueRead};

/// A block being read: which program, where in it, and the calls it made.
#[derive(Debug)]
pub(crate) struct Block {
    /// Index of the opener (its program) in the grammar.
    pub opener: usize,
    /// The step being run.
    pub pc: usize,
    /// The state of that step; `Fresh` when it has read nothing yet.
    pub st: StepState,
    pub calls: Calls,
    /// Where a failed call goes on (the seek of a `Step::Recover`), once
    /// armed.
    recover: Option<usize>,
}

impl Block {
    pub(crate) fn new(opener: usize, tentative: bool) -> Block {
        Block {
            opener,
            pc: 0,
            st: StepState::Fresh,
            calls: Calls::new(tentative),
            recover: None,
        }
    }

    fn goto(&mut self, pc: usize) {
        self.pc = pc;
        self.st = StepState::Fresh;
    }
}

/// What the current step has read so far.
#[derive(Debug)]
pub(crate) enum StepState {
    Fresh,
    Lit(LitMatch),
    Capture(CaptureWord),
    Json(Box<JsonState>),
    Then(ThenMatch),
    Value(Box<ValueRead>),
    Py(Box<PyReader>),
    /// Reading over a failed list element (see `Step::RecoverElement`).
    Skip(Skip),
}

/// A JSON value being read and mapped onto calls.
#[derive(Debug)]
pub(crate) struct JsonState {
    scanner: JsonScanner,
    calls: JsonCalls,
    /// The scanner refused the byte the step failed at (bad JSON, not a
    /// bad call): its state is the one before that byte.
    refused: bool,
}

impl JsonState {
    /// A value just ended inside the list and no `,` promised another.
    pub(crate) fn between_values(&self) -> bool {
        self.scanner.between_values()
    }
}

/// What became of the block after a run.
#[derive(Debug)]
pub(crate) enum Outcome {
    /// It read everything it was given and goes on.
    NeedMore,
    /// It is over (completed, or failed and given back as text): back to
    /// text at the current byte.
    Text,
    /// Not a call after all: the rest of this JSON value is text.
    Skip(Box<JsonScanner>),
    /// It is over, and these bytes it looked at are to be scanned again as
    /// text.
    Replay(Vec<u8>),
    /// It goes on, and reads these bytes it looked at again (what followed
    /// the markup that ended an unclosed value).
    Reread(Vec<u8>),
}

/// What the block runner works with besides the block.
pub(crate) struct Env<'a> {
    pub pending: &'a mut Pending,
    pub ctx: &'a mut Ctx,
    pub out: &'a mut dyn Sink,
    /// Reasoning separation is on.
    pub reasoning: bool,
}

/// The fewest bytes a JSON step takes from the chunk at once (see `Op::Json`
/// in [`run`]).
const JSON_WINDOW: usize = 256;

/// Runs the block from chunk byte `i`; returns where it stopped.
pub(crate) fn run(
    prog: &[Op],
    b: &mut Block,
    env: &mut Env<'_>,
    ch: &Chunk<'_>,
    mut i: usize,
) -> (usize, Outcome) {
    // A failure ends the block (back to text at the current byte), or, with
    // a recovery point armed, the failed call and the block goes on.
    macro_rules! fail {
        ($stop:expr) => {{
            match fail(b, prog, env, $stop) {
                Failed::Recovered => continue,
                Failed::Over(None) => return (i, Outcome::Text),
                Failed::Over(Some(markup)) => return (i, Outcome::Replay(markup)),
            }
        }};
    }
    // The current step's state. (The state is set before it is asked
    // for, so the other arm is never taken; it would end the block, not the
    // process.)
    macro_rules! current {
        ($v:ident) => {
            match &mut b.st {
                StepState::$v(s) => s,
                _ => fail!(Stop::fail(Reason::NoProgress)),
            }
        };
    }
    // The current step's state, made fresh by `$init` if it is another
    // step's.
    macro_rules! state {
        ($v:ident, $init:expr) => {{
            if !matches!(b.st, StepState::$v(_)) {
                b.st = StepState::$v($init);
            }
            current!($v)
        }};
    }
    // Steps that read nothing must not loop (a custom program may jump to
    // itself): give up after visiting every step twice without progress.
    let (mut spins, mut last) = (0usize, i);
    loop {
        let Some(op) = prog.get(b.pc) else {
            // Falling off the end of a program ends the block.
            end_block(b, env);
            return (i, Outcome::Text);
        };
        if i == last {
            spins += 1;
        } else {
            (spins, last) = (0, i);
        }
        if spins > 2 * prog.len() + 2 {
            // Not a failure of one call: the block is over.
            b.recover = None;
            fail!(Stop::fail(Reason::NoProgress));
        }
        // Steps that read no byte run even at the end of the input, so a
        // call is dispatched in the feed that completes it.
        match op {
            Op::Dispatch => {
                b.calls.sync(env.out, env.pending.src());
                let had = b.calls.call.is_some();
                let at = env.pending.pos;
                match b.calls.dispatch(env.ctx, env.out, at, env.pending.src()) {
                    Ok(()) => {
                        if had {
                            env.pending.drop_upto(at);
                        }
                        b.goto(b.pc + 1);
                    }
                    Err(stop) => fail!(stop),
                }
                continue;
            }
            Op::Open(array) => {
                if let Err(stop) = b.calls.open_container(*array) {
                    fail!(stop);
                }
                b.calls.sync(env.out, env.pending.src());
                b.goto(b.pc + 1);
                continue;
            }
            Op::CloseOpen => {
                if let Err(stop) = b.calls.close_container() {
                    fail!(stop);
                }
                b.calls.sync(env.out, env.pending.src());
                b.goto(b.pc + 1);
                continue;
            }
            Op::Definite => {
                b.calls.tentative = false;
                b.goto(b.pc + 1);
                continue;
            }
            Op::StringParam(key) => {
                let name = b.calls.call.as_ref().and_then(|c| c.name.as_deref());
                let sole = match (name, env.ctx.tools.as_ref()) {
                    (Some(n), Some(t)) => t.sole_string_param(n),
                    _ => None,
                };
                let key = sole.unwrap_or(key).to_owned();
                b.calls.param_key(&key);
                b.goto(b.pc + 1);
                continue;
            }
            Op::Frame => {
                let at = env.pending.pos;
                env.pending.drop_upto(at);
                b.goto(b.pc + 1);
                continue;
            }
            Op::Reasoning(on) => {
                if env.reasoning {
                    env.pending.in_reasoning = *on;
                }
                b.goto(b.pc + 1);
                continue;
            }
            Op::Recover(seek) => {
                b.recover = Some(*seek);
                b.goto(b.pc + 1);
                continue;
            }
            Op::Then(t) if !t.seek && !b.calls.owns_bytes() && matches!(b.st, StepState::Fresh) => {
                // A continuation with no completed call before it (after a
                // recovered failure): nothing held belongs to a call.
                release_all(env);
            }
            Op::End => {
                end_block(b, env);
                return (i, Outcome::Text);
            }
            Op::Goto(t) => {
                b.goto(*t);
                continue;
            }
            Op::Unhold(n) => {
                env.pending.release_front(*n, env.out);
                b.goto(b.pc + 1);
                continue;
            }
            _ => {}
        }
        if i == ch.bytes.len() {
            return (i, Outcome::NeedMore);
        }
        // A limit trips at exactly the byte that would exceed it. The call
        // limit bounds every block; an unconfirmed one is bounded by the
        // hold-back limit too (the smaller of the two, so that a call
        // confirmed halfway through the bytes given here is still held to
        // the call limit).
        let limits = &env.ctx.limits;
        let limit = if b.calls.silent() {
            limits.max_holdback.min(limits.max_call_bytes)
        } else {
            limits.max_call_bytes
        } as u64;
        let room = limit.saturating_sub(env.pending.held()) as usize;
        let end = ch.bytes.len().min(i + room.max(1));
        let input = &ch.bytes[i..end];
        let over = |consumed: usize| room == 0 && consumed > 0;
        let too_long = Stop::fail(Reason::TooLong {
            limit: limit as usize,
            confirmed: !b.calls.silent(),
        });
        let progress = match op {
            Op::Ws => steps::ws(input),
            Op::Blank => steps::blank(input),
            Op::Word => steps::word(input),
            Op::Lit(l) | Op::OptLit(l) | Op::LitOrEof(l) => {
                let m = state!(Lit, LitMatch::default());
                m.feed(l, matches!(op, Op::OptLit(_)), input)
            }
            Op::Fork(alts) => match alts.iter().find(|(set, _)| set.contains(input[0])) {
                Some(&(_, t)) => {
                    b.goto(t);
                    continue;
                }
                None => Progress::Fail(0, Reason::Unexpected { found: input[0] }),
            },
            Op::Capture(c) => {
                let w = state!(Capture, CaptureWord::default());
                let (p, how) = w.feed(c, env.ctx.limits.max_name_bytes, input);
                let n = consumed(p);
                if over(n) {
                    fail!(too_long);
                }
                env.pending.take_n(ch, n);
                i += n;
                let next = match how {
                    Captured::No => None,
                    Captured::AtStop => Some(b.pc + 1),
                    Captured::ByDelim(k) => Some(c.delims[k].1),
                };
                if let Some(next) = next {
                    let word = std::mem::take(w);
                    let word = word.trimmed();
                    // A keyword is markup: it sets nothing and jumps.
                    if let Some((_, to)) = c.keywords.iter().find(|(k, _)| k.as_bytes() == word) {
                        b.goto(*to);
                        continue;
                    }
                    if let Err(stop) = captured(b, c.field, word, env) {
                        fail!(stop);
                    }
                    b.goto(next);
                } else if let Progress::Fail(_, r) = p {
                    let r = fault_of(c.field, prose_word(r, &b.calls));
                    fail!(Stop {
                        reason: r,
                        not_a_call: !r.is_limit(),
                    });
                }
                continue;
            }
            Op::Then(t) if t.seek => {
                let m = state!(Then, ThenMatch::seeking(env.pending.buf_start, Vec::new()));
                let (n, found) = m.seek(&t.opts, input);
                let to = env.pending.pos + n as u64;
                let held = m.held.len() as u64;
                match found {
                    None => {
                        // Text, but for what may begin a literal.
                        env.pending.flush(ch, to, to - held, false, env.out);
                        m.from = env.pending.buf_start;
                        i += n;
                    }
                    Some(k) => {
                        // Everything before the literal is text.
                        env.pending.flush(ch, to, to - held, true, env.out);
                        i += n;
                        let o = &t.opts[k];
                        if o.begins_call {
                            b.calls.begin();
                        } else {
                            // It ends the failed call: text too.
                            release_all(env);
                        }
                        b.goto(o.to);
                    }
                }
                continue;
            }
            // After a call, one of several literals, or the block is over
            // (`Then`); one of several literals, or the block fails (`OneOf`).
            Op::Then(ThenOp { opts, .. }) | Op::OneOf(opts) => {
                let then = matches!(op, Op::Then(_));
                let t = state!(Then, ThenMatch::new(env.pending.pos, opts.len()));
                let (p, how) = t.feed(opts, then, input);
                let from = t.from;
                let n = consumed(p);
                if over(n) {
                    fail!(too_long);
                }
                env.pending.take_n(ch, n);
                i += n;
                match how {
                    ThenEnd::No => {}
                    ThenEnd::Matched(k) => {
                        if opts[k].begins_call {
                            b.calls.begin();
                        }
                        b.goto(opts[k].to);
                    }
                    ThenEnd::Over if !then => {
                        fail!(Stop::not_a_call(Reason::Unexpected { found: input[n] }))
                    }
                    ThenEnd::Over => {
                        // Not a continuation: the block is over and what
                        // this step held is scanned as text again.
                        if b.calls.owns_bytes() {
                            env.pending.drop_upto(from);
                        }
                        let p = &mut *env.pending;
                        let k = (from.saturating_sub(p.buf_start) as usize).min(p.buf.len());
                        let held = p.buf.split_off(k);
                        p.pos = p.buf_start + k as u64;
                        end_block(b, env);
                        return (i, Outcome::Replay(held));
                    }
                }
                continue;
            }
            Op::Value(v) => {
                if !matches!(b.st, StepState::Value(_)) {
                    let at = env.pending.pos;
                    let vr = ValueRead::new(v, at, b.calls.param_name());
                    b.st = StepState::Value(Box::new(vr));
                    let src = env.pending.src();
                    if let Err(stop) = b.calls.value_begin(env.ctx, env.out, at, v.null, src) {
                        fail!(stop);
                    }
                }
                let vr = current!(Value);
                let (n, end) = vr.feed(input, env.pending.pos, env.pending.src());
                if let End::Bad(found) = end {
                    fail!(Stop::fail(Reason::Unexpected { found }));
                }
                if over(n) {
                    fail!(too_long);
                }
                env.pending.take_n(ch, n);
                i += n;
                if end == End::Closed {
                    // The value ended at the call's closer it met: the block
                    // reads what followed that closer again.
                    match end_value_at_candidate(b, env) {
                        Ok(Some((_, tail))) => return (i, Outcome::Reread(tail)),
                        Ok(None) => fail!(Stop::fail(Reason::NoProgress)),
                        Err(stop) => fail!(stop),
                    }
                }
                let pos = env.pending.pos;
                vr.hand(env.pending.src(), pos, end != End::No, &mut b.calls);
                let next = match end {
                    End::No | End::Bad(_) | End::Closed => None,
                    End::Nest(to) => {
                        // A container, not text: no value to end.
                        b.goto(to);
                        b.calls.sync(env.out, env.pending.src());
                        continue;
                    }
                    End::Close => Some(b.pc + 1),
                    End::Recover(to) => {
                        unclosed(&mut b.calls, vr.end_offset(pos));
                        Some(to)
                    }
                };
                if let Some(next) = next {
                    if let Err(stop) = b.calls.value_end(pos, env.pending.src()) {
                        fail!(stop);
                    }
                    b.goto(next);
                }
                b.calls.sync(env.out, env.pending.src());
                continue;
            }
            Op::Py(py) => {
                if !matches!(b.st, StepState::Py(_)) {
                    let c = b.calls.cur();
                    if c.span.is_some() || !matches!(c.args_state, Args::Missing) {
                        fail!(Stop::fail(Reason::TwoArgs));
                    }
                    c.args.clear();
                    b.st = StepState::Py(Box::new(PyReader::new(&mut c.args)));
                }
                let r = current!(Py);
                let c = b.calls.cur();
                let p = r.feed(py, env.ctx.limits.max_depth, input, &mut c.args);
                let n = consumed(p);
                if over(n) {
                    fail!(too_long);
                }
                env.pending.take_n(ch, n);
                i += n;
                if r.shown() && matches!(c.args_state, Args::Missing) {
                    // A key (or the end of the arguments) shows a call: the
                    // reader stopped at the byte that showed it, so the
                    // call starts (or the block fails) there, however the
                    // input was cut.
                    c.args_state = Args::Written;
                    let at = env.pending.pos;
                    if let Err(stop) = b.calls.try_start(env.ctx, env.out, at, env.pending.src()) {
                        fail!(stop);
                    }
                }
                // What was written for the bytes read goes out before a
                // failure too, as it would have with a chunk boundary there.
                b.calls.sync(env.out, env.pending.src());
                match p {
                    Progress::Partial(_) => {}
                    Progress::Done(_) => {
                        b.calls.args_complete();
                        b.goto(b.pc + 1);
                    }
                    Progress::Fail(_, r) => fail!(Stop::fail(r)),
                }
                continue;
            }
            Op::Skip(ends, to) => {
                // A failed element: its bytes are text as they come, up to
                // its end, which the step at `to` reads.
                let sk = state!(Skip, Skip::top());
                let end = sk.feed(ends, env.ctx.limits.max_depth, input);
                let n = match end {
                    Skipped::More => input.len(),
                    Skipped::End(n) | Skipped::Broken(n) => n,
                };
                env.pending.take_n(ch, n);
                i += n;
                match end {
                    Skipped::More => release(env),
                    Skipped::End(_) => {
                        // (An ASCII byte follows: nothing held can be part
                        // of a character it would finish.)
                        release_all(env);
                        b.goto(*to);
                    }
                    Skipped::Broken(_) => {
                        // A bracket that does not fit: where the element
                        // ends cannot be known, so the list ends here (the
                        // failure was reported), and this byte is text
                        // again.
                        release_all(env);
                        end_block(b, env);
                        return (i, Outcome::Text);
                    }
                }
                continue;
            }
            Op::Json(j) => {
                if room == 0 {
                    fail!(too_long);
                }
                let js = state!(
                    Json,
                    Box::new(JsonState {
                        scanner: JsonScanner::new(j.lenient, env.ctx.limits.max_depth),
                        calls: JsonCalls::new(),
                        refused: false,
                    })
                );
                // The bytes are taken first, so that arguments can be spans of
                // the pending buffer; those the value did not use are given
                // back after. They are taken in windows no larger than the
                // block so far (at least `JSON_WINDOW`): a value that ends
                // early in a long chunk copies a few bytes more than it
                // reads, not the rest of the chunk (which made one chunk of
                // many calls quadratic), and a long value is still copied
                // once, in windows that double.
                let want = (env.pending.held() as usize).max(JSON_WINDOW);
                let input = &input[..input.len().min(want)];
                let base = env.pending.pos;
                env.pending.take_n(ch, input.len());
                let element = matches!(b.recover.map(|pc| prog.get(pc)), Some(Some(Op::Skip(..))));
                let mut builder = Builder {
                    ctx: env.ctx,
                    calls: &mut b.calls,
                    json: &mut js.calls,
                    step: j,
                    out: env.out,
                    src: env.pending.src(),
                    reasoning: env.pending.in_reasoning,
                    element,
                };
                let r = js.scanner.feed(input, base, &mut builder);
                let n = match r {
                    Ok(n) => n,
                    Err(e) => (e.at - base) as usize,
                };
                env.pending.untake(input.len() - n);
                b.calls.sync(env.out, env.pending.src());
                i += n;
                if let Some(d) = js.calls.drop_upto.take() {
                    env.pending.drop_upto(d);
                }
                if let Some((stop, at)) = js.calls.take_given_back() {
                    // A list element failed and has ended (the scanner
                    // paused after it): it is text, from the end of the
                    // call before it (or the block's start), and the list
                    // reads on.
                    let fate = "; the element is kept as text and the list reads on";
                    report(&mut b.calls, env, stop, None, at, fate);
                    release(env);
                    // The failed element was the whole value (a call object
                    // of a list read call by call): the list reads on where
                    // its recovery says.
                    if js.scanner.is_done() {
                        if let Some(pc) = b.recover {
                            b.goto(pc);
                            continue;
                        }
                    }
                }
                if js.calls.skip {
                    // Not a call after all: what was held is text, and so
                    // is the rest of the value.
                    release(env);
                    let StepState::Json(js) = std::mem::replace(&mut b.st, StepState::Fresh) else {
                        return (i, Outcome::Text);
                    };
                    if r.is_ok() && !js.scanner.is_done() {
                        return (i, Outcome::Skip(Box::new(js.scanner)));
                    }
                    return (i, Outcome::Text);
                }
                match r {
                    Ok(_) => {
                        if js.scanner.is_done() {
                            b.goto(b.pc + 1);
                        }
                    }
                    Err(e) => {
                        let stop = match js.calls.take_failure() {
                            Some(stop) => stop,
                            None => {
                                js.refused = true;
                                Stop::fail(e.reason)
                            }
                        };
                        fail!(stop);
                    }
                }
                continue;
            }
            Op::Dispatch
            | Op::Open(_)
            | Op::CloseOpen
            | Op::End
            | Op::Goto(_)
            | Op::Unhold(_)
            | Op::Definite
            | Op::Frame
            | Op::Reasoning(_)
            | Op::StringParam(_)
            | Op::Recover(_) => {
                // (The steps that read nothing are handled above.)
                fail!(Stop::fail(Reason::NoProgress))
            }
        };
        // The steps whose outcome needs nothing but the bytes.
        let n = consumed(progress);
        if over(n) {
            fail!(too_long);
        }
        env.pending.take_n(ch, n);
        i += n;
        match progress {
            Progress::Partial(_) => {}
            Progress::Done(_) => b.goto(b.pc + 1),
            Progress::Fail(_, r) => fail!(Stop::fail(r)),
        }
    }
}

fn consumed(p: Progress) -> usize {
    match p {
        Progress::Partial(n) | Progress::Done(n) | Progress::Fail(n, _) => n,
    }
}

/// A captured word: checks it and hands it to the call. A name from markup
/// may still be replaced (DeepSeek V3 writes a type word first) or followed
/// by an id: the call starts when its arguments do.
fn captured(b: &mut Block, field: Field, raw: &[u8], env: &mut Env<'_>) -> Result<(), Stop> {
    let word = check_field(raw, field, &env.ctx.limits)
        .map_err(|r| Stop::not_a_call(prose_word(r, &b.calls)))?;
    let at = env.pending.pos;
    let src = env.pending.src();
    match field {
        Field::Name => b.calls.set_name(env.ctx, env.out, at, word, false, src),
        Field::Id => b.calls.set_id(env.ctx, env.out, at, word, false, src),
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
            b.calls.set_name(env.ctx, env.out, at, name, false, src)?;
            b.calls.set_id(env.ctx, env.out, at, word, false, src)
        }
        Field::Discard => Ok(()),
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
fn prose_word(r: Reason, calls: &Calls) -> Reason {
    match r {
        Reason::NameTooLong { .. } if calls.silent() => Reason::LongWord,
        r => r,
    }
}

/// Notes a value whose closing tag is missing (reported with its call).
fn unclosed(calls: &mut Calls, offset: u64) {
    let message = format!(
        "the value of `{}` has no closing tag: it ends at the markup that follows it",
        calls.param_name()
    );
    tracing::debug!(offset, "{message}");
    calls.notes.push(Diagnostic {
        kind: DiagnosticKind::Unclosed,
        offset,
        message,
    });
}

/// At the end of the stream, a value that met markup which may end it (a
/// call's closer inside an unclosed value) ends there. Returns where that
/// markup ends and the bytes after it, which the block reads again from
/// the markup's label; `None` if the block is not in such a value.
pub(crate) fn end_value_at_eof(b: &mut Block, env: &mut Env<'_>) -> Option<(u64, Vec<u8>)> {
    end_value_at_candidate(b, env).ok().flatten()
}

/// Ends the value the block is in at the markup met in it that may end it
/// (see [`end_value_at_eof`]); the next call's markup after that markup
/// does so at once. `Ok(None)`: no such markup was met.
fn end_value_at_candidate(
    b: &mut Block,
    env: &mut Env<'_>,
) -> Result<Option<(u64, Vec<u8>)>, Stop> {
    let StepState::Value(vr) = &mut b.st else {
        return Ok(None);
    };
    if !vr.has_candidate() {
        return Ok(None);
    }
    let Some((at, len, to)) = vr.end_at_candidate(env.pending.src(), &mut b.calls) else {
        return Ok(None);
    };
    b.calls.value_end(at, env.pending.src())?;
    unclosed(&mut b.calls, at);
    b.calls.sync(env.out, env.pending.src());
    let resume = at + len as u64;
    let p = &mut *env.pending;
    let k = (resume.saturating_sub(p.buf_start) as usize).min(p.buf.len());
    let tail = p.buf.split_off(k);
    p.pos = p.buf_start + k as u64;
    b.goto(to);
    Ok(Some((p.pos, tail)))
}

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
pub(crate) fn at_end(prog: &[Op], b: &mut Block, env: &mut Env<'_>) -> AtEnd {
    if env.ctx.at_stop && b.calls.args_closed() {
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
            b.goto(b.pc + 1);
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
            b.goto(b.pc + 1);
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

fn failed_at_end(b: &mut Block, prog: &[Op], env: &mut Env<'_>, stop: Stop) -> AtEnd {
    match fail(b, prog, env, stop) {
        Failed::Over(Some(markup)) => AtEnd::Over(Outcome::Replay(markup)),
        Failed::Over(None) => AtEnd::Over(Outcome::Text),
        // Seeking the next call: the end of the stream finds none.
        Failed::Recovered => AtEnd::Moved,
    }
}

/// Releases what is held as text, up to a character boundary.
fn release(env: &mut Env<'_>) {
    let at = env.pending.pos;
    let empty = Chunk::from_str("", at);
    env.pending.flush(&empty, at, at, false, env.out);
}

/// Releases everything held as text, an unfinished character included
/// (what follows cannot finish it: it is read by the block).
fn release_all(env: &mut Env<'_>) {
    env.pending.release_all(env.out);
}

/// The block ended normally: its bytes belong to its calls, or, if it made
/// none, they are text.
pub(crate) fn end_block(b: &Block, env: &mut Env<'_>) {
    if b.calls.owns_bytes() {
        let at = env.pending.pos;
        env.pending.drop_upto(at);
    } else {
        release(env);
    }
}

/// What became of a block that failed.
pub(crate) enum Failed {
    /// A recovery point was armed: the block goes on.
    Recovered,
    /// The block is over; text mode reads on from the byte that failed,
    /// after these bytes (a partly matched literal, which may begin a
    /// marker).
    Over(Option<Vec<u8>>),
}

/// How many of the last bytes held are markup the failed step was matching
/// (a literal, or a delimiter in a word): they may begin another marker, so
/// they are read again rather than swallowed.
fn partial_markup(b: &Block, prog: &[Op]) -> usize {
    match (&b.st, prog.get(b.pc)) {
        (StepState::Lit(m), _) => m.at,
        (StepState::Then(t), Some(Op::OneOf(_))) => t.matched(),
        (StepState::Capture(w), Some(Op::Capture(c))) => {
            steps::literal_start(&w.word, c.delims.iter().map(|(l, _)| l))
        }
        _ => 0,
    }
}

/// Reports a failed call, unless the block never looked like a call, and
/// drops it; `fate` says what becomes of its bytes.
fn report(
    calls: &mut Calls,
    env: &mut Env<'_>,
    stop: Stop,
    lit: Option<&Lit>,
    offset: u64,
    fate: &str,
) {
    let limit = stop.reason.is_limit();
    let silent = calls.silent() && !limit;
    let abandoned = calls.abandon();
    if silent {
        return;
    }
    let mut message = stop.reason.message(lit);
    if let Some(i) = abandoned {
        message.push_str(&format!(" (call #{i} is not dispatched)"));
    }
    message.push_str(fate);
    let kind = if limit {
        DiagnosticKind::Limit
    } else if stop.reason.is_refusal() {
        DiagnosticKind::NotAllowed
    } else {
        DiagnosticKind::Malformed
    };
    tracing::debug!(offset, kind = kind.as_str(), "{message}");
    let d = Diagnostic {
        kind,
        offset,
        message,
    };
    env.out.event(EventRef::Diagnostic(&d));
}

/// The block failed at the current byte: reports it unless it never looked
/// like a call, and gives its bytes back as text. With a recovery point
/// armed, only the failed call's bytes are text, and the block goes on,
/// seeking the literals of its `Step::Recover`.
pub(crate) fn fail(b: &mut Block, prog: &[Op], env: &mut Env<'_>, stop: Stop) -> Failed {
    let limit = stop.reason.is_limit();
    // (At a limit the step may count bytes it was not given room for.)
    let partial = if limit { 0 } else { partial_markup(b, prog) };
    let seek = b.recover.and_then(|pc| match prog.get(pc) {
        Some(Op::Then(t)) if t.seek => Some((pc, t)),
        _ => None,
    });
    // A list element recovers once the block is known to hold calls, and
    // where the failed step can say how to read on over the element.
    let skip = match b.recover.map(|pc| (pc, prog.get(pc))) {
        Some((pc, Some(Op::Skip(..)))) if !limit && !b.calls.silent() => {
            skip_from(&b.st, prog, b.pc).map(|sk| (pc, sk))
        }
        _ => None,
    };
    let lit: Option<&Lit> = match prog.get(b.pc) {
        Some(Op::Lit(l) | Op::OptLit(l) | Op::LitOrEof(l)) => Some(l),
        _ => None,
    };
    let fate = if skip.is_some() {
        "; the element is kept as text and the list reads on"
    } else if seek.is_some() {
        "; the call is kept as text and reading goes on after it"
    } else {
        "; the block is kept as text"
    };
    let offset = env.pending.pos;
    report(&mut b.calls, env, stop, lit, offset, fate);
    if let Some((pc, sk)) = skip {
        // What the element read so far is text; the rest of it is read
        // over from the failing byte.
        release(env);
        b.pc = pc;
        b.st = StepState::Skip(sk);
        return Failed::Recovered;
    }
    if seek.is_some() && matches!(prog.get(b.pc), Some(Op::Dispatch)) {
        // The call failed once all its markup was read (a call the options
        // refuse, arguments that are not UTF-8): its bytes are text, and
        // the group reads on after it, as after a call that went through
        // (seeking would pass the call's end and take the group's closer
        // for the failed call's).
        release(env);
        b.goto(b.pc + 1);
        return Failed::Recovered;
    }
    let Some((pc, t)) = seek else {
        let p = &mut *env.pending;
        let mut k = p.buf.len() - partial.min(p.buf.len());
        if k == 0 && !p.buf.is_empty() {
            // The literal that failed began at the block's own first byte
            // (a replayed marker its program refused): read again from
            // there, the marker would open the same block again, without
            // end. Its first character is text; the rest is read again.
            k = crate::utf8::char_len(p.buf[0]).min(p.buf.len());
        }
        let markup = p.buf.split_off(k);
        p.pos = p.buf_start + k as u64;
        release(env);
        return Failed::Over((!markup.is_empty()).then_some(markup));
    };
    // The failed call's bytes are text, but for a tail that may begin one
    // of the literals sought (a partly matched marker is read again).
    let p = &mut *env.pending;
    // A character the failing byte may still finish (the first bytes of
    // `ｔ` read as the start of `｜`) is not cut: it stays pending, ahead of
    // what the seek holds, and leaves with the bytes that finish it.
    let keep = steps::literal_start(&p.buf, t.opts.iter().map(|o| &o.lit));
    let at = p.pos;
    p.flush(
        &Chunk::from_str("", at),
        at,
        at - keep as u64,
        keep > 0,
        env.out,
    );
    b.pc = pc;
    let held = p.buf[p.buf.len() - keep.min(p.buf.len())..].to_vec();
    b.st = StepState::Then(ThenMatch::seeking(p.buf_start, held));
    Failed::Recovered
}

/// How to read over the rest of a list element from the failing byte of
/// the step in state `st`; `None` if it cannot be known.
fn skip_from(st: &StepState, prog: &[Op], pc: usize) -> Option<Skip> {
    match st {
        StepState::Py(r) => match prog.get(pc) {
            Some(Op::Py(step)) => r.skip(step),
            _ => None,
        },
        // Bad JSON: from the scanner's state before the byte it refused.
        StepState::Json(js) if js.refused => Some(js.scanner.skip()),
        // A call that failed inside JSON (the scanner read on: its state is
        // past the byte) or inside a raw value: not followed.
        StepState::Json(_) | StepState::Value(_) | StepState::Skip(_) => None,
        // Between the element's parts (its name, the markup after it).
        StepState::Fresh | StepState::Lit(_) | StepState::Capture(_) | StepState::Then(_) => {
            Some(Skip::top())
        }
    }
}
