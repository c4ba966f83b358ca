//! The promises bad input broke (issue 15's high and medium items): a
//! panic on bytes that are not UTF-8 in a parameter value, cost that grew
//! with the square of one chunk's calls, and characters cut in two where a
//! block failed inside them. Each test is named after what it protects.

use toolscan::{DiagnosticKind, Event, Parser, Registry};
use toolscan_testkit::bulk::units;
use toolscan_testkit::check::{calls_of, diagnostics_of, nothing_lost, same_coalesced, text_of};
use toolscan_testkit::chunk::{self, seeded, Api, Plan};

/// Runs `input` under `format` with every chunking and API, checks the
/// contract, and returns the coalesced events.
fn run(format: &str, input: &[u8]) -> Vec<Event> {
    chunk::invariant(|| seeded(format), input)
        .unwrap_or_else(|e| panic!("{format}: {e}\ninput: {input:?}"))
}

fn invalid_utf8_count(events: &[Event]) -> usize {
    diagnostics_of(events)
        .iter()
        .filter(|(k, _)| *k == DiagnosticKind::InvalidUtf8)
        .count()
}

// ---------------------------------------------------------------------------
// A parameter value that is not UTF-8 fails its call; it never panics.

/// A value left unclosed when its call closes, holding bytes that are not
/// UTF-8, in each parameter format that ends such a value at the call's
/// closer (this was a panic: `entered unreachable code`).
#[test]
fn bytes_not_utf8_in_an_unclosed_parameter_fail_the_call_without_panic() {
    let dsml: &[u8] = "Hi <｜DSML｜function_calls>\n<｜DSML｜invoke name=\"f\">\n\
        <｜DSML｜parameter name=\"a\" string=\"true\">x"
        .as_bytes();
    let dsml_tail = "</｜DSML｜invoke>\n</｜DSML｜function_calls> bye".as_bytes();
    let kimi: &[u8] = "Hi <|open|>tools<|sep|><|open|>call tool=\"f\" index=\"0\"<|sep|>\
        <|open|>argument key=\"a\" type=\"string\"<|sep|>x"
        .as_bytes();
    let kimi_tail = "<|close|>call<|sep|><|close|>tools<|sep|> bye".as_bytes();
    for (format, head, tail) in [
        ("deepseek-v3.2", dsml, dsml_tail),
        ("auto", dsml, dsml_tail),
        ("kimi-k3", kimi, kimi_tail),
        ("auto", kimi, kimi_tail),
    ] {
        for bad in [&b"\xff\xfe"[..], b"\xe2\x82", b"\xc3", b"\xed\xa0\x80"] {
            let input = [head, b"y", bad, b"z", tail].concat();
            let events = run(format, &input);
            assert!(calls_of(&events).is_empty(), "{format}: {events:?}");
            assert!(
                diagnostics_of(&events)
                    .iter()
                    .any(|(k, _)| *k == DiagnosticKind::Malformed),
                "{format}: the failed call is reported: {events:?}"
            );
            nothing_lost(&events, &input, &[]).unwrap_or_else(|e| panic!("{format}: {e}"));
        }
    }
}

/// The argument deltas of a call never hold U+FFFD standing for bytes that
/// were not UTF-8: they stop before such bytes (the call then fails).
#[test]
fn argument_deltas_never_hold_replaced_bytes() {
    let input = "<｜DSML｜function_calls><｜DSML｜invoke name=\"f\">\
        <｜DSML｜parameter name=\"a\" string=\"true\">ab"
        .as_bytes()
        .iter()
        .copied()
        .chain(*b"\xffcd")
        .chain("</｜DSML｜parameter></｜DSML｜invoke></｜DSML｜function_calls>".bytes())
        .collect::<Vec<u8>>();
    let events = run("deepseek-v3.2", &input);
    for e in &events {
        if let Event::ToolCallArgs { delta, .. } = e {
            assert!(!delta.contains('\u{FFFD}'), "{events:?}");
        }
    }
    assert!(calls_of(&events).is_empty());
}

// ---------------------------------------------------------------------------
// One chunk costs what many chunks cost.

/// Every format's calls, markers and failing bytes, repeated to 64 KiB and
/// fed as one chunk, give the events of 4 KiB and 1 KiB chunks. (One chunk
/// of many calls used to copy the rest of the chunk for each call; the
/// `linear` benchmark measures the cost per byte at 1, 4 and 16 MiB.)
#[test]
fn one_chunk_of_many_calls_gives_the_events_of_small_chunks() {
    for u in units() {
        let input = u.repeated(64 * 1024);
        let make = || {
            let g = Registry::builtin().grammar(&u.format).expect("format");
            Parser::new(g, u.options.clone())
        };
        let whole = chunk::feed(make(), Api::Sink, &input, &Plan::whole(input.len()));
        for size in [4096, 1024] {
            let small = chunk::feed(make(), Api::Sink, &input, &Plan::fixed(input.len(), size));
            same_coalesced(&whole, &small)
                .unwrap_or_else(|e| panic!("{} / {}: {size}-byte chunks: {e}", u.format, u.shape));
        }
    }
}

// ---------------------------------------------------------------------------
// A block that fails inside a character does not cut it.

/// `<｜tool▁sep` then `ｔ>`: the first two bytes of `ｔ` match those of `｜`
/// (the literal the name was waiting for), then its last byte fails the
/// call. The character is text, whole, and no byte is called invalid.
#[test]
fn a_character_that_fails_a_literal_halfway_stays_whole() {
    let input = "A<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>f<｜tool▁sepｔ>B";
    for format in ["deepseek-v3.1", "auto"] {
        let events = run(format, input.as_bytes());
        assert_eq!(text_of(&events), input, "{format}");
        assert_eq!(invalid_utf8_count(&events), 0, "{format}: {events:?}");
    }
}

/// Bytes that are not UTF-8 where a literal failed: one U+FFFD (and one
/// diagnostic) for each maximal invalid sequence, as
/// `String::from_utf8_lossy` counts them — never one per piece the failure
/// cut the sequence into.
#[test]
fn an_invalid_sequence_where_a_literal_failed_is_one_replacement() {
    let head = "A<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>f<｜tool▁sep".as_bytes();
    for bad in [
        &b"\xef\xbd"[..],
        b"\xef\xbd\xff",
        b"\xef",
        b"\xef\xbd\xef\xbd",
    ] {
        let input = [head, bad, b">B"].concat();
        let want = String::from_utf8_lossy(&input).matches('\u{FFFD}').count();
        for format in ["deepseek-v3.1", "auto"] {
            let events = run(format, &input);
            nothing_lost(&events, &input, &[]).unwrap_or_else(|e| panic!("{format}: {e}"));
            assert_eq!(
                invalid_utf8_count(&events),
                want,
                "{format} {bad:?}: {events:?}"
            );
        }
    }
}

// ---------------------------------------------------------------------------
// A bare `{` that cannot begin JSON is text, without a block.

/// `{` before a byte no JSON object can go on with is text at once (text
/// mode sees it from the scanner's own table); the same under every
/// chunking, a chunk that ends right after the `{` included, and a call
/// right after such braces is still read.
#[test]
fn bare_braces_before_bytes_json_refuses_are_text_and_the_call_after_them_is_read() {
    let call = r#"{"name": "f", "arguments": {"a": 1}}"#;
    for format in ["json", "llama3-json"] {
        let input = format!("{{{{x {{{{ {{1}} {call} {{{{");
        let events = run(format, input.as_bytes());
        let calls = calls_of(&events);
        assert_eq!(calls.len(), 1, "{format}: {events:?}");
        assert_eq!(calls[0].0, "f");
        assert_eq!(text_of(&events), input.replace(call, ""), "{format}");
        assert!(diagnostics_of(&events).is_empty(), "{format}: {events:?}");
    }
}
