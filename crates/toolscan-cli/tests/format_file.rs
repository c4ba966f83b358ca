//! `--format-file`: a format described in JSON, used by `toolscan parse`
//! and `toolscan sse`, listed by `toolscan formats`; a bad description is
//! a usage error naming the file and the field.

use std::path::PathBuf;
use std::process::Output;

use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_toolscan");

fn run(args: &[&str], stdin: &[u8]) -> Output {
    toolscan_testkit::process::run(BIN, None, args, stdin)
}

/// A file of the repository's `examples/formats`.
fn example(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/formats")
        .join(name)
        .display()
        .to_string()
}

/// A file in a fresh per-test temporary directory.
fn temp_file(test: &str, name: &str, contents: &str) -> String {
    let dir = std::env::temp_dir().join(format!(
        "toolscan-cli-format-file-{}-{test}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join(name);
    std::fs::write(&path, contents).expect("write temp file");
    path.display().to_string()
}

/// The `--output final` object of a successful run.
fn final_object(args: &[&str], input: &str) -> Value {
    let mut argv = vec!["parse", "--output", "final"];
    argv.extend_from_slice(args);
    let out = run(&argv, input.as_bytes());
    assert_eq!(
        out.status.code(),
        Some(0),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("one JSON object")
}

const REQUEST: &str = "Sure. [TOOL_REQUEST]get_weather {\"city\": \"Paris\"}[TOOL_REQUEST_END]";

#[test]
fn parse_uses_the_described_format() {
    let file = example("tool-request.json");
    let v = final_object(&["--format-file", &file], REQUEST);
    assert_eq!(v["text"], "Sure. ");
    assert_eq!(v["tool_calls"].as_array().map(Vec::len), Some(1));
    assert_eq!(v["tool_calls"][0]["name"], "get_weather");
    assert_eq!(
        v["tool_calls"][0]["arguments"],
        serde_json::json!({"city": "Paris"})
    );
    assert_eq!(v["diagnostics"], serde_json::json!([]));
}

#[test]
fn the_file_wins_over_the_model_and_format_wins_over_the_file() {
    let file = example("tool-request.json");
    // The model would pick hermes, which does not read this.
    let v = final_object(
        &["--format-file", &file, "--model", "Qwen/Qwen3-8B"],
        REQUEST,
    );
    assert_eq!(v["tool_calls"][0]["name"], "get_weather");
    // `--format hermes` names another format: the request stays text.
    let v = final_object(&["--format-file", &file, "--format", "hermes"], REQUEST);
    assert_eq!(v["text"], REQUEST);
    assert_eq!(v["tool_calls"], serde_json::json!([]));
}

#[test]
fn auto_detects_a_described_format_among_the_others() {
    let file = temp_file(
        "auto",
        "angle.json",
        r#"{"name": "angle", "open": "<<call ", "name_at": {"until": ">>"},
            "arguments": {"json": "object"}, "close": "<</call>>"}"#,
    );
    let input = "a <<call f>>{\"x\": 1}<</call>> b <tool_call>{\"name\": \"g\", \"arguments\": {}}</tool_call>";
    let v = final_object(&["--format-file", &file, "--format", "auto"], input);
    let names: Vec<&str> = v["tool_calls"]
        .as_array()
        .expect("calls")
        .iter()
        .filter_map(|c| c["name"].as_str())
        .collect();
    assert_eq!(names, ["f", "g"]);
}

/// Exit status 2, nothing on stdout, one line on stderr holding each of
/// `parts`.
fn assert_usage_error(out: &Output, parts: &[&str]) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(out.stdout.is_empty());
    assert_eq!(err.lines().count(), 1, "{err}");
    for p in parts {
        assert!(err.contains(p), "{p:?} not in {err:?}");
    }
}

#[test]
fn a_bad_description_names_the_file_and_the_field() {
    let file = temp_file(
        "bad",
        "bad.json",
        r#"{"name": "x", "open": "<c>", "name_at": {"until": ">"},
            "arguments": {"params": {"open": "<p=", "key_end": ">", "close": "", "end": "</c>"}}}"#,
    );
    for cmd in ["parse", "sse"] {
        let out = run(&[cmd, "--format-file", &file], b"");
        assert_usage_error(
            &out,
            &[
                "bad.json",
                "/arguments/params/close",
                "must be a non-empty string",
            ],
        );
    }
    let out = run(&["formats", "--format-file", &file], b"");
    assert_usage_error(&out, &["bad.json", "/arguments/params/close"]);
    let missing = temp_file("bad", "exists.json", "{}").replace("exists.json", "missing.json");
    let out = run(&["parse", "--format-file", &missing], b"");
    assert_usage_error(&out, &["missing.json", "cannot read it"]);
    // A built-in's name is taken.
    let taken = temp_file(
        "bad",
        "taken.json",
        r#"{"name": "hermes", "open": "<c>", "arguments": {"json": "call"}}"#,
    );
    let out = run(&["parse", "--format-file", &taken], b"");
    assert_usage_error(&out, &["taken.json", "/name", "exists already"]);
}

#[test]
fn formats_lists_the_described_format_last() {
    let file = example("qwen3-coder.json");
    let out = run(&["formats", "--json", "--format-file", &file], b"");
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).expect("UTF-8");
    let last: Value = serde_json::from_str(text.lines().last().expect("a line")).expect("JSON");
    assert_eq!(last["name"], "file-qwen3-coder");
    assert_eq!(
        last["markers"],
        serde_json::json!(["<tool_call>", "<function="])
    );
}

#[test]
fn sse_uses_the_described_format() {
    let file = example("tool-request.json");
    let chunk = |delta: &str, finish: &str| {
        format!(
            "data: {{\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\
             \"choices\":[{{\"index\":0,\"delta\":{delta},\"finish_reason\":{finish}}}]}}\n\n"
        )
    };
    let content = serde_json::to_string(REQUEST).expect("a JSON string");
    let input = chunk(&format!("{{\"content\":{content}}}"), "null")
        + &chunk("{}", "\"stop\"")
        + "data: [DONE]\n\n";
    let out = run(&["sse", "--format-file", &file], input.as_bytes());
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).expect("UTF-8");
    assert!(text.contains("\"tool_calls\""), "{text}");
    assert!(text.contains("\"name\":\"get_weather\""), "{text}");
    assert!(!text.contains("TOOL_REQUEST"), "{text}");
}

#[test]
fn a_described_builtin_is_a_format_file_to_start_from() {
    let out = run(&["formats", "--describe", "tool-request"], b"");
    assert_eq!(out.status.code(), Some(0));
    let mut v: Value = serde_json::from_slice(&out.stdout).expect("a JSON description");
    assert_eq!(v["name"], "tool-request");
    assert!(v["openers"][0]["program"].is_array(), "{v}");
    // Renamed, it reads what the built-in reads.
    v["name"] = "my-request".into();
    let file = temp_file("describe", "my-request.json", &v.to_string());
    let got = final_object(&["--format-file", &file], REQUEST);
    assert_eq!(got, final_object(&["--format", "tool-request"], REQUEST));
    assert_eq!(got["tool_calls"][0]["name"], "get_weather");
    // A name that is not a format is a usage error.
    let out = run(&["formats", "--describe", "nope"], b"");
    assert_usage_error(&out, &["unknown format `nope`"]);
}
