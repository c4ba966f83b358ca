//! Behaviour of the reworked core: the sink API against the `Vec` API,
//! invalid UTF-8, limits that trip at an exact byte whatever the chunking,
//! markers read wherever they occur (and at indented line starts), memory
//! that does not grow with the response.

use toolscan::{
    coalesce, sink, DiagnosticKind, Event, EventRef, IdMint, Limits, Options, Parser, Registry,
    Response,
};
use toolscan_testkit::check::{diagnostics_of as diagnostics, names_of as names, text_of as text};
use toolscan_testkit::chunk;

fn options() -> Options {
    Options::new().with_ids(IdMint::Seeded(0))
}

/// Runs `input` under every chunk plan and feeding API, checks the event
/// contract and that all agree; returns the coalesced events.
fn invariant(format: &str, options: &Options, input: &[u8]) -> Vec<Event> {
    chunk::invariant(|| chunk::parser(format, options.clone()), input)
        .unwrap_or_else(|e| panic!("{format}: {e}\ninput: {input:?}"))
}

#[test]
fn sink_api_equals_the_vec_api_and_borrows_text_from_the_chunk() {
    let input = "Sure — checking.\n<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Zürich\"}}</tool_call> done.";
    let g = Registry::builtin().grammar("auto").unwrap();
    let mut by_vec = Parser::new(g.clone(), options());
    let mut want = by_vec.feed(input.as_bytes());
    want.extend(by_vec.finish());
    for size in [1, 3, 4, 7, 64] {
        for as_str in [false, true] {
            let mut p = Parser::new(g.clone(), options());
            let mut got: Vec<Event> = Vec::new();
            let mut borrowed = 0usize;
            let mut i = 0;
            while i < input.len() {
                let mut j = (i + size).min(input.len());
                while as_str && !input.is_char_boundary(j) {
                    j += 1;
                }
                let piece = &input.as_bytes()[i..j];
                let mut s = sink::from_fn(|e: EventRef<'_>| {
                    if let EventRef::Text(t) = e {
                        // Text inside the chunk's bytes was not copied.
                        let range = piece.as_ptr_range();
                        if range.contains(&t.as_ptr()) {
                            borrowed += t.len();
                        }
                    }
                    got.push(e.to_owned());
                });
                if as_str {
                    p.feed_str_with(&input[i..j], &mut s);
                } else {
                    p.feed_with(piece, &mut s);
                }
                i = j;
            }
            p.finish_with(&mut got);
            assert_eq!(coalesce(got), coalesce(want.clone()), "size {size}");
            if size >= 64 {
                assert!(borrowed > 20, "text was copied: {borrowed} bytes borrowed");
            }
        }
    }
}

#[test]
fn invalid_utf8_becomes_replacement_characters_with_a_diagnostic_each() {
    let input: &[u8] = b"ok \xff then \xe2\x82 and <tool_call>{\"name\": \"f\", \"arguments\": {}}</tool_call>\xc3";
    let ev = invariant("hermes", &options(), input);
    assert_eq!(text(&ev), "ok \u{FFFD} then \u{FFFD} and \u{FFFD}");
    assert_eq!(
        diagnostics(&ev),
        vec![
            (DiagnosticKind::InvalidUtf8, 3),
            (DiagnosticKind::InvalidUtf8, 10),
            (DiagnosticKind::InvalidUtf8, input.len() as u64 - 1),
        ]
    );
    assert_eq!(names(&ev), ["f"]);
    // a call whose arguments hold such bytes is not dispatched
    let bad = b"<tool_call>{\"name\": \"f\", \"arguments\": {\"a\": \"\xff\"}}</tool_call>";
    let ev = invariant("hermes", &options(), bad);
    assert!(names(&ev).is_empty());
    assert!(text(&ev).starts_with("<tool_call>"));
    assert!(diagnostics(&ev)
        .iter()
        .any(|d| d.0 == DiagnosticKind::Malformed));
}

/// Every limit trips at exactly the byte that exceeds it, under every
/// chunking; the limits just above and below are swept too.
#[test]
fn limits_trip_at_the_exact_byte_under_every_chunking() {
    let call = br#"<tool_call>{"name": "write", "arguments": {"text": "aaaaaaaaaaaaaaaaaaaa"}}</tool_call>"#;
    let n = call.len();
    for max in [n - 2, n - 1, n, n + 1] {
        let o = options().with_limits(Limits::new().with_max_call_bytes(max));
        let ev = invariant("hermes", &o, call);
        if max >= n {
            assert_eq!(names(&ev), ["write"], "limit {max}");
        } else {
            assert_eq!(diagnostics(&ev), vec![(DiagnosticKind::Limit, max as u64)]);
            assert_eq!(text(&ev).as_bytes(), call);
        }
    }
    // hold-back of a tentative (bare JSON) block: the same call whole or
    // byte by byte
    let spaced = format!("{{\"name\":{}\"a\", \"arguments\": {{}}}}", " ".repeat(100));
    for max in [90, 110, 200] {
        let o = options().with_limits(Limits::new().with_max_holdback(max));
        let ev = invariant("json", &o, spaced.as_bytes());
        if max > 110 {
            assert_eq!(names(&ev), ["a"]);
        } else {
            assert_eq!(diagnostics(&ev), vec![(DiagnosticKind::Limit, max as u64)]);
        }
    }
    // a tentative call confirmed within one feed is still held to the call
    // limit (whole and byte by byte agree)
    for (format, input, max) in [
        ("json", &br#"{"name": "f", "arguments": {"a": 1}}"#[..], 20),
        ("json", br#"[{"name": "f", "arguments": {"a": 1}}]"#, 20),
        (
            "end-tool-request",
            br#"{"name": "f", "arguments": {"a": 1}}[END_TOOL_REQUEST]"#,
            10,
        ),
    ] {
        let o = options().with_limits(Limits::new().with_max_call_bytes(max));
        let ev = invariant(format, &o, input);
        assert!(names(&ev).is_empty(), "{format}");
        assert_eq!(diagnostics(&ev), vec![(DiagnosticKind::Limit, max as u64)]);
    }
    // nesting depth
    let deep = br#"<tool_call>{"name": "f", "arguments": {"a": [[[[1]]]]}}</tool_call>"#;
    for max in [3, 4, 5, 6] {
        let o = options().with_limits(Limits::new().with_max_depth(max));
        let ev = invariant("hermes", &o, deep);
        if max >= 6 {
            assert_eq!(names(&ev), ["f"]);
        } else {
            // the bracket that would nest one level too deep (two levels
            // are the call object and the arguments object)
            let at = deep
                .iter()
                .enumerate()
                .filter(|(_, &b)| b == b'[')
                .nth(max - 2)
                .map(|(k, _)| k as u64);
            assert_eq!(diagnostics(&ev), vec![(DiagnosticKind::Limit, at.unwrap())]);
        }
    }
    // name length in markup
    let named = format!("<function={}>{{}}</function>", "n".repeat(40));
    for max in [39, 40] {
        let o = options().with_limits(Limits::new().with_max_name_bytes(max));
        let ev = invariant("function-tag", &o, named.as_bytes());
        if max >= 40 {
            assert_eq!(names(&ev).len(), 1);
        } else {
            assert_eq!(diagnostics(&ev)[0].0, DiagnosticKind::Limit);
        }
    }
}

#[test]
fn tool_call_is_read_wherever_it_occurs() {
    let input = "Sure. TOOL_CALL: {\"tool_name\": \"a\", \"parameters\": {}}\n\
                 ```\n  TOOL_CALL {\"tool_name\": \"b\", \"parameters\": {\"x\": 1}}\n```\n\
                 and TOOL_CALL\n{\"tool\": \"c\", \"params\": {}}";
    for format in ["tool-call-json", "auto"] {
        let ev = invariant(format, &options(), input.as_bytes());
        assert_eq!(names(&ev), ["a", "b", "c"], "{format}");
        assert_eq!(diagnostics(&ev), vec![], "{format}");
    }
}

#[test]
fn a_longer_marker_holding_another_still_wins() {
    // `TOOL_CALL` is inside `[TOOL_CALLS]`: under auto the Mistral call wins,
    // and a `[TOOL_CALL` that goes on otherwise gives its `[` back as text.
    let ev = invariant(
        "auto",
        &options(),
        b"x [TOOL_CALLS][{\"name\": \"m\", \"arguments\": {}}]",
    );
    assert_eq!(names(&ev), ["m"]);
    assert_eq!(text(&ev), "x ");
    let ev = invariant(
        "auto",
        &options(),
        b"y [TOOL_CALL: {\"tool_name\": \"t\", \"parameters\": {}}",
    );
    assert_eq!(names(&ev), ["t"]);
    assert_eq!(text(&ev), "y [");
}

#[test]
fn tool_marker_may_be_indented_and_follow_a_byte_order_mark() {
    let input = "Plan:\n  TOOL: a\n  ARGUMENTS: {}\n\tTOOL: b\nARGUMENTS: {\"k\": 2}\nnot TOOL: c\nARGUMENTS: {}";
    for format in ["tool-arguments", "auto"] {
        let ev = invariant(format, &options(), input.as_bytes());
        assert_eq!(names(&ev), ["a", "b"], "{format}");
    }
    let bom = "\u{FEFF}TOOL: a\nARGUMENTS: {}";
    let ev = invariant("tool-arguments", &options(), bom.as_bytes());
    assert_eq!(names(&ev), ["a"]);
    assert_eq!(text(&ev), "\u{FEFF}");
    let bom = "\u{FEFF}TOOL_CALL {\"tool_name\": \"t\", \"parameters\": {}}";
    let ev = invariant("tool-call-json", &options(), bom.as_bytes());
    assert_eq!(names(&ev), ["t"]);
}

#[test]
fn one_shot_parse_equals_streaming_through_a_response_sink() {
    let input = b"a <tool_call>{\"name\": \"f\", \"arguments\": {\"n\": 99999999999999999999}}</tool_call> b";
    let g = Registry::builtin().grammar("hermes").unwrap();
    let whole = toolscan::parse(g.clone(), options(), input);
    let mut p = Parser::new(g, options());
    let mut r = Response::default();
    for piece in input.chunks(3) {
        p.feed_with(piece, &mut r);
    }
    p.finish_with(&mut r);
    assert_eq!(whole, r);
    let json = serde_json::to_string(&r).unwrap();
    assert!(
        json.contains(r#""arguments":{"n":99999999999999999999}"#),
        "{json}"
    );
}

/// Fragments of markers in either case, cut anywhere: the fast path for
/// plain chunks (which ignores a marker prefix in the wrong case) and the
/// ordinary path agree under every chunking.
#[test]
fn marker_fragments_in_any_case_under_every_chunking() {
    const PIECES: [&str; 14] = [
        "To",
        "TOOL",
        "tool",
        "OL:",
        "L: f\nARGUMENTS: {}\n",
        " x",
        "[run_",
        "module]",
        "[TOOL_CALL",
        "S]",
        "{\"tool_name\": \"t\", \"parameters\": {}}",
        "Town ",
        "\n",
        "<tool",
    ];
    let mut rng = toolscan_testkit::rng::Rng::new(5);
    for _ in 0..300 {
        let n = 1 + rng.below(8);
        let input: String = (0..n).map(|_| PIECES[rng.below(PIECES.len())]).collect();
        invariant("auto", &options(), input.as_bytes());
        invariant("tool-arguments", &options(), input.as_bytes());
    }
}

/// A stop sequence that cut a call's closing markup: with
/// `complete_at_stop`, `finish_at_stop` completes a call whose arguments
/// are complete; an ordinary `finish`, the option off, or arguments cut
/// short leave it truncated. Every case whole and byte by byte.
#[test]
fn a_stop_sequence_may_complete_a_call_whose_closer_it_cut() {
    let weather = r#"{"name": "get_weather", "arguments": {"city": "Paris"}}"#;
    let complete: &[(&str, String)] = &[
        ("hermes", format!("Sure. <tool_call>{weather}")),
        ("hermes", format!("Sure. <tool_call>\n{weather}\n")),
        ("hermes", format!("Sure. <tool_call>{weather}</tool_")),
        (
            "qwen3-coder",
            "Sure. <tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n"
                .to_string(),
        ),
        (
            "glm47",
            "Sure. <tool_call>get_weather<arg_key>city</arg_key><arg_value>Paris</arg_value>"
                .to_string(),
        ),
        ("function-tag", r#"Sure. <function=get_weather>{"city": "Paris"}"#.to_string()),
        ("auto", format!("Sure. <tool_call>{weather}")),
    ];
    let cut_short: &[(&str, &str)] = &[
        (
            "hermes",
            r#"Sure. <tool_call>{"name": "get_weather", "arguments": {"city": "Pa"#,
        ),
        (
            "hermes",
            r#"Sure. <tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}"#,
        ),
        (
            "qwen3-coder",
            "Sure. <tool_call>\n<function=get_weather>\n<parameter=city>\nParis",
        ),
        (
            "glm47",
            "Sure. <tool_call>get_weather<arg_key>city</arg_key>",
        ),
    ];
    // How the stream ends: at a stop sequence (and whether the option is
    // on), or plainly.
    let run = |format: &str, input: &str, on: bool, at_stop: bool, size: usize| {
        let g = Registry::builtin().grammar(format).unwrap();
        let mut p = Parser::new(g, options().with_complete_at_stop(on));
        let mut ev: Vec<Event> = Vec::new();
        for piece in input.as_bytes().chunks(size) {
            p.feed_into(piece, &mut ev);
        }
        if at_stop {
            p.finish_at_stop_with(&mut ev);
        } else {
            p.finish_into(&mut ev);
        }
        coalesce(ev)
    };
    for (format, input) in complete {
        for size in [1, input.len()] {
            let ev = run(format, input, true, true, size);
            let r = Response::from_events(&ev);
            assert_eq!(names(&ev), ["get_weather"], "{format} {input:?} by {size}");
            assert_eq!(
                serde_json::Value::Object(r.tool_calls[0].arguments.parse().unwrap()),
                serde_json::json!({"city": "Paris"}),
                "{format}"
            );
            assert_eq!(text(&ev), "Sure. ", "{format} {input:?}");
            assert!(diagnostics(&ev).is_empty(), "{format}: {ev:?}");
            assert_eq!(r.finish_reason, toolscan::FinishReason::ToolCalls);
            // An ordinary end, or the option off: truncated, all text.
            for (on, at_stop) in [(true, false), (false, true)] {
                let ev = run(format, input, on, at_stop, size);
                assert!(names(&ev).is_empty(), "{format} {on} {at_stop}: {ev:?}");
                assert_eq!(text(&ev), *input, "{format}");
                assert_eq!(
                    diagnostics(&ev).iter().map(|d| d.0).collect::<Vec<_>>(),
                    [DiagnosticKind::Truncated]
                );
            }
        }
    }
    for (format, input) in cut_short {
        for size in [1, input.len()] {
            let ev = run(format, input, true, true, size);
            assert!(names(&ev).is_empty(), "{format} {input:?}: {ev:?}");
            assert_eq!(text(&ev), *input, "{format}");
        }
    }
}
