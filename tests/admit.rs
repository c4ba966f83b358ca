//! Calls the options do not let through (`Options::admit`: the proxy's
//! `parallel_tool_calls: false` and named `tool_choice`) are no calls:
//! their markup is text with a `not_allowed` diagnostic, under every
//! chunking, and the calls that are let through are dispatched as usual.

use serde_json::json;
use toolscan::{DiagnosticKind, Options};
use toolscan_testkit::check::{calls_of, text_of};
use toolscan_testkit::chunk;
use toolscan_testkit::expect::{call, kinds};

const NOT_ALLOWED: DiagnosticKind = DiagnosticKind::NotAllowed;

fn run(format: &str, options: Options, input: &str) -> Vec<toolscan::Event> {
    let options = options.with_ids(toolscan::IdMint::Seeded(0));
    chunk::events_everywhere(format, &options, input)
}

fn hermes_call(name: &str) -> String {
    format!("<tool_call>{{\"name\": \"{name}\", \"arguments\": {{}}}}</tool_call>")
}

/// One call at most: the second call of a stream, in a format whose every
/// call has its own marker, is text.
#[test]
fn one_call_at_most_leaves_the_second_as_text() {
    let (a, b) = (hermes_call("a"), hermes_call("b"));
    let input = format!("{a}\n{b}");
    for format in ["hermes", "auto"] {
        let ev = run(format, Options::new().with_max_calls(1), &input);
        assert_eq!(calls_of(&ev), [call("a", json!({}))], "{format}");
        assert_eq!(text_of(&ev), format!("\n{b}"), "{format}");
        assert_eq!(kinds(&ev), [NOT_ALLOWED], "{format}");
    }
}

/// In a list of calls and in a group of calls, the calls after the first
/// are text, each with its diagnostic; the list's or group's end still
/// belongs to the call that went through.
#[test]
fn one_call_at_most_in_lists_and_groups() {
    let list = "[TOOL_CALLS] [{\"name\": \"a\", \"arguments\": {}}, \
                {\"name\": \"b\", \"arguments\": {}}, {\"name\": \"c\", \"arguments\": {}}]";
    let ev = run("mistral", Options::new().with_max_calls(1), list);
    assert_eq!(calls_of(&ev), [call("a", json!({}))]);
    assert_eq!(
        text_of(&ev),
        ", {\"name\": \"b\", \"arguments\": {}}, {\"name\": \"c\", \"arguments\": {}}"
    );
    assert_eq!(kinds(&ev), [NOT_ALLOWED, NOT_ALLOWED]);

    let group = "<function_calls>\n<invoke name=\"a\">\n</invoke>\n\
                 <invoke name=\"b\">\n</invoke>\n</function_calls>";
    let ev = run("claude-xml", Options::new().with_max_calls(1), group);
    assert_eq!(calls_of(&ev), [call("a", json!({}))]);
    assert_eq!(text_of(&ev), "\n<invoke name=\"b\">\n</invoke>");
    assert_eq!(kinds(&ev), [NOT_ALLOWED]);

    let py = "[a(x=1), b(y=2)]";
    let ev = run("pythonic", Options::new().with_max_calls(1), py);
    assert_eq!(calls_of(&ev), [call("a", json!({"x": 1}))]);
    assert_eq!(text_of(&ev), ", b(y=2)");
    assert_eq!(kinds(&ev), [NOT_ALLOWED]);
}

/// A call that failed does not count: the call after it is the first.
#[test]
fn a_failed_call_does_not_use_up_the_one_allowed() {
    let bad = "<tool_call>{\"name\": \"\", \"arguments\": {}}</tool_call>";
    let input = format!("{bad}{}", hermes_call("b"));
    let ev = run("hermes", Options::new().with_max_calls(1), &input);
    assert_eq!(calls_of(&ev), [call("b", json!({}))]);
    assert_eq!(text_of(&ev), bad);
    assert_eq!(kinds(&ev), [DiagnosticKind::Malformed]);
}

/// No call at all: every call is text.
#[test]
fn no_call_allowed_leaves_all_markup_as_text() {
    let input = format!("Hi {} and {}", hermes_call("a"), hermes_call("b"));
    let ev = run("hermes", Options::new().with_max_calls(0), &input);
    assert_eq!(calls_of(&ev), []);
    assert_eq!(text_of(&ev), input);
    assert_eq!(kinds(&ev), [NOT_ALLOWED, NOT_ALLOWED]);
}

/// Only one tool: calls of others are text, in any order.
#[test]
fn only_the_named_tool_goes_through() {
    let input = format!(
        "{}{}{}",
        hermes_call("a"),
        hermes_call("b"),
        hermes_call("a")
    );
    let ev = run("hermes", Options::new().with_only_tool("a"), &input);
    assert_eq!(calls_of(&ev), [call("a", json!({})), call("a", json!({}))]);
    assert_eq!(text_of(&ev), hermes_call("b"));
    assert_eq!(kinds(&ev), [NOT_ALLOWED]);

    // Both: the first call of the named tool, and nothing after it.
    let ev = run(
        "hermes",
        Options::new().with_only_tool("b").with_max_calls(1),
        &input,
    );
    assert_eq!(calls_of(&ev), [call("b", json!({}))]);
    assert_eq!(
        text_of(&ev),
        format!("{}{}", hermes_call("a"), hermes_call("a"))
    );
    assert_eq!(kinds(&ev), [NOT_ALLOWED, NOT_ALLOWED]);
}

/// A tentative block (a bare JSON object) that names a refused tool is
/// prose, silently, like any bare object that is no call.
#[test]
fn a_refused_bare_object_is_silent_prose() {
    let input = "{\"name\": \"b\", \"arguments\": {}}";
    let ev = run("json", Options::new().with_only_tool("a"), input);
    assert_eq!(calls_of(&ev), []);
    assert_eq!(text_of(&ev), input);
}
