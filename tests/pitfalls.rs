//! One test per known streaming pitfall (bugs seen in other streaming parsers, P1–P23) that
//! applies to the JSON-bodied formats: each shows toolscan does not have the
//! bug. (P16, dropped closing tags inside XML parameters, concerns the XML
//! formats and is tested with them.)

use serde_json::json;
use toolscan::{
    coalesce, format_for_model, parse, DiagnosticKind, Event, FinishReason, IdMint, Limits,
    Options, Parser, Registry, Response,
};
use toolscan_testkit::check::{args_of, check_events, nothing_lost, text_of};
use toolscan_testkit::chunk::{self, seeded as parser, Api, Plan};
use toolscan_testkit::rng::Rng;

/// Feeds `input` cut by `plan` (through `feed_into`) and checks the event
/// contract on the result.
fn feed_plan(format: &str, input: &[u8], plan: &Plan) -> Vec<Event> {
    let ev = chunk::feed(parser(format), Api::FeedInto, input, plan);
    check_events(&ev).unwrap_or_else(|e| panic!("{format} [{plan}] {input:?}: {e}"));
    ev
}

fn bytewise(format: &str, input: &str) -> Vec<Event> {
    feed_plan(format, input.as_bytes(), &Plan::fixed(input.len(), 1))
}

fn whole(format: &str, input: &str) -> Vec<Event> {
    feed_plan(format, input.as_bytes(), &Plan::whole(input.len()))
}

fn calls(ev: &[Event]) -> Vec<(String, serde_json::Value)> {
    Response::from_events(ev)
        .tool_calls
        .into_iter()
        .map(|c| {
            (
                c.name,
                serde_json::Value::Object(c.arguments.parse().expect("an object")),
            )
        })
        .collect()
}

fn text(ev: &[Event]) -> String {
    Response::from_events(ev).text
}

fn diagnostics(ev: &[Event]) -> Vec<DiagnosticKind> {
    Response::from_events(ev)
        .diagnostics
        .iter()
        .map(|d| d.kind)
        .collect()
}

#[test]
fn p01_split_markers_never_leak_and_holdback_is_released() {
    let input = "Sure.\n<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": 1}}\n</tool_call>\n<tool_ca is not a tag.";
    for ev in [bytewise("hermes", input), whole("hermes", input)] {
        assert_eq!(text(&ev), "Sure.\n\n<tool_ca is not a tag.");
        assert_eq!(calls(&ev), vec![("f".into(), json!({"a": 1}))]);
    }
    // Held back only while it may still be a marker, released the moment it
    // cannot.
    let mut p = parser("hermes");
    assert_eq!(text_of(&p.feed(b"a <tool_c")), "a ");
    assert_eq!(text_of(&p.feed(b"x")), "<tool_cx");
}

#[test]
fn p02_one_delta_with_several_whole_calls() {
    let two = "<tool_call>{\"name\": \"a\", \"arguments\": {}}</tool_call><tool_call>{\"name\": \"b\", \"arguments\": {\"x\": 2}}</tool_call>";
    let mut p = parser("hermes");
    let ev = p.feed(two.as_bytes());
    // both calls are complete within this one feed
    let ends = ev
        .iter()
        .filter(|e| matches!(e, Event::ToolCallEnd { .. }))
        .count();
    assert_eq!(ends, 2);
    let ds = "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_time\n```json\n{}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>";
    assert_eq!(
        calls(&whole("deepseek-v3", ds)),
        vec![("get_time".into(), json!({}))]
    );
}

#[test]
fn p03_every_two_cut_split_gives_the_same_events() {
    let input = "Hi [TOOL_CALLS]get_weather[ARGS]{\"city\": \"Zürich\"}[TOOL_CALLS]search[CALL_ID]abcDEF123[ARGS]{\"q\": \"東京 😀\"} bye";
    let b = input.as_bytes();
    let reference = coalesce(whole("mistral-v11", input));
    for i in 0..=b.len() {
        for j in i..=b.len() {
            let ev = feed_plan("mistral-v11", b, &Plan::cuts(b.len(), &[i, j]));
            assert_eq!(coalesce(ev), reference, "cuts at {i}, {j}");
        }
    }
}

#[test]
fn p04_argument_deltas_are_prefixes_never_auto_closed() {
    let input = "<tool_call>{\"name\": \"w\", \"arguments\": {\"code\": \"if (a) { b[0] = \\\"}\\\"; } // ]]}\", \"n\": [1, {\"m\": 2}]}}</tool_call>";
    let final_args = "{\"code\": \"if (a) { b[0] = \\\"}\\\"; } // ]]}\", \"n\": [1, {\"m\": 2}]}";
    let mut p = parser("hermes");
    let mut streamed = String::new();
    for piece in input.as_bytes().chunks(3) {
        for e in p.feed(piece) {
            if let Event::ToolCallArgs { delta, .. } = e {
                streamed.push_str(&delta);
            }
        }
        assert!(final_args.starts_with(&streamed), "{streamed:?}");
    }
    assert_eq!(streamed, final_args);
    // a partial value stays partial: nothing closes it speculatively
    let mut p = parser("hermes");
    let ev = p.feed(b"<tool_call>{\"name\": \"w\", \"arguments\": {\"a\": \"x");
    let args = args_of(&ev);
    assert_eq!(args, "{\"a\": \"x");
}

#[test]
fn p05_id_and_name_once_nothing_sent_twice() {
    let input = "[TOOL_CALLS][{\"name\": \"a\", \"arguments\": {\"x\": 1}, \"id\": \"abcDEF123\"}, {\"name\": \"b\", \"arguments\": {}}]";
    let ev = bytewise("mistral", input);
    let starts: Vec<_> = ev
        .iter()
        .filter_map(|e| match e {
            Event::ToolCallStart { index, id, name } => Some((*index, id.clone(), name.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(starts.len(), 2);
    assert_eq!(starts[0].1, "abcDEF123");
    // no args delta after its call's end (the event contract, which
    // `bytewise` checks, says so too)
    let mut ended = std::collections::HashSet::new();
    for e in &ev {
        match e {
            Event::ToolCallEnd { index, .. } => {
                ended.insert(*index);
            }
            Event::ToolCallArgs { index, .. } => assert!(!ended.contains(index)),
            _ => {}
        }
    }
}

#[test]
fn p06_closer_inside_a_string_does_not_end_the_call() {
    for (fmt, input) in [
        ("hermes", "<tool_call>{\"name\": \"w\", \"arguments\": {\"s\": \"a </tool_call> b\"}}</tool_call>"),
        ("function-tag", "<function=w>{\"s\": \"</function>\"}</function>"),
        ("run-module", "[RUN_MODULE]{\"name\": \"w\", \"args\": {\"s\": \"[/RUN_MODULE]\"}}[/RUN_MODULE]"),
    ] {
        let ev = bytewise(fmt, input);
        assert_eq!(calls(&ev).len(), 1, "{fmt}");
        assert_eq!(text(&ev), "", "{fmt}");
    }
}

#[test]
fn p07_deep_nesting_is_not_cut_by_a_regex() {
    let args = json!({"l1": {"l2": {"l3": {"l4": {"v": [[1], [2, [3, {"w": "}"}]]]}}}}});
    let input = format!("<|python_tag|>{{\"name\": \"deep\", \"parameters\": {args}}}");
    assert_eq!(
        calls(&bytewise("llama3-json", &input)),
        vec![("deep".into(), args)]
    );
}

#[test]
fn p08_utf8_and_surrogates_split_anywhere() {
    let input = "東京😀 <tool_call>{\"name\": \"m\", \"arguments\": {\"b\": \"\\ud83d\\ude00 😀 é\"}}</tool_call> ✅";
    let ev = bytewise("hermes", input);
    assert!(!format!("{ev:?}").contains('\u{FFFD}'));
    assert_eq!(text(&ev), "東京😀  ✅");
    assert_eq!(calls(&ev), vec![("m".into(), json!({"b": "😀 😀 é"}))]);
}

#[test]
fn p09_stop_at_or_inside_a_call() {
    let ev = bytewise("hermes", "Let me check.\n<tool_call>");
    assert_eq!(text(&ev), "Let me check.\n<tool_call>");
    assert_eq!(diagnostics(&ev), vec![DiagnosticKind::Truncated]);
    assert_eq!(
        Response::from_events(&ev).finish_reason,
        FinishReason::Length
    );
    let ev = bytewise("mistral", "Use the [TOOL_CALLS");
    assert_eq!(text(&ev), "Use the [TOOL_CALLS");
    assert!(diagnostics(&ev).is_empty());
    assert_eq!(Response::from_events(&ev).finish_reason, FinishReason::Stop);
}

#[test]
fn p10_end_marker_less_calls_complete_without_waiting_for_eos() {
    for (fmt, input) in [
        ("mistral-v11", "[TOOL_CALLS]f[ARGS]{\"a\": 1}"),
        ("tool-arguments", "TOOL: f\nARGUMENTS: {\"a\": 1}"),
        (
            "tool-call-json",
            "TOOL_CALL\n{\"tool_name\": \"f\", \"parameters\": {\"a\": 1}}",
        ),
    ] {
        let mut p = parser(fmt);
        let ev = p.feed(input.as_bytes());
        assert!(
            matches!(ev.last(), Some(Event::ToolCallEnd { .. })),
            "{fmt}: dispatched in the feed that closed the value"
        );
        let rest = p.finish();
        assert_eq!(
            rest,
            vec![Event::Done {
                finish_reason: FinishReason::ToolCalls
            }]
        );
    }
}

#[test]
fn p11_truncated_arguments_are_never_repaired_or_dispatched() {
    for (fmt, input) in [
        ("hermes", "<tool_call>\n{\"name\": \"run\", \"arguments\": {\"commands\": [\"npm install\", \"npm test\""),
        ("mistral-v11", "[TOOL_CALLS]run[ARGS]{\"commands\": [\"npm install\", \"npm test\"]"),
        ("json", "{\"name\": \"run\", \"arguments\": {\"commands\": [\"npm install\"]"),
    ] {
        let ev = bytewise(fmt, input);
        assert!(calls(&ev).is_empty(), "{fmt}");
        assert_eq!(text(&ev), input, "{fmt}: bytes come back verbatim");
        assert_eq!(Response::from_events(&ev).finish_reason, FinishReason::Length, "{fmt}");
        assert_eq!(diagnostics(&ev), vec![DiagnosticKind::Truncated], "{fmt}");
    }
}

#[test]
fn p12_parallel_calls_have_ordinal_indices_and_stable_unique_ids() {
    let input = "[TOOL_CALLS]a[CALL_ID]abcDEF123[ARGS]{}[TOOL_CALLS]b[ARGS]{}[TOOL_CALLS]c[CALL_ID]abcDEF123[ARGS]{}";
    let ev = bytewise("mistral-v11", input);
    let starts: Vec<(usize, String)> = ev
        .iter()
        .filter_map(|e| match e {
            Event::ToolCallStart { index, id, .. } => Some((*index, id.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(starts.iter().map(|s| s.0).collect::<Vec<_>>(), [0, 1, 2]);
    assert_eq!(starts[0].1, "abcDEF123");
    // a repeated in-text id is replaced so ids stay unique
    assert_ne!(starts[2].1, "abcDEF123");
    // Mistral back-ends need 9-alphanumeric ids
    let mut p = Parser::new(
        Registry::builtin().grammar("mistral-v11").unwrap(),
        Options::new().with_ids(IdMint::Mistral(1)),
    );
    let ev = p.feed(b"[TOOL_CALLS]a[ARGS]{}");
    let Some(Event::ToolCallStart { id, .. }) = ev.first() else {
        panic!("{ev:?}")
    };
    assert!(id.len() == 9 && id.bytes().all(|b| b.is_ascii_alphanumeric()));
}

#[test]
fn p13_zero_argument_calls_keep_an_empty_object() {
    for (fmt, input) in [
        ("hermes", "<tool_call>{\"name\": \"t\"}</tool_call>"),
        (
            "hermes",
            "<tool_call>{\"name\": \"t\", \"arguments\": {}}</tool_call>",
        ),
        (
            "tool-call-json",
            "TOOL_CALL\n{\"tool_name\": \"t\", \"parameters\": null}",
        ),
    ] {
        let ev = bytewise(fmt, input);
        assert_eq!(calls(&ev), vec![("t".into(), json!({}))], "{fmt}");
        let args = args_of(&ev);
        assert_eq!(args, "{}", "{fmt}");
    }
}

#[test]
fn p14_a_failed_block_does_not_swallow_the_rest() {
    let input = "<tool_call>\nnot json at all\n</tool_call>\nStill here.\n<tool_call>{\"name\": \"f\", \"arguments\": {}}</tool_call>\nAnd after.";
    let ev = bytewise("hermes", input);
    assert_eq!(
        text(&ev),
        "<tool_call>\nnot json at all\n</tool_call>\nStill here.\n\nAnd after."
    );
    assert_eq!(calls(&ev).len(), 1);
    assert_eq!(diagnostics(&ev), vec![DiagnosticKind::Malformed]);
    // A marker mentioned in prose does not hold the answer back: the text is
    // out as soon as the next byte shows it is not a call.
    let mut p = parser("hermes");
    let ev = p.feed(b"Models emit <tool_call> tags");
    assert_eq!(text_of(&ev), "Models emit <tool_call> tags");
}

#[test]
fn p15_calls_inside_and_after_reasoning() {
    let quoted = "<tool_call>{\"name\": \"a\", \"arguments\": {}}</tool_call>";
    let input = format!("<think>\nI should call it. {quoted}\n</think>\n<tool_call>{{\"name\": \"b\", \"arguments\": {{}}}}</tool_call>");
    // reasoning separation off: the block is text, the call inside it too
    // (contract §1: call markup inside reasoning is reasoning)
    let ev = bytewise("hermes", &input);
    assert_eq!(calls(&ev).len(), 1);
    assert!(text(&ev).starts_with(&format!("<think>\nI should call it. {quoted}\n</think>")));
    // on: reasoning events, markup dropped, the call after it found
    let p = chunk::parser("hermes", Options::new().with_reasoning(true));
    let ev = chunk::feed(
        p,
        Api::FeedInto,
        input.as_bytes(),
        &Plan::fixed(input.len(), 1),
    );
    check_events(&ev).unwrap();
    let r = Response::from_events(&ev);
    assert_eq!(
        r.reasoning.as_deref(),
        Some(format!("\nI should call it. {quoted}\n").as_str())
    );
    assert_eq!(r.text, "\n");
    assert_eq!(r.tool_calls.len(), 1);
    assert_eq!(r.tool_calls[0].name, "b");
    // asked for: calls inside reasoning are calls
    let p = chunk::parser(
        "hermes",
        Options::new()
            .with_reasoning(true)
            .with_calls_in_reasoning(toolscan::CallsInReasoning::Call),
    );
    let ev = chunk::feed(
        p,
        Api::FeedInto,
        input.as_bytes(),
        &Plan::fixed(input.len(), 1),
    );
    let r = Response::from_events(&ev);
    assert_eq!(r.reasoning.as_deref(), Some("\nI should call it. \n"));
    assert_eq!(r.tool_calls.len(), 2);
    // a completion that starts inside reasoning (the opening tag was in the prompt)
    let g = Registry::builtin().grammar("hermes").unwrap();
    let o = Options::new()
        .with_reasoning(true)
        .with_starts_in_reasoning(true);
    let r = parse(g, o, b"thinking...</think>Answer.");
    assert_eq!(r.reasoning.as_deref(), Some("thinking..."));
    assert_eq!(r.text, "Answer.");
}

#[test]
fn p17_a_large_argument_in_one_byte_chunks() {
    let content: String = (0..20_000)
        .map(|i| format!("line {i}: café \"q\" {{x}} 😀\n"))
        .collect();
    let args = json!({"path": "big.txt", "content": content});
    let input = format!("<tool_call>{{\"name\": \"write\", \"arguments\": {args}}}</tool_call>");
    assert!(input.len() > 500_000);
    let ev = bytewise("hermes", &input);
    assert_eq!(calls(&ev), vec![("write".into(), args)]);
}

#[test]
fn p18_arguments_stream_before_the_call_ends() {
    let mut p = parser("hermes");
    let ev = p.feed(b"<tool_call>{\"name\": \"w\", \"arguments\": {\"content\": \"first half ");
    assert!(ev.iter().any(|e| matches!(e, Event::ToolCallStart { .. })));
    assert!(ev
        .iter()
        .any(|e| matches!(e, Event::ToolCallArgs { delta, .. } if delta.contains("first half"))));
    assert!(!ev.iter().any(|e| matches!(e, Event::ToolCallEnd { .. })));
}

#[test]
fn p19_stripped_special_tokens_are_text_by_default() {
    let ev = bytewise("mistral-v11", "get_weather{\"city\": \"Zürich\"}");
    assert_eq!(text(&ev), "get_weather{\"city\": \"Zürich\"}");
    assert!(calls(&ev).is_empty());
}

#[test]
fn p20_streaming_equals_non_streaming_text_around_calls() {
    let input = "Before.<function=f>{\"a\": 1}</function>Between.<function=g>{}</function>After.";
    let g = Registry::builtin().grammar("function-tag").unwrap();
    let one_shot = parse(
        g,
        Options::new().with_ids(IdMint::Seeded(0)),
        input.as_bytes(),
    );
    let streamed = Response::from_events(&bytewise("function-tag", input));
    assert_eq!(one_shot, streamed);
    assert_eq!(one_shot.text, "Before.Between.After.");
}

#[test]
fn p21_errors_do_not_poison_the_parser() {
    // a limit hit, a malformed block, then a good call
    let g = Registry::builtin().grammar("hermes").unwrap();
    let limits = Limits::new().with_max_depth(4);
    let mut p = Parser::new(g, Options::new().with_limits(limits));
    let mut ev =
        p.feed(b"<tool_call>{\"name\": \"a\", \"arguments\": {\"x\": [[[[1]]]]}}</tool_call>");
    ev.extend(p.feed(b"<tool_call>{\"name\": }</tool_call>"));
    ev.extend(p.feed(b"<tool_call>{\"name\": \"ok\", \"arguments\": {}}</tool_call>"));
    ev.extend(p.finish());
    assert_eq!(
        diagnostics(&ev),
        vec![DiagnosticKind::Limit, DiagnosticKind::Malformed]
    );
    assert_eq!(calls(&ev), vec![("ok".into(), json!({}))]);
    // arbitrary bytes never panic, in any format, meet the event contract
    // and, when no call completes, all come back as text
    let mut rng = Rng::new(0x1234_5678_9abc_def0);
    let alphabet: &[u8] =
        b"<>[]{}\":,tool_call/ TOOL:ARGUMENTS\n\\u0'\xef\xbd\x9c\xe2\x96\x81abc123";
    for format in Registry::builtin()
        .formats()
        .iter()
        .map(|f| f.name().to_string())
        .chain(["auto".to_string()])
    {
        for _ in 0..200 {
            let mut input = Vec::new();
            for _ in 0..64 {
                input.push(alphabet[rng.below(alphabet.len())]);
            }
            let ev = feed_plan(&format, &input, &Plan::cuts(input.len(), &[20]));
            if calls(&ev).is_empty() {
                nothing_lost(&ev, &input, &[]).unwrap_or_else(|e| panic!("{format}: {e}"));
            }
        }
    }
}

#[test]
fn p22_openai_calls_returned_as_content_become_calls_again() {
    let input = r#"{"tool_calls": [{"id": "call_x1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}]}"#;
    let ev = bytewise("json", input);
    let r = Response::from_events(&ev);
    assert_eq!(r.tool_calls[0].id, "call_x1");
    assert_eq!(r.tool_calls[0].arguments.parse().unwrap()["city"], "Paris");
    assert_eq!(r.finish_reason, FinishReason::ToolCalls);
}

#[test]
fn p23_format_selection_explicit_by_model_and_auto() {
    assert_eq!(format_for_model("Qwen/Qwen3-8B"), Some("hermes"));
    assert_eq!(format_for_model("Qwen/Qwen3.5-4B"), Some("qwen3-coder"));
    assert_eq!(
        format_for_model("mistralai/Mistral-Small-3.2-24B-Instruct-2506"),
        Some("mistral-v11")
    );
    // auto tells apart formats that share a marker by what follows it
    for input in [
        "[TOOL_CALLS][{\"name\": \"f\", \"arguments\": {}}]",
        "[TOOL_CALLS]f[ARGS]{}",
        "[TOOL_REQUEST]f {}[TOOL_REQUEST_END]",
        "[TOOL_REQUEST]{\"name\": \"f\", \"arguments\": {}}[END_TOOL_REQUEST]",
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>f<｜tool▁sep｜>{}<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\n{}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
    ] {
        assert_eq!(calls(&bytewise("auto", input)), vec![("f".into(), json!({}))], "{input}");
    }
    // the wrong format does not make the output vanish
    let xml = "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call>";
    let ev = bytewise("hermes", xml);
    assert_eq!(text(&ev), xml);
    assert!(!diagnostics(&ev).is_empty());
}
