//! Parameter-style formats at their edges: values whose closing tag is
//! missing, containers inside lists, guarded content, and a string value
//! that streams while it arrives. Every input runs whole, byte by byte and
//! in random chunks through every feeding API (`chunk::invariant`), which
//! must agree and keep the event contract.

use serde_json::{json, Value};
use toolscan::{DiagnosticKind, Event, Options, Tools};
use toolscan_testkit::check::diagnostics_of;
use toolscan_testkit::chunk;

fn run(format: &str, opts: Options, input: &str) -> Vec<Event> {
    chunk::invariant(|| chunk::parser(format, opts.clone()), input.as_bytes())
        .unwrap_or_else(|e| panic!("{format}: {e}\ninput: {input:?}"))
}

use toolscan_testkit::check::calls_of as calls;

fn kinds(events: &[Event]) -> Vec<DiagnosticKind> {
    diagnostics_of(events).into_iter().map(|(k, _)| k).collect()
}

#[test]
fn an_unclosed_value_ends_at_the_call_closer_that_ends_the_stream() {
    for (format, input) in [
        (
            "glm45",
            "<tool_call>f<arg_key>a</arg_key><arg_value>x</tool_call>",
        ),
        (
            "claude-xml",
            "<invoke name=\"f\"><parameter name=\"a\">x</invoke>",
        ),
        (
            "minimax-m2",
            "<minimax:tool_call><invoke name=\"f\"><parameter name=\"a\">x</invoke>",
        ),
        (
            "qwen3-coder",
            "<tool_call>\n<function=f>\n<parameter=a>\nx\n</function>\n</tool_call>",
        ),
    ] {
        let ev = run(format, chunk::seeded_options(), input);
        assert_eq!(
            calls(&ev),
            vec![("f".into(), json!({"a": "x"}))],
            "{format}"
        );
        assert_eq!(kinds(&ev), vec![DiagnosticKind::Unclosed], "{format}");
    }
}

/// Qwen3-Coder and Seed-OSS values that miss their `</parameter>` at the
/// end of the stream end at the last `</function>`, else at the block's
/// closer, and a value that lost `</function>` too still makes a call.
#[test]
fn an_unclosed_value_ends_at_the_last_closer_at_the_end_of_the_stream() {
    for (format, input, value) in [
        (
            "qwen3-coder",
            "<tool_call>\n<function=f>\n<parameter=a>\nx\n</tool_call>",
            "x",
        ),
        (
            "seed-oss",
            "<seed:tool_call><function=f><parameter=a>x</seed:tool_call>",
            "x",
        ),
    ] {
        let input = format!("Text. {input}");
        let ev = run(format, chunk::seeded_options(), &input);
        assert_eq!(
            calls(&ev),
            vec![("f".into(), json!({ "a": value }))],
            "{input:?}"
        );
        assert_eq!(kinds(&ev), vec![DiagnosticKind::Unclosed], "{input:?}");
        assert_eq!(toolscan_testkit::check::text_of(&ev), "Text. ", "{input:?}");
    }
}

/// A value that never closed and holds a call's closer before the one at
/// the end holds markup of the format (issue 29, item 2): it is not ended
/// there (that would make an argument up); the call is text, with an
/// `unclosed` diagnostic.
#[test]
fn an_unclosed_value_holding_a_call_closer_is_text() {
    for input in [
        "<tool_call>\n<function=f>\n<parameter=a>\nx </function> y\n</function>\n</tool_call>",
        "<tool_call>\n<function=f>\n<parameter=a>\nx </tool_call> y\n</function>\n</tool_call>",
    ] {
        let input = format!("Text. {input}");
        let ev = run("qwen3-coder", chunk::seeded_options(), &input);
        assert_eq!(calls(&ev), vec![], "{input:?}");
        assert_eq!(kinds(&ev), vec![DiagnosticKind::Unclosed], "{input:?}");
        assert_eq!(toolscan_testkit::check::text_of(&ev), input, "{input:?}");
    }
}

#[test]
fn a_call_closer_inside_a_closed_value_is_value() {
    let input = "<tool_call>\n<function=f>\n<parameter=a>\nx\n</function>\n</tool_call>\ny\n\
                 </parameter>\n</function>\n</tool_call>";
    let ev = run("qwen3-coder", chunk::seeded_options(), input);
    assert_eq!(
        calls(&ev),
        vec![("f".into(), json!({"a": "x\n</function>\n</tool_call>\ny"}))]
    );
    assert!(kinds(&ev).is_empty());
}

#[test]
fn items_hold_objects_and_lists() {
    let input = "<tool name=\"t\"><arguments><arg name=\"l\"><item><arg name=\"x\">1</arg></item>\
                 <item><item>a</item></item></arg></arguments></tool>";
    let ev = run("autobyteus-xml", chunk::seeded_options(), input);
    assert_eq!(
        calls(&ev),
        vec![("t".into(), json!({"l": [{"x": 1}, ["a"]]}))]
    );
}

#[test]
fn guarded_content_is_verbatim() {
    let input = "<tool name=\"t\"><arguments><arg name=\"c\">  __START_CONTENT__ a &amp; b</arg> \
                 __END_CONTENT__ </arg></arguments></tool>";
    let ev = run("autobyteus-xml", chunk::seeded_options(), input);
    assert_eq!(
        calls(&ev),
        vec![("t".into(), json!({"c": " a &amp; b</arg> "}))]
    );
}

#[test]
fn a_string_value_streams_while_it_arrives() {
    let tools = Tools::from_json(&json!([{"type": "function", "function": {"name": "w",
        "parameters": {"type": "object", "properties": {"body": {"type": "string"}}}}}]))
    .expect("tools");
    let body = "line \"quoted\" <b> & ü\n".repeat(200);
    let input = format!("<tool_call>\n<function=w>\n<parameter=body>\n{body}\n</parameter>\n</function>\n</tool_call>");
    let value_at = input.find("<parameter=body>\n").expect("tag") + "<parameter=body>\n".len();
    let mut p = chunk::parser("qwen3-coder", chunk::seeded_options().with_tools(tools));
    let mut args = String::new();
    let mut first = None;
    let mut fed = 0;
    for piece in input.as_bytes().chunks(4) {
        fed += piece.len();
        for e in p.feed(piece) {
            if let Event::ToolCallArgs { delta, .. } = e {
                args.push_str(&delta);
                if first.is_none() && args.len() > "{\"body\":\"".len() {
                    first = Some(fed);
                }
            }
        }
    }
    let first = first.expect("value bytes streamed");
    assert!(
        first <= value_at + 64,
        "first value delta at byte {first}, value at {value_at}"
    );
    let end = p.finish();
    let args: Value = serde_json::from_str(&args).expect("deltas are the arguments");
    assert_eq!(args, json!({"body": body}));
    assert!(end.iter().any(|e| matches!(e, Event::Done { .. })));
}

#[test]
fn the_schema_types_values_and_flags_what_it_does_not_know() {
    let tools = Tools::from_json(&json!([{"type": "function", "function": {"name": "c",
        "parameters": {"type": "object", "properties": {
            "n": {"type": "integer"}, "zip": {"type": "string"},
            "label": {"type": ["string", "null"]}, "o": {"type": "object"}}}}}]))
    .expect("tools");
    let input = "<tool_call>c<arg_key>n</arg_key><arg_value>abc</arg_value>\
                 <arg_key>zip</arg_key><arg_value>007</arg_value>\
                 <arg_key>label</arg_key><arg_value>None</arg_value>\
                 <arg_key>o</arg_key><arg_value>{'a': True}</arg_value>\
                 <arg_key>extra</arg_key><arg_value>12</arg_value></tool_call>";
    let ev = run("glm47", chunk::seeded_options().with_tools(tools), input);
    assert_eq!(
        calls(&ev),
        vec![(
            "c".into(),
            json!({"n": "abc", "zip": "007", "label": null, "o": {"a": true}, "extra": 12})
        )]
    );
    assert_eq!(
        kinds(&ev),
        vec![
            DiagnosticKind::TypeMismatch,
            DiagnosticKind::UnknownParameter
        ]
    );
}
