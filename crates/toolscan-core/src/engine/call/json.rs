//! The JSON sink that maps call objects (`{"name", "arguments"}`, lists of
//! them, envelopes such as `{"tool_calls": […]}`) onto calls, and the text
//! envelope (`{"response": "…"}`) onto text.

use crate::engine::call::calls::{Args, BlockCalls, Call, HeldBytes, Session};
use crate::engine::call::unescape::Unescaper;
use crate::event::{Diagnostic, DiagnosticKind, EventRef};
use crate::lang::format::{JsonStep, Shape};
use crate::offset::Offset;
use crate::read::json::{is_one_object, Kind, Reply, Visitor, KEY_CAP};
use crate::read::reason::{Reason, Stop, StopKind};
use crate::read::word::check_word;
use crate::scan::utf8::complete_prefix_len;
use crate::sink::Sink;

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
    /// The string of a text envelope (`{"response": "…"}`).
    Text,
}

/// The string of a text envelope being decoded into text.
///
/// Decoded bytes go out only together with the input that made them: at a
/// byte after which no escape is half read and no character unfinished,
/// the text decoded so far is emitted and the input up to that byte is
/// dropped. So if the envelope fails, what was not emitted is still pending
/// and comes back as text, verbatim — whatever the chunking.
#[derive(Debug)]
struct TextOut {
    unescaper: Unescaper,
    /// Decoded bytes not emitted yet.
    buf: Vec<u8>,
    /// Absolute offset of the next input byte of the string (strict JSON
    /// outputs exactly the bytes it consumes, an escape's backslash with
    /// the byte after it).
    raw: Offset,
    /// Offset of the string's opening quote (where an invalid UTF-8
    /// sequence in it is reported).
    start: Offset,
}

/// State of a [`Shape`]d JSON value across chunks.
#[derive(Debug)]
pub(crate) struct JsonMapping {
    roles: Vec<Role>,
    member: Role,
    /// Raw string of a name or id being read: (role, depth, bytes).
    word: Option<(Role, usize, Vec<u8>)>,
    /// A tentative block turned out not to be a call: the rest of the value
    /// is text.
    pub skip: bool,
    /// A list call was dispatched (or text went out): the block's bytes up
    /// to here belong to it.
    pub drop_upto: Option<Offset>,
    failed: Option<Stop>,
    text: Option<TextOut>,
    /// The depth of the list element being read (a call object, or what
    /// stands in its place).
    elem: Option<usize>,
    /// The element at this depth failed (why, and at which byte): the rest
    /// of it is scanned for its end only.
    skipping: Option<(usize, Stop, Offset)>,
    /// A failed element ended (the scanner paused after it): the block
    /// gives its bytes back as text.
    given_back: Option<(Stop, Offset)>,
    /// An element was given back: a list or envelope without a call is
    /// then no failure of its own.
    recovered: bool,
}

impl JsonMapping {
    pub(crate) fn new() -> JsonMapping {
        JsonMapping {
            roles: Vec::new(),
            member: Role::Ignore,
            word: None,
            skip: false,
            drop_upto: None,
            failed: None,
            text: None,
            elem: None,
            skipping: None,
            given_back: None,
            recovered: false,
        }
    }

    /// The failure a callback reported, if any.
    pub(crate) fn take_failure(&mut self) -> Option<Stop> {
        self.failed.take()
    }

    /// A list element that failed and has ended: why, and the offset of the
    /// byte that failed it. Its bytes are the block's to give back as text.
    pub(crate) fn take_given_back(&mut self) -> Option<(Stop, Offset)> {
        self.given_back.take()
    }

    /// Whether consumed string content only goes on the arguments as they
    /// stand in the input: what [`output`](Self::output) does with it is to
    /// grow the arguments' span (see [`BlockCalls::extend_span_run`]).
    pub(crate) fn passes_content_on(&self) -> bool {
        !self.skip && self.skipping.is_none() && self.text.is_none() && self.word.is_none()
    }

    /// Consumed JSON text: the arguments' bytes, the text envelope's
    /// text, a word's bytes (outside a value that is skipped or a failed
    /// element). The one thing a run of string content does (see
    /// `JsonScanner::string_run`), so the direct path calls it too.
    pub(crate) fn output(
        &mut self,
        calls: &mut BlockCalls,
        out: &mut dyn Sink,
        reasoning: bool,
        bytes: &[u8],
    ) {
        if self.skip || self.skipping.is_some() {
            return;
        }
        if let Some(t) = self.text.as_mut() {
            // Emit up to the last byte after which everything is decoded.
            let mut clean = None;
            for &b in bytes {
                t.unescaper.push(&[b], &mut t.buf);
                t.raw = t.raw.after(1);
                if t.unescaper.is_clean() && complete_prefix_len(&t.buf) == t.buf.len() {
                    clean = Some((t.buf.len(), t.raw));
                }
            }
            if let Some((n, raw)) = clean {
                emit_text(out, reasoning, &t.buf[..n], t.start);
                t.buf.drain(..n);
                self.drop_upto = Some(raw);
            }
            return;
        }
        if let Some((_, _, raw)) = self.word.as_mut() {
            raw.extend_from_slice(bytes);
            return;
        }
        let Some(c) = calls.call.as_mut() else {
            return;
        };
        match &mut c.args_state {
            Args::Object(_) => match &mut c.span {
                Some((_, len)) => *len += bytes.len(),
                None => c.args.extend_from_slice(bytes),
            },
            Args::Encoded(u) => u.push(bytes, &mut c.args),
            Args::Literal => c.args.extend_from_slice(bytes),
            _ => {}
        }
    }
}

/// The JSON sink of one feed: borrows everything it updates.
pub(crate) struct CallMapper<'a> {
    pub session: &'a mut Session,
    pub calls: &'a mut BlockCalls,
    pub json: &'a mut JsonMapping,
    pub step: &'a JsonStep,
    pub out: &'a mut dyn Sink,
    /// The block's pending bytes, the value being scanned included.
    pub src: HeldBytes<'a>,
    /// Text goes out as reasoning.
    pub reasoning: bool,
    /// The value is one element of a list whose failed elements are read
    /// over (the block recovers with a `Step::RecoverElement`): a call
    /// object that fails is read to its end, like an element of a JSON
    /// list of calls.
    pub element: bool,
}

impl CallMapper<'_> {
    fn stop(&mut self, s: Stop, at: Offset) -> Reply {
        if s.kind == StopKind::NotACall && self.calls.silent() {
            self.json.skip = true;
            return Reply::Go;
        }
        // An element of a list of calls, once the block is known to hold
        // calls: the element alone fails; the scanner reads on to its end
        // (see `value_end`) and the list goes on after it.
        if let Some(d) = self.json.elem {
            if !s.reason.is_limit() && !self.calls.silent() {
                self.json.skipping = Some((d, s, at));
                self.json.word = None;
                return Reply::Go;
            }
        }
        self.json.failed = Some(s);
        Reply::Fail(s.reason)
    }

    fn check(&mut self, r: Result<(), Stop>, at: Offset) -> Reply {
        match r {
            Ok(()) => Reply::Go,
            Err(s) => self.stop(s, at),
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
                } else if parent == Role::Root
                    && !self.step.lenient
                    && self.calls.call.is_none()
                    && keys
                        .text
                        .as_ref()
                        .is_some_and(|k| !overflow && k.as_bytes() == key)
                {
                    Some(Role::Text)
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

impl Visitor for CallMapper<'_> {
    fn value_start(&mut self, at: Offset, depth: usize, kind: Kind) -> Reply {
        if self.json.skip || self.json.skipping.is_some() {
            return Reply::Go;
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
                (Shape::Args, _) => return self.stop(Stop::not_a_call(Reason::ArgsNotObject), at),
                _ => return self.stop(Stop::not_a_call(Reason::ExpectedCall), at),
            }
        } else if self.recording() {
            Role::Ignore
        } else {
            self.json.member
        };
        if role == Role::ListCall || (depth == 0 && role == Role::Call && self.element) {
            self.json.elem = Some(depth);
        }
        match role {
            Role::Ignore => {}
            Role::Args => {
                let c = self.calls.cur();
                if !matches!(c.args_state, Args::Missing) {
                    return self.stop(Stop::fail(Reason::TwoArgs), at);
                }
                match kind {
                    Kind::Object => {
                        c.args_state = Args::Object(depth);
                        if !self.step.lenient {
                            // As written: a span of the input, not a copy.
                            c.span = Some((at, 0));
                        }
                    }
                    Kind::String => c.args_state = Args::Encoded(Unescaper::default()),
                    Kind::Literal => c.args_state = Args::Literal,
                    _ => return self.stop(Stop::not_a_call(Reason::ArgsNotObject), at),
                }
            }
            Role::Name | Role::Id => {
                if kind != Kind::String {
                    return self.stop(Stop::not_a_call(Reason::NameNotString), at);
                }
                self.json.word = Some((role, depth, Vec::new()));
            }
            Role::Call | Role::ListCall | Role::Function | Role::Root => {
                if kind != Kind::Object {
                    return self.stop(Stop::not_a_call(Reason::ExpectedCall), at);
                }
                if matches!(role, Role::Call | Role::ListCall) {
                    self.calls.call = Some(Call::default());
                }
            }
            Role::List => {
                if kind != Kind::Array {
                    return self.stop(Stop::not_a_call(Reason::ExpectedList), at);
                }
            }
            Role::Text => {
                if kind != Kind::String {
                    return self.stop(Stop::not_a_call(Reason::TextNotString), at);
                }
                // The envelope is recognised: what came before the string
                // is framing.
                self.calls.framed = true;
                self.json.drop_upto = Some(at);
                self.json.text = Some(TextOut {
                    unescaper: Unescaper::default(),
                    buf: Vec::new(),
                    raw: at,
                    start: at,
                });
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
            let r = self.calls.try_start(self.session, self.out, at, self.src);
            return self.check(r, at);
        }
        Reply::Go
    }

    fn value_end(&mut self, at: Offset, depth: usize, kind: Kind) -> Reply {
        if self.json.skipping.is_none() {
            let flow = self.value_ended(at, depth, kind);
            if self.json.skipping.is_none() {
                if self.json.elem == Some(depth) {
                    self.json.elem = None;
                }
                return flow;
            }
        }
        // A failed element: nothing in it counts. At its end the scanner
        // pauses, so that the block gives it back as text before anything
        // after it is read.
        match self.json.skipping {
            Some((d, stop, from)) if d == depth => {
                self.json.skipping = None;
                self.json.elem = None;
                self.json.roles.truncate(d);
                self.json.member = match self.json.roles.last() {
                    Some(Role::List) => Role::ListCall,
                    _ => Role::Ignore,
                };
                self.json.given_back = Some((stop, from));
                self.json.recovered = true;
                Reply::Pause
            }
            _ => Reply::Go,
        }
    }

    fn key(&mut self, at: Offset, depth: usize, key: &[u8], overflow: bool) -> Reply {
        if self.json.skip || self.json.skipping.is_some() || self.recording() {
            return Reply::Go;
        }
        self.key_met(at, depth, key, overflow)
    }

    fn output(&mut self, bytes: &[u8]) {
        self.json
            .output(self.calls, self.out, self.reasoning, bytes);
    }
}

impl CallMapper<'_> {
    /// A value ended (outside a failed element).
    fn value_ended(&mut self, at: Offset, depth: usize, kind: Kind) -> Reply {
        if self.json.skip {
            return Reply::Go;
        }
        // The text envelope's string: the rest of its text goes out.
        if let Some(mut t) = self.json.text.take() {
            let buf = std::mem::take(&mut t.buf);
            emit_text(self.out, self.reasoning, &buf, t.start);
            self.json.drop_upto = Some(at.after(1));
            return Reply::Go;
        }
        if let Some(flow) = self.args_ended(at, depth, kind) {
            return flow;
        }
        if let Some(flow) = self.word_ended(at, depth) {
            return flow;
        }
        if matches!(kind, Kind::Object | Kind::Array) {
            return self.container_ended(at, depth);
        }
        Reply::Go
    }

    /// A value ended that may be the call's arguments: `None` if it was
    /// not.
    fn args_ended(&mut self, at: Offset, depth: usize, kind: Kind) -> Option<Reply> {
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
                    self.calls.sync(self.out, self.src);
                    return Some(Reply::Go);
                }
                Args::Encoded(u) if u.done => {
                    if !is_one_object(&c.args, self.session.limits.max_depth) {
                        return Some(self.stop(Stop::not_a_call(Reason::EncodedArgsNotObject), at));
                    }
                    c.args_state = Args::Done;
                    c.complete |= depth == 0;
                    self.calls.sync(self.out, self.src);
                    return Some(Reply::Go);
                }
                Args::Literal if kind == Kind::Literal => {
                    if c.args.as_slice() != b"null" {
                        return Some(self.stop(Stop::not_a_call(Reason::ArgsNotObject), at));
                    }
                    c.args.clear();
                    c.args_state = Args::Null;
                    return Some(Reply::Go);
                }
                _ => {}
            }
        }
        None
    }

    /// A string ended that may be the call's name or id: `None` if it was
    /// not.
    fn word_ended(&mut self, at: Offset, depth: usize) -> Option<Reply> {
        if self.json.word.as_ref().is_some_and(|(_, d, _)| *d == depth) {
            if let Some((role, _, raw)) = self.json.word.take() {
                let word = match serde_json::from_slice::<String>(&raw) {
                    Ok(w) => w,
                    Err(_) => return Some(self.stop(Stop::fail(Reason::BadNameString), at)),
                };
                let checked = check_word(word.as_bytes(), &self.session.limits);
                let r = match (role, checked) {
                    (_, Err(e)) => Err(Stop::not_a_call(e)),
                    (Role::Name, Ok(w)) if self.step.keys.no_call.iter().any(|n| n == w) => {
                        let c = self.calls.cur();
                        c.name = Some(w.to_owned());
                        c.void = true;
                        Ok(())
                    }
                    (Role::Name, Ok(w)) => {
                        self.calls.id_key = self.step.keys.id.is_some();
                        self.calls
                            .set_name(self.session, self.out, at, w, true, self.src)
                    }
                    (_, Ok(w)) => self
                        .calls
                        .set_id(self.session, self.out, at, w, true, self.src),
                };
                return Some(self.check(r, at));
            }
        }
        None
    }

    /// An object or array ended: the end of a call, a list of calls, or
    /// nothing the calls are made of.
    fn container_ended(&mut self, at: Offset, depth: usize) -> Reply {
        let Some(role) = self.json.roles.pop() else {
            return Reply::Go;
        };
        self.json.member = match self.json.roles.last() {
            Some(Role::List) => Role::ListCall,
            _ => Role::Ignore,
        };
        match role {
            Role::ListCall => {
                let r = self.calls.dispatch(self.session, self.out, at, self.src);
                if r.is_ok() {
                    self.json.drop_upto = Some(at.after(1));
                }
                return self.check(r, at);
            }
            Role::Call | Role::Root => {
                if let Some(c) = self.calls.call.as_mut() {
                    c.complete = true;
                    if c.name.is_none() {
                        return self.stop(Stop::not_a_call(Reason::NoName), at);
                    }
                    let r = self.calls.try_start(self.session, self.out, at, self.src);
                    return self.check(r, at);
                } else if role == Role::Root && !self.calls.owns_bytes() && !self.json.recovered {
                    return self.stop(Stop::not_a_call(Reason::NoCall), at);
                }
            }
            Role::List
                if self.calls.done == 0
                    && !self.calls.framed
                    && !self.json.recovered
                    && depth == 0 =>
            {
                return self.stop(Stop::not_a_call(Reason::EmptyList), at);
            }
            _ => {}
        }
        Reply::Go
    }

    /// A member key (outside a failed element).
    fn key_met(&mut self, at: Offset, depth: usize, key: &[u8], overflow: bool) -> Reply {
        let parent = self.json.roles.get(depth).copied().unwrap_or(Role::Ignore);
        if self.step.keys.keyed && matches!(parent, Role::Call | Role::ListCall) {
            return self.keyed_name(at, key, overflow);
        }
        match self.key_role(parent, key, overflow) {
            Some(role) => {
                if parent == Role::Root
                    && matches!(role, Role::Name | Role::Args | Role::Id | Role::Function)
                {
                    self.calls.cur();
                }
                self.json.member = role;
                Reply::Go
            }
            None => {
                self.json.member = Role::Ignore;
                if self.calls.silent() {
                    self.stop(Stop::not_a_call(Reason::UnexpectedKey), at)
                } else {
                    Reply::Go
                }
            }
        }
    }
}

impl CallMapper<'_> {
    /// The key of a `{NAME: ARGUMENTS}` call object: the tool name; its
    /// value is the arguments.
    fn keyed_name(&mut self, at: Offset, key: &[u8], overflow: bool) -> Reply {
        if self.calls.call.as_ref().is_some_and(|c| c.name.is_some()) {
            return self.stop(Stop::not_a_call(Reason::TwoNames), at);
        }
        if overflow {
            return self.stop(Stop::not_a_call(Reason::NameTooLong { limit: KEY_CAP }), at);
        }
        let mut quoted = Vec::with_capacity(key.len() + 2);
        quoted.push(b'"');
        quoted.extend_from_slice(key);
        quoted.push(b'"');
        let Ok(word) = serde_json::from_slice::<String>(&quoted) else {
            return self.stop(Stop::fail(Reason::BadNameString), at);
        };
        let r = match check_word(word.as_bytes(), &self.session.limits) {
            Err(e) => Err(Stop::not_a_call(e)),
            Ok(w) => self
                .calls
                .set_name(self.session, self.out, at, w, true, self.src),
        };
        self.json.member = Role::Args;
        self.check(r, at)
    }

    fn recording(&self) -> bool {
        self.calls
            .call
            .as_ref()
            .is_some_and(|c| matches!(c.args_state, Args::Object(_)))
    }
}

/// Emits decoded envelope text; each invalid UTF-8 sequence becomes U+FFFD
/// after an `invalid_utf8` diagnostic at the string's offset.
fn emit_text(out: &mut dyn Sink, reasoning: bool, bytes: &[u8], at: Offset) {
    let text = |out: &mut dyn Sink, t: &str| {
        if !t.is_empty() {
            out.event(if reasoning {
                EventRef::Reasoning(t)
            } else {
                EventRef::Text(t)
            });
        }
    };
    if let Ok(s) = std::str::from_utf8(bytes) {
        return text(out, s);
    }
    for piece in bytes.utf8_chunks() {
        text(out, piece.valid());
        if !piece.invalid().is_empty() {
            let hex: Vec<String> = piece.invalid().iter().map(|b| format!("{b:02x}")).collect();
            let d = Diagnostic {
                kind: DiagnosticKind::InvalidUtf8,
                offset: at.get(),
                message: format!(
                    "bytes {} in the text envelope are not UTF-8; they became U+FFFD",
                    hex.join(" ")
                ),
            };
            out.event(EventRef::Diagnostic(&d));
            text(out, "\u{FFFD}");
        }
    }
}

#[cfg(test)]
mod tests {
    //! The JSON mapping against a table, through the parser: a format whose
    //! program is one `json` step between markers, fed every row at every
    //! chunk size. The outcome (text, calls, diagnostics) is the same
    //! whatever the chunking, and is the one each row gives by hand.

    use std::sync::Arc;

    use crate::event::{DiagnosticKind, Event};
    use crate::ids::IdMint;
    use crate::lang::format::{CallKeys, Format, JsonStep, Opener, Shape, Step};
    use crate::lang::grammar::Grammar;
    use crate::options::Options;
    use crate::Parser;

    use DiagnosticKind::Malformed;

    /// What a row's input gave: the text, each call as (name, arguments
    /// JSON, id), and the kinds of the diagnostics.
    #[derive(Debug, PartialEq)]
    struct Got {
        text: String,
        calls: Vec<(String, String, String)>,
        diagnostics: Vec<DiagnosticKind>,
    }

    /// A format of one opener.
    fn grammar(opener: Opener) -> Arc<Grammar> {
        let f = Format::new("t", "", "").opener(opener);
        match Grammar::new("t", &[&f]) {
            Ok(g) => g.shared(),
            Err(e) => panic!("the test format is refused: {e}"),
        }
    }

    /// `OPEN` ws JSON ws `CLOSE`, then the call is complete.
    fn between(open: &str, close: &str, shape: Shape, keys: CallKeys, tentative: bool) -> Opener {
        let program = vec![
            Step::Ws,
            Step::Json(JsonStep::new(shape, keys)),
            Step::Ws,
            Step::lit(close),
            Step::Dispatch,
            Step::End,
        ];
        if tentative {
            Opener::tentative(open, program)
        } else {
            Opener::definite(open, program)
        }
    }

    /// `<c>` call object `</c>`, definite.
    fn call(keys: CallKeys) -> Opener {
        between("<c>", "</c>", Shape::Call, keys, false)
    }

    /// `<f=NAME>` arguments `</f>`.
    fn args() -> Opener {
        Opener::definite(
            "<f=",
            vec![
                Step::name_until(">"),
                Step::args(),
                Step::Ws,
                Step::lit("</f>"),
                Step::Dispatch,
                Step::End,
            ],
        )
    }

    /// Feeds `input` in pieces of `size` bytes and finishes.
    fn parse(g: &Arc<Grammar>, input: &str, size: usize) -> Got {
        let mut p = Parser::new(g.clone(), Options::new().with_ids(IdMint::Seeded(0)));
        let mut events = Vec::new();
        for piece in input.as_bytes().chunks(size) {
            p.feed_into(piece, &mut events);
        }
        p.finish_into(&mut events);
        let mut got = Got {
            text: String::new(),
            calls: Vec::new(),
            diagnostics: Vec::new(),
        };
        let mut deltas: Vec<String> = Vec::new();
        for e in events {
            match e {
                Event::Text { delta } => got.text.push_str(&delta),
                Event::ToolCallArgs { index, delta } => {
                    if deltas.len() <= index {
                        deltas.resize(index + 1, String::new());
                    }
                    deltas[index].push_str(&delta);
                }
                Event::ToolCallEnd {
                    index,
                    id,
                    name,
                    arguments,
                } => {
                    let streamed = deltas.get(index).map_or("", String::as_str);
                    assert_eq!(
                        streamed,
                        arguments.as_str(),
                        "{input:?} in pieces of {size}: the deltas are the arguments"
                    );
                    got.calls.push((name, arguments.as_str().to_owned(), id));
                }
                Event::Diagnostic(d) => got.diagnostics.push(d.kind),
                _ => {}
            }
        }
        got
    }

    /// A call of the row's expectations: (name, arguments, id), the id
    /// checked only where the input carries one.
    type Want = (&'static str, &'static str, Option<&'static str>);

    /// A row: what it tries, the format's opener, the input, and the text,
    /// calls and diagnostics it gives.
    type Row = (
        &'static str,
        Opener,
        &'static str,
        &'static str,
        Vec<Want>,
        Vec<DiagnosticKind>,
    );

    /// Runs each row at every chunk size: the same outcome, and the one
    /// the row says.
    fn run(table: Vec<Row>) {
        for (what, opener, input, text, calls, diagnostics) in table {
            let g = grammar(opener);
            let whole = parse(&g, input, input.len().max(1));
            for size in 1..input.len() {
                assert_eq!(parse(&g, input, size), whole, "{what}: in pieces of {size}");
            }
            assert_eq!(whole.text, text, "{what}: text");
            assert_eq!(whole.diagnostics, diagnostics, "{what}: diagnostics");
            let got: Vec<(&str, &str)> = whole
                .calls
                .iter()
                .map(|(n, a, _)| (n.as_str(), a.as_str()))
                .collect();
            let want: Vec<(&str, &str)> = calls.iter().map(|(n, a, _)| (*n, *a)).collect();
            assert_eq!(got, want, "{what}: calls");
            for ((_, _, id), (_, _, want)) in whole.calls.iter().zip(&calls) {
                if let Some(want) = want {
                    assert_eq!(id, want, "{what}: id");
                }
            }
        }
    }

    #[test]
    fn call_objects() {
        let d = CallKeys::default;
        run(vec![
            (
                "name, then arguments as written",
                call(d()),
                r#"<c>{"name": "f", "arguments": {"a": 1}}</c>"#,
                "",
                vec![("f", r#"{"a": 1}"#, None)],
                vec![],
            ),
            (
                "`parameters` is an arguments key too",
                call(d()),
                r#"<c>{"name": "f", "parameters": {"a": 1}}</c>"#,
                "",
                vec![("f", r#"{"a": 1}"#, None)],
                vec![],
            ),
            (
                "arguments before the name",
                call(d()),
                r#"<c>{"arguments": {"a": 1}, "name": "f"}</c>"#,
                "",
                vec![("f", r#"{"a": 1}"#, None)],
                vec![],
            ),
            (
                "nested arguments, brackets inside strings",
                call(d()),
                r#"<c>{"name": "f", "arguments": {"a": {"b": [1, {"c": null}]}, "s": "}]\"{"}}</c>"#,
                "",
                vec![("f", r#"{"a": {"b": [1, {"c": null}]}, "s": "}]\"{"}"#, None)],
                vec![],
            ),
            (
                "arguments as a JSON string holding an object",
                call(d()),
                r#"<c>{"name": "f", "arguments": "{\"a\": 1}"}</c>"#,
                "",
                vec![("f", r#"{"a": 1}"#, None)],
                vec![],
            ),
            (
                "arguments null",
                call(d()),
                r#"<c>{"name": "f", "arguments": null}</c>"#,
                "",
                vec![("f", "{}", None)],
                vec![],
            ),
            (
                "no arguments",
                call(d()),
                r#"<c>{"name": "f"}</c>"#,
                "",
                vec![("f", "{}", None)],
                vec![],
            ),
            (
                "`type` is a known other key",
                call(d()),
                r#"<c>{"type": "function", "name": "f", "arguments": {}}</c>"#,
                "",
                vec![("f", "{}", None)],
                vec![],
            ),
            (
                "an unknown key in a definite block is read over",
                call(d()),
                r#"<c>{"name": "f", "index": 0, "arguments": {}}</c>"#,
                "",
                vec![("f", "{}", None)],
                vec![],
            ),
            (
                "a name with an escape",
                call(d()),
                r#"<c>{"name": "get\u005fweather", "arguments": {}}</c>"#,
                "",
                vec![("get_weather", "{}", None)],
                vec![],
            ),
            (
                "unicode and escapes in the arguments, as written",
                call(d()),
                r#"<c>{"name": "f", "arguments": {"city": "Zürich", "e": "\u00e9\n"}}</c>"#,
                "",
                vec![("f", r#"{"city": "Zürich", "e": "\u00e9\n"}"#, None)],
                vec![],
            ),
            (
                "whitespace everywhere",
                call(d()),
                "<c>\n{\n  \"name\" : \"f\" ,\n  \"arguments\" : { }\n}\n</c>",
                "",
                vec![("f", "{ }", None)],
                vec![],
            ),
            (
                "text around the call",
                call(d()),
                r#"Sure. <c>{"name": "f", "arguments": {}}</c> Done."#,
                "Sure.  Done.",
                vec![("f", "{}", None)],
                vec![],
            ),
            (
                "two blocks, two calls",
                call(d()),
                r#"<c>{"name": "f", "arguments": {}}</c><c>{"name": "g", "arguments": {"x": []}}</c>"#,
                "",
                vec![("f", "{}", None), ("g", r#"{"x": []}"#, None)],
                vec![],
            ),
            (
                "own name and arguments keys",
                call(CallKeys::new(&["tool"], &["args"])),
                r#"<c>{"tool": "f", "args": {"a": 1}}</c>"#,
                "",
                vec![("f", r#"{"a": 1}"#, None)],
                vec![],
            ),
        ]);
    }

    #[test]
    fn call_objects_that_fail() {
        let d = CallKeys::default;
        // A definite block that fails is text, as written, with a diagnostic.
        let table: Vec<(&str, &str)> = vec![
            ("no name", r#"<c>{"arguments": {}}</c>"#),
            (
                "a name that is a number",
                r#"<c>{"name": 5, "arguments": {}}</c>"#,
            ),
            ("an empty name", r#"<c>{"name": "", "arguments": {}}</c>"#),
            (
                "a name with a space",
                r#"<c>{"name": "get weather", "arguments": {}}</c>"#,
            ),
            (
                "arguments an array",
                r#"<c>{"name": "f", "arguments": [1]}</c>"#,
            ),
            (
                "arguments a number",
                r#"<c>{"name": "f", "arguments": 5}</c>"#,
            ),
            (
                "arguments true",
                r#"<c>{"name": "f", "arguments": true}</c>"#,
            ),
            (
                "arguments a string of no object",
                r#"<c>{"name": "f", "arguments": "[1]"}</c>"#,
            ),
            (
                "arguments a string of no JSON",
                r#"<c>{"name": "f", "arguments": "a=1"}</c>"#,
            ),
            (
                "the arguments key twice",
                r#"<c>{"name": "f", "arguments": {}, "arguments": {"a": 1}}</c>"#,
            ),
            (
                "arguments twice, under both keys",
                r#"<c>{"name": "f", "arguments": {}, "parameters": {}}</c>"#,
            ),
            (
                "a name twice",
                r#"<c>{"name": "f", "name": "g", "arguments": {}}</c>"#,
            ),
            ("an array, not a call object", r#"<c>[{"name": "f"}]</c>"#),
            ("a string, not a call object", r#"<c>"f"</c>"#),
        ];
        run(table
            .into_iter()
            .map(|(what, input)| (what, call(d()), input, input, Vec::new(), vec![Malformed]))
            .collect());
    }

    /// `<c>` call object `</c>`, read leniently.
    fn lenient() -> Opener {
        let mut o = call(CallKeys::default());
        for step in &mut o.program {
            if let Step::Json(j) = step {
                j.lenient = true;
            }
        }
        o
    }

    #[test]
    fn lenient_call_objects() {
        run(vec![
            (
                "single quotes, Python literals, a raw newline, trailing commas: normalised",
                lenient(),
                "<c>{'name': 'f', 'arguments': {'a': True,'b': None,'c': 'x\n',},}</c>",
                "",
                vec![("f", r#"{"a": true,"b": null,"c": "x\n"}"#, None)],
                vec![],
            ),
            (
                "strict JSON without blanks is read as written",
                lenient(),
                r#"<c>{"name": "f", "arguments": {"a": [1,2],"b": {}}}</c>"#,
                "",
                vec![("f", r#"{"a": [1,2],"b": {}}"#, None)],
                vec![],
            ),
        ]);
    }

    /// A lenient value holds each comma until it knows the comma is no
    /// trailing one, but lets the blanks after it out at once: `, ` comes
    /// out as ` ,`. Still JSON of the same value, yet not the text the
    /// model wrote (the pending comma lives in `read/json.rs`).
    #[test]
    fn lenient_call_objects_keep_their_blanks() {
        run(vec![(
            "blanks after commas",
            lenient(),
            r#"<c>{"name": "f", "arguments": {"a": [1, 2], "b": 'x'}}</c>"#,
            "",
            vec![("f", r#"{"a": [1, 2], "b": "x"}"#, None)],
            vec![],
        )]);
    }

    #[test]
    fn tentative_blocks() {
        let t = || between("<c>", "</c>", Shape::Call, CallKeys::default(), true);
        run(vec![
            (
                "a call",
                t(),
                r#"<c>{"name": "f", "arguments": {"a": 1}}</c>"#,
                "",
                vec![("f", r#"{"a": 1}"#, None)],
                vec![],
            ),
            // Not a call: text, silently.
            (
                "an unknown key first",
                t(),
                r#"<c>{"foo": 1}</c>"#,
                r#"<c>{"foo": 1}</c>"#,
                vec![],
                vec![],
            ),
            (
                "an unknown key after the name, before the arguments",
                t(),
                r#"<c>{"name": "f", "foo": 1, "arguments": {}}</c>"#,
                r#"<c>{"name": "f", "foo": 1, "arguments": {}}</c>"#,
                vec![],
                vec![],
            ),
            (
                "no name",
                t(),
                r#"<c>{"arguments": {}}</c>"#,
                r#"<c>{"arguments": {}}</c>"#,
                vec![],
                vec![],
            ),
            (
                "not an object",
                t(),
                "<c>[1, 2]</c>",
                "<c>[1, 2]</c>",
                vec![],
                vec![],
            ),
            // Once name and arguments show, it is a call: a key after them
            // is read over.
            (
                "an unknown key after the arguments",
                t(),
                r#"<c>{"name": "f", "arguments": {}, "foo": 1}</c>"#,
                "",
                vec![("f", "{}", None)],
                vec![],
            ),
        ]);
    }

    #[test]
    fn ids_nested_functions_keyed_objects_and_no_calls() {
        let ids = || call(CallKeys::default().with_id("id").with_function("function"));
        let keyed = || call(CallKeys::keyed());
        let no_call = || call(CallKeys::default().with_no_call("directly-answer"));
        run(vec![
            (
                "an id key",
                ids(),
                r#"<c>{"id": "abc", "name": "f", "arguments": {}}</c>"#,
                "",
                vec![("f", "{}", Some("abc"))],
                vec![],
            ),
            (
                "an id after the arguments",
                ids(),
                r#"<c>{"name": "f", "arguments": {}, "id": "abc"}</c>"#,
                "",
                vec![("f", "{}", Some("abc"))],
                vec![],
            ),
            (
                "OpenAI's nested function, arguments a string",
                ids(),
                r#"<c>{"id": "x1", "type": "function", "function": {"name": "f", "arguments": "{\"a\": 1}"}}</c>"#,
                "",
                vec![("f", r#"{"a": 1}"#, Some("x1"))],
                vec![],
            ),
            (
                "an id that is a number",
                ids(),
                r#"<c>{"id": 7, "name": "f", "arguments": {}}</c>"#,
                r#"<c>{"id": 7, "name": "f", "arguments": {}}</c>"#,
                vec![],
                vec![Malformed],
            ),
            (
                "keyed: the key is the name",
                keyed(),
                r#"<c>{"get_weather": {"city": "Paris"}}</c>"#,
                "",
                vec![("get_weather", r#"{"city": "Paris"}"#, None)],
                vec![],
            ),
            (
                "keyed, arguments a string",
                keyed(),
                r#"<c>{"f": "{\"a\": 1}"}</c>"#,
                "",
                vec![("f", r#"{"a": 1}"#, None)],
                vec![],
            ),
            (
                "keyed, two keys",
                keyed(),
                r#"<c>{"a": {}, "b": {}}</c>"#,
                r#"<c>{"a": {}, "b": {}}</c>"#,
                vec![],
                vec![Malformed],
            ),
            (
                "a name that means no tool: framing, neither call nor text",
                no_call(),
                r#"<c>{"name": "directly-answer", "arguments": {}}</c>"#,
                "",
                vec![],
                vec![],
            ),
            (
                "another name is a call",
                no_call(),
                r#"<c>{"name": "f", "arguments": {}}</c>"#,
                "",
                vec![("f", "{}", None)],
                vec![],
            ),
        ]);
    }

    #[test]
    fn lists_and_envelopes() {
        let list = || between("<l>", "</l>", Shape::CallList, CallKeys::default(), false);
        let keys = || {
            CallKeys::default()
                .with_id("id")
                .with_function("function")
                .with_text("response")
        };
        let root = || between("<r>", "</r>", Shape::Root, keys(), false);
        run(vec![
            (
                "a list of two calls",
                list(),
                r#"<l>[{"name": "a", "arguments": {}}, {"name": "b", "arguments": {"x": 1}}]</l>"#,
                "",
                vec![("a", "{}", None), ("b", r#"{"x": 1}"#, None)],
                vec![],
            ),
            (
                "one call object where a list may be",
                list(),
                r#"<l>{"name": "a", "arguments": {}}</l>"#,
                "",
                vec![("a", "{}", None)],
                vec![],
            ),
            (
                "an empty list",
                list(),
                "<l>[]</l>",
                "<l>[]</l>",
                vec![],
                vec![Malformed],
            ),
            // A bad element alone is text; the calls around it are read.
            (
                "an element without a name",
                list(),
                r#"<l>[{"name": "a", "arguments": {}}, {"arguments": {}}, {"name": "c", "arguments": {}}]</l>"#,
                r#", {"arguments": {}}"#,
                vec![("a", "{}", None), ("c", "{}", None)],
                vec![Malformed],
            ),
            (
                "a middle element that is no object",
                list(),
                r#"<l>[{"name": "a", "arguments": {}}, 42, {"name": "b", "arguments": {}}]</l>"#,
                ", 42",
                vec![("a", "{}", None), ("b", "{}", None)],
                vec![Malformed],
            ),
            // A failed first element is text from the block's start.
            (
                "a first element that is no object",
                list(),
                r#"<l>[42, {"name": "a", "arguments": {}}]</l>"#,
                "<l>[42",
                vec![("a", "{}", None)],
                vec![Malformed],
            ),
            // After a failed last element the list's closer is text too
            // (so the failed element's text does not run into the text
            // after the list): tests/guarantees_misc.rs, item 14.
            (
                "a last element that is no object",
                list(),
                r#"<l>[{"name": "a", "arguments": {}}, 42]</l>"#,
                ", 42]</l>",
                vec![("a", "{}", None)],
                vec![Malformed],
            ),
            (
                "root: a call object",
                root(),
                r#"<r>{"name": "a", "arguments": {"x": 1}}</r>"#,
                "",
                vec![("a", r#"{"x": 1}"#, None)],
                vec![],
            ),
            (
                "root: a list",
                root(),
                r#"<r>[{"name": "a", "arguments": {}}]</r>"#,
                "",
                vec![("a", "{}", None)],
                vec![],
            ),
            (
                "root: the tool_calls envelope",
                root(),
                r#"<r>{"tool_calls": [{"name": "a", "arguments": {}}, {"id": "i2", "name": "b", "arguments": {}}]}</r>"#,
                "",
                vec![("a", "{}", None), ("b", "{}", Some("i2"))],
                vec![],
            ),
            (
                "root: the tool_call envelope",
                root(),
                r#"<r>{"tool_call": {"name": "a", "arguments": {}}}</r>"#,
                "",
                vec![("a", "{}", None)],
                vec![],
            ),
            (
                "root: the text envelope, decoded",
                root(),
                r#"<r>{"response": "Hi \"you\"\n\u00e9"}</r>"#,
                "Hi \"you\"\né",
                vec![],
                vec![],
            ),
            (
                "root: tool_calls not a list",
                root(),
                r#"<r>{"tool_calls": 5}</r>"#,
                r#"<r>{"tool_calls": 5}</r>"#,
                vec![],
                vec![Malformed],
            ),
            (
                "root: the text envelope not a string",
                root(),
                r#"<r>{"response": 5}</r>"#,
                r#"<r>{"response": 5}</r>"#,
                vec![],
                vec![Malformed],
            ),
            (
                "root: an object of no call",
                root(),
                "<r>{}</r>",
                "<r>{}</r>",
                vec![],
                vec![Malformed],
            ),
        ]);
    }

    #[test]
    fn arguments_after_a_name() {
        run(vec![
            (
                "an object",
                args(),
                r#"<f=get>{"a": 1}</f>"#,
                "",
                vec![("get", r#"{"a": 1}"#, None)],
                vec![],
            ),
            (
                "an empty object",
                args(),
                "<f=get>{}</f>",
                "",
                vec![("get", "{}", None)],
                vec![],
            ),
            (
                "a JSON string holding an object",
                args(),
                r#"<f=get>"{\"a\": [1]}"</f>"#,
                "",
                vec![("get", r#"{"a": [1]}"#, None)],
                vec![],
            ),
            (
                "an array",
                args(),
                "<f=get>[1]</f>",
                "<f=get>[1]</f>",
                vec![],
                vec![Malformed],
            ),
            (
                "a string of no object",
                args(),
                r#"<f=get>"x"</f>"#,
                r#"<f=get>"x"</f>"#,
                vec![],
                vec![Malformed],
            ),
            (
                "a number",
                args(),
                "<f=get>5</f>",
                "<f=get>5</f>",
                vec![],
                vec![Malformed],
            ),
        ]);
    }
}
