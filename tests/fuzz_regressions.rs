//! Inputs the fuzz targets (`fuzz/`, `scripts/fuzz.sh`) found, minimized,
//! one test per defect, named after what it protects. Each input is fed
//! whole, byte by byte and in random chunks through every feeding API
//! (`toolscan_testkit::chunk::invariant`), and the guarantee the fuzzer saw
//! broken is asserted on its own.

use serde_json::json;
use toolscan::{Event, IdMint, Limits, Options, Parser, Registry};
use toolscan_testkit::check::{check_events, nothing_lost};
use toolscan_testkit::chunk;

fn options() -> Options {
    Options::new().with_ids(IdMint::Seeded(0))
}

fn parser(format: &str, options: Options) -> Parser {
    let g = Registry::builtin().grammar(format).expect("format exists");
    Parser::new(g, options)
}

/// The coalesced events of `input` under `format`, the same under every
/// chunking and API, keeping the event contract.
fn events(format: &str, opts: &Options, input: &[u8]) -> Vec<Event> {
    let events = chunk::invariant(|| parser(format, opts.clone()), input)
        .unwrap_or_else(|e| panic!("{format}: {e}\ninput: {input:?}"));
    check_events(&events).unwrap_or_else(|e| panic!("{format}: {e}"));
    events
}

// ---------------------------------------------------------------------------
// Invalid UTF-8 at the end of a block that is given back as text

/// A DeepSeek calls section cut off by the end of the stream, its last
/// bytes an unfinished character: the block comes back as text, and the
/// unfinished character is one U+FFFD, as `String::from_utf8_lossy`
/// counts it (not one per byte, nor twice).
#[test]
fn truncated_block_ending_in_a_cut_character_is_one_replacement() {
    let input = b"<\xef\xbd\x9ctool\xe2\x96\x81calls\xef\xbd\x9c><\xef\xbd\x9ctool\xe2\x96\x81call\xe2\x96\x81begin\xef\xbd\x9c><\xef\xbd\x9ctool\xe2\x96\x81sep\xef\x9e";
    let ev = events("deepseek-v3.1", &options(), input);
    nothing_lost(&ev, input, &[]).unwrap();
}

/// The same block with the character whole (U+FF5E, valid UTF-8): it
/// comes back as itself, under every chunking — a failed call's bytes are
/// released as text without cutting the character the next bytes finish.
#[test]
fn failed_call_in_a_calls_section_keeps_a_following_character_whole() {
    let input = "<｜tool▁calls｜><｜tool▁call▁begin｜><｜tool▁sep～>{city: Paris}";
    let ev = events("deepseek-v3.1", &options(), input.as_bytes());
    nothing_lost(&ev, input.as_bytes(), &[]).unwrap();
}

// ---------------------------------------------------------------------------
// Offsets of diagnostics under any chunking

/// FunctionGemma's brace notation naming a tool the tools list lacks: the
/// `unknown_tool` diagnostic's offset is the byte where the call showed
/// (its first key), the same whether the input came whole or in pieces —
/// not the end of the chunk that held that byte.
#[test]
fn unknown_tool_offset_in_python_like_arguments_does_not_depend_on_chunking() {
    let tools = toolscan::Tools::from_json(&serde_json::json!([
        {"type": "function", "function": {"name": "get_weather", "parameters": {}}}
    ]))
    .unwrap();
    let input = b"<start_function_call>call:s{nr:[p";
    let ev = events("functiongemma", &options().with_tools(tools), input);
    let offsets: Vec<u64> = ev
        .iter()
        .filter_map(|e| match e {
            Event::Diagnostic(d) if d.kind == toolscan::DiagnosticKind::UnknownTool => {
                Some(d.offset)
            }
            _ => None,
        })
        .collect();
    // Right after `nr:`, the first key.
    assert_eq!(offsets, [31]);
}

// ---------------------------------------------------------------------------
// Invalid UTF-8 in a parameter value

/// A qwen3-coder parameter value that is not UTF-8 and never closed, with a
/// tools list (so the value is typed by its schema): no panic at dispatch
/// (the fuzzer's first finding, also found and fixed on `main`); the call
/// is malformed and every byte comes back as text.
#[test]
fn unclosed_parameter_value_of_invalid_utf8_is_text_not_a_panic() {
    let tools = toolscan::Tools::from_json(&serde_json::json!([
        {"type": "function", "function": {"name": "get_weather", "parameters":
            {"type": "object", "properties": {"city": {"type": "string"}}}}}
    ]))
    .unwrap();
    let input = b"<tool_call><function=get_weather><parameter=city>\xff</tool_call>";
    let ev = events("qwen3-coder", &options().with_tools(tools), input);
    assert!(!ev.iter().any(|e| matches!(e, Event::ToolCallEnd { .. })));
    nothing_lost(&ev, input, &[]).unwrap();
}

/// A Python-like call whose name is not in the tools list is not a call;
/// the block ends at the byte that showed it (its first key), so what
/// follows is read as text the same way under every chunking: here
/// `<think>`, with reasoning separation on, opens reasoning whether the
/// input came whole or in pieces (it was text when it arrived in the same
/// chunk as the key).
#[test]
fn python_like_call_of_an_unknown_tool_ends_where_it_showed() {
    let tools = toolscan::Tools::from_json(&serde_json::json!([
        {"type": "function", "function": {"name": "get_weather", "parameters": {}}}
    ]))
    .unwrap();
    let input = b"[c(r='<think>";
    let ev = events(
        "pythonic",
        &options().with_tools(tools).with_reasoning(true),
        input,
    );
    assert_eq!(toolscan_testkit::check::text_of(&ev), "[c(r='");
}

// ---------------------------------------------------------------------------
// Custom formats

/// A described format whose marker is read again as its body
/// (`"replay": true`) and whose program fails on the marker's own bytes: the
/// failed block gives back the literal it had partly matched (`a`), text
/// mode reads it and the rest of the replayed marker, finds the same marker
/// at the same place, and opens the block again — without end. Each round
/// nests `Parser::process` → `switch` (`After::Replay`) → `process`, so the
/// stack overflows (SIGSEGV: found by the `format_file` target, reported by
/// AddressSanitizer as a stack overflow in `parser.rs`). What it protects:
/// a block that fails must not reopen at the offset it opened at — the
/// failed literal's first character is text, the rest is read again —
/// under every chunking, and a marker the program accepts still opens it.
#[test]
fn replayed_marker_that_its_program_refuses_does_not_reopen_forever() {
    // The program fails inside the marker (`ax`), or just after it (`abx`).
    for (k, lit) in ["ax", "abx"].iter().enumerate() {
        let name = format!("replay-loop-{k}");
        let mut reg = Registry::builtin();
        reg.register_json(&format!(
            r#"{{"name": "{name}", "open": "ab", "trust": "tentative", "replay": true,
                "program": [{{"lit": "{lit}"}}, "dispatch", "end"]}}"#
        ))
        .expect("the description loads");
        let g = reg.grammar(&name).expect("it compiles");
        for input in ["ab", "abab", "xaby ab", "aab abx ab", "ab✦ab"] {
            let events = toolscan_testkit::chunk::invariant(
                || toolscan::Parser::new(g.clone(), options()),
                input.as_bytes(),
            )
            .unwrap_or_else(|e| panic!("{lit} {input:?}: {e}"));
            let r = toolscan::Response::from_events(&events);
            // (No step names a call: each block is text.)
            assert!(r.tool_calls.is_empty(), "{lit} {input:?}");
            assert_eq!(r.text, input, "{lit} {input:?}");
        }
    }
}

/// The same loop when the program refuses the replayed marker's very
/// first byte (`]unctools[` read by a program that begins with the
/// literal `functools`: `format_file`, a bare SIGSEGV after ~90,000
/// executions, caught with `TOOLSCAN_FUZZ_LAST_INPUT`). Nothing of the
/// marker was held, so the first-character rule above found no byte to
/// make text: the block failed where it opened, text mode found the same
/// marker there, and `process` → `switch` → `process` nested until the
/// stack overflowed. What it protects: a replayed block that fails before
/// it read a byte makes the marker's first character text, under every
/// chunking (run on a 256 KiB stack, where the loop overflows at once).
#[test]
fn replayed_marker_refused_at_its_first_byte_does_not_reopen_forever() {
    std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(|| {
            let mut reg = Registry::builtin();
            reg.register_json(
                r#"{"name": "replay-first-byte", "openers": [{"open": "]unctools[",
                    "program": [{"lit": "functools"}, {"json": "call_list"}, "dispatch", "end"],
                    "replay": true, "trust": "tentative"}]}"#,
            )
            .expect("the description loads");
            let g = reg.grammar("replay-first-byte").expect("it compiles");
            for input in [
                "]unctools[",
                "a ]unctools[ b",
                "]unctools[]unctools[ functools[{}]",
            ] {
                let events =
                    chunk::invariant(|| Parser::new(g.clone(), options()), input.as_bytes())
                        .unwrap_or_else(|e| panic!("{input:?}: {e}"));
                check_events(&events).unwrap_or_else(|e| panic!("{input:?}: {e}"));
                let r = toolscan::Response::from_events(&events);
                assert!(r.tool_calls.is_empty(), "{input:?}");
                assert_eq!(r.text, input, "{input:?}");
            }
        })
        .expect("a thread")
        .join()
        .expect("no panic, no overflow");
}

/// `format_file`, a Gemma `tool_code` fence described as a format file
/// whose call list recovers a failed element by reading over it up to a
/// newline or a backtick: at the closing fence the name capture fails on
/// its first byte, the recovery reads nothing and jumps back to the
/// capture, and so on — a loop that reads no byte, which the runner ends
/// after visiting every step twice. The count of visits restarted at
/// every run of the block, so a chunk boundary inside the loop allowed it
/// more turns, each with its diagnostic (12 events whole, 13 cut at
/// `chunking 2`). The count is now kept at the place in the stream, across
/// runs. What it protects: chunking invariance of a program that loops
/// without reading.
#[test]
fn a_program_that_loops_without_reading_gives_up_at_one_place_under_any_chunking() {
    // The fuzzer's input as it wrote it (`tests/fuzz_findings/`): flags
    // (reasoning separation on), the chunking, the description, 0xFF, the
    // response.
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz_findings");
    let data =
        std::fs::read(dir.join("format-file-loop-without-reading.bin")).expect("the finding");
    let cut = data
        .iter()
        .position(|&b| b == 0xFF)
        .expect("a description, then 0xFF");
    let description = std::str::from_utf8(&data[2..cut]).expect("UTF-8");
    let mut reg = Registry::builtin();
    reg.register_json(description)
        .expect("the description loads");
    let g = reg.grammar("fuzz-gemma-tool-code").expect("it compiles");
    let found = &data[cut + 1..];
    for input in [
        found,
        b"```tool_code\nf(a=1)\n```\ntext ```tool_code\n```".as_slice(),
    ] {
        let events = chunk::invariant(
            || Parser::new(g.clone(), options().with_reasoning(true)),
            input,
        )
        .unwrap_or_else(|e| panic!("{input:?}: {e}"));
        check_events(&events).unwrap_or_else(|e| panic!("{input:?}: {e}"));
    }
}

// ---------------------------------------------------------------------------
// Calls held inside reasoning

/// `feed_chunks`, `json` with reasoning separation, a tools list and small
/// limits (`max_holdback` 48, `max_call_bytes` 200): a call held inside an
/// open `<think>` block, then bytes that reach the hold's limit while a
/// bare `{` block reads them. The `limit` diagnostic that ends the hold
/// came two bytes apart under two chunkings (1162 and 1164 in the run that
/// found it): a bare `{` that its block refuses at once is text for the
/// marker scan when the next byte is in the chunk, but opened a block when
/// the chunk ended after it, and the end of any block restarted the count
/// of text after the held call. Now only a block that completes a call
/// does. What it protects: chunking invariance of the hold's limit.
#[test]
fn the_limit_of_calls_held_in_reasoning_trips_at_one_offset_under_any_chunking() {
    let input: &[u8] = b"\x05<think>\n\n{\"name\": \"get_weather\"}\x80\"}}}: {\x01\x00apertustion}}\n:3d\\f\\u0\x13\x00\x00\x00\x00\x00\x00\x00u\x01\x00\x02\x80\"}}}";
    let limits = small_limits();
    let o = options()
        .with_reasoning(true)
        .with_limits(limits)
        .with_complete_at_stop(true);
    toolscan_testkit::chunk::invariant(|| parser("json", o.clone()), input)
        .unwrap_or_else(|e| panic!("{e}"));
}

/// `feed_chunks` (later in the same session): two more inputs where the
/// hold's limit (`json` and `llama3-json`, small limits, a tools list, the
/// call completed at its closing bracket) trips 2 and 35 bytes apart under
/// two chunkings: a bare `{` block that turns out to be no call is text
/// for the count, but the count was checked only back in text, and where
/// the block hands over to text depends on its reading window. The limit's
/// offset is now the byte at which the count passed its bound. Kept as the
/// fuzzer wrote them (`tests/fuzz_findings/`: format byte, options byte,
/// chunking byte, then the model output). What it protects: chunking
/// invariance of the hold's limit.
#[test]
fn the_limit_of_calls_held_in_reasoning_trips_at_one_offset_in_the_fuzzers_inputs() {
    let limits = small_limits();
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz_findings");
    for (file, format, reasoning) in [
        ("hold-limit-json.bin", "json", false),
        ("hold-limit-llama3-json.bin", "llama3-json", true),
    ] {
        let data = std::fs::read(dir.join(file)).expect("the finding is in the repository");
        let input = &data[3..];
        let o = options()
            .with_reasoning(reasoning)
            .with_starts_in_reasoning(reasoning)
            .with_limits(limits)
            .with_complete_at_stop(true);
        toolscan_testkit::chunk::invariant(|| parser(format, o.clone()), input)
            .unwrap_or_else(|e| panic!("{file}: {e}"));
    }
}

/// `feed_chunks`, `auto` with `complete_at_stop`: at the end of the stream
/// a block read again the tail of an unclosed value, which began a call
/// inside the still open reasoning block — a new hold, never sent: the
/// call counted (`finish_reason: tool_calls`) but none of its events came
/// out. What it protects: a hold begun at `finish` is sent like any other
/// (kept as the fuzzer wrote it in `tests/fuzz_findings/`).
#[test]
fn a_hold_begun_at_the_end_of_the_stream_is_sent() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz_findings");
    let data = std::fs::read(dir.join("held-call-read-again-at-finish.bin"))
        .expect("the finding is in the repository");
    // The fuzz target's tools list (its typed parameters shape the calls).
    let obj = |props: serde_json::Value| json!({"type": "object", "properties": props});
    let tools = json!([
        {"type": "function", "function": {"name": "get_weather", "parameters": obj(json!({
            "city": {"type": "string"}, "location": {"type": "string"},
            "unit": {"type": "string", "enum": ["c", "f"]}, "days": {"type": "integer"}}))}},
        {"type": "function", "function": {"name": "search", "parameters": obj(json!({
            "query": {"type": "string"}, "max": {"type": "integer"},
            "filters": {"type": "object", "properties": {
                "tags": {"type": "array", "items": {"type": "string"}},
                "max": {"type": "integer"}}}}))}},
        {"type": "function", "function": {"name": "calculate", "parameters": obj(json!({
            "expression": {"type": "string"}, "precise": {"type": "boolean"},
            "scale": {"type": "number"}, "extra": {"type": ["null", "integer"]}}))}},
        {"type": "function", "function": {"name": "python", "parameters": obj(json!({
            "code": {"type": "string"}}))}},
        {"type": "function", "function": {"name": "get_time", "parameters": obj(json!({}))}},
        {"name": "f", "parameters": obj(json!({"a": {"type": "array"}, "b": {}}))}
    ]);
    let tools = toolscan::Tools::from_json(&tools).expect("tools");
    let o = options().with_complete_at_stop(true).with_tools(tools);
    toolscan_testkit::chunk::invariant(|| parser("auto", o.clone()), &data[3..])
        .unwrap_or_else(|e| panic!("{e}"));
}

/// `feed_chunks`, `auto`, starting inside reasoning: at the end of the
/// stream an unclosed Qwen3-Coder value ends at the `</tool_call>` it
/// held; what followed (a Gemma 4 call, cut off) is read again and begins
/// a new hold. The call's start waited in the hold while the truncation
/// that abandons it went out at once, before it: a call that started
/// after its own abandonment, open at `done`. What it protects: at
/// `finish`, everything a block writes while calls are held waits behind
/// them, in order.
#[test]
fn a_call_abandoned_at_the_end_of_the_stream_is_abandoned_after_it_started() {
    let input = b"<tool_call><function=h><parameter=q></tool_call><|tool_call>call:g{c:";
    let o = options()
        .with_reasoning(true)
        .with_starts_in_reasoning(true);
    let ev = events("auto", &o, input);
    let start = ev
        .iter()
        .position(|e| matches!(e, Event::ToolCallStart { index: 1, .. }))
        .expect("the cut-off call starts");
    assert!(ev[start..].iter().any(
        |e| matches!(e, Event::Diagnostic(d) if d.kind == toolscan::DiagnosticKind::Truncated)
    ));
}

/// What the SSE rewrite under `format` makes of `body` cut into chunks of
/// `size` bytes (the items that are not errors, joined).
fn sse_rewrite_in_chunks(body: &[u8], format: &str, size: usize) -> Vec<u8> {
    use futures::{executor::block_on, stream, StreamExt};
    let grammar = Registry::builtin()
        .grammar(format)
        .expect("a built-in format");
    let chunks: Vec<Result<bytes::Bytes, std::io::Error>> = body
        .chunks(size)
        .map(|c| Ok(bytes::Bytes::copy_from_slice(c)))
        .collect();
    let config = toolscan_sse::Config::new(grammar).with_options(options());
    let out = toolscan_sse::rewrite_stream(stream::iter(chunks), config);
    block_on(out.collect::<Vec<_>>())
        .into_iter()
        .filter_map(Result::ok)
        .flat_map(|b| b.to_vec())
        .collect()
}

/// `sse_rewrite`, `auto`: a "deadly signal" (the target's assertion
/// aborting) that a replay did not always reproduce: the rewrite's output
/// differed from run to run (the `t` of `Let` came one chunk later now and
/// then). `auto`'s automaton ignores case for its case-insensitive
/// markers' sake, so it took that `t` for the start of `TOOL_CALL`; the
/// scan held it, the fast check for plain text did not, and which of the
/// two ran depended on whether the AVX-512 search skipped the `L` before
/// it — on where the text's 64-byte boundaries fell in memory. Fixed:
/// bytes only a marker of the wrong case may begin are not held, on every
/// path. (On a CPU without AVX-512 both paths always agreed.)
#[test]
fn sse_rewrite_of_text_with_a_wrong_case_marker_prefix_is_the_same_under_any_chunking() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz_findings");
    let data = std::fs::read(dir.join("sse-hold-depends-on-address.bin"))
        .expect("the finding is in the repository");
    let body = &data[3..];
    let run = |size: usize| sse_rewrite_in_chunks(body, "auto", size);
    let whole = run(body.len().max(1));
    assert_eq!(run(1), whole);
    assert_eq!(run(7), whole);
}

/// `sse_rewrite`, `xml-tool`: an upstream event ending in `\n\r\n` (its
/// blank line ended by CRLF) passed on as it came kept the LF when it came
/// in the same chunk as the CR, and lost it when the chunk ended at the
/// CR (the SSE decoder of our own, before it was released). A block whose
/// blank line ends in a CR now always ends in CRLF.
#[test]
fn an_event_whose_blank_line_is_cut_between_cr_and_lf_is_the_same_under_any_chunking() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz_findings");
    let data = std::fs::read(dir.join("sse-blank-line-cr-cut-before-its-lf.bin"))
        .expect("the finding is in the repository");
    let body = &data[3..];
    assert!(
        body.windows(3).any(|w| w == b"\n\r\n"),
        "the finding's line end"
    );
    let run = |size: usize| sse_rewrite_in_chunks(body, "xml-tool", size);
    let whole = run(body.len().max(1));
    for size in 1..=16 {
        assert_eq!(run(size), whole, "chunks of {size}");
    }
}

/// The same, in the core and without chance: text that ends in a byte only
/// a marker of the wrong case begins (`t`, for `TOOL_CALL`) after a
/// capital that is no marker's (`L`) goes out whole, wherever it sits in
/// memory (every offset from a 64-byte boundary).
#[test]
fn text_ending_in_a_wrong_case_marker_prefix_goes_out_at_any_address() {
    let text = "agggggggggggggggggggggggggggggggggggggggggggll\nLet";
    let mut buf = vec![b' '; 64 + text.len()];
    for offset in 0..64 {
        buf[offset..offset + text.len()].copy_from_slice(text.as_bytes());
        let mut p = parser("auto", options());
        let ev = p.feed(&buf[offset..offset + text.len()]);
        assert_eq!(
            ev,
            vec![Event::Text {
                delta: text.to_string().into()
            }],
            "offset {offset}"
        );
    }
}

/// `feed_chunks`, 2026-12-02, on the final code of stop 37, after 926 188
/// executions. `auto`, starting inside reasoning, small limits, one call
/// at most, `complete_at_stop`: a call is held inside the open reasoning
/// block, and after it comes a code fence whose JSON is no call (60 bytes
/// of reasoning in all, past the 48 the hold allows). In 1–7-byte chunks
/// the hold's limit tripped at the byte after the fence gave up; whole,
/// the fence read to the end of the input first, no text byte came after
/// it, and the end of the stream sent the call. The end of the stream now
/// checks the bound too. Kept as the fuzzer wrote it
/// (`tests/fuzz_findings/`: format byte, options byte, chunking byte, then
/// the model output).
#[test]
fn the_limit_of_a_call_held_in_reasoning_in_auto_does_not_depend_on_the_chunking() {
    let limits = small_limits();
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz_findings");
    let data = std::fs::read(dir.join("hold-limit-auto-one-call.bin"))
        .expect("the finding is in the repository");
    let o = options()
        .with_reasoning(true)
        .with_starts_in_reasoning(true)
        .with_limits(limits)
        .with_max_calls(1)
        .with_complete_at_stop(true);
    let input = &data[3..];
    let ev = events("auto", &o, input);
    // Quoted: all of it is reasoning, byte for byte (the invalid bytes as
    // U+FFFD).
    assert!(
        !ev.iter().any(|e| matches!(e, Event::ToolCallEnd { .. })),
        "the held call was quoted: {ev:?}"
    );
    let reasoning: String = ev
        .iter()
        .filter_map(|e| match e {
            Event::Reasoning { delta } => Some(delta.as_ref()),
            _ => None,
        })
        .collect();
    assert_eq!(reasoning, String::from_utf8_lossy(input));
    // The call ends at byte 76; 48 bytes of reasoning after it are allowed.
    let limit: Vec<_> = ev
        .iter()
        .filter_map(|e| match e {
            Event::Diagnostic(d) if d.kind == toolscan::DiagnosticKind::Limit => Some(d.offset),
            _ => None,
        })
        .collect();
    assert_eq!(limit, vec![77 + 48], "{ev:?}");
}

/// The same, written small: a held call, then a code fence that is no
/// call, read to the end of the input. The reasoning after the call is
/// over the hold's bound, whole or byte by byte.
#[test]
fn a_fence_that_is_no_call_after_a_held_call_counts_toward_the_holds_bound() {
    let limits = Limits::new().with_max_holdback(48);
    let o = options()
        .with_reasoning(true)
        .with_starts_in_reasoning(true)
        .with_limits(limits);
    let text = "abcdefghij".repeat(4);
    let over = format!("x\u{2726} tool_call: read_fi\n{text}\n```json\n{{\"city\": \"Pl>");
    let ev = events("auto", &o, over.as_bytes());
    assert!(
        ev.iter().any(
            |e| matches!(e, Event::Diagnostic(d) if d.kind == toolscan::DiagnosticKind::Limit)
        ),
        "{ev:?}"
    );
    assert!(!ev.iter().any(|e| matches!(e, Event::ToolCallEnd { .. })));
    // Under the bound (a shorter fence): the reasoning never closed, so
    // the held call is a call.
    let under = "x\u{2726} tool_call: read_fi\n```json\n{\"city\": \"Pl>";
    let ev = events("auto", &o, under.as_bytes());
    assert!(
        ev.iter()
            .any(|e| matches!(e, Event::ToolCallEnd { name, .. } if name == "read_fi")),
        "{ev:?}"
    );
}

/// The fuzz targets' small limits (option bit 4): a 200-byte call, depth
/// 4, 48 bytes of hold-back, 12-byte names.
fn small_limits() -> Limits {
    Limits::new()
        .with_max_call_bytes(200)
        .with_max_depth(4)
        .with_max_holdback(48)
        .with_max_name_bytes(12)
}
