//! Assembling calls: name, id and arguments as they are recognised, the
//! `tool_call_start` / `tool_call_args` / `tool_call_end` events, and the
//! JSON [`Sink`] that maps call objects (`{"name", "arguments"}`, lists,
//! envelopes) onto calls.

use std::collections::HashSet;

use serde_json::{Map, Value};

use crate::event::{Diagnostic, DiagnosticKind, Event};
use crate::format::{JsonStep, Shape};
use crate::ids::Minter;
use crate::json::{Flow, Kind, Sink};
use crate::options::Limits;
use crate::tools::Tools;
use crate::utf8::{complete_prefix_len, lossy};

/// Per-parser state shared by all calls of the response.
#[derive(Debug)]
pub(crate) struct Ctx {
    pub next_index: usize,
    pub completed: usize,
    pub used_ids: HashSet<String>,
    pub minter: Minter,
    pub tools: Option<Tools>,
    pub limits: Limits,
}

/// Why a call could not go on.
#[derive(Debug)]
pub(crate) struct Stop {
    pub message: String,
    /// In a tentative block nothing was wrong with the text: it just is not a
    /// call.
    pub not_a_call: bool,
}

impl Stop {
    fn fail(message: impl Into<String>) -> Stop {
        Stop {
            message: message.into(),
            not_a_call: false,
        }
    }
    fn not_a_call(message: impl Into<String>) -> Stop {
        Stop {
            message: message.into(),
            not_a_call: true,
        }
    }
}

#[derive(Debug, Default)]
enum Args {
    /// Not seen yet.
    #[default]
    Missing,
    /// An object being recorded; it started at this depth.
    Object(usize),
    /// A JSON string holding the arguments, being decoded.
    Encoded(Unescaper),
    /// A literal being read (only `null` is allowed).
    Literal,
    /// `null`.
    Null,
    /// Complete.
    Done,
}

/// One call being assembled.
#[derive(Debug, Default)]
pub(crate) struct Call {
    name: Option<String>,
    id: Option<String>,
    args: Vec<u8>,
    args_state: Args,
    /// Index and id once `tool_call_start` was sent.
    started: Option<(usize, String)>,
    emitted: usize,
    /// The call object (or the arguments value) closed.
    complete: bool,
    /// An id may still come (a format that carries ids after the name).
    wait_id: bool,
}

/// The calls of one block.
#[derive(Debug)]
pub(crate) struct Calls {
    pub call: Option<Call>,
    /// The opener was not definite.
    pub tentative: bool,
    /// Some call of this block showed a name and arguments (it may still
    /// wait for an id before `tool_call_start`).
    pub started_any: bool,
    /// Calls of this block that completed.
    pub done: usize,
    /// The format may write an id after the name (a call object's id key).
    pub id_key: bool,
}

impl Calls {
    pub(crate) fn new(tentative: bool) -> Calls {
        Calls {
            call: None,
            tentative,
            started_any: false,
            done: 0,
            id_key: false,
        }
    }

    /// Failures are silent while a tentative block has shown no call.
    pub(crate) fn silent(&self) -> bool {
        self.tentative && !self.started_any
    }

    /// A new call begins (its bytes are being read).
    pub(crate) fn begin(&mut self) {
        self.cur();
    }

    fn cur(&mut self) -> &mut Call {
        self.call.get_or_insert_with(Call::default)
    }

    /// The index of the current call if it started.
    pub(crate) fn started_index(&self) -> Option<usize> {
        self.call
            .as_ref()
            .and_then(|c| c.started.as_ref().map(|s| s.0))
    }

    pub(crate) fn set_name(
        &mut self,
        ctx: &mut Ctx,
        out: &mut Vec<Event>,
        at: u64,
        name: String,
        from_json: bool,
    ) -> Result<(), Stop> {
        let id_key = self.id_key;
        let c = self.cur();
        c.name = Some(name);
        if !from_json {
            return Ok(());
        }
        c.wait_id = c.id.is_none() && id_key;
        self.try_start(ctx, out, at)
    }

    pub(crate) fn set_id(
        &mut self,
        ctx: &mut Ctx,
        out: &mut Vec<Event>,
        at: u64,
        id: String,
        from_json: bool,
    ) -> Result<(), Stop> {
        let c = self.cur();
        c.id = Some(id);
        c.wait_id = false;
        if !from_json {
            return Ok(());
        }
        self.try_start(ctx, out, at)
    }

    /// Sends `tool_call_start` once the call shows enough of itself.
    fn try_start(&mut self, ctx: &mut Ctx, out: &mut Vec<Event>, at: u64) -> Result<(), Stop> {
        let silent = self.silent();
        let Some(c) = self.call.as_mut() else {
            return Ok(());
        };
        let Some(name) = c.name.clone() else {
            return Ok(());
        };
        if c.started.is_some() {
            return Ok(());
        }
        let known = ctx.tools.as_ref().map(|t| t.contains(&name));
        if known == Some(false) && silent {
            return Err(Stop::not_a_call(format!(
                "`{name}` is not one of the tools"
            )));
        }
        // A tentative block becomes a call only once arguments (or the end
        // of the call object) follow the name.
        let looks_like_call = !matches!(c.args_state, Args::Missing) || c.complete;
        if silent && !looks_like_call {
            return Ok(());
        }
        self.started_any = true;
        if c.wait_id && !c.complete {
            return Ok(());
        }
        let index = ctx.next_index;
        ctx.next_index += 1;
        let id = match c.id.take() {
            Some(id) if !ctx.used_ids.contains(&id) => id,
            _ => {
                let mut attempt = 0;
                loop {
                    let id = ctx.minter.mint(index, attempt);
                    if !ctx.used_ids.contains(&id) {
                        break id;
                    }
                    attempt += 1;
                }
            }
        };
        ctx.used_ids.insert(id.clone());
        if known == Some(false) {
            out.push(Event::Diagnostic(Diagnostic {
                kind: DiagnosticKind::UnknownTool,
                offset: at,
                message: format!("call #{index} names `{name}`, which is not one of the tools"),
            }));
        }
        out.push(Event::ToolCallStart {
            index,
            id: id.clone(),
            name,
        });
        c.started = Some((index, id));
        self.sync(out);
        Ok(())
    }

    /// Emits the argument bytes recorded since the last sync.
    pub(crate) fn sync(&mut self, out: &mut Vec<Event>) {
        let Some(c) = self.call.as_mut() else { return };
        let Some((index, _)) = c.started else { return };
        let upto = c.emitted + complete_prefix_len(&c.args[c.emitted..]);
        if upto == c.emitted {
            return;
        }
        let delta = lossy(&c.args[c.emitted..upto]);
        c.emitted = upto;
        push_args(out, index, delta);
    }

    /// Marks the arguments (for markup-named formats: the whole value)
    /// complete.
    fn args_complete(&mut self) {
        if let Some(c) = self.call.as_mut() {
            c.args_state = Args::Done;
        }
    }

    /// The call is complete: emits `tool_call_end`.
    pub(crate) fn dispatch(
        &mut self,
        ctx: &mut Ctx,
        out: &mut Vec<Event>,
        at: u64,
    ) -> Result<(), Stop> {
        let Some(c) = self.call.as_mut() else {
            return Ok(());
        };
        c.complete = true;
        if c.name.is_none() {
            return Err(Stop::not_a_call("the call has no tool name"));
        }
        let arguments: Map<String, Value> = match c.args_state {
            Args::Done => match serde_json::from_slice(&c.args) {
                Ok(m) => m,
                Err(e) => return Err(Stop::fail(format!("arguments are not a JSON object: {e}"))),
            },
            Args::Missing | Args::Null => {
                c.args.clear();
                c.args.extend_from_slice(b"{}");
                c.emitted = 0;
                Map::new()
            }
            Args::Object(_) | Args::Encoded(_) | Args::Literal => {
                return Err(Stop::fail("the arguments did not end"));
            }
        };
        self.try_start(ctx, out, at)?;
        self.sync(out);
        let Some(c) = self.call.take() else {
            return Ok(());
        };
        let (Some(name), Some((index, id))) = (c.name, c.started) else {
            return Err(Stop::fail("the call could not start"));
        };
        tracing::trace!(offset = at, index, name = %name, "call complete");
        out.push(Event::ToolCallEnd {
            index,
            id,
            name,
            arguments,
        });
        ctx.completed += 1;
        self.done += 1;
        Ok(())
    }

    /// Where a failed call's message says what was lost.
    pub(crate) fn abandon(&mut self) -> Option<usize> {
        let i = self.started_index();
        self.call = None;
        i
    }
}

/// Appends an argument delta, merging with a preceding delta of the same call.
fn push_args(out: &mut Vec<Event>, index: usize, delta: String) {
    if let Some(Event::ToolCallArgs { index: i, delta: d }) = out.last_mut() {
        if *i == index {
            d.push_str(&delta);
            return;
        }
    }
    out.push(Event::ToolCallArgs { index, delta });
}

/// Checks a tool name or id: non-empty, bounded, no whitespace, control
/// characters or markup punctuation.
pub(crate) fn check_word(word: &[u8], limits: &Limits) -> Result<String, String> {
    if word.is_empty() {
        return Err("empty tool name".into());
    }
    if word.len() > limits.max_name_bytes {
        return Err(format!(
            "name longer than the limit of {} bytes",
            limits.max_name_bytes
        ));
    }
    if let Some(&b) = word.iter().find(|&&b| !is_word_byte(b)) {
        return Err(format!("{:?} is not allowed in a tool name", b as char));
    }
    String::from_utf8(word.to_vec()).map_err(|_| "tool name is not UTF-8".to_string())
}

/// Bytes allowed in names and ids (any non-ASCII byte is).
pub(crate) fn is_word_byte(b: u8) -> bool {
    b >= 0x80 || (b.is_ascii_graphic() && !b"\"'<>{}[]()`;,|\\=".contains(&b))
}

/// What a JSON value means for the call being assembled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    Ignore,
    Args,
    Name,
    Id,
    /// A call object: a new call.
    Call,
    /// A call object inside a list: a new call dispatched when it closes.
    ListCall,
    /// A nested `function` object of the current call.
    Function,
    List,
    /// The top of `Shape::Root`: a call, or an envelope of calls.
    Root,
}

/// State of a [`Shape`]d JSON value across chunks.
#[derive(Debug)]
pub(crate) struct JsonCalls {
    roles: Vec<Role>,
    member: Role,
    /// Raw string of a name or id being read: (role, depth, bytes).
    word: Option<(Role, usize, Vec<u8>)>,
    /// A tentative block turned out not to be a call: the rest of the value
    /// is text.
    pub skip: bool,
    /// A list call was dispatched: the block's bytes up to here belong to it.
    pub drop_upto: Option<u64>,
    failed: Option<Stop>,
}

impl JsonCalls {
    pub(crate) fn new() -> JsonCalls {
        JsonCalls {
            roles: Vec::new(),
            member: Role::Ignore,
            word: None,
            skip: false,
            drop_upto: None,
            failed: None,
        }
    }

    /// The failure a callback reported, if any.
    pub(crate) fn take_failure(&mut self) -> Option<Stop> {
        self.failed.take()
    }
}

/// The JSON sink of one feed: borrows everything it updates.
pub(crate) struct Builder<'a> {
    pub ctx: &'a mut Ctx,
    pub calls: &'a mut Calls,
    pub json: &'a mut JsonCalls,
    pub step: &'a JsonStep,
    pub out: &'a mut Vec<Event>,
}

impl Builder<'_> {
    fn stop(&mut self, s: Stop) -> Flow {
        if s.not_a_call && self.calls.silent() {
            self.json.skip = true;
            return Flow::Go;
        }
        let m = s.message.clone();
        self.json.failed = Some(s);
        Flow::Fail(m)
    }

    fn check(&mut self, r: Result<(), Stop>) -> Flow {
        match r {
            Ok(()) => Flow::Go,
            Err(s) => self.stop(s),
        }
    }

    fn key_role(&self, parent: Role, key: &[u8], overflow: bool) -> Option<Role> {
        let keys = &self.step.keys;
        let is = |list: &[String]| !overflow && list.iter().any(|k| k.as_bytes() == key);
        match parent {
            Role::Call | Role::ListCall | Role::Root | Role::Function => {
                if is(&keys.name) {
                    Some(Role::Name)
                } else if is(&keys.args) {
                    Some(Role::Args)
                } else if keys
                    .id
                    .as_ref()
                    .is_some_and(|k| !overflow && k.as_bytes() == key)
                {
                    Some(Role::Id)
                } else if parent != Role::Function
                    && keys
                        .function
                        .as_ref()
                        .is_some_and(|k| !overflow && k.as_bytes() == key)
                {
                    Some(Role::Function)
                } else if parent == Role::Root && key == b"tool_calls" {
                    Some(Role::List)
                } else if parent == Role::Root && key == b"tool_call" {
                    Some(Role::Call)
                } else if is(&keys.other) {
                    Some(Role::Ignore)
                } else {
                    None
                }
            }
            _ => Some(Role::Ignore),
        }
    }
}

impl Sink for Builder<'_> {
    fn value_start(&mut self, at: u64, depth: usize, kind: Kind) -> Flow {
        if self.json.skip {
            return Flow::Go;
        }
        let role = if depth == 0 {
            match (self.step.shape, kind) {
                // An object, or a JSON string holding one (`|tojson` of
                // arguments that were already a string).
                (Shape::Args, Kind::Object | Kind::String) => {
                    self.calls.cur();
                    Role::Args
                }
                (Shape::Call, Kind::Object) => Role::Call,
                (Shape::CallList, Kind::Object) => Role::Call,
                (Shape::CallList, Kind::Array) => Role::List,
                (Shape::Root, Kind::Object) => Role::Root,
                (Shape::Root, Kind::Array) => Role::List,
                (Shape::Args, _) => {
                    return self.stop(Stop::not_a_call("the arguments are not a JSON object"))
                }
                _ => return self.stop(Stop::not_a_call("expected a call object")),
            }
        } else if self.recording() {
            Role::Ignore
        } else {
            self.json.member
        };
        match role {
            Role::Ignore => {}
            Role::Args => {
                let c = self.calls.cur();
                if !matches!(c.args_state, Args::Missing) {
                    return self.stop(Stop::fail("the call has two arguments values"));
                }
                match kind {
                    Kind::Object => c.args_state = Args::Object(depth),
                    Kind::String => c.args_state = Args::Encoded(Unescaper::default()),
                    Kind::Literal => c.args_state = Args::Literal,
                    _ => return self.stop(Stop::not_a_call("the arguments are not a JSON object")),
                }
            }
            Role::Name | Role::Id => {
                if kind != Kind::String {
                    return self.stop(Stop::not_a_call("the tool name is not a string"));
                }
                self.json.word = Some((role, depth, Vec::new()));
            }
            Role::Call | Role::ListCall | Role::Function | Role::Root => {
                if kind != Kind::Object {
                    return self.stop(Stop::not_a_call("expected a call object"));
                }
                if matches!(role, Role::Call | Role::ListCall) {
                    self.calls.call = Some(Call::default());
                }
            }
            Role::List => {
                if kind != Kind::Array {
                    return self.stop(Stop::not_a_call("expected a list of calls"));
                }
            }
        }
        if matches!(kind, Kind::Object | Kind::Array) {
            self.json.roles.push(role);
            self.json.member = if role == Role::List {
                Role::ListCall
            } else {
                Role::Ignore
            };
        }
        // Arguments that follow a name may be what starts a tentative call.
        if role == Role::Args {
            let r = self.calls.try_start(self.ctx, self.out, at);
            return self.check(r);
        }
        Flow::Go
    }

    fn value_end(&mut self, at: u64, depth: usize, kind: Kind) -> Flow {
        if self.json.skip {
            return Flow::Go;
        }
        // Arguments.
        if let Some(c) = self.calls.call.as_mut() {
            match &mut c.args_state {
                Args::Object(d) if *d == depth => {
                    self.calls.args_complete();
                    if self.json.roles.last() == Some(&Role::Args) {
                        self.json.roles.pop();
                    }
                    if depth == 0 {
                        self.calls.cur().complete = true;
                    }
                    self.calls.sync(self.out);
                    return Flow::Go;
                }
                Args::Encoded(u) if u.done => {
                    let ok = serde_json::from_slice::<Map<String, Value>>(&c.args).is_ok();
                    if !ok {
                        return self.stop(Stop::not_a_call(
                            "the arguments string does not hold a JSON object",
                        ));
                    }
                    c.args_state = Args::Done;
                    c.complete |= depth == 0;
                    self.calls.sync(self.out);
                    return Flow::Go;
                }
                Args::Literal if kind == Kind::Literal => {
                    if c.args.as_slice() != b"null" {
                        return self.stop(Stop::not_a_call("the arguments are not a JSON object"));
                    }
                    c.args.clear();
                    c.args_state = Args::Null;
                    return Flow::Go;
                }
                _ => {}
            }
        }
        // A name or id.
        if self.json.word.as_ref().is_some_and(|(_, d, _)| *d == depth) {
            if let Some((role, _, raw)) = self.json.word.take() {
                let word = match serde_json::from_slice::<String>(&raw) {
                    Ok(w) => w,
                    Err(e) => return self.stop(Stop::fail(format!("bad name string: {e}"))),
                };
                let checked = check_word(word.as_bytes(), &self.ctx.limits);
                let r = match (role, checked) {
                    (_, Err(e)) => Err(Stop::not_a_call(e)),
                    (Role::Name, Ok(w)) => {
                        self.calls.id_key = self.step.keys.id.is_some();
                        self.calls.set_name(self.ctx, self.out, at, w, true)
                    }
                    (_, Ok(w)) => self.calls.set_id(self.ctx, self.out, at, w, true),
                };
                return self.check(r);
            }
        }
        // A container.
        if matches!(kind, Kind::Object | Kind::Array) {
            let Some(role) = self.json.roles.pop() else {
                return Flow::Go;
            };
            self.json.member = match self.json.roles.last() {
                Some(Role::List) => Role::ListCall,
                _ => Role::Ignore,
            };
            match role {
                Role::ListCall => {
                    let r = self.calls.dispatch(self.ctx, self.out, at);
                    if r.is_ok() {
                        self.json.drop_upto = Some(at + 1);
                    }
                    return self.check(r);
                }
                Role::Call | Role::Root => {
                    if let Some(c) = self.calls.call.as_mut() {
                        c.complete = true;
                        if c.name.is_none() {
                            return self.stop(Stop::not_a_call("the call object has no name"));
                        }
                        let r = self.calls.try_start(self.ctx, self.out, at);
                        return self.check(r);
                    } else if role == Role::Root && self.calls.done == 0 {
                        return self.stop(Stop::not_a_call("no call in the object"));
                    }
                }
                Role::List if self.calls.done == 0 && depth == 0 => {
                    return self.stop(Stop::not_a_call("an empty list of calls"));
                }
                _ => {}
            }
        }
        Flow::Go
    }

    fn key(&mut self, _at: u64, depth: usize, key: &[u8], overflow: bool) -> Flow {
        if self.json.skip || self.recording() {
            return Flow::Go;
        }
        let parent = self.json.roles.get(depth).copied().unwrap_or(Role::Ignore);
        match self.key_role(parent, key, overflow) {
            Some(role) => {
                if parent == Role::Root
                    && matches!(role, Role::Name | Role::Args | Role::Id | Role::Function)
                {
                    self.calls.cur();
                }
                self.json.member = role;
                Flow::Go
            }
            None => {
                self.json.member = Role::Ignore;
                if self.calls.silent() {
                    let k = String::from_utf8_lossy(key).into_owned();
                    self.stop(Stop::not_a_call(format!("unexpected key `{k}`")))
                } else {
                    Flow::Go
                }
            }
        }
    }

    fn output(&mut self, bytes: &[u8]) {
        if self.json.skip {
            return;
        }
        if let Some((_, _, raw)) = self.json.word.as_mut() {
            raw.extend_from_slice(bytes);
            return;
        }
        let Some(c) = self.calls.call.as_mut() else {
            return;
        };
        match &mut c.args_state {
            Args::Object(_) => c.args.extend_from_slice(bytes),
            Args::Encoded(u) => u.push(bytes, &mut c.args),
            Args::Literal => c.args.extend_from_slice(bytes),
            _ => {}
        }
    }
}

impl Builder<'_> {
    fn recording(&self) -> bool {
        self.calls
            .call
            .as_ref()
            .is_some_and(|c| matches!(c.args_state, Args::Object(_)))
    }
}

/// Decodes the content of a JSON string incrementally (for arguments given
/// as a JSON string): escapes, and `\uXXXX` surrogate pairs as one
/// character; a lone surrogate becomes U+FFFD.
#[derive(Debug, Default)]
pub(crate) struct Unescaper {
    opened: bool,
    done: bool,
    backslash: bool,
    hex: Option<(u8, u32)>,
    high: Option<u32>,
}

impl Unescaper {
    fn push(&mut self, bytes: &[u8], out: &mut Vec<u8>) {
        for &b in bytes {
            if self.done {
                return;
            }
            if let Some((n, v)) = self.hex {
                let d = (b as char).to_digit(16).unwrap_or(0);
                let v = v * 16 + d;
                if n == 3 {
                    self.hex = None;
                    self.unit(v, out);
                } else {
                    self.hex = Some((n + 1, v));
                }
                continue;
            }
            if self.backslash {
                self.backslash = false;
                if b == b'u' {
                    self.hex = Some((0, 0));
                    continue;
                }
                self.flush_high(out);
                out.push(match b {
                    b'n' => b'\n',
                    b't' => b'\t',
                    b'r' => b'\r',
                    b'b' => 0x08,
                    b'f' => 0x0c,
                    other => other,
                });
                continue;
            }
            match b {
                b'\\' => self.backslash = true,
                b'"' if !self.opened => self.opened = true,
                b'"' => {
                    self.flush_high(out);
                    self.done = true;
                }
                _ => {
                    self.flush_high(out);
                    out.push(b);
                }
            }
        }
    }

    fn unit(&mut self, v: u32, out: &mut Vec<u8>) {
        if let Some(h) = self.high.take() {
            if (0xDC00..0xE000).contains(&v) {
                let c = 0x10000 + ((h - 0xD800) << 10) + (v - 0xDC00);
                push_char(c, out);
                return;
            }
            push_char(0xFFFD, out);
        }
        if (0xD800..0xDC00).contains(&v) {
            self.high = Some(v);
        } else {
            push_char(v, out);
        }
    }

    fn flush_high(&mut self, out: &mut Vec<u8>) {
        if self.high.take().is_some() {
            push_char(0xFFFD, out);
        }
    }
}

fn push_char(c: u32, out: &mut Vec<u8>) {
    let ch = char::from_u32(c).unwrap_or('\u{FFFD}');
    let mut buf = [0u8; 4];
    out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unescape(s: &str, chunk: usize) -> String {
        let mut u = Unescaper::default();
        let mut out = Vec::new();
        for piece in s.as_bytes().chunks(chunk) {
            u.push(piece, &mut out);
        }
        assert!(u.done);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn unescapes_across_chunks() {
        let s = r#""{\"city\": \"Z\u00fcrich \ud83d\ude00\"}\n\t\\""#;
        for chunk in 1..=s.len() {
            assert_eq!(unescape(s, chunk), "{\"city\": \"Zürich 😀\"}\n\t\\");
        }
        assert_eq!(unescape(r#""\ud83d x""#, 1), "\u{FFFD} x");
        assert_eq!(unescape(r#""\ude00""#, 1), "\u{FFFD}");
    }

    #[test]
    fn words() {
        let l = Limits::default();
        assert_eq!(check_word(b"my-tool.v2", &l).unwrap(), "my-tool.v2");
        assert!(check_word(b"", &l).is_err());
        assert!(check_word(b"a b", &l).is_err());
        assert!(check_word(b"a<b", &l).is_err());
        assert!(check_word("café".as_bytes(), &l).is_ok());
        assert!(check_word(&[b'a'; 300], &l).is_err());
    }
}
