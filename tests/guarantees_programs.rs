//! Issue 29, items 3, 4, 5, 8, 9 and 11: what the format programs lost or
//! made up — a complete Kimi K3 call after a think block or prose (or
//! without its `<|close|>call<|sep|>`) that came back as text, Kimi K3's
//! message close left in the text, the first of two `<function=…>` in one
//! Qwen3-Coder `<tool_call>` lost, a tool named `get_time/` dispatched,
//! and Harmony's analysis channel glued to the answer. Each test is named
//! after what it protects, and checks the contract under every chunking
//! and every feeding API (`events_everywhere`).

use serde_json::json;
use toolscan::{Check, DiagnosticKind, Event, Options, Response, Tools};
use toolscan_testkit::check::{calls_of, diagnostics_of, names_of, nothing_lost, text_of};
use toolscan_testkit::chunk::{events_everywhere, seeded_options};

fn events(format: &str, input: &str) -> Vec<Event> {
    events_everywhere(format, &seeded_options(), input)
}

fn kinds(events: &[Event]) -> Vec<DiagnosticKind> {
    diagnostics_of(events).into_iter().map(|(k, _)| k).collect()
}

// ---------------------------------------------------------------------------
// Kimi K3 (Kimi-K3.jinja): `open_tag('tools')`, then for each call
// `open_tag('call', [('tool', NAME), ('index', N)])`, its arguments
// `open_tag('argument', [('key', K), ('type', T)])` value
// `close_tag('argument')`, `close_tag('call')`; `close_tag('tools')`.

const K3_WEATHER: &str = "<|open|>call tool=\"get_weather\" index=\"1\"<|sep|>\
    <|open|>argument key=\"city\" type=\"string\"<|sep|>Zürich<|close|>argument<|sep|>\
    <|close|>call<|sep|>";
const K3_SEARCH: &str = "<|open|>call tool=\"search\" index=\"2\"<|sep|>\
    <|open|>argument key=\"query\" type=\"string\"<|sep|>café<|close|>argument<|sep|>\
    <|close|>call<|sep|>";

fn k3_two_calls() -> Vec<(String, serde_json::Value)> {
    vec![
        ("get_weather".into(), json!({"city": "Zürich"})),
        ("search".into(), json!({"query": "café"})),
    ]
}

/// Item 3: a think block between two calls of one section (interleaved
/// thinking, written with the template's `open_tag('think')` …
/// `close_tag('think')`) ends the section; the second call, complete, is
/// still a call — read on its own — and the think block is reasoning with
/// separation on, text without.
#[test]
fn kimi_k3_a_complete_call_after_a_think_block_between_calls_is_a_call() {
    let think = "<|open|>think<|sep|>Now the search.<|close|>think<|sep|>";
    let input = format!("<|open|>tools<|sep|>{K3_WEATHER}{think}{K3_SEARCH}<|close|>tools<|sep|>");
    for format in ["kimi-k3", "auto"] {
        let ev = events(format, &input);
        assert_eq!(calls_of(&ev), k3_two_calls(), "{format}: {ev:?}");
        assert_eq!(text_of(&ev), think, "{format}");
        assert!(diagnostics_of(&ev).is_empty(), "{format}: {ev:?}");
        let on = seeded_options().with_reasoning(true);
        let r = Response::from_events(&events_everywhere(format, &on, &input));
        assert_eq!(r.reasoning.as_deref(), Some("Now the search."), "{format}");
        assert_eq!(r.text, "", "{format}");
        assert_eq!(r.tool_calls.len(), 2, "{format}");
    }
}

/// Item 3: prose between two calls of one section: the prose is text and
/// the second call a call.
#[test]
fn kimi_k3_a_complete_call_after_prose_between_calls_is_a_call() {
    let input =
        format!("<|open|>tools<|sep|>{K3_WEATHER}and then {K3_SEARCH}<|close|>tools<|sep|>");
    for format in ["kimi-k3", "auto"] {
        let ev = events(format, &input);
        assert_eq!(calls_of(&ev), k3_two_calls(), "{format}: {ev:?}");
        assert_eq!(text_of(&ev), "and then ", "{format}");
        assert!(diagnostics_of(&ev).is_empty(), "{format}: {ev:?}");
    }
}

/// Item 4, the issue's own input: a call whose `<|close|>call<|sep|>` is
/// missing, the section's close right after its complete argument, is a
/// call; so is one without arguments.
#[test]
fn kimi_k3_a_call_missing_its_close_before_the_sections_close_is_a_call() {
    let cases = [
        (
            "<|open|>tools<|sep|><|open|>call tool=\"exec\" index=\"1\"<|sep|><|open|>argument \
             key=\"input\" type=\"string\"<|sep|>ls<|close|>argument<|sep|><|close|>tools<|sep|>",
            json!({"input": "ls"}),
        ),
        (
            "<|open|>tools<|sep|><|open|>call tool=\"exec\" index=\"1\"<|sep|><|open|>json \
             type=\"object\"<|sep|>{\"input\": \"ls\"}<|close|>json<|sep|><|close|>tools<|sep|>",
            json!({"input": "ls"}),
        ),
        (
            "<|open|>tools<|sep|><|open|>call tool=\"exec\" index=\"1\"<|sep|><|close|>tools<|sep|>",
            json!({}),
        ),
    ];
    for (input, args) in cases {
        for format in ["kimi-k3", "auto"] {
            let ev = events(format, input);
            assert_eq!(
                calls_of(&ev),
                vec![("exec".into(), args.clone())],
                "{format}: {ev:?}"
            );
            assert_eq!(text_of(&ev), "", "{format}");
            assert!(diagnostics_of(&ev).is_empty(), "{format}: {ev:?}");
        }
    }
}

/// Item 4: the next call's opener where the first call's close is due: the
/// first call is complete there, and the next one is read.
#[test]
fn kimi_k3_a_call_missing_its_close_before_the_next_call_is_a_call() {
    let unclosed = K3_WEATHER.replace("<|close|>call<|sep|>", "");
    let input = format!("<|open|>tools<|sep|>{unclosed}{K3_SEARCH}<|close|>tools<|sep|>");
    for format in ["kimi-k3", "auto"] {
        let ev = events(format, &input);
        assert_eq!(calls_of(&ev), k3_two_calls(), "{format}: {ev:?}");
        assert_eq!(text_of(&ev), "", "{format}");
        assert!(diagnostics_of(&ev).is_empty(), "{format}: {ev:?}");
    }
}

/// A call that ends at the next call's opener and is refused there (here:
/// it misses a required parameter, and calls that fail the schema are
/// rejected) is text up to that opener, which stays the next call's:
/// nothing lost, nothing merged — Kimi K3's section reads on, Qwen3-Coder's
/// block is read again from `<function=`.
#[test]
fn a_refused_call_ended_by_the_next_calls_opener_leaves_that_opener_to_the_next_call() {
    let tools = Tools::from_json_str(
        r#"[{"type": "function", "function": {"name": "get_weather", "parameters": {
              "type": "object", "required": ["unit"],
              "properties": {"city": {"type": "string"}, "unit": {"type": "string"}}}}},
            {"type": "function", "function": {"name": "search", "parameters": {
              "type": "object", "properties": {"query": {"type": "string"}}}}}]"#,
    )
    .expect("tools");
    let only_search = seeded_options()
        .with_tools(tools)
        .with_check_calls(Check::Reject);
    let unclosed = K3_WEATHER.replace("<|close|>call<|sep|>", "");
    let k3 = format!("<|open|>tools<|sep|>{unclosed}{K3_SEARCH}<|close|>tools<|sep|>");
    let qwen = "<tool_call>\n<function=get_weather>\n<parameter=city>\nZürich\n</parameter>\n\
                <function=search>\n<parameter=query>\ncafé\n</parameter>\n</function>\n</tool_call>";
    for (format, input, first) in [
        (
            "kimi-k3",
            k3.as_str(),
            format!("<|open|>tools<|sep|>{unclosed}"),
        ),
        (
            "qwen3-coder",
            qwen,
            "<tool_call>\n<function=get_weather>\n<parameter=city>\nZürich\n</parameter>\n"
                .to_string(),
        ),
    ] {
        let ev = events_everywhere(format, &only_search, input);
        assert_eq!(names_of(&ev), ["search"], "{format}: {ev:?}");
        assert_eq!(
            kinds(&ev),
            [DiagnosticKind::MissingParameter, DiagnosticKind::NotAllowed],
            "{format}: {ev:?}"
        );
        let start = input.find(&first).map(|i| i + first.len()).unwrap_or(0);
        let call = start..input.len();
        nothing_lost(&ev, input.as_bytes(), std::slice::from_ref(&call))
            .unwrap_or_else(|e| panic!("{format}: {e}"));
    }
}

/// Item 5: the template closes the assistant's message with
/// `close_tag('message')` then `<|end_of_msg|>`; where they end the
/// completion they are framing, like `<|close|>response<|sep|>`.
#[test]
fn kimi_k3_the_message_close_that_ends_the_completion_is_framing() {
    let tools = format!("<|open|>tools<|sep|>{K3_WEATHER}<|close|>tools<|sep|>");
    for end in [
        "<|close|>message<|sep|><|end_of_msg|>",
        "<|close|>message<|sep|>",
        "<|end_of_msg|>",
    ] {
        let text = format!("<|open|>response<|sep|>Checking.<|close|>response<|sep|>{end}");
        let with_call =
            format!("<|open|>response<|sep|>Checking.<|close|>response<|sep|>{tools}{end}");
        for format in ["kimi-k3", "auto"] {
            let ev = events(format, &text);
            assert_eq!(text_of(&ev), "Checking.", "{format} {end}");
            assert!(diagnostics_of(&ev).is_empty(), "{format}: {ev:?}");
            let ev = events(format, &with_call);
            assert_eq!(text_of(&ev), "Checking.", "{format} {end}");
            assert_eq!(calls_of(&ev), k3_two_calls()[..1], "{format} {end}");
        }
    }
}

/// Item 5: the message close before anything else is not the end of the
/// completion: it stays text, as written, with no diagnostic.
#[test]
fn kimi_k3_a_message_close_followed_by_text_stays_literal() {
    for input in [
        "a<|close|>message<|sep|>b",
        "a<|close|>message<|sep|><|end_of_msg|>b",
        "a<|close|>message<|sep|><|open|>message role=\"user\"<|sep|>hi",
        "a<|end_of_msg|> b",
    ] {
        for format in ["kimi-k3", "auto"] {
            let ev = events(format, input);
            assert_eq!(text_of(&ev), input, "{format}");
            assert!(diagnostics_of(&ev).is_empty(), "{format}: {ev:?}");
        }
    }
}

// ---------------------------------------------------------------------------
// Qwen3-Coder (tool_chat_template_qwen3coder.jinja, Qwen3-Coder.jinja):
// `<tool_call>\n<function=NAME>\n`, each parameter
// `<parameter=KEY>\nVALUE\n</parameter>\n`, then `</function>\n</tool_call>`.

/// Item 8: two `<function=…>` blocks inside one `<tool_call>` are two
/// calls (Qwen's reference parser reads both); Seed-OSS shares the body.
#[test]
fn qwen3_coder_two_functions_in_one_tool_call_are_two_calls() {
    let body = "\n<function=get_weather>\n<parameter=city>\nZürich\n</parameter>\n</function>\n\
                <function=search>\n<parameter=query>\ncafé\n</parameter>\n</function>\n";
    let two = vec![
        ("get_weather".into(), json!({"city": "Zürich"})),
        ("search".into(), json!({"query": "café"})),
    ];
    for (format, open, close) in [
        ("qwen3-coder", "<tool_call>", "</tool_call>"),
        ("auto", "<tool_call>", "</tool_call>"),
        ("seed-oss", "<seed:tool_call>", "</seed:tool_call>"),
    ] {
        let input = format!("Let me check.\n{open}{body}{close}");
        let ev = events(format, &input);
        assert_eq!(calls_of(&ev), two, "{format}: {ev:?}");
        assert_eq!(text_of(&ev), "Let me check.\n", "{format}");
        assert!(diagnostics_of(&ev).is_empty(), "{format}: {ev:?}");
    }
}

/// Item 8 with item 4's rule: the next `<function=` where the call's
/// `</function>` is due ends the call there.
#[test]
fn qwen3_coder_a_function_missing_its_close_before_the_next_function_is_a_call() {
    let input = "<tool_call>\n<function=get_weather>\n<parameter=city>\nZürich\n</parameter>\n\
                 <function=search>\n<parameter=query>\ncafé\n</parameter>\n</function>\n</tool_call>";
    for format in ["qwen3-coder", "auto"] {
        let ev = events(format, input);
        assert_eq!(names_of(&ev), ["get_weather", "search"], "{format}: {ev:?}");
        assert_eq!(text_of(&ev), "", "{format}");
        assert!(diagnostics_of(&ev).is_empty(), "{format}: {ev:?}");
    }
}

/// A value missing its `</parameter>`, then `</function>` and the next
/// `<function=`: the value ends at `</function>` (with an `unclosed`
/// diagnostic), and the next function is a call of its own — never an
/// argument that holds another call's markup.
#[test]
fn qwen3_coder_an_unclosed_value_before_the_next_function_ends_there() {
    let input = "<tool_call>\n<function=get_weather>\n<parameter=city>\nZürich\n</function>\n\
                 <function=search>\n<parameter=query>\ncafé\n</parameter>\n</function>\n</tool_call>";
    for format in ["qwen3-coder", "auto"] {
        let ev = events(format, input);
        assert_eq!(
            calls_of(&ev),
            vec![
                ("get_weather".into(), json!({"city": "Zürich"})),
                ("search".into(), json!({"query": "café"})),
            ],
            "{format}: {ev:?}"
        );
        assert_eq!(kinds(&ev), [DiagnosticKind::Unclosed], "{format}");
        assert_eq!(text_of(&ev), "", "{format}");
    }
}

/// One call in its `<tool_call>` is still dispatched only at
/// `</tool_call>`: the stream ending after `</function>` truncates it.
#[test]
fn qwen3_coder_one_function_still_needs_its_tool_call_close() {
    let input = "<tool_call>\n<function=get_weather>\n</function>\n";
    let ev = events("qwen3-coder", input);
    assert!(calls_of(&ev).is_empty(), "{ev:?}");
    assert_eq!(kinds(&ev), [DiagnosticKind::Truncated]);
    assert_eq!(text_of(&ev), input);
}

/// Item 9: `<function=get_time/>` is a self-closing tag, which no
/// template writes; a name never ends with `/`, so no tool `get_time/` is
/// dispatched: the block is text, with a `malformed` diagnostic.
#[test]
fn a_self_closing_function_tag_names_no_tool() {
    for format in ["qwen3-coder", "hermes", "auto"] {
        for input in [
            "<function=get_time/>",
            "<tool_call>\n<function=get_time/>\n</tool_call>",
            "<function=get_time/>{}</function>",
            "<tool_call>{\"name\": \"get_time/\", \"arguments\": {}}</tool_call>",
        ] {
            let ev = events(format, input);
            assert!(calls_of(&ev).is_empty(), "{format} {input:?}: {ev:?}");
            assert!(
                kinds(&ev).contains(&DiagnosticKind::Malformed),
                "{format} {input:?}: {ev:?}"
            );
            assert_eq!(text_of(&ev), input, "{format}");
        }
    }
}

// ---------------------------------------------------------------------------
// Harmony (openai-gpt-oss-120b.jinja): `<|channel|>analysis<|message|>`
// thinking `<|end|>`, then `<|start|>assistant<|channel|>final<|message|>`
// the answer `<|return|>`.

/// Item 11: the analysis channel is reasoning by default — the channel is
/// the format's own marking — and never glued to the answer.
#[test]
fn harmony_analysis_channel_is_reasoning_without_the_reasoning_option() {
    let input = "<|channel|>analysis<|message|>Summarise.<|end|>\
                 <|start|>assistant<|channel|>final<|message|>Done: three points.<|return|>";
    for format in ["harmony", "auto"] {
        for options in [
            seeded_options(),
            seeded_options().with_reasoning(true),
            Options::new(),
        ] {
            let r = Response::from_events(&events_everywhere(format, &options, input));
            assert_eq!(r.text, "Done: three points.", "{format}");
            assert_eq!(r.reasoning.as_deref(), Some("Summarise."), "{format}");
            assert!(r.diagnostics.is_empty(), "{format}: {r:?}");
        }
    }
}
