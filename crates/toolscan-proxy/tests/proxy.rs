//! The proxy end to end, on loopback, with real components only: the
//! `toolscan-replay` binary as the upstream (a process of its own), the
//! proxy served in-process by `serve`, and reqwest as the client.

mod common;
mod logs;

use std::collections::{BTreeMap, HashSet};
use std::time::{Duration, Instant};

use common::ReplayProcess;
use futures::StreamExt;
use logs::{logged, logs};
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use toolscan_proxy::{serve, ProxyConfig};

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/data/sse");
const SECRET: &str = "sk-test-S3CRET-7f3a9";
const QUERY_SECRET: &str = "QU3RY-S3CRET";

// ---------------------------------------------------------------- harness

/// The replay server, a child process; killed when dropped.
struct Upstream {
    _process: ReplayProcess,
    url: String,
}

impl Upstream {
    fn start(args: &[&str]) -> Upstream {
        let process = ReplayProcess::start(&[&["--dir", DATA][..], args].concat());
        let url = process.url.clone();
        Upstream {
            _process: process,
            url,
        }
    }

    async fn stats(&self) -> Value {
        self.get("stats").await
    }

    /// The JSON the upstream answers at `/PATH`.
    async fn get(&self, path: &str) -> Value {
        client()
            .get(format!("{}/{path}", self.url))
            .send()
            .await
            .unwrap()
            .json_value()
            .await
            .unwrap()
    }

    /// Waits until `/stats` says `key` is `want` (5 s at most).
    async fn wait_for(&self, key: &str, want: u64) -> Value {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let stats = self.stats().await;
            if stats[key] == want || Instant::now() > deadline {
                return stats;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

/// The proxy, served in-process; shut down when dropped.
struct Proxy {
    url: String,
    shutdown: Option<oneshot::Sender<()>>,
    served: Option<JoinHandle<std::io::Result<()>>>,
}

impl Proxy {
    async fn start(config: ProxyConfig) -> Proxy {
        logs();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let (tx, rx) = oneshot::channel::<()>();
        let served = tokio::spawn(serve(listener, config, async {
            let _ = rx.await;
        }));
        Proxy {
            url,
            shutdown: Some(tx),
            served: Some(served),
        }
    }

    async fn to(upstream: &Upstream) -> Proxy {
        Proxy::start(ProxyConfig::new(upstream.url.clone())).await
    }
}

/// reqwest's `json` feature is off in this workspace: these stand in.
trait JsonBody {
    fn json_body(self, body: &Value) -> Self;
}

impl JsonBody for reqwest::RequestBuilder {
    fn json_body(self, body: &Value) -> Self {
        self.header("content-type", "application/json")
            .body(body.to_string())
    }
}

trait JsonValue {
    async fn json_value(self) -> reqwest::Result<Value>;
}

impl JsonValue for reqwest::Response {
    async fn json_value(self) -> reqwest::Result<Value> {
        let bytes = self.bytes().await?;
        Ok(serde_json::from_slice(&bytes)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&bytes))))
    }
}

fn client() -> reqwest::Client {
    reqwest::Client::builder().no_proxy().build().unwrap()
}

fn tools() -> Value {
    json!([{"type": "function", "function": {"name": "get_weather", "parameters": {
        "type": "object",
        "properties": {"city": {"type": "string"}, "country": {"type": "string"},
                       "unit": {"type": "string"}, "date": {"type": "string"}},
        "required": ["city"]}}}])
}

fn chat_request(model: &str, stream: bool) -> Value {
    json!({
        "model": model,
        "stream": stream,
        "messages": [{"role": "user", "content": "Weather in Zürich and 東京 tomorrow?"}],
        "tools": tools(),
    })
}

/// The `data:` payloads of an SSE body, in order.
fn data_of(body: &str) -> Vec<String> {
    body.replace("\r\n", "\n")
        .split("\n\n")
        .filter_map(|event| {
            let lines: Vec<&str> = event
                .lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .map(|d| d.strip_prefix(' ').unwrap_or(d))
                .collect();
            (!lines.is_empty()).then(|| lines.join("\n"))
        })
        .collect()
}

/// What a streamed answer says: text, calls by index (id, name,
/// arguments), finish reasons.
#[derive(Debug, Default)]
struct Streamed {
    content: String,
    calls: BTreeMap<u64, (String, String, String)>,
    finish: Vec<String>,
}

fn streamed(data: &[String]) -> Streamed {
    let mut out = Streamed::default();
    for d in data.iter().filter(|d| *d != "[DONE]") {
        let v: Value = serde_json::from_str(d).unwrap_or_else(|e| panic!("{e}: {d}"));
        for choice in v["choices"].as_array().into_iter().flatten() {
            if let Some(c) = choice["delta"]["content"].as_str() {
                out.content.push_str(c);
            }
            for tc in choice["delta"]["tool_calls"]
                .as_array()
                .into_iter()
                .flatten()
            {
                let entry = out.calls.entry(tc["index"].as_u64().unwrap()).or_default();
                if let Some(id) = tc["id"].as_str() {
                    entry.0.push_str(id);
                }
                if let Some(name) = tc["function"]["name"].as_str() {
                    entry.1.push_str(name);
                }
                if let Some(args) = tc["function"]["arguments"].as_str() {
                    entry.2.push_str(args);
                }
            }
            if let Some(f) = choice["finish_reason"].as_str() {
                out.finish.push(f.to_owned());
            }
        }
    }
    out
}

/// Checks the two weather calls of the recording; returns their ids.
fn check_weather_calls(s: &Streamed) -> Vec<String> {
    assert_eq!(s.calls.len(), 2, "two calls: {s:?}");
    let cities: Vec<Value> = s
        .calls
        .values()
        .map(|(id, name, args)| {
            assert!(id.starts_with("call_"), "id {id:?}");
            assert_eq!(name, "get_weather");
            let args: Value = serde_json::from_str(args).unwrap();
            args["city"].clone()
        })
        .collect();
    assert_eq!(cities, [json!("Zürich"), json!("東京")]);
    assert!(!s.content.contains("<tool_call>"), "{}", s.content);
    assert!(s.content.contains("umbrella"), "the text after the calls");
    s.calls.values().map(|c| c.0.clone()).collect()
}

async fn post_chat(proxy: &Proxy, body: &Value) -> reqwest::Response {
    client()
        .post(format!("{}/v1/chat/completions", proxy.url))
        .bearer_auth(SECRET)
        .json_body(body)
        .send()
        .await
        .unwrap()
}

// ------------------------------------------------------------------ tests

/// A streaming request: SSE back, the text calls as `delta.tool_calls`
/// (random `call_` ids, arguments that parse), `[DONE]` last.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streaming_request_gets_tool_calls_and_done_last() {
    let upstream = Upstream::start(&["--delay-ms", "1"]);
    let proxy = Proxy::to(&upstream).await;
    let response = post_chat(&proxy, &chat_request("Qwen/Qwen3-8B", true)).await;
    assert_eq!(response.status(), 200);
    let content_type = response.headers()["content-type"].to_str().unwrap();
    assert!(
        content_type.starts_with("text/event-stream"),
        "{content_type}"
    );
    assert!(response.headers().get("content-length").is_none());
    let body = response.text().await.unwrap();
    let data = data_of(&body);
    assert_eq!(data.last().map(String::as_str), Some("[DONE]"), "{body}");
    assert_eq!(data.iter().filter(|d| *d == "[DONE]").count(), 1);
    let s = streamed(&data);
    check_weather_calls(&s);
    assert_eq!(s.finish, ["tool_calls"]);
    assert_eq!(upstream.stats().await["completed"], 1);
}

/// A whole answer: `message.tool_calls`, the markup gone from the content.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn non_streaming_request_gets_tool_calls() {
    let upstream = Upstream::start(&[]);
    let proxy = Proxy::to(&upstream).await;
    let response = post_chat(&proxy, &chat_request("Qwen/Qwen3-8B", false)).await;
    assert_eq!(response.status(), 200);
    assert!(response.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("application/json"));
    let body: Value = response.json_value().await.unwrap();
    assert_eq!(body["object"], "chat.completion");
    let message = &body["choices"][0]["message"];
    let calls = message["tool_calls"].as_array().expect("tool_calls");
    assert_eq!(calls.len(), 2, "{body}");
    for (call, city) in calls.iter().zip(["Zürich", "東京"]) {
        assert_eq!(call["type"], "function");
        assert_eq!(call["function"]["name"], "get_weather");
        assert!(call["id"].as_str().unwrap().starts_with("call_"));
        let args: Value =
            serde_json::from_str(call["function"]["arguments"].as_str().unwrap()).unwrap();
        assert_eq!(args["city"], city);
    }
    assert!(!message["content"]
        .as_str()
        .unwrap_or("")
        .contains("<tool_call>"));
    assert_eq!(body["choices"][0]["finish_reason"], "tool_calls");
    // Fields the rewrite does not touch are kept.
    assert_eq!(body["usage"]["prompt_tokens"], 212);
}

/// Other routes go through untouched: status, body, the query, the
/// method, the request body and headers; `Host` is the upstream's. An
/// absolute-form request target cannot send the proxy elsewhere.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn other_routes_are_forwarded_untouched() {
    let upstream = Upstream::start(&[]);
    let proxy = Proxy::to(&upstream).await;
    let direct = client()
        .get(format!("{}/v1/models", upstream.url))
        .send()
        .await
        .unwrap();
    let direct_body = direct.bytes().await.unwrap();
    let proxied = client()
        .get(format!("{}/v1/models", proxy.url))
        .send()
        .await
        .unwrap();
    assert_eq!(proxied.status(), 200);
    assert_eq!(proxied.bytes().await.unwrap(), direct_body);
    let models: Value = serde_json::from_slice(&direct_body).unwrap();
    assert!(models["data"]
        .as_array()
        .unwrap()
        .iter()
        .any(|m| m["id"] == "proxy-qwen3-weather"));

    let echo: Value = client()
        .put(format!("{}/echo?x=1&y=%C3%BC", proxy.url))
        .header("x-custom", "kept")
        .header("content-type", "text/plain")
        .body("the body, untouched: ü")
        .send()
        .await
        .unwrap()
        .json_value()
        .await
        .unwrap();
    assert_eq!(echo["method"], "PUT");
    assert_eq!(echo["target"], "/echo?x=1&y=%C3%BC");
    assert_eq!(echo["body"], "the body, untouched: ü");
    assert_eq!(echo["headers"]["x-custom"], "kept");
    assert_eq!(echo["headers"]["content-type"], "text/plain");
    let upstream_host = upstream.url.trim_start_matches("http://");
    assert_eq!(echo["headers"]["host"], upstream_host);

    // 404 of the upstream passes through as it is.
    let missing = client()
        .get(format!("{}/no/such/route", proxy.url))
        .send()
        .await
        .unwrap();
    assert_eq!(missing.status(), 404);

    // An absolute-form target naming another host: only its path is used.
    let addr = proxy.url.trim_start_matches("http://");
    let mut tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    tcp.write_all(
        b"GET http://example.invalid/echo?via=absolute HTTP/1.1\r\n\
          Host: example.invalid\r\nConnection: close\r\n\r\n",
    )
    .await
    .unwrap();
    let mut raw = Vec::new();
    tcp.read_to_end(&mut raw).await.unwrap();
    let raw = String::from_utf8_lossy(&raw);
    assert!(raw.starts_with("HTTP/1.1 200"), "{raw}");
    assert!(raw.contains(r#""target":"/echo?via=absolute""#), "{raw}");
    assert!(
        raw.contains(&format!(r#""host":"{upstream_host}""#)),
        "{raw}"
    );
}

/// `Authorization` reaches the upstream, and neither it nor a query
/// string ever reaches the logs (every tracing event of this process is
/// captured, at TRACE level), while the request lines are there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn authorization_passes_through_and_is_never_logged() {
    let upstream = Upstream::start(&["--delay-ms", "1"]);
    let proxy = Proxy::to(&upstream).await;
    let echo: Value = client()
        .get(format!("{}/echo-headers?api_key={QUERY_SECRET}", proxy.url))
        .bearer_auth(SECRET)
        .header("proxy-authorization", "Basic aG9wOmJ5aG9w")
        .header("connection", "keep-alive, x-hop")
        .header("x-hop", "dropped")
        .send()
        .await
        .unwrap()
        .json_value()
        .await
        .unwrap();
    assert_eq!(echo["headers"]["authorization"], format!("Bearer {SECRET}"));
    // Hop-by-hop headers stop at the proxy.
    assert!(
        echo["headers"].get("proxy-authorization").is_none(),
        "{echo}"
    );
    assert!(echo["headers"].get("x-hop").is_none(), "{echo}");

    for stream in [true, false] {
        let response = client()
            .post(format!(
                "{}/v1/chat/completions?key={QUERY_SECRET}",
                proxy.url
            ))
            .bearer_auth(SECRET)
            .json_body(&chat_request("Qwen/Qwen3-8B", stream))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
        response.bytes().await.unwrap();
    }
    let failing = post_chat(&proxy, &chat_request("fail-500", true)).await;
    assert_eq!(failing.status(), 502);
    // The last log lines of a stream come when its body is dropped.
    tokio::time::sleep(Duration::from_millis(100)).await;

    let logs = logged();
    assert!(
        logs.contains("path=/v1/chat/completions"),
        "request spans are logged: {logs}"
    );
    assert!(logs.contains("status=200"));
    assert!(logs.contains("status=502"));
    assert!(logs.contains("path=/echo-headers"));
    assert!(logs.contains("stream closed"));
    assert!(!logs.contains(SECRET), "the key is logged: {logs}");
    assert!(!logs.contains("S3CRET"), "a secret is logged: {logs}");
    assert!(!logs.to_ascii_lowercase().contains("authorization"));
}

/// The upstream dies mid-stream: what came before, then an
/// `upstream_error` event, then the end of the body; no `[DONE]`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upstream_dying_mid_stream_gives_an_error_event_and_no_done() {
    let upstream = Upstream::start(&["--delay-ms", "1", "--die-after", "40"]);
    let proxy = Proxy::to(&upstream).await;
    let response = post_chat(&proxy, &chat_request("die-midway", true)).await;
    assert_eq!(response.status(), 200);
    let body = response.text().await.expect("a clean end of body");
    let data = data_of(&body);
    assert!(!data.iter().any(|d| d == "[DONE]"), "{body}");
    let last: Value = serde_json::from_str(data.last().expect("events")).unwrap();
    assert_eq!(last["error"]["type"], "upstream_error", "{body}");
    assert!(last["error"]["message"]
        .as_str()
        .unwrap()
        .contains("mid-stream"));
    assert!(data.len() > 2, "the events before the failure: {body}");
    assert!(streamed(&data[..data.len() - 1]).content.contains("Zürich"));
    assert_eq!(upstream.wait_for("died", 1).await["died"], 1);
}

/// Before the first byte, failures are a `502` with an OpenAI error
/// object: an upstream 500, a connection refused, an upstream that breaks
/// the connection before its body. Client errors (4xx) pass through.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failures_before_the_first_byte_are_502() {
    let upstream = Upstream::start(&[]);
    let proxy = Proxy::to(&upstream).await;
    for (model, stream, says) in [
        ("fail-500", true, "fail-500"),
        ("fail-500", false, "fail-500"),
        ("die-at-start", true, "before its answer began"),
    ] {
        let response = post_chat(&proxy, &chat_request(model, stream)).await;
        assert_eq!(response.status(), 502, "{model} {stream}");
        let body: Value = response.json_value().await.unwrap();
        assert_eq!(body["error"]["type"], "upstream_error");
        let message = body["error"]["message"].as_str().unwrap();
        assert!(message.contains(says), "{model}: {message}");
    }

    let bad = client()
        .post(format!("{}/v1/chat/completions", proxy.url))
        .header("content-type", "application/json")
        .body("not json")
        .send()
        .await
        .unwrap();
    assert_eq!(bad.status(), 400, "the upstream's 400 passes through");

    // Nothing listens there any more.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let dead = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let proxy = Proxy::start(ProxyConfig::new(dead)).await;
    for stream in [true, false] {
        let response = post_chat(&proxy, &chat_request("Qwen/Qwen3-8B", stream)).await;
        assert_eq!(response.status(), 502);
        let body: Value = response.json_value().await.unwrap();
        assert_eq!(body["error"]["type"], "upstream_error");
        assert!(body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("cannot reach the upstream"));
    }
    let other = client()
        .get(format!("{}/v1/models", proxy.url))
        .send()
        .await
        .unwrap();
    assert_eq!(other.status(), 502);
}

/// A client that goes away mid-stream cancels the upstream request: the
/// upstream sees its stream aborted, not played to the end.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_disconnect_cancels_the_upstream_request() {
    let upstream = Upstream::start(&["--delay-ms", "20"]);
    let proxy = Proxy::to(&upstream).await;
    let mut response = post_chat(&proxy, &chat_request("Qwen/Qwen3-8B", true)).await;
    assert_eq!(response.status(), 200);
    let mut got = Vec::new();
    while got.len() < 3 {
        let chunk = response.chunk().await.unwrap().expect("chunks mid-stream");
        got.push(chunk);
    }
    assert_eq!(upstream.stats().await["active"], 1);
    drop(response);
    let stats = upstream.wait_for("aborted", 1).await;
    assert_eq!(stats["aborted"], 1, "{stats}");
    assert_eq!(stats["completed"], 0, "{stats}");
    assert_eq!(stats["active"], 0, "{stats}");
}

/// 200 concurrent streams through one proxy: each complete and correct,
/// and the 400 minted ids all different (random per response).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_hundred_concurrent_streams() {
    const N: usize = 200;
    let upstream = Upstream::start(&["--delay-ms", "2"]);
    let proxy = Proxy::to(&upstream).await;
    let client = client();
    let url = format!("{}/v1/chat/completions", proxy.url);
    let started = Instant::now();
    let bodies = futures::stream::iter(0..N)
        .map(|_| {
            let request = client
                .post(&url)
                .bearer_auth(SECRET)
                .json_body(&chat_request("Qwen/Qwen3-8B", true));
            async move {
                let response = request.send().await.unwrap();
                assert_eq!(response.status(), 200);
                response.text().await.unwrap()
            }
        })
        .buffer_unordered(N)
        .collect::<Vec<String>>()
        .await;
    let elapsed = started.elapsed();
    let mut ids = HashSet::new();
    for body in &bodies {
        let data = data_of(body);
        assert_eq!(data.last().map(String::as_str), Some("[DONE]"));
        for id in check_weather_calls(&streamed(&data)) {
            assert!(ids.insert(id.clone()), "id {id} repeated");
        }
    }
    assert_eq!(ids.len(), 2 * N);
    let stats = upstream.wait_for("completed", N as u64).await;
    assert_eq!(stats["completed"], N as u64, "{stats}");
    assert!(elapsed < Duration::from_secs(30), "{elapsed:?}");
}

/// After the shutdown future resolves, the stream in flight is played to
/// its end, then `serve` returns, and nothing is accepted any more.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn graceful_shutdown_lets_requests_in_flight_finish() {
    let upstream = Upstream::start(&["--delay-ms", "4"]);
    let mut proxy = Proxy::to(&upstream).await;
    let mut response = post_chat(&proxy, &chat_request("Qwen/Qwen3-8B", true)).await;
    assert_eq!(response.status(), 200);
    let mut body = Vec::new();
    body.extend_from_slice(&response.chunk().await.unwrap().expect("a first chunk"));

    proxy.shutdown.take().unwrap().send(()).unwrap();
    let served = proxy.served.take().unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(
        !served.is_finished(),
        "serve waits for the stream in flight"
    );

    while let Some(chunk) = response.chunk().await.unwrap() {
        body.extend_from_slice(&chunk);
    }
    let data = data_of(&String::from_utf8(body).unwrap());
    assert_eq!(data.last().map(String::as_str), Some("[DONE]"));
    check_weather_calls(&streamed(&data));

    tokio::time::timeout(Duration::from_secs(5), served)
        .await
        .expect("serve returns once the stream is done")
        .unwrap()
        .unwrap();
    let refused = client()
        .get(format!("{}/v1/models", proxy.url))
        .send()
        .await;
    assert!(refused.is_err(), "nothing listens after the shutdown");
    assert_eq!(upstream.stats().await["completed"], 1);
}

/// A configuration that cannot run is refused before anything is served.
#[tokio::test]
async fn serve_refuses_a_bad_configuration() {
    for config in [
        ProxyConfig::new("not a url"),
        ProxyConfig::new("ftp://127.0.0.1:21"),
        ProxyConfig::new("http://127.0.0.1:1").with_format("no-such-format"),
        ProxyConfig::new("http://127.0.0.1:1")
            .with_model_map([("m".to_owned(), "nope".to_owned())].into()),
    ] {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let e = serve(listener, config, std::future::pending())
            .await
            .unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput, "{e}");
    }
}

/// A format of the user's own, described in JSON, reads the completions
/// when the proxy is given the registry that holds it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_format_from_a_description_reads_the_completions() {
    let mut registry = toolscan_core::Registry::builtin();
    registry
        .register_json(
            r#"{"name": "my-calls", "open": "<tool_call>",
                "arguments": {"json": "call"}, "close": "</tool_call>"}"#,
        )
        .unwrap();
    let upstream = Upstream::start(&[]);
    // Unknown to the built-in registry: refused.
    let refused = serve(
        tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap(),
        ProxyConfig::new(upstream.url.clone()).with_format("my-calls"),
        async {},
    )
    .await;
    assert!(refused.is_err());
    let config = ProxyConfig::new(upstream.url.clone())
        .with_registry(registry)
        .with_format("my-calls");
    let proxy = Proxy::start(config).await;
    let response = post_chat(&proxy, &chat_request("Qwen/Qwen3-8B", false)).await;
    assert_eq!(response.status(), 200);
    let body: Value = response.json_value().await.unwrap();
    let calls = body["choices"][0]["message"]["tool_calls"]
        .as_array()
        .expect("tool_calls");
    assert_eq!(calls.len(), 2, "{body}");
}

// ------------------------------------------------- request-aware parsing

/// `chat_request` with `edit` applied to its JSON object.
fn request_with(stream: bool, edit: impl FnOnce(&mut serde_json::Map<String, Value>)) -> Value {
    let mut request = chat_request("Qwen/Qwen3-8B", stream);
    if let Value::Object(o) = &mut request {
        edit(o);
    }
    request
}

/// What a request's answer says, streamed or whole: content, reasoning,
/// calls (name, arguments), finish reasons.
async fn answer(
    proxy: &Proxy,
    request: &Value,
) -> (String, String, Vec<(String, Value)>, Vec<String>) {
    let response = post_chat(proxy, request).await;
    assert_eq!(response.status(), 200);
    if request["stream"] == json!(true) {
        let body = response.text().await.unwrap();
        let data = data_of(&body);
        let mut reasoning = String::new();
        for d in data.iter().filter(|d| *d != "[DONE]") {
            let v: Value = serde_json::from_str(d).unwrap();
            if let Some(r) = v["choices"][0]["delta"]["reasoning_content"].as_str() {
                reasoning.push_str(r);
            }
        }
        let s = streamed(&data);
        let calls = s
            .calls
            .values()
            .map(|(_, name, args)| (name.clone(), serde_json::from_str(args).unwrap()))
            .collect();
        (s.content, reasoning, calls, s.finish)
    } else {
        let body: Value = response.json_value().await.unwrap();
        let choice = &body["choices"][0];
        let message = &choice["message"];
        let calls = message["tool_calls"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|c| {
                let args = c["function"]["arguments"].as_str().unwrap();
                (
                    c["function"]["name"].as_str().unwrap().to_owned(),
                    serde_json::from_str(args).unwrap(),
                )
            })
            .collect();
        (
            message["content"].as_str().unwrap_or("").to_owned(),
            message["reasoning_content"]
                .as_str()
                .unwrap_or("")
                .to_owned(),
            calls,
            vec![choice["finish_reason"].as_str().unwrap_or("").to_owned()],
        )
    }
}

fn cities(calls: &[(String, Value)]) -> Vec<Value> {
    calls.iter().map(|(_, a)| a["city"].clone()).collect()
}

/// No `tools`, or `"tool_choice": "none"`: the completion is not read for
/// calls (an agent with no tools that shows call syntax must not get
/// `tool_calls`); its content is as the upstream wrote it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_tools_or_tool_choice_none_gets_the_content_as_written() {
    let upstream = Upstream::start(&["--delay-ms", "0"]);
    let proxy = Proxy::to(&upstream).await;
    for stream in [true, false] {
        for request in [
            request_with(stream, |o| {
                o.remove("tools");
            }),
            request_with(stream, |o| {
                o.insert("tools".into(), json!([]));
            }),
            request_with(stream, |o| {
                o.insert("tool_choice".into(), json!("none"));
            }),
        ] {
            let (content, _, calls, finish) = answer(&proxy, &request).await;
            assert_eq!(calls, [], "{request}");
            assert!(content.contains("<tool_call>"), "{content}");
            assert!(content.contains("<think>"), "{content}");
            assert_eq!(finish, ["stop"]);
        }
    }
}

/// `--parse-always`: calls are read without `tools` (agents that describe
/// their tools in the prompt) — but `"tool_choice": "none"` still wins.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn parse_always_reads_calls_without_tools_but_not_against_none() {
    let upstream = Upstream::start(&["--delay-ms", "0"]);
    let config = ProxyConfig::new(upstream.url.clone()).with_parse_always(true);
    let proxy = Proxy::start(config).await;
    for stream in [true, false] {
        let request = request_with(stream, |o| {
            o.remove("tools");
        });
        let (content, _, calls, finish) = answer(&proxy, &request).await;
        assert_eq!(cities(&calls), [json!("Zürich"), json!("東京")]);
        assert!(!content.contains("<tool_call>"), "{content}");
        assert_eq!(finish, ["tool_calls"]);
        let request = request_with(stream, |o| {
            o.insert("tool_choice".into(), json!("none"));
        });
        let (content, _, calls, _) = answer(&proxy, &request).await;
        assert_eq!(calls, []);
        assert!(content.contains("<tool_call>"), "{content}");
    }
}

/// Reasoning separation without calls: the reasoning is separated, the
/// call markup stays content.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reasoning_is_separated_when_calls_are_not_read() {
    let upstream = Upstream::start(&["--delay-ms", "0"]);
    let config = ProxyConfig::new(upstream.url.clone()).with_reasoning(true);
    let proxy = Proxy::start(config).await;
    for stream in [true, false] {
        let request = request_with(stream, |o| {
            o.remove("tools");
        });
        let (content, reasoning, calls, finish) = answer(&proxy, &request).await;
        assert_eq!(calls, []);
        assert!(reasoning.contains("compare the weather"), "{reasoning}");
        assert!(!content.contains("<think>"), "{content}");
        assert!(content.contains("<tool_call>"), "{content}");
        assert_eq!(finish, ["stop"]);
    }
}

/// `"parallel_tool_calls": false`: the first call only; the second's
/// markup stays content.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn parallel_tool_calls_false_gives_one_call() {
    let upstream = Upstream::start(&["--delay-ms", "0"]);
    let proxy = Proxy::to(&upstream).await;
    for stream in [true, false] {
        let request = request_with(stream, |o| {
            o.insert("parallel_tool_calls".into(), json!(false));
        });
        let (content, _, calls, finish) = answer(&proxy, &request).await;
        assert_eq!(cities(&calls), [json!("Zürich")]);
        assert_eq!(content.matches("<tool_call>").count(), 1, "{content}");
        assert!(content.contains("東京"), "{content}");
        assert_eq!(finish, ["tool_calls"]);
    }
}

/// A named `tool_choice`: only that function's calls are calls.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_named_tool_choice_reads_only_that_functions_calls() {
    let upstream = Upstream::start(&["--delay-ms", "0"]);
    let proxy = Proxy::to(&upstream).await;
    for stream in [true, false] {
        for (choice, want) in [
            (
                json!({"type": "function", "function": {"name": "get_weather"}}),
                2,
            ),
            (
                json!({"type": "function", "function": {"name": "get_time"}}),
                0,
            ),
            (json!({"type": "function", "name": "get_time"}), 0),
        ] {
            let request = request_with(stream, |o| {
                o.insert("tool_choice".into(), choice.clone());
            });
            let (content, _, calls, _) = answer(&proxy, &request).await;
            assert_eq!(calls.len(), want, "{choice}");
            assert_eq!(
                content.matches("<tool_call>").count(),
                2 - want,
                "{content}"
            );
        }
    }
}

/// `--upstream http://host:port/v1`, the base URL every vLLM and Ollama
/// guide gives, is the same upstream as its origin: requests keep their
/// own `/v1/…` path (not `/v1/v1/…`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_v1_base_url_is_the_upstreams_origin() {
    let upstream = Upstream::start(&["--delay-ms", "0"]);
    for base in [
        format!("{}/v1", upstream.url),
        format!("{}/v1/", upstream.url),
    ] {
        let proxy = Proxy::start(ProxyConfig::new(base.clone())).await;
        let (_, _, calls, _) = answer(&proxy, &chat_request("Qwen/Qwen3-8B", false)).await;
        assert_eq!(cities(&calls), [json!("Zürich"), json!("東京")], "{base}");
        let models = client()
            .get(format!("{}/v1/models", proxy.url))
            .send()
            .await
            .unwrap();
        assert_eq!(models.status(), 200, "{base}");
    }
}

// ------------------------------------------------------------ observability

/// The metrics count what went through: requests by route and status
/// class, the calls found, upstream errors, the latency the rewrite added;
/// no stream is left open; `/health` answers. Each request has one access
/// line with its upstream status, bytes and calls — and no secret.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_and_access_lines_count_what_went_through() {
    let upstream = Upstream::start(&["--delay-ms", "0"]);
    let metrics = toolscan_proxy::Metrics::new();
    let config = ProxyConfig::new(upstream.url.clone()).with_metrics(metrics.clone());
    let proxy = Proxy::start(config).await;
    for stream in [true, false] {
        let (_, _, calls, _) = answer(&proxy, &chat_request("Qwen/Qwen3-8B", stream)).await;
        assert_eq!(calls.len(), 2);
    }
    let failed = post_chat(&proxy, &chat_request("fail-500", false)).await;
    assert_eq!(failed.status(), 502);
    let other = client()
        .get(format!("{}/v1/models", proxy.url))
        .send()
        .await
        .unwrap();
    assert_eq!(other.status(), 200);
    other.bytes().await.unwrap();

    // Served on an address of its own.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, metrics.router()).await });
    let health = client()
        .get(format!("http://{addr}/health"))
        .send()
        .await
        .unwrap();
    assert_eq!(health.status(), 200);
    let text = client()
        .get(format!("http://{addr}/metrics"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let value = |line: &str| -> f64 {
        text.lines()
            .find_map(|l| l.strip_prefix(line).and_then(|v| v.trim().parse().ok()))
            .unwrap_or_else(|| panic!("{line} in\n{text}"))
    };
    assert_eq!(
        value("toolscan_proxy_requests_total{route=\"chat_completions\",status=\"2xx\"}"),
        2.0
    );
    assert_eq!(
        value("toolscan_proxy_requests_total{route=\"chat_completions\",status=\"5xx\"}"),
        1.0
    );
    assert_eq!(
        value("toolscan_proxy_requests_total{route=\"other\",status=\"2xx\"}"),
        1.0
    );
    assert_eq!(value("toolscan_proxy_tool_calls_total"), 4.0);
    assert_eq!(value("toolscan_proxy_upstream_errors_total"), 1.0);
    assert_eq!(value("toolscan_proxy_streams_open"), 0.0);
    assert!(
        value("toolscan_proxy_added_latency_seconds_count") >= 2.0,
        "{text}"
    );
    assert_eq!(
        value("toolscan_proxy_diagnostics_total{kind=\"malformed\"}"),
        0.0
    );

    let logs = logged();
    let access: Vec<&str> = logs
        .lines()
        .filter(|l| l.contains("toolscan_proxy::access: access "))
        .collect();
    assert!(
        access
            .iter()
            .any(|l| l.contains("upstream_status=200") && l.contains("calls=2")),
        "{logs}"
    );
    assert!(
        access
            .iter()
            .any(|l| l.contains("status=502") && l.contains("upstream_status=500")),
        "{logs}"
    );
    // A forwarded body of known length is complete once that many bytes
    // went out (the server stops reading the body there).
    assert!(
        access
            .iter()
            .any(|l| l.contains("path=/v1/models") && l.contains("outcome=\"complete\"")),
        "{logs}"
    );
    assert!(!logs.contains(SECRET));
}

// ------------------------------------------------------ timeouts and guards

/// Sends raw request bytes to the proxy and reads the response head (and
/// what follows, up to `within`).
async fn raw(proxy: &Proxy, request: &[u8], within: Duration) -> String {
    let mut s = tokio::net::TcpStream::connect(&proxy.url[7..])
        .await
        .unwrap();
    s.write_all(request).await.unwrap();
    let mut buf = vec![0u8; 4096];
    let n = tokio::time::timeout(within, s.read(&mut buf))
        .await
        .expect("an answer in time")
        .unwrap();
    String::from_utf8_lossy(&buf[..n]).into_owned()
}

/// A stream whose upstream goes quiet: after the idle timeout the client
/// gets an error event and the end of the body, no `[DONE]`, and the call
/// in flight is not completed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stalled_upstream_ends_the_stream_with_an_error_event() {
    let upstream = Upstream::start(&["--delay-ms", "0"]);
    let config = ProxyConfig::new(upstream.url.clone())
        .with_upstream_idle_timeout(Duration::from_millis(300));
    let proxy = Proxy::start(config).await;
    // The first event comes at once, the next after 5 s.
    let request = request_with(true, |o| {
        o.insert("replay_delay_ms".into(), json!(5000));
    });
    let started = Instant::now();
    let response = post_chat(&proxy, &request).await;
    assert_eq!(response.status(), 200);
    let body = response.text().await.unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "{:?}",
        started.elapsed()
    );
    let data = data_of(&body);
    assert!(!data.iter().any(|d| d == "[DONE]"), "{body}");
    let last: Value = serde_json::from_str(data.last().unwrap()).unwrap();
    assert_eq!(last["error"]["type"], "upstream_error", "{body}");
    assert!(streamed(&data[..data.len() - 1]).calls.is_empty());
}

/// An upstream that keeps sending, each event well within the idle
/// timeout, for longer than the timeout in all: the stream is never cut,
/// read for calls or passed through untouched (the timer of an answer is
/// set again from its last read, not once from its start).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstream_that_keeps_sending_is_not_cut_by_the_idle_timeout() {
    let upstream = Upstream::start(&["--delay-ms", "0"]);
    let timeout = Duration::from_millis(400);
    let config = ProxyConfig::new(upstream.url.clone()).with_upstream_idle_timeout(timeout);
    let proxy = Proxy::start(config).await;
    for parsed in [true, false] {
        let request = request_with(true, |o| {
            o.insert("replay_delay_ms".into(), json!(60));
            if !parsed {
                o.remove("tools");
            }
        });
        let started = Instant::now();
        let response = post_chat(&proxy, &request).await;
        assert_eq!(response.status(), 200);
        let body = response.text().await.unwrap();
        let took = started.elapsed();
        let data = data_of(&body);
        assert_eq!(
            data.last().map(String::as_str),
            Some("[DONE]"),
            "parsed {parsed}: {body}"
        );
        assert!(!body.contains("upstream_error"), "parsed {parsed}: {body}");
        // Long enough that one timer set at the start would have fired.
        assert!(
            took > timeout * 2,
            "parsed {parsed}: the stream took only {took:?}"
        );
    }
}

/// An upstream that accepts the connection and never answers: `504`
/// after the idle timeout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstream_that_never_answers_is_a_504() {
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", silent.local_addr().unwrap());
    let held = tokio::spawn(async move {
        let mut conns = Vec::new();
        while let Ok((c, _)) = silent.accept().await {
            conns.push(c);
        }
    });
    let config = ProxyConfig::new(url).with_upstream_idle_timeout(Duration::from_millis(300));
    let proxy = Proxy::start(config).await;
    for stream in [true, false] {
        let response = post_chat(&proxy, &chat_request("Qwen/Qwen3-8B", stream)).await;
        assert_eq!(response.status(), 504);
        let body: Value = response.json_value().await.unwrap();
        assert_eq!(body["error"]["type"], "upstream_error");
    }
    held.abort();
}

/// A `Content-Length` over the limit is refused at once, before the body
/// comes; a body that comes too slowly gets `408`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oversized_and_slow_request_bodies_are_refused() {
    let upstream = Upstream::start(&[]);
    let mut config = ProxyConfig::new(upstream.url.clone());
    config.request_body_timeout = Duration::from_millis(300);
    let proxy = Proxy::start(config).await;
    let head = raw(
        &proxy,
        b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n\
          Content-Length: 10000000000\r\n\r\n{",
        Duration::from_secs(2),
    )
    .await;
    assert!(head.starts_with("HTTP/1.1 413"), "{head}");
    let head = raw(
        &proxy,
        b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n\
          Content-Length: 100\r\n\r\n{\"model\":",
        Duration::from_secs(2),
    )
    .await;
    assert!(head.starts_with("HTTP/1.1 408"), "{head}");
    assert_eq!(upstream.stats().await["started"], 0);
}

/// `OPTIONS *` is answered by the proxy (nothing upstream is `*`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn options_star_is_answered_here() {
    let upstream = Upstream::start(&[]);
    let proxy = Proxy::to(&upstream).await;
    let head = raw(
        &proxy,
        b"OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n",
        Duration::from_secs(2),
    )
    .await;
    assert!(head.starts_with("HTTP/1.1 204"), "{head}");
    assert!(head.to_ascii_lowercase().contains("allow: get"), "{head}");
}

/// An SSE line longer than the bound ends the stream with an error event
/// instead of being buffered whole.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_endless_sse_line_ends_the_stream() {
    let long = "x".repeat(200_000);
    let sse = format!(
        "data: {{\"id\":\"c\",\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"Hi\"}},\"finish_reason\":null}}]}}\n\n\
         data: {{\"id\":\"c\",\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"{long}\"}},\"finish_reason\":null}}]}}\n\n\
         data: [DONE]\n\n"
    );
    let replay = toolscan_proxy::replay::Replay::new()
        .with_stream("long", &sse)
        .with_default("long");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, replay.router()).await });
    let config = ProxyConfig::new(url).with_max_sse_line(10_000);
    let proxy = Proxy::start(config).await;
    let response = post_chat(&proxy, &chat_request("long", true)).await;
    assert_eq!(response.status(), 200);
    let body = response.text().await.unwrap();
    let data = data_of(&body);
    assert!(!data.iter().any(|d| d == "[DONE]"), "{body}");
    let last: Value = serde_json::from_str(data.last().unwrap()).unwrap();
    assert!(
        last["error"]["message"]
            .as_str()
            .unwrap()
            .contains("longer than 10000 bytes"),
        "{last}"
    );
    assert!(!body.contains(&long));
}

/// After the shutdown signal, a stream still in flight at the end of the
/// grace period is cut, and `serve` returns.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_has_a_deadline() {
    let upstream = Upstream::start(&["--delay-ms", "0"]);
    let config =
        ProxyConfig::new(upstream.url.clone()).with_shutdown_grace(Duration::from_millis(300));
    let mut proxy = Proxy::start(config).await;
    let request = request_with(true, |o| {
        o.insert("replay_delay_ms".into(), json!(1000));
    });
    let mut response = post_chat(&proxy, &request).await;
    assert_eq!(response.status(), 200);
    response.chunk().await.unwrap().expect("a first chunk");
    let signalled = Instant::now();
    proxy.shutdown.take().unwrap().send(()).unwrap();
    let served = proxy.served.take().unwrap();
    tokio::time::timeout(Duration::from_secs(5), served)
        .await
        .expect("serve returns at the deadline")
        .unwrap()
        .unwrap();
    let took = signalled.elapsed();
    assert!(took >= Duration::from_millis(250), "{took:?}");
    assert!(took < Duration::from_secs(3), "{took:?}");
}

/// A model map's settings apply to their model only: a thinking model's
/// reasoning is separated, another model's behind the same proxy is not.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_maps_settings_apply_to_their_model() {
    let upstream = Upstream::start(&["--delay-ms", "0"]);
    let routes = ProxyConfig::parse_routes(
        r#"{"Qwen/Qwen3-8B": {"format": "qwen25", "reasoning": true},
            "plain-model": "hermes"}"#,
    )
    .unwrap();
    let proxy = Proxy::start(ProxyConfig::new(upstream.url.clone()).with_routes(routes)).await;
    for stream in [true, false] {
        let (content, reasoning, calls, _) =
            answer(&proxy, &chat_request("Qwen/Qwen3-8B", stream)).await;
        assert!(reasoning.contains("compare the weather"), "{reasoning}");
        assert!(!content.contains("<think>"), "{content}");
        assert_eq!(calls.len(), 2);
        let (content, reasoning, calls, _) =
            answer(&proxy, &chat_request("plain-model", stream)).await;
        assert_eq!(reasoning, "");
        assert!(content.contains("<think>"), "{content}");
        assert_eq!(calls.len(), 2);
    }
}

/// `--invalid-calls-as-text`: a call that does not fit the request's
/// `tools` is content, its markup as the model wrote it; the calls that
/// fit are `tool_calls`, numbered without a gap, streamed or whole. Off,
/// the same calls are calls. Per model in a model map too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_calls_as_text_sends_calls_that_do_not_fit_the_tools_as_content() {
    let upstream = Upstream::start(&["--delay-ms", "0"]);
    // The recording calls get_weather for Zürich and 東京: with only
    // Zürich in the enum, the second call does not fit.
    let only_zurich = |stream: bool| {
        request_with(stream, |o| {
            o.insert(
                "tools".into(),
                json!([{"type": "function", "function": {"name": "get_weather", "parameters": {
                    "type": "object", "required": ["city"],
                    "properties": {"city": {"type": "string", "enum": ["Zürich"]}}}}}]),
            );
        })
    };
    let on = ProxyConfig::new(upstream.url.clone()).with_invalid_calls_as_text(true);
    let routes = ProxyConfig::parse_routes(
        r#"{"Qwen/Qwen3-8B": {"format": "hermes", "invalid_calls_as_text": true}}"#,
    )
    .unwrap();
    let routed = ProxyConfig::new(upstream.url.clone()).with_routes(routes);
    for config in [on, routed] {
        let proxy = Proxy::start(config).await;
        for stream in [true, false] {
            let (content, _, calls, finish) = answer(&proxy, &only_zurich(stream)).await;
            assert_eq!(cities(&calls), [json!("Zürich")], "stream: {stream}");
            assert_eq!(content.matches("<tool_call>").count(), 1, "{content}");
            assert!(content.contains("東京"), "{content}");
            assert_eq!(finish, ["tool_calls"]);
            // Every call fits: both are calls.
            let (content, _, calls, _) = answer(&proxy, &request_with(stream, |_| {})).await;
            assert_eq!(cities(&calls), [json!("Zürich"), json!("東京")]);
            assert!(!content.contains("<tool_call>"), "{content}");
        }
        // Streamed, the call that fits is entry 0, sent whole.
        let body = post_chat(&proxy, &only_zurich(true))
            .await
            .text()
            .await
            .unwrap();
        let s = streamed(&data_of(&body));
        assert_eq!(s.calls.keys().copied().collect::<Vec<_>>(), [0]);
    }
    // Off: both calls are calls.
    let proxy = Proxy::to(&upstream).await;
    for stream in [true, false] {
        let (_, _, calls, _) = answer(&proxy, &only_zurich(stream)).await;
        assert_eq!(cities(&calls), [json!("Zürich"), json!("東京")]);
    }
}

// ------------------------------------------------ what Python clients read

/// The wire protocol as OpenAI's Python client (`openai`, and the
/// `openai-agents` and `langchain-openai` built on it) reads a streamed
/// answer with tools: every chunk decodes as a `chat.completion.chunk`; a
/// call's first entry brings `id`, `type` and `name`, later entries of the
/// same index only arguments (what `langchain-openai` accumulates by
/// index); one entry per index per chunk; the end of the choice in a chunk
/// with no call entries (the stream helper finishes a call's arguments
/// only when a later chunk comes); the usage chunk after it; `[DONE]`
/// last.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_stream_reads_as_openai_clients_expect() {
    let upstream = Upstream::start(&["--delay-ms", "0"]);
    let proxy = Proxy::to(&upstream).await;
    let request = request_with(true, |o| {
        o.insert("stream_options".into(), json!({"include_usage": true}));
    });
    let body = post_chat(&proxy, &request).await.text().await.unwrap();
    let data = data_of(&body);
    assert_eq!(data.last().map(String::as_str), Some("[DONE]"));
    let chunks: Vec<Value> = data[..data.len() - 1]
        .iter()
        .map(|d| serde_json::from_str(d).unwrap())
        .collect();
    let mut seen = HashSet::new();
    let mut finish_at = None;
    for (k, c) in chunks.iter().enumerate() {
        assert_eq!(c["object"], "chat.completion.chunk", "{c}");
        let Some(choice) = c["choices"].get(0) else {
            continue;
        };
        let entries = choice["delta"]["tool_calls"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let indices: HashSet<u64> = entries
            .iter()
            .map(|e| e["index"].as_u64().unwrap())
            .collect();
        assert_eq!(indices.len(), entries.len(), "one entry per index: {c}");
        for e in &entries {
            let i = e["index"].as_u64().unwrap();
            if seen.insert(i) {
                assert!(
                    e["id"].is_string() && e["function"]["name"].is_string(),
                    "{e}"
                );
                assert_eq!(e["type"], "function");
            } else {
                assert!(
                    e.get("id").is_none() && e["function"].get("name").is_none(),
                    "{e}"
                );
            }
        }
        if !choice["finish_reason"].is_null() {
            assert!(entries.is_empty(), "the end of the choice comes alone: {c}");
            finish_at = Some(k);
        }
    }
    assert_eq!(seen.len(), 2);
    let finish_at = finish_at.expect("a finish_reason");
    assert_eq!(
        chunks[finish_at]["choices"][0]["finish_reason"],
        "tool_calls"
    );
    let usage = chunks
        .iter()
        .position(|c| c["usage"].is_object())
        .expect("usage");
    assert!(usage > finish_at);
}

// ------------------------------------------------------ emulated tools

impl Upstream {
    /// The chat request bodies the upstream received, oldest first.
    async fn requests(&self) -> Vec<Value> {
        let v = self.get("requests").await;
        v.as_array().cloned().unwrap_or_default()
    }
}

/// A conversation with a call and its result in its history.
fn emulated_request(stream: bool, system: Option<&str>) -> Value {
    let mut messages = Vec::new();
    if let Some(s) = system {
        messages.push(json!({"role": "system", "content": s}));
    }
    messages.extend([
        json!({"role": "user", "content": "Weather in Paris?"}),
        json!({"role": "assistant", "content": "Checking.", "tool_calls": [
            {"id": "call_7", "type": "function",
             "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}]}),
        json!({"role": "tool", "tool_call_id": "call_7", "content": "18 °C, sunny"}),
        json!({"role": "user", "content": "And in Zürich and 東京 tomorrow?"}),
    ]);
    json!({
        "model": "Qwen/Qwen3-8B",
        "stream": stream,
        "messages": messages,
        "tools": tools(),
        "tool_choice": "auto",
        "parallel_tool_calls": true,
    })
}

/// `--emulate-tools`, end to end: what the upstream received holds no
/// `tools`, the format's manifest in the system message (at `{{tools}}`,
/// or in a system message of its own), the history's call written as the
/// model writes it and its result as its chat template writes one (Qwen's
/// `<tool_response>` in a user message); what the client gets back is
/// `tool_calls`, streamed or not.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn emulated_tools_go_upstream_as_text_and_come_back_as_tool_calls() {
    let upstream = Upstream::start(&["--delay-ms", "0"]);
    let proxy = Proxy::start(ProxyConfig::new(upstream.url.clone()).with_emulate_tools(true)).await;
    let hermes = toolscan_core::Registry::builtin()
        .get("hermes")
        .cloned()
        .unwrap();
    let manifest = hermes
        .manifest(&toolscan_core::Tools::from_json(&tools()).unwrap())
        .unwrap()
        .text;
    for stream in [true, false] {
        for system in [
            Some("You are terse.\n\n{{tools}}\n\nUse metric units."),
            None,
        ] {
            let request = emulated_request(stream, system);
            let (content, _, calls, finish) = answer(&proxy, &request).await;
            assert_eq!(
                cities(&calls),
                [json!("Zürich"), json!("東京")],
                "{content}"
            );
            assert!(calls.iter().all(|(name, _)| name == "get_weather"));
            assert!(!content.contains("<tool_call>"), "{content}");
            assert_eq!(finish.last().map(String::as_str), Some("tool_calls"));

            let sent = upstream.requests().await.pop().expect("a request upstream");
            for key in ["tools", "tool_choice", "parallel_tool_calls"] {
                assert!(sent.get(key).is_none(), "{key} went upstream: {sent}");
            }
            assert_eq!(sent["stream"], json!(stream));
            let want_system = match system {
                Some(_) => format!("You are terse.\n\n{manifest}\n\nUse metric units."),
                None => manifest.clone(),
            };
            assert_eq!(
                sent["messages"],
                json!([
                    {"role": "system", "content": want_system},
                    {"role": "user", "content": "Weather in Paris?"},
                    {"role": "assistant", "content": "Checking.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>"},
                    {"role": "user", "content": "<tool_response>\n18 °C, sunny\n</tool_response>"},
                    {"role": "user", "content": "And in Zürich and 東京 tomorrow?"}
                ])
            );
        }
    }
}

/// The model map turns emulation on for one model: another model's
/// request goes upstream as the client sent it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn emulation_per_model_leaves_other_models_untouched() {
    let upstream = Upstream::start(&["--delay-ms", "0"]);
    let routes = ProxyConfig::parse_routes(
        r#"{"Qwen/Qwen3-8B": {"format": "hermes", "emulate_tools": true}}"#,
    )
    .unwrap();
    let proxy = Proxy::start(ProxyConfig::new(upstream.url.clone()).with_routes(routes)).await;
    let mut other = emulated_request(false, None);
    other["model"] = json!("another-model");
    let (_, _, calls, _) = answer(&proxy, &other).await;
    assert_eq!(cities(&calls), [json!("Zürich"), json!("東京")]);
    let sent = upstream.requests().await.pop().unwrap();
    assert_eq!(sent, other, "forwarded as sent");

    let (_, _, calls, _) = answer(&proxy, &emulated_request(false, None)).await;
    assert_eq!(calls.len(), 2);
    let sent = upstream.requests().await.pop().unwrap();
    assert!(sent.get("tools").is_none());
    assert_eq!(sent["messages"][0]["role"], "system");
}

/// A chat request whose history holds one assistant message of `n`
/// calls (no `tools` field: a history alone turns emulation on).
fn history_of_calls(n: usize) -> Value {
    let calls: Vec<Value> = (0..n)
        .map(|i| {
            json!({"id": format!("call_{i}"), "type": "function",
                   "function": {"name": "get_weather",
                                "arguments": format!("{{\"city\": \"city {i}\"}}")}})
        })
        .collect();
    json!({
        "model": "Qwen/Qwen3-8B",
        "stream": false,
        "messages": [
            {"role": "user", "content": "Weather everywhere?"},
            {"role": "assistant", "content": "", "tool_calls": calls},
            {"role": "user", "content": "And in Zürich and 東京 tomorrow?"},
        ],
    })
}

/// A history of thousands of calls is written upstream (the renderer
/// keeps no frame per call on the worker's stack); one over the renderer's
/// limit is a 400 in OpenAI's error shape naming the limit — never a
/// crash —, and the proxy serves the next request.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_emulated_history_over_the_limits_is_a_400_and_the_proxy_goes_on() {
    let upstream = Upstream::start(&["--delay-ms", "0"]);
    let proxy = Proxy::start(ProxyConfig::new(upstream.url.clone()).with_emulate_tools(true)).await;

    let response = post_chat(&proxy, &history_of_calls(5_000)).await;
    assert_eq!(response.status(), 200, "a 5 000-call history");
    let sent = upstream.requests().await.pop().expect("a request upstream");
    let written = sent["messages"][1]["content"].as_str().unwrap_or("");
    assert_eq!(written.matches("<tool_call>").count(), 5_000);

    let over = toolscan_core::RenderLimit::Calls.max() + 1;
    let response = post_chat(&proxy, &history_of_calls(over)).await;
    assert_eq!(response.status(), 400);
    let body = response.json_value().await.unwrap();
    assert_eq!(body["error"]["type"], "invalid_request_error", "{body}");
    let message = body["error"]["message"].as_str().unwrap_or("");
    assert!(
        message.contains("messages[1]") && message.contains("10000 calls"),
        "{message}"
    );

    let (_, _, calls, _) = answer(&proxy, &emulated_request(false, None)).await;
    assert_eq!(cities(&calls), [json!("Zürich"), json!("東京")]);
}
