//! Parameter-style (XML) arguments, behaviour by behaviour: string values
//! stream while they arrive, partial closing tags inside values, the P16
//! recoveries of dropped closing tags, schema typing and its diagnostics,
//! the formats' own type attributes, truncated values, entities cut
//! between chunks.
//!
//! Every input runs under every chunking of the test kit
//! (`chunk::invariant`: whole, fixed sizes 1–16, seeded random sizes, each
//! through every feeding API, which must agree and keep the event contract,
//! with the same coalesced events for every chunking), and the one-shot
//! `parse` must give what the events collect to.

use serde_json::{json, Value};
use toolscan::{DiagnosticKind, Event, FinishReason, Options, Response, Tools};
use toolscan_testkit::check::{check_events, diagnostics_of, text_of};
use toolscan_testkit::chunk::{self, feed_every_api, Api, Plan};

/// The coalesced events of `input` under every chunking and API (see the
/// module comment).
fn run(format: &str, opts: &Options, input: &str) -> Vec<Event> {
    chunk::events_everywhere(format, opts, input)
}

fn seeded() -> Options {
    chunk::seeded_options()
}

fn with_tools(tools: Value) -> Options {
    seeded().with_tools(Tools::from_json(&tools).expect("tools"))
}

/// One tool `name` whose parameters have these schemas.
fn tool(name: &str, properties: Value) -> Value {
    json!([{"type": "function", "function": {"name": name,
        "parameters": {"type": "object", "properties": properties}}}])
}

use toolscan_testkit::check::calls_of as calls;

fn kinds(events: &[Event]) -> Vec<DiagnosticKind> {
    diagnostics_of(events).into_iter().map(|(k, _)| k).collect()
}

/// Where the first event matching `f` is.
fn position(events: &[Event], f: impl Fn(&Event) -> bool) -> usize {
    events
        .iter()
        .position(f)
        .unwrap_or_else(|| panic!("no such event in {events:?}"))
}

fn one_call(events: &[Event], name: &str, args: Value, input: &str) {
    assert_eq!(
        calls(events),
        vec![(name.to_string(), args)],
        "input: {input:?}"
    );
}

// ------------------------------------------------------------ (a) streaming

/// Feeds `input` in 4-byte pieces through the APIs that report per piece
/// and checks that the string value starting at byte `value_at` streams:
/// value bytes reach the argument deltas within its first 64 bytes; after
/// every delta the deltas so far are a prefix of the final arguments; the
/// value comes in many deltas; the arguments are `want`. `head` is the
/// arguments text before the value's first byte.
fn streams(format: &str, opts: &Options, input: &str, value_at: usize, head: &str, want: &Value) {
    let plan = Plan::fixed(input.len(), 4);
    for api in [Api::Feed, Api::Sink] {
        let mut p = chunk::parser(format, opts.clone());
        let mut events: Vec<Event> = Vec::new();
        let mut args = String::new();
        let mut first_at = None;
        let mut fed = 0;
        let mut prefixes = Vec::new();
        for piece in plan.pieces(input.as_bytes()) {
            fed += piece.len();
            let new = match api {
                Api::Feed => p.feed(piece).into_vec(),
                _ => {
                    let mut v = Vec::new();
                    p.feed_with(piece, &mut v);
                    v
                }
            };
            for e in &new {
                if let Event::ToolCallArgs { delta, .. } = e {
                    args.push_str(delta);
                    prefixes.push(args.clone());
                    if first_at.is_none() && args.len() > head.len() {
                        assert!(args.starts_with(head), "{format} {api:?}: {args:?}");
                        first_at = Some(fed);
                    }
                }
            }
            events.extend(new);
        }
        p.finish_into(&mut events);
        check_events(&events).unwrap_or_else(|e| panic!("{format} {api:?}: {e}"));
        let first_at = first_at.unwrap_or_else(|| panic!("{format} {api:?}: nothing streamed"));
        assert!(
            first_at <= value_at + 64,
            "{format} {api:?}: the first delta with value bytes came after byte {first_at}; \
             the value starts at {value_at}"
        );
        let end = events
            .iter()
            .find_map(|e| match e {
                Event::ToolCallEnd { arguments, .. } => Some(arguments.as_str().to_string()),
                _ => None,
            })
            .unwrap_or_else(|| panic!("{format} {api:?}: the call did not complete"));
        for (k, pre) in prefixes.iter().enumerate() {
            assert!(
                end.starts_with(pre.as_str()),
                "{format} {api:?}: after delta {k} the deltas are not a prefix of the arguments"
            );
        }
        assert!(
            prefixes.len() > 16,
            "{format} {api:?}: the value came in {} deltas",
            prefixes.len()
        );
        assert_eq!(
            &serde_json::from_str::<Value>(&end).unwrap(),
            want,
            "{format}"
        );
    }
    // And the same input under every chunking.
    let ev = run(format, opts, input);
    one_call(&ev, "write", want.clone(), input);
    assert!(kinds(&ev).is_empty(), "{format}: {:?}", diagnostics_of(&ev));
}

/// A 4 KB string value of qwen3-coder fed in 4-byte pieces streams (see
/// [`streams`]).
#[test]
fn a_string_value_streams_while_it_arrives() {
    let opts = with_tools(tool(
        "write",
        json!({"path": {"type": "string"}, "body": {"type": "string"}}),
    ));
    let body = "fn main() { println!(\"<ü> & \\\\ 😀\"); }\n".repeat(100);
    assert!(body.len() >= 4096);
    let input = format!(
        "Writing it.\n<tool_call>\n<function=write>\n<parameter=path>\nsrc/main.rs\n</parameter>\n\
         <parameter=body>\n{body}\n</parameter>\n</function>\n</tool_call>"
    );
    let value_at = input.find("<parameter=body>\n").unwrap() + "<parameter=body>\n".len();
    let want = json!({"path": "src/main.rs", "body": body});
    streams(
        "qwen3-coder",
        &opts,
        &input,
        value_at,
        r#"{"path":"src/main.rs","body":""#,
        &want,
    );
    assert_eq!(text_of(&run("qwen3-coder", &opts, &input)), "Writing it.\n");
}

/// The same in the other formats: string values stream whatever the
/// format's markup, trimming, entities or own type attribute.
#[test]
fn string_values_stream_in_every_format() {
    let opts = with_tools(tool("write", json!({"body": {"type": "string"}})));
    let body = "line <b> \"q\" ü 😀\n".repeat(200);
    let escaped = body.replace('&', "&amp;").replace('<', "&lt;");
    // (format, markup before the value, markup after it, XML text); seed-oss
    // takes one newline at each end as markup, so the value (which ends
    // with one) is framed by newlines.
    let cases: &[(&str, &str, &str, bool)] = &[
        (
            "seed-oss",
            "<seed:tool_call><function=write><parameter=body>\n",
            "\n</parameter></function></seed:tool_call>",
            false,
        ),
        (
            "glm47",
            "<tool_call>write<arg_key>body</arg_key><arg_value>",
            "</arg_value></tool_call>",
            false,
        ),
        (
            "minimax-m2",
            "<minimax:tool_call><invoke name=\"write\"><parameter name=\"body\">",
            "</parameter></invoke></minimax:tool_call>",
            false,
        ),
        (
            "claude-xml",
            "<function_calls><invoke name=\"write\"><parameter name=\"body\">",
            "</parameter></invoke></function_calls>",
            true,
        ),
        (
            "deepseek-v3.2",
            "<｜DSML｜function_calls><｜DSML｜invoke name=\"write\">\
             <｜DSML｜parameter name=\"body\" string=\"true\">",
            "</｜DSML｜parameter></｜DSML｜invoke></｜DSML｜function_calls>",
            false,
        ),
        (
            "kimi-k3",
            "<|open|>tools<|sep|><|open|>call tool=\"write\"<|sep|>\
             <|open|>argument key=\"body\" type=\"string\"<|sep|>",
            "<|close|>argument<|sep|><|close|>call<|sep|><|close|>tools<|sep|>",
            false,
        ),
        (
            "step3",
            "<｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜>\
             <steptml:invoke name=\"write\"><steptml:parameter name=\"body\">",
            "</steptml:parameter></steptml:invoke><｜tool_call_end｜><｜tool_calls_end｜>",
            false,
        ),
        (
            "xml-tool",
            "<tool><name>write</name><arguments><body>",
            "</body></arguments></tool>",
            true,
        ),
        (
            "autobyteus-xml",
            "<tool name=\"write\"><arguments><arg name=\"body\">",
            "</arg></arguments></tool>",
            true,
        ),
    ];
    for &(format, head, tail, xml) in cases {
        let input = format!("{head}{}{tail}", if xml { &escaped } else { &body });
        // step3 and autobyteus-xml trim the value.
        let value = if matches!(format, "step3" | "autobyteus-xml") {
            body.trim_end()
        } else {
            body.as_str()
        };
        streams(
            format,
            &opts,
            &input,
            head.len(),
            r#"{"body":""#,
            &json!({ "body": value }),
        );
    }
}

/// A string value's arguments text is made from its input bytes as they
/// stand and, where the format decodes an entity, from the decoded bytes:
/// the pieces join in order, around typed values and items, whatever the
/// chunking. qwen3-coder: the text `null` alone is null, a value that only
/// begins like it is a string; claude-xml decodes `&lt;` `&amp;`.
#[test]
fn string_values_join_their_input_and_decoded_pieces_in_order() {
    let opts = with_tools(tool(
        "f",
        json!({"a": {"type": "string"}, "n": {"type": "integer"},
               "b": {"type": "string"}, "c": {"type": "string"}}),
    ));
    let input = "<tool_call>\n<function=f>\n<parameter=a>\nnullish \"q\"\tü\n</parameter>\n\
                 <parameter=n>\n5\n</parameter>\n<parameter=b>\nnull\n</parameter>\n\
                 <parameter=c>\nnu\n</parameter>\n</function>\n</tool_call>";
    let ev = run("qwen3-coder", &opts, input);
    one_call(
        &ev,
        "f",
        json!({"a": "nullish \"q\"\tü", "n": 5, "b": null, "c": "nu"}),
        input,
    );
    let input = "<function_calls><invoke name=\"f\"><parameter name=\"a\">x &lt;y&gt; \"z\" &amp;\
                 </parameter><parameter name=\"n\">5</parameter><parameter name=\"b\">\
                 &amp;😀 tail</parameter></invoke></function_calls>";
    let ev = run("claude-xml", &opts, input);
    one_call(
        &ev,
        "f",
        json!({"a": "x <y> \"z\" &", "n": 5, "b": "&😀 tail"}),
        input,
    );
    assert!(kinds(&ev).is_empty(), "{:?}", diagnostics_of(&ev));
}

/// A string value holding bytes that are not UTF-8 is not a call: its
/// deltas stop before them, nothing is dispatched and the block's bytes
/// come back as text, under every chunking.
#[test]
fn a_string_value_that_is_not_utf8_is_not_dispatched() {
    let opts = with_tools(tool("f", json!({"a": {"type": "string"}})));
    let input: &[u8] =
        b"<tool_call>\n<function=f>\n<parameter=a>\nok \xff then\n</parameter>\n</function>\n</tool_call>";
    let ev = chunk::invariant(|| chunk::parser("qwen3-coder", opts.clone()), input)
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(calls(&ev).is_empty(), "{ev:?}");
    assert!(text_of(&ev).starts_with("<tool_call>"), "{ev:?}");
    assert!(kinds(&ev).contains(&DiagnosticKind::Malformed), "{ev:?}");
}

// ------------------------------------------- (b) partial closing tags

/// A value holding the beginning of its own closing tag is not cut there:
/// only the whole tag ends it.
#[test]
fn a_partial_closing_tag_is_value() {
    let cases: &[(&str, &str, Value)] = &[
        (
            "qwen3-coder",
            "<tool_call>\n<function=f>\n<parameter=a>\na </param b\n</parameter>\n\
             <parameter=b>\n</parameter\n</parameter>\n</function>\n</tool_call>",
            json!({"a": "a </param b", "b": "</parameter"}),
        ),
        (
            "seed-oss",
            "<seed:tool_call><function=f><parameter=a>a </param b</parameter>\
             <parameter=b>x</parameter</parameter></function></seed:tool_call>",
            json!({"a": "a </param b", "b": "x</parameter"}),
        ),
        (
            "glm47",
            "<tool_call>f<arg_key>a</arg_key><arg_value>a </arg_val b</arg_value>\
             <arg_key>b</arg_key><arg_value><</arg_value</arg_value></tool_call>",
            json!({"a": "a </arg_val b", "b": "<</arg_value"}),
        ),
        (
            "minimax-m2",
            "<minimax:tool_call><invoke name=\"f\"><parameter name=\"a\">a </param b</parameter>\
             <parameter name=\"b\"></</parameter></invoke></minimax:tool_call>",
            json!({"a": "a </param b", "b": "</"}),
        ),
        (
            "deepseek-v3.2",
            "<｜DSML｜function_calls><｜DSML｜invoke name=\"f\"><｜DSML｜parameter name=\"a\" \
             string=\"true\">a </｜DSML｜param b</｜DSML｜parameter></｜DSML｜invoke>\
             </｜DSML｜function_calls>",
            json!({"a": "a </｜DSML｜param b"}),
        ),
        (
            "kimi-k3",
            "<|open|>tools<|sep|><|open|>call tool=\"f\"<|sep|><|open|>argument key=\"a\" \
             type=\"string\"<|sep|>a <|close|>arg b <|close|>argument<|close|>argument<|sep|>\
             <|close|>call<|sep|><|close|>tools<|sep|>",
            json!({"a": "a <|close|>arg b <|close|>argument"}),
        ),
        (
            "step3",
            "<｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜>\
             <steptml:invoke name=\"f\"><steptml:parameter name=\"a\">a </steptml:param b\
             </steptml:parameter></steptml:invoke><｜tool_call_end｜><｜tool_calls_end｜>",
            json!({"a": "a </steptml:param b"}),
        ),
        (
            "autobyteus-xml",
            "<tool name=\"f\"><arguments><arg name=\"a\">a </ar b</arg></arguments></tool>",
            json!({"a": "a </ar b"}),
        ),
    ];
    for (format, input, args) in cases {
        let ev = run(format, &seeded(), input);
        one_call(&ev, "f", args.clone(), input);
        assert!(kinds(&ev).is_empty(), "{format}: {:?}", diagnostics_of(&ev));
        assert_eq!(text_of(&ev), "", "{format}");
    }
}

// ------------------------------------------------- (c) P16 recoveries

/// The diagnostics about the call's values follow its `tool_call_end`.
fn after_the_end(ev: &[Event]) {
    let end = position(ev, |e| matches!(e, Event::ToolCallEnd { .. }));
    let diag = position(ev, |e| matches!(e, Event::Diagnostic(_)));
    assert!(end < diag, "a diagnostic before the call's end: {ev:?}");
}

/// The call's `tool_call_end`, then exactly one `unclosed` diagnostic.
fn kept_with_one_unclosed(ev: &[Event], input: &str) {
    assert_eq!(
        kinds(ev),
        vec![DiagnosticKind::Unclosed],
        "input: {input:?}"
    );
    after_the_end(ev);
}

/// `</parameter>` dropped before the next `<parameter=`: the value ends
/// there, the next parameter is read, the call is kept with one `unclosed`
/// diagnostic after its end.
#[test]
fn a_missing_closer_before_the_next_parameter() {
    let opts = with_tools(tool(
        "f",
        json!({"a": {"type": "string"}, "b": {"type": "integer"}, "c": {"type": "string"}}),
    ));
    let cases: &[(&str, &str, Value)] = &[
        (
            "qwen3-coder",
            "Sure.\n<tool_call>\n<function=f>\n<parameter=a>\nx y\n<parameter=b>\n3\n\
             </parameter>\n</function>\n</tool_call> Done.",
            json!({"a": "x y", "b": 3}),
        ),
        (
            // The unclosed value is not a string: converted at its end.
            "qwen3-coder",
            "Sure.\n<tool_call>\n<function=f>\n<parameter=b>\n3\n<parameter=a>\nx\n\
             </parameter>\n</function>\n</tool_call> Done.",
            json!({"b": 3, "a": "x"}),
        ),
        (
            "seed-oss",
            "Sure.\n<seed:tool_call><function=f><parameter=a>x y<parameter=c>z</parameter>\
             </function></seed:tool_call> Done.",
            json!({"a": "x y", "c": "z"}),
        ),
        (
            "glm45",
            "Sure.\n<tool_call>f\n<arg_key>a</arg_key>\n<arg_value>x y\n<arg_key>b</arg_key>\n\
             <arg_value>3</arg_value>\n</tool_call> Done.",
            json!({"a": "x y\n", "b": 3}),
        ),
        (
            "minimax-m2",
            "Sure.\n<minimax:tool_call>\n<invoke name=\"f\">\n<parameter name=\"a\">x y\n\
             <parameter name=\"b\">3</parameter>\n</invoke>\n</minimax:tool_call> Done.",
            json!({"a": "x y\n", "b": 3}),
        ),
    ];
    for (format, input, args) in cases {
        let ev = run(format, &opts, input);
        one_call(&ev, "f", args.clone(), input);
        kept_with_one_unclosed(&ev, input);
        assert_eq!(text_of(&ev), "Sure.\n Done.", "{format}");
        assert_eq!(
            Response::from_events(&ev).finish_reason,
            FinishReason::ToolCalls
        );
    }
}

/// A value closed by the call's closer (`</function>`), and then the
/// stream ends: the value ends at `</function>`, what follows is the rest
/// of the call, which is kept — dispatched at the end of the stream — with
/// one `unclosed` diagnostic after its end.
#[test]
fn a_value_closed_by_the_call_closer_at_the_end_of_the_stream() {
    let opts = with_tools(tool(
        "f",
        json!({"a": {"type": "string"}, "n": {"type": "integer"}}),
    ));
    let cases: &[(&str, &str, Value)] = &[
        (
            "qwen3-coder",
            "<tool_call>\n<function=f>\n<parameter=a>\nline 1\nline 2\n</function>\n</tool_call>",
            json!({"a": "line 1\nline 2"}),
        ),
        (
            "qwen3-coder",
            "<tool_call>\n<function=f>\n<parameter=a>\nx\n</parameter>\n<parameter=n>\n42\n\
             </function>\n</tool_call>",
            json!({"a": "x", "n": 42}),
        ),
        (
            "seed-oss",
            "<seed:tool_call><function=f><parameter=n>7</function></seed:tool_call>",
            json!({"n": 7}),
        ),
        (
            "glm47",
            "<tool_call>f<arg_key>a</arg_key><arg_value>x</tool_call>",
            json!({"a": "x"}),
        ),
        (
            "minimax-m2",
            "<minimax:tool_call><invoke name=\"f\"><parameter name=\"a\">x</invoke>\
             </minimax:tool_call>",
            json!({"a": "x"}),
        ),
        (
            "deepseek-v3.2",
            "<｜DSML｜function_calls><｜DSML｜invoke name=\"f\"><｜DSML｜parameter name=\"a\" \
             string=\"true\">x</｜DSML｜invoke></｜DSML｜function_calls>",
            json!({"a": "x"}),
        ),
        (
            "kimi-k3",
            "<|open|>tools<|sep|><|open|>call tool=\"f\"<|sep|><|open|>argument key=\"a\" \
             type=\"string\"<|sep|>x<|close|>call<|sep|><|close|>tools<|sep|>",
            json!({"a": "x"}),
        ),
    ];
    for (format, input, args) in cases {
        let ev = run(format, &opts, input);
        one_call(&ev, "f", args.clone(), input);
        kept_with_one_unclosed(&ev, input);
        assert_eq!(text_of(&ev), "", "{format}");
    }
}

/// A value that holds the call's and the block's closers and is closed
/// later by its own closer keeps them all, with no diagnostic; the
/// parameters after it and the text after the call are read as usual.
#[test]
fn call_closers_inside_a_value_closed_later_are_value() {
    let opts = with_tools(tool(
        "f",
        json!({"code": {"type": "string"}, "n": {"type": "integer"}}),
    ));
    let input = "Here:\n<tool_call>\n<function=f>\n<parameter=code>\nprint('</function>')\n\
                 </function>\n</tool_call>\n<tool_call>\nstill code\n</parameter>\n\
                 <parameter=n>\n5\n</parameter>\n</function>\n</tool_call>\nAfter.";
    let ev = run("qwen3-coder", &opts, input);
    one_call(
        &ev,
        "f",
        json!({"code": "print('</function>')\n</function>\n</tool_call>\n<tool_call>\nstill code",
               "n": 5}),
        input,
    );
    assert!(kinds(&ev).is_empty(), "{:?}", diagnostics_of(&ev));
    assert_eq!(text_of(&ev), "Here:\n\nAfter.");
    // The call is dispatched at its own `</tool_call>`, before the text
    // after it (earliest safe dispatch), not at the end of the stream.
    let end = position(&ev, |e| matches!(e, Event::ToolCallEnd { .. }));
    let after = position(
        &ev,
        |e| matches!(e, Event::Text { delta } if delta.contains("After")),
    );
    assert!(end < after);
}

// ---------------------------------------------------------- (d) typing

/// qwen3-coder's values typed by the schema: every type, Python literals
/// for containers, nullable strings, a string that looks like a number, a
/// value that fits no declared type, a parameter and a tool the schema does
/// not know.
#[test]
fn the_schema_types_qwen3_coder_values() {
    let tools = json!([
        {"type": "function", "function": {"name": "t", "parameters": {"type": "object",
            "properties": {
                "i": {"type": "integer"},
                "neg": {"type": "integer"},
                "whole": {"type": "integer"},
                "x": {"type": "number"},
                "b": {"type": "boolean"},
                "b2": {"type": "boolean"},
                "nul": {"type": "null"},
                "ns1": {"type": ["string", "null"]},
                "ns2": {"type": "string", "nullable": true},
                "ns3": {"type": ["string", "null"]},
                "o": {"type": "object"},
                "l": {"type": "array"},
                "lt": {"type": "array"},
                "zip": {"type": "string"},
                "num": {"type": "string"},
                "u": {},
                "big": {"type": "integer"},
                "plus": {"type": "integer"},
                "exp": {"type": "integer"},
                "upper": {"type": "boolean"},
            }}}},
        {"type": "function", "function": {"name": "m", "parameters": {"type": "object",
            "properties": {"count": {"type": "number"}}}}}
    ]);
    let opts = with_tools(tools);
    let param = |k: &str, v: &str| format!("<parameter={k}>\n{v}\n</parameter>\n");
    let body: String = [
        ("i", "42"),
        ("neg", "-7"),
        ("whole", "3.0"),
        ("x", "2.5e3"),
        ("b", "True"),
        ("b2", "false"),
        ("nul", "None"),
        ("ns1", "null"),
        ("ns2", "None"),
        ("ns3", "plain"),
        ("o", "{'a': True, 'b': None, 'c': (1, 'x')}"),
        ("l", "['x', 2, False]"),
        ("lt", "[1, 2]"),
        ("zip", "007"),
        ("num", "123"),
        ("u", "{\"k\": [1]}"),
        ("big", "123456789012345678901234567890"),
        ("plus", "+5"),
        ("exp", "1e2"),
        ("upper", "TRUE"),
    ]
    .iter()
    .map(|(k, v)| param(k, v))
    .collect();
    let input = format!("<tool_call>\n<function=t>\n{body}</function>\n</tool_call>");
    let ev = run("qwen3-coder", &opts, &input);
    one_call(
        &ev,
        "t",
        json!({
            "i": 42, "neg": -7, "whole": 3, "x": 2.5e3, "b": true, "b2": false,
            "nul": null, "ns1": null, "ns2": null, "ns3": "plain",
            "o": {"a": true, "b": null, "c": [1, "x"]}, "l": ["x", 2, false], "lt": [1, 2],
            "zip": "007", "num": "123", "u": {"k": [1]},
            "big": 123456789012345678901234567890_f64, "plus": 5, "exp": 100, "upper": true
        }),
        &input,
    );
    assert!(kinds(&ev).is_empty(), "{:?}", diagnostics_of(&ev));
    // `number` is written as the model wrote it.
    let args = Response::from_events(&ev).tool_calls[0].arguments.clone();
    assert!(args.as_str().contains("\"x\":2.5e3"), "{}", args.as_str());
    // An integer is kept digit for digit, however long.
    assert!(
        args.as_str()
            .contains("\"big\":123456789012345678901234567890,"),
        "{}",
        args.as_str()
    );

    // A value that fits no declared type: kept by the untyped rule, one
    // `type_mismatch`.
    let input = format!(
        "<tool_call>\n<function=m>\n{}</function>\n</tool_call>",
        param("count", "abc")
    );
    let ev = run("qwen3-coder", &opts, &input);
    one_call(&ev, "m", json!({"count": "abc"}), &input);
    assert_eq!(kinds(&ev), vec![DiagnosticKind::TypeMismatch]);
    after_the_end(&ev);

    // A parameter the tool does not declare: kept (untyped), one
    // `unknown_parameter`.
    let input = format!(
        "<tool_call>\n<function=m>\n{}{}</function>\n</tool_call>",
        param("count", "1.5"),
        param("extra", "[true]")
    );
    let ev = run("qwen3-coder", &opts, &input);
    one_call(&ev, "m", json!({"count": 1.5, "extra": [true]}), &input);
    assert_eq!(kinds(&ev), vec![DiagnosticKind::UnknownParameter]);
    after_the_end(&ev);

    // A tool the request does not offer: kept, values untyped, one
    // `unknown_tool`.
    let input = format!(
        "<tool_call>\n<function=nope>\n{}{}</function>\n</tool_call>",
        param("a", "007"),
        param("b", "12")
    );
    let ev = run("qwen3-coder", &opts, &input);
    one_call(&ev, "nope", json!({"a": "007", "b": 12}), &input);
    assert_eq!(kinds(&ev), vec![DiagnosticKind::UnknownTool]);
}

// --------------------------------------------- (e) the formats' own types

/// DeepSeek's `string="false"` says the value is JSON; one that is not
/// JSON at all stays a string, without a diagnostic. `string="true"` wins
/// over a schema that says otherwise.
#[test]
fn dsml_string_false_with_text_that_is_not_json_is_a_string() {
    let opts = with_tools(tool(
        "f",
        json!({"a": {"type": "integer"}, "b": {"type": "integer"}, "c": {"type": "object"},
               "d": {"type": "integer"}}),
    ));
    let p = |k: &str, s: &str, v: &str| {
        format!("<｜DSML｜parameter name=\"{k}\" string=\"{s}\">{v}</｜DSML｜parameter>\n")
    };
    let input = format!(
        "<｜DSML｜function_calls>\n<｜DSML｜invoke name=\"f\">\n{}{}{}{}</｜DSML｜invoke>\n\
         </｜DSML｜function_calls>",
        p("a", "false", "not json {"),
        p("b", "true", "12"),
        p("c", "false", "{'k': None}"),
        p("d", "false", "12"),
    );
    let ev = run("deepseek-v3.2", &opts, &input);
    one_call(
        &ev,
        "f",
        json!({"a": "not json {", "b": "12", "c": {"k": null}, "d": 12}),
        &input,
    );
    assert!(kinds(&ev).is_empty(), "{:?}", diagnostics_of(&ev));
}

/// Kimi K3's `type="number"` types the value whatever the schema says; a
/// value that is no number is kept with a `type_mismatch`.
#[test]
fn kimi_k3_type_attribute_types_the_value() {
    let opts = with_tools(tool(
        "f",
        json!({"n": {"type": "string"}, "m": {"type": "number"}, "s": {"type": "integer"}}),
    ));
    let arg = |k: &str, t: &str, v: &str| {
        format!("<|open|>argument key=\"{k}\" type=\"{t}\"<|sep|>{v}<|close|>argument<|sep|>")
    };
    let input = format!(
        "<|open|>tools<|sep|><|open|>call tool=\"f\" index=\"1\"<|sep|>{}{}{}\
         <|close|>call<|sep|><|close|>tools<|sep|>",
        arg("n", "number", "3.25"),
        arg("m", "number", "-1e-3"),
        arg("s", "string", "0042"),
    );
    let ev = run("kimi-k3", &opts, &input);
    one_call(
        &ev,
        "f",
        json!({"n": 3.25, "m": -1e-3, "s": "0042"}),
        &input,
    );
    assert!(kinds(&ev).is_empty(), "{:?}", diagnostics_of(&ev));

    let input = format!(
        "<|open|>tools<|sep|><|open|>call tool=\"f\"<|sep|>{}<|close|>call<|sep|>\
         <|close|>tools<|sep|>",
        arg("n", "number", "three")
    );
    let ev = run("kimi-k3", &opts, &input);
    one_call(&ev, "f", json!({"n": "three"}), &input);
    assert_eq!(kinds(&ev), vec![DiagnosticKind::TypeMismatch]);
    after_the_end(&ev);
}

// ------------------------------------------------------ (f) truncation

/// A stream that ends inside a value (no closer, no call closer after it):
/// the call is never dispatched, its bytes come back as text, with one
/// `truncated` diagnostic and `finish_reason: length`.
#[test]
fn a_truncated_value_never_dispatches() {
    let opts = with_tools(tool(
        "f",
        json!({"a": {"type": "string"}, "n": {"type": "integer"}}),
    ));
    let cases: &[(&str, &str)] = &[
        (
            "qwen3-coder",
            "<tool_call>\n<function=f>\n<parameter=a>\nhello wor",
        ),
        (
            "qwen3-coder",
            "<tool_call>\n<function=f>\n<parameter=a>\nx\n</parameter>\n<parameter=n>\n4",
        ),
        (
            // `</function>` inside the value, but no `</tool_call>`
            // after it: the call cannot complete.
            "qwen3-coder",
            "<tool_call>\n<function=f>\n<parameter=a>\nx\n</function>\n</tool_",
        ),
        (
            "seed-oss",
            "<seed:tool_call><function=f><parameter=a>x</param",
        ),
        (
            "glm45",
            "<tool_call>f\n<arg_key>a</arg_key>\n<arg_value>x</arg_val",
        ),
        ("glm47", "<tool_call>f<arg_key>a</arg_key><arg_value>"),
        (
            "minimax-m2",
            "<minimax:tool_call>\n<invoke name=\"f\">\n<parameter name=\"a\">abc",
        ),
        (
            "claude-xml",
            "<function_calls><invoke name=\"f\"><parameter name=\"a\">a &am",
        ),
        (
            "deepseek-v3.2",
            "<｜DSML｜function_calls><｜DSML｜invoke name=\"f\"><｜DSML｜parameter name=\"a\" \
             string=\"true\">x</｜DSML｜para",
        ),
        (
            "kimi-k3",
            "<|open|>tools<|sep|><|open|>call tool=\"f\"<|sep|><|open|>argument key=\"a\" \
             type=\"string\"<|sep|>x<|close|>arg",
        ),
        (
            "step3",
            "<｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜>\
             <steptml:invoke name=\"f\"><steptml:parameter name=\"a\">x ",
        ),
        ("xml-tool", "<tool><name>f</name><arguments><a>x</"),
        (
            "autobyteus-xml",
            "<tool name=\"f\"><arguments><arg name=\"a\">x",
        ),
        ("use-tag", "<use f a=\"x"),
        ("key-value", "✦ tool_call: f for a \"x y"),
        ("key-value", "✦ tool_call: f for n {\"k\": [1, \"]\""),
    ];
    for (format, call) in cases {
        let input = format!("Before. {call}");
        let ev = run(format, &opts, &input);
        assert!(
            !ev.iter().any(|e| matches!(e, Event::ToolCallEnd { .. })),
            "{format}: dispatched: {ev:?}"
        );
        assert_eq!(kinds(&ev), vec![DiagnosticKind::Truncated], "{format}");
        assert_eq!(text_of(&ev), input, "{format}");
        assert_eq!(
            Response::from_events(&ev).finish_reason,
            FinishReason::Length,
            "{format}"
        );
    }
}

// -------------------------------------------------------- (g) entities

/// Entities of claude-xml values decode the same when a chunk ends inside
/// them (`&am` | `p;`, `&#23` | `3;`, `&` | `lt;`), through every API.
#[test]
fn entities_cut_between_chunks_decode() {
    let opts = with_tools(tool(
        "f",
        json!({"a": {"type": "string"}, "b": {"type": "string"}}),
    ));
    let input =
        "<function_calls>\n<invoke name=\"f\">\n<parameter name=\"a\">x &amp; y &#233;t&#xE9; \
                 &lt;/parameter&gt; &quot;q&quot; &apos;s&apos; &nbsp; &amp</parameter>\n\
                 <parameter name=\"b\">&amp;amp;</parameter>\n</invoke>\n</function_calls>";
    let want = json!({"a": "x & y été </parameter> \"q\" 's' &nbsp; &amp", "b": "&amp;"});
    // Cut inside every entity, at every offset of it.
    let mut cuts = Vec::new();
    let mut from = 0;
    while let Some(k) = input[from..].find('&') {
        let amp = from + k;
        let semi = input[amp..].find(';').map_or(amp + 4, |s| amp + s);
        cuts.push((amp + 1..=semi).collect::<Vec<_>>());
        from = amp + 1;
    }
    for offsets in cuts.iter().flatten() {
        let plan = Plan::cuts(input.len(), &[*offsets]);
        let events = feed_every_api(
            || chunk::parser("claude-xml", opts.clone()),
            input.as_bytes(),
            &plan,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        check_events(&events).unwrap();
        one_call(&events, "f", want.clone(), input);
    }
    // All the cuts at once, and every standard chunking.
    let all: Vec<usize> = cuts.iter().flatten().copied().collect();
    let plan = Plan::cuts(input.len(), &all);
    let events = feed_every_api(
        || chunk::parser("claude-xml", opts.clone()),
        input.as_bytes(),
        &plan,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    one_call(&events, "f", want.clone(), input);
    let ev = run("claude-xml", &opts, input);
    one_call(&ev, "f", want, input);
    assert!(kinds(&ev).is_empty(), "{:?}", diagnostics_of(&ev));
}

// -------------------------------------------------------- (h) key-value

/// `key-value` lines: words, quoted strings and JSON values (brackets in
/// their strings and escaped quotes included), typed by the schema; the
/// call ends with its line (LF or CRLF) or with the stream.
#[test]
fn key_value_lines() {
    let opts = with_tools(tool(
        "f",
        json!({"a": {"type": "string"}, "n": {"type": "integer"},
               "o": {"type": "object"}, "l": {"type": "array"}}),
    ));
    let cases: &[(&str, Value, &str)] = &[
        // the stream ends the call, and the word
        ("✦ tool_call: f for a x.txt", json!({"a": "x.txt"}), ""),
        ("✦ tool_call: f", json!({}), ""),
        ("✦ tool_call: f \t", json!({}), ""),
        ("✦ tool_call: f for", json!({}), ""),
        ("✦ tool_call: f for a x ", json!({"a": "x"}), ""),
        // the line ends it; what follows is text
        ("✦ tool_call: f for a x\nNext.", json!({"a": "x"}), "Next."),
        (
            "✦ tool_call: f for a x\r\nNext.",
            json!({"a": "x"}),
            "Next.",
        ),
        (
            "✦ tool_call:\tf\tfor\ta\t007\tn\t-3\n",
            json!({"a": "007", "n": -3}),
            "",
        ),
        (
            "✦ tool_call: f for a \"two\nlines \\ }\" n 5",
            json!({"a": "two\nlines \\ }", "n": 5}),
            "",
        ),
        (
            "✦ tool_call: f for a \"\" n 1",
            json!({"a": "", "n": 1}),
            "",
        ),
        (
            "✦ tool_call: f for o {\"k\": \"} ] \\\" {\", \"m\": [1, {}]} l [ ] a {x}\n",
            json!({"o": {"k": "} ] \" {", "m": [1, {}]}, "l": [], "a": "{x}"}),
            "",
        ),
        // a JSON value may span lines
        (
            "✦ tool_call: f for o {\n  \"k\": 1\n}\nok",
            json!({"o": {"k": 1}}),
            "ok",
        ),
    ];
    for (call, args, after) in cases {
        let input = format!("Before ✨ “quoted”. {call}");
        let ev = run("key-value", &opts, &input);
        one_call(&ev, "f", args.clone(), &input);
        assert!(diagnostics_of(&ev).is_empty(), "{input:?}: {ev:?}");
        assert_eq!(
            text_of(&ev),
            format!("Before ✨ “quoted”. {after}"),
            "{input:?}"
        );
        // and as `auto`
        let ev = run("auto", &opts, &input);
        one_call(&ev, "f", args.clone(), &input);
    }
}

/// A line that is not a call after all keeps its text, with a
/// `malformed` diagnostic: a key without a value, a word other than
/// `for` after the name, no name, a JSON value that does not begin with
/// its bracket.
#[test]
fn key_value_lines_that_are_not_calls() {
    for call in [
        "✦ tool_call: f for a\nmore",
        "✦ tool_call: f for a \r\nmore",
        "✦ tool_call: f with a 1\nmore",
        "✦ tool_call: \nmore",
        "✦ tool_call: f(x)\nmore",
    ] {
        let input = format!("Text. {call}");
        let ev = run("key-value", &seeded(), &input);
        assert!(calls(&ev).is_empty(), "{input:?}: {ev:?}");
        assert_eq!(kinds(&ev), vec![DiagnosticKind::Malformed], "{input:?}");
        assert_eq!(text_of(&ev), input, "{input:?}");
    }
}

/// Text that shares bytes with the marker `✦ tool_call:` (its first
/// character, or symbols from its block of Unicode) is text, whole.
#[test]
fn key_value_marker_lookalikes_are_text() {
    let input = "✅ done ✨ ✦ ✦✦ tool_calls: ✦ tool ✔ ✦ tool_call";
    for format in ["key-value", "auto"] {
        let ev = run(format, &seeded(), input);
        assert_eq!(text_of(&ev), input, "{format}");
        assert!(
            calls(&ev).is_empty() && diagnostics_of(&ev).is_empty(),
            "{format}: {ev:?}"
        );
    }
}

/// A `key-value` call is dispatched in the feed that delivers its line
/// break, not before: fed one byte at a time, its `tool_call_end` comes
/// with the `\n`, and one that ends with the stream comes at `finish`.
#[test]
fn key_value_dispatches_at_the_line_break() {
    let input = "✦ tool_call: f for a x b {\"k\": [1]}\nthen";
    let nl = input.find('\n').expect("a line break");
    let mut p = chunk::parser("key-value", seeded());
    for (i, b) in input.bytes().enumerate() {
        let ev = p.feed(&[b]);
        let ended = ev.iter().any(|e| matches!(e, Event::ToolCallEnd { .. }));
        assert_eq!(ended, i == nl, "byte {i}: {ev:?}");
    }
    let mut p = chunk::parser("key-value", seeded());
    let ev = p.feed(b"\xe2\x9c\xa6 tool_call: f for a x");
    assert!(
        !ev.iter().any(|e| matches!(e, Event::ToolCallEnd { .. })),
        "{ev:?}"
    );
    let ev = p.finish();
    assert!(
        ev.iter().any(|e| matches!(e, Event::ToolCallEnd { .. })),
        "{ev:?}"
    );
}

/// Nested parameter containers are bounded by `max_depth`, as JSON
/// arguments are (the arguments object and each container in it a
/// level): past it the block is text with a limit diagnostic, never a
/// growing stack of frames.
#[test]
fn nested_containers_stop_at_the_depth_limit() {
    let nested = |n: usize| {
        let mut s = String::from("<tool name=\"f\"><arguments>");
        for _ in 0..n {
            s.push_str("<arg name=\"a\">");
        }
        s.push('1');
        for _ in 0..n {
            s.push_str("</arg>");
        }
        s.push_str("</arguments></tool>");
        s
    };
    // Three args: the innermost holds the value, the two around it are
    // containers, so the arguments object and two containers: depth 3.
    let input = nested(3);
    let depth = |max: usize| seeded().with_limits(toolscan::Limits::new().with_max_depth(max));
    let ev = run("autobyteus-xml", &depth(3), &input);
    let got = Response::from_events(&ev);
    assert_eq!(got.tool_calls.len(), 1, "{:?}", got.diagnostics);
    let want: Value = json!({"a": {"a": {"a": 1}}});
    let args: Value = serde_json::from_str(got.tool_calls[0].arguments.as_str()).expect("JSON");
    assert_eq!(args, want);

    let ev = run("autobyteus-xml", &depth(2), &input);
    assert_eq!(
        diagnostics_of(&ev)
            .iter()
            .map(|(k, _)| *k)
            .collect::<Vec<_>>(),
        vec![DiagnosticKind::Limit]
    );
    assert_eq!(text_of(&ev), input);

    // The default limit (128), far past it.
    let deep = nested(5000);
    let got = toolscan::parse(
        toolscan::Registry::builtin()
            .grammar("autobyteus-xml")
            .expect("built-in"),
        seeded(),
        deep.as_bytes(),
    );
    assert!(got.tool_calls.is_empty());
    assert_eq!(got.text, deep);
    assert!(got
        .diagnostics
        .iter()
        .any(|d| d.kind == DiagnosticKind::Limit && d.message.contains("128")));
}
