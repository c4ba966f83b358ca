//! The proxy's metrics, in the Prometheus text format, and its health
//! check: served on an address of their own ([`Metrics::router`]), so that
//! they never shadow the upstream's `/metrics` and `/health`.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

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
        s
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
