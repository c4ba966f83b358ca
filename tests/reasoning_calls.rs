//! Call markup inside reasoning (`Options::calls_in_reasoning`, contract
//! §1): by default it is reasoning — models quote and draft calls while
//! they think, and dispatching those runs a tool twice — except inside a
//! reasoning block the stream never closes, where the calls are held and
//! dispatched at `finish`. `CallsInReasoning::Call` keeps every call a
//! call at once.
//!
//! Every input runs under every chunking and feeding API
//! (`chunk::events_everywhere`), which also checks the event contract and
//! that `parse` gives the same.

use serde_json::json;
use toolscan::{
    CallsInReasoning, DiagnosticKind, Event, FinishReason, Limits, Options, Parser, Registry,
    Response,
};
use toolscan_testkit::check::{calls_of, diagnostics_of, text_of};
use toolscan_testkit::chunk;

fn opts() -> Options {
    chunk::seeded_options()
}

fn run_with(format: &str, options: &Options, input: &str) -> Vec<Event> {
    chunk::events_everywhere(format, options, input)
}

fn reasoning_of(ev: &[Event]) -> String {
    ev.iter()
        .filter_map(|e| match e {
            Event::Reasoning { delta } => Some(delta.as_str()),
            _ => None,
        })
        .collect()
}

fn ends(ev: &[Event]) -> usize {
    ev.iter()
        .filter(|e| matches!(e, Event::ToolCallEnd { .. }))
        .count()
}

fn finish_reason(ev: &[Event]) -> Option<FinishReason> {
    match ev.last() {
        Some(Event::Done { finish_reason }) => Some(*finish_reason),
        _ => None,
    }
}

/// A Seed-OSS call (the F26 body: Qwen-XML parameters).
fn seed_call(city: &str) -> String {
    format!(
        "<seed:tool_call>\n<function=get_weather>\n<parameter=city>{city}</parameter>\n</function>\n</seed:tool_call>"
    )
}

/// The Seed-OSS transcript of the issue: the model spells the call syntax
/// out while thinking, then makes the call.
fn seed_transcript() -> (String, String) {
    let quoted = seed_call("CITY");
    let thinking = format!(
        "The user wants the weather in Paris. The tool is called like this:\n{quoted}\nso I fill in the city."
    );
    let input = format!("<seed:think>{thinking}</seed:think>{}", seed_call("Paris"));
    (input, thinking)
}

#[test]
fn a_call_quoted_inside_closed_reasoning_is_not_dispatched() {
    let (input, thinking) = seed_transcript();
    // Separation on: the quote is reasoning, verbatim; one call.
    let ev = run_with("seed-oss", &opts().with_reasoning(true), &input);
    assert_eq!(
        calls_of(&ev),
        vec![("get_weather".into(), json!({"city": "Paris"}))]
    );
    assert_eq!(reasoning_of(&ev), thinking);
    assert_eq!(text_of(&ev), "");
    assert!(diagnostics_of(&ev).is_empty(), "{ev:?}");
    // Off: the whole reasoning block is text, the quote inside it too.
    let ev = run_with("seed-oss", &opts(), &input);
    assert_eq!(calls_of(&ev).len(), 1);
    assert_eq!(text_of(&ev), format!("<seed:think>{thinking}</seed:think>"));
    assert!(diagnostics_of(&ev).is_empty(), "{ev:?}");
    // And under `auto`.
    let ev = run_with("auto", &opts().with_reasoning(true), &input);
    assert_eq!(calls_of(&ev).len(), 1);
    assert_eq!(reasoning_of(&ev), thinking);
}

#[test]
fn calls_in_reasoning_call_dispatches_calls_inside_reasoning_at_once() {
    let (input, _) = seed_transcript();
    let o = opts()
        .with_reasoning(true)
        .with_calls_in_reasoning(CallsInReasoning::Call);
    let ev = run_with("seed-oss", &o, &input);
    assert_eq!(
        calls_of(&ev),
        vec![
            ("get_weather".into(), json!({"city": "CITY"})),
            ("get_weather".into(), json!({"city": "Paris"}))
        ]
    );
    // The quoted call is dispatched in the feed that completes it.
    let g = Registry::builtin().grammar("seed-oss").unwrap();
    let mut p = Parser::new(g, o);
    let cut = input.find("\nso I fill").unwrap();
    assert_eq!(ends(&p.feed(&input.as_bytes()[..cut])), 1);
}

#[test]
fn a_call_in_reasoning_the_stream_never_closes_is_dispatched_at_finish() {
    let input = format!("<seed:think>Let me look it up.\n{}", seed_call("Paris"));
    for reasoning in [false, true] {
        let o = opts().with_reasoning(reasoning);
        let ev = run_with("seed-oss", &o, &input);
        assert_eq!(
            calls_of(&ev),
            vec![("get_weather".into(), json!({"city": "Paris"}))]
        );
        assert_eq!(finish_reason(&ev), Some(FinishReason::ToolCalls));
        assert!(diagnostics_of(&ev).is_empty(), "{ev:?}");
        // The closer could still have come: nothing of the call is sent
        // before `finish`, and the reasoning before it is not held.
        let g = Registry::builtin().grammar("seed-oss").unwrap();
        let mut p = Parser::new(g, o);
        let fed = p.feed(input.as_bytes());
        assert!(
            !fed.iter().any(|e| matches!(
                e,
                Event::ToolCallStart { .. }
                    | Event::ToolCallArgs { .. }
                    | Event::ToolCallEnd { .. }
            )),
            "{fed:?}"
        );
        let before = if reasoning {
            reasoning_of(&fed)
        } else {
            text_of(&fed)
        };
        assert!(before.ends_with("Let me look it up.\n"), "{before:?}");
        assert_eq!(ends(&p.finish()), 1);
    }
}

#[test]
fn reasoning_after_a_held_call_comes_after_it_at_finish() {
    // Qwen3.5 dropping `</think>` (llama.cpp #21118): the call and the
    // reasoning around it keep their order.
    let input = "<think>Need the weather.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>\nwaiting";
    let ev = run_with("hermes", &opts().with_reasoning(true), input);
    let kinds: Vec<&str> = ev
        .iter()
        .filter_map(|e| match e {
            Event::Reasoning { .. } => Some("reasoning"),
            Event::ToolCallEnd { .. } => Some("call"),
            _ => None,
        })
        .collect();
    assert_eq!(kinds, ["reasoning", "call", "reasoning"]);
    assert_eq!(reasoning_of(&ev), "Need the weather.\n\nwaiting");
}

#[test]
fn a_quoted_call_uses_up_no_index_or_id() {
    let call = "<tool_call>{\"name\": \"f\", \"arguments\": {\"a\": 1}}</tool_call>";
    let quoted = format!("<think>Writing {call} twice: {call}</think>{call}");
    let plain = format!("<think>Writing.</think>{call}");
    for reasoning in [false, true] {
        let o = opts().with_reasoning(reasoning);
        let q = run_with("hermes", &o, &quoted);
        let p = run_with("hermes", &o, &plain);
        let starts = |ev: &[Event]| -> Vec<(usize, String)> {
            ev.iter()
                .filter_map(|e| match e {
                    Event::ToolCallStart { index, id, .. } => Some((*index, id.clone())),
                    _ => None,
                })
                .collect()
        };
        assert_eq!(starts(&q), starts(&p));
        assert_eq!(starts(&q)[0].0, 0);
    }
    // Ids the calls carry themselves are not used up either: the real call
    // keeps its own.
    let call = "<|tool_calls_section_begin|><|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{}<|tool_call_end|><|tool_calls_section_end|>";
    let ev = run_with("kimi-k2", &opts(), &format!("<think>{call}</think>{call}"));
    let r = Response::from_events(&ev);
    assert_eq!(r.tool_calls.len(), 1);
    assert_eq!(r.tool_calls[0].id, "functions.f:0");
}

#[test]
fn markup_named_in_reasoning_does_not_hold_it_back() {
    // A marker that opens no call: the reasoning after it goes out as soon
    // as the block fails, not at the reasoning's end.
    let g = Registry::builtin().grammar("hermes").unwrap();
    let mut p = Parser::new(g, opts().with_reasoning(true));
    let ev = p.feed(b"<think>I wrap calls in <tool_call> tags, then ");
    assert_eq!(reasoning_of(&ev), "I wrap calls in <tool_call> tags, then ");
    // Plain reasoning is never held.
    let ev = p.feed(b"more thoughts");
    assert_eq!(reasoning_of(&ev), "more thoughts");
    let ev = [ev, p.finish()].concat();
    assert!(diagnostics_of(&ev).is_empty(), "{ev:?}");
    // The same under every chunking, with no diagnostic for the failed
    // block (it is reasoning, not a call that failed).
    let input = "<think>I wrap calls in <tool_call> tags.</think>Done.";
    let ev = run_with("hermes", &opts().with_reasoning(true), input);
    assert_eq!(reasoning_of(&ev), "I wrap calls in <tool_call> tags.");
    assert!(diagnostics_of(&ev).is_empty(), "{ev:?}");
}

#[test]
fn a_call_quoted_unfinished_inside_reasoning_starts_no_call() {
    // The quote breaks off where the reasoning closes: no event of a call
    // (not even its start), no diagnostic, the index unused.
    let call = "<tool_call>{\"name\": \"f\", \"arguments\": {}}</tool_call>";
    let input = format!("<think>Send <tool_call>{{\"name\": \"f\", \"argu</think>{call}");
    for reasoning in [false, true] {
        let ev = run_with("hermes", &opts().with_reasoning(reasoning), &input);
        let starts: Vec<usize> = ev
            .iter()
            .filter_map(|e| match e {
                Event::ToolCallStart { index, .. } => Some(*index),
                _ => None,
            })
            .collect();
        assert_eq!(starts, [0], "{ev:?}");
        assert!(diagnostics_of(&ev).is_empty(), "{ev:?}");
        let quoted = "Send <tool_call>{\"name\": \"f\", \"argu";
        if reasoning {
            assert_eq!(reasoning_of(&ev), quoted);
        } else {
            assert_eq!(text_of(&ev), format!("<think>{quoted}</think>"));
        }
    }
}

#[test]
fn a_completion_that_starts_inside_reasoning_quotes_calls_too() {
    let call = "<tool_call>{\"name\": \"f\", \"arguments\": {}}</tool_call>";
    let input = format!("I could send {call}.</think>\n\n{call}");
    let o = opts().with_starts_in_reasoning(true);
    let ev = run_with("hermes", &o.clone().with_reasoning(true), &input);
    assert_eq!(ends(&ev), 1);
    assert_eq!(reasoning_of(&ev), format!("I could send {call}."));
    // Separation off: the opening tag was in the prompt, still a block.
    let ev = run_with("hermes", &o, &input);
    assert_eq!(ends(&ev), 1);
    assert_eq!(text_of(&ev), format!("I could send {call}.</think>\n\n"));
}

#[test]
fn every_family_reasoning_marker_holds_the_calls_inside_it() {
    let cases = [
        (
            "hermes",
            "<think>",
            "</think>",
            "<tool_call>{\"name\": \"f\", \"arguments\": {\"x\": 1}}</tool_call>",
        ),
        (
            "mistral-v11",
            "[THINK]",
            "[/THINK]",
            "[TOOL_CALLS]f[ARGS]{\"x\": 1}",
        ),
        (
            "seed-oss",
            "<seed:think>",
            "</seed:think>",
            "<seed:tool_call>\n<function=f>\n<parameter=x>1</parameter>\n</function>\n</seed:tool_call>",
        ),
        (
            "command-r7b",
            "<|START_THINKING|>",
            "<|END_THINKING|>",
            "<|START_ACTION|>[{\"tool_call_id\": \"0\", \"tool_name\": \"f\", \"parameters\": {\"x\": 1}}]<|END_ACTION|>",
        ),
        (
            "gemma4",
            "<|channel>thought",
            "<channel|>",
            "<|tool_call>call:f{x:1}<tool_call|>",
        ),
        (
            "kimi-k2",
            "<think>",
            "</think>",
            "<|tool_calls_section_begin|><|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{\"x\": 1}<|tool_call_end|><|tool_calls_section_end|>",
        ),
    ];
    for (format, open, close, call) in cases {
        for reasoning in [false, true] {
            let o = opts().with_reasoning(reasoning);
            // Closed: the call is reasoning, verbatim.
            let input = format!("{open}Like {call} this.{close}Answer.");
            let ev = run_with(format, &o, &input);
            assert_eq!(ends(&ev), 0, "{format} {reasoning}: {ev:?}");
            let want = if reasoning {
                format!("Like {call} this.")
            } else {
                String::new()
            };
            assert_eq!(reasoning_of(&ev), want, "{format}");
            assert!(diagnostics_of(&ev).is_empty(), "{format}: {ev:?}");
            // Closed in the middle of the quoted call: all of it reasoning.
            for cut in [call.len() / 3, call.len() / 2, call.len() - 1] {
                let half = &call[..cut];
                let input = format!("{open}Like {half}{close}Answer.");
                let ev = run_with(format, &o, &input);
                assert_eq!(ends(&ev), 0, "{format} {reasoning}: {ev:?}");
                assert!(diagnostics_of(&ev).is_empty(), "{format}: {ev:?}");
                if reasoning {
                    assert_eq!(reasoning_of(&ev), format!("Like {half}"), "{format}");
                    assert_eq!(text_of(&ev), "Answer.", "{format}");
                } else {
                    assert_eq!(text_of(&ev), input, "{format}");
                }
            }
            // Never closed: the call is a call, at the end.
            let input = format!("{open}Calling.{call}");
            let ev = run_with(format, &o, &input);
            assert_eq!(
                calls_of(&ev),
                vec![("f".into(), json!({"x": 1}))],
                "{format} {reasoning}"
            );
        }
    }
}

#[test]
fn a_hold_ends_at_its_limit_exactly() {
    // After a held call, at most `max_holdback` bytes of reasoning may
    // follow before the call is taken as quoted.
    let call = "<tool_call>{\"name\": \"f\", \"arguments\": {}}</tool_call>";
    let limits = Limits::new().with_max_holdback(40);
    let o = opts().with_reasoning(true).with_limits(limits);
    let at_limit = format!("<think>So: {call}{}", "x".repeat(40));
    let ev = run_with("hermes", &o, &at_limit);
    assert_eq!(ends(&ev), 1, "{ev:?}");
    let past = format!("{at_limit}y");
    let ev = run_with("hermes", &o, &past);
    assert_eq!(ends(&ev), 0, "{ev:?}");
    let diags = diagnostics_of(&ev);
    let limit_at = ("<think>So: ".len() + call.len() + 40) as u64;
    assert_eq!(diags, vec![(DiagnosticKind::Limit, limit_at)]);
    assert_eq!(reasoning_of(&ev), format!("So: {call}{}y", "x".repeat(40)));
    assert_eq!(finish_reason(&ev), Some(FinishReason::Stop));
    // After the hold ended, reasoning flows again, and a later call is
    // held anew.
    let later = format!("{past} then {call}");
    let ev = run_with("hermes", &o, &later);
    assert_eq!(ends(&ev), 1, "{ev:?}");
    // The whole hold is bounded by `max_call_bytes` too.
    let limits = Limits::new().with_max_call_bytes(100);
    let o = opts().with_reasoning(true).with_limits(limits);
    let two = format!("<think>{call} {call} and more");
    let ev = run_with("hermes", &o, &two);
    assert_eq!(ends(&ev), 0, "{ev:?}");
    // (the second call ends past the bound: the next byte ends the hold)
    let at = ("<think>".len() + 2 * call.len() + 1) as u64;
    assert_eq!(diagnostics_of(&ev), vec![(DiagnosticKind::Limit, at)]);
    assert_eq!(reasoning_of(&ev), format!("{call} {call} and more"));
}

#[test]
fn a_failed_call_after_a_held_one_is_reasoning_when_the_block_closes() {
    let good = "<tool_call>{\"name\": \"f\", \"arguments\": {}}</tool_call>";
    let bad = "<tool_call>{\"name\": \"g\", oops}</tool_call>";
    let o = opts().with_reasoning(true);
    let closed = format!("<think>{good} and {bad}</think>ok");
    let ev = run_with("hermes", &o, &closed);
    assert_eq!(ends(&ev), 0);
    assert!(diagnostics_of(&ev).is_empty(), "{ev:?}");
    assert_eq!(reasoning_of(&ev), format!("{good} and {bad}"));
    assert_eq!(text_of(&ev), "ok");
    // Never closed: the good call is a call, the bad one is reported.
    let open = format!("<think>{good} and {bad}");
    let ev = run_with("hermes", &o, &open);
    assert_eq!(calls_of(&ev), vec![("f".into(), json!({}))]);
    assert_eq!(diagnostics_of(&ev).len(), 1);
    assert_eq!(diagnostics_of(&ev)[0].0, DiagnosticKind::Malformed);
}

#[test]
fn invalid_utf8_inside_a_quoted_call_is_replaced_once() {
    let mut input =
        b"<think><tool_call>{\"name\": \"f\", \"arguments\": {}}</tool_call> caf".to_vec();
    input.extend_from_slice(&[0xC3, b'!', 0xFF]);
    input.extend_from_slice(b"</think>x");
    let o = opts().with_reasoning(true);
    let ev = chunk::invariant(|| chunk::parser("hermes", o.clone()), &input).unwrap();
    assert_eq!(ends(&ev), 0);
    assert_eq!(
        diagnostics_of(&ev).iter().map(|d| d.0).collect::<Vec<_>>(),
        [DiagnosticKind::InvalidUtf8, DiagnosticKind::InvalidUtf8]
    );
    assert!(reasoning_of(&ev).ends_with(" caf\u{FFFD}!\u{FFFD}"));
}

#[test]
fn nothing_is_lost_around_quoted_calls() {
    // Separation off: every byte is text or a dispatched call's span.
    let (input, _) = seed_transcript();
    let ev = run_with("seed-oss", &opts(), &input);
    let call = seed_call("Paris");
    assert_eq!(format!("{}{call}", text_of(&ev)), input);
    // On: reasoning, text and the call's span, with only the reasoning
    // markers dropped.
    let ev = run_with("seed-oss", &opts().with_reasoning(true), &input);
    assert_eq!(
        format!(
            "<seed:think>{}</seed:think>{}{call}",
            reasoning_of(&ev),
            text_of(&ev)
        ),
        input
    );
}

#[test]
fn random_mixtures_of_reasoning_and_calls_keep_the_contract() {
    // Reasoning markers, whole and broken calls, prose and multi-byte text
    // in random order, under `auto`, every option: the same events under
    // every chunking and API, the contract's structure, and what `parse`
    // gives.
    let pieces = [
        "<think>",
        "</think>",
        "<seed:think>",
        "</seed:think>",
        "[THINK]",
        "[/THINK]",
        "<tool_call>{\"name\": \"f\", \"arguments\": {\"a\": 1}}</tool_call>",
        "<tool_call>{\"name\": \"g\", \"argu",
        "<seed:tool_call>\n<function=h>\n<parameter=q>1</parameter>\n</function>\n</seed:tool_call>",
        "<seed:tool_call>\n<function=h>\n<parameter=q>1",
        "[TOOL_CALLS]k[ARGS]{\"b\": [1, 2]}",
        "{\"response\": \"hi\"}",
        "```json\n{\"name\": \"f\", \"arguments\": {}}\n```",
        "<|channel>thought",
        "<channel|>",
        "<|tool_call>call:f{x:1}<tool_call|>",
        "\"</think>\"",
        "<tool_call>\n<function=f>\n<parameter=a>\nv</think>\n</parameter>\n</function>\n</tool_call>",
        "prose é 東京 ",
        "\n",
        "<",
        "<tool",
    ];
    let mut rng = toolscan_testkit::rng::Rng::new(15);
    for round in 0..150 {
        let n = 1 + rng.below(8);
        let input: String = (0..n).map(|_| pieces[rng.below(pieces.len())]).collect();
        for reasoning in [false, true] {
            for calls in [CallsInReasoning::Text, CallsInReasoning::Call] {
                let o = opts()
                    .with_reasoning(reasoning)
                    .with_calls_in_reasoning(calls)
                    .with_starts_in_reasoning(round % 3 == 0);
                run_with("auto", &o, &input);
            }
        }
    }
}
