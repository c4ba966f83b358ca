//! No phantom calls through the proxy (issue 29, item 1): a real upstream
//! on loopback streams a Hermes call that breaks after it began, or is cut
//! by the token limit; the client must see content, never a `tool_calls`
//! entry. A model map's `stream_arguments` brings the live deltas back.

use std::time::Duration;

use serde_json::{json, Value};
use tokio::sync::oneshot;
use toolscan_proxy::replay::Replay;
use toolscan_proxy::{serve, ProxyConfig};

/// An SSE stream of `content` in 6-byte pieces, ended with `finish`.
fn sse(content: &str, finish: &str) -> String {
    let mut out = String::new();
    let mut rest = content;
    while !rest.is_empty() {
        let mut cut = rest.len().min(6);
        while !rest.is_char_boundary(cut) {
            cut += 1;
        }
        let (piece, tail) = rest.split_at(cut);
        let chunk = json!({"id": "c", "object": "chat.completion.chunk",
            "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": null}]});
        out.push_str(&format!("data: {chunk}\n\n"));
        rest = tail;
    }
    let end = json!({"id": "c", "object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]});
    out.push_str(&format!("data: {end}\n\ndata: [DONE]\n\n"));
    out
}

const BROKEN: &str =
    "Checking.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": </tool_call>\nSorry.";
const CUT: &str = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Par";
const GOOD: &str =
    "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>";

/// Serves `app` on a loopback port until the sender is dropped.
async fn serve_on_loopback(app: axum::Router) -> (String, oneshot::Sender<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let (tx, rx) = oneshot::channel::<()>();
    tokio::spawn(async move {
        axum::serve(listener, app)
            .with_graceful_shutdown(async {
                let _ = rx.await;
            })
            .await
    });
    (url, tx)
}

/// What a client reassembles of a streamed answer: content, the entries
/// of `tool_calls` in order, finish reasons.
async fn ask(proxy: &str, model: &str) -> (String, Vec<Value>, Vec<String>) {
    let request = json!({
        "model": model, "stream": true,
        "messages": [{"role": "user", "content": "Weather in Paris?"}],
        "tools": [{"type": "function", "function": {"name": "get_weather", "parameters":
            {"type": "object", "properties": {"city": {"type": "string"}}}}}],
    });
    let body = reqwest::Client::builder()
        .no_proxy()
        .build()
        .unwrap()
        .post(format!("{proxy}/v1/chat/completions"))
        .header("content-type", "application/json")
        .body(request.to_string())
        .timeout(Duration::from_secs(30))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let (mut content, mut entries, mut finish) = (String::new(), Vec::new(), Vec::new());
    for line in body.lines() {
        let Some(data) = line.strip_prefix("data: ") else {
            continue;
        };
        let Ok(chunk) = serde_json::from_str::<Value>(data) else {
            continue;
        };
        let choice = &chunk["choices"][0];
        content.push_str(choice["delta"]["content"].as_str().unwrap_or(""));
        entries.extend(
            choice["delta"]["tool_calls"]
                .as_array()
                .cloned()
                .unwrap_or_default(),
        );
        if let Some(f) = choice["finish_reason"].as_str() {
            finish.push(f.to_owned());
        }
    }
    (content, entries, finish)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn broken_and_cut_calls_reach_the_client_as_content() {
    let replay = Replay::new()
        .with_delay(Duration::ZERO)
        .with_stream("broken", &sse(BROKEN, "stop"))
        .with_stream("cut", &sse(CUT, "length"))
        .with_stream("good", &sse(GOOD, "stop"))
        .with_stream("live", &sse(BROKEN, "stop"))
        .with_default("good");
    let (upstream, _stop_upstream) = serve_on_loopback(replay.router()).await;
    let routes = ProxyConfig::parse_routes(
        r#"{"broken": "hermes", "cut": "hermes", "good": "hermes",
            "live": {"format": "hermes", "stream_arguments": true}}"#,
    )
    .unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let proxy = format!("http://{}", listener.local_addr().unwrap());
    let (tx, rx) = oneshot::channel::<()>();
    let served = tokio::spawn(serve(
        listener,
        ProxyConfig::new(upstream).with_routes(routes),
        async {
            let _ = rx.await;
        },
    ));

    let (content, entries, finish) = ask(&proxy, "broken").await;
    assert_eq!(entries, Vec::<Value>::new(), "no entry for a broken call");
    assert_eq!(content, BROKEN);
    assert_eq!(finish, ["stop"]);

    let (content, entries, finish) = ask(&proxy, "cut").await;
    assert_eq!(entries, Vec::<Value>::new(), "no entry for a cut call");
    assert_eq!(content, CUT);
    assert_eq!(finish, ["length"]);

    let (content, entries, finish) = ask(&proxy, "good").await;
    assert_eq!(content, "");
    assert_eq!(entries.len(), 1, "one whole entry: {entries:?}");
    assert_eq!(entries[0]["function"]["name"], "get_weather");
    assert_eq!(entries[0]["function"]["arguments"], r#"{"city": "Paris"}"#);
    assert_eq!(finish, ["tool_calls"]);

    // The model map turns live arguments on for one model: the broken
    // call's entries were sent before it broke (what the option's
    // documentation warns of).
    let (content, entries, _) = ask(&proxy, "live").await;
    assert_eq!(content, BROKEN);
    assert_eq!(entries[0]["function"]["name"], "get_weather");

    drop(tx);
    served.await.unwrap().unwrap();
}
