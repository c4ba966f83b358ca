//! A replay upstream: an OpenAI-style server that plays recorded
//! completions back at a set pace, for tests, demos and load measurements
//! (the `toolscan-replay` binary serves it).
//!
//! Routes:
//!
//! - `POST /v1/chat/completions`: the recording named by the request's
//!   `model` (every character outside `[A-Za-z0-9._-]` read as `_`), or the
//!   default one. `"stream": true` plays the `.sse` recording, one event
//!   every [`Replay::with_delay`] (a request's own `"replay_delay_ms"`
//!   overrides it), the first at once; otherwise the `.json` recording is
//!   the answer. Three model names misbehave on purpose: `fail-500`
//!   answers `500`; `die-midway` sends
//!   [`Replay::with_die_after`] events then breaks the connection;
//!   `die-at-start` sends its headers and an SSE comment (a keep-alive),
//!   then breaks the connection before any event.
//! - `GET /v1/models`: the recordings, as a model list.
//! - `/echo`, `/echo-headers` (any method): what the request was — method,
//!   path and query, headers, body — as JSON.
//! - `GET /stats`: how the streams played went ([`StatsSnapshot`]).
//! - `GET /requests`: the bodies of the last chat requests received (up
//!   to [`KEPT_REQUESTS`]), oldest first, as a JSON array: what a proxy
//!   in front of it sent ([`Replay::received`]).
//!
//! ```
//! use toolscan_proxy::replay::Replay;
//! let replay = Replay::new()
//!     .with_stream("demo", "data: {\"choices\":[]}\n\ndata: [DONE]\n\n")
//!     .with_default("demo");
//! let stats = replay.stats();
//! let _app: axum::Router = replay.router();
//! assert_eq!(stats.snapshot().started, 0);
//! ```

use std::collections::{BTreeMap, HashMap};
use std::io;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::header::{self, HeaderValue};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get, post};
use axum::Router;
use http_body_util::BodyExt;
use serde_json::{json, Value};

use crate::errors::json_response;

/// The field [`Replay::with_stamp`] adds to every event's JSON object: the
/// time the event was sent, in microseconds since the Unix epoch
/// ([`now_micros`]).
pub const STAMP_FIELD: &str = "replay_sent_us";

/// Microseconds since the Unix epoch (0 if the clock is before it).
pub fn now_micros() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as u64)
}

/// How many chat request bodies `GET /requests` keeps (the last ones).
pub const KEPT_REQUESTS: usize = 64;

/// The chat request bodies a replay server received (the last
/// [`KEPT_REQUESTS`]).
#[derive(Clone, Debug, Default)]
pub struct Received(Arc<Mutex<std::collections::VecDeque<Value>>>);

impl Received {
    /// The bodies, oldest first.
    pub fn bodies(&self) -> Vec<Value> {
        self.0
            .lock()
            .map(|q| q.iter().cloned().collect())
            .unwrap_or_default()
    }

    fn push(&self, body: Value) {
        if let Ok(mut q) = self.0.lock() {
            if q.len() == KEPT_REQUESTS {
                q.pop_front();
            }
            q.push_back(body);
        }
    }
}

/// One recorded SSE event, `\n\n` included.
#[derive(Clone, Debug)]
struct Event {
    bytes: Bytes,
    /// Where a stamp goes: just after the `{` of a `data: {…}` line.
    stamp_at: Option<usize>,
}

impl Event {
    fn new(text: &str) -> Event {
        let bytes = Bytes::from(format!("{text}\n\n"));
        let stamp_at = ["data: {", "data:{"]
            .iter()
            .find(|p| text.starts_with(**p))
            .map(|p| p.len());
        Event { bytes, stamp_at }
    }

    fn render(&self, stamp: bool) -> Bytes {
        match self.stamp_at {
            Some(at) if stamp => {
                let (head, tail) = self.bytes.split_at(at);
                let sep = if tail.first() == Some(&b'}') { "" } else { "," };
                let mut out = Vec::with_capacity(self.bytes.len() + 40);
                out.extend_from_slice(head);
                out.extend_from_slice(
                    format!("\"{STAMP_FIELD}\":{}{sep}", now_micros()).as_bytes(),
                );
                out.extend_from_slice(tail);
                Bytes::from(out)
            }
            _ => self.bytes.clone(),
        }
    }
}

/// Splits an SSE text into its events (blank-line separated).
fn events_of(sse: &str) -> Vec<Event> {
    let sse = sse.replace("\r\n", "\n");
    sse.split("\n\n")
        .map(|e| e.trim_matches('\n'))
        .filter(|e| !e.is_empty())
        .map(Event::new)
        .collect()
}

/// A replay server being set up; [`Replay::router`] serves it.
#[derive(Clone, Debug)]
pub struct Replay {
    streams: HashMap<String, Arc<[Event]>>,
    bodies: HashMap<String, Bytes>,
    default: String,
    delay: Duration,
    die_after: usize,
    stamp: bool,
    stats: ReplayStats,
    received: Received,
}

impl Default for Replay {
    fn default() -> Self {
        Replay::new()
    }
}

impl Replay {
    /// No recordings; default recording `proxy-qwen3-weather`, 20 ms
    /// between events, `die-midway` dies after 5 events, no stamps.
    pub fn new() -> Replay {
        Replay {
            streams: HashMap::new(),
            bodies: HashMap::new(),
            default: "proxy-qwen3-weather".into(),
            delay: Duration::from_millis(20),
            die_after: 5,
            stamp: false,
            stats: ReplayStats::default(),
            received: Received::default(),
        }
    }

    /// The recordings of the repository's `examples/data/sse/`, built into
    /// the binary (so a server runs from anywhere, installed or not): the
    /// default `proxy-qwen3-weather` (`.sse` and `.json`), `demo`,
    /// `qwen3-weather`, `qwen3-weather-stop` and `two-choices`.
    ///
    /// ```
    /// use toolscan_proxy::replay::Replay;
    /// let names = Replay::bundled().recordings();
    /// assert!(names.contains(&"proxy-qwen3-weather".to_string()));
    /// ```
    pub fn bundled() -> Replay {
        macro_rules! recording {
            ($file:literal) => {
                include_str!(concat!("../../../examples/data/sse/", $file))
            };
        }
        Replay::new()
            .with_stream("demo", recording!("demo.sse"))
            .with_stream("proxy-qwen3-weather", recording!("proxy-qwen3-weather.sse"))
            .with_body(
                "proxy-qwen3-weather",
                recording!("proxy-qwen3-weather.json"),
            )
            .with_stream("qwen3-weather", recording!("qwen3-weather.sse"))
            .with_stream("qwen3-weather-stop", recording!("qwen3-weather-stop.sse"))
            .with_stream("two-choices", recording!("two-choices.sse"))
    }

    /// Adds every `NAME.sse` (a streaming recording) and `NAME.json` (a
    /// whole answer) of `dir`.
    pub fn load_dir(mut self, dir: &Path) -> io::Result<Replay> {
        for entry in std::fs::read_dir(dir)? {
            let path = entry?.path();
            let (Some(stem), Some(ext)) = (
                path.file_stem().and_then(|s| s.to_str()),
                path.extension().and_then(|s| s.to_str()),
            ) else {
                continue;
            };
            match ext {
                "sse" => {
                    let text = std::fs::read_to_string(&path)?;
                    self = self.with_stream(stem, &text);
                }
                "json" => {
                    let body = std::fs::read(&path)?;
                    self = self.with_body(stem, body);
                }
                _ => {}
            }
        }
        Ok(self)
    }

    /// Adds a streaming recording: SSE text, events separated by blank
    /// lines.
    pub fn with_stream(mut self, name: &str, sse: &str) -> Replay {
        self.streams.insert(name.to_owned(), events_of(sse).into());
        self
    }

    /// Adds a whole (non-streaming) answer.
    pub fn with_body(mut self, name: &str, body: impl Into<Bytes>) -> Replay {
        self.bodies.insert(name.to_owned(), body.into());
        self
    }

    /// The recording played for a model that has none of its own.
    pub fn with_default(mut self, name: &str) -> Replay {
        self.default = name.to_owned();
        self
    }

    /// The pause between two events of a stream.
    pub fn with_delay(mut self, delay: Duration) -> Replay {
        self.delay = delay;
        self
    }

    /// How many events `die-midway` sends before it breaks the connection.
    pub fn with_die_after(mut self, events: usize) -> Replay {
        self.die_after = events;
        self
    }

    /// Adds [`STAMP_FIELD`] (the send time) to every event's JSON object.
    pub fn with_stamp(mut self, on: bool) -> Replay {
        self.stamp = on;
        self
    }

    /// The names of the streaming recordings, sorted.
    pub fn recordings(&self) -> Vec<String> {
        let mut names: Vec<String> = self.streams.keys().cloned().collect();
        names.sort();
        names
    }

    /// A handle on the stream counters (the `/stats` route).
    pub fn stats(&self) -> ReplayStats {
        self.stats.clone()
    }

    /// A handle on the chat request bodies received (the `/requests`
    /// route).
    pub fn received(&self) -> Received {
        self.received.clone()
    }

    /// The server's routes.
    pub fn router(self) -> Router {
        Router::new()
            .route("/v1/chat/completions", post(chat))
            .route("/v1/models", get(models))
            .route("/echo", any(echo))
            .route("/echo-headers", any(echo))
            .route("/stats", get(stats))
            .route("/requests", get(requests))
            .with_state(Arc::new(self))
    }

    fn pick<'a, T>(&'a self, map: &'a HashMap<String, T>, model: &str) -> Option<&'a T> {
        let name: String = model
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || "._-".contains(c) {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        map.get(&name).or_else(|| map.get(&self.default))
    }
}

/// Counters of the streams a replay server played.
#[derive(Clone, Debug, Default)]
pub struct ReplayStats(Arc<Counters>);

#[derive(Debug, Default)]
struct Counters {
    started: AtomicU64,
    completed: AtomicU64,
    aborted: AtomicU64,
    died: AtomicU64,
}

/// The counters at one moment.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StatsSnapshot {
    /// Streams begun.
    pub started: u64,
    /// Streams played to their end.
    pub completed: u64,
    /// Streams whose client went away before their end (the connection
    /// closed, the request cancelled).
    pub aborted: u64,
    /// Streams broken on purpose (`die-midway`, `die-at-start`).
    pub died: u64,
}

impl StatsSnapshot {
    /// Streams still playing.
    pub fn active(&self) -> u64 {
        self.started
            .saturating_sub(self.completed + self.aborted + self.died)
    }

    fn to_json(self) -> Value {
        json!({
            "started": self.started,
            "completed": self.completed,
            "aborted": self.aborted,
            "died": self.died,
            "active": self.active(),
        })
    }
}

impl ReplayStats {
    /// The counters now.
    pub fn snapshot(&self) -> StatsSnapshot {
        let c = &self.0;
        StatsSnapshot {
            started: c.started.load(Ordering::SeqCst),
            completed: c.completed.load(Ordering::SeqCst),
            aborted: c.aborted.load(Ordering::SeqCst),
            died: c.died.load(Ordering::SeqCst),
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Playing,
    Completed,
    Died,
}

/// Counts a stream's end, whichever way it comes.
struct Guard {
    stats: ReplayStats,
    outcome: Outcome,
}

impl Guard {
    fn end(&mut self, outcome: Outcome) {
        self.outcome = outcome;
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        let c = &self.stats.0;
        match self.outcome {
            Outcome::Playing => c.aborted.fetch_add(1, Ordering::SeqCst),
            Outcome::Completed => c.completed.fetch_add(1, Ordering::SeqCst),
            Outcome::Died => c.died.fetch_add(1, Ordering::SeqCst),
        };
    }
}

struct Play {
    /// Sent before the events (`die-at-start`'s keep-alive comment).
    prelude: Option<Bytes>,
    events: Arc<[Event]>,
    next: usize,
    die_at: Option<usize>,
    delay: Duration,
    stamp: bool,
    guard: Guard,
}

fn error(status: StatusCode, message: &str) -> Response {
    json_response(
        status,
        &json!({"error": {"message": message, "type": "server_error", "param": null, "code": null}}),
    )
}

async fn chat(State(replay): State<Arc<Replay>>, body: Bytes) -> Response {
    let request: Value = match serde_json::from_slice(&body) {
        Ok(v) => v,
        Err(e) => {
            return error(
                StatusCode::BAD_REQUEST,
                &format!("replay: the request is not JSON: {e}"),
            )
        }
    };
    replay.received.push(request.clone());
    let model = request.get("model").and_then(Value::as_str).unwrap_or("");
    let stream = request
        .get("stream")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    if model == "fail-500" {
        return error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "replay: the model failed (fail-500)",
        );
    }
    if !stream {
        return match replay.pick(&replay.bodies, model) {
            Some(body) => (
                [(
                    header::CONTENT_TYPE,
                    HeaderValue::from_static("application/json"),
                )],
                body.clone(),
            )
                .into_response(),
            None => error(StatusCode::NOT_FOUND, "replay: no whole answer recorded"),
        };
    }
    let Some(events) = replay.pick(&replay.streams, model) else {
        return error(StatusCode::NOT_FOUND, "replay: no stream recorded");
    };
    let delay = request
        .get("replay_delay_ms")
        .and_then(Value::as_u64)
        .map_or(replay.delay, Duration::from_millis);
    let die_at = match model {
        "die-midway" => Some(replay.die_after),
        "die-at-start" => Some(0),
        _ => None,
    };
    replay.stats.0.started.fetch_add(1, Ordering::SeqCst);
    let prelude = (model == "die-at-start").then(|| Bytes::from_static(b": keep-alive\n\n"));
    let play = Play {
        prelude,
        events: Arc::clone(events),
        next: 0,
        die_at,
        delay,
        stamp: replay.stamp,
        guard: Guard {
            stats: replay.stats.clone(),
            outcome: Outcome::Playing,
        },
    };
    let body = futures_util::stream::unfold(play, Play::step);
    (
        [
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/event-stream"),
            ),
            (header::CACHE_CONTROL, HeaderValue::from_static("no-cache")),
        ],
        Body::from_stream(body),
    )
        .into_response()
}

impl Play {
    /// The next piece of the stream, after its pause; the end, or a
    /// failure on purpose.
    async fn step(self) -> Option<(Result<Bytes, io::Error>, Play)> {
        let mut play = self;
        if play.guard.outcome != Outcome::Playing {
            return None;
        }
        if let Some(prelude) = play.prelude.take() {
            return Some((Ok(prelude), play));
        }
        if play.next > 0 && play.next < play.events.len() && !play.delay.is_zero() {
            tokio::time::sleep(play.delay).await;
        }
        if play.die_at == Some(play.next) {
            // Let what was sent reach the client before the connection breaks.
            tokio::time::sleep(play.delay.max(Duration::from_millis(20))).await;
            play.guard.end(Outcome::Died);
            let e = io::Error::new(io::ErrorKind::ConnectionAborted, "replay: dying on purpose");
            return Some((Err(e), play));
        }
        let Some(event) = play.events.get(play.next) else {
            play.guard.end(Outcome::Completed);
            return None;
        };
        let bytes = event.render(play.stamp);
        play.next += 1;
        Some((Ok(bytes), play))
    }
}

async fn models(State(replay): State<Arc<Replay>>) -> Response {
    let data: Vec<Value> = replay
        .recordings()
        .into_iter()
        .map(|id| json!({"id": id, "object": "model", "owned_by": "toolscan-replay"}))
        .collect();
    json_response(StatusCode::OK, &json!({"object": "list", "data": data}))
}

async fn echo(request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let mut headers: BTreeMap<String, String> = BTreeMap::new();
    for (name, value) in &parts.headers {
        let value = String::from_utf8_lossy(value.as_bytes()).into_owned();
        headers
            .entry(name.as_str().to_owned())
            .and_modify(|v| {
                v.push_str(", ");
                v.push_str(&value);
            })
            .or_insert(value);
    }
    let body = match body.collect().await {
        Ok(collected) => String::from_utf8_lossy(&collected.to_bytes()).into_owned(),
        Err(e) => {
            return error(
                StatusCode::BAD_REQUEST,
                &format!("replay: cannot read the body: {e}"),
            )
        }
    };
    let target = parts.uri.path_and_query().map_or("/", |p| p.as_str());
    json_response(
        StatusCode::OK,
        &json!({
            "method": parts.method.as_str(),
            "target": target,
            "headers": headers,
            "body": body,
        }),
    )
}

async fn requests(State(replay): State<Arc<Replay>>) -> Response {
    json_response(StatusCode::OK, &Value::Array(replay.received.bodies()))
}

async fn stats(State(replay): State<Arc<Replay>>) -> Response {
    json_response(StatusCode::OK, &replay.stats.snapshot().to_json())
}
