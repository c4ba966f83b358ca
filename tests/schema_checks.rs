//! The schema check of completed calls (`Options::check_calls`): a table of
//! tools × calls × the diagnostic kinds each call gets, then each kind in
//! a format of its own notation, what `Check::Reject` does, and where the
//! diagnostics go (right before the call's `tool_call_end`, filed under the
//! call in `Response`). Every input runs under every chunking and feeding
//! API of the test kit.

use serde_json::{json, Value};
use toolscan::{Check, DiagnosticKind, Event, Options, Response, Tools};
use toolscan_testkit::check::{calls_of, text_of};
use toolscan_testkit::chunk;
use toolscan_testkit::expect::kinds;

use DiagnosticKind::{
    MissingParameter as Missing, NotAllowed, NotInEnum as Enum, UnknownTool as Unknown,
    WrongType as Type,
};

/// The tools of the table: the weather tool of OpenAI's guide, a tool whose
/// parameters nest an object and an array of objects, one with a type
/// list, one without a parameters schema.
fn tools() -> Tools {
    Tools::from_json(&json!([
        {"type": "function", "function": {"name": "get_weather", "parameters": {
            "type": "object", "required": ["location"],
            "properties": {
                "location": {"type": "string"},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
                "days": {"type": "integer"}}}}},
        {"type": "function", "function": {"name": "book", "parameters": {
            "type": "object", "required": ["guest", "rooms"],
            "properties": {
                "guest": {"type": "object", "required": ["name"], "properties": {
                    "name": {"type": "string"}, "age": {"type": "integer"}}},
                "rooms": {"type": "array", "items": {"type": "object",
                    "required": ["kind"], "properties": {
                        "kind": {"enum": ["single", "double"]},
                        "price": {"type": "number"}}}},
                "note": {"type": ["string", "null"]}}}}},
        {"type": "function", "function": {"name": "now"}}
    ]))
    .expect("tools")
}

fn options(check: Check) -> Options {
    chunk::seeded_options()
        .with_tools(tools())
        .with_check_calls(check)
}

fn hermes(name: &str, args: &Value) -> String {
    format!("<tool_call>{{\"name\": \"{name}\", \"arguments\": {args}}}</tool_call>")
}

/// Each call of the table, with the kinds its check gives, in order.
#[test]
fn table_of_tools_calls_and_diagnostic_kinds() {
    let table: &[(&str, Value, &[DiagnosticKind])] = &[
        // fits
        ("get_weather", json!({"location": "Paris"}), &[]),
        (
            "get_weather",
            json!({"location": "Paris", "unit": "celsius", "days": 3}),
            &[],
        ),
        // an integer written with a zero fraction is an integer
        (
            "get_weather",
            json!({"location": "Paris", "days": 3.0}),
            &[],
        ),
        // a parameter the schema does not list is not this check's concern
        ("get_weather", json!({"location": "Paris", "extra": 1}), &[]),
        ("now", json!({}), &[]),
        ("now", json!({"anything": [1, {"x": null}]}), &[]),
        // unknown tool
        ("get_time", json!({}), &[Unknown]),
        // missing required
        ("get_weather", json!({}), &[Missing]),
        ("get_weather", json!({"unit": "celsius"}), &[Missing]),
        // wrong type: string for integer, number for integer, integer for
        // string, null where null is not allowed
        (
            "get_weather",
            json!({"location": "Paris", "days": "3"}),
            &[Type],
        ),
        (
            "get_weather",
            json!({"location": "Paris", "days": 2.5}),
            &[Type],
        ),
        ("get_weather", json!({"location": 75}), &[Type]),
        ("get_weather", json!({"location": null}), &[Type]),
        // outside the enum (a wrong type is only a wrong type)
        (
            "get_weather",
            json!({"location": "Paris", "unit": "kelvin"}),
            &[Enum],
        ),
        (
            "get_weather",
            json!({"location": "Paris", "unit": 1}),
            &[Type],
        ),
        // several problems, in schema order: required first
        (
            "get_weather",
            json!({"unit": "kelvin", "days": "x"}),
            &[Missing, Type, Enum],
        ),
        // nested objects and array items
        (
            "book",
            json!({"guest": {"name": "Ann", "age": 30},
                   "rooms": [{"kind": "single", "price": 80.5}, {"kind": "double", "price": 120}],
                   "note": null}),
            &[],
        ),
        (
            "book",
            json!({"guest": {"age": 30}, "rooms": []}),
            &[Missing],
        ),
        (
            "book",
            json!({"guest": {"name": "Ann", "age": "30"}, "rooms": []}),
            &[Type],
        ),
        ("book", json!({"guest": "Ann", "rooms": []}), &[Type]),
        (
            "book",
            json!({"guest": {"name": "Ann"}, "rooms": {"kind": "single"}}),
            &[Type],
        ),
        (
            "book",
            json!({"guest": {"name": "Ann"}, "rooms": [{"kind": "suite"}, {"price": "1"}]}),
            &[Enum, Missing, Type],
        ),
        // a list of types
        (
            "book",
            json!({"guest": {"name": "A"}, "rooms": [], "note": "x"}),
            &[],
        ),
        (
            "book",
            json!({"guest": {"name": "A"}, "rooms": [], "note": 1}),
            &[Type],
        ),
    ];
    for (name, args, want) in table {
        let input = hermes(name, args);
        let ev = chunk::events_everywhere("hermes", &options(Check::Report), &input);
        let mut got = kinds(&ev);
        let mut want = want.to_vec();
        // The order of problems within one call follows the arguments'
        // keys; compare as sets where there are several.
        got.sort_by_key(|k| k.as_str());
        want.sort_by_key(|k| k.as_str());
        assert_eq!(got, want, "{input}");
        // Report: the call is delivered as written.
        assert_eq!(calls_of(&ev), [(name.to_string(), args.clone())], "{input}");
        // Off: nothing but what the parser says anyway (an unknown tool).
        let ev = chunk::events_everywhere("hermes", &options(Check::Off), &input);
        let off: Vec<_> = kinds(&ev);
        let expect_off: Vec<_> = want.iter().copied().filter(|k| *k == Unknown).collect();
        assert_eq!(off, expect_off, "{input}");
    }
}

/// The diagnostics of a call come right before its `tool_call_end`, in the
/// feed that completes it, and `Response` files them under the call; the
/// next call's are its own.
#[test]
fn diagnostics_come_right_before_the_end_and_are_filed_under_the_call() {
    let input = format!(
        "{} then {}",
        hermes("get_weather", &json!({"unit": "kelvin"})),
        hermes("get_weather", &json!({"location": "Oslo"}))
    );
    let ev = chunk::events_everywhere("hermes", &options(Check::Report), &input);
    let end = ev
        .iter()
        .position(|e| matches!(e, Event::ToolCallEnd { .. }))
        .expect("end");
    assert!(
        matches!(&ev[end - 1], Event::Diagnostic(d) if d.kind == Enum)
            && matches!(&ev[end - 2], Event::Diagnostic(d) if d.kind == Missing),
        "{ev:?}"
    );
    let r = Response::from_events(&ev);
    let filed: Vec<Vec<DiagnosticKind>> = r
        .tool_calls
        .iter()
        .map(|c| c.diagnostics.iter().map(|d| d.kind).collect())
        .collect();
    assert_eq!(filed, [vec![Missing, Enum], vec![]]);
    assert_eq!(r.diagnostics.len(), 2);
    // Serialised under the call only when there are some.
    let json = serde_json::to_value(&r).expect("json");
    assert_eq!(
        json["tool_calls"][0]["diagnostics"][0]["kind"],
        "missing_parameter"
    );
    assert!(json["tool_calls"][1].get("diagnostics").is_none());

    // The call's last byte completes it, with its diagnostics, in one feed.
    let one = hermes("get_time", &json!({}));
    let (head, last) = one.split_at(one.len() - 1);
    let mut p = chunk::parser("hermes", options(Check::Report));
    let first = p.feed(head.as_bytes());
    assert!(!first
        .iter()
        .any(|e| matches!(e, Event::ToolCallEnd { .. } | Event::Diagnostic(_))));
    let then = p.feed(last.as_bytes());
    assert!(
        matches!(&then[..], [Event::Diagnostic(d), Event::ToolCallEnd { .. }] if d.kind == Unknown),
        "{then:?}"
    );
}

/// Each kind, in a format of another notation: an unknown tool in a
/// Mistral list, a missing parameter in Python-call notation, a wrong type
/// in Qwen3-Coder's XML parameters, a value outside the enum in Llama 3's
/// bare JSON.
#[test]
fn each_kind_in_a_real_format() {
    let cases: &[(&str, &str, DiagnosticKind)] = &[
        (
            "mistral",
            "[TOOL_CALLS][{\"name\": \"get_time\", \"arguments\": {}}]",
            Unknown,
        ),
        ("pythonic", "[get_weather(unit='celsius')]", Missing),
        (
            "qwen3-coder",
            "<tool_call>\n<function=get_weather>\n<parameter=location>\nParis\n</parameter>\n\
             <parameter=days>\n[1, 2]\n</parameter>\n</function>\n</tool_call>",
            Type,
        ),
        (
            "llama3-json",
            "{\"name\": \"get_weather\", \"parameters\": {\"location\": \"Rome\", \"unit\": \"kelvin\"}}",
            Enum,
        ),
    ];
    for &(format, input, kind) in cases {
        let ev = chunk::events_everywhere(format, &options(Check::Report), input);
        assert_eq!(calls_of(&ev).len(), 1, "{format}: {ev:?}");
        assert!(kinds(&ev).contains(&kind), "{format}: {:?}", kinds(&ev));
        let r = Response::from_events(&ev);
        assert!(
            r.tool_calls[0].diagnostics.iter().any(|d| d.kind == kind),
            "{format}: {r:?}"
        );

        // Reject: no call; its bytes are text, after the diagnostics and
        // a `not_allowed`.
        let ev = chunk::events_everywhere(format, &options(Check::Reject), input);
        assert!(calls_of(&ev).is_empty(), "{format}: {ev:?}");
        assert_eq!(text_of(&ev), input, "{format}");
        let k = kinds(&ev);
        assert!(
            k.contains(&kind) && k.last() == Some(&NotAllowed),
            "{format}: {k:?}"
        );
    }
}

/// `Check::Reject` in a group of calls: the call that fails is text, the
/// others go through.
#[test]
fn reject_keeps_the_other_calls_of_a_group() {
    let input = "[TOOL_CALLS][{\"name\": \"now\", \"arguments\": {}}, \
                 {\"name\": \"get_weather\", \"arguments\": {\"days\": 1}}, \
                 {\"name\": \"get_weather\", \"arguments\": {\"location\": \"Lima\"}}]";
    let ev = chunk::events_everywhere("mistral", &options(Check::Reject), input);
    let names: Vec<String> = calls_of(&ev).into_iter().map(|(n, _)| n).collect();
    assert_eq!(names, ["now", "get_weather"]);
    assert_eq!(
        calls_of(&ev)[1].1,
        json!({"location": "Lima"}),
        "the call that fits"
    );
    assert_eq!(kinds(&ev), [Missing, NotAllowed]);
    assert!(text_of(&ev).contains("\"days\": 1"), "{ev:?}");
}

/// Without a tools list there is nothing to check against.
#[test]
fn without_tools_nothing_is_checked() {
    let input = hermes("anything", &json!({"x": 1}));
    let o = chunk::seeded_options().with_check_calls(Check::Reject);
    let ev = chunk::events_everywhere("hermes", &o, &input);
    assert_eq!(calls_of(&ev).len(), 1);
    assert!(kinds(&ev).is_empty());
}

/// A call with many wrong items gets at most 16 diagnostics.
#[test]
fn problems_per_call_are_bounded() {
    let rooms: Vec<Value> = (0..100).map(|_| json!({"kind": "suite"})).collect();
    let input = hermes("book", &json!({"guest": {"name": "A"}, "rooms": rooms}));
    let ev = chunk::events_everywhere("hermes", &options(Check::Report), &input);
    assert_eq!(kinds(&ev).len(), 16);
}
