//! The streaming parser: one state machine over the bytes of a response.
//!
//! It is always in one of three modes:
//! - **text**: stepping the grammar's marker automaton; bytes that can no
//!   longer start a marker are released as text at once;
//! - **block**: running the program of the opener that matched, step by
//!   step, with every byte of the block kept until the block's fate is known
//!   (a completed call drops them, a failure releases them as text);
//! - **skip**: a tentative block turned out not to be a call; the rest of its
//!   JSON value is scanned (so nothing inside it opens a call) and released
//!   as text.
//!
//! Everything it needs between chunks is in the struct, so a feed costs
//! O(bytes fed) however the input is chunked.

use std::collections::HashSet;
use std::sync::Arc;

use crate::call::{check_word, is_word_byte, Builder, Calls, Ctx, JsonCalls, Stop};
use crate::error::Error;
use crate::event::{Diagnostic, DiagnosticKind, Event, FinishReason};
use crate::format::{Field, Step, Trust};
use crate::grammar::{Grammar, PatKind};
use crate::ids::Minter;
use crate::json::{Flow, JsonScanner, Kind, Sink};
use crate::marker::{Found, StateID};
use crate::options::Options;
use crate::registry::Registry;
use crate::utf8::{complete_prefix_len, lossy};

/// A streaming tool-call parser for one response.
///
/// Feed it chunks with [`feed`](Parser::feed) as they arrive and call
/// [`finish`](Parser::finish) once at the end; every call returns the events
/// the new bytes completed. After `finish`, feeding does nothing.
///
/// ```
/// use toolscan_core::{Event, Parser};
/// let mut p = Parser::for_format("mistral-v11").unwrap();
/// let mut ev = p.feed(b"[TOOL_CALLS]get_time[ARGS]{}");
/// // no end marker: the call is dispatched as its JSON value closes
/// assert!(matches!(ev.last(), Some(Event::ToolCallEnd { .. })));
/// ev.extend(p.finish());
/// ```
#[derive(Debug)]
pub struct Parser {
    g: Arc<Grammar>,
    ctx: Ctx,
    reasoning: bool,
    in_reasoning: bool,
    /// Absolute offset of the next byte.
    pos: u64,
    /// Bytes not yet released as text nor dropped as a call's span:
    /// `buf_start..pos`.
    buf: Vec<u8>,
    buf_start: u64,
    mode: Mode,
    finished: bool,
    truncated: bool,
}

#[derive(Debug)]
enum Mode {
    Text { sid: StateID, fed: u64 },
    Block(Box<Block>),
    Skip(Box<JsonScanner>),
}

#[derive(Debug)]
struct Block {
    opener: usize,
    pc: usize,
    st: StepState,
    calls: Calls,
}

#[derive(Debug)]
enum StepState {
    Fresh,
    Lit(usize),
    Capture {
        word: Vec<u8>,
        trailing: bool,
    },
    Json(Box<(JsonScanner, JsonCalls)>),
    /// `from`: where the step began; what came before belongs to the
    /// calls already made.
    Then {
        from: u64,
        pos: usize,
        alive: Vec<bool>,
    },
}

fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

fn describe(b: u8) -> String {
    if b.is_ascii_graphic() {
        format!("`{}`", b as char)
    } else {
        format!("byte 0x{b:02x}")
    }
}

/// How a step went.
enum Next {
    /// Carry on with the same or next step.
    Go,
    /// The block failed at the current byte (not consumed).
    Fail(Stop, DiagnosticKind),
}

impl Parser {
    /// A parser for a compiled grammar.
    pub fn new(grammar: Arc<Grammar>, options: Options) -> Parser {
        let in_reasoning = options.reasoning && options.starts_in_reasoning;
        let ctx = Ctx {
            next_index: 0,
            completed: 0,
            used_ids: HashSet::new(),
            minter: Minter::new(&options.ids),
            tools: options.tools,
            limits: options.limits,
        };
        let mut p = Parser {
            g: Arc::clone(&grammar),
            ctx,
            reasoning: options.reasoning,
            in_reasoning,
            pos: 0,
            buf: Vec::new(),
            buf_start: 0,
            mode: Mode::Text {
                sid: grammar_start(&grammar),
                fed: 0,
            },
            finished: false,
            truncated: false,
        };
        // The stream starts at the start of a line.
        let sid = p.g.sets[p.set_index()].set.line_start();
        p.mode = Mode::Text { sid, fed: 0 };
        p
    }

    /// A parser for a built-in format name (or `auto`) with default options.
    pub fn for_format(name: &str) -> Result<Parser, Error> {
        Ok(Parser::new(
            Registry::builtin().grammar(name)?,
            Options::default(),
        ))
    }

    /// How many bytes were fed so far.
    pub fn offset(&self) -> u64 {
        self.pos
    }

    /// Whether [`finish`](Parser::finish) was called.
    pub fn is_finished(&self) -> bool {
        self.finished
    }

    /// Feeds the next chunk; returns the events it completes.
    pub fn feed(&mut self, chunk: &[u8]) -> Vec<Event> {
        let mut out = Vec::new();
        self.feed_into(chunk, &mut out);
        out
    }

    /// Feeds the next chunk, appending the events it completes to `out`.
    pub fn feed_into(&mut self, chunk: &[u8], out: &mut Vec<Event>) {
        if self.finished {
            return;
        }
        self.process(chunk, out);
    }

    /// Ends the stream; returns the remaining events, `done` last.
    pub fn finish(&mut self) -> Vec<Event> {
        let mut out = Vec::new();
        self.finish_into(&mut out);
        out
    }

    /// Ends the stream, appending the remaining events (`done` last) to
    /// `out`.
    pub fn finish_into(&mut self, out: &mut Vec<Event>) {
        if self.finished {
            return;
        }
        self.finished = true;
        self.finish_block(out);
        let end = self.pos;
        self.release(end, true, out);
        let finish_reason = if self.truncated {
            FinishReason::Length
        } else if self.ctx.completed > 0 {
            FinishReason::ToolCalls
        } else {
            FinishReason::Stop
        };
        out.push(Event::Done { finish_reason });
    }

    /// A mode to put in place while a block is taken out of `self.mode`.
    fn placeholder(&self) -> Mode {
        Mode::Text {
            sid: grammar_start(&self.g),
            fed: 0,
        }
    }

    /// Takes the mode out, leaving a placeholder.
    fn detach(&mut self) -> Mode {
        let ph = self.placeholder();
        std::mem::replace(&mut self.mode, ph)
    }

    fn set_index(&self) -> usize {
        match (self.reasoning, self.in_reasoning) {
            (false, _) => 0,
            (true, false) => 1,
            (true, true) => 2,
        }
    }

    fn text_mode(&mut self) {
        let sid = self.g.sets[self.set_index()].set.start();
        self.mode = Mode::Text { sid, fed: 0 };
    }

    fn process(&mut self, input: &[u8], out: &mut Vec<Event>) {
        let mut i = 0;
        while i < input.len() {
            i = match self.mode {
                Mode::Text { .. } => self.run_text(input, i, out),
                Mode::Block(_) => self.run_block(input, i, out),
                Mode::Skip(_) => self.run_skip(input, i, out),
            };
        }
    }

    /// Takes `bytes` into the pending buffer.
    fn take(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
        self.pos += bytes.len() as u64;
    }

    /// Releases pending bytes up to `upto` as text (or reasoning), cut at a
    /// character boundary unless `force`.
    fn release(&mut self, upto: u64, force: bool, out: &mut Vec<Event>) {
        let n = (upto.saturating_sub(self.buf_start) as usize).min(self.buf.len());
        let cut = if force {
            n
        } else {
            complete_prefix_len(&self.buf[..n])
        };
        if cut == 0 {
            return;
        }
        let text = lossy(&self.buf[..cut]);
        self.buf.drain(..cut);
        self.buf_start += cut as u64;
        let merged = match out.last_mut() {
            Some(Event::Text { delta }) if !self.in_reasoning => {
                delta.push_str(&text);
                true
            }
            Some(Event::Reasoning { delta }) if self.in_reasoning => {
                delta.push_str(&text);
                true
            }
            _ => false,
        };
        if !merged {
            out.push(if self.in_reasoning {
                Event::Reasoning { delta: text }
            } else {
                Event::Text { delta: text }
            });
        }
    }

    /// Drops pending bytes up to `upto`: they belong to a call.
    fn drop_upto(&mut self, upto: u64) {
        let n = (upto.saturating_sub(self.buf_start) as usize).min(self.buf.len());
        self.buf.drain(..n);
        self.buf_start += n as u64;
    }

    fn run_text(&mut self, input: &[u8], i: usize, out: &mut Vec<Event>) -> usize {
        let g = Arc::clone(&self.g);
        let ts = &g.sets[self.set_index()];
        let Mode::Text { mut sid, mut fed } = self.mode else {
            return i;
        };
        let found = ts.set.scan(&mut sid, &input[i..], &self.buf);
        match found {
            Found::Nothing => {
                let n = input.len() - i;
                fed += n as u64;
                self.take(&input[i..]);
                self.mode = Mode::Text { sid, fed };
                let hold = (ts.set.depth(sid) as u64).min(fed);
                self.release(self.pos - hold, false, out);
                input.len()
            }
            Found::Marker { pattern, end } => {
                self.take(&input[i..i + end]);
                let p = ts.set.pattern(pattern);
                let start = self.pos - (p.bytes.len() - p.lead) as u64;
                self.release(start, true, out);
                match ts.kinds[pattern] {
                    PatKind::ThinkOpen | PatKind::ThinkClose => {
                        let end = self.pos;
                        self.drop_upto(end);
                        self.in_reasoning = ts.kinds[pattern] == PatKind::ThinkOpen;
                        self.text_mode();
                    }
                    PatKind::Opener(k) => {
                        let op = &g.openers[k];
                        tracing::trace!(offset = start, opener = k, "block opens");
                        self.mode = Mode::Block(Box::new(Block {
                            opener: k,
                            pc: 0,
                            st: StepState::Fresh,
                            calls: Calls::new(op.trust != Trust::Definite),
                        }));
                        if op.replay {
                            let marker = std::mem::take(&mut self.buf);
                            self.pos = self.buf_start;
                            self.process(&marker, out);
                        }
                    }
                }
                i + end
            }
        }
    }

    fn run_skip(&mut self, input: &[u8], i: usize, out: &mut Vec<Event>) -> usize {
        let Mode::Skip(sc) = &mut self.mode else {
            return i;
        };
        let r = sc.feed(&input[i..], self.pos, &mut Ignore);
        let done = sc.is_done();
        let (n, failed) = match r {
            Ok(n) => (n, false),
            Err(e) => ((e.at - self.pos) as usize, true),
        };
        self.take(&input[i..i + n]);
        if done || failed {
            self.text_mode();
        }
        let end = self.pos;
        self.release(end, false, out);
        i + n
    }

    fn run_block(&mut self, input: &[u8], mut i: usize, out: &mut Vec<Event>) -> usize {
        let g = Arc::clone(&self.g);
        let Mode::Block(mut b) = self.detach() else {
            return i;
        };
        let prog = &g.openers[b.opener].program;
        // Steps that read nothing must not loop (a custom program could say
        // `Goto` itself): give up after visiting every step twice.
        let (mut spins, mut last) = (0usize, i);
        loop {
            let Some(step) = prog.get(b.pc) else {
                self.end_block(b, out);
                return i;
            };
            if i == last {
                spins += 1;
            } else {
                spins = 0;
                last = i;
            }
            if spins > 2 * prog.len() + 2 {
                let stop = Stop {
                    message: "the format's program does not advance".into(),
                    not_a_call: false,
                };
                self.fail(b, stop, DiagnosticKind::Malformed, out);
                return i;
            }
            // Steps that read no byte run even at the end of the input, so a
            // call is dispatched in the feed that completes it.
            match step {
                Step::Dispatch => {
                    b.calls.sync(out);
                    let had = b.calls.call.is_some();
                    match b.calls.dispatch(&mut self.ctx, out, self.pos) {
                        Ok(()) => {
                            if had {
                                let end = self.pos;
                                self.drop_upto(end);
                            }
                            b.pc += 1;
                            b.st = StepState::Fresh;
                            continue;
                        }
                        Err(stop) => {
                            self.fail(b, stop, DiagnosticKind::Malformed, out);
                            return i;
                        }
                    }
                }
                Step::End => {
                    self.end_block(b, out);
                    return i;
                }
                Step::Goto(t) => {
                    b.pc = *t;
                    b.st = StepState::Fresh;
                    continue;
                }
                _ => {}
            }
            if i == input.len() {
                self.mode = Mode::Block(b);
                return i;
            }
            let byte = input[i];
            let next = match step {
                Step::Ws => {
                    let n = input[i..].iter().take_while(|&&c| is_ws(c)).count();
                    if n == 0 {
                        b.pc += 1;
                    }
                    self.take(&input[i..i + n]);
                    i += n;
                    Next::Go
                }
                Step::Lit(l) | Step::OptLit(l) | Step::LitOrEof(l) => {
                    let at = match b.st {
                        StepState::Lit(k) => k,
                        _ => 0,
                    };
                    if l.matches_at(at, byte) {
                        self.take(&input[i..=i]);
                        i += 1;
                        if at + 1 == l.bytes.len() {
                            b.pc += 1;
                            b.st = StepState::Fresh;
                        } else {
                            b.st = StepState::Lit(at + 1);
                        }
                        Next::Go
                    } else if at == 0 && matches!(step, Step::OptLit(_)) {
                        b.pc += 1;
                        Next::Go
                    } else {
                        Next::Fail(
                            Stop {
                                message: format!(
                                    "expected `{}`, found {}",
                                    l.display(),
                                    describe(byte)
                                ),
                                not_a_call: false,
                            },
                            DiagnosticKind::Malformed,
                        )
                    }
                }
                Step::Word => {
                    let n = input[i..]
                        .iter()
                        .take_while(|c| c.is_ascii_alphanumeric() || b"_+.-".contains(c))
                        .count();
                    if n == 0 || i + n < input.len() {
                        b.pc += 1;
                    }
                    self.take(&input[i..i + n]);
                    i += n;
                    Next::Go
                }
                Step::Capture(c) => {
                    if !matches!(b.st, StepState::Capture { .. }) {
                        b.st = StepState::Capture {
                            word: Vec::new(),
                            trailing: false,
                        };
                    }
                    let StepState::Capture { word, trailing } = &mut b.st else {
                        continue; // just set above
                    };
                    let delim_byte = c
                        .delims
                        .iter()
                        .any(|(d, _)| d.bytes.iter().any(|&x| x.eq_ignore_ascii_case(&byte)));
                    if c.stop.contains(&byte) {
                        let w = std::mem::take(word);
                        self.captured(&mut b, c.field, &w, None, out)
                    } else if word.is_empty() && is_ws(byte) && !delim_byte {
                        self.take(&input[i..=i]);
                        i += 1;
                        Next::Go
                    } else if !is_word_byte(byte) && !is_ws(byte) && !delim_byte {
                        Next::Fail(
                            Stop {
                                message: format!("{} in a tool name", describe(byte)),
                                not_a_call: true,
                            },
                            DiagnosticKind::Malformed,
                        )
                    } else if *trailing && !is_ws(byte) && !delim_byte {
                        Next::Fail(
                            Stop {
                                message: "whitespace inside a tool name".into(),
                                not_a_call: true,
                            },
                            DiagnosticKind::Malformed,
                        )
                    } else {
                        word.push(byte);
                        self.take(&input[i..=i]);
                        i += 1;
                        let hit = c.delims.iter().find(|(d, _)| d.is_suffix_of(word));
                        if let Some((d, jump)) = hit {
                            let mut w = std::mem::take(word);
                            w.truncate(w.len() - d.bytes.len());
                            self.captured(&mut b, c.field, &w, *jump, out)
                        } else {
                            if is_ws(byte) && word.iter().any(|&x| !is_ws(x)) {
                                *trailing = true;
                            }
                            if word.len() > self.ctx.limits.max_name_bytes + 64 {
                                Next::Fail(
                                    Stop {
                                        message: format!(
                                            "name longer than the limit of {} bytes",
                                            self.ctx.limits.max_name_bytes
                                        ),
                                        not_a_call: false,
                                    },
                                    DiagnosticKind::Limit,
                                )
                            } else {
                                Next::Go
                            }
                        }
                    }
                }
                Step::Json(j) => {
                    if !matches!(b.st, StepState::Json(_)) {
                        b.st = StepState::Json(Box::new((
                            JsonScanner::new(j.lenient, self.ctx.limits.max_depth),
                            JsonCalls::new(),
                        )));
                    }
                    let StepState::Json(state) = &mut b.st else {
                        continue; // just set above
                    };
                    let (scanner, jc) = &mut **state;
                    let mut builder = Builder {
                        ctx: &mut self.ctx,
                        calls: &mut b.calls,
                        json: jc,
                        step: j,
                        out,
                    };
                    let r = scanner.feed(&input[i..], self.pos, &mut builder);
                    b.calls.sync(out);
                    let n = match &r {
                        Ok(n) => *n,
                        Err(e) => (e.at - self.pos) as usize,
                    };
                    self.take(&input[i..i + n]);
                    i += n;
                    if let Some(d) = jc.drop_upto.take() {
                        self.drop_upto(d);
                    }
                    if jc.skip {
                        // Not a call after all: the rest of the value is text.
                        if r.is_ok() && !scanner.is_done() {
                            self.mode = Mode::Skip(Box::new(scanner.clone()));
                        } else {
                            self.text_mode();
                        }
                        let end = self.pos;
                        self.release(end, false, out);
                        return i;
                    }
                    match r {
                        Ok(_) => {
                            if scanner.is_done() {
                                b.pc += 1;
                                b.st = StepState::Fresh;
                            }
                            Next::Go
                        }
                        Err(e) => {
                            let kind = if e.limit {
                                DiagnosticKind::Limit
                            } else {
                                DiagnosticKind::Malformed
                            };
                            let stop = jc.take_failure().unwrap_or(Stop {
                                message: e.message,
                                not_a_call: false,
                            });
                            Next::Fail(stop, kind)
                        }
                    }
                }
                Step::Fork(alts) => match alts.iter().find(|(set, _)| set.contains(byte)) {
                    Some((_, t)) => {
                        b.pc = *t;
                        b.st = StepState::Fresh;
                        Next::Go
                    }
                    None => Next::Fail(
                        Stop {
                            message: format!("unexpected {}", describe(byte)),
                            not_a_call: true,
                        },
                        DiagnosticKind::Malformed,
                    ),
                },
                Step::Then(opts) => {
                    if !matches!(b.st, StepState::Then { .. }) {
                        b.st = StepState::Then {
                            from: self.pos,
                            pos: 0,
                            alive: vec![true; opts.len()],
                        };
                    }
                    let StepState::Then { from, pos, alive } = &mut b.st else {
                        continue; // just set above
                    };
                    if *pos == 0 && is_ws(byte) {
                        self.take(&input[i..=i]);
                        i += 1;
                        Next::Go
                    } else {
                        let mut any = false;
                        for (k, (lit, _)) in opts.iter().enumerate() {
                            alive[k] =
                                alive[k] && *pos < lit.bytes.len() && lit.matches_at(*pos, byte);
                            any |= alive[k];
                        }
                        if !any {
                            // Not a continuation: the block is over and what
                            // this step held is scanned as text again.
                            let from = *from;
                            self.drop_upto(from);
                            let held = std::mem::take(&mut self.buf);
                            self.pos = self.buf_start;
                            self.end_block(b, out);
                            self.process(&held, out);
                            return i;
                        }
                        self.take(&input[i..=i]);
                        i += 1;
                        *pos += 1;
                        let done = opts
                            .iter()
                            .enumerate()
                            .find(|(k, (lit, _))| alive[*k] && lit.bytes.len() == *pos);
                        if let Some((_, (_, t))) = done {
                            // A separator (not a closer) begins the next call.
                            if !matches!(prog.get(*t), Some(Step::End) | Some(Step::Then(_))) {
                                b.calls.begin();
                            }
                            b.pc = *t;
                            b.st = StepState::Fresh;
                        }
                        Next::Go
                    }
                }
                Step::Dispatch | Step::End | Step::Goto(_) => Next::Go,
            };
            match next {
                Next::Go => {}
                Next::Fail(stop, kind) => {
                    self.fail(b, stop, kind, out);
                    return i;
                }
            }
            let limit = if b.calls.silent() {
                self.ctx.limits.max_holdback
            } else {
                self.ctx.limits.max_call_bytes
            };
            if self.pos - self.buf_start > limit as u64 {
                let stop = Stop {
                    message: format!(
                        "{} longer than the limit of {limit} bytes",
                        if b.calls.silent() {
                            "unconfirmed block"
                        } else {
                            "call"
                        }
                    ),
                    not_a_call: false,
                };
                self.fail(b, stop, DiagnosticKind::Limit, out);
                return i;
            }
        }
    }

    /// A captured word: checks it and hands it to the call.
    fn captured(
        &mut self,
        b: &mut Block,
        field: Field,
        raw: &[u8],
        jump: Option<usize>,
        out: &mut Vec<Event>,
    ) -> Next {
        let start = raw.iter().position(|&x| !is_ws(x)).unwrap_or(raw.len());
        let end = raw
            .iter()
            .rposition(|&x| !is_ws(x))
            .map_or(start, |e| e + 1);
        let word = match check_word(&raw[start..end], &self.ctx.limits) {
            Ok(w) => w,
            Err(message) => {
                return Next::Fail(
                    Stop {
                        message,
                        not_a_call: true,
                    },
                    DiagnosticKind::Malformed,
                )
            }
        };
        let next = jump.unwrap_or(b.pc + 1);
        let at = self.pos;
        // A name from markup may still be replaced (DeepSeek V3 writes a
        // type word first) or followed by an id: the call starts when its
        // arguments do.
        let r = match field {
            Field::Name => b.calls.set_name(&mut self.ctx, out, at, word, false),
            Field::Id => b.calls.set_id(&mut self.ctx, out, at, word, false),
            Field::Discard => Ok(()),
        };
        match r {
            Ok(()) => {
                b.pc = next;
                b.st = StepState::Fresh;
                Next::Go
            }
            Err(stop) => Next::Fail(stop, DiagnosticKind::Malformed),
        }
    }

    /// The block ended normally.
    fn end_block(&mut self, b: Box<Block>, out: &mut Vec<Event>) {
        let end = self.pos;
        if b.calls.done > 0 {
            self.drop_upto(end);
        } else {
            self.release(end, false, out);
        }
        self.text_mode();
    }

    /// The block failed at the current byte: report it unless it never
    /// looked like a call, and give its bytes back as text.
    fn fail(&mut self, mut b: Box<Block>, stop: Stop, kind: DiagnosticKind, out: &mut Vec<Event>) {
        let silent = b.calls.silent() && kind != DiagnosticKind::Limit;
        let abandoned = b.calls.abandon();
        if !silent {
            let mut message = stop.message;
            if let Some(i) = abandoned {
                message.push_str(&format!(" (call #{i} is not dispatched)"));
            }
            message.push_str("; the block is kept as text");
            tracing::debug!(offset = self.pos, kind = kind.as_str(), "{message}");
            out.push(Event::Diagnostic(Diagnostic {
                kind,
                offset: self.pos,
                message,
            }));
        }
        let end = self.pos;
        self.release(end, false, out);
        self.text_mode();
    }

    /// At `finish`: completes a block whose end the end of the stream may
    /// stand for, or reports it as truncated.
    fn finish_block(&mut self, out: &mut Vec<Event>) {
        let g = Arc::clone(&self.g);
        loop {
            let Mode::Block(b) = &mut self.mode else {
                return;
            };
            let prog = &g.openers[b.opener].program;
            let fresh = !matches!(b.st, StepState::Lit(k) if k > 0);
            match prog.get(b.pc) {
                Some(Step::Ws) | Some(Step::Word) => b.pc += 1,
                Some(Step::OptLit(_)) | Some(Step::LitOrEof(_)) if fresh => {
                    b.pc += 1;
                    b.st = StepState::Fresh;
                    // run the steps that read nothing (Dispatch, End)
                    self.run_block(&[], 0, out);
                }
                Some(Step::Then(_)) => {
                    // What earlier steps read belongs to the calls.
                    let from = match b.st {
                        StepState::Then { from, .. } => from,
                        _ => self.pos,
                    };
                    self.drop_upto(from);
                    let Mode::Block(b) = self.detach() else {
                        return;
                    };
                    let end = self.pos;
                    self.release(end, true, out);
                    self.end_block(b, out);
                    return;
                }
                _ => {
                    let Mode::Block(mut b) = self.detach() else {
                        return;
                    };
                    // After a completed call, with no other one begun (an
                    // unclosed list of calls), the stream ended between
                    // calls: not a truncation.
                    let between_calls = b.calls.done > 0
                        && b.calls.call.is_none()
                        && match &b.st {
                            // `[{…}, ` promises another call
                            StepState::Json(state) => state.0.between_values(),
                            _ => true,
                        };
                    if !b.calls.silent() && !between_calls {
                        self.truncated = true;
                        let mut message = "the stream ended inside a call".to_string();
                        if let Some(i) = b.calls.abandon() {
                            message.push_str(&format!(" (call #{i} is not dispatched)"));
                        }
                        message.push_str("; its bytes are kept as text");
                        tracing::debug!(offset = self.pos, "{message}");
                        out.push(Event::Diagnostic(Diagnostic {
                            kind: DiagnosticKind::Truncated,
                            offset: self.pos,
                            message,
                        }));
                    }
                    let end = self.pos;
                    self.release(end, true, out);
                    self.text_mode();
                    return;
                }
            }
        }
    }
}

fn grammar_start(g: &Grammar) -> StateID {
    g.sets[0].set.start()
}

/// A sink that ignores everything (skip mode).
struct Ignore;

impl Sink for Ignore {
    fn value_start(&mut self, _: u64, _: usize, _: Kind) -> Flow {
        Flow::Go
    }
    fn value_end(&mut self, _: u64, _: usize, _: Kind) -> Flow {
        Flow::Go
    }
    fn key(&mut self, _: u64, _: usize, _: &[u8], _: bool) -> Flow {
        Flow::Go
    }
    fn output(&mut self, _: &[u8]) {}
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::{Format, Opener};

    fn run(format: Format, input: &[u8]) -> Vec<Event> {
        let mut reg = Registry::builtin();
        let name = format.name().to_string();
        reg.register(format).unwrap();
        let mut p = Parser::new(reg.grammar(&name).unwrap(), Options::default());
        let mut ev = p.feed(input);
        ev.extend(p.finish());
        ev
    }

    #[test]
    fn a_program_that_loops_fails_instead_of_hanging() {
        let f = Format::new("loop", "", "")
            .opener(Opener::definite("<x>", vec![Step::Goto(1), Step::Goto(0)]));
        let ev = run(f, b"a<x>b");
        assert!(ev
            .iter()
            .any(|e| matches!(e, Event::Diagnostic(d) if d.message.contains("does not advance"))));
        let text: String = ev
            .iter()
            .filter_map(|e| match e {
                Event::Text { delta } => Some(delta.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(text, "a<x>b");
    }

    #[test]
    fn holdback_is_exactly_the_possible_marker_prefix() {
        let mut p = Parser::for_format("deepseek-v3.1").unwrap();
        let marker = "<｜tool▁calls▁begin｜>".as_bytes();
        // every proper prefix of the marker is held, nothing before it
        for k in 1..marker.len() {
            let mut p2 = Parser::for_format("deepseek-v3.1").unwrap();
            let mut input = b"ab".to_vec();
            input.extend_from_slice(&marker[..k]);
            let ev = p2.feed(&input);
            assert_eq!(ev, vec![Event::Text { delta: "ab".into() }], "prefix {k}");
        }
        let ev = p.feed(b"x<\xef\xbd");
        assert_eq!(ev, vec![Event::Text { delta: "x".into() }]);
        // the next byte rules the marker out: all of it is released
        let ev = p.feed(b"\x9cz");
        assert_eq!(
            ev,
            vec![Event::Text {
                delta: "<｜z".into()
            }]
        );
    }

    #[test]
    fn line_start_markers_only_at_line_start() {
        let mut p = Parser::for_format("tool-arguments").unwrap();
        let mut ev = p.feed(b"xTOOL: a\nARGUMENTS: {}\nTOOL: b\nARGUMENTS: {}");
        ev.extend(p.finish());
        let names: Vec<&str> = ev
            .iter()
            .filter_map(|e| match e {
                Event::ToolCallEnd { name, .. } => Some(name.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(names, ["b"]);
    }

    #[test]
    fn an_unclosed_list_after_a_complete_call_is_not_a_truncation() {
        let done = |input: &[u8]| {
            let mut p = Parser::for_format("mistral").unwrap();
            let mut ev = p.feed(input);
            ev.extend(p.finish());
            let diags = ev
                .iter()
                .filter(|e| matches!(e, Event::Diagnostic(_)))
                .count();
            (ev.last().cloned(), diags)
        };
        let (last, diags) = done(b"[TOOL_CALLS][{\"name\": \"a\", \"arguments\": {}}");
        assert_eq!(
            last,
            Some(Event::Done {
                finish_reason: FinishReason::ToolCalls
            })
        );
        assert_eq!(diags, 0);
        // a separator promises another call
        let (last, diags) = done(b"[TOOL_CALLS][{\"name\": \"a\", \"arguments\": {}}, ");
        assert_eq!(
            last,
            Some(Event::Done {
                finish_reason: FinishReason::Length
            })
        );
        assert_eq!(diags, 1);
        let (last, diags) = done(b"[TOOL_CALLS][{\"name\": \"a\", \"arguments\": {}}, {\"na");
        assert_eq!(
            last,
            Some(Event::Done {
                finish_reason: FinishReason::Length
            })
        );
        assert_eq!(diags, 1);
    }

    #[test]
    fn arguments_keep_the_models_key_order() {
        let mut p = Parser::for_format("hermes").unwrap();
        let ev = p
            .feed(b"<tool_call>{\"name\": \"f\", \"arguments\": {\"b\": 1, \"a\": 2}}</tool_call>");
        let Some(Event::ToolCallEnd { arguments, .. }) = ev.last() else {
            panic!("{ev:?}")
        };
        let keys: Vec<&str> = arguments.keys().map(String::as_str).collect();
        assert_eq!(keys, ["b", "a"]);
    }

    #[test]
    fn markup_words_in_prose_are_not_reported() {
        let mut p = Parser::for_format("auto").unwrap();
        let mut ev = p.feed(b"Use the <tool> element, or <tools> and <response> tags.");
        ev.extend(p.finish());
        assert!(
            !ev.iter().any(|e| matches!(e, Event::Diagnostic(_))),
            "{ev:?}"
        );
    }

    #[test]
    fn arguments_given_as_a_json_string_are_decoded_as_they_stream() {
        let mut p = Parser::for_format("mistral-v11").unwrap();
        let mut ev = Vec::new();
        for b in br#"[TOOL_CALLS]f[ARGS]"{\"city\": \"Z\u00fcrich \ud83d\ude00\"}""#.chunks(1) {
            p.feed_into(b, &mut ev);
        }
        let args: String = ev
            .iter()
            .filter_map(|e| match e {
                Event::ToolCallArgs { delta, .. } => Some(delta.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(args, "{\"city\": \"Zürich 😀\"}");
        let Some(Event::ToolCallEnd { arguments, .. }) = ev.last() else {
            panic!("{ev:?}")
        };
        assert_eq!(arguments["city"], "Zürich 😀");
    }
}
