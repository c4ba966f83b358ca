//! Defects found by running other projects' test suites (llama.cpp, vLLM,
//! SGLang and friends) against toolscan, one section per defect.
//!
//! Every input is fed whole, byte by byte, and through `Parser::feed_with`
//! into a `Vec<Event>`; the three must coalesce to the same events, which
//! must follow the contract's structure (one start per index, deltas that
//! concatenate to the final arguments, `done` last) and lose no byte.

use serde_json::{json, Value};
use toolscan::{coalesce, Event, IdMint, Options, Parser, Registry, Response};
use toolscan_testkit::check::calls_of as calls;
use toolscan_testkit::check::text_of as text;
use toolscan_testkit::chunk;

// ---------------------------------------------------------------------------
// Harness

fn options() -> Options {
    Options::new().with_ids(IdMint::Seeded(7))
}

fn parser(format: &str, options: Options) -> Parser {
    let g = Registry::builtin().grammar(format).expect("format exists");
    Parser::new(g, options)
}

/// Runs `input` under `format` with every chunk plan and feeding API
/// (whole, byte by byte, random cuts; `feed`, `feed_into`, `feed_with`,
/// `feed_str_with`); checks they agree and that the events keep the
/// contract. Returns the coalesced events.
fn run_with(format: &str, opts: &Options, input: &str) -> Vec<Event> {
    chunk::invariant(|| parser(format, opts.clone()), input.as_bytes())
        .unwrap_or_else(|e| panic!("{format}: {e}\ninput: {input:?}"))
}

fn run(format: &str, input: &str) -> Vec<Event> {
    run_with(format, &options(), input)
}

fn diagnostics(events: &[Event]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Diagnostic(d) => Some(format!("{} {}", d.kind.as_str(), d.message)),
            _ => None,
        })
        .collect()
}

fn call(name: &str, args: Value) -> (String, Value) {
    (name.to_string(), args)
}

// ---------------------------------------------------------------------------
// 1. DeepSeek V3 / V3.1: a malformed call does not end the section

const S: &str = "<｜tool▁calls▁begin｜>";
const C: &str = "<｜tool▁call▁begin｜>";
const SEP: &str = "<｜tool▁sep｜>";
const CE: &str = "<｜tool▁call▁end｜>";
const SE: &str = "<｜tool▁calls▁end｜>";
const EOS: &str = "<｜end▁of▁sentence｜>";

fn v31(name: &str, args: &str) -> String {
    format!("{C}{name}{SEP}{args}{CE}")
}

fn v3(name: &str, args: &str) -> String {
    format!("{C}function{SEP}{name}\n```json\n{args}\n```{CE}")
}

#[test]
fn deepseek_v31_valid_calls_after_a_malformed_one() {
    let bad = v31("get_weather", "{city: Paris}");
    let input = format!(
        "Checking.{S}{bad}{}\n{}{SE}{EOS}",
        v31("get_time", r#"{"tz": "UTC"}"#),
        v31("search", r#"{"q": "x"}"#)
    );
    let ev = run("deepseek-v3.1", &input);
    assert_eq!(
        calls(&ev),
        [
            call("get_time", json!({"tz": "UTC"})),
            call("search", json!({"q": "x"}))
        ]
    );
    // the bad call is text; the section's end (and EOS) belong to the calls
    assert_eq!(text(&ev), format!("Checking.{S}{bad}"));
    let d = diagnostics(&ev);
    assert_eq!(d.len(), 1, "{d:?}");
    assert!(d[0].starts_with("malformed"), "{d:?}");
    assert_eq!(
        ev.last(),
        Some(&Event::Done {
            finish_reason: toolscan::FinishReason::ToolCalls
        })
    );
}

#[test]
fn deepseek_v31_malformed_call_between_valid_ones() {
    let bad = v31("get_weather", r#"{"city": "Paris",}"#);
    let input = format!(
        "{S}{}{bad}{}{SE}{EOS}after",
        v31("a", "{}"),
        v31("b", r#"{"k": [1, 2]}"#)
    );
    let ev = run("deepseek-v3.1", &input);
    assert_eq!(
        calls(&ev),
        [call("a", json!({})), call("b", json!({"k": [1, 2]}))]
    );
    assert_eq!(text(&ev), format!("{bad}after"));
    assert_eq!(diagnostics(&ev).len(), 1);
}

/// The section's end after a last call that failed is text with it (issue
/// 29, item 14: dropping it glued the failed call's text to what follows);
/// the call before it is still dispatched.
#[test]
fn deepseek_v31_last_call_malformed_gives_the_section_end_back_as_text() {
    let bad = v31("b", r#"{"k": tru}"#);
    let input = format!("{S}{}\n{bad}{SE}{EOS}Done.", v31("a", "{}"));
    let ev = run("deepseek-v3.1", &input);
    assert_eq!(calls(&ev), [call("a", json!({}))]);
    assert_eq!(text(&ev), format!("\n{bad}{SE}{EOS}Done."));
    assert_eq!(diagnostics(&ev).len(), 1);
}

#[test]
fn deepseek_v31_every_kind_of_bad_call_recovers() {
    // the bad call, all of which is text
    let bads = [
        // bad JSON
        v31("f", r#"{"a": 1"#),
        // whitespace in the name
        v31("get weather", "{}"),
        // no separator: the name runs into the call's end
        format!("{C}get_weather{CE}"),
        // no arguments
        format!("{C}get_weather{SEP}{CE}"),
        // the call's end is missing: the next call begins
        format!("{C}f{SEP}{{\"a\": 1}}"),
        // an empty call: the next one begins at once
        C.to_string(),
        // a call begun inside the name
        format!("{C}get_weather<｜tool▁call▁beg"),
    ];
    for bad in bads {
        let input = format!("{S}{bad}{}{SE}", v31("ok", r#"{"x": 1}"#));
        let ev = run("deepseek-v3.1", &input);
        assert_eq!(calls(&ev), [call("ok", json!({"x": 1}))], "{bad}");
        let want = format!("{S}{bad}");
        assert_eq!(text(&ev), want, "{bad}");
        assert_eq!(diagnostics(&ev).len(), 1, "{bad}: {:?}", diagnostics(&ev));
    }
}

#[test]
fn deepseek_v3_fenced_calls_recover_too() {
    let bad = v3("get_weather", r#"{"city": "Paris",}"#);
    for format in ["deepseek-v3", "deepseek-v3.1"] {
        let input = format!(
            "{S}{bad}\n{}\n{}{SE}{EOS}",
            v3("get_time", "{}"),
            v3("search", r#"{"q": "café ☕"}"#)
        );
        let ev = run(format, &input);
        assert_eq!(
            calls(&ev),
            [
                call("get_time", json!({})),
                call("search", json!({"q": "café ☕"}))
            ],
            "{format}"
        );
        assert_eq!(text(&ev), format!("{S}{bad}"), "{format}");
        assert_eq!(diagnostics(&ev).len(), 1, "{format}");
    }
}

#[test]
fn deepseek_a_section_with_only_bad_calls_is_text() {
    let bad1 = v31("a", "{x}");
    let bad2 = v31("b", "[]");
    for tail in ["", "\nProse after."] {
        let input = format!("{S}{bad1}{bad2}{SE}{EOS}{tail}");
        let ev = run("deepseek-v3.1", &input);
        assert!(calls(&ev).is_empty());
        assert_eq!(text(&ev), input);
        assert_eq!(diagnostics(&ev).len(), 2, "{:?}", diagnostics(&ev));
        assert_eq!(
            ev.last(),
            Some(&Event::Done {
                finish_reason: toolscan::FinishReason::Stop
            })
        );
    }
}

#[test]
fn deepseek_prose_after_a_bad_call_is_text_and_later_sections_parse() {
    // the bad call never ends: everything after it is its text, but a new
    // section further on still parses
    let input = format!(
        "{S}{C}f{SEP}{{bad\nI will try again.\n{S}{}{SE}",
        v31("f", "{}")
    );
    let ev = run("deepseek-v3.1", &input);
    assert_eq!(calls(&ev), [call("f", json!({}))]);
    assert_eq!(text(&ev), format!("{S}{C}f{SEP}{{bad\nI will try again.\n"));
    assert_eq!(diagnostics(&ev).len(), 1);
}

#[test]
fn deepseek_stream_ending_after_a_bad_call() {
    for end in ["", "tail", "<｜tool▁ca", CE] {
        let input = format!("{S}{}{C}f{SEP}{{x}}{end}", v31("a", "{}"));
        let ev = run("deepseek-v3.1", &input);
        assert_eq!(calls(&ev), [call("a", json!({}))]);
        assert_eq!(text(&ev), format!("{C}f{SEP}{{x}}{end}"));
        // the failure, no truncation on top of it
        assert_eq!(diagnostics(&ev).len(), 1, "{end:?}: {:?}", diagnostics(&ev));
    }
}

#[test]
fn deepseek_a_call_over_the_limit_is_text_and_the_next_one_parses() {
    let limits = toolscan::Limits::new().with_max_call_bytes(120);
    let opts = options().with_limits(limits);
    let long = format!(r#"{{"data": "{}"}}"#, "x".repeat(300));
    let big = v31("upload", &long);
    let input = format!("{S}{big}{}{SE}", v31("ok", "{}"));
    let ev = run_with("deepseek-v3.1", &opts, &input);
    assert_eq!(calls(&ev), [call("ok", json!({}))]);
    assert_eq!(text(&ev), format!("{S}{big}"));
    let d = diagnostics(&ev);
    assert_eq!(d.len(), 1, "{d:?}");
    assert!(d[0].starts_with("limit"), "{d:?}");
}

#[test]
fn deepseek_r1_section_start_is_accepted() {
    let r1 = "<｜tool▁calls｜>";
    for format in ["deepseek-v3", "deepseek-v3.1", "auto"] {
        let input = format!(
            "Sure.{r1}{}\n{}{SE}{EOS}",
            v3("get_weather", r#"{"city": "Paris"}"#),
            v3("get_time", "{}")
        );
        let ev = run(format, &input);
        assert_eq!(
            calls(&ev),
            [
                call("get_weather", json!({"city": "Paris"})),
                call("get_time", json!({}))
            ],
            "{format}"
        );
        assert_eq!(text(&ev), "Sure.", "{format}");
        assert!(diagnostics(&ev).is_empty(), "{format}");
    }
}

#[test]
fn deepseek_recovery_under_auto() {
    let bad = v31("get_weather", "{city: Paris}");
    let input = format!("{S}{bad}{}{SE}", v31("get_time", "{}"));
    let ev = run("auto", &input);
    assert_eq!(calls(&ev), [call("get_time", json!({}))]);
    assert_eq!(text(&ev), format!("{S}{bad}"));
}

/// A `recover` step is format-language machinery: a user's format file
/// gets the same recovery.
#[test]
fn recovery_in_a_registered_format() {
    // <calls><call>NAME {json}</call>…</calls>
    let f = toolscan::Format::from_json(
        &json!({
            "name": "calls-section",
            "models": "custom",
            "description": "<calls><call>NAME {json}</call>…</calls>",
            "open": "<calls>",
            "program": [
                "ws",
                {"lit": "<call>"},
                {"recover": [
                    {"lit": "</call>", "goto": "next"},
                    {"lit": "<call>", "goto": "call"},
                    {"lit": "</calls>", "goto": "end"}
                ]},
                {"label": "call"},
                {"capture": "name", "before": " {"},
                "ws",
                {"json": "args"},
                "ws",
                {"lit": "</call>"},
                "dispatch",
                {"label": "next"},
                {"then": [{"lit": "<call>", "goto": "call"}, {"lit": "</calls>", "goto": "end"}]},
                {"label": "end"},
                "end"
            ]
        })
        .to_string(),
    )
    .unwrap();
    let mut reg = Registry::builtin();
    reg.register(f).unwrap();
    let g = reg.grammar("calls-section").unwrap();
    let input =
        "a <calls><call>x {\"k\": 1}</call><call>y {oops}</call>\n<call>z {}</call></calls> b";
    let run_one = |chunk: usize| {
        let mut p = Parser::new(g.clone(), options());
        let mut ev = Vec::new();
        for piece in input.as_bytes().chunks(chunk) {
            p.feed_into(piece, &mut ev);
        }
        p.finish_into(&mut ev);
        coalesce(ev)
    };
    let ev = run_one(input.len());
    for chunk in 1..8 {
        assert_eq!(run_one(chunk), ev, "chunks of {chunk}");
    }
    assert_eq!(
        calls(&ev),
        [call("x", json!({"k": 1})), call("z", json!({}))]
    );
    assert_eq!(text(&ev), "a <call>y {oops}</call> b");
    assert_eq!(diagnostics(&ev).len(), 1);
}

// ---------------------------------------------------------------------------
// 2. hermes: a code fence around a wrapped call belongs to the call

const WEATHER: &str = r#"{"name": "get_weather", "arguments": {"city": "Paris"}}"#;

#[test]
fn hermes_fence_around_a_wrapped_call_is_not_text() {
    for (open, close) in [
        ("<response>", "</response>"),
        ("<tool_call>", "</tool_call>"),
        ("<function_call>", "</function_call>"),
        ("<tools>", "</tools>"),
        ("<json>", "</json>"),
        ("<xml>", "</xml>"),
        ("<RESPONSE>", "</Response>"),
    ] {
        for fence in ["```xml\n", "```\n", "```json ", "```"] {
            for format in ["hermes", "auto"] {
                let input = format!("Calling:\n{fence}{open}{WEATHER}{close}\n```\nWaiting.");
                let ev = run(format, &input);
                assert_eq!(
                    calls(&ev),
                    [call("get_weather", json!({"city": "Paris"}))],
                    "{format}: {input:?}"
                );
                assert_eq!(text(&ev), "Calling:\n\nWaiting.", "{format}: {input:?}");
                assert!(diagnostics(&ev).is_empty(), "{format}: {input:?}");
            }
        }
    }
}

#[test]
fn hermes_fence_around_several_wrapped_calls() {
    let input = format!(
        "```xml\n<tool_call>{WEATHER}</tool_call>\n<tool_call>{}</tool_call>\n```",
        r#"{"name": "get_time", "arguments": {}}"#
    );
    let ev = run("hermes", &input);
    assert_eq!(
        calls(&ev),
        [
            call("get_weather", json!({"city": "Paris"})),
            call("get_time", json!({}))
        ]
    );
    assert_eq!(text(&ev), "");
    assert!(diagnostics(&ev).is_empty());
}

#[test]
fn hermes_fence_left_open_or_followed_by_prose() {
    // the model never closes the fence: the call still stands
    let ev = run("hermes", &format!("```xml\n<response>{WEATHER}</response>"));
    assert_eq!(calls(&ev).len(), 1);
    assert_eq!(text(&ev), "");
    let ev = run(
        "hermes",
        &format!("```xml\n<response>{WEATHER}</response>\nThat is all."),
    );
    assert_eq!(calls(&ev).len(), 1);
    assert_eq!(text(&ev), "\nThat is all.");
}

#[test]
fn hermes_fenced_markup_that_is_not_a_call_stays_text() {
    for input in [
        "```xml\n<response>Hello</response>\n```",
        "```xml\n<tools>\n  <tool name=\"x\"/>\n</tools>\n```",
        "```html\n<div>{}</div>\n```",
        "```\n<response>{\"status\": \"ok\"}</response>\n```",
    ] {
        let ev = run("hermes", input);
        assert!(calls(&ev).is_empty(), "{input:?}");
        assert_eq!(text(&ev), input, "{input:?}");
        assert!(diagnostics(&ev).is_empty(), "{input:?}");
    }
}

#[test]
fn hermes_definite_wrapper_in_a_fence_reports_its_failure() {
    let input = "```xml\n<tool_call>{\"name\": \"f\", \"arguments\": {x}}</tool_call>\n```";
    let ev = run("hermes", input);
    assert!(calls(&ev).is_empty());
    assert_eq!(text(&ev), input);
    assert_eq!(diagnostics(&ev).len(), 1, "{:?}", diagnostics(&ev));
}

#[test]
fn hermes_other_openers_inside_a_fence_are_still_found() {
    // `<function=` starts like `<function_call>`: the fence gives up and
    // the bytes it had matched are read again
    let input = "```\n<function=get_time>{}</function>\n```";
    let ev = run("hermes", input);
    assert_eq!(calls(&ev), [call("get_time", json!({}))]);
    assert_eq!(text(&ev), "```\n\n```");
}

/// A block that fails inside a literal gives the matched part back to be
/// read again: here `<` of the next `<tool_call>` was read as the start of
/// `</tool_call>`.
#[test]
fn a_partly_matched_literal_is_read_again_after_a_failure() {
    let input = format!("<tool_call>{WEATHER}<tool_call>{WEATHER}</tool_call>");
    let ev = run("hermes", &input);
    assert_eq!(calls(&ev), [call("get_weather", json!({"city": "Paris"}))]);
    assert_eq!(text(&ev), format!("<tool_call>{WEATHER}"));
    assert_eq!(diagnostics(&ev).len(), 1);
}

// ---------------------------------------------------------------------------
// 3. Mistral: `[TOOL_CALLS]name{json}` without `[ARGS]`

#[test]
fn mistral_name_then_object_without_args_marker() {
    for format in ["mistral", "mistral-v11", "auto"] {
        for input in [
            r#"[TOOL_CALLS]get_weather{"city": "Paris", "n": [1, {"a": "}"}]}"#,
            r#"[TOOL_CALLS] get_weather {"city": "Paris", "n": [1, {"a": "}"}]}"#,
            r#"[TOOL_CALLS]get_weather[ARGS]{"city": "Paris", "n": [1, {"a": "}"}]}"#,
        ] {
            let ev = run(format, input);
            assert_eq!(
                calls(&ev),
                [call(
                    "get_weather",
                    json!({"city": "Paris", "n": [1, {"a": "}"}]})
                )],
                "{format}: {input}"
            );
            assert_eq!(text(&ev), "", "{format}: {input}");
            assert!(diagnostics(&ev).is_empty(), "{format}: {input}");
        }
    }
}

#[test]
fn mistral_several_calls_without_args_marker_and_text_around() {
    let input = "Let me check.[TOOL_CALLS]get_weather{\"city\": \"Zürich\"}[TOOL_CALLS]get_time{}";
    for format in ["mistral", "mistral-v11"] {
        let ev = run(format, input);
        assert_eq!(
            calls(&ev),
            [
                call("get_weather", json!({"city": "Zürich"})),
                call("get_time", json!({}))
            ],
            "{format}"
        );
        assert_eq!(text(&ev), "Let me check.", "{format}");
    }
}

#[test]
fn mistral_call_id_then_object_without_args_marker() {
    let ev = run(
        "mistral-v11",
        r#"[TOOL_CALLS]get_time[CALL_ID]a1b2c3d4e{"tz": "UTC"}"#,
    );
    assert_eq!(calls(&ev), [call("get_time", json!({"tz": "UTC"}))]);
    assert!(ev
        .iter()
        .any(|e| matches!(e, Event::ToolCallEnd { id, .. } if id == "a1b2c3d4e")));
}

#[test]
fn mistral_array_form_still_wins_for_a_json_body() {
    let input =
        r#"[TOOL_CALLS][{"name": "a", "arguments": {}}, {"name": "b", "arguments": {"x": 1}}]"#;
    for format in ["mistral", "mistral-v11"] {
        let ev = run(format, input);
        assert_eq!(
            calls(&ev),
            [call("a", json!({})), call("b", json!({"x": 1}))],
            "{format}"
        );
    }
}

#[test]
fn mistral_name_without_any_arguments_is_reported() {
    let input = "[TOOL_CALLS]get_weather and then prose";
    let ev = run("mistral-v11", input);
    assert!(calls(&ev).is_empty());
    assert_eq!(text(&ev), input);
    assert_eq!(diagnostics(&ev).len(), 1);
}

// ---------------------------------------------------------------------------
// 4. json: llama.cpp's generic `{"response": "…"}` is the model's text

#[test]
fn json_response_envelope_is_decoded_text() {
    let cases = [
        (r#"{"response": "Hello, world!"}"#, "Hello, world!"),
        (
            r#"{"response": "line 1\nline 2\t\"quoted\" \\ \/ done"}"#,
            "line 1\nline 2\t\"quoted\" \\ / done",
        ),
        (
            r#"{"response": "Z\u00fcrich \ud83d\ude00 caf\u00E9 \u2603"}"#,
            "Zürich 😀 café ☃",
        ),
        (
            r#"{"response": "raw UTF-8: 東京 🎉"}"#,
            "raw UTF-8: 東京 🎉",
        ),
        (r#"{"response": ""}"#, ""),
        ("{\n  \"response\" : \"spaced\"\n}", "spaced"),
    ];
    for (input, want) in cases {
        let ev = run("json", input);
        assert_eq!(text(&ev), want, "{input}");
        assert!(calls(&ev).is_empty(), "{input}");
        assert!(
            diagnostics(&ev).is_empty(),
            "{input}: {:?}",
            diagnostics(&ev)
        );
        assert_eq!(
            ev.last(),
            Some(&Event::Done {
                finish_reason: toolscan::FinishReason::Stop
            })
        );
    }
}

#[test]
fn json_response_envelope_streams_as_it_is_decoded() {
    // text goes out before the envelope closes, whatever the chunking
    let input = r#"{"response": "abc\u00e9\ud83d\ude00 def"#;
    let mut p = parser("json", options());
    let mut ev = Vec::new();
    for b in input.as_bytes().chunks(1) {
        p.feed_into(b, &mut ev);
    }
    assert_eq!(text(&ev), "abcé😀 def");
    // split surrogate pairs and escapes hold nothing back once complete
    let mut p = parser("json", options());
    let ev = p.feed(br#"{"response": "x\ud83d"#);
    assert_eq!(text(&ev), "x");
}

#[test]
fn json_response_envelope_in_text_and_fences() {
    let input = "Answer:\n```json\n{\"response\": \"It is 42.\"}\n```\nBye";
    let ev = run("json", input);
    assert_eq!(text(&ev), "Answer:\nIt is 42.\nBye");
    assert!(diagnostics(&ev).is_empty());
    let ev = run("json", r#"{"response": "a"} and {"response": "b"}"#);
    assert_eq!(text(&ev), "a and b");
}

#[test]
fn json_other_envelopes_keep_working() {
    let ev = run(
        "json",
        r#"{"tool_calls": [{"name": "a", "arguments": {"x": 1}}, {"name": "b", "arguments": "{\"y\": 2}"}]}"#,
    );
    assert_eq!(
        calls(&ev),
        [call("a", json!({"x": 1})), call("b", json!({"y": 2}))]
    );
    assert_eq!(text(&ev), "");
    let ev = run("json", r#"{"tool_call": {"name": "a", "arguments": {}}}"#);
    assert_eq!(calls(&ev), [call("a", json!({}))]);
    assert_eq!(text(&ev), "");
    // text, then calls, in one envelope
    let ev = run(
        "json",
        r#"{"response": "Let me look.", "tool_calls": [{"name": "a", "arguments": {}}]}"#,
    );
    assert_eq!(text(&ev), "Let me look.");
    assert_eq!(calls(&ev), [call("a", json!({}))]);
    assert!(diagnostics(&ev).is_empty());
}

#[test]
fn json_objects_that_are_not_the_envelope_stay_json_text() {
    for input in [
        r#"{"response": 42}"#,
        r#"{"response": {"text": "x"}}"#,
        r#"[{"response": "x"}]"#,
        r#"{"answer": "x"}"#,
        r#"{"data": {"response": "x"}}"#,
    ] {
        let ev = run("json", input);
        assert_eq!(text(&ev), input, "{input}");
        assert!(diagnostics(&ev).is_empty(), "{input}");
    }
}

#[test]
fn json_response_envelope_that_breaks_or_is_cut_loses_nothing() {
    // broken inside an escape: the text decoded so far went out, the rest
    // comes back verbatim with a diagnostic
    let ev = run("json", r#"{"response": "ab\q tail"}"#);
    assert_eq!(text(&ev), r#"ab\q tail"}"#);
    assert_eq!(diagnostics(&ev).len(), 1, "{:?}", diagnostics(&ev));
    // cut off: the text so far, a truncation
    let ev = run("json", r#"{"response": "Hello wor"#);
    assert_eq!(text(&ev), "Hello wor");
    assert_eq!(
        ev.last(),
        Some(&Event::Done {
            finish_reason: toolscan::FinishReason::Length
        })
    );
    let ev = run("json", r#"{"response": "Hi \u00"#);
    assert_eq!(text(&ev), r#"Hi \u00"#);
}

#[test]
fn json_response_envelope_under_every_two_cut_split() {
    let input = r#"pre {"response": "a\"\u00e9\ud83d\ude00東"} post"#.as_bytes();
    let want = coalesce(run("json", std::str::from_utf8(input).unwrap()));
    assert_eq!(text(&want), "pre a\"é😀東 post");
    for a in 0..=input.len() {
        for b in a..=input.len() {
            let mut p = parser("json", options());
            let mut ev = Vec::new();
            for (x, y) in [(0, a), (a, b), (b, input.len())] {
                p.feed_into(&input[x..y], &mut ev);
            }
            p.finish_into(&mut ev);
            assert_eq!(coalesce(ev), want, "cuts {a} {b}");
        }
    }
}

#[test]
fn json_response_envelope_inside_reasoning_is_reasoning() {
    let opts = options().with_reasoning(true);
    let ev = run_with(
        "json",
        &opts,
        r#"<think>{"response": "hmm\n"}</think>{"response": "Yes."}"#,
    );
    let reasoning: String = ev
        .iter()
        .filter_map(|e| match e {
            Event::Reasoning { delta } => Some(delta.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(reasoning, "hmm\n");
    assert_eq!(text(&ev), "Yes.");
}

// ---------------------------------------------------------------------------
// 5. Integers beyond f64 precision stay exact

const BIG: &str = r#"{"id": 99999999999999999999, "neg": -123456789012345678901234567890, "f": 1.000000000000000000000001, "e": 1e400, "small": 12345678901234567}"#;

/// The numbers' text, as written, in the final arguments, in the deltas
/// (the harness checks they concatenate to them) and in the serialised
/// final response (`toolscan parse --output final`).
fn assert_exact(format: &str, input: &str) {
    let ev = run(format, input);
    let ends: Vec<&str> = ev
        .iter()
        .filter_map(|e| match e {
            Event::ToolCallEnd { arguments, .. } => Some(arguments.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(ends.len(), 1, "{format}: {input}: {ev:?}");
    let digits = [
        "99999999999999999999",
        "-123456789012345678901234567890",
        "1.000000000000000000000001",
        "1e400",
        "12345678901234567",
    ];
    for d in digits {
        assert!(ends[0].contains(d), "{format}: {d} in {}", ends[0]);
    }
    let final_json = serde_json::to_string(&Response::from_events(&ev)).unwrap();
    for d in digits {
        assert!(final_json.contains(d), "{format}: {d} in {final_json}");
    }
    // and the event itself, as `toolscan parse` writes it
    let end = ev
        .iter()
        .find(|e| matches!(e, Event::ToolCallEnd { .. }))
        .unwrap();
    let line = serde_json::to_string(end).unwrap();
    assert!(
        line.contains(r#""arguments":{"id":99999999999999999999,"#),
        "{line}"
    );
}

#[test]
fn big_numbers_stay_exact_in_every_json_format() {
    let escaped = serde_json::to_string(BIG).unwrap(); // arguments as a JSON string
    let cases = [
        (
            "hermes",
            format!(r#"<tool_call>{{"name": "f", "arguments": {BIG}}}</tool_call>"#),
        ),
        (
            "hermes",
            format!(r#"<tool_call>{{"name": "f", "arguments": {escaped}}}</tool_call>"#),
        ),
        ("mistral-v11", format!("[TOOL_CALLS]f[ARGS]{BIG}")),
        ("mistral-v11", format!("[TOOL_CALLS]f{BIG}")),
        (
            "mistral",
            format!(r#"[TOOL_CALLS][{{"name": "f", "arguments": {BIG}}}]"#),
        ),
        (
            "llama3-json",
            format!(r#"{{"name": "f", "parameters": {BIG}}}"#),
        ),
        ("deepseek-v3.1", format!("{S}{}{SE}", v31("f", BIG))),
        ("deepseek-v3", format!("{S}{}{SE}", v3("f", BIG))),
        (
            "json",
            format!(r#"{{"tool_calls": [{{"name": "f", "arguments": {escaped}}}]}}"#),
        ),
        ("json", format!(r#"{{"name": "f", "arguments": {BIG}}}"#)),
        (
            "run-module",
            format!(r#"[RUN_MODULE]{{"name": "f", "args": {BIG}}}[/RUN_MODULE]"#),
        ),
        (
            "tool-call-json",
            format!(r#"TOOL_CALL: {{'tool_name': 'f', 'parameters': {BIG}}}"#),
        ),
        (
            "auto",
            format!(r#"<tool_call>{{"name": "f", "arguments": {BIG}}}</tool_call>"#),
        ),
    ];
    for (format, input) in cases {
        assert_exact(format, &input);
    }
}

#[test]
fn big_numbers_as_they_stream() {
    // the digits arrive in argument deltas split anywhere; their
    // concatenation is the exact text
    let input = format!(r#"<tool_call>{{"name": "f", "arguments": {BIG}}}</tool_call>"#);
    let mut p = parser("hermes", options());
    let mut deltas = String::new();
    for b in input.as_bytes().chunks(3) {
        for e in p.feed(b) {
            if let Event::ToolCallArgs { delta, .. } = e {
                deltas.push_str(&delta);
            }
        }
    }
    assert_eq!(deltas, BIG);
}

// ---------------------------------------------------------------------------
// 6. A call object with two names is refused: never two names for one index

/// No end names another call than its start (the harness checks it), and
/// no call completes.
fn assert_refused(format: &str, input: &str, definite: bool) {
    let ev = run(format, input);
    assert!(calls(&ev).is_empty(), "{format}: {input}: {ev:?}");
    assert_eq!(text(&ev), input, "{format}: {input}");
    let d = diagnostics(&ev);
    if definite {
        assert_eq!(d.len(), 1, "{format}: {input}: {d:?}");
        assert!(d[0].contains("two names"), "{format}: {d:?}");
    } else {
        assert!(d.is_empty(), "{format}: {input}: {d:?}");
    }
    assert_eq!(
        ev.last(),
        Some(&Event::Done {
            finish_reason: toolscan::FinishReason::Stop
        })
    );
}

#[test]
fn two_name_keys_are_refused() {
    let objects = [
        r#"{"name": "a", "name": "b", "arguments": {}}"#,
        r#"{"name": "a", "arguments": {}, "name": "b"}"#,
        r#"{"arguments": {"x": 1}, "name": "a", "name": "b"}"#,
    ];
    for obj in objects {
        let params = obj.replace("arguments", "parameters");
        let args = obj.replace("arguments", "args");
        let cases = [
            ("hermes", format!("<tool_call>{obj}</tool_call>"), true),
            (
                "hermes",
                format!("<function_call>{obj}</function_call>"),
                true,
            ),
            ("hermes", format!("```json\n{obj}\n```"), false),
            ("hermes", format!("<response>{obj}</response>"), false),
            ("auto", format!("<tool_call>{obj}</tool_call>"), true),
            ("auto", format!("[RUN_MODULE]{args}[/RUN_MODULE]"), true),
            // a bare `{` opens no block under auto
            ("llama3-json", format!("<|python_tag|>{params}"), true),
            ("llama3-json", params.clone(), false),
            (
                "run-module",
                format!("[RUN_MODULE]{args}[/RUN_MODULE]"),
                true,
            ),
            ("tool-call-json", format!("TOOL_CALL: {params}"), true),
            ("json", obj.to_string(), false),
            ("mistral", format!("[TOOL_CALLS][{obj}]"), true),
        ];
        for (format, input, definite) in cases {
            // a tentative block that started a call before the second name
            // is reported too (it showed a call)
            let started = obj.find("arguments") < obj.rfind("\"name\"");
            assert_refused(format, &input, definite || started);
        }
        assert_refused("auto", obj, false);
    }
}

#[test]
fn other_name_keys_of_one_format_count_as_names_too() {
    // tool-call-json's `tool_name`, `tool` and `name`; run-module's `name`
    // and `module`
    for obj in [
        r#"{"tool_name": "a", "tool_name": "b", "parameters": {}}"#,
        r#"{"tool_name": "a", "name": "b", "parameters": {}}"#,
        r#"{'tool': 'a', 'tool_name': 'b', 'parameters': {}}"#,
    ] {
        assert_refused("tool-call-json", &format!("TOOL_CALL: {obj}"), true);
        assert_refused(
            "tool-call-json",
            &format!("TOOL_CALL\n```json\n{obj}\n```"),
            true,
        );
    }
    assert_refused(
        "run-module",
        r#"[RUN_MODULE]{"module": "a", "name": "b", "args": {}}[/RUN_MODULE]"#,
        true,
    );
}

#[test]
fn a_refused_bare_object_does_not_yield_the_calls_inside_it() {
    // the object is not a call: nothing inside it becomes one either
    let input = r#"{"name": "a", "name": "b", "parameters": {"name": "c", "parameters": {}}}"#;
    assert_refused("llama3-json", input, false);
    assert_refused("json", input, false);
}

#[test]
fn two_names_in_a_list_refuse_that_call_only() {
    let input = r#"[TOOL_CALLS][{"name": "ok", "arguments": {}}, {"name": "a", "name": "b", "arguments": {}}]"#;
    let ev = run("mistral", input);
    // the first call was dispatched when its object closed
    assert_eq!(calls(&ev), [call("ok", json!({}))]);
    assert_eq!(diagnostics(&ev).len(), 1);
}

// ---------------------------------------------------------------------------
// All of the above, shaken: random mixtures of the markup these fixes
// touch, under every chunking, must agree and stay well formed.

const ITERATIONS: usize = 1000;

#[test]
fn random_mixtures_agree_under_any_chunking() {
    const FRAGMENTS: &[&str] = &[
        S,
        C,
        SEP,
        CE,
        SE,
        EOS,
        "<｜tool▁calls｜>",
        "<｜tool▁ca",
        "function",
        "get_weather",
        "\n```json\n",
        "```",
        "```xml\n",
        "{\"city\": \"Paris\"}",
        "{\"city\": ",
        "{x}",
        "}",
        "<tool_call>",
        "</tool_call>",
        "<response>",
        "</response>",
        "{\"name\": \"f\", \"arguments\": {\"n\": 99999999999999999999}}",
        "{\"name\": \"a\", \"name\": \"b\", \"arguments\": {}}",
        "{\"response\": \"hi \\u00e9\\ud83d\\ude00\"}",
        "{\"response\": \"x\\",
        "[TOOL_CALLS]",
        "f{\"a\": 1}",
        "[ARGS]",
        "[CALL_ID]abc",
        "\n",
        " ",
        "prose é 東 ",
        "<function=g>{}</function>",
    ];
    let mut seed = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let formats = [
        "deepseek-v3",
        "deepseek-v3.1",
        "hermes",
        "mistral",
        "mistral-v11",
        "json",
        "llama3-json",
        "auto",
    ];
    for _ in 0..ITERATIONS {
        let n = 1 + (next() % 12) as usize;
        let input: String = (0..n)
            .map(|_| FRAGMENTS[(next() % FRAGMENTS.len() as u64) as usize])
            .collect();
        let format = formats[(next() % formats.len() as u64) as usize];
        let ev = run(format, &input);
        // nothing is lost: with no call recognised (and no text envelope,
        // whose framing is dropped), the text is the input
        if calls(&ev).is_empty() && !input.contains("response\"") {
            assert_eq!(text(&ev), input, "{format}");
        }
        // a random cut, twice
        for _ in 0..2 {
            let bytes = input.as_bytes();
            let cut = (next() % (bytes.len() as u64 + 1)) as usize;
            let mut p = parser(format, options());
            let mut got = p.feed(&bytes[..cut]);
            got.extend(p.feed(&bytes[cut..]));
            got.extend(p.finish());
            assert_eq!(coalesce(got), ev, "{format}: {input:?} cut at {cut}");
        }
    }
}
