//! Issue 29, items 2, 6 and 7: never an argument the model never wrote.
//! A value that never closed and holds markup is not ended by the markup
//! after it (a shell command with `</think>` glued on must not run); a
//! value that quotes its own closing tag keeps its call (the closer counts
//! only where the format's structure follows it); a parameter named twice
//! keeps its first value, and the arguments never hold a key twice. Each
//! test is named after what it protects; the inputs are written as the
//! formats' chat templates write them (the template's file name is in a
//! comment), every one checked under every chunking and feeding API.

use serde_json::json;
use toolscan::{DiagnosticKind, Event};
use toolscan_testkit::check::{args_of, calls_of, nothing_lost, text_of};
use toolscan_testkit::expect::{call, expect, kinds, run};

/// The arguments text of each completed call, exactly as dispatched (a
/// parsed value would hide a repeated key).
fn dispatched_args(events: &[Event]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::ToolCallEnd { arguments, .. } => Some(arguments.as_str().to_string()),
            _ => None,
        })
        .collect()
}

// ---------------------------------------------------------------------------
// Item 2: a value that never closed, holding markup, is never dispatched.

/// The production record: a GLM value that never closes, `</think>` glued
/// to the command, then the call's closer. The call used to go out with
/// `cmd = "…submit_output.log</think>"` (its `unclosed` note ignored by the
/// agent). Now it is text, with the `unclosed` diagnostic. (GLM-4.7-Flash.jinja
/// writes `<tool_call>NAME<arg_key>K</arg_key><arg_value>V</arg_value>…</tool_call>`.)
#[test]
fn a_shell_command_with_think_glued_on_is_never_dispatched() {
    let input = "<tool_call>exec_command<arg_key>cmd</arg_key><arg_value>kill -0 695 \
        2>/dev/null && echo alive\nwc -c /workspace/submit_output.log</think></tool_call>";
    expect(
        &["glm47", "glm45", "auto"],
        input,
        &[],
        input,
        &[DiagnosticKind::Unclosed],
    );
}

/// The same value inside GLM-4.6's layout (GLM-4.6.jinja: a newline before
/// each tag), with a good call before it and one after: the broken call is
/// text, and both others are read.
#[test]
fn the_calls_around_a_value_holding_markup_are_still_read() {
    let good = |name: &str, v: &str| {
        format!(
            "\n<tool_call>{name}\n<arg_key>cmd</arg_key>\n<arg_value>{v}</arg_value>\n</tool_call>"
        )
    };
    let bad = "\n<tool_call>exec_command\n<arg_key>cmd</arg_key>\n<arg_value>wc -c \
        out.log</think>\n</tool_call>";
    let input = format!("{}{bad}{}", good("first", "ls"), good("last", "pwd"));
    let events = run("glm45", &input);
    assert_eq!(
        calls_of(&events),
        vec![
            call("first", json!({"cmd": "ls"})),
            call("last", json!({"cmd": "pwd"}))
        ],
        "{events:?}"
    );
    assert_eq!(text_of(&events), format!("\n{bad}\n"));
    assert_eq!(kinds(&events), vec![DiagnosticKind::Unclosed]);
}

/// Where calls share a section (Kimi-K3.jinja: `<|open|>tools<|sep|>` …
/// `<|close|>tools<|sep|>`), the call whose value holds markup is text and
/// the section reads on: the next call is dispatched.
#[test]
fn a_value_holding_markup_fails_only_its_own_call_in_a_section() {
    let input = "<|open|>tools<|sep|><|open|>call tool=\"shell\" index=\"1\"<|sep|>\
        <|open|>argument key=\"cmd\" type=\"string\"<|sep|>cat log<|close|>think<|sep|>\
        <|close|>call<|sep|><|open|>call tool=\"shell\" index=\"2\"<|sep|><|open|>argument \
        key=\"cmd\" type=\"string\"<|sep|>ls<|close|>argument<|sep|><|close|>call<|sep|>\
        <|close|>tools<|sep|>";
    let events = run("kimi-k3", input);
    assert_eq!(
        calls_of(&events),
        vec![call("shell", json!({"cmd": "ls"}))],
        "{events:?}"
    );
    assert_eq!(kinds(&events), vec![DiagnosticKind::Unclosed]);
    assert!(text_of(&events).contains("cat log<|close|>think<|sep|>"));
}

/// A value that never closed and is ended by the next parameter's tag
/// (Qwen3-Coder.jinja: `<parameter=KEY>\nvalue\n</parameter>`) fails its
/// call too when it holds markup — here a call opener.
#[test]
fn a_value_holding_markup_is_not_ended_by_the_next_parameter() {
    let input = "<tool_call>\n<function=run>\n<parameter=cmd>\necho <tool_call>\n\
        <parameter=cwd>\n/tmp\n</parameter>\n</function>\n</tool_call>";
    let events = run("qwen3-coder", input);
    assert!(calls_of(&events).is_empty(), "{events:?}");
    assert_eq!(kinds(&events), vec![DiagnosticKind::Unclosed]);
    nothing_lost(&events, input.as_bytes(), &[]).unwrap();
}

/// What the rule leaves alone: a value with no closing tag and no markup
/// still ends at the call's closer, as before, with its `unclosed` note.
#[test]
fn an_unclosed_value_without_markup_still_ends_at_the_call_closer() {
    let input = "<tool_call>exec_command<arg_key>cmd</arg_key><arg_value>ls -la</tool_call>";
    expect(
        &["glm47", "glm45"],
        input,
        &[call("exec_command", json!({"cmd": "ls -la"}))],
        "",
        &[DiagnosticKind::Unclosed],
    );
}

// ---------------------------------------------------------------------------
// Item 6: a value that quotes its own closing tag keeps its call.

/// The issue's example, in each format that writes strings raw: the first
/// `</arg_value>` is followed by `b`, which no parameter or call closer
/// begins with, so it is part of the value. (GLM-4.7-Flash.jinja,
/// GLM-4.6.jinja.)
#[test]
fn a_value_that_quotes_its_closing_tag_keeps_its_call() {
    expect(
        &["glm47", "glm45", "auto"],
        "<tool_call>echo<arg_key>text</arg_key><arg_value>a</arg_value>b</arg_value></tool_call>",
        &[call("echo", json!({"text": "a</arg_value>b"}))],
        "",
        &[],
    );
    expect(
        &["glm45"],
        "\n<tool_call>echo\n<arg_key>text</arg_key>\n<arg_value>a</arg_value>b</arg_value>\n\
         </tool_call>",
        &[call("echo", json!({"text": "a</arg_value>b"}))],
        "\n",
        &[],
    );
}

/// Code that greps for the tag (a coding agent editing a parser), with a
/// second parameter after it: both parameters are read.
#[test]
fn code_that_mentions_the_closing_tag_is_an_argument() {
    let code = "let s = \"</arg_value>\"; run(s)";
    let input = format!(
        "<tool_call>write<arg_key>code</arg_key><arg_value>{code}</arg_value>\
         <arg_key>path</arg_key><arg_value>a.rs</arg_value></tool_call>"
    );
    expect(
        &["glm47", "glm45"],
        &input,
        &[call("write", json!({"code": code, "path": "a.rs"}))],
        "",
        &[],
    );
}

/// Kimi-K3.jinja writes values raw between `<|open|>argument …<|sep|>` and
/// `<|close|>argument<|sep|>`: a value quoting that closer keeps its call.
#[test]
fn a_kimi_value_that_quotes_its_closing_tag_keeps_its_call() {
    let value = "x = \"<|close|>argument<|sep|>\"; y";
    let input = format!(
        "<|open|>tools<|sep|><|open|>call tool=\"edit\" index=\"1\"<|sep|><|open|>argument \
         key=\"text\" type=\"string\"<|sep|>{value}<|close|>argument<|sep|><|close|>call<|sep|>\
         <|close|>tools<|sep|>"
    );
    expect(
        &["kimi-k3"],
        &input,
        &[call("edit", json!({"text": value}))],
        "",
        &[],
    );
}

/// A closer that no structure follows, in a value that then never closes:
/// there is no reading of it as a call, and it is text (the closer it
/// quoted is markup inside an unclosed value).
#[test]
fn a_quoted_closer_in_a_value_that_never_closes_is_text() {
    let input = "<tool_call>echo<arg_key>text</arg_key><arg_value>a</arg_value>b</tool_call>";
    expect(&["glm47"], input, &[], input, &[DiagnosticKind::Unclosed]);
}

/// Where the stream ends right after a closer, that closer is the one
/// reading left: the value ends there (and the call, without its closer,
/// is truncated as before).
#[test]
fn a_closer_at_the_end_of_the_stream_ends_its_value() {
    let input = "<tool_call>echo<arg_key>text</arg_key><arg_value>a</arg_value>";
    let events = run("glm47", input);
    assert!(calls_of(&events).is_empty());
    assert_eq!(kinds(&events), vec![DiagnosticKind::Truncated]);
    assert_eq!(text_of(&events), input);
}

// ---------------------------------------------------------------------------
// Item 7: a parameter named twice; the arguments never repeat a key.

/// GLM (GLM-4.7-Flash.jinja), Qwen3-Coder (Qwen3-Coder.jinja) and
/// MiniMax-M2 (MiniMax-M2.jinja) build the arguments' JSON from the
/// parameters: a repeated one keeps its first value (already streamed),
/// the second is dropped with a `duplicate_parameter` diagnostic, and the
/// arguments hold the key once.
#[test]
fn a_repeated_parameter_keeps_its_first_value_and_no_duplicate_key() {
    let cases = [
        (
            "glm47",
            "<tool_call>f<arg_key>k</arg_key><arg_value>1</arg_value><arg_key>k</arg_key>\
             <arg_value>2</arg_value><arg_key>z</arg_key><arg_value>3</arg_value></tool_call>",
        ),
        (
            "qwen3-coder",
            "<tool_call>\n<function=f>\n<parameter=k>\n1\n</parameter>\n<parameter=k>\n2\n\
             </parameter>\n<parameter=z>\n3\n</parameter>\n</function>\n</tool_call>",
        ),
        (
            "minimax-m2",
            "<minimax:tool_call>\n<invoke name=\"f\">\n<parameter name=\"k\">1</parameter>\n\
             <parameter name=\"k\">2</parameter>\n<parameter name=\"z\">3</parameter>\n\
             </invoke>\n</minimax:tool_call>",
        ),
    ];
    for (format, input) in cases {
        let events = run(format, input);
        assert_eq!(
            dispatched_args(&events),
            vec![r#"{"k":1,"z":3}"#.to_string()],
            "{format}: {events:?}"
        );
        assert_eq!(args_of(&events), r#"{"k":1,"z":3}"#, "{format}");
        assert_eq!(
            kinds(&events),
            vec![DiagnosticKind::DuplicateParameter],
            "{format}"
        );
    }
}

/// A string parameter streams as it arrives: the first value went out
/// before the second began, so the second produces no argument bytes.
#[test]
fn a_repeated_string_parameter_sends_no_bytes() {
    let input = "<tool_call>f<arg_key>k</arg_key><arg_value>first</arg_value><arg_key>k\
                 </arg_key><arg_value>second \"quoted\"</arg_value></tool_call>";
    let events = run("glm47", input);
    assert_eq!(args_of(&events), r#"{"k":"first"}"#);
    assert_eq!(dispatched_args(&events), vec![r#"{"k":"first"}"#]);
    assert_eq!(kinds(&events), vec![DiagnosticKind::DuplicateParameter]);
}

/// Python keyword arguments (`pythonic`, tool_chat_template_llama3.2_pythonic.jinja:
/// `[func_name1(params_name1=params_value1, …)]`) and Gemma 4's brace
/// notation (google-gemma-4-31B-it.jinja: `call:NAME{key:<|"|>v<|"|>,…}`)
/// name a key twice the same way: the first value is kept.
#[test]
fn a_repeated_keyword_keeps_its_first_value() {
    let cases = [
        ("pythonic", "[f(a=1, a=[2, {'x': 3}], b='s')]"),
        (
            "pythonic",
            "<|python_start|>[f(a=1, a='two', b='s')]<|python_end|>",
        ),
        (
            "gemma4",
            "<|tool_call>call:f{a:1,a:<|\"|>two<|\"|>,b:<|\"|>s<|\"|>}<tool_call|>",
        ),
    ];
    for (format, input) in cases {
        let events = run(format, input);
        assert_eq!(
            dispatched_args(&events),
            vec![r#"{"a":1,"b":"s"}"#.to_string()],
            "{format}: {input}: {events:?}"
        );
        assert_eq!(args_of(&events), r#"{"a":1,"b":"s"}"#, "{format}: {input}");
        assert_eq!(
            kinds(&events),
            vec![DiagnosticKind::DuplicateParameter],
            "{format}: {input}"
        );
    }
}
