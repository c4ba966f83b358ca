//! The proxy's metrics, in the Prometheus text format, and its health
//! check: served on an address of their own ([`Metrics::router`]), so that
//! they never shadow the upstream's `/metrics` and `/health`.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::http::header::{self, HeaderValue};
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::routing::get;
use axum::Router;
use toolscan_core::DiagnosticKind;
use toolscan_sse::Tally;

/// Upper bounds of the added-latency histogram's buckets, in seconds.
const BUCKETS: [f64; 10] = [
    0.000_01, 0.000_05, 0.000_1, 0.000_5, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5,
];

/// Upper bounds of the timeline histograms' buckets (time to first
/// token, call ready, head start), in seconds.
const TIMELINE_BUCKETS: [f64; 12] = [
    0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0,
];

/// Distinct `model` labels the timeline histograms keep; later models are
/// counted under `other` (a client names the model: the labels must stay
/// bounded).
const MAX_MODELS: usize = 32;

/// One histogram: counts per bucket (the last above every bound), sum.
#[derive(Clone, Debug, Default)]
struct Histogram {
    counts: [u64; TIMELINE_BUCKETS.len() + 1],
    sum: f64,
}

impl Histogram {
    fn observe(&mut self, secs: f64) {
        let slot = TIMELINE_BUCKETS
            .iter()
            .position(|&b| secs <= b)
            .unwrap_or(TIMELINE_BUCKETS.len());
        self.counts[slot] += 1;
        self.sum += secs;
    }

    fn render(&self, s: &mut String, name: &str, model: &str) {
        let mut cumulative = 0;
        for (bound, n) in TIMELINE_BUCKETS.iter().zip(&self.counts) {
            cumulative += n;
            let _ = writeln!(
                s,
                "{name}_bucket{{model=\"{model}\",le=\"{bound}\"}} {cumulative}"
            );
        }
        cumulative += self.counts[TIMELINE_BUCKETS.len()];
        let _ = writeln!(
            s,
            "{name}_bucket{{model=\"{model}\",le=\"+Inf\"}} {cumulative}"
        );
        let _ = writeln!(s, "{name}_sum{{model=\"{model}\"}} {}", self.sum);
        let _ = writeln!(s, "{name}_count{{model=\"{model}\"}} {cumulative}");
    }
}

/// The timeline histograms of one model's streams.
#[derive(Clone, Debug, Default)]
struct Timeline {
    /// Request to the first text, reasoning or call.
    first_token: Histogram,
    /// Request to each call complete (dispatchable).
    call_ready: Histogram,
    /// Each call complete to the end of the stream: how much earlier a
    /// tool can start than on the finished message.
    head_start: Histogram,
}

/// What the timeline histograms show.
const TIMELINE: [(&str, &str); 3] = [
    (
        "toolscan_proxy_time_to_first_token_seconds",
        "Time from a read streamed request to its first text, reasoning or call, by model.",
    ),
    (
        "toolscan_proxy_call_ready_seconds",
        "Time from a read streamed request to each of its calls being complete (dispatchable), by model.",
    ),
    (
        "toolscan_proxy_head_start_seconds",
        "Time from each call being complete to the end of its stream, by model: how much earlier its tool can start.",
    ),
];

/// Counters every request updates (relaxed atomics: a few adds per
/// request and per upstream chunk). Cheap to clone: clones share them.
///
/// ```
/// use toolscan_proxy::{Metrics, ProxyConfig};
/// let metrics = Metrics::new();
/// let config = ProxyConfig::new("http://127.0.0.1:8000").with_metrics(metrics.clone());
/// // Serve `metrics.router()` on an address of its own.
/// let _app: axum::Router = metrics.router();
/// assert!(metrics.render().contains("toolscan_proxy_requests_total"));
/// # let _ = config;
/// ```
#[derive(Clone, Debug, Default)]
pub struct Metrics {
    inner: Arc<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    /// By route (0: chat completions, 1: other) and status class (1xx…5xx
    /// at 0…4).
    requests: [[AtomicU64; 5]; 2],
    streams_open: AtomicI64,
    tool_calls: AtomicU64,
    /// By the kind's place in [`DiagnosticKind::ALL`].
    diagnostics: [AtomicU64; DiagnosticKind::ALL.len()],
    upstream_errors: AtomicU64,
    /// Cumulative counts are made when rendering: each slot counts the
    /// observations of its own bucket (the last: above every bound).
    latency: [AtomicU64; BUCKETS.len() + 1],
    latency_sum_ns: AtomicU64,
    /// By model (at most [`MAX_MODELS`], then `other`): one lock a
    /// stream, at its end.
    timelines: Mutex<BTreeMap<String, Timeline>>,
}

impl Metrics {
    /// Fresh counters.
    pub fn new() -> Metrics {
        Metrics::default()
    }

    /// `GET /metrics` (Prometheus text format 0.0.4) and `GET /health`
    /// (`200 ok` while the proxy runs).
    pub fn router(&self) -> Router {
        let metrics = self.clone();
        Router::new()
            .route(
                "/metrics",
                get(move || {
                    let text = metrics.render();
                    async move {
                        let mut r = text.into_response();
                        r.headers_mut().insert(
                            header::CONTENT_TYPE,
                            HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
                        );
                        r
                    }
                }),
            )
            .route("/health", get(|| async { (StatusCode::OK, "ok\n") }))
    }

    /// The metrics in the Prometheus text format.
    pub fn render(&self) -> String {
        let m = &*self.inner;
        let mut s = String::new();
        let load = |a: &AtomicU64| a.load(Ordering::Relaxed);
        s.push_str(
            "# HELP toolscan_proxy_requests_total Requests answered, by route and status class.\n",
        );
        s.push_str("# TYPE toolscan_proxy_requests_total counter\n");
        for (r, route) in ["chat_completions", "other"].iter().enumerate() {
            for (c, class) in ["1xx", "2xx", "3xx", "4xx", "5xx"].iter().enumerate() {
                let _ = writeln!(
                    s,
                    "toolscan_proxy_requests_total{{route=\"{route}\",status=\"{class}\"}} {}",
                    load(&m.requests[r][c])
                );
            }
        }
        s.push_str("# HELP toolscan_proxy_streams_open Streamed answers being sent.\n");
        s.push_str("# TYPE toolscan_proxy_streams_open gauge\n");
        let _ = writeln!(
            s,
            "toolscan_proxy_streams_open {}",
            m.streams_open.load(Ordering::Relaxed)
        );
        s.push_str(
            "# HELP toolscan_proxy_tool_calls_total Text tool calls turned into tool_calls.\n",
        );
        s.push_str("# TYPE toolscan_proxy_tool_calls_total counter\n");
        let _ = writeln!(s, "toolscan_proxy_tool_calls_total {}", load(&m.tool_calls));
        s.push_str(
            "# HELP toolscan_proxy_diagnostics_total Diagnostics of the content, by kind.\n",
        );
        s.push_str("# TYPE toolscan_proxy_diagnostics_total counter\n");
        for (k, n) in DiagnosticKind::ALL.iter().zip(&m.diagnostics) {
            let _ = writeln!(
                s,
                "toolscan_proxy_diagnostics_total{{kind=\"{}\"}} {}",
                k.as_str(),
                load(n)
            );
        }
        s.push_str("# HELP toolscan_proxy_upstream_errors_total Upstreams unreachable, answering 5xx, or failing mid-answer.\n");
        s.push_str("# TYPE toolscan_proxy_upstream_errors_total counter\n");
        let _ = writeln!(
            s,
            "toolscan_proxy_upstream_errors_total {}",
            load(&m.upstream_errors)
        );
        s.push_str("# HELP toolscan_proxy_added_latency_seconds Time the proxy spent rewriting an upstream chunk (or a whole answer) before passing it on.\n");
        s.push_str("# TYPE toolscan_proxy_added_latency_seconds histogram\n");
        let mut cumulative = 0;
        for (bound, n) in BUCKETS.iter().zip(&m.latency) {
            cumulative += load(n);
            let _ = writeln!(
                s,
                "toolscan_proxy_added_latency_seconds_bucket{{le=\"{bound}\"}} {cumulative}"
            );
        }
        cumulative += load(&m.latency[BUCKETS.len()]);
        let _ = writeln!(
            s,
            "toolscan_proxy_added_latency_seconds_bucket{{le=\"+Inf\"}} {cumulative}"
        );
        let _ = writeln!(
            s,
            "toolscan_proxy_added_latency_seconds_sum {}",
            load(&m.latency_sum_ns) as f64 / 1e9
        );
        let _ = writeln!(s, "toolscan_proxy_added_latency_seconds_count {cumulative}");
        let timelines = m.timelines.lock().map(|t| t.clone()).unwrap_or_default();
        for (i, (name, help)) in TIMELINE.iter().enumerate() {
            let _ = writeln!(s, "# HELP {name} {help}");
            let _ = writeln!(s, "# TYPE {name} histogram");
            for (model, t) in &timelines {
                let h = [&t.first_token, &t.call_ready, &t.head_start][i];
                h.render(&mut s, name, model);
            }
        }
        s
    }

    /// A read stream of `model` that began at `start` ended at `end`: its
    /// time to first token, its calls' ready times and head starts, from
    /// `tally`.
    pub(crate) fn timeline(&self, model: &str, start: Instant, end: Instant, tally: &Tally) {
        let Ok(mut timelines) = self.inner.timelines.lock() else {
            return;
        };
        let mut label = label(model);
        if !timelines.contains_key(&label) && timelines.len() >= MAX_MODELS {
            label = "other".to_owned();
        }
        let t = timelines.entry(label).or_default();
        let secs = |from: Instant, to: Instant| to.saturating_duration_since(from).as_secs_f64();
        if let Some(first) = tally.first_token() {
            t.first_token.observe(secs(start, first));
        }
        for ready in tally.ready() {
            t.call_ready.observe(secs(start, ready));
            t.head_start.observe(secs(ready, end));
        }
    }

    /// A request answered with `status` (`chat`: on the chat completions
    /// route), and what its rewrite found.
    pub(crate) fn request(&self, chat: bool, status: u16, tally: Option<&Tally>) {
        let m = &*self.inner;
        let class = usize::from(status / 100).clamp(1, 5) - 1;
        m.requests[usize::from(!chat)][class].fetch_add(1, Ordering::Relaxed);
        if let Some(t) = tally {
            m.tool_calls.fetch_add(t.calls(), Ordering::Relaxed);
            for ((_, n), slot) in t.by_kind().zip(&m.diagnostics) {
                if n > 0 {
                    slot.fetch_add(n, Ordering::Relaxed);
                }
            }
        }
    }

    pub(crate) fn stream_opened(&self) {
        self.inner.streams_open.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn stream_closed(&self) {
        self.inner.streams_open.fetch_sub(1, Ordering::Relaxed);
    }

    pub(crate) fn upstream_error(&self) {
        self.inner.upstream_errors.fetch_add(1, Ordering::Relaxed);
    }

    /// The proxy held a chunk (or answer) for `d` before passing it on.
    pub(crate) fn added(&self, d: Duration) {
        let secs = d.as_secs_f64();
        let slot = BUCKETS
            .iter()
            .position(|&b| secs <= b)
            .unwrap_or(BUCKETS.len());
        self.inner.latency[slot].fetch_add(1, Ordering::Relaxed);
        let ns = u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
        self.inner.latency_sum_ns.fetch_add(ns, Ordering::Relaxed);
    }
}

/// A model id as a label value: `"` and `\` escaped, control characters dropped,
/// at most 128 bytes.
fn label(model: &str) -> String {
    let mut out = String::new();
    for c in model.chars().filter(|c| !c.is_control()) {
        if out.len() >= 128 {
            break;
        }
        if c == '"' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    if out.is_empty() {
        out.push_str("unknown");
    }
    out
}
