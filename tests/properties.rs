//! Property tests of the event contract (docs/formats.md, the guarantees) over
//! generated responses, for every JSON-bodied built-in format, each run by
//! name and as `auto` (except `json`, whose openers are bare, which `auto`
//! leaves out).
//!
//! A generated response is `t0 c1 t1 c2 … cn tn`: prose segments `t` (any
//! unicode without `<`, `[`, `{`, `` ` `` and without `TOOL`, so prose can
//! never form a marker) and 0–4 calls `c` (a name from
//! `[a-z][a-z0-9_]{0,15}` and an arguments object of strings — unicode,
//! quotes, backslashes, control characters and every format's markers —,
//! integers, round-tripping floats, bools, null and nested arrays/objects).
//! A renderer per format writes it out, recording which bytes are text and
//! which are call spans. Then, under the whole input, 1-byte pieces and random
//! cut points (which land inside markers and multi-byte characters), each
//! fed through every parser API (`feed`, `feed_into`, the sink API
//! `feed_with` into a `Vec<Event>`, and `feed_str_with` with the cuts moved
//! to character boundaries), which must give the same coalesced events:
//!
//! 1. chunking invariance: the coalesced events equal those of the whole
//!    input (ids minted with `IdMint::Seeded(0)`);
//! 2. the completed calls equal the generated ones (names, arguments as JSON
//!    values, order) and the text equals the rendered text exactly: the prose
//!    segments plus the framing newlines some renderers add around
//!    line-anchored calls (`tool-arguments`, `tool-call-json`), which are
//!    outside the call span and so are text. No diagnostics; `finish_reason`
//!    is `tool_calls` with a call, `stop` without;
//! 3. nothing lost: text length + rendered call span lengths = input length;
//! 4. `parse` (one shot) equals collecting the streamed events;
//! 5. event shape (`toolscan_testkit::check::check_events`): per index one
//!    `tool_call_start`, argument deltas whose concatenation is exactly the
//!    `tool_call_end` arguments, then `tool_call_end`; indices 0..n in
//!    order, ids unique, no text inside a call, `done` last;
//! 6. truncation: cutting the input strictly inside the last call (after its
//!    opening marker, or its separator within a group, and before the byte
//!    that completes it) leaves that call undispatched, gives
//!    `finish_reason: length` and exactly one `truncated` diagnostic, and
//!    its bytes (from where the last dispatched call of its group ended, or
//!    the group's start) come back verbatim as the tail of the text.
//!
//! Grouping formats write consecutive calls (empty prose between them) into
//! one group: DeepSeek's calls section, Llama 3's `; `-separated list. Mistral
//! writes every call into one `[TOOL_CALLS]` array after the prose (the last
//! prose segment follows the array). `json` writes a call as a bare call
//! object, or consecutive calls as a list of call objects or as a
//! `{"tool_calls": [...]}` envelope, as the first call of the group says
//! ([`Wrap`]). Its openers (`{`, `[`, a fence) are tentative: a cut counts
//! as inside a call only once the call object has shown its name and the
//! start of its arguments (before that the block fails silently, as text).
//!
//! The parameter-style (XML) formats — `qwen3-coder`, `seed-oss`, `glm45`,
//! `glm47`, `minimax-m2`, `claude-xml`, `deepseek-v3.2`, `kimi-k3`, `step3`,
//! `xml-tool`, `autobyteus-xml`, `use-tag` — have their own generator and
//! renderers (the last section): calls as lists of raw parameter values
//! typed by a generated tools schema, checked for properties 1–5 (by name
//! and as `auto`); see that section.

use std::ops::Range;

use proptest::collection::{btree_map, vec};
use proptest::prelude::*;
use proptest::sample::Index;
use proptest::test_runner::TestCaseError;
use serde_json::{Map, Value};
use toolscan::{parse, DiagnosticKind, Event, FinishReason, Options, Registry, Response, Tools};
use toolscan_testkit::check::{check_events, nothing_lost, same_coalesced, Tally};
use toolscan_testkit::chunk::{feed_every_api, parser, seeded_options, Plan};

// ---------------------------------------------------------------- formats

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fmt {
    Hermes,
    FunctionTag,
    ToolRequest,
    EndToolRequest,
    RunModule,
    ToolArguments,
    ToolCallJson,
    MistralV11,
    Mistral,
    DeepseekV31,
    DeepseekV3,
    Llama3Json,
    Json,
}

impl Fmt {
    const ALL: [Fmt; 13] = [
        Fmt::Hermes,
        Fmt::FunctionTag,
        Fmt::ToolRequest,
        Fmt::EndToolRequest,
        Fmt::RunModule,
        Fmt::ToolArguments,
        Fmt::ToolCallJson,
        Fmt::MistralV11,
        Fmt::Mistral,
        Fmt::DeepseekV31,
        Fmt::DeepseekV3,
        Fmt::Llama3Json,
        Fmt::Json,
    ];

    fn name(self) -> &'static str {
        match self {
            Fmt::Hermes => "hermes",
            Fmt::FunctionTag => "function-tag",
            Fmt::ToolRequest => "tool-request",
            Fmt::EndToolRequest => "end-tool-request",
            Fmt::RunModule => "run-module",
            Fmt::ToolArguments => "tool-arguments",
            Fmt::ToolCallJson => "tool-call-json",
            Fmt::MistralV11 => "mistral-v11",
            Fmt::Mistral => "mistral",
            Fmt::DeepseekV31 => "deepseek-v3.1",
            Fmt::DeepseekV3 => "deepseek-v3",
            Fmt::Llama3Json => "llama3-json",
            Fmt::Json => "json",
        }
    }

    /// Whether `auto` reads the format (it leaves out bare openers).
    fn in_auto(self) -> bool {
        self != Fmt::Json
    }
}

const CALLS_BEGIN: &str = "<｜tool▁calls▁begin｜>";
const CALL_BEGIN: &str = "<｜tool▁call▁begin｜>";
const SEP: &str = "<｜tool▁sep｜>";
const CALL_END: &str = "<｜tool▁call▁end｜>";
const CALLS_END: &str = "<｜tool▁calls▁end｜>";

// ------------------------------------------------------------- generation

#[derive(Clone, Debug)]
struct GenCall {
    name: String,
    args: Map<String, Value>,
    /// `serde_json::to_string_pretty` instead of `to_string`.
    pretty: bool,
    /// Arguments key before the name key (call-object formats).
    args_first: bool,
    /// Optional whitespace where the format allows it.
    ws: bool,
    /// How `json` writes the call, if it is the first of a group.
    wrap: Wrap,
}

/// How the `json` format writes calls.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Wrap {
    /// A bare call object (one call).
    Bare,
    /// `[call, call, …]`: the call and the ones right after it.
    List,
    /// `{"tool_calls": [call, …]}`.
    Envelope,
}

#[derive(Clone, Debug)]
struct Resp {
    /// `calls.len() + 1` prose segments.
    texts: Vec<String>,
    calls: Vec<GenCall>,
}

/// Strings every format treats specially, and characters JSON escapes.
const SPECIAL: &[&str] = &[
    "Zürich",
    "東京",
    "😀",
    "\"",
    "\\",
    "\\\"",
    "\n",
    "\r\n",
    "\t",
    "\u{0}",
    "\u{1f}",
    "\u{7f}",
    "\u{2028}",
    "\u{feff}",
    "<tool_call>",
    "</tool_call>",
    "<function=f>",
    "</function>",
    "[TOOL_REQUEST]",
    "[TOOL_REQUEST_END]",
    "[END_TOOL_REQUEST]",
    "[RUN_MODULE]",
    "[/RUN_MODULE]",
    "\nTOOL: f\nARGUMENTS: ",
    "\nTOOL_CALL\n",
    "[TOOL_CALLS]",
    "[ARGS]",
    "[CALL_ID]",
    CALLS_BEGIN,
    CALL_BEGIN,
    SEP,
    CALL_END,
    CALLS_END,
    "```json\n",
    "```",
    "<|python_tag|>",
    "; ",
    "<|eom_id|>",
    "{",
    "}",
    "[",
    "]",
    "{\"name\": \"f\", \"arguments\": {}}",
];

fn json_string() -> impl Strategy<Value = String> {
    let frag = prop_oneof![
        3 => "[a-zA-Z0-9 ]{1,8}",
        2 => prop::sample::select(SPECIAL).prop_map(str::to_owned),
        1 => any::<char>().prop_map(String::from),
    ];
    vec(frag, 0..4).prop_map(|v| v.concat())
}

/// A finite float whose JSON text parses back to the same value.
fn float() -> impl Strategy<Value = Value> {
    prop_oneof![
        any::<f64>(),
        -1e6..1e6f64,
        (-1000i32..1000).prop_map(|n| f64::from(n) / 8.0),
    ]
    .prop_filter_map("float must round-trip through JSON text", |f| {
        let v = Value::from(f); // NaN and infinities become null
        if !v.is_f64() {
            return None;
        }
        let back: Value = serde_json::from_str(&v.to_string()).ok()?;
        (back == v).then_some(v)
    })
}

fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => "[a-z_]{1,8}",
        1 => prop::sample::select(&[
            "name", "arguments", "parameters", "args", "id", "type", "tool_name", "function",
        ][..])
        .prop_map(str::to_owned),
        1 => json_string(),
    ]
}

fn value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        3 => json_string().prop_map(Value::String),
        1 => any::<i64>().prop_map(Value::from),
        1 => any::<u64>().prop_map(Value::from),
        1 => float(),
        1 => any::<bool>().prop_map(Value::Bool),
        1 => Just(Value::Null),
    ];
    // Two container levels inside the arguments object: depth ≤ 3 in all.
    leaf.prop_recursive(2, 16, 4, |inner| {
        prop_oneof![
            vec(inner.clone(), 0..4).prop_map(Value::Array),
            btree_map(key(), inner, 0..4).prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn args() -> impl Strategy<Value = Map<String, Value>> {
    btree_map(key(), value(), 0..5).prop_map(|m| m.into_iter().collect())
}

fn call() -> impl Strategy<Value = GenCall> {
    (
        "[a-z][a-z0-9_]{0,15}",
        args(),
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        prop::sample::select(&[Wrap::Bare, Wrap::List, Wrap::Envelope][..]),
    )
        .prop_map(|(name, args, pretty, args_first, ws, wrap)| GenCall {
            name,
            args,
            pretty,
            args_first,
            ws,
            wrap,
        })
}

/// Prose: any unicode that cannot form a marker of any format.
fn prose() -> impl Strategy<Value = String> {
    let ch = prop_oneof![
        6 => prop::char::range('a', 'z'),
        2 => Just(' '),
        2 => prop::sample::select(vec![
            '\n', '\t', '\r', '.', ',', ';', ':', '!', '?', '"', '\'', '>', '}', ']', '|', '/',
            '\\', '=', '_', 'T', 'O', 'L', 'A', 'é', 'ü', '東', '京', '😀', '｜', '▁', '\u{0}',
            '\u{feff}', '\u{fffd}',
        ]),
        1 => any::<char>(),
    ]
    .prop_filter("prose must not open a marker", |c| !"<[{`".contains(*c));
    prop_oneof![
        1 => Just(String::new()),
        3 => vec(ch, 0..24).prop_map(|cs| cs.into_iter().collect::<String>()),
    ]
    .prop_filter("prose must not contain TOOL", |s| !s.contains("TOOL"))
}

fn response(calls: Range<usize>) -> impl Strategy<Value = Resp> {
    calls.prop_flat_map(|n| {
        (vec(prose(), n + 1), vec(call(), n)).prop_map(|(texts, calls)| Resp { texts, calls })
    })
}

/// Random cut points (repeats give empty pieces).
fn cuts() -> impl Strategy<Value = Vec<Index>> {
    vec(any::<Index>(), 0..32)
}

// -------------------------------------------------------------- rendering

/// Where a call sits in the rendered input.
#[derive(Clone, Debug)]
struct CallPos {
    /// Index into `Rendered::spans` of the span (group) holding the call.
    group: usize,
    /// The first offset at which the input, cut there, ends inside this call
    /// (after its opening marker or its separator in the group).
    begun: usize,
    /// The offset just past the byte that completes the call.
    dispatch: usize,
    /// Where the bytes a truncation gives back start: the group's start, or
    /// the end of the previous call of the group.
    release: usize,
}

#[derive(Clone, Debug, Default)]
struct Rendered {
    input: String,
    /// Every byte outside `spans`, in order.
    text: String,
    /// Raw spans of the calls (a whole group for grouping formats).
    spans: Vec<Range<usize>>,
    calls: Vec<CallPos>,
    group_start: Option<usize>,
    begun: usize,
}

impl Rendered {
    fn text(&mut self, s: &str) {
        assert!(self.group_start.is_none());
        self.input.push_str(s);
        self.text.push_str(s);
    }

    fn open(&mut self) {
        self.group_start = Some(self.input.len());
    }

    fn raw(&mut self, s: &str) {
        assert!(self.group_start.is_some());
        self.input.push_str(s);
    }

    /// The call has begun here.
    fn begun(&mut self) {
        self.begun = self.input.len();
    }

    /// The call completed here.
    fn dispatched(&mut self) {
        let start = self.group_start.expect("inside a group");
        let group = self.spans.len();
        let release = match self.calls.last() {
            Some(prev) if prev.group == group => prev.dispatch,
            _ => start,
        };
        self.calls.push(CallPos {
            group,
            begun: self.begun,
            dispatch: self.input.len(),
            release,
        });
    }

    fn close(&mut self) {
        let start = self.group_start.take().expect("inside a group");
        self.spans.push(start..self.input.len());
    }
}

fn json_text(v: &Map<String, Value>, pretty: bool) -> String {
    if pretty {
        serde_json::to_string_pretty(v).unwrap()
    } else {
        serde_json::to_string(v).unwrap()
    }
}

/// `{"<name_key>": N, "<args_key>": A}` (or arguments first).
fn call_object(c: &GenCall, name_key: &str, args_key: &str) -> String {
    call_object_shown(c, name_key, args_key).0
}

/// [`call_object`], and the offset in it just past the first byte by which
/// both the name and the start of the arguments have shown: the opening
/// `{` of the arguments after the name, or the name's closing quote after
/// the arguments.
fn call_object_shown(c: &GenCall, name_key: &str, args_key: &str) -> (String, usize) {
    let n = serde_json::to_string(&c.name).unwrap();
    let a = json_text(&c.args, c.pretty);
    let sep = if c.pretty { ",\n  " } else { ", " };
    if c.args_first {
        let o = format!("{{\"{args_key}\": {a}{sep}\"{name_key}\": {n}}}");
        let shown = o.len() - 1;
        (o, shown)
    } else {
        let head = format!("{{\"{name_key}\": {n}{sep}\"{args_key}\": ");
        let shown = head.len() + 1;
        (format!("{head}{a}}}"), shown)
    }
}

/// Whether `s` starts, after ASCII whitespace, with `;` (Llama 3 would read
/// it as a separator before another call).
fn starts_with_semicolon(s: &str) -> bool {
    s.trim_start_matches([' ', '\t', '\n', '\r'])
        .starts_with(';')
}

/// One call of a one-call-per-span format.
fn render_single(w: &mut Rendered, fmt: Fmt, c: &GenCall) {
    let args = json_text(&c.args, c.pretty);
    let ws = if c.ws { "\n" } else { "" };
    match fmt {
        Fmt::Hermes => {
            w.open();
            w.raw("<tool_call>");
            w.begun();
            w.raw(&format!("{ws}{}{ws}", call_object(c, "name", "arguments")));
            w.raw("</tool_call>");
        }
        Fmt::FunctionTag => {
            w.open();
            w.raw("<function=");
            w.begun();
            w.raw(&format!("{}>{ws}{args}{ws}</function>", c.name));
        }
        Fmt::ToolRequest => {
            w.open();
            w.raw("[TOOL_REQUEST]");
            w.begun();
            w.raw(&format!("{} {args}{ws}[TOOL_REQUEST_END]", c.name));
        }
        Fmt::EndToolRequest => {
            w.open();
            w.raw("[TOOL_REQUEST]");
            w.begun();
            w.raw(&format!(
                "{ws}{}{ws}[END_TOOL_REQUEST]",
                call_object(c, "name", "arguments")
            ));
        }
        Fmt::RunModule => {
            w.open();
            w.raw("[RUN_MODULE]");
            w.begun();
            w.raw(&format!(
                "{ws}{}{ws}[/RUN_MODULE]",
                call_object(c, "name", "args")
            ));
        }
        Fmt::ToolArguments => {
            // Line-anchored: the newline before is framing text, and so is
            // the newline after (no end marker: the call ends with its JSON).
            w.text("\n");
            w.open();
            w.raw("TOOL:");
            w.begun();
            w.raw(&format!(" {}\nARGUMENTS: {args}", c.name));
        }
        Fmt::ToolCallJson => {
            w.text("\n");
            w.open();
            w.raw("TOOL_CALL");
            w.begun();
            w.raw(&format!("\n{}", call_object(c, "tool_name", "parameters")));
        }
        Fmt::MistralV11 => {
            w.open();
            w.raw("[TOOL_CALLS]");
            w.begun();
            w.raw(&format!("{}[ARGS]{args}", c.name));
        }
        Fmt::Json => {
            // Tentative: inside the call once its name and arguments show.
            let (o, shown) = call_object_shown(c, "name", "arguments");
            w.open();
            w.raw(&o[..shown]);
            w.begun();
            w.raw(&o[shown..]);
        }
        Fmt::Mistral | Fmt::DeepseekV31 | Fmt::DeepseekV3 | Fmt::Llama3Json => {
            unreachable!("grouping format")
        }
    }
    w.dispatched();
    w.close();
    if matches!(fmt, Fmt::ToolArguments | Fmt::ToolCallJson) {
        w.text("\n");
    }
}

/// One group of consecutive calls of a grouping format.
fn render_group(w: &mut Rendered, fmt: Fmt, calls: &[GenCall]) {
    w.open();
    match fmt {
        Fmt::DeepseekV31 | Fmt::DeepseekV3 => {
            w.raw(CALLS_BEGIN);
            w.begun();
            for (k, c) in calls.iter().enumerate() {
                w.raw(CALL_BEGIN);
                if k > 0 {
                    w.begun();
                }
                let args = json_text(&c.args, c.pretty);
                if fmt == Fmt::DeepseekV31 {
                    w.raw(&format!("{}{SEP}{args}", c.name));
                } else {
                    w.raw(&format!("function{SEP}{}\n```json\n{args}\n```", c.name));
                }
                w.raw(CALL_END);
                w.dispatched();
            }
            w.raw(CALLS_END);
        }
        Fmt::Llama3Json => {
            w.raw("<|python_tag|>");
            w.begun();
            for (k, c) in calls.iter().enumerate() {
                if k > 0 {
                    w.raw(";");
                    w.begun();
                    w.raw(" ");
                }
                w.raw(&call_object(c, "name", "parameters"));
                w.dispatched();
            }
        }
        Fmt::Mistral => {
            w.raw("[TOOL_CALLS]");
            w.begun();
            w.raw("[");
            for (k, c) in calls.iter().enumerate() {
                if k > 0 {
                    w.raw(", ");
                    w.begun();
                }
                w.raw(&call_object(c, "name", "arguments"));
                w.dispatched();
            }
            w.raw("]");
        }
        Fmt::Json => {
            let (open, sep, close) = match (calls[0].wrap, calls[0].ws) {
                (Wrap::List, false) => ("[", " ", "]"),
                (Wrap::List, true) => ("[\n", "\n", "\n]"),
                (Wrap::Envelope, false) => ("{\"tool_calls\": [", " ", "]}"),
                (Wrap::Envelope, true) => ("{\n  \"tool_calls\": [\n", "\n", "\n  ]\n}"),
                (Wrap::Bare, _) => unreachable!("one call, no group"),
            };
            w.raw(open);
            for (k, c) in calls.iter().enumerate() {
                let (o, shown) = call_object_shown(c, "name", "arguments");
                if k == 0 {
                    // Tentative until the first call shows.
                    w.raw(&o[..shown]);
                    w.begun();
                    w.raw(&o[shown..]);
                } else {
                    // After a call, a comma promises another.
                    w.raw(",");
                    w.begun();
                    w.raw(sep);
                    w.raw(&o);
                }
                w.dispatched();
            }
            w.raw(close);
        }
        _ => unreachable!("not a grouping format"),
    }
    w.close();
}

fn render(fmt: Fmt, r: &Resp) -> Rendered {
    let mut w = Rendered::default();
    let n = r.calls.len();
    match fmt {
        Fmt::Mistral => {
            for t in &r.texts[..n] {
                w.text(t);
            }
            if n > 0 {
                render_group(&mut w, fmt, &r.calls);
            }
            w.text(&r.texts[n]);
        }
        Fmt::DeepseekV31 | Fmt::DeepseekV3 | Fmt::Llama3Json | Fmt::Json => {
            // Calls with no prose between them share a group (but `json`
            // writes a bare call object alone).
            w.text(&r.texts[0]);
            let mut i = 0;
            while i < n {
                let mut j = i + 1;
                if fmt == Fmt::Json && r.calls[i].wrap == Wrap::Bare {
                    render_single(&mut w, fmt, &r.calls[i]);
                    w.text(&r.texts[j]);
                    i = j;
                    continue;
                }
                while j < n && r.texts[j].is_empty() {
                    j += 1;
                }
                render_group(&mut w, fmt, &r.calls[i..j]);
                let mut t = r.texts[j].clone();
                if fmt == Fmt::Llama3Json && starts_with_semicolon(&t) {
                    t.insert(0, '.');
                }
                w.text(&t);
                i = j;
            }
        }
        _ => {
            w.text(&r.texts[0]);
            for (c, t) in r.calls.iter().zip(&r.texts[1..]) {
                render_single(&mut w, fmt, c);
                w.text(t);
            }
        }
    }
    w
}

// ---------------------------------------------------------------- running

fn fail(e: String) -> TestCaseError {
    TestCaseError::fail(e)
}

/// One run of a case: a plan's events and what the contract checker
/// counted.
struct Run {
    plan: Plan,
    events: Vec<Event>,
    tally: Tally,
}

/// Runs `input` with a grammar (a format's name or `auto`) under the whole
/// input, 1-byte pieces and the random cut points, each through every
/// parser API (which must agree), and checks on every run what holds for
/// every input: the event contract (property 5), the same coalesced events
/// as the whole input (1) and `parse` giving the collected response (4).
fn run_plans(grammar: &str, input: &[u8], cuts: &[Index]) -> Result<Vec<Run>, TestCaseError> {
    run_plans_with(grammar, &seeded_options(), input, cuts)
}

/// [`run_plans`] with these options (ids seeded, tools given).
fn run_plans_with(
    grammar: &str,
    options: &Options,
    input: &[u8],
    cuts: &[Index],
) -> Result<Vec<Run>, TestCaseError> {
    let len = input.len();
    let at: Vec<usize> = cuts.iter().map(|c| c.index(len + 1)).collect();
    let mut runs: Vec<Run> = Vec::new();
    for plan in [Plan::whole(len), Plan::fixed(len, 1), Plan::cuts(len, &at)] {
        let ctx = format!(
            "{grammar}, {plan}, input {:?}",
            String::from_utf8_lossy(input)
        );
        let events = feed_every_api(|| parser(grammar, options.clone()), input, &plan)
            .map_err(|e| fail(format!("{ctx}: {e}")))?;
        let tally = check_events(&events).map_err(|e| fail(format!("{ctx}: {e}")))?;
        match runs.first() {
            None => {
                let g = Registry::builtin().grammar(grammar).unwrap();
                let got = Response::from_events(&events);
                prop_assert_eq!(parse(g, options.clone(), input), got, "{}", ctx);
            }
            Some(whole) => same_coalesced(&events, &whole.events)
                .map_err(|e| fail(format!("{ctx}: not what the whole input gives: {e}")))?,
        }
        runs.push(Run {
            plan,
            events,
            tally,
        });
    }
    Ok(runs)
}

/// Properties 1–5 for one grammar (a format's name or `auto`).
fn check_complete(
    grammar: &str,
    r: &Rendered,
    resp: &Resp,
    cuts: &[Index],
) -> Result<(), TestCaseError> {
    let input = r.input.as_bytes();
    for run in run_plans(grammar, input, cuts)? {
        let ctx = format!("{grammar}, {}, input {:?}", run.plan, r.input);
        prop_assert_eq!(run.tally.completed, resp.calls.len(), "{}", ctx);
        // 2. the generated calls and text
        let got = Response::from_events(&run.events);
        prop_assert!(got.diagnostics.is_empty(), "{}: {:?}", ctx, got.diagnostics);
        let want: Vec<(&str, &Map<String, Value>)> = resp
            .calls
            .iter()
            .map(|c| (c.name.as_str(), &c.args))
            .collect();
        let parsed: Vec<Map<String, Value>> = got
            .tool_calls
            .iter()
            .map(|c| c.arguments.parse().expect("an object"))
            .collect();
        let have: Vec<(&str, &Map<String, Value>)> = got
            .tool_calls
            .iter()
            .zip(&parsed)
            .map(|(c, a)| (c.name.as_str(), a))
            .collect();
        prop_assert_eq!(have, want, "{}", ctx);
        prop_assert_eq!(&got.text, &r.text, "{}", ctx);
        let reason = if resp.calls.is_empty() {
            FinishReason::Stop
        } else {
            FinishReason::ToolCalls
        };
        prop_assert_eq!(got.finish_reason, reason, "{}", ctx);
        prop_assert!(got.reasoning.is_none());
        // 3. nothing lost
        nothing_lost(&run.events, input, &r.spans).map_err(|e| fail(format!("{ctx}: {e}")))?;
    }
    Ok(())
}

/// Property 6 for one grammar: the input cut at `cut`, inside the last call.
fn check_truncated(
    grammar: &str,
    r: &Rendered,
    resp: &Resp,
    cut: usize,
    cuts: &[Index],
) -> Result<(), TestCaseError> {
    let last = r.calls.last().expect("a call");
    let input = &r.input.as_bytes()[..cut];
    // What comes back as text: every byte before the cut outside the spans of
    // the groups before the last call's, and outside the calls of its group
    // that completed.
    let mut want_text = Vec::new();
    let mut from = 0;
    for s in &r.spans[..last.group] {
        want_text.extend_from_slice(&input[from..s.start]);
        from = s.end;
    }
    let group_start = r.spans[last.group].start;
    want_text.extend_from_slice(&input[from..group_start]);
    want_text.extend_from_slice(&input[last.release..cut]);
    let want_text = String::from_utf8_lossy(&want_text).into_owned();
    let tail = String::from_utf8_lossy(&input[last.release..cut]).into_owned();
    let n = resp.calls.len() - 1;

    for run in run_plans(grammar, input, cuts)? {
        let ctx = format!("{grammar}, {}, cut at {cut} of {:?}", run.plan, r.input);
        prop_assert_eq!(run.tally.completed, n, "{}", ctx);
        let got = Response::from_events(&run.events);
        let names: Vec<&str> = got.tool_calls.iter().map(|c| c.name.as_str()).collect();
        let want: Vec<&str> = resp.calls[..n].iter().map(|c| c.name.as_str()).collect();
        prop_assert_eq!(names, want, "{}", ctx);
        for (have, want) in got.tool_calls.iter().zip(&resp.calls) {
            prop_assert_eq!(
                &have.arguments.parse().expect("an object"),
                &want.args,
                "{}",
                ctx
            );
        }
        prop_assert_eq!(got.finish_reason, FinishReason::Length, "{}", ctx);
        let kinds: Vec<DiagnosticKind> = got.diagnostics.iter().map(|d| d.kind).collect();
        // A cut inside a character leaves bytes that are not UTF-8.
        let mut want_kinds = vec![DiagnosticKind::Truncated];
        let broken = usize::from(std::str::from_utf8(input).is_err());
        want_kinds.extend(std::iter::repeat_n(DiagnosticKind::InvalidUtf8, broken));
        prop_assert_eq!(kinds, want_kinds, "{}", ctx);
        prop_assert!(got.text.ends_with(&tail), "{}: text {:?}", ctx, got.text);
        prop_assert_eq!(&got.text, &want_text, "{}", ctx);
    }
    Ok(())
}

/// 64 cases per property unless `PROPTEST_CASES` says otherwise.
fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(64)
}

fn config() -> ProptestConfig {
    ProptestConfig {
        // Regressions are kept as explicit tests below, not in files.
        failure_persistence: None,
        ..ProptestConfig::with_cases(cases())
    }
}

macro_rules! format_properties {
    ($($module:ident => $fmt:expr;)*) => {$(
        mod $module {
            use super::*;

            proptest! {
                #![proptest_config(config())]

                /// Properties 1–5, by name and as `auto` (where `auto`
                /// reads the format).
                #[test]
                fn complete_responses(resp in response(0..5), cuts in cuts()) {
                    let r = render($fmt, &resp);
                    check_complete($fmt.name(), &r, &resp, &cuts)?;
                    if $fmt.in_auto() {
                        check_complete("auto", &r, &resp, &cuts)?;
                    }
                }

                /// Property 6, by name and as `auto` (where `auto` reads
                /// the format).
                #[test]
                fn truncated_last_call(
                    resp in response(1..5),
                    at in any::<Index>(),
                    cuts in cuts(),
                ) {
                    let r = render($fmt, &resp);
                    let last = r.calls.last().unwrap();
                    let cut = last.begun + at.index(last.dispatch - last.begun);
                    check_truncated($fmt.name(), &r, &resp, cut, &cuts)?;
                    if $fmt.in_auto() {
                        check_truncated("auto", &r, &resp, cut, &cuts)?;
                    }
                }
            }
        }
    )*};
}

format_properties! {
    hermes => Fmt::Hermes;
    function_tag => Fmt::FunctionTag;
    tool_request => Fmt::ToolRequest;
    end_tool_request => Fmt::EndToolRequest;
    run_module => Fmt::RunModule;
    tool_arguments => Fmt::ToolArguments;
    tool_call_json => Fmt::ToolCallJson;
    mistral_v11 => Fmt::MistralV11;
    mistral => Fmt::Mistral;
    deepseek_v3_1 => Fmt::DeepseekV31;
    deepseek_v3 => Fmt::DeepseekV3;
    llama3_json => Fmt::Llama3Json;
    json => Fmt::Json;
}

/// The renderers themselves: spans and text partition the input, and
/// `json` writes each of its shapes.
#[test]
fn renderer_bookkeeping() {
    for (wrap, args_first) in [
        (Wrap::Bare, false),
        (Wrap::List, true),
        (Wrap::Envelope, false),
    ] {
        let c = GenCall {
            name: "get_weather".into(),
            args: serde_json::from_str(r#"{"city": "Zürich"}"#).unwrap(),
            pretty: false,
            args_first,
            ws: false,
            wrap,
        };
        let resp = Resp {
            texts: vec!["Sure. ".into(), String::new(), " done".into()],
            calls: vec![c.clone(), c],
        };
        for fmt in Fmt::ALL {
            let r = render(fmt, &resp);
            let spans: usize = r.spans.iter().map(|s| s.len()).sum();
            assert_eq!(r.text.len() + spans, r.input.len(), "{fmt:?}");
            // Line-anchored calls have a framing newline before and after.
            let framing = if matches!(fmt, Fmt::ToolArguments | Fmt::ToolCallJson) {
                "\n\n\n\n"
            } else {
                ""
            };
            assert_eq!(r.text, format!("Sure. {framing} done"), "{fmt:?}");
            assert_eq!(r.calls.len(), 2, "{fmt:?}");
            for p in &r.calls {
                let s = &r.spans[p.group];
                assert!(s.start <= p.release && p.release < p.begun, "{fmt:?} {p:?}");
                assert!(p.begun < p.dispatch && p.dispatch <= s.end, "{fmt:?} {p:?}");
            }
        }
        let r = render(Fmt::Json, &resp);
        let one = if args_first {
            r#"{"arguments": {"city":"Zürich"}, "name": "get_weather"}"#
        } else {
            r#"{"name": "get_weather", "arguments": {"city":"Zürich"}}"#
        };
        let want = match wrap {
            Wrap::Bare => format!("Sure. {one}{one} done"),
            Wrap::List => format!("Sure. [{one}, {one}] done"),
            Wrap::Envelope => format!("Sure. {{\"tool_calls\": [{one}, {one}]}} done"),
        };
        assert_eq!(r.input, want);
    }
}

// ================================================= parameter-style formats
//
// The XML-style formats write each argument as raw text between tags, so
// their calls are generated as lists of parameters (a key and a value: a
// string, or a non-string JSON value written as its JSON text) and the
// request's tools schema declares every parameter's type: `string` for
// strings (which stream as JSON strings while they arrive), the value's
// JSON type for the others — or nothing (untyped: the JSON text is read as
// JSON). Tool names get the call's ordinal appended, so that the schema
// of one name is the schema of one call.
//
// Strings carry what the format can carry: unicode, quotes, `<`, `&`,
// backslashes, newlines at both ends, empty and long values, the format's
// own call and block closers (`</function>` inside a qwen3-coder value is
// legal: the value ends only at `</parameter>`). What a format cannot carry
// is taken out of the generated value before rendering ([`XFmt::sanitize`]):
// the value's closer and the next parameter's opener (which end it), the
// whitespace that `step3` trims, the quote of a `use-tag` attribute.
// Formats that decode XML entities (`claude-xml`, `xml-tool`,
// `autobyteus-xml`) carry anything: `&` and `<` are escaped, and, as each
// call's escaping style says, `>`, quotes, non-ASCII or punctuation as
// named, decimal or hexadecimal references (`autobyteus-xml` trims, so
// whitespace at the ends of its values is written as references).
//
// Checked for each format, by name and as `auto`, under the whole input,
// 1-byte pieces and random cut points, each through every parser API:
// the event contract, coalesced events identical for every chunking (1),
// nothing lost: the text is exactly the input outside the call spans (2),
// `parse` equals the streamed events (7), and the calls' names and
// arguments equal the generated ones, with no diagnostics.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum XFmt {
    Qwen3Coder,
    SeedOss,
    Glm45,
    Glm47,
    MinimaxM2,
    ClaudeXml,
    DeepseekV32,
    KimiK3,
    Step3,
    XmlTool,
    AutobyteusXml,
    UseTag,
    KeyValue,
}

/// Which whitespace at the ends of a value is markup.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum XTrim {
    None,
    /// One newline at each end.
    Newline,
    /// All ASCII whitespace at both ends.
    All,
}

impl XFmt {
    const ALL: [XFmt; 13] = [
        XFmt::Qwen3Coder,
        XFmt::SeedOss,
        XFmt::Glm45,
        XFmt::Glm47,
        XFmt::MinimaxM2,
        XFmt::ClaudeXml,
        XFmt::DeepseekV32,
        XFmt::KimiK3,
        XFmt::Step3,
        XFmt::XmlTool,
        XFmt::AutobyteusXml,
        XFmt::UseTag,
        XFmt::KeyValue,
    ];

    fn name(self) -> &'static str {
        match self {
            XFmt::Qwen3Coder => "qwen3-coder",
            XFmt::SeedOss => "seed-oss",
            XFmt::Glm45 => "glm45",
            XFmt::Glm47 => "glm47",
            XFmt::MinimaxM2 => "minimax-m2",
            XFmt::ClaudeXml => "claude-xml",
            XFmt::DeepseekV32 => "deepseek-v3.2",
            XFmt::KimiK3 => "kimi-k3",
            XFmt::Step3 => "step3",
            XFmt::XmlTool => "xml-tool",
            XFmt::AutobyteusXml => "autobyteus-xml",
            XFmt::UseTag => "use-tag",
            XFmt::KeyValue => "key-value",
        }
    }

    fn trim(self) -> XTrim {
        match self {
            XFmt::Qwen3Coder | XFmt::SeedOss => XTrim::Newline,
            XFmt::Step3 | XFmt::AutobyteusXml => XTrim::All,
            _ => XTrim::None,
        }
    }

    /// Values are XML text (entities decoded).
    fn entities(self) -> bool {
        matches!(self, XFmt::ClaudeXml | XFmt::XmlTool | XFmt::AutobyteusXml)
    }

    /// What ends a raw value early: its closer, and the markup that ends an
    /// unclosed value (the next parameter's opener). Entity formats escape
    /// every `<`, so nothing in them is markup.
    fn value_enders(self) -> &'static [&'static str] {
        match self {
            XFmt::Qwen3Coder | XFmt::SeedOss => &["</parameter>", "<parameter="],
            XFmt::Glm45 | XFmt::Glm47 => &["</arg_value>", "<arg_key>"],
            XFmt::MinimaxM2 => &["</parameter>", "<parameter name=\""],
            XFmt::DeepseekV32 => &["</｜DSML｜parameter>", "<｜DSML｜parameter name=\""],
            XFmt::KimiK3 => &["<|close|>argument<|sep|>", "<|open|>argument key=\""],
            XFmt::Step3 => &["</steptml:parameter>", "<steptml:parameter name=\""],
            XFmt::ClaudeXml
            | XFmt::XmlTool
            | XFmt::AutobyteusXml
            | XFmt::UseTag
            | XFmt::KeyValue => &[],
        }
    }

    /// A call's closers and the next call's opener: after one of them,
    /// the other ends an unclosed value at the closer (so a value that
    /// holds both, in this order, cannot be carried). Qwen3-Coder's and
    /// Seed-OSS's: two `<function=…>` blocks in one call block are two
    /// calls (as Qwen's own parser reads them), and so are they after a
    /// `</tool_call>` (a block may open with `<function=`).
    fn closer_then_next(self) -> (&'static [&'static str], &'static str) {
        match self {
            XFmt::Qwen3Coder => (&["</function>", "</tool_call>"], "<function="),
            XFmt::SeedOss => (&["</function>", "</seed:tool_call>"], "<function="),
            XFmt::MinimaxM2 | XFmt::ClaudeXml => (&["</invoke>"], "<invoke name="),
            XFmt::DeepseekV32 => (&["</｜DSML｜invoke>"], "<｜DSML｜invoke name="),
            XFmt::KimiK3 => (&["<|close|>call<|sep|>"], "<|open|>call tool=\""),
            XFmt::Step3 => (&["</steptml:invoke>"], "<｜tool_call_begin｜>"),
            _ => (&[], ""),
        }
    }

    /// Whether `s` holds a call's closer and, after it, the next call's
    /// opener (see [`XFmt::closer_then_next`]); where that opener begins.
    fn next_after_closer(self, s: &str) -> Option<usize> {
        let (closers, next) = self.closer_then_next();
        closers.iter().find_map(|closer| {
            let after = s.find(closer)? + closer.len();
            s[after..].find(next).map(|k| after + k)
        })
    }

    /// Consecutive calls share one block (a wrapper around invokes).
    fn grouping(self) -> bool {
        matches!(
            self,
            XFmt::MinimaxM2 | XFmt::ClaudeXml | XFmt::DeepseekV32 | XFmt::KimiK3 | XFmt::Step3
        )
    }

    /// Makes a string something the format can carry as a value (see the
    /// section's comment); `top`: a parameter's own value, not a string
    /// inside a container's JSON.
    fn sanitize(self, s: &str, top: bool) -> String {
        let mut s = s.to_string();
        while let Some(f) = self.value_enders().iter().find(|f| s.contains(**f)) {
            // `<` → `(`: no longer markup.
            s = s.replacen(f, &format!("({}", &f[1..]), 1);
        }
        while let Some(k) = self.next_after_closer(&s) {
            s.replace_range(k..k + 1, "(");
        }
        if self == XFmt::Step3 && top {
            s = s.trim_matches([' ', '\t', '\n', '\r']).to_string();
        }
        if self == XFmt::UseTag && (!top || (s.contains('"') && s.contains('\''))) {
            // A container's JSON text is quoted with `'` (it holds `"`); a
            // string needs one quote it does not hold.
            s = s.replace('\'', "’");
        }
        if self == XFmt::KeyValue && top {
            // A quoted value ends at the next `"`.
            s = s.replace('"', "”");
        }
        s
    }
}

/// A parameter's value.
#[derive(Clone, Debug)]
enum XVal {
    /// A string, written raw.
    Str(String),
    /// A non-string JSON value, written as its JSON text.
    Json(Value),
}

impl XVal {
    fn to_json(&self) -> Value {
        match self {
            XVal::Str(s) => Value::String(s.clone()),
            XVal::Json(v) => v.clone(),
        }
    }

    /// The JSON type name the schema (or the format's attribute) declares.
    fn type_name(&self) -> &'static str {
        match self {
            XVal::Str(_) => "string",
            XVal::Json(Value::Null) => "null",
            XVal::Json(Value::Bool(_)) => "boolean",
            XVal::Json(Value::Number(n)) if n.is_f64() => "number",
            XVal::Json(Value::Number(_)) => "integer",
            XVal::Json(Value::Array(_)) => "array",
            XVal::Json(Value::Object(_)) => "object",
            XVal::Json(Value::String(_)) => unreachable!("strings are XVal::Str"),
        }
    }

    /// The raw text before escaping and framing.
    fn text(&self) -> String {
        match self {
            XVal::Str(s) => s.clone(),
            XVal::Json(v) => v.to_string(),
        }
    }
}

#[derive(Clone, Debug)]
struct XParam {
    key: String,
    val: XVal,
    /// The schema declares the value's type (strings always are: an
    /// untyped string would be read as JSON when it looks like JSON).
    typed: bool,
    /// The format's own type attribute is written (DSML `string=`, Kimi
    /// `type=`); xml-tool: `<parameter name="KEY">` instead of `<KEY>`.
    attr: bool,
}

#[derive(Clone, Debug)]
struct XCall {
    name: String,
    params: Vec<XParam>,
    /// Optional whitespace where the format allows it.
    ws: bool,
    /// The format's other spelling: single-quoted names (`invoke`,
    /// `tool name=`), DSML `tool_calls`, Kimi's `index`, a bare claude
    /// `<invoke>`, xml-tool's JSON arguments, `use-tag`'s `<use_NAME>`.
    alt: bool,
    /// `use-tag`: a closing tag after the call; `kimi-k3`: the arguments
    /// as one JSON block; `key-value`: no line break after the last call.
    closer: bool,
    /// Entity formats: how much is escaped (0 to 3).
    esc: u8,
}

impl XCall {
    fn args(&self) -> Map<String, Value> {
        self.params
            .iter()
            .map(|p| (p.key.clone(), p.val.to_json()))
            .collect()
    }
}

#[derive(Clone, Debug)]
struct XResp {
    texts: Vec<String>,
    calls: Vec<XCall>,
}

impl XResp {
    /// The request's tools: one per call, every parameter declared.
    fn tools(&self) -> Value {
        let tools: Vec<Value> = self
            .calls
            .iter()
            .map(|c| {
                let props: Map<String, Value> = c
                    .params
                    .iter()
                    .map(|p| {
                        let schema = if p.typed {
                            serde_json::json!({"type": p.val.type_name()})
                        } else {
                            serde_json::json!({"description": "untyped"})
                        };
                        (p.key.clone(), schema)
                    })
                    .collect();
                serde_json::json!({"type": "function", "function": {
                    "name": c.name,
                    "parameters": {"type": "object", "properties": props},
                }})
            })
            .collect();
        Value::Array(tools)
    }

    /// Seeded ids and the response's tools.
    fn options(&self) -> Options {
        seeded_options().with_tools(Tools::from_json(&self.tools()).expect("tools"))
    }
}

/// Strings every XML format treats specially: markup of all of them,
/// entities, quotes, whitespace.
const XSPECIAL: &[&str] = &[
    "Zürich",
    "東京",
    "😀",
    "\"",
    "'",
    "\\",
    "\\\"",
    "\n",
    "\r\n",
    "\t",
    " ",
    "<",
    ">",
    "&",
    "&amp;",
    "&lt;",
    "&#233;",
    "&#x41;",
    "&nbsp;",
    "a < b && c > d",
    "</",
    "</param",
    "</parameter",
    "</parameter>",
    "<parameter=k>",
    "<function=f>",
    "</function>",
    "</function>\n</tool_call>",
    "<tool_call>",
    "</tool_call>",
    "<arg_key>",
    "</arg_key>",
    "<arg_value>",
    "</arg_value>",
    "<invoke name=\"f\">",
    "</invoke>",
    "<parameter name=\"k\">",
    "</minimax:tool_call>",
    "</function_calls>",
    "<｜DSML｜parameter name=\"k\" string=\"true\">",
    "</｜DSML｜parameter>",
    "</｜DSML｜invoke>",
    "</｜DSML｜function_calls>",
    "<|open|>argument key=\"k\"<|sep|>",
    "<|close|>argument<|sep|>",
    "<|close|>call<|sep|>",
    "<|close|>tools<|sep|>",
    "<|sep|>",
    "<steptml:parameter name=\"k\">",
    "</steptml:parameter>",
    "</steptml:invoke>",
    "<｜tool_call_end｜>",
    "<｜tool_calls_end｜>",
    "<arg name=\"k\">",
    "</arg>",
    "</arguments>",
    "</tool>",
    "<use f>",
    "</use>",
    "null",
    "true",
    "123",
    "{\"a\": 1}",
    "[1]",
];

/// A string value: pieces of [`XSPECIAL`], words and any characters, or a
/// long run (several kilobytes) of them.
fn xml_string() -> impl Strategy<Value = String> {
    let frag = prop_oneof![
        3 => "[a-zA-Z0-9 ]{1,8}",
        3 => prop::sample::select(XSPECIAL).prop_map(str::to_owned),
        1 => any::<char>().prop_map(String::from),
    ];
    prop_oneof![
        12 => vec(frag.clone(), 0..6).prop_map(|v| v.concat()),
        1 => (vec(frag, 1..6), 200..800usize).prop_map(|(v, n)| v.concat().repeat(n / 8 + 1)),
    ]
}

/// A non-string JSON value: integers, round-tripping floats, booleans,
/// null, and arrays and objects (of any values, strings included).
fn xml_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        2 => any::<i64>().prop_map(Value::from),
        1 => any::<u64>().prop_map(Value::from),
        1 => float(),
        1 => any::<bool>().prop_map(Value::Bool),
        1 => Just(Value::Null),
    ];
    let inner = prop_oneof![3 => leaf.clone(), 2 => xml_string().prop_map(Value::String)]
        .prop_recursive(1, 8, 3, |inner| {
            prop_oneof![
                vec(inner.clone(), 0..3).prop_map(Value::Array),
                btree_map("[a-z_]{1,6}", inner, 0..3)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        });
    prop_oneof![
        3 => leaf,
        1 => vec(inner.clone(), 0..4).prop_map(Value::Array),
        1 => btree_map(prop_oneof!["[a-z_]{1,6}", xml_string()], inner, 0..4)
            .prop_map(|m| Value::Object(m.into_iter().collect())),
    ]
}

fn xml_value() -> impl Strategy<Value = XVal> {
    prop_oneof![
        3 => xml_string().prop_map(XVal::Str),
        2 => xml_json().prop_map(XVal::Json),
    ]
}

fn xml_call() -> impl Strategy<Value = XCall> {
    (
        "[a-z][a-z0-9_]{0,8}",
        btree_map(
            "[a-z][a-z0-9_]{0,8}",
            (xml_value(), any::<bool>(), any::<bool>()),
            0..5,
        ),
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        0..4u8,
    )
        .prop_map(|(name, params, ws, alt, closer, esc)| XCall {
            name,
            params: params
                .into_iter()
                .map(|(key, (val, typed, attr))| XParam {
                    typed: typed || matches!(val, XVal::Str(_)),
                    key,
                    val,
                    attr,
                })
                .collect(),
            ws,
            alt,
            closer,
            esc,
        })
}

/// What a format can carry, for every string of a value (see
/// [`XFmt::sanitize`]).
fn sanitize_json(fmt: XFmt, v: &Value) -> Value {
    match v {
        Value::String(s) => Value::String(fmt.sanitize(s, false)),
        Value::Array(a) => Value::Array(a.iter().map(|x| sanitize_json(fmt, x)).collect()),
        Value::Object(o) => Value::Object(
            o.iter()
                .map(|(k, x)| (fmt.sanitize(k, false), sanitize_json(fmt, x)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// A response in `fmt`: prose around 0–4 calls, names made unique, values
/// made carriable.
fn xml_response(fmt: XFmt, calls: Range<usize>) -> impl Strategy<Value = XResp> {
    calls
        .prop_flat_map(|n| (vec(prose(), n + 1), vec(xml_call(), n)))
        .prop_map(move |(texts, mut calls)| {
            for (i, c) in calls.iter_mut().enumerate() {
                c.name = format!("{}{i}", c.name);
                for p in &mut c.params {
                    p.val = match &p.val {
                        XVal::Str(s) => XVal::Str(fmt.sanitize(s, true)),
                        XVal::Json(v) => XVal::Json(sanitize_json(fmt, v)),
                    };
                }
            }
            XResp { texts, calls }
        })
}

/// XML text: `&` and `<` always escaped; then, by `esc`: 1 also `>`, `"`
/// and `'` by name; 2 non-ASCII characters as decimal references; 3 any
/// non-alphanumeric printable character as a hexadecimal reference.
fn xml_escape(s: &str, esc: u8) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' if esc >= 1 => out.push_str("&gt;"),
            '"' if esc >= 1 => out.push_str("&quot;"),
            '\'' if esc >= 1 => out.push_str("&apos;"),
            c if esc == 2 && !c.is_ascii() => out.push_str(&format!("&#{};", c as u32)),
            c if esc == 3 && !c.is_alphanumeric() && !c.is_control() && c != ' ' => {
                out.push_str(&format!("&#x{:X};", c as u32))
            }
            c => out.push(c),
        }
    }
    out
}

/// A value as the format writes it between its tags.
fn raw_value(fmt: XFmt, c: &XCall, v: &XVal) -> String {
    let text = v.text();
    if fmt.entities() {
        let mut t = xml_escape(&text, c.esc);
        if fmt.trim() == XTrim::All {
            // Trimmed whitespace would be markup: references are not.
            let lead = t.len() - t.trim_start_matches([' ', '\t', '\n', '\r']).len();
            let tail = t.len() - t.trim_end_matches([' ', '\t', '\n', '\r']).len();
            if lead == t.len() {
                t = t.bytes().map(|b| format!("&#{b};")).collect();
            } else {
                let refs = |s: &str| s.bytes().map(|b| format!("&#{b};")).collect::<String>();
                t = format!(
                    "{}{}{}",
                    refs(&t[..lead]),
                    &t[lead..t.len() - tail],
                    refs(&t[t.len() - tail..])
                );
            }
        }
        return t;
    }
    if fmt.trim() == XTrim::Newline && (c.ws || text.starts_with('\n') || text.ends_with('\n')) {
        return format!("\n{text}\n");
    }
    text
}

/// The parameters of a call as `open KEY mid VALUE close`, separated by
/// `sep`.
fn params_with(fmt: XFmt, c: &XCall, each: impl Fn(&XParam, &str) -> String, sep: &str) -> String {
    c.params
        .iter()
        .map(|p| each(p, &raw_value(fmt, c, &p.val)) + sep)
        .collect()
}

/// One call (the opener written by the caller up to `begun`), up to the
/// byte that dispatches it.
fn render_xcall_body(w: &mut Rendered, fmt: XFmt, c: &XCall) {
    let nl = if c.ws { "\n" } else { "" };
    let name = &c.name;
    let quoted = |n: &str| {
        if c.alt {
            format!("'{n}'>")
        } else {
            format!("\"{n}\">")
        }
    };
    match fmt {
        XFmt::Qwen3Coder | XFmt::SeedOss => {
            let close = if fmt == XFmt::SeedOss {
                "</seed:tool_call>"
            } else {
                "</tool_call>"
            };
            let params = params_with(
                fmt,
                c,
                |p, v| format!("<parameter={}>{v}</parameter>", p.key),
                nl,
            );
            w.raw(&format!(
                "{nl}<function={name}>{nl}{params}</function>{nl}{close}"
            ));
        }
        XFmt::Glm45 | XFmt::Glm47 => {
            let nl = if fmt == XFmt::Glm45 { "\n" } else { nl };
            let params = params_with(
                fmt,
                c,
                |p, v| format!("<arg_key>{}</arg_key>{nl}<arg_value>{v}</arg_value>", p.key),
                nl,
            );
            w.raw(&format!("{name}{nl}{params}</tool_call>"));
        }
        XFmt::MinimaxM2 | XFmt::ClaudeXml => {
            let params = params_with(
                fmt,
                c,
                |p, v| format!("<parameter name=\"{}\">{v}</parameter>", p.key),
                nl,
            );
            w.raw(&format!("{}{nl}{params}</invoke>", quoted(name)));
        }
        XFmt::DeepseekV32 => {
            let params = params_with(
                fmt,
                c,
                |p, v| {
                    let attr = match (&p.val, p.attr) {
                        (_, false) => "",
                        (XVal::Str(_), true) => " string=\"true\"",
                        (XVal::Json(_), true) => " string=\"false\"",
                    };
                    format!(
                        "<｜DSML｜parameter name=\"{}\"{attr}>{v}</｜DSML｜parameter>",
                        p.key
                    )
                },
                nl,
            );
            w.raw(&format!("\"{name}\">{nl}{params}</｜DSML｜invoke>"));
        }
        XFmt::KimiK3 => {
            let params = params_with(
                fmt,
                c,
                |p, v| {
                    let attr = if p.attr {
                        format!(" type=\"{}\"", p.val.type_name())
                    } else {
                        String::new()
                    };
                    format!(
                        "<|open|>argument key=\"{}\"{attr}<|sep|>{v}<|close|>argument<|sep|>",
                        p.key
                    )
                },
                nl,
            );
            // Arguments the template is given as a string: one JSON block.
            let params = if c.closer {
                let json = serde_json::to_string(&c.args()).unwrap();
                format!("<|open|>json type=\"object\"<|sep|>{nl}{json}{nl}<|close|>json<|sep|>{nl}")
            } else {
                params
            };
            let index = if c.alt { " index=\"1\"" } else { "" };
            w.raw(&format!(
                "{name}\"{index}<|sep|>{nl}{params}<|close|>call<|sep|>"
            ));
        }
        XFmt::Step3 => {
            let params = params_with(
                fmt,
                c,
                |p, v| {
                    format!(
                        "<steptml:parameter name=\"{}\">{v}</steptml:parameter>",
                        p.key
                    )
                },
                nl,
            );
            w.raw(&format!(
                "{name}\">{nl}{params}</steptml:invoke>{nl}<｜tool_call_end｜>"
            ));
        }
        XFmt::XmlTool => {
            let args = if c.alt {
                serde_json::to_string(&c.args()).unwrap()
            } else {
                params_with(
                    fmt,
                    c,
                    |p, v| {
                        if p.attr {
                            format!("<parameter name=\"{}\">{v}</parameter>", p.key)
                        } else {
                            format!("<{k}>{v}</{k}>", k = p.key)
                        }
                    },
                    nl,
                )
            };
            w.raw(&format!(
                "{nl}<name>{name}</name>{nl}<arguments>{nl}{args}</arguments>{nl}</tool>"
            ));
        }
        XFmt::AutobyteusXml => {
            let params = params_with(
                fmt,
                c,
                |p, v| format!("<arg name=\"{}\">{v}</arg>", p.key),
                nl,
            );
            w.raw(&format!(
                "{}{nl}<arguments>{nl}{params}</arguments>{nl}</tool>",
                quoted(name)
            ));
        }
        XFmt::KeyValue => {
            let sep = if c.ws { " \t " } else { " " };
            let mut line = name.clone();
            if !c.params.is_empty() {
                line.push_str(sep);
                line.push_str("for");
            }
            for p in &c.params {
                line.push_str(&format!("{sep}{}{sep}{}", p.key, key_value_word(&p.val)));
            }
            w.raw(&line);
        }
        XFmt::UseTag => {
            let sep = if c.ws { "\n  " } else { " " };
            let attrs: String = c
                .params
                .iter()
                .map(|p| {
                    let v = raw_value(fmt, c, &p.val);
                    let q = if v.contains('"') { '\'' } else { '"' };
                    format!("{sep}{}={q}{v}{q}", p.key)
                })
                .collect();
            w.raw(&format!("{name}{attrs}>"));
        }
    }
}

/// One block holding `calls` (one call unless the format groups them).
fn render_xgroup(w: &mut Rendered, fmt: XFmt, calls: &[XCall]) {
    let first = &calls[0];
    let nl = if first.ws { "\n" } else { "" };
    let (open, call_open, between, close) = match fmt {
        XFmt::MinimaxM2 => (
            "<minimax:tool_call>",
            "<invoke name=",
            nl,
            "</minimax:tool_call>",
        ),
        XFmt::ClaudeXml => ("<function_calls>", "<invoke name=", nl, "</function_calls>"),
        XFmt::DeepseekV32 if first.alt => (
            "<｜DSML｜tool_calls>",
            "<｜DSML｜invoke name=",
            nl,
            "</｜DSML｜tool_calls>",
        ),
        XFmt::DeepseekV32 => (
            "<｜DSML｜function_calls>",
            "<｜DSML｜invoke name=",
            nl,
            "</｜DSML｜function_calls>",
        ),
        XFmt::KimiK3 => (
            "<|open|>tools<|sep|>",
            "<|open|>call tool=\"",
            nl,
            "<|close|>tools<|sep|>",
        ),
        XFmt::Step3 => (
            "<｜tool_calls_begin｜>",
            "<｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name=\"",
            nl,
            "<｜tool_calls_end｜>",
        ),
        XFmt::Qwen3Coder => ("", "<tool_call>", "", ""),
        XFmt::SeedOss => ("", "<seed:tool_call>", "", ""),
        XFmt::Glm45 | XFmt::Glm47 => ("", "<tool_call>", "", ""),
        XFmt::XmlTool => ("", "<tool>", "", ""),
        XFmt::AutobyteusXml => ("", "<tool name=", "", ""),
        XFmt::UseTag if first.alt => ("", "<use_", "", ""),
        XFmt::UseTag => ("", "<use ", "", ""),
        XFmt::KeyValue => ("", "✦ tool_call: ", "", ""),
    };
    w.open();
    if !open.is_empty() {
        w.raw(open);
        w.raw(nl);
    }
    for (k, c) in calls.iter().enumerate() {
        if k > 0 {
            w.raw(between);
        }
        w.raw(call_open);
        w.begun();
        render_xcall_body(w, fmt, c);
        w.dispatched();
        if fmt == XFmt::UseTag && c.closer {
            if c.alt {
                w.raw(&format!("</use_{}>", c.name));
            } else {
                w.raw("</use>");
            }
        }
    }
    if !close.is_empty() {
        w.raw(nl);
        w.raw(close);
    }
    w.close();
}

fn render_xml(fmt: XFmt, r: &XResp) -> Rendered {
    let mut w = Rendered::default();
    let n = r.calls.len();
    w.text(&r.texts[0]);
    let mut i = 0;
    while i < n {
        let mut j = i + 1;
        // A bare claude `<invoke>` is a block of its own.
        let grouping = fmt.grouping() && !(fmt == XFmt::ClaudeXml && r.calls[i].alt);
        if grouping {
            while j < n && r.texts[j].is_empty() {
                j += 1;
            }
        }
        if fmt == XFmt::KeyValue {
            // One line a call: its line break belongs to it, and only the
            // end of the stream may stand for it.
            let c = &r.calls[i];
            w.open();
            w.raw("✦ tool_call:");
            w.raw(if c.ws { "\t" } else { " " });
            w.begun();
            render_xcall_body(&mut w, fmt, c);
            if !(c.closer && j == n && r.texts[j].is_empty()) {
                w.raw(if c.alt { "\r\n" } else { "\n" });
            }
            w.dispatched();
            w.close();
        } else if fmt == XFmt::ClaudeXml && r.calls[i].alt {
            // The bare form: `<invoke name=…` without the wrapper.
            w.open();
            w.raw("<invoke name=");
            w.begun();
            render_xcall_body(&mut w, fmt, &r.calls[i]);
            w.dispatched();
            w.close();
        } else {
            render_xgroup(&mut w, fmt, &r.calls[i..j]);
        }
        w.text(&r.texts[j]);
        i = j;
    }
    w
}

/// A `key-value` value: a word, a JSON object or array, else quoted.
fn key_value_word(v: &XVal) -> String {
    match v {
        XVal::Str(s)
            if s.is_empty()
                || s.contains([' ', '\t', '\n', '\r'])
                || s.starts_with(['{', '[', '"']) =>
        {
            format!("\"{s}\"")
        }
        v => v.text(),
    }
}

/// Every value's raw text holds nothing that ends it early (the generator
/// took it out, but strings can still meet JSON punctuation or framing).
fn carriable(fmt: XFmt, r: &XResp) -> bool {
    r.calls.iter().all(|c| {
        c.params.iter().all(|p| {
            let v = raw_value(fmt, c, &p.val);
            let quotes_ok = fmt != XFmt::UseTag || !(v.contains('"') && v.contains('\''));
            // Qwen3-Coder and Seed-OSS read the text `null` as JSON null,
            // whatever the type: a string `null` cannot be written.
            let null_ok = !matches!(fmt, XFmt::Qwen3Coder | XFmt::SeedOss)
                || !matches!(&p.val, XVal::Str(_))
                || v.trim_matches('\n') != "null";
            quotes_ok
                && null_ok
                && !fmt.value_enders().iter().any(|e| v.contains(e))
                && fmt.next_after_closer(&v).is_none()
        })
    })
}

/// Invariants 1, 2 and 7, the generated calls and no diagnostics, for
/// one grammar (a format's name or `auto`).
fn check_xml(
    grammar: &str,
    r: &Rendered,
    resp: &XResp,
    cuts: &[Index],
) -> Result<(), TestCaseError> {
    let input = r.input.as_bytes();
    for run in run_plans_with(grammar, &resp.options(), input, cuts)? {
        let ctx = format!("{grammar}, {}, input {:?}", run.plan, r.input);
        prop_assert_eq!(run.tally.completed, resp.calls.len(), "{}", ctx);
        let got = Response::from_events(&run.events);
        prop_assert!(got.diagnostics.is_empty(), "{}: {:?}", ctx, got.diagnostics);
        let want: Vec<(&str, Map<String, Value>)> = resp
            .calls
            .iter()
            .map(|c| (c.name.as_str(), c.args()))
            .collect();
        let have: Vec<(&str, Map<String, Value>)> = got
            .tool_calls
            .iter()
            .map(|c| (c.name.as_str(), c.arguments.parse().expect("an object")))
            .collect();
        prop_assert_eq!(have, want, "{}", ctx);
        prop_assert_eq!(&got.text, &r.text, "{}", ctx);
        let reason = if resp.calls.is_empty() {
            FinishReason::Stop
        } else {
            FinishReason::ToolCalls
        };
        prop_assert_eq!(got.finish_reason, reason, "{}", ctx);
        nothing_lost(&run.events, input, &r.spans).map_err(|e| fail(format!("{ctx}: {e}")))?;
    }
    Ok(())
}

/// 48 cases per XML format unless `PROPTEST_CASES` says otherwise (each
/// case runs 3 plans × 4 APIs, by name and as `auto`).
fn xml_config() -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(48);
    ProptestConfig {
        failure_persistence: None,
        ..ProptestConfig::with_cases(cases)
    }
}

macro_rules! xml_format_properties {
    ($($module:ident => $fmt:expr;)*) => {$(
        mod $module {
            use super::*;

            proptest! {
                #![proptest_config(xml_config())]

                /// Invariants 1, 2, 7 and the generated calls, by name and
                /// as `auto`.
                #[test]
                fn complete_responses(resp in xml_response($fmt, 0..5), cuts in cuts()) {
                    prop_assume!(carriable($fmt, &resp));
                    let r = render_xml($fmt, &resp);
                    check_xml($fmt.name(), &r, &resp, &cuts)?;
                    check_xml("auto", &r, &resp, &cuts)?;
                }
            }
        }
    )*};
}

xml_format_properties! {
    xml_qwen3_coder => XFmt::Qwen3Coder;
    xml_seed_oss => XFmt::SeedOss;
    xml_glm45 => XFmt::Glm45;
    xml_glm47 => XFmt::Glm47;
    xml_minimax_m2 => XFmt::MinimaxM2;
    xml_claude_xml => XFmt::ClaudeXml;
    xml_deepseek_v3_2 => XFmt::DeepseekV32;
    xml_kimi_k3 => XFmt::KimiK3;
    xml_step3 => XFmt::Step3;
    xml_xml_tool => XFmt::XmlTool;
    xml_autobyteus_xml => XFmt::AutobyteusXml;
    xml_use_tag => XFmt::UseTag;
    xml_key_value => XFmt::KeyValue;
}

/// The XML renderers write what each format's documentation shows, and
/// their spans and text partition the input.
#[test]
fn xml_renderer_bookkeeping() {
    let call = |name: &str, alt: bool| XCall {
        name: name.into(),
        params: vec![
            XParam {
                key: "city".into(),
                val: XVal::Str("Paris".into()),
                typed: true,
                attr: true,
            },
            XParam {
                key: "days".into(),
                val: XVal::Json(Value::from(3)),
                typed: true,
                attr: true,
            },
        ],
        ws: true,
        alt,
        closer: false,
        esc: 0,
    };
    let resp = XResp {
        texts: vec!["Sure. ".into(), String::new(), " done".into()],
        calls: vec![call("get_weather", false), call("get_time", false)],
    };
    for fmt in XFmt::ALL {
        let r = render_xml(fmt, &resp);
        let spans: usize = r.spans.iter().map(|s| s.len()).sum();
        assert_eq!(r.text.len() + spans, r.input.len(), "{fmt:?}");
        assert_eq!(r.text, "Sure.  done", "{fmt:?}");
        assert_eq!(r.calls.len(), 2, "{fmt:?}");
        assert!(carriable(fmt, &resp), "{fmt:?}");
    }
    let one = XResp {
        texts: vec![String::new(), String::new()],
        calls: vec![call("get_weather", false)],
    };
    let want = [
        (
            XFmt::Qwen3Coder,
            "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n\
             <parameter=days>\n3\n</parameter>\n</function>\n</tool_call>",
        ),
        (
            XFmt::Glm47,
            "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n\
             <arg_key>days</arg_key>\n<arg_value>3</arg_value>\n</tool_call>",
        ),
        (
            XFmt::KimiK3,
            "<|open|>tools<|sep|>\n<|open|>call tool=\"get_weather\"<|sep|>\n\
             <|open|>argument key=\"city\" type=\"string\"<|sep|>Paris<|close|>argument<|sep|>\n\
             <|open|>argument key=\"days\" type=\"integer\"<|sep|>3<|close|>argument<|sep|>\n\
             <|close|>call<|sep|>\n<|close|>tools<|sep|>",
        ),
        (
            XFmt::DeepseekV32,
            "<｜DSML｜function_calls>\n<｜DSML｜invoke name=\"get_weather\">\n\
             <｜DSML｜parameter name=\"city\" string=\"true\">Paris</｜DSML｜parameter>\n\
             <｜DSML｜parameter name=\"days\" string=\"false\">3</｜DSML｜parameter>\n\
             </｜DSML｜invoke>\n</｜DSML｜function_calls>",
        ),
        (
            XFmt::UseTag,
            "<use get_weather\n  city=\"Paris\"\n  days=\"3\">",
        ),
    ];
    for (fmt, s) in want {
        assert_eq!(render_xml(fmt, &one).input, s, "{fmt:?}");
    }
    // Entities: `&` and `<` always, then more by the escaping style.
    assert_eq!(xml_escape("a<b & \"c\" é", 0), "a&lt;b &amp; \"c\" é");
    assert_eq!(
        xml_escape("a<b & \"c\" é", 1),
        "a&lt;b &amp; &quot;c&quot; é"
    );
    assert_eq!(xml_escape("é>", 2), "&#233;&gt;");
    assert_eq!(xml_escape("é-", 3), "é&#x2D;");
}
