//! End-to-end tests of `toolscan sse`: a recorded OpenAI stream in (file
//! or stdin), the rewritten stream out, as it arrives.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use bytes::Bytes;
use futures::StreamExt;
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_toolscan");
const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/data/sse");

fn run(args: &[&str], stdin: &[u8]) -> Output {
    toolscan_testkit::process::run(BIN, None, args, stdin)
}

fn recording(name: &str) -> String {
    format!("{DATA}/{name}")
}

/// The data of every SSE event, decoded by `sse-stream`.
fn data_of(sse: &[u8]) -> Vec<String> {
    let input = futures::stream::iter([Ok::<_, std::io::Error>(Bytes::copy_from_slice(sse))]);
    futures::executor::block_on(sse_stream::SseByteStream::new(input).collect::<Vec<_>>())
        .into_iter()
        .filter_map(|e| e.expect("valid SSE").data)
        .collect()
}

/// Choice 0 as a client reassembles it: content, reasoning, calls
/// (name, arguments) by index, finish reasons; and the data events.
#[derive(Debug, Default, PartialEq)]
struct Summary {
    content: String,
    reasoning: String,
    calls: BTreeMap<u64, (String, String, String)>,
    finish: Vec<String>,
    data: Vec<String>,
}

fn summarise(sse: &[u8]) -> Summary {
    let mut s = Summary {
        data: data_of(sse),
        ..Summary::default()
    };
    for d in &s.data {
        let Ok(v) = serde_json::from_str::<Value>(d) else {
            continue;
        };
        for c in v["choices"].as_array().into_iter().flatten() {
            let delta = &c["delta"];
            s.content += delta["content"].as_str().unwrap_or("");
            s.reasoning += delta["reasoning_content"].as_str().unwrap_or("");
            for call in delta["tool_calls"].as_array().into_iter().flatten() {
                let e = s.calls.entry(call["index"].as_u64().unwrap()).or_default();
                e.0 += call["id"].as_str().unwrap_or("");
                e.1 += call["function"]["name"].as_str().unwrap_or("");
                e.2 += call["function"]["arguments"].as_str().unwrap_or("");
            }
            if let Some(f) = c["finish_reason"].as_str() {
                s.finish.push(f.to_owned());
            }
        }
    }
    s
}

fn ok_stdout(out: &Output) -> Vec<u8> {
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout.clone()
}

#[test]
fn rewrites_a_recorded_stream() {
    let file = recording("qwen3-weather.sse");
    let out = ok_stdout(&run(&["sse", "--format", "hermes", &file], b""));
    let s = summarise(&out);
    assert_eq!(s.calls.len(), 1);
    let (id, name, args) = &s.calls[&0];
    assert!(id.starts_with("call_"), "{id}");
    assert_eq!(name, "get_weather");
    assert_eq!(
        serde_json::from_str::<Value>(args).unwrap(),
        serde_json::json!({"city": "Paris"})
    );
    assert_eq!(s.finish, ["tool_calls"]);
    assert!(!s.content.contains("<tool_call>"));
    assert!(s
        .content
        .contains("Let me check the current weather in Paris"));
    assert_eq!(s.data.iter().filter(|d| *d == "[DONE]").count(), 1);
    assert_eq!(s.data.last().map(String::as_str), Some("[DONE]"));
    // Reproducible (seeded ids), and stdin gives the same.
    let again = ok_stdout(&run(&["sse", "--format", "hermes", &file], b""));
    assert_eq!(again, out);
    let input = std::fs::read(&file).unwrap();
    let stdin = ok_stdout(&run(&["sse", "--format", "hermes", "-"], &input));
    assert_eq!(stdin, out);
    let model = ok_stdout(&run(&["sse", "--model", "Qwen/Qwen3-8B"], &input));
    assert_eq!(summarise(&model).calls, s.calls);
}

#[test]
fn reasoning_flag_fills_reasoning_content() {
    let file = recording("qwen3-weather.sse");
    let out = ok_stdout(&run(
        &["sse", "--format", "hermes", "--reasoning", &file],
        b"",
    ));
    let s = summarise(&out);
    assert!(s.reasoning.contains("The user wants the current weather"));
    assert!(!s.content.contains("<think>"));
    let plain = summarise(&ok_stdout(&run(&["sse", "--format", "hermes", &file], b"")));
    assert!(plain.reasoning.is_empty());
    assert!(plain.content.contains("<think>"));
}

#[test]
fn two_choices() {
    let out = ok_stdout(&run(
        &["sse", "--format", "hermes", &recording("two-choices.sse")],
        b"",
    ));
    let mut s = summarise(&out);
    // Choice 1 (text only) ends first; choice 0 made the call.
    s.finish.sort();
    assert_eq!(s.finish, ["stop", "tool_calls"]);
    assert_eq!(s.calls.len(), 1);
}

#[test]
fn usage_errors_exit_2() {
    for args in [
        &["sse", "--format", "no-such-format"][..],
        &["sse", "/no/such/file.sse"],
        &["sse", "--tools", "/no/such/tools.json"],
        &["sse", "--bogus"],
    ] {
        let out = run(args, b"");
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    }
}

#[test]
fn help_describes_sse_without_private_paths() {
    for args in [&["sse", "--help"][..], &["--help"]] {
        let out = run(args, b"");
        assert_eq!(out.status.code(), Some(0));
        let help = String::from_utf8_lossy(&out.stdout);
        assert!(help.contains("sse"), "{help}");
        assert!(!help.contains("../shared"), "{help}");
    }
    let out = run(&["sse", "--help"], b"");
    let help = String::from_utf8_lossy(&out.stdout);
    for flag in ["--format", "--model", "--tools", "--reasoning"] {
        assert!(help.contains(flag), "{flag}: {help}");
    }
}

/// Output comes as input arrives: the first events are written while stdin
/// is still open.
#[test]
fn output_streams_before_the_input_ends() {
    let input = std::fs::read_to_string(recording("qwen3-weather.sse")).unwrap();
    let events: Vec<&str> = input.split_inclusive("\n\n").collect();
    assert!(events.len() > 10);
    let mut child = Command::new(BIN)
        .args(["sse", "--format", "hermes"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    stdin.write_all(events[..5].concat().as_bytes()).unwrap();
    stdin.flush().unwrap();
    let first = rx
        .recv_timeout(Duration::from_secs(20))
        .expect("an event is written before the input ends");
    assert!(first.starts_with("data: {"), "{first}");
    stdin.write_all(events[5..].concat().as_bytes()).unwrap();
    drop(stdin);
    let status = child.wait().unwrap();
    assert!(status.success());
    reader.join().unwrap();
    let rest: Vec<String> = rx.try_iter().collect();
    assert_eq!(
        rest.iter()
            .rev()
            .find(|l| !l.is_empty())
            .map(String::as_str),
        Some("data: [DONE]")
    );
}

/// A stream whose call breaks after it began (a stray `</tool_call>` where
/// the value should be): by default no `tool_calls` entry at all and the
/// markup is content; `--stream-arguments` sends the live entries, the
/// phantom call a client then chokes on.
#[test]
fn a_broken_call_is_content_unless_arguments_stream() {
    let content =
        "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": </tool_call> sorry";
    let mut input = String::new();
    for piece in content.as_bytes().chunks(6) {
        let piece = std::str::from_utf8(piece).unwrap();
        let chunk = serde_json::json!({"choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": null}]});
        input.push_str(&format!("data: {chunk}\n\n"));
    }
    input.push_str("data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n");

    let plain = summarise(&ok_stdout(&run(
        &["sse", "--format", "hermes"],
        input.as_bytes(),
    )));
    assert!(plain.calls.is_empty(), "{:?}", plain.calls);
    assert_eq!(plain.content, content);
    assert_eq!(plain.finish, ["stop"]);

    let live = summarise(&ok_stdout(&run(
        &["sse", "--format", "hermes", "--stream-arguments"],
        input.as_bytes(),
    )));
    assert_eq!(live.calls[&0].1, "get_weather");
    assert_eq!(live.calls[&0].2, "{\"city\": ");
    assert_eq!(live.content, content);
}
