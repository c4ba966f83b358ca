//! The head start on live traffic: a streamed answer read through the
//! proxy fills the timeline histograms of its model — time to first
//! token, each call ready, each call's head start on the end of the
//! stream — on the metrics listener's text.

use std::time::Duration;

use serde_json::json;
use tokio::sync::oneshot;
use toolscan_proxy::replay::Replay;
use toolscan_proxy::{serve, Metrics, ProxyConfig};

/// An SSE answer: a call, then `after` more text events, one event each.
fn answer(after: usize) -> String {
    let mut pieces = vec![
        "<tool_call>\n{\"name\": \"get_weather\", ".to_owned(),
        "\"arguments\": {\"city\": \"Paris\"}}\n</tool_call>".to_owned(),
    ];
    pieces.extend((0..after).map(|i| format!(" word{i}")));
    let mut out = String::new();
    for piece in pieces {
        let chunk = json!({"id": "c", "object": "chat.completion.chunk",
            "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": null}]});
        out.push_str(&format!("data: {chunk}\n\n"));
    }
    let end = json!({"id": "c", "object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]});
    out.push_str(&format!("data: {end}\n\ndata: [DONE]\n\n"));
    out
}

/// The value of the metric line that starts with `prefix`.
fn value(text: &str, prefix: &str) -> f64 {
    text.lines()
        .find(|l| l.starts_with(prefix))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no {prefix} in\n{text}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_stream_fills_its_models_timeline_histograms() {
    // 20 ms an event: the call is complete at the second event, 12 events
    // (about 240 ms) before the end.
    let replay = Replay::new()
        .with_delay(Duration::from_millis(20))
        .with_stream("qwen3", &answer(10))
        .with_default("qwen3");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let upstream = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, replay.router()).await });
    let metrics = Metrics::new();
    let config = ProxyConfig::new(upstream)
        .with_format("hermes")
        .with_metrics(metrics.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let proxy = format!("http://{}", listener.local_addr().unwrap());
    let (_stop, rx) = oneshot::channel::<()>();
    tokio::spawn(serve(listener, config, async {
        let _ = rx.await;
    }));
    let request = json!({"model": "qwen3", "stream": true,
        "messages": [{"role": "user", "content": "Weather?"}],
        "tools": [{"type": "function", "function": {"name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}]});
    let body = reqwest::Client::builder()
        .no_proxy()
        .build()
        .unwrap()
        .post(format!("{proxy}/v1/chat/completions"))
        .header("content-type", "application/json")
        .body(request.to_string())
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(body.contains("\"tool_calls\""), "{body}");
    // The stream's end is observed when its body ends; give the proxy's
    // task a moment after the client read the last byte.
    let mut text = metrics.render();
    for _ in 0..50 {
        if text.contains("toolscan_proxy_head_start_seconds_count{model=\"qwen3\"} 1") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
        text = metrics.render();
    }
    assert_eq!(
        value(
            &text,
            "toolscan_proxy_call_ready_seconds_count{model=\"qwen3\"}"
        ),
        1.0
    );
    assert_eq!(
        value(
            &text,
            "toolscan_proxy_time_to_first_token_seconds_count{model=\"qwen3\"}"
        ),
        1.0
    );
    // Scripted: ready after about 20 ms, 220 ms before the end (ten more
    // text events and the finish). Generous bounds: a loaded machine.
    let ready = value(
        &text,
        "toolscan_proxy_call_ready_seconds_sum{model=\"qwen3\"}",
    );
    let head_start = value(
        &text,
        "toolscan_proxy_head_start_seconds_sum{model=\"qwen3\"}",
    );
    assert!(
        ready < head_start,
        "ready {ready} s, head start {head_start} s"
    );
    assert!(head_start > 0.15, "head start {head_start} s");
    assert!(text.contains("# TYPE toolscan_proxy_head_start_seconds histogram"));
}
