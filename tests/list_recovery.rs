//! Lists of calls recover after a bad element (issue 15): the element is
//! text with one diagnostic, the calls before it stay dispatched, and the
//! element after it is read — in every format whose calls come as a list.
//!
//! What is text: the failed element with the separator before it (from the
//! end of the call before it; for a first element, from the block's start,
//! its marker included). The separator after it, and the list's end, go
//! with the next call.
//!
//! Every input runs whole, byte by byte and in random chunks through every
//! feeding API (`chunk::invariant`), which must agree and keep the event
//! contract (nothing lost, earliest dispatch).

use serde_json::{json, Value};
use toolscan::{DiagnosticKind, Event};
use toolscan_testkit::check::{calls_of as calls, diagnostics_of, text_of as text};
use toolscan_testkit::chunk;

fn run(format: &str, input: &str) -> Vec<Event> {
    chunk::invariant(
        || chunk::parser(format, chunk::seeded_options()),
        input.as_bytes(),
    )
    .unwrap_or_else(|e| panic!("{format}: {e}\ninput: {input:?}"))
}

fn kinds(events: &[Event]) -> Vec<DiagnosticKind> {
    diagnostics_of(events).into_iter().map(|(k, _)| k).collect()
}

fn call(name: &str, args: Value) -> (String, Value) {
    (name.to_string(), args)
}

/// `input` under each of `formats` makes exactly `want`, leaves `text` as
/// text and reports these diagnostics.
fn expect(
    formats: &[&str],
    input: &str,
    want: &[(String, Value)],
    text_left: &str,
    diags: &[DiagnosticKind],
) {
    for format in formats {
        let ev = run(format, input);
        assert_eq!(calls(&ev), want, "{format}: calls of {input:?}");
        assert_eq!(text(&ev), text_left, "{format}: text of {input:?}");
        assert_eq!(kinds(&ev), diags, "{format}: diagnostics of {input:?}");
    }
}

const MALFORMED: &[DiagnosticKind] = &[DiagnosticKind::Malformed];

fn two_good() -> Vec<(String, Value)> {
    vec![
        call("get_time", json!({})),
        call("get_weather", json!({"city": "Paris"})),
    ]
}

/// `{"name", "arguments"}` lists: (formats, list opener, list closer).
const NAME_ARGS: &[(&[&str], &str, &str)] = &[
    (&["mistral", "auto"], "[TOOL_CALLS] [", "]"),
    (&["granite", "auto"], "<|tool_call|>[", "]"),
    (&["granite", "auto"], "<tool_call>[", "]"),
    (&["jamba", "auto"], "<tool_calls>[", "]</tool_calls>"),
    (&["nemotron", "auto"], "<TOOLCALL>[", "]</TOOLCALL>"),
    (&["phi4-mini", "auto"], "functools[", "]"),
    (&["xlam", "json"], "[", "]"),
    (&["json"], "{\"tool_calls\": [", "]}"),
];

/// A call object without a name between two good calls: the element is
/// text, the call after it is read.
#[test]
fn json_lists_read_the_call_after_one_without_a_name() {
    let bad = "{\"arguments\": {\"a\": 1}}";
    for (formats, open, close) in NAME_ARGS {
        let input = format!(
            "{open}{{\"name\": \"get_time\", \"arguments\": {{}}}}, {bad}, \
             {{\"name\": \"get_weather\", \"arguments\": {{\"city\": \"Paris\"}}}}{close}"
        );
        expect(formats, &input, &two_good(), &format!(", {bad}"), MALFORMED);
    }
}

/// An element that is no call object at all (a number, a string, a list).
#[test]
fn json_lists_read_the_call_after_an_element_that_is_not_an_object() {
    for bad in ["42", "\"get_time\"", "[1, {\"name\": \"x\"}]", "null"] {
        for (formats, open, close) in NAME_ARGS {
            let input = format!(
                "{open}{{\"name\": \"get_time\", \"arguments\": {{}}}}, {bad}, \
                 {{\"name\": \"get_weather\", \"arguments\": {{\"city\": \"Paris\"}}}}{close}"
            );
            expect(formats, &input, &two_good(), &format!(", {bad}"), MALFORMED);
        }
    }
}
