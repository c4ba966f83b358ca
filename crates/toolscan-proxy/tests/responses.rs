//! `POST /v1/responses` through the proxy, over a Chat Completions
//! upstream on loopback (a replay server that records what it receives):
//! text calls in four notations become `function_call` items, streamed in
//! the Responses event grammar and whole; a second turn's
//! `function_call_output` reaches the upstream as a `tool` message; bad
//! requests are clear `400`s; `previous_response_id` works with a store
//! and is refused without one.

use std::time::Duration;

use serde_json::{json, Value};
use tokio::sync::oneshot;
use toolscan_proxy::replay::{Received, Replay};
use toolscan_proxy::{serve, ProxyConfig};

/// An SSE stream of `content` in 5-byte pieces, then `finish` and a
/// usage chunk.
fn sse(content: &str, finish: &str) -> String {
    let mut out = String::new();
    let chars: Vec<char> = content.chars().collect();
    for piece in chars.chunks(5) {
        let piece: String = piece.iter().collect();
        let chunk = json!({"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
            "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": null}]});
        out.push_str(&format!("data: {chunk}\n\n"));
    }
    let end = json!({"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
        "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]});
    let usage = json!({"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
        "choices": [], "usage": {"prompt_tokens": 12, "completion_tokens": 30, "total_tokens": 42}});
    out.push_str(&format!("data: {end}\n\ndata: {usage}\n\ndata: [DONE]\n\n"));
    out
}

/// A whole `chat.completion` of `content`.
fn whole(content: &str) -> String {
    json!({"id": "c", "object": "chat.completion", "created": 1, "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
            "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 12, "completion_tokens": 30, "total_tokens": 42}})
    .to_string()
}

/// Each notation's answer: a sentence, then a call of `get_weather`.
const ANSWERS: [(&str, &str); 4] = [
    (
        "hermes",
        "Let me check.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>",
    ),
    (
        "qwen3-coder",
        "Let me check.\n<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call>",
    ),
    (
        "mistral-v11",
        "Let me check.[TOOL_CALLS]get_weather[CALL_ID]a1b2c3d4e[ARGS]{\"city\": \"Paris\"}",
    ),
    (
        "harmony",
        "<|channel|>analysis<|message|>The user wants the weather.<|end|><|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\"city\": \"Paris\"}<|call|>",
    ),
];

struct Setup {
    proxy: String,
    received: Received,
    _stops: (oneshot::Sender<()>, oneshot::Sender<()>),
}

async fn setup(store: usize) -> Setup {
    let mut replay = Replay::new().with_delay(Duration::ZERO);
    let mut map = serde_json::Map::new();
    for (format, answer) in ANSWERS {
        replay = replay
            .with_stream(format, &sse(answer, "stop"))
            .with_body(format, whole(answer));
        map.insert(format.into(), format.into());
    }
    replay = replay
        .with_stream("plain", &sse("Hello there.", "stop"))
        .with_body("plain", whole("Hello there."))
        .with_stream("cut", &sse("A long answer that was cu", "length"))
        .with_default("plain");
    let received = replay.received();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let upstream = format!("http://{}", listener.local_addr().unwrap());
    let (up_tx, up_rx) = oneshot::channel::<()>();
    tokio::spawn(async move {
        axum::serve(listener, replay.router())
            .with_graceful_shutdown(async {
                let _ = up_rx.await;
            })
            .await
    });
    let routes = ProxyConfig::parse_routes(&Value::Object(map).to_string()).unwrap();
    let mut config = ProxyConfig::new(upstream).with_routes(routes);
    config.responses_store = store;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let proxy = format!("http://{}", listener.local_addr().unwrap());
    let (tx, rx) = oneshot::channel::<()>();
    tokio::spawn(serve(listener, config, async {
        let _ = rx.await;
    }));
    Setup {
        proxy,
        received,
        _stops: (tx, up_tx),
    }
}

fn tools() -> Value {
    json!([{"type": "function", "name": "get_weather", "description": "The weather.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
            "required": ["city"]}}])
}

async fn post(proxy: &str, body: &Value) -> (u16, String) {
    let response = reqwest::Client::builder()
        .no_proxy()
        .build()
        .unwrap()
        .post(format!("{proxy}/v1/responses"))
        .header("content-type", "application/json")
        .body(body.to_string())
        .timeout(Duration::from_secs(30))
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    (status, response.text().await.unwrap())
}

/// The events of an SSE body: (event name, data).
fn events(body: &str) -> Vec<(String, Value)> {
    body.split("\n\n")
        .filter(|e| !e.trim().is_empty())
        .map(|e| {
            let mut name = String::new();
            let mut data = String::new();
            for line in e.lines() {
                if let Some(n) = line.strip_prefix("event: ") {
                    name = n.to_owned();
                } else if let Some(d) = line.strip_prefix("data: ") {
                    data.push_str(d);
                }
            }
            (name, serde_json::from_str(&data).unwrap_or(Value::Null))
        })
        .collect()
}

/// The `function_call` items of a response object.
fn calls(response: &Value) -> Vec<(String, Value)> {
    response["output"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["type"] == "function_call")
        .map(|i| {
            let args = serde_json::from_str(i["arguments"].as_str().unwrap()).unwrap();
            (i["name"].as_str().unwrap().to_owned(), args)
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn text_calls_in_four_notations_become_function_call_items_streamed_and_whole() {
    let s = setup(0).await;
    for (format, _) in ANSWERS {
        let request = json!({"model": format, "input": "Weather in Paris?", "tools": tools(),
            "stream": true});
        let (status, body) = post(&s.proxy, &request).await;
        assert_eq!(status, 200, "{format}: {body}");
        let events = events(&body);
        let names: Vec<&str> = events.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names.first(), Some(&"response.created"), "{format}");
        assert_eq!(names.get(1), Some(&"response.in_progress"), "{format}");
        assert_eq!(
            names.last(),
            Some(&"response.completed"),
            "{format}: {names:?}"
        );
        for (i, (_, data)) in events.iter().enumerate() {
            assert_eq!(data["sequence_number"], i, "{format}: event {i}");
        }
        let done: Vec<&Value> = events
            .iter()
            .filter(|(n, _)| n == "response.function_call_arguments.done")
            .map(|(_, d)| d)
            .collect();
        assert_eq!(done.len(), 1, "{format}: {names:?}");
        let arguments: Value =
            serde_json::from_str(done[0]["arguments"].as_str().unwrap()).unwrap();
        assert_eq!(arguments, json!({"city": "Paris"}), "{format}");
        let last = &events.last().unwrap().1["response"];
        assert_eq!(
            calls(last),
            [("get_weather".to_owned(), json!({"city": "Paris"}))],
            "{format}"
        );
        assert_eq!(last["usage"]["input_tokens"], 12, "{format}");
        assert_eq!(last["usage"]["output_tokens"], 30, "{format}");
        // The markup is never text.
        let text: String = events
            .iter()
            .filter(|(n, _)| n == "response.output_text.delta")
            .map(|(_, d)| d["delta"].as_str().unwrap().to_owned())
            .collect();
        assert!(!text.contains("get_weather"), "{format}: {text:?}");

        let request = json!({"model": format, "input": "Weather in Paris?", "tools": tools()});
        let (status, body) = post(&s.proxy, &request).await;
        assert_eq!(status, 200, "{format}: {body}");
        let response: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(response["object"], "response");
        assert_eq!(response["status"], "completed");
        assert_eq!(
            calls(&response),
            [("get_weather".to_owned(), json!({"city": "Paris"}))],
            "{format}: {body}"
        );
    }
    // The chat requests the upstream got carried the tools in chat shape.
    let sent = s.received.bodies();
    assert_eq!(
        sent[0]["tools"][0]["function"]["name"], "get_weather",
        "{sent:?}"
    );
    assert_eq!(sent[0]["messages"][0]["role"], "user");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_turn_sends_the_call_and_its_output_as_chat_messages() {
    let s = setup(0).await;
    let request = json!({"model": "plain", "tools": tools(), "instructions": "Be brief.",
    "input": [
        {"role": "user", "content": "Weather in Paris?"},
        {"type": "function_call", "call_id": "call_1", "name": "get_weather",
            "arguments": "{\"city\": \"Paris\"}"},
        {"type": "function_call_output", "call_id": "call_1", "output": "18 °C"},
    ]});
    let (status, body) = post(&s.proxy, &request).await;
    assert_eq!(status, 200, "{body}");
    let response: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(response["output"][0]["type"], "message");
    assert_eq!(response["output"][0]["content"][0]["text"], "Hello there.");
    let sent = s.received.bodies();
    let messages = &sent.last().unwrap()["messages"];
    assert_eq!(
        messages[0],
        json!({"role": "system", "content": "Be brief."})
    );
    assert_eq!(messages[2]["role"], "assistant");
    assert_eq!(messages[2]["tool_calls"][0]["id"], "call_1");
    assert_eq!(messages[3]["role"], "tool");
    assert_eq!(messages[3]["tool_call_id"], "call_1");
    assert_eq!(messages[3]["content"], "18 °C");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_requests_are_clear_400s() {
    let s = setup(0).await;
    let cases = [
        (
            json!({"model": "plain", "input": "hi", "tools": [{"type": "web_search"}]}),
            "web_search",
        ),
        (
            json!({"model": "plain", "input": [{"type": "computer_call", "id": "x"}]}),
            "computer_call",
        ),
        (
            json!({"model": "plain", "input": "hi", "previous_response_id": "resp_1"}),
            "previous_response_id",
        ),
    ];
    for (request, named) in cases {
        let (status, body) = post(&s.proxy, &request).await;
        assert_eq!(status, 400, "{body}");
        let error: Value = serde_json::from_str(&body).unwrap();
        let message = error["error"]["message"].as_str().unwrap();
        assert!(message.contains(named), "{named}: {message}");
        assert_eq!(error["error"]["type"], "invalid_request_error");
    }
    let (status, body) = post(&s.proxy, &json!("not an object")).await;
    assert_eq!(status, 400, "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn previous_response_id_continues_a_kept_conversation() {
    let s = setup(8).await;
    let first = json!({"model": "hermes", "input": "Weather in Paris?", "tools": tools()});
    let (status, body) = post(&s.proxy, &first).await;
    assert_eq!(status, 200, "{body}");
    let response: Value = serde_json::from_str(&body).unwrap();
    let call = response["output"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["type"] == "function_call")
        .unwrap()
        .clone();
    let second = json!({"model": "plain", "tools": tools(), "stream": true,
        "previous_response_id": response["id"],
        "input": [{"type": "function_call_output", "call_id": call["call_id"], "output": "18 °C"}]});
    let (status, body) = post(&s.proxy, &second).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(events(&body).last().unwrap().0, "response.completed");
    let sent = s.received.bodies();
    let messages = &sent.last().unwrap()["messages"];
    let roles: Vec<&str> = messages
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["user", "assistant", "tool"], "{messages}");
    assert_eq!(messages[1]["tool_calls"][0]["id"], call["call_id"]);
    assert_eq!(messages[2]["tool_call_id"], call["call_id"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cut_answer_is_incomplete() {
    let s = setup(0).await;
    let request = json!({"model": "cut", "input": "Tell me.", "stream": true});
    let (status, body) = post(&s.proxy, &request).await;
    assert_eq!(status, 200, "{body}");
    let events = events(&body);
    let (name, last) = events.last().unwrap();
    assert_eq!(name, "response.incomplete");
    assert_eq!(
        last["response"]["incomplete_details"]["reason"],
        "max_output_tokens"
    );
}
