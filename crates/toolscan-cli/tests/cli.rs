//! End-to-end tests of the `toolscan` binary: exit statuses, stdin and file
//! input, the output modes, limits, and chunking invariance of the output.
//!
//! The engine behind the binary is still changing, so these tests check the
//! shape of the output and the invariants, not exact event sequences.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_toolscan");

/// Runs `toolscan ARGS` with `stdin` piped in.
fn run(args: &[&str], stdin: &[u8]) -> Output {
    toolscan_testkit::process::run(BIN, None, args, stdin)
}

fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).expect("stdout is UTF-8")
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A file in a fresh per-test temporary directory.
fn temp_file(test: &str, name: &str, contents: &[u8]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("toolscan-cli-{}-{test}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join(name);
    std::fs::write(&path, contents).expect("write temp file");
    path
}

/// Asserts exit status 2, nothing on stdout and one line on stderr.
fn assert_usage_error(out: &Output, what: &str) {
    assert_eq!(out.status.code(), Some(2), "{what}: {}", stderr(out));
    assert!(out.stdout.is_empty(), "{what}: stdout {:?}", stdout(out));
    let err = stderr(out);
    assert_eq!(
        err.lines().count(),
        1,
        "{what}: one-line message, got {err:?}"
    );
    assert!(err.ends_with('\n') && err.len() > 1, "{what}: {err:?}");
}

const CALL: &str = r#"Let me check. <tool_call>{"name":"f","arguments":{"a":1}}</tool_call> Done."#;

#[test]
fn bad_flag_exits_2() {
    assert_usage_error(&run(&["parse", "--bogus"], b""), "--bogus");
    assert_usage_error(&run(&["parse", "--output", "yaml"], b""), "--output yaml");
    assert_usage_error(&run(&["parse", "--ids", "nope"], b""), "--ids nope");
    assert_usage_error(&run(&["frobnicate"], b""), "unknown subcommand");
    assert_usage_error(&run(&["parse", "a", "b"], b""), "two files");
}

#[test]
fn no_subcommand_exits_2() {
    let out = run(&[], b"");
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
}

#[test]
fn help_and_version_exit_0() {
    for args in [&["--help"][..], &["parse", "--help"], &["--version"]] {
        let out = run(args, b"");
        assert_eq!(out.status.code(), Some(0), "{args:?}");
        assert!(!out.stdout.is_empty(), "{args:?}");
    }
}

#[test]
fn bad_chunk_exits_2() {
    for chunk in ["0", "-3", "x", "random:", "random:x", "random:-1"] {
        assert_usage_error(&run(&["parse", "--chunk", chunk], b"hi"), chunk);
    }
}

#[test]
fn missing_file_exits_2() {
    let out = run(&["parse", "/definitely/not/here.txt"], b"");
    assert_usage_error(&out, "missing file");
    assert!(stderr(&out).contains("/definitely/not/here.txt"));
}

#[test]
fn directory_as_input_exits_2() {
    let dir = std::env::temp_dir();
    let out = run(&["parse", dir.to_str().expect("utf-8 temp dir")], b"");
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(stderr(&out).lines().count(), 1);
}

#[test]
fn unknown_format_exits_2() {
    assert_usage_error(
        &run(&["parse", "--format", "no-such-format"], b"hi"),
        "format",
    );
}

#[test]
fn bad_tools_file_exits_2() {
    let missing = "/definitely/not/tools.json";
    assert_usage_error(&run(&["parse", "--tools", missing], b"hi"), "missing tools");

    let cases: [(&str, &[u8]); 4] = [
        ("syntax.json", b"[{"),
        ("object.json", br#"{"name":"f"}"#),
        ("nameless.json", br#"[{"type":"function","function":{}}]"#),
        ("binary.json", b"\xff\xfe\x00"),
    ];
    for (name, contents) in cases {
        let path = temp_file("bad_tools", name, contents);
        let out = run(&["parse", "--tools", path.to_str().expect("utf-8")], b"hi");
        assert_usage_error(&out, name);
    }
}

#[test]
fn good_tools_file_is_accepted() {
    let tools = br#"[{"type":"function","function":{"name":"f",
        "parameters":{"type":"object","properties":{"a":{"type":"integer"}}}}}]"#;
    let path = temp_file("good_tools", "tools.json", tools);
    let out = run(
        &[
            "parse",
            "--tools",
            path.to_str().expect("utf-8"),
            "--output",
            "final",
        ],
        CALL.as_bytes(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    final_object(&stdout(&out));
}

#[test]
fn good_input_exits_0() {
    for input in [&b""[..], b"hello", CALL.as_bytes(), b"\xff\xfe broken \xc3"] {
        let out = run(&["parse"], input);
        assert_eq!(out.status.code(), Some(0), "{input:?}: {}", stderr(&out));
        assert!(out.stderr.is_empty(), "{input:?}: {}", stderr(&out));
        events(&stdout(&out));
    }
}

#[test]
fn reads_a_file() {
    let path = temp_file("reads_a_file", "in.txt", CALL.as_bytes());
    let from_file = run(
        &["parse", "--output", "final", path.to_str().expect("utf-8")],
        b"",
    );
    let from_stdin = run(&["parse", "--output", "final"], CALL.as_bytes());
    assert_eq!(from_file.status.code(), Some(0), "{}", stderr(&from_file));
    assert_eq!(from_file.stdout, from_stdin.stdout);
}

#[test]
fn dash_reads_stdin() {
    let dash = run(&["parse", "-"], CALL.as_bytes());
    let none = run(&["parse"], CALL.as_bytes());
    assert_eq!(dash.status.code(), Some(0), "{}", stderr(&dash));
    assert_eq!(dash.stdout, none.stdout);
    let evs = events(&stdout(&dash));
    assert!(evs.len() >= 2, "some content and done: {evs:?}");
}

/// Checks `--output final` output: one line, one object with the four keys.
fn final_object(out: &str) -> Value {
    assert_eq!(out.lines().count(), 1, "one line: {out:?}");
    assert!(out.ends_with('\n'));
    let v: Value = serde_json::from_str(out).expect("valid JSON");
    assert!(v["text"].is_string(), "{v}");
    assert!(v["tool_calls"].is_array(), "{v}");
    assert!(v["diagnostics"].is_array(), "{v}");
    let reason = v["finish_reason"].as_str().expect("finish_reason");
    assert!(["stop", "tool_calls", "length"].contains(&reason), "{v}");
    for call in v["tool_calls"].as_array().into_iter().flatten() {
        assert!(call["id"].is_string() && call["name"].is_string(), "{call}");
        assert!(call["arguments"].is_object(), "{call}");
    }
    v
}

/// Checks `--output events` output: each line a JSON object with a known
/// `type`, the last (and only the last) one `done`.
fn events(out: &str) -> Vec<Value> {
    const TYPES: [&str; 7] = [
        "text",
        "reasoning",
        "tool_call_start",
        "tool_call_args",
        "tool_call_end",
        "diagnostic",
        "done",
    ];
    let evs: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).expect("each line is JSON"))
        .collect();
    let (last, rest) = evs.split_last().expect("at least the done event");
    for e in &evs {
        let t = e["type"].as_str().expect("a type field");
        assert!(TYPES.contains(&t), "{e}");
    }
    assert_eq!(last["type"], "done", "{last}");
    assert!(last["finish_reason"].is_string(), "{last}");
    assert!(
        rest.iter().all(|e| e["type"] != "done"),
        "done is last: {out}"
    );
    evs
}

#[test]
fn output_final_is_one_object() {
    for input in ["", "plain text", CALL] {
        let out = run(&["parse", "--output", "final"], input.as_bytes());
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        final_object(&stdout(&out));
    }
}

#[test]
fn output_events_are_json_lines_ending_in_done() {
    for input in ["", "plain text", CALL] {
        let out = run(&["parse", "--output", "events"], input.as_bytes());
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        events(&stdout(&out));
    }
}

#[test]
fn events_and_final_agree() {
    for input in ["plain text", CALL] {
        let evs = events(&stdout(&run(&["parse"], input.as_bytes())));
        let fin = final_object(&stdout(&run(
            &["parse", "--output", "final"],
            input.as_bytes(),
        )));
        let text: String = evs
            .iter()
            .filter(|e| e["type"] == "text")
            .filter_map(|e| e["delta"].as_str())
            .collect();
        assert_eq!(fin["text"], text.as_str());
        let ends = evs.iter().filter(|e| e["type"] == "tool_call_end").count();
        assert_eq!(fin["tool_calls"].as_array().map(Vec::len), Some(ends));
        assert_eq!(fin["finish_reason"], evs[evs.len() - 1]["finish_reason"]);
    }
}

#[test]
fn every_input_byte_reaches_the_output_for_plain_text() {
    let input = "Zürich 東京 😀 and nothing else";
    let fin = final_object(&stdout(&run(
        &["parse", "--output", "final"],
        input.as_bytes(),
    )));
    assert_eq!(fin["text"], input);
}

#[test]
fn model_flag() {
    // An unknown model falls back to auto with a one-line warning.
    let out = run(
        &["parse", "--model", "no-such-org/no-such-model-123"],
        b"hi",
    );
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(stderr(&out).lines().count(), 1, "{}", stderr(&out));
    assert!(stderr(&out).contains("warning"));
    events(&stdout(&out));
    // An explicit --format wins (no warning, even for an unknown model).
    let out = run(
        &["parse", "--format", "auto", "--model", "no-such/model"],
        b"hi",
    );
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stderr.is_empty(), "{}", stderr(&out));
    // A known model runs.
    let out = run(
        &["parse", "--model", "Qwen/Qwen3-8B", "--output", "final"],
        CALL.as_bytes(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    final_object(&stdout(&out));
}

#[test]
fn reasoning_flag_separates_reasoning() {
    let input = b"<think>hmm</think>Answer.";
    let out = run(&["parse", "--reasoning", "--output", "final"], input);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = final_object(&stdout(&out));
    assert_eq!(v["reasoning"], "hmm");
    assert_eq!(v["text"], "Answer.");
    // the field is there even when the response had no reasoning
    let out = run(&["parse", "--reasoning", "--output", "final"], b"Answer.");
    assert_eq!(final_object(&stdout(&out))["reasoning"], "");
    // and absent without the flag, where <think> is plain text
    let out = run(&["parse", "--output", "final"], input);
    let v = final_object(&stdout(&out));
    assert!(v.get("reasoning").is_none());
    assert_eq!(v["text"], "<think>hmm</think>Answer.");
}

/// A call quoted while thinking, then made (a Seed-OSS transcript).
const QUOTED_IN_REASONING: &str = "<seed:think>I call it as <seed:tool_call>\n<function=f>\n<parameter=a>1</parameter>\n</function>\n</seed:tool_call> here.</seed:think><seed:tool_call>\n<function=f>\n<parameter=a>2</parameter>\n</function>\n</seed:tool_call>";

#[test]
fn calls_in_reasoning_flag_of_parse() {
    for (extra, calls) in [
        (&[][..], 1),
        (&["--calls-in-reasoning", "text"], 1),
        (&["--calls-in-reasoning", "call"], 2),
    ] {
        for reasoning in [&[][..], &["--reasoning"]] {
            let mut args = vec!["parse", "--output", "final"];
            args.extend_from_slice(extra);
            args.extend_from_slice(reasoning);
            let out = run(&args, QUOTED_IN_REASONING.as_bytes());
            assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
            let v = final_object(&stdout(&out));
            let got = v["tool_calls"].as_array().expect("calls");
            assert_eq!(got.len(), calls, "{args:?}: {v}");
            assert_eq!(got.last().expect("a call")["arguments"]["a"], 2, "{v}");
        }
    }
    // The block never closed: the call inside it is a call.
    let open = "<seed:think>Checking.<seed:tool_call>\n<function=f>\n<parameter=a>1</parameter>\n</function>\n</seed:tool_call>";
    let out = run(&["parse", "--output", "final"], open.as_bytes());
    let v = final_object(&stdout(&out));
    assert_eq!(v["tool_calls"].as_array().map(Vec::len), Some(1), "{v}");
    assert_usage_error(
        &run(&["parse", "--calls-in-reasoning", "maybe"], b""),
        "--calls-in-reasoning maybe",
    );
}

#[test]
fn calls_in_reasoning_flag_of_sse() {
    let chunk = |content: &str| {
        let v = serde_json::json!({
            "id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
            "choices": [{"index": 0, "delta": {"content": content}, "finish_reason": null}]
        });
        format!("data: {v}\n\n")
    };
    let (a, b) = QUOTED_IN_REASONING.split_at(QUOTED_IN_REASONING.len() / 2);
    let input = format!("{}{}data: [DONE]\n\n", chunk(a), chunk(b));
    for (extra, calls) in [(&[][..], 1), (&["--calls-in-reasoning", "call"], 2)] {
        let mut args = vec!["sse", "--format", "seed-oss", "--reasoning"];
        args.extend_from_slice(extra);
        let out = run(&args, input.as_bytes());
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
        let starts = stdout(&out)
            .lines()
            .filter_map(|l| l.strip_prefix("data: "))
            .filter_map(|d| serde_json::from_str::<Value>(d).ok())
            .flat_map(|v| {
                v["choices"][0]["delta"]["tool_calls"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default()
            })
            .filter(|c| c["id"].is_string())
            .count();
        assert_eq!(starts, calls, "{args:?}: {}", stdout(&out));
    }
}

#[test]
fn ids_flag() {
    for ids in ["seeded", "random", "mistral"] {
        let out = run(
            &["parse", "--ids", ids, "--output", "final"],
            CALL.as_bytes(),
        );
        assert_eq!(out.status.code(), Some(0), "{ids}: {}", stderr(&out));
        final_object(&stdout(&out));
    }
}

#[test]
fn output_is_reproducible() {
    let a = run(&["parse"], CALL.as_bytes());
    let b = run(&["parse"], CALL.as_bytes());
    assert_eq!(a.stdout, b.stdout);
}

const CHUNKINGS: [&str; 6] = ["1", "2", "3", "random:7", "random:12345", "1000000"];

/// `--output final` is byte-identical however the input is chunked
/// (ids are seeded by default, so they match too).
fn assert_chunking_invariant(inputs: &[&str]) {
    for input in inputs {
        for format in ["auto", "hermes"] {
            let whole = run(
                &["parse", "--format", format, "--output", "final"],
                input.as_bytes(),
            );
            assert_eq!(whole.status.code(), Some(0), "{}", stderr(&whole));
            final_object(&stdout(&whole));
            for chunk in CHUNKINGS {
                let out = run(
                    &[
                        "parse", "--format", format, "--output", "final", "--chunk", chunk,
                    ],
                    input.as_bytes(),
                );
                assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
                assert_eq!(
                    stdout(&out),
                    stdout(&whole),
                    "--format {format} --chunk {chunk} on {input:?}"
                );
            }
        }
    }
}

/// Many lines: more than one 8 KiB read block.
fn many_lines(line: &str) -> String {
    (0..400).map(|i| format!("line {i}: {line}\n")).collect()
}

#[test]
fn final_output_is_chunking_invariant() {
    assert_chunking_invariant(&[
        "",
        "Just some plain text, nothing to see here.\nSecond line.",
        CALL,
        &many_lines("plain text"),
        &many_lines(CALL),
    ]);
}

/// Merges consecutive `text` / `reasoning` deltas and consecutive
/// `tool_call_args` deltas of one index: the form in which the event stream
/// is the same for every chunking.
fn merged(evs: Vec<Value>) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    for e in evs {
        if let Some(last) = out.last_mut() {
            let same_kind = last["type"] == e["type"];
            let mergeable = match e["type"].as_str() {
                Some("text" | "reasoning") => same_kind,
                Some("tool_call_args") => same_kind && last["index"] == e["index"],
                _ => false,
            };
            if mergeable {
                let joined = format!(
                    "{}{}",
                    last["delta"].as_str().unwrap_or_default(),
                    e["delta"].as_str().unwrap_or_default()
                );
                last["delta"] = Value::String(joined);
                continue;
            }
        }
        out.push(e);
    }
    out
}

#[test]
fn events_are_chunking_invariant_after_merging() {
    for input in ["plain text only", CALL, &many_lines(CALL)] {
        let whole = merged(events(&stdout(&run(&["parse"], input.as_bytes()))));
        for chunk in CHUNKINGS {
            let out = run(&["parse", "--chunk", chunk], input.as_bytes());
            assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
            let got = merged(events(&stdout(&out)));
            assert_eq!(got, whole, "--chunk {chunk} on {input:?}");
        }
    }
}

/// Splits inside multi-byte characters must not change the output.
#[test]
fn final_output_is_chunking_invariant_utf8() {
    assert_chunking_invariant(&[
        "Zürich 東京 😀 — «ok»",
        r#"Zürich 東京 😀 <tool_call>{"name":"f","arguments":{"city":"東京 😀"}}</tool_call>"#,
        &many_lines("Zürich 東京 😀"),
    ]);
}

#[test]
fn formats_table_and_json() {
    let table = run(&["formats"], b"");
    assert_eq!(table.status.code(), Some(0));
    let table = stdout(&table);
    assert!(table.starts_with("NAME"), "{table}");

    let json = run(&["formats", "--json"], b"");
    assert_eq!(json.status.code(), Some(0));
    let json = stdout(&json);
    let names: Vec<String> = json
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).expect("JSON line");
            assert!(v["description"].is_string(), "{v}");
            assert!(v["markers"].is_array(), "{v}");
            v["name"].as_str().expect("name").to_owned()
        })
        .collect();
    assert!(!names.is_empty());
    assert_eq!(
        table.lines().count(),
        names.len() + 4,
        "header + one row each + a blank line and the aliases"
    );
    assert!(table.contains("phi4-mini-json → phi4-mini"), "{table}");
    // Every listed format is accepted by `parse --format`.
    for name in &names {
        let out = run(&["parse", "--format", name], b"hi");
        assert_eq!(out.status.code(), Some(0), "{name}: {}", stderr(&out));
    }
}

#[test]
fn a_closed_stdout_is_reported_without_a_panic() {
    // The reader is gone before the first line (`| head -c0`): a one-line
    // error, exit status 1 — the output was cut short, not delivered.
    for args in [
        &["parse", "--chunk", "1"][..],
        &["parse", "--output", "final"],
    ] {
        let mut child = Command::new(BIN)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn");
        drop(child.stdout.take()); // close the reading end at once
        let mut pipe = child.stdin.take().expect("stdin");
        let writer = std::thread::spawn(move || {
            let _ = pipe.write_all(&vec![b'x'; 1 << 20]);
        });
        let out = child.wait_with_output().expect("wait");
        writer.join().expect("writer");
        let err = stderr(&out);
        assert!(!err.contains("panicked"), "{err}");
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err:?}");
        assert!(
            err.starts_with("toolscan: cannot write output: "),
            "{err:?}"
        );
    }
}

#[test]
fn a_missing_argument_is_named_in_the_usage_error() {
    let out = run(&["proxy"], b"");
    assert_usage_error(&out, "proxy without --upstream");
    assert!(stderr(&out).contains("--upstream"), "{}", stderr(&out));
    let out = run(&["parse", "--chunk"], b"");
    assert_usage_error(&out, "--chunk without a value");
    assert!(stderr(&out).contains("--chunk"), "{}", stderr(&out));
}

/// The bundled example of the README's main command.
fn example(name: &str) -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/data")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Inputs for the coalesced-output tests: the bundled examples, calls
/// between many lines, reasoning, a failed block and multi-byte text.
fn coalesced_inputs() -> Vec<Vec<u8>> {
    let mut inputs: Vec<Vec<u8>> = ["qwen3-weather.txt", "deepseek-v3.1.txt", "mistral-v11.txt"]
        .iter()
        .map(|n| example(n))
        .collect();
    inputs.push(many_lines(CALL).into_bytes());
    inputs.push(
        r#"<think>hmm "quoted" \ 東京</think>Zürich 😀 <tool_call>{"name":"f","arguments":{"q":"a\"b\\c\n"}}</tool_call>"#
            .as_bytes()
            .to_vec(),
    );
    inputs.push(br#"broken <tool_call>{"name":"f","arguments":{"a":1}</tool_call> after"#.to_vec());
    inputs
}

#[test]
fn coalesced_output_is_identical_for_every_chunking() {
    for input in coalesced_inputs() {
        for extra in [&[][..], &["--reasoning"]] {
            let mut args = vec!["parse", "--output", "coalesced"];
            args.extend_from_slice(extra);
            let whole = run(&args, &input);
            assert_eq!(whole.status.code(), Some(0), "{}", stderr(&whole));
            events(&stdout(&whole));
            for chunk in ["1", "7", "random:7"] {
                let mut chunked = args.clone();
                chunked.extend(["--chunk", chunk]);
                let out = run(&chunked, &input);
                assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
                assert_eq!(
                    stdout(&out),
                    stdout(&whole),
                    "{extra:?} --chunk {chunk} on {:?}",
                    String::from_utf8_lossy(&input)
                );
            }
        }
    }
}

#[test]
fn coalesced_output_is_the_merged_event_stream() {
    for input in coalesced_inputs() {
        let coalesced = run(&["parse", "--output", "coalesced", "--chunk", "1"], &input);
        let evs = run(&["parse", "--chunk", "3"], &input);
        let got = events(&stdout(&coalesced));
        assert_eq!(got, merged(events(&stdout(&evs))));
        // Nothing left to merge: no two neighbouring lines of one run.
        assert_eq!(merged(got.clone()), got);
    }
}

#[test]
fn coalesced_main_job_is_short() {
    let out = run(
        &["parse", "--chunk", "4", "--output", "coalesced", "-"],
        &example("qwen3-weather.txt"),
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let evs = events(&stdout(&out));
    let ends = evs.iter().filter(|e| e["type"] == "tool_call_end").count();
    assert_eq!(ends, 2, "{evs:?}");
    assert!(evs.len() <= 12, "{} lines", evs.len());
}

/// Runs `--output final` with `args` whole and with `--chunk 1`; checks
/// both turned the call into text with one `limit` diagnostic.
fn assert_limit_hit(args: &[&str], input: &str) {
    for chunk in [None, Some("1")] {
        let mut argv = vec!["parse", "--output", "final"];
        argv.extend_from_slice(args);
        if let Some(c) = chunk {
            argv.extend(["--chunk", c]);
        }
        let out = run(&argv, input.as_bytes());
        assert_eq!(out.status.code(), Some(0), "{argv:?}: {}", stderr(&out));
        let v = final_object(&stdout(&out));
        assert_eq!(v["tool_calls"], serde_json::json!([]), "{argv:?}: {v}");
        assert_eq!(v["text"], input, "{argv:?}: nothing lost");
        assert_eq!(v["finish_reason"], "stop", "{argv:?}: {v}");
        let kinds: Vec<&str> = v["diagnostics"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|d| d["kind"].as_str())
            .collect();
        assert_eq!(kinds, ["limit"], "{argv:?}: {v}");
    }
}

#[test]
fn small_max_call_bytes_turns_the_call_into_text() {
    assert_limit_hit(&["--max-call-bytes", "16"], CALL);
    // The default lets it through.
    let out = run(&["parse", "--output", "final"], CALL.as_bytes());
    assert_eq!(final_object(&stdout(&out))["tool_calls"][0]["name"], "f");
}

#[test]
fn small_max_depth_turns_the_call_into_text() {
    let nested = r#"Go <tool_call>{"name":"f","arguments":{"a":{"b":[1]}}}</tool_call> on"#;
    assert_limit_hit(&["--max-depth", "3"], nested);
    let out = run(
        &["parse", "--output", "final", "--max-depth", "4"],
        nested.as_bytes(),
    );
    let v = final_object(&stdout(&out));
    assert_eq!(v["tool_calls"][0]["arguments"]["a"]["b"][0], 1, "{v}");
}

#[test]
fn small_max_holdback_releases_an_unconfirmed_block() {
    // Bare JSON is only tentatively a call, and this object never shows a
    // tool name: its bytes are held back until the limit.
    let input = format!("Data: {{\"type\": \"{}", "x".repeat(200));
    for chunk in [None, Some("1")] {
        for (limit, want) in [("10", 1), ("1000", 0)] {
            let mut argv = vec!["parse", "--format", "json", "--output", "final"];
            argv.extend(["--max-holdback", limit]);
            if let Some(c) = chunk {
                argv.extend(["--chunk", c]);
            }
            let v = final_object(&stdout(&run(&argv, input.as_bytes())));
            assert_eq!(v["text"], input.as_str(), "{argv:?}: {v}");
            let diags = v["diagnostics"].as_array().cloned().unwrap_or_default();
            assert_eq!(diags.len(), want, "{argv:?}: {v}");
            assert!(diags.iter().all(|d| d["kind"] == "limit"), "{v}");
        }
    }
}

#[test]
fn small_max_name_bytes_rejects_long_names() {
    let input = "[TOOL_CALLS]get_weather[ARGS]{}";
    let out = run(
        &["parse", "--output", "final", "--max-name-bytes", "5"],
        input.as_bytes(),
    );
    let v = final_object(&stdout(&out));
    assert_eq!(v["tool_calls"], serde_json::json!([]), "{v}");
    assert_eq!(v["text"], input, "{v}");
    let out = run(
        &["parse", "--output", "final", "--max-name-bytes", "11"],
        input.as_bytes(),
    );
    assert_eq!(
        final_object(&stdout(&out))["tool_calls"][0]["name"],
        "get_weather"
    );
}

#[test]
fn zero_or_bad_limits_exit_2() {
    for flag in [
        "--max-call-bytes",
        "--max-depth",
        "--max-holdback",
        "--max-name-bytes",
    ] {
        for value in ["0", "-1", "x", "99999999999999999999999999"] {
            let out = run(&["parse", flag, value], CALL.as_bytes());
            assert_usage_error(&out, &format!("{flag} {value}"));
        }
        let out = run(&["parse", flag, "1"], CALL.as_bytes());
        assert_eq!(out.status.code(), Some(0), "{flag} 1: {}", stderr(&out));
    }
}

#[test]
fn help_shows_the_limits_and_their_defaults() {
    let out = run(&["parse", "--help"], b"");
    let help = stdout(&out);
    for flag in [
        "--max-call-bytes",
        "--max-depth",
        "--max-holdback",
        "--max-name-bytes",
        "coalesced",
    ] {
        assert!(help.contains(flag), "{flag} missing from:\n{help}");
    }
    assert!(help.contains("[default: 8388608]"), "{help}");
}

/// Every flag of `toolscan proxy` can come from the environment: with
/// `TOOLSCAN_UPSTREAM` set, `--upstream` is not missing (the value read is
/// the one checked), and a flag on the command line wins over it.
#[test]
fn proxy_flags_come_from_the_environment() {
    let proxy = |env: &[(&str, &str)], args: &[&str]| {
        let out = std::process::Command::new(BIN)
            .arg("proxy")
            .args(args)
            .envs(env.iter().copied())
            .stdin(std::process::Stdio::null())
            .output()
            .expect("toolscan runs");
        (out.status.code(), stderr(&out))
    };
    let (code, err) = proxy(&[("TOOLSCAN_UPSTREAM", "ftp://from-env")], &[]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("ftp://from-env"), "{err}");
    let (code, err) = proxy(
        &[("TOOLSCAN_UPSTREAM", "ftp://from-env")],
        &["--upstream", "ftp://from-flag"],
    );
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("ftp://from-flag"), "{err}");
    let (code, err) = proxy(
        &[
            ("TOOLSCAN_UPSTREAM", "http://127.0.0.1:1"),
            ("TOOLSCAN_FORMAT", "no-such-format"),
        ],
        &[],
    );
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("no-such-format"), "{err}");
}

/// A misspelt format name is a usage error that names the closest one;
/// a vLLM parser name is a format name.
#[test]
fn format_names_take_aliases_and_suggest_the_closest() {
    let out = run(&["parse", "--format", "qwen3_corder"], b"");
    assert_usage_error(&out, "a misspelt format");
    assert!(
        stderr(&out).contains("did you mean `qwen3-coder`?"),
        "{}",
        stderr(&out)
    );
    let input = b"<tool_call>{\"name\": \"f\", \"arguments\": {}}</tool_call>";
    let out = run(&["parse", "--format", "qwen25", "--output", "final"], input);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("\"name\":\"f\""), "{}", stdout(&out));
}

#[test]
fn render_gives_back_the_bundled_example_that_parse_read() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/data/mistral-v11.txt"
    );
    let input = std::fs::read(path).expect("bundled example");
    let parsed = run(
        &[
            "parse",
            "--format",
            "mistral-v11",
            "--output",
            "final",
            path,
        ],
        b"",
    );
    assert!(parsed.status.success(), "{}", stderr(&parsed));
    let rendered = run(&["render", "--format", "mistral-v11", "-"], &parsed.stdout);
    assert!(rendered.status.success(), "{}", stderr(&rendered));
    assert_eq!(stdout(&rendered), String::from_utf8(input).expect("UTF-8"));
}

#[test]
fn render_refuses_what_the_format_cannot_write_with_a_message() {
    // Raw parameter values: `</parameter>` followed by `</function>`
    // inside one would end it (the reader takes a closer where the
    // format's structure follows it).
    let response = br#"{"text": "", "tool_calls": [{"name": "f", "arguments": {"a": "x</parameter></function>y"}}]}"#;
    let out = run(&["render", "--format", "qwen3-coder"], response);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("cannot render in `qwen3-coder`"),
        "{}",
        stderr(&out)
    );
    let bad = run(&["render", "--format", "hermes"], b"[1]");
    assert_usage_error(&bad, "not an object");
    let unknown = run(&["render", "--format", "nope"], b"{}");
    assert_usage_error(&unknown, "unknown format");
}

/// Thousands of calls render (the renderer keeps no stack frame per call:
/// this used to abort at about 4 200); a response over the call limit is
/// refused with a message naming it and exit 1, never a crash.
#[test]
fn render_writes_thousands_of_calls_and_refuses_past_the_limit() {
    let response = |n: usize| {
        let calls: Vec<String> = (0..n)
            .map(|i| format!(r#"{{"name": "f", "arguments": {{"i": {i}}}}}"#))
            .collect();
        format!(r#"{{"text": "", "tool_calls": [{}]}}"#, calls.join(","))
    };
    let out = run(
        &["render", "--format", "hermes"],
        response(5_000).as_bytes(),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out).matches("<tool_call>").count(), 5_000);
    let over = run(
        &["render", "--format", "hermes"],
        response(10_001).as_bytes(),
    );
    assert_eq!(over.status.code(), Some(1), "{}", stderr(&over));
    assert!(
        stderr(&over).contains("cannot render in `hermes`")
            && stderr(&over).contains("more than 10000 calls"),
        "{}",
        stderr(&over)
    );
}

/// `render` given `tool` messages writes them as the format's chat
/// template writes tool results, printed as the chat messages that carry
/// them; a format without a notation for results is refused.
#[test]
fn render_writes_tool_messages_in_the_formats_notation() {
    let results = br#"[{"role": "tool", "tool_call_id": "abcDEF123", "name": "get_weather", "content": "18 C"},
                      {"role": "tool", "tool_call_id": "xyzXYZ789", "content": "21 C"}]"#;
    let out = run(&["render", "--format", "hermes"], results);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "[{\"role\":\"user\",\"content\":\"<tool_response>\\n18 C\\n</tool_response>\\n<tool_response>\\n21 C\\n</tool_response>\"}]\n"
    );
    let out = run(&["render", "--format", "mistral-v11"], &results[..]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("[TOOL_RESULTS]abcDEF123[TOOL_CONTENT]18 C[/TOOL_RESULTS]"),
        "{}",
        stdout(&out)
    );
    let none = run(&["render", "--format", "json"], &results[..]);
    assert_eq!(none.status.code(), Some(1), "{}", stderr(&none));
    assert!(
        stderr(&none).contains("does not say how tool results are written"),
        "{}",
        stderr(&none)
    );
}

const MANIFEST_TOOLS: &str = r#"[
  {"type": "function", "function": {"name": "get_weather", "description": "Current weather in a city.",
   "parameters": {"type": "object", "required": ["city"], "properties": {
     "city": {"type": "string"}, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}}}}},
  {"type": "function", "function": {"name": "add_stops",
   "parameters": {"type": "object", "required": ["stops"], "properties": {
     "stops": {"type": "array", "items": {"type": "object", "required": ["city"],
       "properties": {"city": {"type": "string"}}}}}}}}
]"#;

#[test]
fn manifest_json_gives_the_text_and_one_example_per_tool_that_parse_reads_back() {
    let tools = temp_file("manifest-json", "tools.json", MANIFEST_TOOLS.as_bytes());
    let tools = tools.to_str().expect("UTF-8 path");
    for format in ["hermes", "qwen3-coder", "pythonic"] {
        let out = run(
            &[
                "manifest", "--format", format, "--tools", tools, "--output", "json",
            ],
            b"",
        );
        assert!(out.status.success(), "{format}: {}", stderr(&out));
        let v: Value = serde_json::from_str(&stdout(&out)).expect("one JSON object");
        let text = v["text"].as_str().expect("text");
        let examples = v["examples"].as_array().expect("examples");
        assert_eq!(examples.len(), 2, "{format}");
        for (example, name) in examples.iter().zip(["get_weather", "add_stops"]) {
            let example = example.as_str().expect("raw example text");
            assert!(
                text.contains(example),
                "{format}: {example:?} not in the text"
            );
            let parsed = run(
                &[
                    "parse", "--format", format, "--tools", tools, "--output", "final",
                ],
                example.as_bytes(),
            );
            let r: Value = serde_json::from_slice(&parsed.stdout).expect("final object");
            assert_eq!(r["tool_calls"][0]["name"], name, "{format}: {example:?}");
            assert_eq!(r["tool_calls"].as_array().map(Vec::len), Some(1));
        }
    }
}

#[test]
fn manifest_fills_a_template_at_its_tools_placeholder() {
    let tools = temp_file("manifest-template", "tools.json", MANIFEST_TOOLS.as_bytes());
    let template = temp_file(
        "manifest-template",
        "prompt.txt",
        b"You plan trips.\n\n{{tools}}\n\nAnswer briefly.\n",
    );
    let args = |extra: &[&str]| {
        let mut a = vec![
            "manifest",
            "--format",
            "hermes",
            "--tools",
            tools.to_str().expect("UTF-8 path"),
        ];
        a.extend_from_slice(extra);
        run(&a, b"")
    };
    let plain = args(&[]);
    assert!(plain.status.success(), "{}", stderr(&plain));
    let manifest = stdout(&plain);
    assert!(manifest.starts_with("# Tools\n"), "{manifest}");
    let filled = args(&["--template", template.to_str().expect("UTF-8 path")]);
    assert!(filled.status.success(), "{}", stderr(&filled));
    assert_eq!(
        stdout(&filled),
        format!("You plan trips.\n\n{manifest}\n\nAnswer briefly.\n")
    );
}

#[test]
fn manifest_usage_errors() {
    let tools = temp_file("manifest-errors", "tools.json", MANIFEST_TOOLS.as_bytes());
    let tools = tools.to_str().expect("UTF-8 path");
    assert_usage_error(
        &run(&["manifest", "--format", "nope", "--tools", tools], b""),
        "unknown format",
    );
    let bad = temp_file("manifest-errors", "bad.json", b"{\"name\": \"f\"}");
    assert_usage_error(
        &run(
            &[
                "manifest",
                "--format",
                "hermes",
                "--tools",
                bad.to_str().expect("UTF-8 path"),
            ],
            b"",
        ),
        "not a tools array",
    );
    let empty = temp_file("manifest-errors", "empty.json", b"[]");
    let out = run(
        &[
            "manifest",
            "--format",
            "hermes",
            "--tools",
            empty.to_str().expect("UTF-8 path"),
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("no tools"), "{}", stderr(&out));
}
