//! Conformance from outside: every corpus case of an implemented format, run
//! through the `toolscan parse` binary whole and with `--chunk 1`, gives
//! identical `--output final` bytes that meet the case's expectations
//! (`toolscan_testkit::corpus::check_expect`: text, calls with their
//! arguments and given ids, the number of diagnostics).

use serde_json::Value;
use toolscan_testkit::corpus::{check_expect, corpus_dir, implemented, load_corpus, Outcome};

/// `toolscan ARGS` with `input` on stdin: its stdout, once it exited 0.
fn toolscan(args: &[&str], input: &[u8]) -> Vec<u8> {
    toolscan_testkit::process::run_ok(env!("CARGO_BIN_EXE_toolscan"), None, args, input)
}

#[test]
fn chunk_1_and_whole_give_identical_final_output_on_every_case() {
    let tmp = std::env::temp_dir().join(format!("toolscan-cli-corpus-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).expect("temp dir");
    let (mut ran, mut failures) = (0, Vec::new());
    for case in load_corpus(&corpus_dir()).iter().filter(|c| implemented(c)) {
        ran += 1;
        let id = &case.id;
        let mut args = vec!["parse", "--format", &case.format, "--output", "final"];
        let tools_path = tmp.join(format!("{id}.tools.json"));
        let tools_arg;
        if let Some(tools) = &case.tools {
            std::fs::write(&tools_path, tools.to_string()).expect("tools file");
            tools_arg = tools_path.display().to_string();
            args.extend(["--tools", tools_arg.as_str()]);
        }
        let input = case.input.as_bytes();
        let whole = toolscan(&args, input);
        let chunked = toolscan(&[&args[..], &["--chunk", "1"]].concat(), input);
        if whole != chunked {
            failures.push(format!(
                "{id}: --chunk 1 output differs:\n  {}\n  {}",
                String::from_utf8_lossy(&whole),
                String::from_utf8_lossy(&chunked)
            ));
            continue;
        }
        let got: Value = serde_json::from_slice(&whole).expect("final output is JSON");
        if let Err(e) = Outcome::from_final_json(&got).and_then(|o| check_expect(&case.expect, &o))
        {
            failures.push(format!("{id}: {e}"));
        }
    }
    let _ = std::fs::remove_dir_all(&tmp);
    assert!(ran > 150, "only {ran} cases ran");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
