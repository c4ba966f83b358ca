//! Parser options: limits, tool list, id minting, reasoning separation,
//! what call markup inside reasoning is.

use crate::ids::IdMint;
use crate::tools::Tools;

/// Limits that bound memory and hold-back on hostile or broken output.
///
/// Exceeding one yields a [`Diagnostic`](crate::Diagnostic) of kind
/// [`Limit`](crate::DiagnosticKind::Limit), and the block's bytes come back as
/// text; the parser never panics and never grows without bound.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Limits {
    /// Largest raw span of one call (opening marker to closing marker), in
    /// bytes. Default 8 MiB.
    pub max_call_bytes: usize,
    /// Deepest nesting of objects and lists inside a call (JSON, Python-like
    /// arguments, nested parameter containers). Default 128.
    pub max_depth: usize,
    /// How many bytes of text a *tentative* opener (a bare `{`, a code fence)
    /// may hold back before it is known to be a call. Default 64 KiB.
    pub max_holdback: usize,
    /// Longest tool name or in-text call id, in bytes. Default 256.
    pub max_name_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits::new()
    }
}

impl Limits {
    /// The defaults (as [`Limits::default`], in a `const`).
    ///
    /// ```
    /// use toolscan_core::Limits;
    ///
    /// const SMALL: Limits = Limits::new().with_max_call_bytes(4096).with_max_depth(8);
    /// assert_eq!(SMALL.max_call_bytes, 4096);
    /// assert_eq!(SMALL.max_holdback, Limits::default().max_holdback);
    /// ```
    pub const fn new() -> Limits {
        Limits {
            max_call_bytes: 8 << 20,
            max_depth: 128,
            max_holdback: 64 << 10,
            max_name_bytes: 256,
        }
    }

    /// Sets [`Limits::max_call_bytes`].
    pub const fn with_max_call_bytes(mut self, n: usize) -> Limits {
        self.max_call_bytes = n;
        self
    }

    /// Sets [`Limits::max_depth`].
    pub const fn with_max_depth(mut self, n: usize) -> Limits {
        self.max_depth = n;
        self
    }

    /// Sets [`Limits::max_holdback`].
    pub const fn with_max_holdback(mut self, n: usize) -> Limits {
        self.max_holdback = n;
        self
    }

    /// Sets [`Limits::max_name_bytes`].
    pub const fn with_max_name_bytes(mut self, n: usize) -> Limits {
        self.max_name_bytes = n;
        self
    }
}

/// What call markup inside a reasoning block (`<think>…</think>` and every
/// family's reasoning markers, [`reasoning_markers`](crate::reasoning_markers))
/// is, with reasoning separation on or off.
///
/// Models quote and draft calls while they think; dispatching such a call
/// runs a tool the model did not mean to run (and, when it then makes the
/// call for real, runs it twice). vLLM and SGLang never read calls inside
/// reasoning. Harmony's `analysis` channel is not concerned: its messages
/// end at the next header, which no model can quote.
///
/// ```
/// use toolscan_core::{parse, CallsInReasoning, Options, Registry};
///
/// let g = Registry::builtin().grammar("hermes").unwrap();
/// let call = r#"<tool_call>{"name": "f", "arguments": {}}</tool_call>"#;
/// // Quoted while thinking: reasoning (here text, separation being off).
/// let input = format!("<think>I will write {call}.</think>{call}");
/// let r = parse(g.clone(), Options::new(), input.as_bytes());
/// assert_eq!(r.tool_calls.len(), 1);
/// assert_eq!(r.text, format!("<think>I will write {call}.</think>"));
/// // The stream never closed its reasoning: the call was meant.
/// let input = format!("<think>Let me check. {call}");
/// let r = parse(g.clone(), Options::new(), input.as_bytes());
/// assert_eq!(r.tool_calls.len(), 1);
/// // `Call`: every call is a call, at once.
/// let o = Options::new().with_calls_in_reasoning(CallsInReasoning::Call);
/// let input = format!("<think>I will write {call}.</think>{call}");
/// assert_eq!(parse(g, o, input.as_bytes()).tool_calls.len(), 2);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CallsInReasoning {
    /// Call markup inside a reasoning block is reasoning (text, with
    /// reasoning separation off) — except in a block the stream never
    /// closes: the model acted without closing its thoughts, and its calls
    /// there are calls, dispatched at [`finish`](crate::Parser::finish).
    ///
    /// Until then they are *held*: from the opening marker of the first
    /// call in the block, the bytes and the events they give wait. The
    /// block's closing marker makes every held byte reasoning (no event of
    /// those calls is ever sent); the end of the stream sends the held
    /// events as they were. A block that completes no call (a call that
    /// fails, a tentative block that is no call) holds nothing: what it
    /// gives goes out at once, as outside reasoning, but unreported (it is
    /// reasoning, not a broken call). The hold is bounded: the
    /// reasoning after a held call may grow it by at most
    /// [`Limits::max_holdback`] bytes, and the whole hold by at most
    /// [`Limits::max_call_bytes`] (besides the call being read); past
    /// either, the held calls are taken as quoted — their bytes are
    /// reasoning, after a `limit` diagnostic.
    #[default]
    Text,
    /// Call markup inside reasoning is a call, dispatched as soon as it
    /// completes, as outside reasoning.
    Call,
}

/// Everything about a parser that is not the format.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct Options {
    /// Size and depth limits.
    pub limits: Limits,
    /// The request's `tools`, if known: bare-JSON formats then only accept
    /// calls of known tools, and other formats flag unknown names with a
    /// diagnostic.
    pub tools: Option<Tools>,
    /// How ids are minted for calls whose format carries none.
    pub ids: IdMint,
    /// Reasoning separation: `<think>…</think>` (and `[THINK]…[/THINK]`,
    /// every family's [reasoning markers](crate::reasoning_markers))
    /// content comes as [`Event::Reasoning`](crate::Event::Reasoning) and the
    /// markup is dropped. Off by default: any model may write such markers
    /// as text.
    ///
    /// Reasoning a format marks as its own — Harmony's `analysis` channel,
    /// a message header only gpt-oss writes — is no guess: it comes as
    /// reasoning whether this is on or off (as vLLM reads gpt-oss), never
    /// glued to the answer. Its text is never lost: a caller that wants
    /// one stream joins the reasoning and text deltas.
    pub reasoning: bool,
    /// The completion starts inside a reasoning block whose opening tag was
    /// part of the prompt (Qwen3-Thinking, DeepSeek-R1): up to the first
    /// closing marker, its text is reasoning (with `reasoning`), and calls
    /// in it are what [`calls_in_reasoning`](Options::calls_in_reasoning)
    /// says.
    pub starts_in_reasoning: bool,
    /// What call markup inside a reasoning block is (see
    /// [`CallsInReasoning`]); by default reasoning, unless the stream never
    /// closes the block.
    pub calls_in_reasoning: CallsInReasoning,
    /// Stop sequences may cut a call's closing markup. Clients often ask
    /// the server to stop at `</tool_call>`; the server then ends the
    /// stream inside the call, its arguments complete, and says so with
    /// `finish_reason: "stop"`. With this option, ending the stream with
    /// [`Parser::finish_at_stop`](crate::Parser::finish_at_stop) completes
    /// such a call: one whose arguments are a complete value and after
    /// which only closing markup was missing. A call whose arguments are
    /// cut short is still truncated. Off by default;
    /// [`Parser::finish`](crate::Parser::finish) never completes a call
    /// this way.
    pub complete_at_stop: bool,
    /// Which calls are let through (OpenAI's `parallel_tool_calls: false`
    /// and a named `tool_choice`); by default every one.
    pub admit: Admit,
    /// Whether a completed call is checked against
    /// [`tools`](Options::tools)' schemas, and what a call that fails the
    /// check becomes (see [`Check`]); off by default.
    pub check_calls: Check,
    /// A call whose name matches one of [`tools`](Options::tools) only
    /// without a namespace prefix (`exec` for a tool declared
    /// `functions.exec`, or the reverse: see
    /// [`Tools::resolve`](crate::Tools::resolve)) is given the declared
    /// name, in its `tool_call_start` and `tool_call_end` — what a client
    /// that dispatches by its own names needs. Off by default: a call
    /// keeps the name the model wrote (its values are typed by the
    /// matched tool's schema either way).
    ///
    /// ```
    /// use toolscan_core::{parse, Options, Registry, Tools};
    ///
    /// let tools = Tools::from_json_str(r#"[{"name": "functions.exec", "parameters": {
    ///     "type": "object", "properties": {"pid": {"type": "string"}}}}]"#).unwrap();
    /// let g = Registry::builtin().grammar("qwen3-coder").unwrap();
    /// let input = "<tool_call>\n<function=exec>\n<parameter=pid>\n99797\n</parameter>\n</function>\n</tool_call>";
    /// let r = parse(g.clone(), Options::new().with_tools(tools.clone()), input.as_bytes());
    /// assert_eq!(r.tool_calls[0].name, "exec");
    /// assert_eq!(r.tool_calls[0].arguments.as_str(), r#"{"pid":"99797"}"#);
    /// let o = Options::new().with_tools(tools).with_normalize_tool_names(true);
    /// assert_eq!(parse(g, o, input.as_bytes()).tool_calls[0].name, "functions.exec");
    /// ```
    pub normalize_tool_names: bool,
}

/// The schema check of completed calls: whether it runs, and what becomes
/// of a call that fails it.
///
/// When a call completes — in the feed that delivers its last byte, as
/// ever — its name and arguments are checked against the request's
/// [`Tools`]: a tool not in the list
/// ([`unknown_tool`](crate::DiagnosticKind::UnknownTool)), a `required`
/// parameter absent ([`missing_parameter`](crate::DiagnosticKind::MissingParameter)),
/// a value of a type its schema does not declare
/// ([`wrong_type`](crate::DiagnosticKind::WrongType)), a value outside its
/// `enum` ([`not_in_enum`](crate::DiagnosticKind::NotInEnum)) — in nested
/// objects' `properties` and arrays' `items` too. Each problem is a
/// diagnostic of its kind (at most 16 a call), sent right before the call's
/// `tool_call_end` (so between its `tool_call_start` and its end: a
/// diagnostic there is about that call). [`Response`](crate::Response)
/// also files them under the call, in
/// [`ToolCall::diagnostics`](crate::ToolCall::diagnostics). Without a
/// tools list there is nothing to check against, and nothing is checked;
/// a tool whose parameters have no schema has only its name checked.
///
/// ```
/// use toolscan_core::{parse, Check, DiagnosticKind, Options, Registry, Tools};
///
/// let tools = Tools::from_json_str(r#"[{"name": "get_weather", "parameters": {
///     "type": "object", "required": ["city"],
///     "properties": {"city": {"type": "string"},
///                    "unit": {"enum": ["celsius", "fahrenheit"]}}}}]"#).unwrap();
/// let g = Registry::builtin().grammar("hermes").unwrap();
/// let input = r#"<tool_call>{"name": "get_weather", "arguments": {"unit": "kelvin"}}</tool_call>"#;
///
/// // Report: the call is delivered, its problems filed under it.
/// let o = Options::new().with_tools(tools.clone()).with_check_calls(Check::Report);
/// let r = parse(g.clone(), o, input.as_bytes());
/// let kinds: Vec<_> = r.tool_calls[0].diagnostics.iter().map(|d| d.kind).collect();
/// assert_eq!(kinds, [DiagnosticKind::MissingParameter, DiagnosticKind::NotInEnum]);
///
/// // Reject: the call is no call; its markup is text.
/// let o = Options::new().with_tools(tools).with_check_calls(Check::Reject);
/// let r = parse(g, o, input.as_bytes());
/// assert!(r.tool_calls.is_empty());
/// assert_eq!(r.text, input);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Check {
    /// No check (unknown tools are still reported, before the call's
    /// `tool_call_start`, whenever a tools list is given).
    #[default]
    Off,
    /// Check; a call that fails is still delivered, its diagnostics right
    /// before its `tool_call_end`: the caller decides.
    Report,
    /// Check; a call that fails is no call: after its diagnostics, a
    /// [`not_allowed`](crate::DiagnosticKind::NotAllowed) one says so and
    /// its bytes come back as text (in a group of calls, the next call is
    /// read). Its `tool_call_start` and argument deltas may have been sent
    /// already, as for any call that fails late; a caller that must never
    /// show them holds a call's events until its end.
    Reject,
}

impl Check {
    /// Whether calls are checked at all.
    pub fn is_on(self) -> bool {
        self != Check::Off
    }
}

/// Which calls a parser lets through: a call that is not let through is
/// no call — its markup stays text, with a
/// [`not_allowed`](crate::DiagnosticKind::NotAllowed) diagnostic (in a
/// group of calls, the next call is read as usual).
///
/// ```
/// use toolscan_core::{Event, Options, Parser, Registry};
///
/// let g = Registry::builtin().grammar("hermes").unwrap();
/// // `parallel_tool_calls: false`: one call at most.
/// let mut p = Parser::new(g, Options::new().with_max_calls(1));
/// let mut ev = p.feed(b"<tool_call>{\"name\": \"a\", \"arguments\": {}}</tool_call>\
///                       <tool_call>{\"name\": \"b\", \"arguments\": {}}</tool_call>");
/// ev.extend(p.finish());
/// let names: Vec<&str> = ev.iter().filter_map(|e| match e {
///     Event::ToolCallEnd { name, .. } => Some(name.as_str()),
///     _ => None,
/// }).collect();
/// assert_eq!(names, ["a"]);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Admit {
    /// At most this many calls are dispatched; a call that starts after
    /// them is text. `None`: any number.
    pub max_calls: Option<usize>,
    /// Only calls of this tool; a call of another is text.
    pub only: Option<String>,
}

impl Options {
    /// Default options.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the tool list.
    pub fn with_tools(mut self, tools: Tools) -> Self {
        self.tools = Some(tools);
        self
    }

    /// Sets the id minting scheme.
    pub fn with_ids(mut self, ids: IdMint) -> Self {
        self.ids = ids;
        self
    }

    /// Turns reasoning separation on or off.
    pub fn with_reasoning(mut self, on: bool) -> Self {
        self.reasoning = on;
        self
    }

    /// Starts inside a reasoning block (the opening tag was in the prompt).
    pub fn with_starts_in_reasoning(mut self, on: bool) -> Self {
        self.starts_in_reasoning = on;
        self
    }

    /// Sets what call markup inside reasoning is (see [`CallsInReasoning`]).
    pub fn with_calls_in_reasoning(mut self, calls: CallsInReasoning) -> Self {
        self.calls_in_reasoning = calls;
        self
    }

    /// Lets [`Parser::finish_at_stop`](crate::Parser::finish_at_stop)
    /// complete a call whose closing markup a stop sequence cut (see
    /// [`Options::complete_at_stop`]).
    pub fn with_complete_at_stop(mut self, on: bool) -> Self {
        self.complete_at_stop = on;
        self
    }

    /// Lets at most `n` calls through (`parallel_tool_calls: false` is
    /// 1); later call markup is text (see [`Admit`]).
    pub fn with_max_calls(mut self, n: usize) -> Self {
        self.admit.max_calls = Some(n);
        self
    }

    /// Lets only calls of the tool `name` through (a named `tool_choice`);
    /// other call markup is text (see [`Admit`]).
    pub fn with_only_tool(mut self, name: impl Into<String>) -> Self {
        self.admit.only = Some(name.into());
        self
    }

    /// Checks completed calls against the tools' schemas (see [`Check`]).
    pub fn with_check_calls(mut self, check: Check) -> Self {
        self.check_calls = check;
        self
    }

    /// Gives a call the name its tool is declared with when it matched
    /// only without a namespace prefix (see
    /// [`Options::normalize_tool_names`]).
    pub fn with_normalize_tool_names(mut self, on: bool) -> Self {
        self.normalize_tool_names = on;
        self
    }

    /// Sets the limits.
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }
}
