//! `toolscan bench` end to end on loopback: a scripted upstream of this
//! file sends each event at a known moment, and the figures the run
//! reports must agree with the script; bad answers must give one error per
//! request, never a panic; the HTML page must hold one timeline element
//! per sample request (checked in headless Chromium where one exists).
//!
//! Tolerance, generous enough for a loaded 2-core machine: each moment is
//! checked twice. Since the request was sent, it may be at most 5 ms
//! before its scripted moment (the client's clock starts before the
//! server's) and at most [`SLACK_MS`] after it at concurrency 1, or
//! [`QUEUE_MS`] at concurrency 50 (50 connections opened at once on a busy
//! machine wait before the server's script even starts). Counted from the
//! request's TTFT (the script's first token), each later moment must be
//! within −[`EARLY_MS`] / +[`SLACK_MS`] of the script: what the bench adds
//! in reading the stream. Differences (the head start) within ±`SLACK_MS`.

use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::Router;
use serde_json::{json, Value};
use toolscan_bench::{
    html, json as bench_json, run, CallKind, Endpoint, ErrorKind, Plan, Progress, Run, Target,
    Workload,
};

/// How late a moment may be.
const SLACK_MS: f64 = 150.0;
/// How early a moment may be, counted from the TTFT (which may itself be
/// read late).
const EARLY_MS: f64 = 50.0;
/// How late a moment may be since the request was sent, at concurrency 50.
const QUEUE_MS: f64 = 1500.0;

/// The scripted moments (ms after the request arrived) of both scripts.
const TTFT: f64 = 100.0;
const CALL_START: f64 = 200.0;
const CALL_READY: f64 = 300.0;
const FINISH: f64 = 600.0;
const DONE: f64 = 650.0;

fn chunk(delta: Value, finish: Option<&str>) -> String {
    let c = json!({
        "id": "chatcmpl-test", "object": "chat.completion.chunk", "created": 1, "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    });
    format!("data: {c}\n\n")
}

/// The events of a script and when each is sent (ms).
fn script(name: &str) -> Vec<(f64, String)> {
    let role = chunk(json!({"role": "assistant", "content": ""}), None);
    let done = "data: [DONE]\n\n".to_owned();
    match name {
        // A Hermes call written as text in the content.
        "text" => vec![
            (0.0, role),
            (TTFT, chunk(json!({"content": "Let me check."}), None)),
            (
                CALL_START,
                chunk(
                    json!({"content": "\n<tool_call>\n{\"name\": \"get_weather\", "}),
                    None,
                ),
            ),
            (
                250.0,
                chunk(json!({"content": "\"arguments\": {\"city\": "}), None),
            ),
            (
                CALL_READY,
                chunk(json!({"content": "\"Paris\"}}\n</tool_call>"}), None),
            ),
            (450.0, chunk(json!({"content": "\nOne moment."}), None)),
            (FINISH, chunk(json!({}), Some("tool_calls"))),
            (DONE, done),
        ],
        // The same call sent natively, as `delta.tool_calls`.
        "native" => vec![
            (0.0, role),
            (TTFT, chunk(json!({"content": "Let me check."}), None)),
            (
                CALL_START,
                chunk(
                    json!({"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                        "function": {"name": "get_weather", "arguments": ""}}]}),
                    None,
                ),
            ),
            (
                250.0,
                chunk(
                    json!({"tool_calls": [{"index": 0, "function": {"arguments": "{\"city\": "}}]}),
                    None,
                ),
            ),
            (
                CALL_READY,
                chunk(
                    json!({"tool_calls": [{"index": 0, "function": {"arguments": "\"Paris\"}"}}]}),
                    None,
                ),
            ),
            (450.0, chunk(json!({"content": ""}), None)),
            (FINISH, chunk(json!({}), Some("tool_calls"))),
            (DONE, done),
        ],
        // Sends its headers and one event, then nothing for a long time.
        "stall" => vec![(0.0, role), (10_000.0, done)],
        // Ends after a content chunk, with no finish_reason and no [DONE].
        "unfinished" => vec![(0.0, role), (20.0, chunk(json!({"content": "Hel"}), None))],
        // An error object in the stream.
        "error-event" => vec![
            (0.0, role),
            (
                20.0,
                "data: {\"error\": {\"message\": \"out of memory\"}}\n\n".to_owned(),
            ),
        ],
        _ => vec![(0.0, role), (DONE, done)],
    }
}

async fn chat(body: Bytes) -> Response {
    let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let model = request["model"].as_str().unwrap_or("").to_owned();
    match model.as_str() {
        "e500" => {
            return (
                StatusCode::INTERNAL_SERVER_ERROR,
                [(header::CONTENT_TYPE, "application/json")],
                r#"{"error": {"message": "the engine died"}}"#,
            )
                .into_response()
        }
        "e401" => {
            return (
                StatusCode::UNAUTHORIZED,
                [(header::CONTENT_TYPE, "application/json")],
                r#"{"error": {"message": "Incorrect API key provided"}}"#,
            )
                .into_response()
        }
        "not-sse" => {
            return (
                [(header::CONTENT_TYPE, "application/json")],
                r#"{"choices": [{"message": {"content": "hi"}}]}"#,
            )
                .into_response()
        }
        _ => {}
    }
    assert_eq!(request["stream"], true, "the bench streams");
    let start = tokio::time::Instant::now();
    let events = script(&model);
    let body = futures_util::stream::unfold(events.into_iter(), move |mut events| async move {
        let (at, event) = events.next()?;
        tokio::time::sleep_until(start + Duration::from_secs_f64(at / 1000.0)).await;
        Some((Ok::<_, std::io::Error>(Bytes::from(event)), events))
    });
    (
        [(header::CONTENT_TYPE, "text/event-stream")],
        Body::from_stream(body),
    )
        .into_response()
}

/// Serves the scripted upstream on a free loopback port; its URL.
async fn upstream() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let app = Router::new().route("/v1/chat/completions", post(chat));
    tokio::spawn(async move { axum::serve(listener, app).await });
    url
}

fn plan(url: &str, model: Option<&str>, requests: usize, concurrency: usize) -> Plan {
    Plan {
        targets: vec![Target {
            label: "A".into(),
            endpoint: Endpoint::parse(url).unwrap(),
            api_key: Some("sk-test".into()),
            model: model.map(str::to_owned),
        }],
        workload: Workload::bundled(),
        requests,
        concurrency: Some(concurrency),
        rate: None,
        warmup: 0,
        timeout: Duration::from_secs(10),
        tool_ms: Some(500.0),
        format: Some("hermes".into()),
    }
}

/// `got` (ms since sent) against the scripted `want` (ms since the
/// script's start): since sent, at most `late` ms late; since `ttft`
/// (measured), within the script's own distance from its TTFT.
fn near(what: &str, got: Option<f64>, want: f64, ttft: f64, late: f64) {
    let got = got.unwrap_or_else(|| panic!("{what}: no value"));
    assert!(
        got >= want - 5.0 && got <= want + late,
        "{what}: measured {got:.1} ms since sent, scripted {want} ms (tolerance -5/+{late} ms)"
    );
    let (since, scripted) = (got - ttft, want - TTFT);
    assert!(
        since >= scripted - EARLY_MS && since <= scripted + SLACK_MS,
        "{what}: measured {since:.1} ms after the TTFT, scripted {scripted} ms (tolerance -{EARLY_MS}/+{SLACK_MS} ms)"
    );
}

/// Every request's figures against the script.
fn check_run(r: &Run, kind: CallKind, requests: usize) {
    // At concurrency 1 a request waits for no other.
    let late = if r.concurrency == Some(1) {
        SLACK_MS
    } else {
        QUEUE_MS
    };
    let s = &r.summary;
    assert_eq!(
        (s.requests, s.ok, s.failed),
        (requests, requests, 0),
        "{:?}",
        s.errors
    );
    for q in &r.requests {
        let ttft = q.ttft_ms.expect("a TTFT");
        near("ttft", Some(ttft), TTFT, ttft, late);
        near("finish", q.finish_ms, FINISH, ttft, late);
        near("[DONE]", q.done_ms, DONE, ttft, late);
        assert!(q.done_marker);
        assert_eq!(q.finish_reason.as_deref(), Some("tool_calls"));
        assert_eq!(q.calls.len(), 1, "one call: {:?}", q.calls);
        let c = &q.calls[0];
        assert_eq!((c.kind, c.name.as_str()), (kind, "get_weather"));
        near("call start", Some(c.start_ms), CALL_START, ttft, late);
        near("call ready", c.ready_ms, CALL_READY, ttft, late);
        let head = c.head_start_ms.expect("a head start");
        assert!(
            (head - (DONE - CALL_READY)).abs() <= SLACK_MS,
            "head start {head:.1} ms, scripted {} ms",
            DONE - CALL_READY
        );
        // A 500 ms tool started at ready (300) ends at 800, after [DONE];
        // started at [DONE], at 1150.
        near(
            "turn at ready",
            q.turn_tools_at_ready_ms,
            CALL_READY + 500.0,
            ttft,
            late,
        );
        near(
            "turn at done",
            q.turn_tools_at_done_ms,
            DONE + 500.0,
            ttft,
            late,
        );
    }
    let m = |k| s.metrics.get(k).unwrap_or_else(|| panic!("metric {k}"));
    assert_eq!(m("head_start_ms").count, requests as u64);
    assert!((m("head_start_ms").p50 - (DONE - CALL_READY)).abs() <= SLACK_MS);
    // The distributions.
    let p50 = m("call_ready_ms").p50 - m("ttft_ms").p50;
    assert!(
        (CALL_READY - TTFT - EARLY_MS..=CALL_READY - TTFT + SLACK_MS).contains(&p50),
        "p50 call ready − p50 TTFT: {p50} ms"
    );
    assert!(m("ttft_ms").p50 >= TTFT - 5.0);
    match kind {
        CallKind::Text => assert_eq!((s.text_calls, s.native_calls), (requests, 0)),
        CallKind::Native => assert_eq!((s.text_calls, s.native_calls), (0, requests)),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn text_calls_at_concurrency_1_agree_with_the_script() {
    let url = upstream().await;
    let runs = run(&plan(&url, Some("text"), 3, 1), &Progress::hidden())
        .await
        .unwrap();
    check_run(&runs[0], CallKind::Text, 3);
    assert_eq!(runs[0].format, "hermes");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn native_calls_at_concurrency_1_agree_with_the_script() {
    let url = upstream().await;
    let runs = run(&plan(&url, Some("native"), 3, 1), &Progress::hidden())
        .await
        .unwrap();
    check_run(&runs[0], CallKind::Native, 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn text_and_native_calls_at_concurrency_50_agree_with_the_script() {
    let url = upstream().await;
    for (model, kind) in [("text", CallKind::Text), ("native", CallKind::Native)] {
        let runs = run(&plan(&url, Some(model), 50, 50), &Progress::hidden())
            .await
            .unwrap();
        check_run(&runs[0], kind, 50);
        // 50 requests of 650 ms one after another would take 32 s.
        assert!(
            runs[0].duration_s < 10.0,
            "{model}: ran concurrently ({} s)",
            runs[0].duration_s
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rate_paces_the_requests_and_warm_up_is_not_measured() {
    let url = upstream().await;
    let mut p = plan(&url, Some("text"), 4, 1);
    p.concurrency = None;
    p.rate = Some(20.0);
    p.warmup = 2;
    let runs = run(&p, &Progress::hidden()).await.unwrap();
    check_run(&runs[0], CallKind::Text, 4);
    let indexes: Vec<usize> = runs[0].requests.iter().map(|r| r.index).collect();
    assert_eq!(indexes, [0, 1, 2, 3]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compare_runs_the_workload_against_both_servers() {
    let (a, b) = (upstream().await, upstream().await);
    let mut p = plan(&a, Some("text"), 4, 4);
    p.targets.push(Target {
        label: "B".into(),
        endpoint: Endpoint::parse(&b).unwrap(),
        api_key: None,
        model: Some("native".into()),
    });
    let runs = run(&p, &Progress::hidden()).await.unwrap();
    assert_eq!(runs.len(), 2);
    check_run(&runs[0], CallKind::Text, 4);
    check_run(&runs[1], CallKind::Native, 4);
    let table = toolscan_bench::table::render(&runs);
    assert!(table.contains("Δp50"), "{table}");
    assert!(table.contains("B: calls: 0 text, 4 native"), "{table}");
    assert!(
        table.contains("native calls (delta.tool_calls): \"call ready\" is when the server sent")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_answers_give_one_error_per_request_and_a_summary() {
    let url = upstream().await;
    let models = [
        "e500",
        "e401",
        "not-sse",
        "stall",
        "unfinished",
        "error-event",
        "text",
    ];
    let lines: Vec<String> = models
        .iter()
        .map(|m| json!({"model": m, "messages": [{"role": "user", "content": "hi"}]}).to_string())
        .collect();
    let mut p = plan(&url, None, models.len(), 7);
    p.workload = Workload::from_jsonl(&lines.join("\n"), "test").unwrap();
    p.timeout = Duration::from_millis(400);
    let runs = run(&p, &Progress::hidden()).await.unwrap();
    let r = &runs[0];
    let error = |i: usize| r.requests[i].error.clone().map(|e| (e.kind, e.message));
    let (kind, message) = error(0).unwrap();
    assert_eq!(kind, ErrorKind::Status);
    assert_eq!(message, "HTTP 500 Internal Server Error: the engine died");
    assert_eq!(
        error(1).unwrap().1,
        "HTTP 401 Unauthorized: Incorrect API key provided"
    );
    let (kind, message) = error(2).unwrap();
    assert_eq!(kind, ErrorKind::NotSse);
    assert_eq!(
        message,
        r#"the answer is not an SSE stream (content-type: application/json): {"choices": [{"message": {"content": "hi"}}]}"#
    );
    let (kind, message) = error(3).unwrap();
    assert_eq!(kind, ErrorKind::Timeout);
    assert_eq!(message, "the stream stalled: nothing for 0.4 s (--timeout)");
    // What came before the stall is kept.
    assert!(r.requests[3].first_byte_ms.is_some());
    assert_eq!(error(4).unwrap().0, ErrorKind::Unfinished);
    let (kind, message) = error(5).unwrap();
    assert_eq!(kind, ErrorKind::Upstream);
    assert_eq!(message, "the stream carried an error: out of memory");
    assert!(r.requests[6].ok);
    let s = &r.summary;
    assert_eq!((s.requests, s.ok, s.failed), (7, 1, 6));
    assert_eq!(s.errors.get("status"), Some(&2));
    assert_eq!(s.errors.get("timeout"), Some(&1));
    // Failed requests count in no metric.
    assert_eq!(s.metrics["done_ms"].count, 1);
    let table = toolscan_bench::table::render(&runs);
    assert!(table.contains("7 requests to"), "{table}");
    assert!(
        table.contains("1 ok, 6 failed (1 not_sse, 2 status, 1 timeout, 1 unfinished, 1 upstream)"),
        "{table}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_server_is_an_error_per_request() {
    // A port that was free a moment ago: nothing listens there.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap();
    let url = format!("http://127.0.0.1:{port}");
    let runs = run(&plan(&url, Some("text"), 3, 2), &Progress::hidden())
        .await
        .unwrap();
    let r = &runs[0];
    assert_eq!((r.summary.ok, r.summary.failed), (0, 3));
    for q in &r.requests {
        let e = q.error.as_ref().unwrap();
        assert_eq!(e.kind, ErrorKind::Connect);
        assert!(
            e.message.starts_with(&format!(
                "cannot connect to http://127.0.0.1:{port}/v1/chat/completions"
            )),
            "{}",
            e.message
        );
    }
    assert!(r.summary.metrics.is_empty());
    // The outputs hold up with nothing measured.
    let table = toolscan_bench::table::render(&runs);
    assert!(
        table.contains("(no request succeeded: nothing measured)"),
        "{table}"
    );
    assert!(table.contains("0 ok, 3 failed (3 connect)"), "{table}");
    let page = html::render(&runs);
    assert_eq!(page.matches("<g class=\"request failed\"").count(), 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_bundled_replay_recording_gives_its_two_calls_and_a_head_start() {
    // The proxy crate's replay upstream, 5 ms between events: the
    // bundled Qwen3 recording writes two Hermes calls, then more text.
    let replay = toolscan_proxy::replay::Replay::bundled().with_delay(Duration::from_millis(5));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, replay.router()).await });
    let mut p = plan(&url, Some("proxy-qwen3-weather"), 2, 2);
    p.format = None; // by the model id: qwen3 → hermes
    let runs = run(&p, &Progress::hidden()).await.unwrap();
    let r = &runs[0];
    assert_eq!(r.format, "hermes");
    assert_eq!(r.summary.ok, 2, "{:?}", r.summary.errors);
    for q in &r.requests {
        let names: Vec<&str> = q.calls.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["get_weather", "get_weather"]);
        // Events after the second call's closer: 36 of them at 5 ms.
        let head = q.calls[1].head_start_ms.unwrap();
        assert!(head > 100.0, "head start of the second call: {head} ms");
        assert!(q.calls[0].head_start_ms.unwrap() > head);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_documents_read_back_the_same_runs() {
    let url = upstream().await;
    let runs = run(&plan(&url, Some("text"), 2, 2), &Progress::hidden())
        .await
        .unwrap();
    let text = bench_json::to_string(&runs);
    let doc: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(doc["toolscan_bench"], 1);
    let req = &doc["runs"][0]["requests"][0];
    for key in [
        "index",
        "line",
        "ok",
        "error",
        "status",
        "first_byte_ms",
        "ttft_ms",
        "tokens",
        "token_ms",
        "itl_mean_ms",
        "tpot_ms",
        "calls",
        "finish_ms",
        "finish_reason",
        "done_ms",
        "done_marker",
        "completion_tokens",
        "turn_tools_at_ready_ms",
        "turn_tools_at_done_ms",
    ] {
        assert!(req.get(key).is_some(), "request field {key}");
    }
    for key in [
        "index",
        "kind",
        "name",
        "start_ms",
        "ready_ms",
        "head_start_ms",
    ] {
        assert!(req["calls"][0].get(key).is_some(), "call field {key}");
    }
    assert_eq!(req["calls"][0]["kind"], "text");
    let p50 = &doc["runs"][0]["summary"]["metrics"]["head_start_ms"]["p50"];
    assert!(p50.is_number());
    let back = bench_json::from_str(&text, "doc").unwrap();
    let again: Value = serde_json::from_str(&bench_json::to_string(&back)).unwrap();
    assert!(same(&doc, &again), "read back: {again}");
    assert!(bench_json::from_str("{}", "x.json")
        .unwrap_err()
        .0
        .starts_with("x.json: not a toolscan bench JSON document"));
}

/// Equal JSON, numbers within a billionth (a decimal read back may be a
/// bit off).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            (x.as_f64().unwrap() - y.as_f64().unwrap()).abs()
                <= 1e-9 * x.as_f64().unwrap().abs().max(1.0)
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

/// A Chromium or Chrome on the PATH.
fn chromium() -> Option<std::path::PathBuf> {
    let path = std::env::var_os("PATH")?;
    [
        "chromium",
        "chromium-browser",
        "google-chrome",
        "google-chrome-stable",
        "chrome",
        "headless_shell",
    ]
    .iter()
    .flat_map(|name| std::env::split_paths(&path).map(move |dir| dir.join(name)))
    .find(|p| p.is_file())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_html_page_has_a_timeline_element_per_sample_request() {
    let (a, b) = (upstream().await, upstream().await);
    let mut p = plan(&a, Some("text"), 5, 5);
    p.targets.push(Target {
        label: "B".into(),
        endpoint: Endpoint::parse(&b).unwrap(),
        api_key: None,
        model: Some("native".into()),
    });
    let runs = run(&p, &Progress::hidden()).await.unwrap();
    let page = html::render(&runs);
    // Structure, in Rust: self-contained, one element per request.
    assert!(page.starts_with("<!DOCTYPE html>"));
    assert!(!page.contains("<script"), "no script");
    assert!(
        !page.contains("src=") && !page.contains("href="),
        "no external resource"
    );
    assert_eq!(page.matches("<g class=\"request\"").count(), 10);
    for label in ["A", "B"] {
        for i in 0..5 {
            assert_eq!(
                page.matches(&format!("id=\"request-{label}-{i}\"")).count(),
                1
            );
        }
    }
    // A bar per call, and one each in the legend.
    assert_eq!(page.matches("class=\"call text\"").count(), 5 + 1);
    assert_eq!(page.matches("class=\"call native\"").count(), 5 + 1);
    assert!(page.contains("id=\"metric-head_start_ms\""));
    assert_eq!(page.matches("<svg").count(), page.matches("</svg>").count());
    assert_eq!(page.matches("<g ").count(), page.matches("</g>").count());

    // The picture alone: a standalone SVG with the same rows.
    let svg = html::picture(&runs);
    assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
    assert!(!svg.contains("<script"));
    assert_eq!(svg.matches("<g class=\"request\"").count(), 10);
    assert_eq!(svg.matches("<g ").count(), svg.matches("</g>").count());

    let Some(browser) = chromium() else {
        eprintln!("skipped the Chromium check: no chromium or chrome binary on the PATH");
        return;
    };
    let dir = std::env::temp_dir().join(format!("toolscan-bench-html-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("bench.html");
    std::fs::write(&file, &page).unwrap();
    let out = tokio::process::Command::new(&browser)
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--dump-dom"])
        .arg(format!("--user-data-dir={}", dir.join("profile").display()))
        .arg(format!("file://{}", file.display()))
        .output();
    let out = tokio::time::timeout(Duration::from_secs(60), out)
        .await
        .expect("chromium answers within 60 s")
        .expect("chromium runs");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let dom = String::from_utf8_lossy(&out.stdout);
    // The DOM Chromium built from the page (attributes as it serialises them).
    assert_eq!(dom.matches("<g class=\"request\"").count(), 10, "{dom}");
    assert!(dom.contains("id=\"request-B-4\""));
    assert!(dom.contains("<figure class=\"metric\" id=\"metric-ttft_ms\">"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lines_that_name_their_model_are_read_in_its_format() {
    let url = upstream().await;
    let line = json!({"model": "text", "messages": [{"role": "user", "content": "hi"}]});
    let mut p = plan(&url, None, 2, 2);
    p.format = None;
    p.workload = Workload::from_jsonl(&line.to_string(), "test").unwrap();
    let runs = run(&p, &Progress::hidden()).await.unwrap();
    assert_eq!(runs[0].format, toolscan_bench::BY_LINE);
    assert_eq!(runs[0].model, None);
    // `text` is no known family: `auto`, which reads the Hermes call.
    assert_eq!(runs[0].summary.text_calls, 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_broken_midway_is_a_broken_stream() {
    // The replay's `die-midway` sends 5 events, then breaks the
    // connection; `die-at-start` sends only a keep-alive comment first.
    let replay = toolscan_proxy::replay::Replay::bundled().with_delay(Duration::from_millis(5));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, replay.router()).await });
    let lines: Vec<String> = ["die-midway", "die-at-start"]
        .iter()
        .map(|m| json!({"model": m, "messages": [{"role": "user", "content": "hi"}]}).to_string())
        .collect();
    let mut p = plan(&url, None, 2, 2);
    p.workload = Workload::from_jsonl(&lines.join("\n"), "test").unwrap();
    let runs = run(&p, &Progress::hidden()).await.unwrap();
    for q in &runs[0].requests {
        let e = q.error.as_ref().expect("an error");
        assert_eq!(e.kind, ErrorKind::Broken, "{}", e.message);
        assert!(e.message.starts_with("the stream broke: "), "{}", e.message);
        // What came before the break is kept.
        assert!(q.first_byte_ms.is_some());
    }
    assert!(runs[0].requests[0].tokens > 0);
    assert_eq!(runs[0].summary.errors.get("broken"), Some(&2));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_stopped_early_keeps_the_requests_finished() {
    let url = upstream().await;
    // 650 ms a request, one at a time: stopped at 1 s, one is done, the
    // second is dropped in flight, the others never sent.
    let p = plan(&url, Some("text"), 10, 1);
    let stop = tokio::time::sleep(Duration::from_millis(1000));
    let runs = toolscan_bench::run_until(&p, &Progress::hidden(), stop)
        .await
        .unwrap();
    let r = &runs[0];
    assert!(r.interrupted);
    assert!(
        (1..10).contains(&r.requests.len()),
        "{} requests",
        r.requests.len()
    );
    assert!(r.requests.iter().all(|q| q.ok));
    assert!(r.duration_s < 5.0);
    let table = toolscan_bench::table::render(&runs);
    assert!(table.contains("interrupted: the requests finished by then only"));
}
