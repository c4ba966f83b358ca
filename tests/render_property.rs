//! Round trip as a property: for every built-in format and one loaded from
//! a format file (`examples/formats/glm47.json`), random responses — prose,
//! then 0–3 calls with random names and arguments (unicode, escapes,
//! quotes and backslashes, every format's closing markers inside strings,
//! nesting up to six levels, empty arguments, long values) — are rendered
//! (`Format::render`) and parsed back under every standard chunking and
//! feeding API (`toolscan_testkit::chunk::invariant`, which also checks the
//! event contract and that every chunking gives the same coalesced
//! events). The calls must come back (names; arguments as JSON values), the
//! text must be the prose (plus whitespace the format writes around its
//! blocks), with no diagnostic — the schema check on
//! (`Check::Report`, with tools whose schemas type each argument as
//! generated), so every call read back also fits its tool.
//!
//! A render may refuse (`RenderError`) only for a documented reason, as
//! `tests/render_roundtrip.rs` lists them; [`refusal_reason`] says which
//! reasons hold for a response in a format, and a refusal without one is a
//! failure.
//!
//! Cases: 8 per format in `cargo test`; `PROPTEST_CASES=N` for more (the
//! same variable as `tests/properties.rs`). Failures are shrunk by proptest
//! and reported together, format by format.

use proptest::collection::{btree_map, vec};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed, TestCaseError, TestRunner};
use serde_json::{json, Map, Value};
use toolscan::render::{Call, RenderOptions};
use toolscan::{Check, Format, Options, Parser, Registry, RenderError, Tools};
use toolscan_testkit::check::{calls_of, diagnostics_of, text_of};
use toolscan_testkit::chunk::{invariant, seeded_options};

/// Closing markup of the formats (and a few of their separators): put
/// inside string values, where a format must escape them or refuse.
const CLOSERS: &[&str] = &[
    "</tool_call>",
    "</parameter>",
    "</function>",
    "</invoke>",
    "</arg_value>",
    "</tool>",
    "```",
    "<|tool_call_end|>",
    "<|tool_calls_section_end|>",
    "<｜tool▁call▁end｜>",
    "<｜tool▁calls▁end｜>",
    "[/RUN_MODULE]",
    "[/TOOL_CALLS]",
    "<end_function_call>",
    "<tool_call|>",
    "<|call|>",
    "<|im_end|>",
    "</function_calls>",
    "]",
    ")",
    "}",
    "\"}",
    "'}",
];

/// A generated response.
#[derive(Clone, Debug)]
struct Resp {
    text: String,
    calls: Vec<(String, Map<String, Value>)>,
}

fn prose() -> impl Strategy<Value = String> {
    // No markup characters, no capitals (`TOOL`, `Action`): prose that no
    // format reads as markup.
    "[a-z0-9 .,!?é日本😀\n-]{0,30}"
}

fn string_value() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => "[a-zA-Z0-9 \"'\\\\/<>&;:=,.()\\[\\]{}é日本😀\n\t-]{0,24}",
        2 => (
            "[a-z \"'\\\\]{0,6}",
            proptest::sample::select(CLOSERS),
            "[a-z \n]{0,6}"
        )
            .prop_map(|(a, c, b)| format!("{a}{c}{b}")),
        1 => Just(String::new()),
        1 => "[a-z ]{600,2000}",
    ]
}

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        4 => string_value().prop_map(Value::String),
        2 => any::<i32>().prop_map(|n| json!(n)),
        1 => any::<i64>().prop_map(|n| json!(n)),
        1 => (-4000i32..4000).prop_map(|n| json!(f64::from(n) / 8.0 + 0.125)),
        1 => any::<bool>().prop_map(Value::Bool),
        1 => Just(Value::Null),
    ]
}

fn key() -> impl Strategy<Value = String> {
    "[a-z][a-z0-9_]{0,8}"
}

fn value() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(6, 24, 4, |inner| {
        prop_oneof![
            vec(inner.clone(), 0..4).prop_map(Value::Array),
            btree_map(key(), inner, 0..4).prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn arguments() -> impl Strategy<Value = Map<String, Value>> {
    prop_oneof![
        1 => Just(Map::new()),
        5 => btree_map(key(), value(), 1..5).prop_map(|m| m.into_iter().collect()),
    ]
}

fn response() -> impl Strategy<Value = Resp> {
    (prose(), vec(("[a-z][a-z0-9_]{0,11}", arguments()), 0..4)).prop_map(|(text, calls)| {
        // Distinct names, so each call's tool has its own schema.
        let mut names: Vec<String> = Vec::new();
        let calls = calls
            .into_iter()
            .enumerate()
            .map(|(i, (mut name, args))| {
                if names.contains(&name) {
                    name = format!("{name}_{i}");
                }
                names.push(name.clone());
                (name, args)
            })
            .collect();
        Resp { text, calls }
    })
}

/// The JSON Schema type of a value as generated.
fn schema_of(v: &Value) -> Value {
    match v {
        Value::Null => json!({"type": "null"}),
        Value::Bool(_) => json!({"type": "boolean"}),
        Value::Number(n) if n.is_i64() || n.is_u64() => json!({"type": "integer"}),
        Value::Number(_) => json!({"type": "number"}),
        Value::String(_) => json!({"type": "string"}),
        Value::Array(_) => json!({"type": "array"}),
        Value::Object(_) => json!({"type": "object"}),
    }
}

/// Tools whose schemas type each argument as it was generated, every
/// argument required.
fn tools_of(r: &Resp) -> Tools {
    let tools: Vec<Value> = r
        .calls
        .iter()
        .map(|(name, args)| {
            let props: Map<String, Value> = args
                .iter()
                .map(|(k, v)| (k.clone(), schema_of(v)))
                .collect();
            let required: Vec<&String> = args.keys().collect();
            json!({"type": "function", "function": {"name": name, "parameters": {
                "type": "object", "properties": props, "required": required}}})
        })
        .collect();
    Tools::from_json(&Value::Array(tools)).expect("tools")
}

fn strings_in<'a>(v: &'a Value, out: &mut Vec<&'a str>) {
    match v {
        Value::String(s) => out.push(s),
        Value::Array(items) => items.iter().for_each(|i| strings_in(i, out)),
        Value::Object(m) => m.values().for_each(|i| strings_in(i, out)),
        _ => {}
    }
}

/// The formats whose values are raw text between tags, with nothing that
/// escapes the closing tag inside a value.
const RAW_VALUES: &[&str] = &[
    "qwen3-coder",
    "seed-oss",
    "minimax-m2",
    "glm45",
    "glm47",
    "file-glm47",
    "step3",
    "deepseek-v3.2",
    "kimi-k3",
    "xml-tool",
    "autobyteus-xml",
    "claude-xml",
    "use-tag",
];

/// The documented reasons (see `tests/render_roundtrip.rs` and
/// `docs/rendering.md`) for which `format` may refuse `r`; empty when
/// none holds.
fn refusal_reason(format: &Format, r: &Resp) -> Vec<&'static str> {
    let name = format.name();
    let mut why = Vec::new();
    let mut strings = Vec::new();
    for (_, a) in &r.calls {
        a.values().for_each(|v| strings_in(v, &mut strings));
    }
    if RAW_VALUES.contains(&name)
        && strings
            .iter()
            .any(|s| s.contains("</") || s.contains('<') || s.contains('&'))
    {
        why.push("values are raw text: markup inside one ends it or reads as markup");
    }
    if matches!(name, "autobyteus-xml" | "step3")
        && strings
            .iter()
            .any(|s| s.trim() != *s || s.contains("__START_CONTENT__"))
    {
        why.push("values are trimmed: a string with whitespace at either end cannot be written");
    }
    if name == "seed-oss"
        && strings
            .iter()
            .any(|s| s.starts_with('\n') || s.ends_with('\n'))
    {
        why.push(
            "a value is written between newlines, one of which is trimmed: a string that \
             begins or ends with a newline cannot be written",
        );
    }
    // A value as an attribute holds it: a string as it is, anything else
    // as its JSON text.
    let attribute = |v: &Value| match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    if name == "use-tag"
        && r.calls.iter().any(|(_, a)| {
            a.values()
                .map(attribute)
                .any(|t| t.contains('"') && t.contains('\''))
        })
    {
        why.push("attribute values are raw between quotes: a value holding both cannot be written");
    }
    if name == "key-value" && strings.iter().any(|s| s.contains('"') || s.contains(' ')) {
        why.push("a value is a word or a `\"…\"` string without escapes");
    }
    why
}

/// `r`'s calls as the renderer takes them.
fn render_calls(r: &Resp) -> Vec<Call> {
    r.calls
        .iter()
        .map(|(n, a)| Call::from_value(n.as_str(), &Value::Object(a.clone())).expect("object"))
        .collect()
}

/// Renders `r` in `format`, parses it back under every chunking, and
/// checks the round trip.
fn round_trip(reg: &Registry, format: &Format, r: &Resp) -> Result<(), TestCaseError> {
    let tools = tools_of(r);
    let calls = render_calls(r);
    let out = match format.render(&r.text, &calls, Some(&tools)) {
        Ok(out) => out,
        Err(e @ (RenderError::Unwritable | RenderError::TooComplex)) => {
            let why = refusal_reason(format, r);
            prop_assert!(
                !why.is_empty(),
                "refused ({e}) without a documented reason: {r:?}"
            );
            return Ok(());
        }
        Err(e) => return Err(TestCaseError::fail(format!("{e:?}: {r:?}"))),
    };
    let grammar = reg.grammar(format.name()).expect("grammar");
    let options: Options = seeded_options()
        .with_tools(tools.clone())
        .with_check_calls(Check::Report);
    let events = invariant(
        || Parser::new(grammar.clone(), options.clone()),
        out.as_bytes(),
    )
    .map_err(|e| TestCaseError::fail(format!("{e}\nrendered: {out:?}")))?;
    let want: Vec<(String, Value)> = r
        .calls
        .iter()
        .map(|(n, a)| (n.clone(), Value::Object(a.clone())))
        .collect();
    prop_assert_eq!(calls_of(&events), want, "rendered: {:?}", out);
    // What the format's templates write before the text of a call turn
    // (an empty `<think></think>`) reads back as text before it: the
    // rendering without it is the rest of the bytes.
    let unframed = RenderOptions {
        before: Some(String::new()),
        ..RenderOptions::default()
    };
    let bare = format
        .render_with(&r.text, &calls, Some(&tools), &unframed)
        .map_err(|e| TestCaseError::fail(format!("{e:?} without the frame: {r:?}")))?;
    let frame = out.strip_suffix(bare.as_str());
    prop_assert!(
        // (A response without calls is not framed.)
        frame.is_some_and(|f| f.is_empty() || !r.calls.is_empty()),
        "the frame is not a head of the rendering: {:?} against {:?}",
        out,
        bare
    );
    // (A frame may be markup in part, as Kimi K3's response frame: what
    // comes before the text is what the frame reads back as.)
    let frame = frame.unwrap_or("");
    let frame_events = invariant(
        || Parser::new(grammar.clone(), options.clone()),
        frame.as_bytes(),
    )
    .map_err(|e| TestCaseError::fail(format!("{e}\nthe frame: {frame:?}")))?;
    let frame_text = text_of(&frame_events);
    let text = text_of(&events);
    prop_assert!(
        text.strip_prefix(frame_text.as_str())
            .is_some_and(|t| t.starts_with(&r.text) && t[r.text.len()..].trim().is_empty()),
        "text {:?}, want {:?} after {:?}; rendered {:?}",
        text,
        r.text,
        frame,
        out
    );
    prop_assert!(
        diagnostics_of(&events).is_empty(),
        "{:?}; rendered {:?}",
        diagnostics_of(&events),
        out
    );
    Ok(())
}

/// 8 cases per format unless `PROPTEST_CASES` says otherwise.
fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(8)
}

/// The generator's seed: fixed, so that `cargo test` (and CI) runs the
/// same cases every time, unless `PROPTEST_RNG_SEED` names another (set it,
/// with a larger `PROPTEST_CASES`, to explore other inputs).
fn seed(base: &Config) -> RngSeed {
    match std::env::var_os("PROPTEST_RNG_SEED") {
        Some(_) => base.rng_seed,
        None => RngSeed::Fixed(0x7001_5ca7),
    }
}

/// The formats: every built-in, and glm47 described in a file.
fn registry() -> Registry {
    let mut reg = Registry::builtin();
    let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/formats/glm47.json");
    reg.register_file(&file).expect("the example format file");
    reg
}

/// Runs the property for the formats whose place in the registry is
/// `part` modulo `of` (the formats are split over several tests so they
/// run in parallel); all failures are reported together.
fn run_part(part: usize, of: usize) {
    let reg = registry();
    let mut failures = Vec::new();
    for (i, format) in reg.formats().iter().enumerate() {
        if i % of != part || format.name() == "auto" {
            continue;
        }
        let base = Config::with_cases(cases());
        let mut runner = TestRunner::new(Config {
            failure_persistence: None,
            max_shrink_iters: 2048,
            rng_seed: seed(&base),
            ..base
        });
        if let Err(e) = runner.run(&response(), |r| round_trip(&reg, format, &r)) {
            failures.push(format!("{}: {e}", format.name()));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn round_trip_part_0() {
    run_part(0, 4);
}

#[test]
fn round_trip_part_1() {
    run_part(1, 4);
}

#[test]
fn round_trip_part_2() {
    run_part(2, 4);
}

#[test]
fn round_trip_part_3() {
    run_part(3, 4);
}

/// Found by the property: two `key-value` calls of a few values each are
/// refused with `TooComplex`. Each value may be written three ways (quoted,
/// JSON, a bare word) and a choice is only judged when the whole response
/// is read back, so the read-backs (64 at most) run out before a path that
/// reads back is found. Fixed in the walk (`write_value`): a spelling
/// whose value holds its own closer (a `"` inside `"…"`) is refused as it
/// is written, so no read-back is spent on it and the choices of one value
/// no longer multiply with every other's.
#[test]
fn key_value_calls_of_several_values_render() {
    let r = Resp {
        text: String::new(),
        calls: vec![
            (
                "a".into(),
                json!({"a": {"a": []}, "a_": 0, "aa": [], "e": 0})
                    .as_object()
                    .cloned()
                    .unwrap_or_default(),
            ),
            (
                "a_1".into(),
                json!({"a": "", "a0": 0, "aa": 0})
                    .as_object()
                    .cloned()
                    .unwrap_or_default(),
            ),
        ],
    };
    assert!(renders_in("key-value", &r));
}

/// Found by the property: `use-tag` refuses (`TooComplex`) three calls
/// when one holds a long string (600 bytes, in an object value): the
/// search over the attribute quotes of every value runs out of steps.
/// Fixed as the test above: an attribute quote the value holds is refused
/// as the value is written.
#[test]
fn use_tag_long_string_in_an_object_renders() {
    // The value proptest shrank to (600 bytes).
    let long = " aaa   aaa a a      aaa aaa a aa   a   a a aa a  a aa a   aa aa aa   aaaaaaa a a   aaaaa a aa  aaaa   a a a     aa a  a a a   a aaaa      aa   a   aa  a    a  aaa aaaaaa a a   a aaaaaa aaa a  aaa   a  a aa a     aa aaaa aa   a   aaa aa  a  aa a    a a  aaaaa a  aa aaa aaaaaaa aaaa  a aaaa a  aa  a  a    a  aaaaa aaaa    aa aa a aaa aa a     aaa   a aaa a  aaaa aaa aaaaaa     aaaaa  a c gvteo   o  wtevm xix  tjh ml  dv bs f nu yag dpjw   j y  qikb   czmyze  p u  xhst   ssrv paa  w    fvn fgau fc    o    t  a   h f t ul  hqv  u q   fcht gsz r pciswz d  d tg y zrb ryw s b f  rmaxf t  zugmf quns  ";
    let r = Resp {
        text: String::new(),
        calls: vec![
            (
                "a".into(),
                json!({"a": {"a": long}})
                    .as_object()
                    .cloned()
                    .unwrap_or_default(),
            ),
            (
                "t1".into(),
                json!({"g8_a3_": [], "u_28_z6di": {}})
                    .as_object()
                    .cloned()
                    .unwrap_or_default(),
            ),
            (
                "m".into(),
                json!({"a5": {"w5md_0e0": "é\"{eé8t ém日h/\"r1\t日o"},
                   "gt4k59": {"ms1l2k7__": 1978332013}, "sp": []})
                .as_object()
                .cloned()
                .unwrap_or_default(),
            ),
        ],
    };
    assert!(renders_in("use-tag", &r));
}

/// Whether the built-in format `name` renders `r`'s calls (with the
/// tools typed from them).
fn renders_in(name: &str, r: &Resp) -> bool {
    let tools = tools_of(r);
    let calls = render_calls(r);
    let reg = Registry::builtin();
    let format = reg.get(name).expect("built-in");
    format.render("", &calls, Some(&tools)).is_ok()
}

#[test]
fn every_format_is_covered() {
    let reg = registry();
    let n = reg.formats().iter().filter(|f| f.name() != "auto").count();
    assert!(n >= 47, "{n} formats");
    assert!(reg.get("file-glm47").is_some());
}
