//! Rendering, checked by reading back: for every built-in format, a
//! handful of responses (unicode and escapes, markup inside a string
//! value, nested values, empty arguments, several calls) are rendered
//! with `Format::render` and parsed again under every standard chunking
//! and feeding API (`toolscan_testkit::chunk::events_everywhere`): the
//! text and the calls (arguments as JSON values) must come back. A
//! response a format cannot hold must be refused with a `RenderError`,
//! never rendered wrong; the refusals are listed below with their reason.

use serde_json::{json, Value};
use toolscan::{
    render::{Call, RenderOptions},
    Options, Registry, RenderError, Tools,
};
use toolscan_testkit::check::{calls_of, text_of};
use toolscan_testkit::chunk::{events_everywhere, seeded_options};

/// A response to render: its name, text, and calls.
struct Case {
    name: &'static str,
    text: &'static str,
    calls: Vec<Call>,
}

fn cases() -> Vec<Case> {
    let call = |name: &str, args: Value| Call::from_value(name, &args).expect("an object");
    vec![
        Case {
            name: "one call",
            text: "Let me check.\n",
            calls: vec![call(
                "get_weather",
                json!({"city": "Zürich", "unit": "celsius"}),
            )],
        },
        Case {
            name: "unicode and escapes",
            text: "",
            calls: vec![call(
                "write_file",
                json!({"path": "notes/日本語 😀.txt", "content": "say \"hi\" & 'bye' \\ back\n\ttabbed"}),
            )],
        },
        Case {
            name: "closing markup inside a string value",
            text: "",
            calls: vec![call(
                "write_file",
                json!({"content": "</tool_call></parameter></function></invoke>```<|tool_call_end|>[/RUN_MODULE]<end_function_call><tool_call|>"}),
            )],
        },
        Case {
            name: "nested values",
            text: "",
            calls: vec![call(
                "configure",
                json!({"retries": 3, "ratio": 0.5, "on": true, "label": null, "limits": {"deep": [1, {"x": "y"}]}}),
            )],
        },
        Case {
            name: "empty arguments",
            text: "",
            calls: vec![call("get_time", json!({}))],
        },
        Case {
            name: "two calls",
            text: "Checking both.\n",
            calls: vec![
                call("get_weather", json!({"city": "Paris"})),
                call("get_time", json!({"zone": "CET"})),
            ],
        },
    ]
}

/// The tools of the cases: they type raw parameter values as the calls
/// hold them.
fn tools() -> Tools {
    Tools::from_json(&json!([
        {"name": "get_weather", "parameters": {"type": "object", "properties": {
            "city": {"type": "string"}, "unit": {"type": "string"}}}},
        {"name": "write_file", "parameters": {"type": "object", "properties": {
            "path": {"type": "string"}, "content": {"type": "string"}}}},
        {"name": "configure", "parameters": {"type": "object", "properties": {
            "retries": {"type": "integer"}, "ratio": {"type": "number"},
            "on": {"type": "boolean"}, "label": {"type": ["string", "null"]},
            "limits": {"type": "object"}}}},
        {"name": "get_time", "parameters": {"type": "object", "properties": {
            "zone": {"type": "string"}}}}
    ]))
    .expect("tools")
}

/// Responses a format refuses, and why: (format, case, reason).
const REFUSED: &[(&str, &str, &str)] = &[
    // A closing tag inside a raw value counts only where the format's
    // structure follows it: minimax-m2's `</parameter>` is followed by a
    // `</function>` it never writes, so the value reads back whole; in
    // these two, `</parameter></function>` is their own structure.
    (
        "qwen3-coder",
        "closing markup inside a string value",
        "values are raw text: `</parameter>` followed by `</function>` inside one ends it, \
         and nothing escapes it",
    ),
    (
        "seed-oss",
        "closing markup inside a string value",
        "values are raw text: `</parameter>` followed by `</function>` inside one ends it",
    ),
    (
        "use-tag",
        "unicode and escapes",
        "attribute values are raw between quotes: a value holding both quotes cannot be written",
    ),
    (
        "key-value",
        "unicode and escapes",
        "a value is a word, a `\"…\"` string without escapes or JSON: a string holding a quote \
         and spaces cannot be written",
    ),
];

fn refused(format: &str, case: &str) -> Option<&'static str> {
    REFUSED
        .iter()
        .find(|(f, c, _)| *f == format && *c == case)
        .map(|(_, _, why)| *why)
}

#[test]
fn every_format_reads_back_what_it_renders_under_every_chunking() {
    let reg = Registry::builtin();
    let tools = tools();
    let options: Options = seeded_options().with_tools(tools.clone());
    let mut report = Vec::new();
    let mut failures = Vec::new();
    for format in reg.formats() {
        let name = format.name();
        for case in cases() {
            let rendered = format.render(case.text, &case.calls, Some(&tools));
            let out = match rendered {
                Ok(out) => out,
                Err(e) => {
                    match refused(name, case.name) {
                        Some(why) => {
                            report.push(format!("{name} [{}]: refused ({why})", case.name))
                        }
                        None => failures.push(format!("{name} [{}]: refused: {e}", case.name)),
                    }
                    assert!(
                        matches!(e, RenderError::Unwritable | RenderError::TooComplex),
                        "{name} [{}]: {e:?}",
                        case.name
                    );
                    continue;
                }
            };
            if let Some(why) = refused(name, case.name) {
                failures.push(format!(
                    "{name} [{}]: rendered although listed as refused ({why}): {out:?}",
                    case.name
                ));
            }
            let events = events_everywhere(name, &options, &out);
            let want: Vec<(String, Value)> = case
                .calls
                .iter()
                .map(|c| {
                    (
                        c.name.clone(),
                        Value::Object(c.arguments.parse().expect("JSON")),
                    )
                })
                .collect();
            // What the format's templates write before the text of a call
            // turn (an empty `<think></think>`) reads back as it reads on
            // its own (as text, or nothing where it is markup, as Kimi K3's
            // response frame) before the text: the rendering without it is
            // the rest of the bytes.
            let unframed = RenderOptions {
                before: Some(String::new()),
                ..RenderOptions::default()
            };
            let frame = format
                .render_with(case.text, &case.calls, Some(&tools), &unframed)
                .ok()
                .and_then(|bare| out.strip_suffix(bare.as_str()).map(str::to_owned))
                .map(|frame| text_of(&events_everywhere(name, &options, &frame)));
            let text = text_of(&events);
            let after_frame = frame.as_deref().and_then(|f| text.strip_prefix(f));
            if calls_of(&events) != want
                || !after_frame.is_some_and(|t| {
                    t.starts_with(case.text) && t[case.text.len()..].trim().is_empty()
                })
            {
                failures.push(format!(
                    "{name} [{}]: rendered {out:?}\n  read back text {text:?}, calls {:?}",
                    case.name,
                    calls_of(&events)
                ));
            }
        }
    }
    for line in &report {
        eprintln!("{line}");
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_rendering_page_example_writes_what_it_shows() {
    let registry = Registry::builtin();
    let qwen = registry.get("qwen3-coder").expect("built-in");
    let call = Call::from_value("get_weather", &json!({"city": "Zürich"})).expect("an object");
    assert_eq!(
        qwen.render("", &[call], None).expect("renders"),
        "<tool_call>\n<function=get_weather>\n<parameter=city>\nZürich\n</parameter>\n</function>\n</tool_call>"
    );
}

#[test]
fn a_call_needs_an_arguments_object_and_a_name() {
    assert!(Call::from_value("f", &json!([1])).is_none());
    let hermes = Registry::builtin().get("hermes").expect("built-in").clone();
    let ok = Call::from_value("g", &json!({})).expect("an object");
    let unnamed = Call::from_value("", &json!({})).expect("an object");
    assert_eq!(
        hermes.render("", &[ok, unnamed], None),
        Err(RenderError::EmptyName(1))
    );
}

/// Between calls and around them, formats write what their templates
/// write: Kimi K3 numbers its calls (`index="1"`), DeepSeek V3 writes
/// R1's newline between two calls, Llama 3 JSON writes Llama 4's calls one
/// after another and its newline after them. Each reads back.
#[test]
fn calls_are_spelt_between_and_around_as_the_templates_write_them() {
    let call = |name: &str, args: Value| Call::from_value(name, &args).expect("an object");
    let calls = vec![
        call("get_weather", json!({"city": "Zürich"})),
        call("search", json!({"query": "météo"})),
    ];
    let registry = Registry::builtin();
    let render = |format: &str| {
        let f = registry.get(format).expect("built in");
        let out = f.render("", &calls, None).expect("renders");
        let grammar = registry.grammar(format).expect("built in");
        let back = toolscan::parse(grammar, Options::default(), out.as_bytes());
        let names: Vec<&str> = back.tool_calls.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["get_weather", "search"], "{format}: {out:?}");
        out
    };
    let kimi = render("kimi-k3");
    assert!(
        kimi.contains("call tool=\"get_weather\" index=\"1\"<|sep|>"),
        "{kimi:?}"
    );
    assert!(
        kimi.contains("call tool=\"search\" index=\"2\"<|sep|>"),
        "{kimi:?}"
    );
    let deepseek = render("deepseek-v3");
    assert!(
        deepseek.contains("```<｜tool▁call▁end｜>\n<｜tool▁call▁begin｜>function"),
        "{deepseek:?}"
    );
    assert!(
        deepseek.ends_with("```<｜tool▁call▁end｜><｜tool▁calls▁end｜>"),
        "{deepseek:?}"
    );
    assert_eq!(
        render("llama3-json"),
        "{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Zürich\"}}\
         {\"name\": \"search\", \"parameters\": {\"query\": \"météo\"}}\n"
    );
}

/// A frame that is markup (Kimi K3's response frame) is written around the
/// text, and the text must still read back as it was given: a text that
/// itself holds the frame's markup, which would read back as nothing, is
/// refused rather than rendered.
#[test]
fn a_markup_frame_reads_back_around_the_text_and_text_holding_it_is_refused() {
    let kimi = Registry::builtin()
        .get("kimi-k3")
        .expect("built-in")
        .clone();
    let call = Call::from_value("get_weather", &json!({"city": "Zürich"})).expect("an object");
    let out = kimi
        .render("Let me check.", std::slice::from_ref(&call), None)
        .expect("renders");
    assert!(
        out.starts_with(
            "<|close|>think<|sep|><|open|>response<|sep|>Let me check.<|close|>response<|sep|><|open|>tools<|sep|>"
        ),
        "{out:?}"
    );
    assert_eq!(
        kimi.render("a<|close|>response<|sep|>b", &[call], None),
        Err(RenderError::Unwritable)
    );
}
