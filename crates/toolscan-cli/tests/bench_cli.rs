//! `toolscan bench` as a process against the replay upstream (the proxy
//! crate's `Replay`, served in the test on loopback with its bundled
//! recordings): the table on stdout, the JSON and HTML files, comparing
//! two JSON files, one error line per failed request, usage errors.

use std::process::{Command, Output};
use std::time::Duration;

use serde_json::Value;
use toolscan_proxy::replay::Replay;

const BIN: &str = env!("CARGO_BIN_EXE_toolscan");

/// Serves the bundled recordings, 2 ms between events; the `/v1` URL.
async fn replay() -> String {
    let replay = Replay::bundled().with_delay(Duration::from_millis(2));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, replay.router()).await });
    url
}

async fn bench(args: Vec<String>) -> Output {
    tokio::task::spawn_blocking(move || {
        Command::new(BIN)
            .arg("bench")
            .args(args)
            .env_remove("TOOLSCAN_API_KEY")
            .env_remove("OPENAI_API_KEY")
            .output()
            .expect("toolscan runs")
    })
    .await
    .unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bench_prints_the_table_and_writes_json_and_html() {
    let url = replay().await;
    let dir = std::env::temp_dir().join(format!("toolscan-bench-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (json, page, svg) = (dir.join("a.json"), dir.join("a.html"), dir.join("a.svg"));
    let out = bench(
        [
            "--upstream",
            &url,
            "--model",
            "proxy-qwen3-weather",
            "--requests-count",
            "3",
            "--concurrency",
            "3",
            "--warmup",
            "1",
            "--tool-ms",
            "200",
        ]
        .iter()
        .map(|s| s.to_string())
        .chain(["--json".into(), json.display().to_string()])
        .chain(["--html".into(), page.display().to_string()])
        .chain(["--svg".into(), svg.display().to_string()])
        .collect(),
    )
    .await;
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", text(&out.stderr));
    for row in [
        "TTFT",
        "call start",
        "call ready",
        "[DONE]",
        "head start",
        "turn, tools at ready",
    ] {
        assert!(
            stdout.lines().any(|l| l.starts_with(row)),
            "row {row}:\n{stdout}"
        );
    }
    assert!(stdout.contains("3 ok, 0 failed"), "{stdout}");
    assert!(stdout.contains("format hermes"), "{stdout}");
    assert!(stdout.contains("calls: 6 text, 0 native"), "{stdout}");
    assert!(stdout.contains("text calls: \"call ready\" is when toolscan read the call's end"));
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(doc["runs"][0]["requests"].as_array().unwrap().len(), 3);
    assert_eq!(
        doc["runs"][0]["summary"]["metrics"]["head_start_ms"]["count"],
        6
    );
    let html = std::fs::read_to_string(&page).unwrap();
    assert_eq!(html.matches("<g class=\"request\"").count(), 3);
    let picture = std::fs::read_to_string(&svg).unwrap();
    assert_eq!(picture.matches("<g class=\"request\"").count(), 3);

    // Two runs' files side by side.
    let out = bench(vec![
        "--compare-json".into(),
        json.display().to_string(),
        json.display().to_string(),
    ])
    .await;
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", text(&out.stderr));
    assert!(stdout.contains("Δp50"), "{stdout}");
    assert!(stdout.contains("B: 3 requests to"), "{stdout}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failed_requests_give_one_line_each_and_exit_1_when_all_fail() {
    let url = replay().await;
    let out = bench(
        [
            "--upstream",
            &url,
            "--model",
            "fail-500",
            "--requests-count",
            "2",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect(),
    )
    .await;
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    for i in 0..2 {
        let line = format!(
            "toolscan: bench: request {i} (workload line {}): HTTP 500 Internal Server Error: replay: the model failed (fail-500)",
            i + 1
        );
        assert!(stderr.lines().any(|l| l == line), "{line}\n{stderr}");
    }
    assert!(
        stderr.contains("toolscan: bench: every request failed"),
        "{stderr}"
    );
    assert!(text(&out.stdout).contains("0 ok, 2 failed (2 status)"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn usage_errors_exit_2() {
    let out = bench(vec!["--upstream".into(), "127.0.0.1:9".into()]).await;
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("is not an http:// or https:// URL"));
    let out = bench(vec![]).await;
    assert_eq!(out.status.code(), Some(2));
    let out = bench(vec![
        "--upstream".into(),
        "http://127.0.0.1:9".into(),
        "--format".into(),
        "no-such-format".into(),
        "--model".into(),
        "m".into(),
    ])
    .await;
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("--format no-such-format"),
        "{}",
        text(&out.stderr)
    );
}
