//! The module's exports called on the host as JavaScript calls them: the
//! input written into the module's buffer, the status read, the answer
//! read from the output buffer.

use serde_json::{json, Value};
use toolscan_wasm::{
    output, requests, toolscan_output_index, toolscan_parser_feed, toolscan_parser_finish,
    toolscan_parser_free, toolscan_parser_new, toolscan_parser_offset, toolscan_parsers_live,
    toolscan_request, write_input, FAILED, OK, ONE_ARGS, ONE_TEXT,
};

fn new_parser(options: &str) -> i32 {
    toolscan_parser_new(write_input(options.as_bytes()))
}

fn feed(handle: i32, chunk: &[u8]) -> (i32, String) {
    let status = toolscan_parser_feed(handle, write_input(chunk));
    (status, output())
}

fn json_of(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

#[test]
fn a_lone_delta_is_answered_bare_and_several_events_as_a_json_array() {
    let h = new_parser(r#"{"format": "hermes", "ids": "seeded", "seed": 0}"#);
    assert!(h >= 0, "{}", output());
    assert_eq!(
        output(),
        "hermes",
        "the answer of a new parser is its format"
    );
    assert_eq!(feed(h, b"Hello"), (ONE_TEXT, "Hello".to_owned()));
    // A marker's start is held: no events, no output.
    assert_eq!(feed(h, b" <tool"), (ONE_TEXT, " ".to_owned()));
    assert_eq!(feed(h, b"_call>"), (OK, String::new()));
    let (status, out) = feed(h, br#"{"name": "f", "arguments": {"a": "#);
    assert_eq!(status, OK);
    assert_eq!(json_of(&out)[0]["type"], "tool_call_start");
    let (status, out) = feed(h, b"12");
    assert_eq!((status, out.as_str()), (ONE_ARGS, "12"));
    let (status, out) = feed(h, b"3}}</tool_call>");
    assert_eq!(status, OK);
    let events = json_of(&out);
    let end = events
        .as_array()
        .and_then(|a| a.iter().find(|e| e["type"] == "tool_call_end"))
        .unwrap_or_else(|| panic!("no end in {events}"));
    assert_eq!(
        end["arguments"],
        json!(r#"{"a": 123}"#),
        "arguments as JSON text"
    );
    assert_eq!(toolscan_parser_finish(h, 0), OK);
    assert_eq!(
        json_of(&output()),
        json!([{"type": "done", "finish_reason": "tool_calls"}])
    );
    toolscan_parser_free(h);
}

#[test]
fn argument_pieces_carry_their_call_index() {
    let h = new_parser(r#"{"format": "hermes"}"#);
    feed(h, br#"<tool_call>{"name": "f", "arguments": {"s": "ab"#);
    let (status, out) = feed(h, b"cd");
    assert_eq!((status, out.as_str()), (ONE_ARGS, "cd"));
    assert_eq!(toolscan_output_index(), 0);
    toolscan_parser_free(h);
}

#[test]
fn errors_are_json_objects_with_a_code() {
    assert_eq!(new_parser(r#"{"format": "nope"}"#), FAILED);
    assert_eq!(json_of(&output())["error"], "unknown_format");
    assert_eq!(new_parser(r#"{"format": 3}"#), FAILED);
    assert_eq!(json_of(&output())["error"], "options");

    let h = new_parser("");
    assert_eq!(toolscan_parser_finish(h, 0), OK);
    assert_eq!(feed(h, b"x").0, FAILED);
    assert_eq!(json_of(&output())["error"], "finished");
    assert_eq!(toolscan_parser_finish(h, 0), OK, "a second finish");
    assert_eq!(output(), "");
    toolscan_parser_free(h);
    assert_eq!(feed(h, b"x").0, FAILED);
    assert_eq!(json_of(&output())["error"], "freed");
    assert_eq!(toolscan_parser_offset(h), -1.0);
    assert_eq!(feed(-5, b"x").0, FAILED, "a handle never made");
}

#[test]
fn strict_utf8_refuses_a_bad_chunk_whole_and_says_where() {
    let h = new_parser(r#"{"invalidUtf8": "throw"}"#);
    assert_eq!(feed(h, b"ab\xC3").0, ONE_TEXT);
    assert_eq!(feed(h, b"(").0, FAILED);
    let e = json_of(&output());
    assert_eq!(
        (e["error"].as_str(), e["offset"].as_u64()),
        (Some("invalid_utf8"), Some(2))
    );
    assert_eq!(
        toolscan_parser_offset(h),
        3.0,
        "the refused chunk was not fed"
    );
    assert_eq!(feed(h, b"\xA9"), (ONE_TEXT, "é".to_owned()));
    assert_eq!(feed(h, b"\xE2\x82").0, OK);
    assert_eq!(
        toolscan_parser_finish(h, 0),
        FAILED,
        "the answer ends inside a character"
    );
    assert_eq!(json_of(&output())["offset"], 4);
    toolscan_parser_free(h);
}

#[test]
fn requests_answer_json() {
    let run = |op: u32, input: &str| {
        let status = toolscan_request(op, write_input(input.as_bytes()), 0);
        (status, json_of(&output()))
    };
    let (status, formats) = run(requests::FORMATS, "");
    assert_eq!(status, OK);
    assert!(formats.as_array().is_some_and(|f| f.len() >= 40));
    assert_eq!(
        run(requests::FORMAT_FOR_MODEL, "Qwen/Qwen3-8B").1,
        json!("hermes")
    );
    assert_eq!(
        run(requests::FORMAT_FOR_MODEL, "nobody/knows").1,
        Value::Null
    );
    let (status, written) = run(
        requests::RENDER,
        r#"{"format": "hermes", "calls": [{"name": "f", "arguments": {"a": 1}}]}"#,
    );
    assert_eq!(status, OK);
    assert!(written
        .as_str()
        .is_some_and(|s| s.contains(r#""name": "f""#)));
    assert_eq!(
        run(requests::MANIFEST, r#"{"format": "hermes", "tools": []}"#).0,
        FAILED
    );
    assert_eq!(run(99, "").0, FAILED);

    let options = br#"{"format": "hermes"}"#;
    let text = br#"ok<tool_call>{"name": "f", "arguments": {}}</tool_call>"#;
    let mut both = options.to_vec();
    both.extend_from_slice(text);
    let status = toolscan_request(requests::PARSE, write_input(&both), options.len() as u32);
    assert_eq!(status, OK);
    let r = json_of(&output());
    assert_eq!(
        (r["text"].as_str(), r["tool_calls"][0]["arguments"].as_str()),
        (Some("ok"), Some("{}"))
    );
}

#[test]
fn freed_slots_are_reused_and_none_leak() {
    let before = toolscan_parsers_live();
    let a = new_parser("");
    let b = new_parser("");
    assert_eq!(toolscan_parsers_live(), before + 2);
    toolscan_parser_free(a);
    let c = new_parser("");
    assert!(c <= a.max(b), "slot {c} reused");
    toolscan_parser_free(b);
    toolscan_parser_free(c);
    toolscan_parser_free(c);
    assert_eq!(toolscan_parsers_live(), before);
}
