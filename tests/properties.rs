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

use std::ops::Range;

use proptest::collection::{btree_map, vec};
use proptest::prelude::*;
use proptest::sample::Index;
use proptest::test_runner::TestCaseError;
use serde_json::{Map, Value};
use toolscan::{parse, DiagnosticKind, Event, FinishReason, Registry, Response};
use toolscan_testkit::check::{check_events, nothing_lost, same_coalesced, Tally};
use toolscan_testkit::chunk::{feed_every_api, seeded, seeded_options, Plan};

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
    let len = input.len();
    let at: Vec<usize> = cuts.iter().map(|c| c.index(len + 1)).collect();
    let mut runs: Vec<Run> = Vec::new();
    for plan in [Plan::whole(len), Plan::fixed(len, 1), Plan::cuts(len, &at)] {
        let ctx = format!(
            "{grammar}, {plan}, input {:?}",
            String::from_utf8_lossy(input)
        );
        let events = feed_every_api(|| seeded(grammar), input, &plan)
            .map_err(|e| fail(format!("{ctx}: {e}")))?;
        let tally = check_events(&events).map_err(|e| fail(format!("{ctx}: {e}")))?;
        match runs.first() {
            None => {
                let g = Registry::builtin().grammar(grammar).unwrap();
                let got = Response::from_events(&events);
                prop_assert_eq!(parse(g, seeded_options(), input), got, "{}", ctx);
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
