//! Issue 29 at the command line: `--normalize-tool-names`, `toolscan
//! replay` serving its bundled recordings from any directory, and the
//! proxy's startup lines said once each.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_toolscan");

/// A Qwen3-Coder call naming the tool bare (`Qwen3-Coder.jinja`'s form).
const CALL: &str = "<tool_call>\n<function=exec>\n<parameter=pid>\n99797\n</parameter>\n\
                    </function>\n</tool_call>";

fn final_call(extra: &[&str]) -> Value {
    let dir = std::env::temp_dir().join(format!("toolscan-cli-misc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let tools = dir.join("tools.json");
    std::fs::write(
        &tools,
        r#"[{"type": "function", "function": {"name": "functions.exec", "parameters": {
            "type": "object", "properties": {"pid": {"type": "string"}}}}}]"#,
    )
    .unwrap();
    let tools = tools.to_string_lossy().into_owned();
    let mut args = vec![
        "parse",
        "--format",
        "qwen3-coder",
        "--tools",
        &tools,
        "--output",
        "final",
    ];
    args.extend_from_slice(extra);
    let out = toolscan_testkit::process::run(BIN, None, &args, CALL.as_bytes());
    assert!(out.status.success(), "{out:?}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    v["tool_calls"][0].clone()
}

/// The declared string stays a string either way; the flag gives the call
/// the declared name.
#[test]
fn normalize_tool_names_gives_the_declared_name() {
    let kept = final_call(&[]);
    assert_eq!(kept["name"], "exec", "{kept}");
    assert_eq!(kept["arguments"], serde_json::json!({"pid": "99797"}));
    let normalised = final_call(&["--normalize-tool-names"]);
    assert_eq!(normalised["name"], "functions.exec", "{normalised}");
}

/// Kills the child when dropped.
struct Child(std::process::Child);

impl Drop for Child {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `toolscan replay`, run from a directory that is not the checkout,
/// serves the bundled recordings (its default used to be a path relative
/// to the checkout).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replay_serves_its_bundled_recordings_from_anywhere() {
    let mut child = Child(
        Command::new(BIN)
            .args(["replay", "--listen", "127.0.0.1:0", "--delay-ms", "0"])
            .current_dir(std::env::temp_dir())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("toolscan replay starts"),
    );
    let mut line = String::new();
    BufReader::new(child.0.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line.trim().to_owned();
    assert!(url.starts_with("http://127.0.0.1:"), "{url:?}");
    let client = reqwest::Client::builder().no_proxy().build().unwrap();
    let body = client
        .post(format!("{url}/v1/chat/completions"))
        .header("content-type", "application/json")
        .body(r#"{"model": "Qwen/Qwen3-8B", "messages": []}"#)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(body.contains("get_weather"), "{body}");
}

/// The proxy's startup lines — where it listens, that a `/v1` upstream
/// is an API base — are each written once (two were written twice).
#[test]
fn the_proxys_startup_lines_are_written_once() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap();
    let mut child = Child(
        Command::new(BIN)
            .args(["proxy", "--upstream", "http://127.0.0.1:9/v1"])
            .args(["--listen", &format!("127.0.0.1:{port}")])
            .env_remove("RUST_LOG")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("toolscan proxy starts"),
    );
    let stderr = child.0.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let mut lines = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline && !lines.iter().any(|l: &String| l.contains("listening")) {
        if let Ok(l) = rx.recv_timeout(Duration::from_millis(100)) {
            lines.push(l);
        }
    }
    // A moment more for anything said twice.
    while let Ok(l) = rx.recv_timeout(Duration::from_millis(300)) {
        lines.push(l);
    }
    let count = |what: &str| lines.iter().filter(|l| l.contains(what)).count();
    assert_eq!(count("listening"), 1, "{lines:#?}");
    assert_eq!(count("API base"), 1, "{lines:#?}");
}

fn repo_file(path: &str) -> String {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    std::fs::read_to_string(root.join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The README's synopsis of `toolscan proxy` lists every flag its `--help`
/// has (it listed 7 of 24).
#[test]
fn the_readme_synopsis_lists_every_proxy_flag() {
    let readme = repo_file("README.md");
    let synopsis: String = readme
        .lines()
        .skip_while(|l| !l.starts_with("toolscan proxy --upstream"))
        .take_while(|l| l.starts_with("toolscan proxy") || l.starts_with("  "))
        .collect::<Vec<_>>()
        .join("\n");
    let out = toolscan_testkit::process::run(BIN, None, &["proxy", "--help"], b"");
    let help = String::from_utf8(out.stdout).unwrap();
    for flag in help
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix("--"))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|f| !matches!(*f, "help" | "version"))
    {
        assert!(
            synopsis.contains(&format!("--{flag}")),
            "the README's `toolscan proxy` synopsis lacks --{flag}:\n{synopsis}"
        );
    }
}

/// The files the README's examples name are in the repository, the model
/// map is one the proxy reads, and the manifest examples print what the
/// README shows.
#[test]
fn the_readmes_example_files_exist_and_work() {
    let readme = repo_file("README.md");
    for path in ["examples/data/tools.json", "examples/data/model-map.json"] {
        assert!(readme.contains(path), "the README names {path}");
        repo_file(path);
    }
    toolscan_proxy::ProxyConfig::parse_routes(&repo_file("examples/data/model-map.json"))
        .expect("the model map reads");
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    for format in ["hermes", "qwen3-coder", "pythonic"] {
        let command =
            format!("$ toolscan manifest --format {format} --tools examples/data/tools.json\n");
        let at = readme
            .find(&command)
            .expect("the README's manifest example")
            + command.len();
        let shown: String = readme[at..]
            .lines()
            .take_while(|l| !l.is_empty() && !l.starts_with("```"))
            .map(|l| format!("{l}\n"))
            .collect();
        let out = toolscan_testkit::process::run(
            BIN,
            Some(&root),
            &[
                "manifest",
                "--format",
                format,
                "--tools",
                "examples/data/tools.json",
            ],
            b"",
        );
        let printed = String::from_utf8(out.stdout).unwrap();
        assert!(
            printed.contains(&shown),
            "{format}: the README shows\n{shown}\nprinted:\n{printed}"
        );
    }
}
