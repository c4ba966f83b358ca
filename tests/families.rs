//! The model families added as declarations — JSON in their own markers,
//! Harmony's message headers, Kimi K2's ids, Functionary's recipient lines —
//! and the pieces of the format language they brought: framing markup,
//! reasoning switched by a program, markup keywords, ids that hold the
//! name, `{NAME: ARGS}` objects, programs that run at the start of the
//! stream. Every input is checked under every chunking.

use serde_json::json;
use toolscan_core::{DiagnosticKind, Event, Format, Options, Parser, Registry, Response};
use toolscan_testkit::check::{calls_of, diagnostics_of, text_of};
use toolscan_testkit::chunk::{self};

/// Events of `input` under `format`, the same under every chunking and
/// API, and what `parse` gives.
fn run_with(format: &str, options: Options, input: &str) -> Vec<Event> {
    let options = options.with_ids(chunk::seeded_options().ids);
    chunk::events_everywhere(format, &options, input)
}

fn run(format: &str, input: &str) -> Vec<Event> {
    run_with(format, Options::new(), input)
}

fn ids(ev: &[Event]) -> Vec<String> {
    ev.iter()
        .filter_map(|e| match e {
            Event::ToolCallEnd { id, .. } => Some(id.clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn harmony_headers_are_markup_and_analysis_is_reasoning() {
    let input = "<|channel|>analysis<|message|>Need the weather.<|end|>\
        <|start|>assistant<|channel|>commentary<|message|>Checking.<|end|>\
        <|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\"city\":\"Paris\"}<|call|>";
    // The analysis channel is reasoning, up to its message's end, with
    // reasoning separation off (the default) or on: the channel is the
    // format's own marking (issue 29, item 11). The other contents are
    // text, the headers never are.
    for options in [Options::new(), Options::new().with_reasoning(true)] {
        let ev = run_with("harmony", options, input);
        let r = Response::from_events(&ev);
        assert_eq!(r.reasoning.as_deref(), Some("Need the weather."));
        assert_eq!(r.text, "Checking.");
        assert_eq!(
            calls_of(&ev),
            vec![("get_weather".into(), json!({"city": "Paris"}))]
        );
        assert!(diagnostics_of(&ev).is_empty());
    }
}

#[test]
fn harmony_final_channel_and_the_hf_template_header() {
    let ev = run(
        "harmony",
        "<|channel|>commentary to=functions.f json<|message|>{}<|call|>\
         <|start|>assistant<|channel|>final<|message|>Done.<|return|>",
    );
    assert_eq!(text_of(&ev), "Done.");
    assert_eq!(calls_of(&ev), vec![("f".into(), json!({}))]);
    // The call is dispatched when its JSON closes: `<|call|>` is a stop
    // token servers strip.
    let mut p = Parser::new(
        Registry::builtin().grammar("harmony").unwrap(),
        Options::new(),
    );
    let ev = p.feed(b"<|channel|>commentary to=functions.f <|constrain|>json<|message|>{\"a\": 1}");
    assert_eq!(calls_of(&ev), vec![("f".into(), json!({"a": 1}))]);
}

#[test]
fn harmony_header_that_is_no_header_is_text_with_a_diagnostic() {
    let ev = run("harmony", "Use <|channel|>weather please");
    assert_eq!(text_of(&ev), "Use <|channel|>weather please");
    assert_eq!(diagnostics_of(&ev).len(), 1);
}

#[test]
fn kimi_k2_ids_name_the_tool_and_a_bad_call_does_not_end_the_section() {
    let input = "<|tool_calls_section_begin|>\
        <|tool_call_begin|> functions.search:7 <|tool_call_argument_begin|>{\"q\": 1}<|tool_call_end|>\
        <|tool_call_begin|>functions.oops<|tool_call_argument_begin|>{}<|tool_call_end|>\
        <|tool_call_begin|>get_time:8<|tool_call_argument_begin|>{}<|tool_call_end|>\
        <|tool_calls_section_end|>";
    let ev = run("kimi-k2", input);
    assert_eq!(
        calls_of(&ev),
        vec![
            ("search".into(), json!({"q": 1})),
            ("get_time".into(), json!({}))
        ]
    );
    assert_eq!(ids(&ev), ["functions.search:7", "get_time:8"]);
    // The call whose id has no index is text, with one diagnostic.
    assert_eq!(
        text_of(&ev),
        "<|tool_call_begin|>functions.oops<|tool_call_argument_begin|>{}<|tool_call_end|>"
    );
    assert_eq!(diagnostics_of(&ev).len(), 1);
}

#[test]
fn functionary_recipients_start_the_stream_and_follow_markers() {
    // `all` is a recipient, not a tool: what follows it is text.
    let ev = run(
        "functionary-v3.2",
        "all\nSure.>>>f\n{\"a\": 1}\n>>>all\nDone.",
    );
    assert_eq!(text_of(&ev), "Sure.\nDone.");
    assert_eq!(calls_of(&ev), vec![("f".into(), json!({"a": 1}))]);
    // A completion that does not start with a recipient line is text,
    // silently.
    let ev = run("functionary-v3.2", "Hello there.\nBye.");
    assert_eq!(text_of(&ev), "Hello there.\nBye.");
    assert!(diagnostics_of(&ev).is_empty());
    // A name that begins like the keyword is a name.
    let ev = run("functionary-v3.2", "allow\n{}");
    assert_eq!(calls_of(&ev), vec![("allow".into(), json!({}))]);
    // `>>>` in prose (a Python prompt) is text.
    let ev = run("functionary-v3.2", "all\nType >>> print(1) to see it.");
    assert_eq!(text_of(&ev), "Type >>> print(1) to see it.");
    assert!(diagnostics_of(&ev).is_empty());
}

#[test]
fn apertus_objects_are_keyed_by_the_tool_name() {
    let ev = run(
        "apertus",
        "<|tools_prefix|>[{\"a\": {\"x\": 1}}, {\"b\\u0021\": {}}]<|tools_suffix|>",
    );
    assert_eq!(
        calls_of(&ev),
        vec![("a".into(), json!({"x": 1})), ("b!".into(), json!({}))]
    );
    // Two names in one object: not a call.
    let bad = "<|tools_prefix|>[{\"a\": {}, \"b\": {}}]<|tools_suffix|>";
    let ev = run("apertus", bad);
    assert!(calls_of(&ev).is_empty());
    assert_eq!(text_of(&ev), bad);
    assert_eq!(diagnostics_of(&ev).len(), 1);
}

#[test]
fn json_families_read_their_wrappers() {
    let cases: &[(&str, &str, usize)] = &[
        ("granite", "<|tool_call|>[{\"name\": \"f\", \"arguments\": {}}]", 1),
        (
            "granite",
            "<function_call> {\"name\": \"f\", \"arguments\": {}}<function_call> {\"name\": \"g\", \"arguments\": {}}",
            2,
        ),
        ("phi4-mini", "functools[{\"name\": \"f\", \"arguments\": {}}]", 1),
        (
            "minimax-m1",
            "<tool_calls>\n{\"name\": \"f\", \"arguments\": {}}\n{\"name\": \"g\", \"arguments\": {}}\n</tool_calls>",
            2,
        ),
        ("jamba", "<tool_calls>[{\"name\": \"f\", \"arguments\": {}}]</tool_calls>", 1),
        (
            "command-r7b",
            "<|START_ACTION|>[{\"tool_call_id\": \"0\", \"tool_name\": \"f\", \"parameters\": {}}]<|END_ACTION|>",
            1,
        ),
        ("nemotron", "<TOOLCALL>{\"name\": \"f\", \"arguments\": {}}</TOOLCALL>", 1),
        ("gigachat3", "<|function_call|>{\"name\": \"f\", \"arguments\": {}}", 1),
    ];
    for &(format, input, n) in cases {
        let ev = run(format, input);
        assert_eq!(calls_of(&ev).len(), n, "{format}: {input}");
        assert_eq!(text_of(&ev), "", "{format}: {input}");
    }
    // Prose that names the marker word is text, silently.
    for (format, prose) in [
        ("phi4-mini", "See functools.partial and functools[0] docs."),
        ("command-r", "Action: ```bash\nls\n```"),
        ("gigachat3", "a<|message_sep|>b"),
    ] {
        let ev = run(format, prose);
        assert_eq!(text_of(&ev), prose, "{format}");
        assert!(diagnostics_of(&ev).is_empty(), "{format}: {prose}");
    }
}

#[test]
fn every_family_reasoning_marker_separates_reasoning() {
    for (open, close) in [
        ("<think>", "</think>"),
        ("[THINK]", "[/THINK]"),
        ("<seed:think>", "</seed:think>"),
        ("<|START_THINKING|>", "<|END_THINKING|>"),
        ("<|channel>thought", "<channel|>"),
        ("<|open|>think<|sep|>", "<|close|>think<|sep|>"),
    ] {
        let input = format!("{open}Plan it.{close}Answer.");
        let ev = run_with("auto", Options::new().with_reasoning(true), &input);
        let r = Response::from_events(&ev);
        assert_eq!(r.reasoning.as_deref(), Some("Plan it."), "{open}");
        assert_eq!(r.text, "Answer.", "{open}");
        // Off: the markers are text.
        assert_eq!(text_of(&run("auto", &input)), input);
    }
}

#[test]
fn an_unterminated_reasoning_block_keeps_its_calls() {
    // The call inside reasoning that never closes is still a call (the
    // policy for Qwen3.5 dropping `</think>`); the rest is reasoning.
    let input = "<think>Need the weather.\n<tool_call>{\"name\": \"f\", \"arguments\": {}}</tool_call>\nwaiting";
    let ev = run_with("hermes", Options::new().with_reasoning(true), input);
    let r = Response::from_events(&ev);
    assert_eq!(r.tool_calls.len(), 1);
    assert_eq!(r.reasoning.as_deref(), Some("Need the weather.\n\nwaiting"));
    assert_eq!(r.text, "");
    // Nothing is reported missing at the end.
    assert!(r.diagnostics.is_empty(), "{:?}", r.diagnostics);
}

#[test]
fn format_language_pieces() {
    // `[[NAME]]` calls where the name `none` is a keyword that opens a
    // plain-text reply, and whose header is framing.
    let program = json!([
        {"capture": "name", "until": ["]]"], "keywords": [{"lit": "none", "goto": "text"}]},
        {"json": "args"},
        "dispatch",
        "end",
        {"label": "text"},
        "frame",
        {"reasoning": true},
        "end"
    ]);
    let described = |openers: serde_json::Value| {
        Format::from_json(
            &json!({"name": "brackets", "models": "custom", "openers": openers}).to_string(),
        )
    };
    let at_start = json!({"stream_start": true, "program": program});
    let f = described(json!([{"open": "[[", "program": program}, at_start])).unwrap();
    let mut reg = Registry::builtin();
    reg.register(f).unwrap();
    let g = reg.grammar("brackets").unwrap();
    let r = toolscan_core::parse(
        g.clone(),
        Options::new().with_reasoning(true),
        b"f]]{}[[none]]thinking",
    );
    assert_eq!(r.tool_calls.len(), 1);
    assert_eq!(r.reasoning.as_deref(), Some("thinking"));
    assert_eq!(r.text, "");
    // Two programs at the start of the stream are refused.
    let two = described(json!([at_start, at_start, {"open": "[[", "program": program}]));
    let e = two.unwrap_err();
    assert!(e.to_string().contains("start of the stream"), "{e}");
    // `auto` leaves start-of-stream programs out.
    let ev = run("auto", "get_weather\n{}");
    assert!(calls_of(&ev).is_empty());
    assert!(diagnostics_of(&ev)
        .iter()
        .all(|(k, _)| *k != DiagnosticKind::Malformed));
}

#[test]
fn functionary_raw_code_is_the_python_tools_string_parameter() {
    let input = "all\nRunning it.>>>python\nprint(\"a>b\")\nx = 1 >> 2\n>>>get_time\n{}";
    // Without tools: the parameter is `code`.
    let ev = run("functionary-v3.2", input);
    assert_eq!(
        calls_of(&ev),
        vec![
            (
                "python".into(),
                json!({"code": "print(\"a>b\")\nx = 1 >> 2"})
            ),
            ("get_time".into(), json!({})),
        ]
    );
    assert_eq!(text_of(&ev), "Running it.");
    // With a schema: the tool's one string property.
    let tools = toolscan_core::Tools::from_json(&json!([{"type": "function", "function": {
        "name": "python", "parameters": {"type": "object",
            "properties": {"source": {"type": "string"}, "timeout": {"type": "integer"}}}}}]))
    .unwrap();
    let ev = run_with(
        "functionary-v3.2",
        Options::new().with_tools(tools),
        "python\nimport os\nos.getcwd()>",
    );
    assert_eq!(
        calls_of(&ev),
        vec![(
            "python".into(),
            json!({"source": "import os\nos.getcwd()>"})
        )]
    );
}

#[test]
fn harmony_completion_may_begin_with_the_role_recipient() {
    // The prompt ended with `<|start|>assistant`.
    let ev = run(
        "harmony",
        " to=functions.get_weather<|channel|>commentary json<|message|>{\"city\": \"Paris\"}<|call|>",
    );
    assert_eq!(
        calls_of(&ev),
        vec![("get_weather".into(), json!({"city": "Paris"}))]
    );
    assert_eq!(text_of(&ev), "");
    // Text at the start is text.
    let ev = run("harmony", " to be or not");
    assert_eq!(text_of(&ev), " to be or not");
    assert!(diagnostics_of(&ev).is_empty());
}

#[test]
fn a_format_may_be_only_a_program_at_the_start_of_the_stream() {
    // A completion that is always one call: `NAME {json}` and text after.
    let f = Format::from_json(
        &json!({
            "name": "first",
            "description": "NAME {json}",
            "stream_start": true,
            "program": [{"capture": "name", "until": [" "]}, {"json": "args"}, "dispatch", "end"]
        })
        .to_string(),
    )
    .unwrap();
    let mut reg = Registry::builtin();
    reg.register(f).unwrap();
    let g = reg.grammar("first").unwrap();
    let r = toolscan_core::parse(
        g.clone(),
        Options::new(),
        b"f {\"a\": 1} and <tool_call> text",
    );
    assert_eq!(r.tool_calls.len(), 1);
    assert_eq!(r.text, " and <tool_call> text");
    let r = toolscan_core::parse(g, Options::new(), b"just text");
    assert_eq!(r.text, "just text");
}

#[test]
fn markers_that_begin_with_a_word_byte_count_only_at_a_word_start() {
    // Inside a word: text, silently, whichever the chunking.
    for (format, input) in [
        ("tool-call-json", "MYTOOL_CALL: {\"tool_name\": \"f\", \"parameters\": {}}"),
        ("phi4-mini", "ofunctools[{\"name\": \"f\", \"arguments\": {}}]"),
        ("auto", "xTOOL_CALL {\"tool_name\": \"f\"} and myfunctools[{\"name\": \"f\", \"arguments\": {}}]"),
    ] {
        let ev = run(format, input);
        assert!(calls_of(&ev).is_empty(), "{format}: {input}");
        assert_eq!(text_of(&ev), input);
        assert!(diagnostics_of(&ev).is_empty(), "{format}: {input}");
    }
    // After punctuation, a space, a call or the start of the stream: a
    // marker.
    for (format, input) in [
        ("tool-call-json", "Sure.TOOL_CALL: {\"tool_name\": \"f\", \"parameters\": {}}"),
        ("phi4-mini", "functools[{\"name\": \"f\", \"arguments\": {}}]"),
        (
            "auto",
            "<tool_call>{\"name\": \"f\", \"arguments\": {}}</tool_call>functools[{\"name\": \"g\", \"arguments\": {}}]",
        ),
    ] {
        let ev = run(format, input);
        assert!(!calls_of(&ev).is_empty(), "{format}: {input}");
    }
}

#[test]
fn held_back_near_markers_come_out_as_the_same_text_whatever_the_chunking() {
    // Bytes that may begin a marker are held, then released when the next
    // bytes show they do not: token-sized chunks take a shorter way there,
    // which must give what the whole input gives.
    let input = "the function of <toolbox> and <tool_ x [TOO] TOOL, Action, \
                 <|channel>, 東京<|fun ✦ café func";
    for format in ["auto", "hermes", "phi4-mini", "harmony"] {
        for reasoning in [false, true] {
            let ev = run_with(format, Options::new().with_reasoning(reasoning), input);
            let r = Response::from_events(&ev);
            assert_eq!(
                format!("{}{}", r.reasoning.unwrap_or_default(), r.text),
                input,
                "{format}"
            );
            assert!(r.tool_calls.is_empty());
        }
    }
}

#[test]
fn cohere_directly_answer_is_no_call() {
    // The pseudo-tool says the model answers directly: its object is
    // framing, the answer is text.
    let ev = run(
        "command-r",
        "Action: ```json\n[{\"tool_name\": \"directly-answer\", \"parameters\": {}}]\n```\nParis is sunny.",
    );
    assert!(calls_of(&ev).is_empty());
    assert_eq!(text_of(&ev), "\nParis is sunny.");
    assert!(diagnostics_of(&ev).is_empty());
    // Beside a real call, only the real call is one.
    let ev = run(
        "command-r7b",
        "<|START_ACTION|>[{\"tool_name\": \"directly-answer\", \"parameters\": {}}, \
         {\"tool_call_id\": \"1\", \"tool_name\": \"f\", \"parameters\": {\"a\": 1}}]<|END_ACTION|>",
    );
    assert_eq!(calls_of(&ev), vec![("f".into(), json!({"a": 1}))]);
    assert_eq!(text_of(&ev), "");
}

#[test]
fn every_format_keeps_the_contract_on_random_markup() {
    // Pieces of every format's markers and bodies, glued at random: no
    // panic, the event contract holds, and every chunking agrees.
    let reg = Registry::builtin();
    let mut pieces: Vec<String> = reg
        .formats()
        .iter()
        .flat_map(|f| f.markers())
        .map(|m| m.trim_start_matches('^').replace("\\n", "\n"))
        .collect();
    pieces.extend(
        [
            "{\"name\": \"f\", \"arguments\": {\"a\": [1, \"x\"]}}",
            "[{\"name\": \"g\", \"arguments\": {}}]",
            "f(a='b', c=[1, 2])",
            "call:f{a:<|\"|>x<|\"|>}",
            "functions.f:3",
            "<|tool_call_argument_begin|>",
            "<|message|>",
            " to=functions.f",
            "commentary",
            "get_weather\n",
            "all\n",
            "\n",
            " ",
            "}",
            "]",
            ")",
            "\"",
            "東京",
        ]
        .map(String::from),
    );
    let mut rng = toolscan_testkit::rng::Rng::new(0x5eed);
    let names: Vec<String> = reg.formats().iter().map(|f| f.name().to_owned()).collect();
    for format in names.iter().map(String::as_str).chain(["auto"]) {
        for _ in 0..12 {
            let n = 1 + (rng.next_u64() % 8) as usize;
            let input: String = (0..n)
                .map(|_| pieces[(rng.next_u64() % pieces.len() as u64) as usize].as_str())
                .collect();
            run(format, &input);
        }
    }
}
