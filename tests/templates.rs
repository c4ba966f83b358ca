//! The real chat templates: render each model's own Jinja template (from
//! `../shared/templates`, never copied here) for a conversation with tool
//! calls, cut out the assistant turn the model would have generated, and
//! check that the parser gives back the calls and the text.
//!
//! Which templates: the rows of `SOURCES.md` whose `format` is in
//! [`IN_SCOPE`] and known to `Registry::builtin()`. Without `../shared`
//! (a fresh clone) the test says so and passes.
//!
//! Rendering mimics transformers' `apply_chat_template`: `trim_blocks`,
//! `lstrip_blocks`, loop controls, Python string/dict methods (pycompat),
//! a `tojson` that is Python's `json.dumps` (with `ensure_ascii`, `indent`,
//! `separators`, `sort_keys`), `raise_exception`, `strftime_now` (a fixed
//! date), `None`/`True`/`False` printed the Python way, `bos_token` and
//! `eos_token`.
//!
//! Cutting the assistant turn (the method is printed per template):
//! * `prefix`: the conversation up to the user message rendered with
//!   `add_generation_prompt=True` (P) is a prefix of the whole conversation
//!   (F); the turn is the rest of F. Most templates.
//! * `history`: F does not start with P, but with P0 (the same messages
//!   without the generation prompt): the generation prompt pre-fills
//!   something the history rendering does not have (DeepSeek-R1-Distill and
//!   QwQ pre-fill `<think>\n`). The part of the generation prompt that F
//!   repeats is dropped; the turn is what F has after it (no reasoning).
//! * `user-anchor`: neither (Mistral Nemo / the vLLM Mistral parallel
//!   template merge the system prompt into the *last* user message, which
//!   is no longer last once the assistant answered): P and F are aligned
//!   after the last occurrence of the user's text; what F has after the part
//!   both share is the turn.
//!
//! The turn is then cut at the first end-of-turn token ([`END_OF_TURN`]) or
//! start of the next message ([`NEXT_MESSAGE`]; R1-Distill renders no end
//! after a single call), and an empty `<think>\n\n</think>\n\n` (Qwen3
//! renders one into the last assistant turn) is removed.
//!
//! A conversation is skipped for a template (counted and printed by
//! reason) when the template raises for it (e.g. Llama 3.x with two calls,
//! DeepSeek/Functionary templates that concatenate `arguments` as a string
//! when given a dict, templates that test or split a `null` content:
//! Qwen3, QwQ, Bielik, vLLM deepseekr1, Ministral 3, Devstral),
//! or drops the calls (R1-Distill renders calls only when content is
//! `null`) or the assistant text (Hermes 2 Pro, Llama 3.x, Mistral
//! Nemo/Small 3.x); see [`skip_reason`]. `auto` is not run where the calls
//! open with a bare `{` (Llama 3.x JSON without `<|python_tag|>`), which
//! `auto` leaves out by design.
//!
//! Per template (cut / what differs from the model's own output):
//! * Qwen2.5, MiMo-VL, Qwen3, Bielik, Hermes 2 Pro, Granite 4.0/4.1, Reka
//!   Edge: `prefix`; Qwen3 renders an empty think block into the last
//!   assistant turn (removed); Reka's turn starts with a space (`assistant:`
//!   prompt vs `assistant: ` history) and its `tojson(ensure_ascii=True)`
//!   writes `\u00fc`; Reka puts no newline between two calls.
//! * QwQ-32B, DeepSeek-R1-Distill-Qwen: `history` (the `<think>\n` pre-fill
//!   is not in history). R1-Distill writes no `<｜tool▁calls▁end｜>` after a
//!   single call (cut at the next message).
//! * Mistral Nemo, vLLM mistral_parallel: `user-anchor` when there is a
//!   system message (Nemo) / always (parallel); the others `prefix`.
//! * DeepSeek V3.1, vLLM deepseekr1, Functionary v3.1, Llama 3.1/3.2, vLLM
//!   llama3.1_json / llama4_json, Mistral Small 3.2, Ministral 3, Devstral,
//!   vLLM mistral3: `prefix`.
//!
//! Known difference from Python Jinja2: minijinja iterates `None` as an
//! empty sequence (and `None is iterable` is true), so vLLM's llama4_json
//! template renders a `null` content as nothing where Jinja2 raises.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use minijinja::value::{Kwargs, Value, ValueKind};
use minijinja::{AutoEscape, Environment, Error, ErrorKind};
use serde_json::Value as Json;
use toolscan::format::Trust;
use toolscan::{Registry, Response};
use toolscan_testkit::check::check_events;
use toolscan_testkit::chunk::{self, seeded_options, Api, Plan};
use toolscan_testkit::corpus::{check_expect, normalize_ws, Outcome};

/// Where the shared templates live (beside the repository).
const TEMPLATES_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/templates");

/// The formats whose templates are rendered (when this build implements
/// them).
const IN_SCOPE: &[&str] = &[
    "hermes",
    "deepseek-v3",
    "deepseek-v3.1",
    "function-tag",
    "llama3-json",
    "mistral",
    "mistral-v11",
];

/// Renders the engine does not parse yet although it should: template file
/// and conversation id, or a part of one (`args=string`: every conversation
/// with string arguments). Skipped and printed.
const KNOWN_GAPS: &[(&str, &str)] = &[];

/// Tokens that end an assistant turn.
const END_OF_TURN: &[&str] = &[
    "<|im_end|>",
    "<|eot_id|>",
    "<|eom_id|>",
    "<|eot|>",
    "<|eom|>",
    "</s>",
    "<｜end▁of▁sentence｜>",
    "<|end_of_text|>",
    "<sep>",
];

/// Tokens that start the next message (for templates that render no end of
/// the assistant turn).
const NEXT_MESSAGE: &[&str] = &[
    "<｜tool▁outputs▁begin｜>",
    "<｜tool▁output▁begin｜>",
    "<｜User｜>",
    "<|im_start|>",
    "<|start_header_id|>",
    "<|header_start|>",
    "<|start_of_role|>",
    "[INST]",
    "[TOOL_RESULTS]",
];

const EMPTY_THINK: &str = "<think>\n\n</think>\n\n";

const SYSTEM: &str = "You are a helpful assistant.";
const USER: &str = "What's the weather in Zürich and Paris?";
const TEXT: &str = "Let me check.";

/// The calls of the conversations: id (9 alphanumerics, as Mistral
/// templates demand), name, arguments (as Python's `json.dumps(...,
/// ensure_ascii=False)` writes them: also the string form).
const CALLS: &[(&str, &str, &str)] = &[
    (
        "abcDEF123",
        "get_weather",
        r#"{"city": "Zürich", "unit": "celsius"}"#,
    ),
    (
        "xyzXYZ789",
        "search",
        r#"{"query": "weather in \"Paris\" (météo)", "filters": {"lang": "fr", "max": 3, "fresh": true, "sites": ["meteo.fr", "bbc.com"]}}"#,
    ),
];

/// Tool results, one per call.
const RESULTS: &[&str] = &[
    r#"{"temperature": 18, "unit": "celsius"}"#,
    "Paris: sunny, 21 °C",
];

const TOOLS: &str = r#"[
  {"type": "function", "function": {
    "name": "get_weather",
    "description": "Get the current weather in a city.",
    "parameters": {"type": "object", "properties": {
      "city": {"type": "string", "description": "The city name."},
      "unit": {"type": "string", "description": "celsius or fahrenheit", "enum": ["celsius", "fahrenheit"]}
    }, "required": ["city"]}}},
  {"type": "function", "function": {
    "name": "search",
    "description": "Search the web.",
    "parameters": {"type": "object", "properties": {
      "query": {"type": "string", "description": "The search query."},
      "filters": {"type": "object", "description": "Optional filters."}
    }, "required": ["query"]}}}
]"#;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Content {
    /// `"content": null`
    Null,
    /// `"content": ""`
    Empty,
    /// `"content": "Let me check."`
    Text,
}

/// One conversation: system?, user, assistant with calls, tool results?
#[derive(Clone, Copy, Debug)]
struct Conv {
    calls: usize,
    content: Content,
    args_string: bool,
    tool_result: bool,
    system: bool,
}

impl Conv {
    fn all() -> Vec<Conv> {
        let mut v = Vec::new();
        for calls in [1, 2] {
            for content in [Content::Null, Content::Empty, Content::Text] {
                for args_string in [false, true] {
                    for tool_result in [false, true] {
                        for system in [false, true] {
                            v.push(Conv {
                                calls,
                                content,
                                args_string,
                                tool_result,
                                system,
                            });
                        }
                    }
                }
            }
        }
        v
    }

    fn id(&self) -> String {
        let content = match self.content {
            Content::Null => "null",
            Content::Empty => "empty",
            Content::Text => "text",
        };
        let args = if self.args_string { "string" } else { "dict" };
        let mut s = format!("calls={} content={content} args={args}", self.calls);
        if self.tool_result {
            s.push_str(" +tool");
        }
        if self.system {
            s.push_str(" +system");
        }
        s
    }

    fn text(&self) -> &'static str {
        match self.content {
            Content::Text => TEXT,
            _ => "",
        }
    }

    /// The messages up to the user's (the prompt of the turn).
    fn prompt(&self) -> Vec<Value> {
        let mut m = Vec::new();
        if self.system {
            m.push(obj(vec![
                ("role", "system".into()),
                ("content", SYSTEM.into()),
            ]));
        }
        m.push(obj(vec![("role", "user".into()), ("content", USER.into())]));
        m
    }

    /// All messages.
    fn messages(&self) -> Vec<Value> {
        let mut m = self.prompt();
        let calls: Vec<Value> = CALLS[..self.calls]
            .iter()
            .map(|(id, name, args)| {
                let arguments = if self.args_string {
                    Value::from(*args)
                } else {
                    serde_json::from_str::<Value>(args).expect("arguments are JSON")
                };
                obj(vec![
                    ("id", (*id).into()),
                    ("type", "function".into()),
                    (
                        "function",
                        obj(vec![("name", (*name).into()), ("arguments", arguments)]),
                    ),
                ])
            })
            .collect();
        let content = match self.content {
            Content::Null => Value::from(()),
            Content::Empty => Value::from(""),
            Content::Text => Value::from(TEXT),
        };
        m.push(obj(vec![
            ("role", "assistant".into()),
            ("content", content),
            ("tool_calls", Value::from(calls)),
        ]));
        if self.tool_result {
            for (i, (id, name, _)) in CALLS[..self.calls].iter().enumerate() {
                m.push(obj(vec![
                    ("role", "tool".into()),
                    ("tool_call_id", (*id).into()),
                    ("name", (*name).into()),
                    ("content", RESULTS[i].into()),
                ]));
            }
        }
        m
    }

    /// The calls the parser must give back: (name, arguments).
    fn expected(&self) -> Vec<(String, Json)> {
        CALLS[..self.calls]
            .iter()
            .map(|(_, name, args)| (name.to_string(), serde_json::from_str(args).unwrap()))
            .collect()
    }
}

/// An ordered map (minijinja's `preserve_order` keeps insertion order, as
/// Python dicts do).
fn obj(pairs: Vec<(&str, Value)>) -> Value {
    pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
}

// ---------------------------------------------------------------------------
// A transformers-like Jinja environment.

/// Python's `json.dumps(value, ensure_ascii, indent, separators, sort_keys)`
/// (transformers' `tojson`).
struct Dumps {
    ensure_ascii: bool,
    indent: Option<String>,
    item_sep: String,
    key_sep: String,
    sort_keys: bool,
}

impl Dumps {
    fn string(&self, s: &str, out: &mut String) {
        out.push('"');
        for c in s.chars() {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\t' => out.push_str("\\t"),
                '\u{8}' => out.push_str("\\b"),
                '\u{c}' => out.push_str("\\f"),
                c if (c as u32) < 0x20 => {
                    let _ = write!(out, "\\u{:04x}", c as u32);
                }
                c if self.ensure_ascii && !(' '..='~').contains(&c) => {
                    let mut buf = [0u16; 2];
                    for unit in c.encode_utf16(&mut buf) {
                        let _ = write!(out, "\\u{unit:04x}");
                    }
                }
                c => out.push(c),
            }
        }
        out.push('"');
    }

    fn newline(&self, level: usize, out: &mut String) {
        if let Some(ind) = &self.indent {
            out.push('\n');
            for _ in 0..level {
                out.push_str(ind);
            }
        }
    }

    fn key(&self, k: &Value) -> Result<String, Error> {
        Ok(match k.kind() {
            ValueKind::String => k.as_str().unwrap_or_default().to_string(),
            ValueKind::None => "null".into(),
            ValueKind::Bool => if k.is_true() { "true" } else { "false" }.into(),
            ValueKind::Number => k.to_string(),
            _ => {
                return Err(Error::new(
                    ErrorKind::InvalidOperation,
                    format!(
                        "keys must be str, int, float, bool or None, not {}",
                        k.kind()
                    ),
                ))
            }
        })
    }

    fn value(&self, v: &Value, level: usize, out: &mut String) -> Result<(), Error> {
        match v.kind() {
            ValueKind::None => out.push_str("null"),
            ValueKind::Bool => out.push_str(if v.is_true() { "true" } else { "false" }),
            ValueKind::Number => {
                let s = v.to_string();
                out.push_str(match s.as_str() {
                    "inf" => "Infinity",
                    "-inf" => "-Infinity",
                    "NaN" | "nan" => "NaN",
                    s => s,
                });
            }
            ValueKind::String => self.string(v.as_str().unwrap_or_default(), out),
            ValueKind::Seq => {
                let items: Vec<Value> = v.try_iter()?.collect();
                if items.is_empty() {
                    out.push_str("[]");
                    return Ok(());
                }
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(&self.item_sep);
                    }
                    self.newline(level + 1, out);
                    self.value(item, level + 1, out)?;
                }
                self.newline(level, out);
                out.push(']');
            }
            ValueKind::Map => {
                let mut entries = Vec::new();
                for k in v.try_iter()? {
                    let val = v.get_item(&k)?;
                    entries.push((self.key(&k)?, val));
                }
                if self.sort_keys {
                    entries.sort_by(|a, b| a.0.cmp(&b.0));
                }
                if entries.is_empty() {
                    out.push_str("{}");
                    return Ok(());
                }
                out.push('{');
                for (i, (k, val)) in entries.iter().enumerate() {
                    if i > 0 {
                        out.push_str(&self.item_sep);
                    }
                    self.newline(level + 1, out);
                    self.string(k, out);
                    out.push_str(&self.key_sep);
                    self.value(val, level + 1, out)?;
                }
                self.newline(level, out);
                out.push('}');
            }
            kind => {
                return Err(Error::new(
                    ErrorKind::InvalidOperation,
                    format!("Object of type {kind} is not JSON serializable"),
                ))
            }
        }
        Ok(())
    }
}

/// `value | tojson(ensure_ascii=False, indent=None, separators=None,
/// sort_keys=False)`, as transformers defines it.
fn tojson(value: &Value, kwargs: Kwargs) -> Result<Value, Error> {
    let ensure_ascii: Option<bool> = kwargs.get("ensure_ascii")?;
    let indent: Option<Value> = kwargs.get("indent")?;
    let separators: Option<Value> = kwargs.get("separators")?;
    let sort_keys: Option<bool> = kwargs.get("sort_keys")?;
    kwargs.assert_all_used()?;
    let indent = match indent {
        Some(v) if v.kind() == ValueKind::Number => {
            let n = i64::try_from(v)?.max(0) as usize;
            Some(" ".repeat(n))
        }
        Some(v) if v.kind() == ValueKind::String => Some(v.as_str().unwrap().to_string()),
        _ => None,
    };
    let (item_sep, key_sep) = match separators {
        Some(v) if !v.is_none() => {
            let parts: Vec<Value> = v.try_iter()?.collect();
            let s = |i: usize| {
                parts
                    .get(i)
                    .and_then(|p| p.as_str())
                    .map(str::to_string)
                    .ok_or_else(|| Error::new(ErrorKind::InvalidOperation, "bad separators"))
            };
            (s(0)?, s(1)?)
        }
        _ if indent.is_some() => (",".to_string(), ": ".to_string()),
        _ => (", ".to_string(), ": ".to_string()),
    };
    let d = Dumps {
        ensure_ascii: ensure_ascii.unwrap_or(false),
        indent,
        item_sep,
        key_sep,
        sort_keys: sort_keys.unwrap_or(false),
    };
    let mut out = String::new();
    d.value(value, 0, &mut out)?;
    Ok(Value::from_safe_string(out))
}

fn raise_exception(msg: String) -> Result<Value, Error> {
    Err(Error::new(ErrorKind::InvalidOperation, msg))
}

/// `strftime_now(format)` at a fixed moment (2024-07-26 00:00:00), for
/// reproducible renders.
fn strftime_now(format: String) -> String {
    let mut out = String::new();
    let mut chars = format.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('d') => out.push_str("26"),
            Some('b') => out.push_str("Jul"),
            Some('B') => out.push_str("July"),
            Some('m') => out.push_str("07"),
            Some('Y') => out.push_str("2024"),
            Some('y') => out.push_str("24"),
            Some('a') => out.push_str("Fri"),
            Some('A') => out.push_str("Friday"),
            Some('H' | 'M' | 'S') => out.push_str("00"),
            Some('%') => out.push('%'),
            Some(other) => {
                out.push('%');
                out.push(other);
            }
            None => out.push('%'),
        }
    }
    out
}

fn environment() -> Environment<'static> {
    let mut env = Environment::new();
    env.set_trim_blocks(true);
    env.set_lstrip_blocks(true);
    env.set_keep_trailing_newline(false);
    env.set_auto_escape_callback(|_| AutoEscape::None);
    env.set_unknown_method_callback(minijinja_contrib::pycompat::unknown_method_callback);
    env.add_filter("tojson", tojson);
    env.add_function("raise_exception", raise_exception);
    env.add_function("strftime_now", strftime_now);
    // Jinja2 prints None, True and False the Python way.
    env.set_formatter(|out, state, value| match value.kind() {
        ValueKind::None => out.write_str("None").map_err(Error::from),
        ValueKind::Bool => out
            .write_str(if value.is_true() { "True" } else { "False" })
            .map_err(Error::from),
        _ => minijinja::escape_formatter(out, state, value),
    });
    env
}

/// `bos_token` / `eos_token` of a template's model family.
fn special_tokens(source: &str) -> (&'static str, &'static str) {
    if source.contains("<｜") {
        ("<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>")
    } else if source.contains("<|start_header_id|>") || source.contains("<|header_start|>") {
        ("<|begin_of_text|>", "<|eot_id|>")
    } else if source.contains("<|im_start|>") {
        ("", "<|im_end|>")
    } else {
        ("<s>", "</s>")
    }
}

fn render(
    env: &Environment,
    template: &str,
    tokens: (&str, &str),
    messages: Vec<Value>,
    add_generation_prompt: bool,
) -> Result<String, Error> {
    let tools: Value = serde_json::from_str(TOOLS).expect("tools are JSON");
    let ctx = minijinja::context! {
        messages => Value::from(messages),
        tools => tools,
        add_generation_prompt => add_generation_prompt,
        bos_token => tokens.0,
        eos_token => tokens.1,
    };
    env.get_template(template)?.render(ctx)
}

// ---------------------------------------------------------------------------
// Cutting the assistant turn.

/// The longest head of `prompt` that `rest` starts with and that ends at a
/// token boundary (after `>`, `]`, a newline, or at the end of `prompt`):
/// `<|im_start|>assistant\n` of `<|im_start|>assistant\n<think>\n` when
/// `rest` is `<|im_start|>assistant\n<tool_call>…`, not `…\n<t`.
fn shared_head(rest: &str, prompt: &str) -> usize {
    let ends = prompt
        .char_indices()
        .filter(|(_, c)| matches!(c, '>' | ']' | '\n'))
        .map(|(i, c)| i + c.len_utf8())
        .chain([prompt.len()]);
    ends.filter(|&i| rest.starts_with(&prompt[..i]))
        .max()
        .unwrap_or(0)
}

/// The assistant turn of `full`, given the prompt rendered with (`p`) and
/// without (`p0`) the generation prompt; and how it was found.
fn cut_turn(p: &str, p0: &str, full: &str) -> Result<(String, &'static str), String> {
    let (rest, method) = if let Some(rest) = full.strip_prefix(p) {
        (rest, "prefix")
    } else if let Some(rest) = full.strip_prefix(p0) {
        let gen = &p[p0.len()..];
        (&rest[shared_head(rest, gen)..], "history")
    } else {
        let (Some(a), Some(b)) = (p.rfind(USER), full.rfind(USER)) else {
            return Err("the user message is not found in the renders".into());
        };
        let (pt, ft) = (&p[a + USER.len()..], &full[b + USER.len()..]);
        (&ft[shared_head(ft, pt)..], "user-anchor")
    };
    let end = END_OF_TURN
        .iter()
        .chain(NEXT_MESSAGE)
        .filter_map(|t| rest.find(t))
        .min()
        .unwrap_or(rest.len());
    let mut turn = &rest[..end];
    turn = turn.strip_prefix(EMPTY_THINK).unwrap_or(turn);
    turn = turn.strip_suffix(EMPTY_THINK).unwrap_or(turn);
    Ok((turn.to_string(), method))
}

/// Why a rendered turn is not a test of the parser (the template, not the
/// model, is odd), if it is not.
fn skip_reason(conv: &Conv, turn: &str) -> Option<String> {
    for (_, name, _) in &CALLS[..conv.calls] {
        if !turn.contains(name) {
            return Some(format!(
                "the template does not render the call {name} of this message"
            ));
        }
    }
    if conv.content == Content::Text && !turn.contains(TEXT) {
        return Some("the template drops the assistant content next to tool calls".into());
    }
    None
}

// ---------------------------------------------------------------------------
// Parsing and checking.

/// Parses a turn whole with the one-shot `parse`, or fed in 1-byte chunks
/// (the events checked against the event contract).
fn parse(format: &str, input: &[u8], one_byte: bool) -> Result<Response, String> {
    if !one_byte {
        let g = Registry::builtin().grammar(format).expect("format exists");
        return Ok(toolscan::parse(g, seeded_options(), input));
    }
    let p = chunk::seeded(format);
    let events = chunk::feed(p, Api::FeedInto, input, &Plan::fixed(input.len(), 1));
    check_events(&events)?;
    Ok(Response::from_events(&events))
}

/// The calls and the text of the conversation's turn, and no diagnostics.
fn check(r: &Response, conv: &Conv) -> Result<(), String> {
    let calls: Vec<Json> = conv
        .expected()
        .into_iter()
        .map(|(name, arguments)| serde_json::json!({"name": name, "arguments": arguments}))
        .collect();
    let expect = serde_json::json!({
        "text": normalize_ws(conv.text()),
        "tool_calls": calls,
        "diagnostics": 0,
    });
    check_expect(&expect, &Outcome::from_response(r))
}

/// Whether `auto` is expected to see the calls of this turn: it leaves out
/// bare openers (a plain `{`), so a turn needs one of the format's other
/// markers.
fn auto_sees(format: &str, turn: &str) -> bool {
    let reg = Registry::builtin();
    let Some(f) = reg.get(format) else {
        return false;
    };
    f.openers().iter().any(|o| {
        if o.trust == Trust::Bare {
            return false;
        }
        let m = &o.marker.bytes;
        turn.as_bytes().windows(m.len()).any(|w| {
            if o.marker.case_insensitive {
                w.eq_ignore_ascii_case(m)
            } else {
                w == m.as_slice()
            }
        })
    })
}

/// `file` and `format` of each row of SOURCES.md (`—` rows left out).
fn sources(text: &str) -> Vec<(String, String)> {
    let mut rows = Vec::new();
    for line in text.lines() {
        if !line.starts_with('|') {
            continue;
        }
        // Split on `|` not escaped as `\|`.
        let mut cells = Vec::new();
        let mut cell = String::new();
        let mut prev = ' ';
        for c in line.chars() {
            if c == '|' && prev != '\\' {
                cells.push(cell.trim().to_string());
                cell.clear();
            } else {
                cell.push(c);
            }
            prev = c;
        }
        // cells[0] is the empty text before the first `|`.
        if cells.len() < 6 || !cells[1].ends_with(".jinja") {
            continue;
        }
        let format = cells[5].trim_matches('`').trim().to_string();
        if format == "—" || format.is_empty() {
            continue;
        }
        rows.push((cells[1].clone(), format));
    }
    rows
}

#[derive(Default)]
struct Tally {
    format: String,
    methods: BTreeMap<&'static str, usize>,
    checked: usize,
    distinct: std::collections::BTreeSet<String>,
    skipped: BTreeMap<String, usize>,
}

#[test]
fn templates_render_turns_the_parser_recovers() {
    let dir = Path::new(TEMPLATES_DIR);
    let Ok(sources_md) = std::fs::read_to_string(dir.join("SOURCES.md")) else {
        eprintln!(
            "templates: {} not found (no ../shared beside the repository): template tests skipped",
            dir.display()
        );
        return;
    };
    let print_all = std::env::var_os("TOOLSCAN_TEMPLATES_PRINT").is_some();
    let reg = Registry::builtin();
    let mut env = environment();
    let mut failures: Vec<String> = Vec::new();
    let mut tallies: BTreeMap<String, Tally> = BTreeMap::new();
    let mut not_built: BTreeMap<String, usize> = BTreeMap::new();

    for (file, format) in sources(&sources_md) {
        if !IN_SCOPE.contains(&format.as_str()) {
            continue;
        }
        if reg.get(&format).is_none() {
            *not_built.entry(format).or_default() += 1;
            continue;
        }
        let source = match std::fs::read_to_string(dir.join(&file)) {
            Ok(s) => s,
            Err(e) => {
                failures.push(format!("{file}: listed in SOURCES.md but unreadable: {e}"));
                continue;
            }
        };
        let tokens = special_tokens(&source);
        if let Err(e) = env.add_template_owned(file.clone(), source) {
            failures.push(format!("{file}: does not compile: {e:#}"));
            continue;
        }
        let tally = tallies.entry(file.clone()).or_default();
        tally.format = format.clone();

        for conv in Conv::all() {
            let cid = conv.id();
            let rendered = (|| -> Result<(String, String, String), Error> {
                Ok((
                    render(&env, &file, tokens, conv.prompt(), true)?,
                    render(&env, &file, tokens, conv.prompt(), false)?,
                    render(&env, &file, tokens, conv.messages(), false)?,
                ))
            })();
            let (p, p0, full) = match rendered {
                Ok(r) => r,
                Err(e) => {
                    let msg = e.detail().unwrap_or("").to_string();
                    let msg = if msg.is_empty() { e.to_string() } else { msg };
                    *tally
                        .skipped
                        .entry(format!("the template raises: {msg}"))
                        .or_default() += 1;
                    continue;
                }
            };
            let (turn, method) = match cut_turn(&p, &p0, &full) {
                Ok(t) => t,
                Err(e) => {
                    failures.push(format!("{file} [{cid}]: cannot cut the turn: {e}"));
                    continue;
                }
            };
            if let Some(why) = skip_reason(&conv, &turn) {
                *tally.skipped.entry(why).or_default() += 1;
                continue;
            }
            if KNOWN_GAPS
                .iter()
                .any(|(f, c)| *f == file && cid.contains(c))
            {
                eprintln!("known gap, skipped: {file} [{cid}]: {turn:?}");
                *tally
                    .skipped
                    .entry("known engine gap (KNOWN_GAPS)".into())
                    .or_default() += 1;
                continue;
            }
            *tally.methods.entry(method).or_default() += 1;
            tally.checked += 1;
            tally.distinct.insert(turn.clone());
            if print_all {
                eprintln!("{file} [{cid}] ({method}): {turn:?}");
            }
            let mut grammars = vec![format.as_str()];
            if auto_sees(&format, &turn) {
                grammars.push("auto");
            } else {
                *tally
                    .skipped
                    .entry(
                        "auto not run (format only): the calls open with a bare `{`, which auto leaves out"
                            .into(),
                    )
                    .or_default() += 1;
            }
            for g in grammars {
                for one_byte in [false, true] {
                    let checked =
                        parse(g, turn.as_bytes(), one_byte).and_then(|r| check(&r, &conv));
                    if let Err(e) = checked {
                        let chunks = if one_byte { "1-byte chunks" } else { "whole" };
                        failures.push(format!(
                            "{file} [{cid}] format {g}, {chunks} (turn cut by {method}):\n  \
                             turn: {turn:?}\n  {e}"
                        ));
                    }
                }
            }
        }
    }

    eprintln!("templates rendered ({TEMPLATES_DIR}):");
    for (file, t) in &tallies {
        let methods: Vec<String> = t.methods.iter().map(|(m, n)| format!("{m} {n}")).collect();
        eprintln!(
            "  {file} [{}]: {} conversations checked ({} distinct turns; cut by {})",
            t.format,
            t.checked,
            t.distinct.len(),
            if methods.is_empty() {
                "-".to_string()
            } else {
                methods.join(", ")
            }
        );
        for (why, n) in &t.skipped {
            eprintln!("      skipped {n}: {why}");
        }
    }
    for (format, n) in &not_built {
        eprintln!("  format {format} not in this build: {n} template(s) skipped");
    }
    assert!(
        tallies.values().any(|t| t.checked > 0) || tallies.is_empty() && !not_built.is_empty(),
        "no template turn was checked"
    );
    assert!(
        failures.is_empty(),
        "{} template checks failed:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}
