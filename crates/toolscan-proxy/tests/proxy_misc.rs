//! Issue 29's items 10 and 14 at the proxy, end to end on loopback: the
//! replay upstream and the proxy each served on a port of their own,
//! reqwest as the client. A call whose tool the model named without its
//! namespace goes out with the declared name; a request nested deeper than
//! the proxy reads is refused, not passed on unread; an emulated history
//! whose call quotes its format's closing tag is written, not refused.

use std::time::Duration;

use serde_json::{json, Value};
use tokio::sync::oneshot;
use toolscan_proxy::replay::Replay;
use toolscan_proxy::{serve, ProxyConfig};

/// A Qwen3-Coder completion (`Qwen3-Coder.jinja` writes
/// `<tool_call>\n<function=NAME>\n<parameter=KEY>\nVALUE\n</parameter>\n`)
/// naming the tool bare, `exec`.
const COMPLETION: &str = "Stopping it.\n<tool_call>\n<function=exec>\n<parameter=pid>\n99797\n\
    </parameter>\n</function>\n</tool_call>";

/// The completion streamed in small pieces, and whole.
fn replay() -> Replay {
    let mut sse = String::new();
    let bytes = COMPLETION.as_bytes();
    let mut at = 0;
    while at < bytes.len() {
        let mut end = (at + 7).min(bytes.len());
        while !COMPLETION.is_char_boundary(end) {
            end += 1;
        }
        let chunk = json!({"id": "c", "object": "chat.completion.chunk", "model": "m",
            "choices": [{"index": 0, "delta": {"content": &COMPLETION[at..end]}, "finish_reason": null}]});
        sse.push_str(&format!("data: {chunk}\n\n"));
        at = end;
    }
    let last = json!({"id": "c", "object": "chat.completion.chunk", "model": "m",
        "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]});
    sse.push_str(&format!("data: {last}\n\ndata: [DONE]\n\n"));
    let whole = json!({"id": "c", "object": "chat.completion", "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": COMPLETION},
                     "finish_reason": "stop"}]});
    Replay::new()
        .with_stream("qwen", &sse)
        .with_body("qwen", whole.to_string())
        .with_default("qwen")
        .with_delay(Duration::from_millis(0))
}

/// The replay upstream on a loopback port: its URL.
async fn upstream(replay: Replay) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, replay.router()).await });
    url
}

/// The proxy, served on a loopback port until dropped.
struct Proxy {
    url: String,
    _stop: oneshot::Sender<()>,
}

async fn proxy(config: ProxyConfig) -> Proxy {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let (tx, rx) = oneshot::channel::<()>();
    tokio::spawn(serve(listener, config, async {
        let _ = rx.await;
    }));
    Proxy { url, _stop: tx }
}

fn client() -> reqwest::Client {
    reqwest::Client::builder().no_proxy().build().unwrap()
}

async fn post(proxy: &Proxy, body: String) -> (u16, String) {
    let r = client()
        .post(format!("{}/v1/chat/completions", proxy.url))
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
        .unwrap();
    (r.status().as_u16(), r.text().await.unwrap())
}

fn request(stream: bool) -> Value {
    json!({
        "model": "qwen3-coder", "stream": stream,
        "messages": [{"role": "user", "content": "Stop process 99797."}],
        "tools": [{"type": "function", "function": {"name": "functions.exec", "parameters": {
            "type": "object", "properties": {"pid": {"type": "string"}}}}}],
    })
}

/// The calls of an answer, streamed or whole: (name, arguments text).
fn calls(stream: bool, body: &str) -> Vec<(String, String)> {
    if !stream {
        let v: Value = serde_json::from_str(body).unwrap();
        return v["choices"][0]["message"]["tool_calls"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|c| {
                (
                    c["function"]["name"].as_str().unwrap_or("").to_owned(),
                    c["function"]["arguments"].as_str().unwrap_or("").to_owned(),
                )
            })
            .collect();
    }
    let mut out: Vec<(String, String)> = Vec::new();
    for line in body.lines() {
        let Some(data) = line.strip_prefix("data: ") else {
            continue;
        };
        let Ok(v) = serde_json::from_str::<Value>(data) else {
            continue;
        };
        for c in v["choices"][0]["delta"]["tool_calls"]
            .as_array()
            .into_iter()
            .flatten()
        {
            let i = c["index"].as_u64().unwrap_or(0) as usize;
            if out.len() <= i {
                out.resize(i + 1, Default::default());
            }
            if let Some(n) = c["function"]["name"].as_str() {
                out[i].0.push_str(n);
            }
            if let Some(a) = c["function"]["arguments"].as_str() {
                out[i].1.push_str(a);
            }
        }
    }
    out
}

/// The model writes `exec`, the request declares `functions.exec`: the
/// client gets the declared name (it dispatches by it), and the declared
/// string stays a string; `with_normalize_tool_names(false)` keeps the
/// model's name.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_named_without_its_namespace_goes_out_with_the_declared_name() {
    let up = upstream(replay()).await;
    let normalising = proxy(ProxyConfig::new(up.clone()).with_format("qwen3-coder")).await;
    let keeping = proxy(
        ProxyConfig::new(up)
            .with_format("qwen3-coder")
            .with_normalize_tool_names(false),
    )
    .await;
    for stream in [true, false] {
        let (status, body) = post(&normalising, request(stream).to_string()).await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(
            calls(stream, &body),
            [("functions.exec".to_owned(), r#"{"pid":"99797"}"#.to_owned())],
            "stream: {stream}: {body}"
        );
        let (_, body) = post(&keeping, request(stream).to_string()).await;
        assert_eq!(
            calls(stream, &body),
            [("exec".to_owned(), r#"{"pid":"99797"}"#.to_owned())],
            "stream: {stream}: {body}"
        );
    }
}

/// A body nested deeper than the proxy's JSON reader goes (128 levels)
/// was forwarded unread, its tools neither emulated nor its answer read;
/// it is a 400 that says why.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_nested_deeper_than_the_proxy_reads_is_a_400() {
    let up = upstream(replay()).await;
    let p = proxy(ProxyConfig::new(up).with_format("qwen3-coder")).await;
    let mut body = request(false).to_string();
    let deep = format!("{}1{}", "[".repeat(200), "]".repeat(200));
    body.insert_str(body.len() - 1, &format!(", \"metadata\": {deep}"));
    let (status, text) = post(&p, body).await;
    assert_eq!(status, 400, "{text}");
    let v: Value = serde_json::from_str(&text).unwrap();
    let message = v["error"]["message"].as_str().unwrap_or("");
    assert!(message.contains("deeper than 128"), "{message}");
    // 100 levels are read as ever.
    let mut body = request(false).to_string();
    let deep = format!("{}1{}", "[".repeat(100), "]".repeat(100));
    body.insert_str(body.len() - 1, &format!(", \"metadata\": {deep}"));
    let (status, text) = post(&p, body).await;
    assert_eq!(status, 200, "{text}");
    assert_eq!(calls(false, &text).len(), 1, "{text}");
}

/// An emulated conversation whose earlier call quotes its format's closing
/// tag (`</parameter>` in a Qwen3-Coder value) was a 400, that turn and
/// every later one: the history is written so that the model reads it
/// back. Waits for item 6 (values that quote their own closing tag), which
/// makes such a value read back; see `tests/guarantees_misc.rs`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_emulated_history_whose_call_quotes_the_closing_tag_is_not_refused() {
    let up = upstream(replay()).await;
    let p = proxy(
        ProxyConfig::new(up)
            .with_format("qwen3-coder")
            .with_emulate_tools(true),
    )
    .await;
    let request = json!({
        "model": "m", "stream": false,
        "tools": [{"type": "function", "function": {"name": "run", "parameters": {
            "type": "object", "properties": {"cmd": {"type": "string"}}}}}],
        "messages": [
            {"role": "user", "content": "Find the closing tags."},
            {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function",
              "function": {"name": "run", "arguments": "{\"cmd\": \"grep -n '</parameter>' t.jinja\"}"}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "12: </parameter>"},
            {"role": "user", "content": "And now?"}]});
    let (status, body) = post(&p, request.to_string()).await;
    assert_eq!(status, 200, "{body}");
}
