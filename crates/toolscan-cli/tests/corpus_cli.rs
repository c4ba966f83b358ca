//! Conformance from outside: every corpus case of an implemented format, run
//! through the `toolscan parse` binary whole and with `--chunk 1`, gives
//! identical `--output final` bytes that meet the case's expectations.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;
use toolscan_core::Registry;

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/corpus")
}

fn run(args: &[&str], input: &[u8]) -> Vec<u8> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolscan"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("toolscan runs");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input)
        .expect("write input");
    let out = child.wait_with_output().expect("toolscan exits");
    assert!(
        out.status.success(),
        "toolscan {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

fn pick(note: &str) -> Option<&str> {
    ["must pick `", "may pick `"]
        .iter()
        .find_map(|p| note.split(p).nth(1))
        .and_then(|rest| rest.split('`').next())
}

#[test]
fn chunk_1_and_whole_give_identical_final_output_on_every_case() {
    let reg = Registry::builtin();
    let mut files: Vec<PathBuf> = std::fs::read_dir(corpus_dir())
        .expect("tests/corpus")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    let tmp = std::env::temp_dir().join(format!("toolscan-cli-corpus-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).expect("temp dir");
    let (mut ran, mut failures) = (0, Vec::new());
    for f in files {
        for line in std::fs::read_to_string(&f).expect("corpus").lines() {
            let case: Value = serde_json::from_str(line).expect("case");
            let id = case["id"].as_str().unwrap_or("?");
            let format = case["format"].as_str().unwrap_or("auto");
            let note = case["note"].as_str().unwrap_or("");
            let target = if format == "auto" {
                pick(note).unwrap_or("auto")
            } else {
                format
            };
            if target != "auto" && reg.get(target).is_none() {
                continue;
            }
            ran += 1;
            let mut args = vec!["parse", "--format", format, "--output", "final"];
            let tools_path = tmp.join(format!("{id}.tools.json"));
            let tools_arg;
            if let Some(tools) = case.get("tools") {
                std::fs::write(&tools_path, tools.to_string()).expect("tools file");
                tools_arg = tools_path.display().to_string();
                args.extend(["--tools", tools_arg.as_str()]);
            }
            let input = case["input"].as_str().unwrap_or("").as_bytes();
            let whole = run(&args, input);
            let mut chunked_args = args.clone();
            chunked_args.extend(["--chunk", "1"]);
            let chunked = run(&chunked_args, input);
            if whole != chunked {
                failures.push(format!(
                    "{id}: --chunk 1 output differs:\n  {}\n  {}",
                    String::from_utf8_lossy(&whole),
                    String::from_utf8_lossy(&chunked)
                ));
                continue;
            }
            let got: Value = serde_json::from_slice(&whole).expect("final output is JSON");
            let text = got["text"].as_str().unwrap_or("");
            let norm = text.split_whitespace().collect::<Vec<_>>().join(" ");
            if norm != case["expect"]["text"].as_str().unwrap_or("") {
                failures.push(format!("{id}: text {norm:?}"));
            }
            let calls: Vec<(Value, Value)> = got["tool_calls"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|c| (c["name"].clone(), c["arguments"].clone()))
                .collect();
            let want: Vec<(Value, Value)> = case["expect"]["tool_calls"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|c| (c["name"].clone(), c["arguments"].clone()))
                .collect();
            if calls != want {
                failures.push(format!("{id}: calls {calls:?}"));
            }
        }
    }
    let _ = std::fs::remove_dir_all(&tmp);
    assert!(ran > 150, "only {ran} cases ran");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
