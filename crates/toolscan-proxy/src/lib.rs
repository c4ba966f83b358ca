//! An OpenAI-compatible HTTP proxy that turns the text tool calls of the
//! upstream's completions into `tool_calls`.
//!
//! Put it between an OpenAI client and a server whose completions carry
//! tool calls as text (`<tool_call>{…}</tool_call>`, `[TOOL_CALLS]…`):
//!
//! - `POST /v1/chat/completions` is forwarded to the upstream, and its
//!   answer rewritten by [`toolscan_sse`]: streaming (`"stream": true`,
//!   SSE) chunk by chunk as it arrives, whole answers at once. The format
//!   is [`ProxyConfig::format`], or picked per request from its `model`
//!   ([`ProxyConfig::routes`] and [`ProxyConfig::model_map`], then the
//!   model families toolscan knows, then `auto`); the request's `tools`
//!   make the parser typed.
//! - Calls are read only when the request asks for them, as vLLM does: a
//!   request without `tools`, or with `"tool_choice": "none"`, gets the
//!   content as written (unless [`ProxyConfig::parse_always`]);
//!   `"parallel_tool_calls": false` lets one call through, a named
//!   `tool_choice` only that function's calls.
//! - Tool calling for models served without it
//!   ([`ProxyConfig::emulate_tools`], per model in the model map): a
//!   request's `tools` become the format's manifest in the system message,
//!   the history's calls and results become text, and the answer is read
//!   back into `tool_calls` as above.
//! - One access line per request (target `toolscan_proxy::access`: status,
//!   upstream status, bytes, latency, calls, diagnostics); counters for
//!   Prometheus with [`Metrics`].
//! - Timeouts and bounds: [`ProxyConfig::upstream_idle_timeout`],
//!   [`ProxyConfig::request_body_timeout`], [`ProxyConfig::max_request_bytes`]
//!   (a larger `Content-Length` is refused before the body is read),
//!   [`ProxyConfig::max_sse_line`], [`ProxyConfig::shutdown_grace`].
//! - Every other route is forwarded untouched, both ways, streamed.
//! - Headers pass through (`Authorization` too) except hop-by-hop ones and
//!   `Host`; headers are never logged, nor query strings: the request
//!   span holds the method, the path, the status and the duration.
//! - Requests go to the configured upstream only: an absolute-form request
//!   target (`GET http://elsewhere/…`) keeps only its path and query,
//!   redirects are handed to the client rather than followed, and
//!   environment proxy settings are ignored.
//! - Call ids minted for calls that carry none are random per response
//!   ([`IdMint::Random`]), so the turns of one conversation never repeat
//!   an id.
//! - An upstream that cannot be reached, answers 5xx, or fails before the
//!   first byte of the rewritten answer gives a `502` with an OpenAI error
//!   object; one that fails mid-stream gives the client an SSE
//!   `data: {"error": {"message": …, "type": "upstream_error"}}` event and
//!   a close without `[DONE]`, as OpenAI does.
//! - A client that disconnects drops its response body, and with it the
//!   upstream response: the upstream request is cancelled.
//!
//! [`serve`] runs it until a shutdown future resolves ([`shutdown_signal`]:
//! SIGINT or SIGTERM), letting requests in flight finish.
//!
//! The [`replay`] module is a small upstream that plays recorded
//! completions back, for tests, demos and load measurements (the
//! `toolscan-replay` binary serves it).
#![forbid(unsafe_code)]
#![warn(missing_docs)]

use std::collections::HashMap;
use std::convert::Infallible;
use std::future::{Future, IntoFuture};
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::header::{self, HeaderMap, HeaderName, HeaderValue};
use axum::http::{Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::Router;
use bytes::Bytes;
use futures_util::{Stream, StreamExt};
use http_body_util::{BodyExt, LengthLimitError, Limited};
use serde_json::{json, Value};
use toolscan_core::{
    format_for_model, CallsInReasoning, Check, Grammar, IdMint, Limits, Options, Registry, Tools,
};
use toolscan_sse::{RewriteError, Tally};
use tracing::{field, info, info_span, warn, Instrument, Span};

mod config_error;
mod emulate;
mod line_guard;
mod metrics;
pub mod replay;
mod responses;
mod route;

pub use config_error::ConfigError;
pub use metrics::Metrics;
pub use route::Route;

/// The path whose answers are rewritten.
pub const CHAT_COMPLETIONS: &str = "/v1/chat/completions";

/// How the proxy runs: where it forwards to and how it reads completions.
///
/// ```
/// use toolscan_proxy::ProxyConfig;
/// let config = ProxyConfig::new("http://127.0.0.1:8000").with_format("hermes");
/// assert!(config.validate().is_ok());
/// ```
#[derive(Clone, Debug)]
pub struct ProxyConfig {
    /// The upstream server: its origin (`http://host:port`,
    /// `https://host:port`) or its API's base URL (`http://host:8000/v1`,
    /// what vLLM's and Ollama's guides give). Requests keep their own
    /// path, `/v1/…` included: a base ending in `/v1` is the same as the
    /// URL without it. Any other path in it is a prefix put before every
    /// request's path.
    pub upstream: String,
    /// The format every completion is read with (a name of
    /// [`Registry::builtin`], or `auto`). `None` or `auto`: picked per
    /// request from its `model`, see [`ProxyConfig::model_map`].
    pub format: Option<String>,
    /// Model id → format name, consulted when [`ProxyConfig::format`] does
    /// not fix one. A model not in it gets the format of its family
    /// ([`format_for_model`]) when this build has that format, else `auto`.
    pub model_map: HashMap<String, String>,
    /// Model id → its format and content options
    /// ([`ProxyConfig::parse_routes`] reads them from a model map file).
    /// Where both name a model, a route's format wins over `model_map`'s.
    pub routes: HashMap<String, Route>,
    /// Reasoning separation: `<think>…</think>` goes to
    /// `delta.reasoning_content` (see [`Options::reasoning`]).
    pub reasoning: bool,
    /// What call markup inside reasoning is (see [`CallsInReasoning`]):
    /// by default reasoning, unless the completion never closes its
    /// reasoning block.
    pub calls_in_reasoning: CallsInReasoning,
    /// Completions start inside a reasoning block whose opening marker
    /// was in the prompt (Qwen3, Kimi and R1 thinking templates): see
    /// [`Options::starts_in_reasoning`].
    pub starts_in_reasoning: bool,
    /// Read calls even when the request lists no `tools` (agents that put
    /// their own tool instructions in the prompt). Off: as vLLM does, a
    /// request without `tools`, or with `"tool_choice": "none"`, gets its
    /// completion's content as written (reasoning still separated with
    /// [`reasoning`](ProxyConfig::reasoning)). `"tool_choice": "none"`
    /// wins over this.
    pub parse_always: bool,
    /// Tool calling for models served without it: for a request with
    /// `tools` (or a history holding calls or their results), `tools`,
    /// `tool_choice` and `parallel_tool_calls` are removed from what goes
    /// upstream; the format's manifest of the tools
    /// ([`Format::manifest`](toolscan_core::Format::manifest)) goes into
    /// the first system message (at its `{{tools}}`, else after its
    /// text), or into a new one; the history's assistant `tool_calls` are
    /// written into their content as the model writes them
    /// ([`Format::render`](toolscan_core::Format::render)), and each run
    /// of `tool` messages becomes one `user` message of
    /// `<tool_result name="NAME" id="ID">\nCONTENT\n</tool_result>`
    /// blocks. The answer is read for calls as usual. A request whose
    /// format is `auto` is written and read as `hermes`.
    pub emulate_tools: bool,
    /// A call that does not fit the request's `tools` — a tool not in
    /// them, a `required` parameter missing, a value of the wrong type or
    /// outside its `enum` (the schema check,
    /// [`Check`]) — goes to the client as content,
    /// its markup as the model wrote it, not as a `tool_calls` entry (the
    /// check's diagnostics are counted and logged). Streamed, a call's
    /// `tool_calls` entry then goes out once the call is complete and
    /// checked. Off: every call that parses is a call.
    pub invalid_calls_as_text: bool,
    /// Streamed answers send a call's arguments as they come: its first
    /// `tool_calls` entry (id, name) when it starts, then argument deltas
    /// (for UIs that show them live). Off, the default: a call's entry —
    /// id, name and all its arguments — goes out in the chunk where the
    /// call's end is confirmed, and a call that breaks (malformed, cut by
    /// the token limit) never produces one; its markup is content. On, a
    /// call that breaks after it began has already sent entries whose
    /// arguments are not JSON, and its markup follows as content: see
    /// [`toolscan_sse::Config::stream_arguments`].
    pub stream_arguments: bool,
    /// A call whose tool the model named without (or with) the namespace
    /// the request declares it in (`exec` for `functions.exec`: see
    /// [`Tools::resolve`]) goes to the client with the declared name, the
    /// one it dispatches by ([`Options::normalize_tool_names`]). Default
    /// `true`.
    pub normalize_tool_names: bool,
    /// The parser's limits.
    pub limits: Limits,
    /// Where the proxy counts requests, calls, diagnostics, upstream
    /// errors and the latency it adds (serve [`Metrics::router`] on an
    /// address of its own). `None`: counted nowhere.
    pub metrics: Option<Metrics>,
    /// The largest request body accepted on `/v1/chat/completions`, which
    /// is read whole (to see `stream`, `model` and `tools`). Default 32 MiB;
    /// larger ones get `413`. Other routes are streamed, without a limit.
    pub max_request_bytes: usize,
    /// How long connecting to the upstream may take. Default 10 s.
    pub connect_timeout: Duration,
    /// How long the upstream may send nothing — before its answer's
    /// headers, or between two reads of its body — before the proxy gives
    /// up on it: a `504` before the answer began, else an SSE error event
    /// and the end of the stream (a call in flight is not completed).
    /// Default 300 s (a long prefill sends nothing for a while).
    pub upstream_idle_timeout: Duration,
    /// How long a client may take to send a chat request's body. Default
    /// 60 s; slower ones get `408`.
    pub request_body_timeout: Duration,
    /// The longest line of the upstream's SSE answer (an event's `data`
    /// line), in bytes: longer ones end the stream with an error event
    /// rather than be buffered. Default 16 MiB.
    pub max_sse_line: usize,
    /// After the shutdown signal, how long requests in flight may take to
    /// finish before [`serve`] returns anyway. Default 30 s.
    pub shutdown_grace: Duration,
    /// The formats names refer to: [`Registry::builtin`], plus any a user
    /// registered (a format described in a file, say).
    pub registry: Registry,
}

impl ProxyConfig {
    /// Forwards to `upstream`; format by model, no reasoning separation.
    pub fn new(upstream: impl Into<String>) -> ProxyConfig {
        ProxyConfig {
            upstream: upstream.into(),
            format: None,
            model_map: HashMap::new(),
            routes: HashMap::new(),
            reasoning: false,
            calls_in_reasoning: CallsInReasoning::default(),
            starts_in_reasoning: false,
            parse_always: false,
            emulate_tools: false,
            invalid_calls_as_text: false,
            stream_arguments: false,
            normalize_tool_names: true,
            limits: Limits::default(),
            metrics: None,
            max_request_bytes: 32 << 20,
            connect_timeout: Duration::from_secs(10),
            upstream_idle_timeout: Duration::from_secs(300),
            request_body_timeout: Duration::from_secs(60),
            max_sse_line: 16 << 20,
            shutdown_grace: Duration::from_secs(30),
            registry: Registry::builtin(),
        }
    }

    /// Reads format names in `registry` (the built-in formats and the
    /// user's own: see [`Registry::register_file`]).
    pub fn with_registry(mut self, registry: Registry) -> ProxyConfig {
        self.registry = registry;
        self
    }

    /// Reads every completion with the format `name` (`auto` means: by
    /// model).
    pub fn with_format(mut self, name: impl Into<String>) -> ProxyConfig {
        self.format = Some(name.into());
        self
    }

    /// Sets the model → format map.
    pub fn with_model_map(mut self, map: HashMap<String, String>) -> ProxyConfig {
        self.model_map = map;
        self
    }

    /// Turns reasoning separation on or off.
    pub fn with_reasoning(mut self, on: bool) -> ProxyConfig {
        self.reasoning = on;
        self
    }

    /// Sets what call markup inside reasoning is.
    pub fn with_calls_in_reasoning(mut self, calls: CallsInReasoning) -> ProxyConfig {
        self.calls_in_reasoning = calls;
        self
    }

    /// Completions start inside a reasoning block (see
    /// [`ProxyConfig::starts_in_reasoning`]).
    pub fn with_starts_in_reasoning(mut self, on: bool) -> ProxyConfig {
        self.starts_in_reasoning = on;
        self
    }

    /// Reads calls even in answers to requests without `tools` (see
    /// [`ProxyConfig::parse_always`]).
    pub fn with_parse_always(mut self, on: bool) -> ProxyConfig {
        self.parse_always = on;
        self
    }

    /// Emulates tool calling for every model (see
    /// [`ProxyConfig::emulate_tools`]; a model map may turn it on or off
    /// per model).
    pub fn with_emulate_tools(mut self, on: bool) -> ProxyConfig {
        self.emulate_tools = on;
        self
    }

    /// Sends calls that do not fit the request's `tools` as content (see
    /// [`ProxyConfig::invalid_calls_as_text`]).
    pub fn with_invalid_calls_as_text(mut self, on: bool) -> ProxyConfig {
        self.invalid_calls_as_text = on;
        self
    }

    /// Streams calls' arguments as they come (see
    /// [`ProxyConfig::stream_arguments`]; a model map may turn it on or off
    /// per model).
    pub fn with_stream_arguments(mut self, on: bool) -> ProxyConfig {
        self.stream_arguments = on;
        self
    }

    /// Gives calls the declared names of their tools (see
    /// [`ProxyConfig::normalize_tool_names`]; on by default).
    pub fn with_normalize_tool_names(mut self, on: bool) -> ProxyConfig {
        self.normalize_tool_names = on;
        self
    }

    /// Sets [`ProxyConfig::upstream_idle_timeout`].
    pub fn with_upstream_idle_timeout(mut self, t: Duration) -> ProxyConfig {
        self.upstream_idle_timeout = t;
        self
    }

    /// Sets [`ProxyConfig::max_sse_line`].
    pub fn with_max_sse_line(mut self, bytes: usize) -> ProxyConfig {
        self.max_sse_line = bytes;
        self
    }

    /// Sets [`ProxyConfig::shutdown_grace`].
    pub fn with_shutdown_grace(mut self, t: Duration) -> ProxyConfig {
        self.shutdown_grace = t;
        self
    }

    /// Counts into `metrics` (see [`ProxyConfig::metrics`]).
    pub fn with_metrics(mut self, metrics: Metrics) -> ProxyConfig {
        self.metrics = Some(metrics);
        self
    }

    /// Sets the parser's limits.
    pub fn with_limits(mut self, limits: Limits) -> ProxyConfig {
        self.limits = limits;
        self
    }

    /// Sets the per-model routes (see [`ProxyConfig::routes`]).
    pub fn with_routes(mut self, routes: HashMap<String, Route>) -> ProxyConfig {
        self.routes = routes;
        self
    }

    /// Reads a model map, as the command line's `--model-map FILE` holds:
    /// an object of model id → format name, or → an object of settings
    /// (`format`, `reasoning`, `starts_in_reasoning`, `calls_in_reasoning`,
    /// `parse_always`, `emulate_tools`, `invalid_calls_as_text`,
    /// `stream_arguments`) that
    /// override the proxy's own for that model.
    pub fn parse_routes(text: &str) -> Result<HashMap<String, Route>, ConfigError> {
        route::parse(text)
    }

    /// Reads a model map from JSON text: an object of model id → format
    /// name (see [`ProxyConfig::parse_routes`] for settings per model).
    ///
    /// ```
    /// use toolscan_proxy::ProxyConfig;
    /// let map = ProxyConfig::parse_model_map(r#"{"my-finetune": "hermes"}"#).unwrap();
    /// assert_eq!(map["my-finetune"], "hermes");
    /// assert!(ProxyConfig::parse_model_map(r#"["hermes"]"#).is_err());
    /// ```
    pub fn parse_model_map(text: &str) -> Result<HashMap<String, String>, ConfigError> {
        let value: Value =
            serde_json::from_str(text).map_err(|e| ConfigError::ModelMap(e.to_string()))?;
        let Value::Object(object) = value else {
            return Err(ConfigError::ModelMap(
                "expected a JSON object of model id → format name".into(),
            ));
        };
        object
            .into_iter()
            .map(|(model, format)| match format {
                Value::String(format) => Ok((model, format)),
                _ => Err(ConfigError::ModelMap(format!(
                    "the format of model `{model}` is not a string"
                ))),
            })
            .collect()
    }

    /// Checks the configuration: the upstream is an `http`/`https` URL, and
    /// every format named exists.
    pub fn validate(&self) -> Result<(), ConfigError> {
        Proxy::new(self).map(|_| ())
    }
}

/// The proxy's router: `/v1/chat/completions` rewritten, everything else
/// forwarded untouched. A configuration that does not
/// [validate](ProxyConfig::validate) gives a router that answers every
/// request with `500` and the reason (logged once, here); use
/// [`try_router`] to get the error instead.
///
/// ```no_run
/// # async fn run() -> std::io::Result<()> {
/// use toolscan_proxy::{router, ProxyConfig};
/// let app = router(ProxyConfig::new("http://127.0.0.1:8000"));
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
/// axum::serve(listener, app).await
/// # }
/// ```
pub fn router(config: ProxyConfig) -> Router {
    match try_router(config) {
        Ok(router) => router,
        Err(e) => {
            tracing::error!(error = %e, "the proxy is misconfigured; every request gets 500");
            let message = e.to_string();
            Router::new().fallback(move || {
                let message = message.clone();
                async move {
                    error_response(
                        StatusCode::INTERNAL_SERVER_ERROR,
                        &format!("proxy misconfigured: {message}"),
                        "server_error",
                    )
                }
            })
        }
    }
}

/// The proxy's router, or why the configuration cannot run.
///
/// ```
/// use toolscan_proxy::{try_router, ProxyConfig};
/// assert!(try_router(ProxyConfig::new("http://127.0.0.1:8000")).is_ok());
/// assert!(try_router(ProxyConfig::new("ftp://127.0.0.1")).is_err());
/// assert!(try_router(ProxyConfig::new("http://127.0.0.1:8000").with_format("nope")).is_err());
/// ```
pub fn try_router(config: ProxyConfig) -> Result<Router, ConfigError> {
    let proxy = Proxy::new(&config)?;
    // Said once per router (`validate` builds a `Proxy` too, silently).
    if proxy.api_base {
        info!(upstream = %config.upstream, "the upstream's `/v1` is its API base: requests keep their own `/v1/…` path");
    }
    Ok(Router::new().fallback(handle).with_state(Arc::new(proxy)))
}

/// Serves the proxy on `listener` until `shutdown` resolves, then stops
/// accepting connections and returns once the requests in flight (streams
/// included) have finished.
///
/// A configuration that does not [validate](ProxyConfig::validate) is an
/// error of kind [`io::ErrorKind::InvalidInput`], before anything is served.
///
/// ```no_run
/// # async fn run() -> std::io::Result<()> {
/// use toolscan_proxy::{serve, shutdown_signal, ProxyConfig};
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
/// let config = ProxyConfig::new("http://127.0.0.1:8000").with_format("hermes");
/// serve(listener, config, shutdown_signal()).await
/// # }
/// ```
pub async fn serve<F>(
    listener: tokio::net::TcpListener,
    config: ProxyConfig,
    shutdown: F,
) -> io::Result<()>
where
    F: Future<Output = ()> + Send + 'static,
{
    let grace = config.shutdown_grace;
    let upstream = config.upstream.clone();
    let app = try_router(config).map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
    if let Ok(addr) = listener.local_addr() {
        info!(%addr, %upstream, "toolscan proxy: listening on http://{addr}, forwarding to {upstream}");
    }
    let listener = axum::serve::ListenerExt::tap_io(listener, |tcp| {
        // Chunks are small and latency matters: no Nagle.
        let _ = tcp.set_nodelay(true);
    });
    // The signal starts the grace period; requests still in flight at its
    // end are cut.
    let (signalled, on_signal) = tokio::sync::oneshot::channel::<()>();
    let shutdown = async move {
        shutdown.await;
        let _ = signalled.send(());
    };
    let server = axum::serve(listener, app)
        .with_graceful_shutdown(shutdown)
        .into_future();
    let deadline = async move {
        match on_signal.await {
            Ok(()) => tokio::time::sleep(grace).await,
            Err(_) => std::future::pending().await,
        }
    };
    tokio::select! {
        served = server => served?,
        () = deadline => warn!(
            grace_s = grace.as_secs_f64(),
            "requests still in flight at the end of the shutdown grace period are cut"
        ),
    }
    info!("proxy stopped");
    Ok(())
}

/// Resolves on SIGINT (Ctrl-C) or, on Unix, SIGTERM. A signal whose handler
/// cannot be installed is simply never awaited. The handlers are installed
/// when the future is first polled ([`serve`] polls it at once, from a task
/// of its own).
pub async fn shutdown_signal() {
    let interrupt = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let terminate = async {
        use tokio::signal::unix::{signal, SignalKind};
        match signal(SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = interrupt => info!("SIGINT: shutting down"),
        () = terminate => info!("SIGTERM: shutting down"),
    }
}

/// The resolved configuration every request shares.
struct Proxy {
    client: reqwest::Client,
    /// The upstream URL without its trailing `/`; a request's path and query
    /// are appended.
    base: String,
    /// The configured URL ended in `/v1`, dropped from `base`.
    api_base: bool,
    /// `Some`: every completion is read with this.
    fixed: Option<(String, Arc<Grammar>)>,
    /// Model id → format.
    by_model: HashMap<String, (String, Arc<Grammar>)>,
    /// Model id → the content options that differ for it.
    routes: HashMap<String, Route>,
    auto: Arc<Grammar>,
    registry: Registry,
    reasoning: bool,
    calls_in_reasoning: CallsInReasoning,
    starts_in_reasoning: bool,
    parse_always: bool,
    emulate_tools: bool,
    invalid_calls_as_text: bool,
    stream_arguments: bool,
    normalize_tool_names: bool,
    limits: Limits,
    metrics: Metrics,
    max_request_bytes: usize,
    request_body_timeout: Duration,
    max_sse_line: usize,
}

impl Proxy {
    fn new(config: &ProxyConfig) -> Result<Proxy, ConfigError> {
        let refuse = |reason: &str| ConfigError::Upstream {
            url: config.upstream.clone(),
            reason: reason.into(),
        };
        let url = reqwest::Url::parse(&config.upstream).map_err(|e| refuse(&e.to_string()))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(refuse("the scheme must be http or https"));
        }
        if url.host_str().is_none_or(str::is_empty) {
            return Err(refuse("no host"));
        }
        if url.query().is_some() || url.fragment().is_some() {
            return Err(refuse("a query or fragment cannot be a prefix"));
        }
        let mut base = url.as_str().trim_end_matches('/');
        // The `/v1` base URL of OpenAI-style servers: requests bring
        // their own `/v1`.
        let api_base = base.strip_suffix("/v1");
        if let Some(origin) = api_base {
            base = origin;
        }
        let api_base = api_base.is_some();
        let base = base.to_owned();

        let registry = config.registry.clone();
        let grammar = |name: &str| {
            registry
                .grammar(name)
                .map(|g| (name.to_owned(), g))
                .map_err(ConfigError::Format)
        };
        let fixed = match config.format.as_deref() {
            None | Some("auto") => None,
            Some(name) => Some(grammar(name)?),
        };
        let routed = config
            .routes
            .iter()
            .filter_map(|(m, r)| r.format.as_ref().map(|f| (m, f)));
        let by_model = config
            .model_map
            .iter()
            .chain(routed)
            .map(|(model, format)| Ok((model.clone(), grammar(format)?)))
            .collect::<Result<_, ConfigError>>()?;
        let auto = registry.grammar("auto").map_err(ConfigError::Format)?;

        let client = reqwest::Client::builder()
            .no_proxy()
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(config.connect_timeout)
            .read_timeout(config.upstream_idle_timeout)
            .tcp_nodelay(true)
            .build()
            .map_err(ConfigError::Client)?;
        Ok(Proxy {
            client,
            base,
            api_base,
            fixed,
            by_model,
            routes: config.routes.clone(),
            auto,
            registry,
            reasoning: config.reasoning,
            calls_in_reasoning: config.calls_in_reasoning,
            starts_in_reasoning: config.starts_in_reasoning,
            parse_always: config.parse_always,
            emulate_tools: config.emulate_tools,
            invalid_calls_as_text: config.invalid_calls_as_text,
            stream_arguments: config.stream_arguments,
            normalize_tool_names: config.normalize_tool_names,
            limits: config.limits,
            metrics: config.metrics.clone().unwrap_or_default(),
            max_request_bytes: config.max_request_bytes,
            request_body_timeout: config.request_body_timeout,
            max_sse_line: config.max_sse_line,
        })
    }

    /// The format a request's completion is read with.
    fn grammar_for(&self, model: Option<&str>) -> (String, Arc<Grammar>) {
        if let Some(fixed) = &self.fixed {
            return fixed.clone();
        }
        if let Some(model) = model {
            if let Some(mapped) = self.by_model.get(model) {
                return mapped.clone();
            }
            if let Some(name) = format_for_model(model) {
                if self.registry.get(name).is_some() {
                    if let Ok(g) = self.registry.grammar(name) {
                        return (name.to_owned(), g);
                    }
                }
            }
        }
        ("auto".to_owned(), Arc::clone(&self.auto))
    }

    /// Whether a request to `model` is emulated (see
    /// [`ProxyConfig::emulate_tools`]).
    fn emulates(&self, model: Option<&str>) -> bool {
        model
            .and_then(|m| self.routes.get(m))
            .and_then(|r| r.emulate_tools)
            .unwrap_or(self.emulate_tools)
    }

    /// Whether a streamed answer to `model` sends calls' arguments as they
    /// come (see [`ProxyConfig::stream_arguments`]).
    fn streams_arguments(&self, model: Option<&str>) -> bool {
        model
            .and_then(|m| self.routes.get(m))
            .and_then(|r| r.stream_arguments)
            .unwrap_or(self.stream_arguments)
    }

    /// How a request's completion is read, from what the request asks
    /// (`tools`, `tool_choice`, `parallel_tool_calls`); `None`: it is
    /// passed on as it comes.
    fn options_for(&self, request: Option<&Value>) -> Option<Options> {
        let field = |name: &str| request.and_then(|r| r.get(name));
        let route = field("model")
            .and_then(Value::as_str)
            .and_then(|m| self.routes.get(m));
        let setting =
            |pick: fn(&Route) -> Option<bool>, own: bool| route.and_then(pick).unwrap_or(own);
        let reasoning = setting(|r| r.reasoning, self.reasoning);
        let parse_always = setting(|r| r.parse_always, self.parse_always);
        let starts_in_reasoning = setting(|r| r.starts_in_reasoning, self.starts_in_reasoning);
        let calls_in_reasoning = route
            .and_then(|r| r.calls_in_reasoning)
            .unwrap_or(self.calls_in_reasoning);
        let tools = field("tools").filter(|t| t.as_array().is_some_and(|a| !a.is_empty()));
        let choice = field("tool_choice");
        let none = choice.and_then(Value::as_str) == Some("none");
        let calls = !none && (tools.is_some() || parse_always);
        if !calls && !reasoning {
            return None;
        }
        // Random ids: seeded ones would repeat across the turns of a
        // conversation. (A call a `stop` sequence cut is completed by the
        // rewrite: `Config::complete_at_stop`.)
        let mut options = Options::new()
            .with_ids(IdMint::Random)
            .with_reasoning(reasoning)
            .with_starts_in_reasoning(starts_in_reasoning)
            .with_calls_in_reasoning(calls_in_reasoning)
            .with_normalize_tool_names(self.normalize_tool_names)
            .with_limits(self.limits);
        if !calls {
            // Reasoning only: call markup stays content.
            return Some(options.with_max_calls(0));
        }
        if let Some(tools) = tools {
            match Tools::from_json(tools) {
                Ok(tools) => options = options.with_tools(tools),
                Err(e) => warn!(error = %e, "the request's tools are ignored"),
            }
        }
        if setting(|r| r.invalid_calls_as_text, self.invalid_calls_as_text) {
            options = options.with_check_calls(Check::Reject);
        }
        if field("parallel_tool_calls").and_then(Value::as_bool) == Some(false) {
            options = options.with_max_calls(1);
        }
        // A named function: `{"type": "function", "function": {"name": …}}`
        // (and the flat `{"type": "function", "name": …}`).
        if let Some(name) = choice
            .filter(|c| c.is_object())
            .and_then(|c| c.pointer("/function/name").or_else(|| c.get("name")))
            .and_then(Value::as_str)
        {
            options = options.with_only_tool(name);
        }
        Some(options)
    }

    /// The upstream URL of a request: the base and the request's path and
    /// query, nothing else of its target.
    fn target(&self, uri: &Uri) -> String {
        let path = uri.path_and_query().map_or("/", |p| p.as_str());
        format!("{}{}", self.base, path)
    }
}

/// Every request: the span, the route, the final log line.
async fn handle(State(proxy): State<Arc<Proxy>>, request: Request) -> Response {
    let start = Instant::now();
    let method = request.method().clone();
    // The path only: a query string may hold a key.
    let path = request.uri().path().to_owned();
    let span = info_span!(
        "request",
        %method,
        %path,
        status = field::Empty,
        format = field::Empty,
        stream = field::Empty,
        parse = field::Empty,
    );
    async move {
        // `OPTIONS *` asks about the server itself: answered here (the
        // upstream's URL has no `*` to forward it to).
        if method == Method::OPTIONS && request.uri() == "*" {
            let mut r = StatusCode::NO_CONTENT.into_response();
            r.headers_mut().insert(
                header::ALLOW,
                HeaderValue::from_static("GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS"),
            );
            return r;
        }
        let is_chat = method == Method::POST && path == CHAT_COMPLETIONS;
        let response = if is_chat {
            chat(&proxy, request, start).await
        } else {
            forward(&proxy, request).await
        };
        let status = response.status();
        Span::current().record("status", status.as_u16());
        info!(
            status = status.as_u16(),
            elapsed_ms = elapsed_ms(start),
            "responded"
        );
        let upstream = response.extensions().get::<UpstreamSaid>().cloned();
        if upstream.as_ref().is_some_and(|u| u.failed) {
            proxy.metrics.upstream_error();
        }
        let access = Access {
            span: Span::current(),
            metrics: proxy.metrics.clone(),
            chat: is_chat,
            status: status.as_u16(),
            upstream,
            start,
            bytes: 0,
            length: None,
            logged: false,
        };
        access.body(response)
    }
    .instrument(span)
    .await
}

/// What the upstream said to a request, kept in its response's extensions
/// for the access line.
#[derive(Clone, Debug, Default)]
struct UpstreamSaid {
    /// Its status, if it answered.
    status: Option<u16>,
    /// It could not be reached or failed (the proxy answered `502`).
    failed: bool,
    /// What the rewrite of its answer found.
    tally: Option<Arc<Tally>>,
}

/// Marks `response` with what the upstream said.
fn tagged(mut response: Response, said: UpstreamSaid) -> Response {
    response.extensions_mut().insert(said);
    response
}

/// One request's access line: written once, when its response body has
/// been sent (or the client went away), with the metrics updated then.
struct Access {
    span: Span,
    metrics: Metrics,
    chat: bool,
    status: u16,
    upstream: Option<UpstreamSaid>,
    start: Instant,
    bytes: u64,
    /// The body's length, if its headers say it (the server stops polling
    /// a body once that many bytes went out).
    length: Option<u64>,
    logged: bool,
}

impl Access {
    /// The response, its body counted: a body of known size is logged at
    /// once, a streamed one when it ends.
    fn body(mut self, response: Response) -> Response {
        use axum::body::HttpBody as _;
        if let Some(n) = response.body().size_hint().exact() {
            self.bytes = n;
            self.log("complete");
            return response;
        }
        self.metrics.stream_opened();
        self.length = response
            .headers()
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse().ok());
        let (parts, body) = response.into_parts();
        let counted = Counted {
            inner: body.into_data_stream(),
            access: self,
        };
        Response::from_parts(parts, Body::from_stream(counted))
    }

    fn log(&mut self, outcome: &str) {
        if self.logged {
            return;
        }
        self.logged = true;
        let u = self.upstream.take().unwrap_or_default();
        let tally = u.tally.as_deref();
        self.metrics.request(self.chat, self.status, tally);
        info!(
            target: "toolscan_proxy::access",
            parent: &self.span,
            status = self.status,
            upstream_status = u.status,
            outcome,
            bytes = self.bytes,
            latency_ms = elapsed_ms(self.start),
            calls = tally.map_or(0, Tally::calls),
            diagnostics = tally.map_or(0, Tally::all_diagnostics),
            "access"
        );
    }
}

/// A streamed response body on its way out, counted.
struct Counted {
    inner: axum::body::BodyDataStream,
    access: Access,
}

impl Stream for Counted {
    type Item = Result<Bytes, axum::Error>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        let polled = this.inner.poll_next_unpin(cx);
        match &polled {
            Poll::Ready(Some(Ok(chunk))) => {
                this.access.bytes += chunk.len() as u64;
                if Some(this.access.bytes) == this.access.length {
                    this.access.log("complete");
                    this.access.metrics.stream_closed();
                }
            }
            Poll::Ready(Some(Err(_))) => {
                this.access.log("error");
                this.access.metrics.stream_closed();
            }
            Poll::Ready(None) if !this.access.logged => {
                this.access.log("complete");
                this.access.metrics.stream_closed();
            }
            _ => {}
        }
        polled
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        if !self.access.logged {
            self.access.log("client_disconnected");
            self.access.metrics.stream_closed();
        }
    }
}

/// Any route but the chat completions: both ways untouched, streamed.
async fn forward(proxy: &Proxy, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let has_body = parts.headers.contains_key(header::CONTENT_LENGTH)
        || parts.headers.contains_key(header::TRANSFER_ENCODING);
    let mut upstream = proxy
        .client
        .request(parts.method, proxy.target(&parts.uri))
        .headers(request_headers(&parts.headers, true));
    if has_body {
        upstream = upstream.body(reqwest::Body::wrap_stream(body.into_data_stream()));
    }
    untouched(upstream).await
}

/// `POST /v1/chat/completions`: forwarded, its answer rewritten.
async fn chat(proxy: &Proxy, request: Request, start: Instant) -> Response {
    let (parts, body) = request.into_parts();
    let too_large = || {
        error_response(
            StatusCode::PAYLOAD_TOO_LARGE,
            &format!(
                "the request body is larger than {} bytes",
                proxy.max_request_bytes
            ),
            "invalid_request_error",
        )
    };
    // A declared length over the limit is refused before any of the body
    // is read.
    let declared = parts
        .headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > proxy.max_request_bytes as u64) {
        return too_large();
    }
    let read = Limited::new(body, proxy.max_request_bytes).collect();
    let bytes = match tokio::time::timeout(proxy.request_body_timeout, read).await {
        Ok(Ok(collected)) => collected.to_bytes(),
        Ok(Err(e)) if e.is::<LengthLimitError>() => return too_large(),
        Ok(Err(e)) => {
            return error_response(
                StatusCode::BAD_REQUEST,
                &format!("cannot read the request body: {e}"),
                "invalid_request_error",
            )
        }
        Err(_) => {
            return error_response(
                StatusCode::REQUEST_TIMEOUT,
                &format!(
                    "the request body did not arrive within {} s",
                    proxy.request_body_timeout.as_secs_f64()
                ),
                "invalid_request_error",
            )
        }
    };
    let request_json = match serde_json::from_slice::<Value>(&bytes) {
        Ok(v) => Some(v),
        // JSON nested deeper than the reader goes (128 levels) could be
        // neither emulated nor read for calls: refused, not passed on
        // silently unread.
        Err(e) if e.to_string().starts_with("recursion limit exceeded") => {
            return error_response(
                StatusCode::BAD_REQUEST,
                "the request body nests JSON deeper than 128 levels, more than the proxy reads",
                "invalid_request_error",
            )
        }
        // Not JSON: the upstream's to refuse.
        Err(_) => None,
    };
    let field = |name: &str| request_json.as_ref().and_then(|r| r.get(name));
    let wants_stream = field("stream").and_then(Value::as_bool).unwrap_or(false);
    let model = field("model").and_then(Value::as_str);
    let (mut format, mut grammar) = proxy.grammar_for(model);
    // Tool calling for a model served without it: the request rewritten,
    // in a format that can be written (`auto` cannot).
    let mut bytes = bytes;
    let mut rewritten = false;
    if let Some(request) = request_json
        .as_ref()
        .filter(|r| proxy.emulates(model) && emulate::wanted(r))
    {
        if format == "auto" {
            if let Ok(g) = proxy.registry.grammar("hermes") {
                (format, grammar) = ("hermes".to_owned(), g);
            }
        }
        let Some(f) = proxy.registry.get(&format) else {
            return error_response(
                StatusCode::BAD_REQUEST,
                &format!("tool calling cannot be emulated in `{format}`"),
                "invalid_request_error",
            );
        };
        match emulate::rewrite(request, f) {
            Ok(body) => {
                bytes = Bytes::from(body.to_string());
                rewritten = true;
            }
            Err(e) => {
                return error_response(
                    StatusCode::BAD_REQUEST,
                    &format!("tool calling cannot be emulated in `{format}`: {e}"),
                    "invalid_request_error",
                )
            }
        }
    }
    let span = Span::current();
    span.record("format", format.as_str());
    span.record("stream", wants_stream);

    let Some(options) = proxy.options_for(request_json.as_ref()) else {
        span.record("parse", "off");
        return pass_through(proxy, &parts, bytes, !rewritten).await;
    };
    span.record(
        "parse",
        if options.admit.max_calls == Some(0) {
            "reasoning"
        } else {
            "calls"
        },
    );
    let tally = Arc::new(Tally::default());
    let config = toolscan_sse::Config::new(grammar)
        .with_options(options)
        .with_stream_arguments(proxy.streams_arguments(model))
        .with_tally(Arc::clone(&tally));

    let response = match proxy
        .client
        .post(proxy.target(&parts.uri))
        // Identity: the rewrite reads the bytes.
        .headers(request_headers(&parts.headers, false))
        .body(bytes)
        .send()
        .await
    {
        Ok(response) => response,
        Err(e) => return unreachable_upstream(e),
    };
    let status = response.status();
    if status.is_server_error() {
        return upstream_failed(response).await;
    }
    let upstream = UpstreamSaid {
        status: Some(status.as_u16()),
        failed: false,
        tally: Some(tally),
    };
    if !status.is_success() {
        // A client error (bad key, bad request): the client's to see.
        let headers = response_headers(response.headers(), false);
        let body = Body::from_stream(response.bytes_stream());
        return tagged(with_parts(status, headers, body), upstream);
    }
    let is_sse = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim_start().starts_with("text/event-stream"));
    let headers = response_headers(response.headers(), true);
    if is_sse {
        relay_stream(proxy, status, headers, response, config, start, upstream).await
    } else {
        rewrite_whole(status, headers, response, &config, &proxy.metrics, upstream).await
    }
}

/// Sends `upstream` and passes its answer on as it comes, streamed.
async fn untouched(upstream: reqwest::RequestBuilder) -> Response {
    match upstream.send().await {
        Ok(response) => {
            let status = response.status();
            let headers = response_headers(response.headers(), false);
            let upstream = UpstreamSaid {
                status: Some(status.as_u16()),
                ..UpstreamSaid::default()
            };
            let body = Body::from_stream(response.bytes_stream());
            tagged(with_parts(status, headers, body), upstream)
        }
        Err(e) => unreachable_upstream(e),
    }
}

/// A chat completion that is not read (no `tools`, `tool_choice: none`,
/// no reasoning separation): forwarded, its answer passed on as it comes.
///
/// `untouched`: the body is the client's own (else its length is
/// reqwest's to set).
async fn pass_through(
    proxy: &Proxy,
    parts: &axum::http::request::Parts,
    body: Bytes,
    untouched_body: bool,
) -> Response {
    let mut headers = request_headers(&parts.headers, true);
    if !untouched_body {
        headers.remove(header::CONTENT_LENGTH);
    }
    let upstream = proxy
        .client
        .post(proxy.target(&parts.uri))
        .headers(headers)
        .body(body);
    untouched(upstream).await
}

/// A streaming answer: rewritten chunk by chunk. Nothing is sent before the
/// first rewritten chunk, so an upstream that fails before it is a `502`.
async fn relay_stream(
    proxy: &Proxy,
    status: StatusCode,
    headers: HeaderMap,
    response: reqwest::Response,
    config: toolscan_sse::Config,
    start: Instant,
    mut upstream: UpstreamSaid,
) -> Response {
    let metrics = proxy.metrics.clone();
    let body = line_guard::LineGuard::new(response.bytes_stream(), proxy.max_sse_line);
    let mut rewritten: RewrittenStream = Box::pin(toolscan_sse::rewrite_stream(body, config));
    let relay = match rewritten.next().await {
        Some(Ok(first)) => Relay::new(Some(first), Some(rewritten), start, metrics),
        Some(Err(e)) => {
            let timed_out =
                matches!(&e, RewriteError::Upstream(e) if e.kind() == io::ErrorKind::TimedOut);
            let message = format!(
                "the upstream failed before its answer began: {}",
                rewrite_error_message(e)
            );
            warn!(%message, "upstream failed");
            upstream.failed = true;
            let status = if timed_out {
                StatusCode::GATEWAY_TIMEOUT
            } else {
                StatusCode::BAD_GATEWAY
            };
            let r = error_response(status, &message, "upstream_error");
            return tagged(r, upstream);
        }
        None => Relay::new(None, None, start, metrics),
    };
    tagged(
        with_parts(status, headers, Body::from_stream(relay)),
        upstream,
    )
}

/// A whole answer: read, rewritten, sent. A body that is not a
/// `chat.completion` is passed on as it came.
async fn rewrite_whole(
    status: StatusCode,
    headers: HeaderMap,
    response: reqwest::Response,
    config: &toolscan_sse::Config,
    metrics: &Metrics,
    mut upstream: UpstreamSaid,
) -> Response {
    let body = match response.bytes().await {
        Ok(body) => body,
        Err(e) => {
            let status = if e.is_timeout() {
                StatusCode::GATEWAY_TIMEOUT
            } else {
                StatusCode::BAD_GATEWAY
            };
            let message = format!(
                "the upstream failed while sending its answer: {}",
                error_chain(&e.without_url())
            );
            warn!(%message, "upstream failed");
            upstream.failed = true;
            let r = error_response(status, &message, "upstream_error");
            return tagged(r, upstream);
        }
    };
    let began = Instant::now();
    let body = match toolscan_sse::rewrite_body(&body, config) {
        Ok(rewritten) => Bytes::from(rewritten),
        Err(e) => {
            warn!(error = ?e, "the answer is not a chat.completion; passed on as is");
            body
        }
    };
    metrics.added(began.elapsed());
    tagged(with_parts(status, headers, Body::from(body)), upstream)
}

type RewrittenStream = Pin<Box<dyn Stream<Item = Result<Bytes, RewriteError<io::Error>>> + Send>>;

/// The rewritten stream on its way to the client: an upstream failure
/// becomes an error event and the end of the body; the end of the stream,
/// whichever way it comes (done, failed, client gone), is logged.
struct Relay {
    first: Option<Bytes>,
    inner: Option<RewrittenStream>,
    span: Span,
    start: Instant,
    bytes: u64,
    metrics: Metrics,
}

impl Relay {
    fn new(
        first: Option<Bytes>,
        inner: Option<RewrittenStream>,
        start: Instant,
        metrics: Metrics,
    ) -> Relay {
        let relay = Relay {
            first,
            inner,
            span: Span::current(),
            start,
            bytes: 0,
            metrics,
        };
        if relay.first.is_none() && relay.inner.is_none() {
            relay.closed("complete");
        }
        relay
    }

    fn closed(&self, outcome: &str) {
        info!(
            parent: &self.span,
            outcome,
            bytes = self.bytes,
            elapsed_ms = elapsed_ms(self.start),
            "stream closed"
        );
    }
}

impl Stream for Relay {
    type Item = Result<Bytes, Infallible>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        if let Some(first) = this.first.take() {
            this.bytes += first.len() as u64;
            return Poll::Ready(Some(Ok(first)));
        }
        let Some(inner) = this.inner.as_mut() else {
            return Poll::Ready(None);
        };
        // The time a poll that finds upstream bytes takes is the time the
        // rewrite holds them: the latency the proxy adds.
        let began = Instant::now();
        match inner.as_mut().poll_next(cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(Some(Ok(chunk))) => {
                this.metrics.added(began.elapsed());
                this.bytes += chunk.len() as u64;
                Poll::Ready(Some(Ok(chunk)))
            }
            Poll::Ready(Some(Err(e))) => {
                // Dropping the upstream stream closes its connection.
                this.inner = None;
                let message = format!(
                    "the upstream failed mid-stream: {}",
                    rewrite_error_message(e)
                );
                warn!(parent: &this.span, %message, "upstream failed");
                this.metrics.upstream_error();
                this.closed("upstream_error");
                Poll::Ready(Some(Ok(error_event(&message))))
            }
            Poll::Ready(None) => {
                this.inner = None;
                this.closed("complete");
                Poll::Ready(None)
            }
        }
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        if self.inner.is_some() || self.first.is_some() {
            // The client went away: dropping `inner` cancels the upstream.
            self.closed("client_disconnected");
        }
    }
}

/// The SSE event OpenAI sends when a stream fails.
fn error_event(message: &str) -> Bytes {
    let event = json!({"error": {"message": message, "type": "upstream_error", "param": null, "code": null}});
    Bytes::from(format!("data: {event}\n\n"))
}

fn rewrite_error_message(e: RewriteError<io::Error>) -> String {
    match e {
        RewriteError::Upstream(e) => error_chain(&e),
        #[allow(unreachable_patterns)]
        other => format!("{other:?}"),
    }
}

/// An error and its sources, `: `-separated.
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut message = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let text = s.to_string();
        if !message.contains(&text) {
            message.push_str(": ");
            message.push_str(&text);
        }
        source = s.source();
    }
    message
}

/// The upstream could not be reached (or did not answer): `502`.
fn unreachable_upstream(e: reqwest::Error) -> Response {
    let timed_out = e.is_timeout();
    let message = format!(
        "cannot reach the upstream: {}",
        error_chain(&e.without_url())
    );
    warn!(%message, "upstream unreachable");
    let upstream = UpstreamSaid {
        failed: true,
        ..UpstreamSaid::default()
    };
    let status = if timed_out {
        StatusCode::GATEWAY_TIMEOUT
    } else {
        StatusCode::BAD_GATEWAY
    };
    tagged(error_response(status, &message, "upstream_error"), upstream)
}

/// The upstream answered 5xx: `502`, with the start of what it said.
async fn upstream_failed(mut response: reqwest::Response) -> Response {
    const KEEP: usize = 2048;
    let status = response.status();
    let mut said = Vec::new();
    while said.len() < KEEP {
        match response.chunk().await {
            Ok(Some(chunk)) => said.extend_from_slice(&chunk),
            _ => break,
        }
    }
    said.truncate(KEEP);
    let said = String::from_utf8_lossy(&said);
    let said = serde_json::from_str::<Value>(&said)
        .ok()
        .and_then(|v| {
            v.pointer("/error/message")
                .and_then(Value::as_str)
                .map(str::to_owned)
        })
        .unwrap_or_else(|| said.trim().to_owned());
    let message = if said.is_empty() {
        format!("the upstream answered {status}")
    } else {
        format!("the upstream answered {status}: {said}")
    };
    warn!(upstream_status = status.as_u16(), "upstream failed");
    let upstream = UpstreamSaid {
        status: Some(status.as_u16()),
        failed: true,
        tally: None,
    };
    tagged(
        error_response(StatusCode::BAD_GATEWAY, &message, "upstream_error"),
        upstream,
    )
}

/// An OpenAI error object.
fn error_response(status: StatusCode, message: &str, kind: &str) -> Response {
    let body = json!({"error": {"message": message, "type": kind, "param": null, "code": null}});
    json_response(status, &body)
}

/// A JSON response.
pub(crate) fn json_response(status: StatusCode, body: &Value) -> Response {
    (
        status,
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        body.to_string(),
    )
        .into_response()
}

fn with_parts(status: StatusCode, headers: HeaderMap, body: Body) -> Response {
    let mut response = Response::new(body);
    *response.status_mut() = status;
    *response.headers_mut() = headers;
    response
}

fn elapsed_ms(start: Instant) -> f64 {
    (start.elapsed().as_secs_f64() * 1e6).round() / 1e3
}

/// Headers that belong to one connection, never forwarded (RFC 9110 §7.6.1).
const HOP_BY_HOP: [HeaderName; 8] = [
    header::CONNECTION,
    HeaderName::from_static("keep-alive"),
    HeaderName::from_static("proxy-connection"),
    header::PROXY_AUTHENTICATE,
    header::PROXY_AUTHORIZATION,
    header::TE,
    header::TRAILER,
    header::TRANSFER_ENCODING,
];

/// The headers of `headers` that go on to the next hop: all but hop-by-hop
/// ones (those listed, those the `Connection` header names, `Upgrade`).
fn end_to_end(headers: &HeaderMap) -> HeaderMap {
    let named: Vec<HeaderName> = headers
        .get_all(header::CONNECTION)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .filter_map(|name| HeaderName::from_bytes(name.trim().as_bytes()).ok())
        .collect();
    let mut out = HeaderMap::with_capacity(headers.len());
    for (name, value) in headers {
        if HOP_BY_HOP.contains(name) || name == header::UPGRADE || named.contains(name) {
            continue;
        }
        out.append(name.clone(), value.clone());
    }
    out
}

/// A request's headers as the upstream gets them: end-to-end ones, less
/// `Host` (the client names the proxy). `untouched`: the body goes as it
/// came (its length too); else the body is re-sent whole (its length is
/// set anew) and asked for uncompressed, since it is read.
fn request_headers(headers: &HeaderMap, untouched: bool) -> HeaderMap {
    let mut out = end_to_end(headers);
    out.remove(header::HOST);
    if !untouched {
        out.remove(header::CONTENT_LENGTH);
        out.insert(
            header::ACCEPT_ENCODING,
            HeaderValue::from_static("identity"),
        );
    }
    out
}

/// A response's headers as the client gets them: end-to-end ones;
/// `rewritten`: less the length and encoding of a body that changes.
fn response_headers(headers: &HeaderMap, rewritten: bool) -> HeaderMap {
    let mut out = end_to_end(headers);
    if rewritten {
        out.remove(header::CONTENT_LENGTH);
        out.remove(header::CONTENT_ENCODING);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn proxy(config: ProxyConfig) -> Proxy {
        Proxy::new(&config).expect("a valid configuration")
    }

    #[test]
    fn the_format_comes_from_the_config_then_the_map_then_the_family_then_auto() {
        let map: HashMap<String, String> =
            [("my-finetune".to_owned(), "mistral".to_owned())].into();
        let by_model = proxy(ProxyConfig::new("http://h:1").with_model_map(map.clone()));
        let name = |p: &Proxy, model: Option<&str>| p.grammar_for(model).0;
        assert_eq!(name(&by_model, Some("my-finetune")), "mistral");
        assert_eq!(name(&by_model, Some("Qwen/Qwen3-8B")), "hermes");
        assert_eq!(name(&by_model, Some("some-org/unknown")), "auto");
        assert_eq!(name(&by_model, None), "auto");
        let auto = proxy(
            ProxyConfig::new("http://h:1")
                .with_format("auto")
                .with_model_map(map.clone()),
        );
        assert_eq!(name(&auto, Some("my-finetune")), "mistral");
        let fixed = proxy(
            ProxyConfig::new("http://h:1")
                .with_format("hermes")
                .with_model_map(map),
        );
        assert_eq!(name(&fixed, Some("my-finetune")), "hermes");
        assert_eq!(name(&fixed, None), "hermes");
    }

    #[test]
    fn only_the_path_and_query_of_a_target_are_kept() {
        let p = proxy(ProxyConfig::new("http://upstream:8000/prefix/"));
        let uri: Uri = "http://elsewhere.invalid/v1/models?a=1".parse().unwrap();
        assert_eq!(p.target(&uri), "http://upstream:8000/prefix/v1/models?a=1");
        let uri: Uri = "//elsewhere.invalid/x"
            .parse()
            .unwrap_or(Uri::from_static("/x"));
        assert!(p.target(&uri).starts_with("http://upstream:8000/prefix/"));
    }

    #[test]
    fn bad_upstreams_are_refused() {
        for url in [
            "",
            "upstream:8000",
            "ftp://h",
            "http://h:1/?q=1",
            "http://h:1/#f",
        ] {
            assert!(
                matches!(
                    ProxyConfig::new(url).validate(),
                    Err(ConfigError::Upstream { .. })
                ),
                "{url}"
            );
        }
    }

    #[test]
    fn hop_by_hop_headers_and_host_stop_here() {
        let mut h = HeaderMap::new();
        h.insert(header::HOST, HeaderValue::from_static("proxy:8080"));
        h.insert(header::AUTHORIZATION, HeaderValue::from_static("Bearer k"));
        h.insert(
            header::CONNECTION,
            HeaderValue::from_static("keep-alive, X-Hop"),
        );
        h.insert("x-hop", HeaderValue::from_static("1"));
        h.insert("keep-alive", HeaderValue::from_static("timeout=5"));
        h.insert(header::TE, HeaderValue::from_static("trailers"));
        h.insert(
            header::PROXY_AUTHORIZATION,
            HeaderValue::from_static("Basic x"),
        );
        h.insert(header::CONTENT_LENGTH, HeaderValue::from_static("12"));
        h.insert(header::ACCEPT_ENCODING, HeaderValue::from_static("gzip"));
        h.append("x-many", HeaderValue::from_static("1"));
        h.append("x-many", HeaderValue::from_static("2"));

        let untouched = request_headers(&h, true);
        let mut names: Vec<&str> = untouched.keys().map(HeaderName::as_str).collect();
        names.sort_unstable();
        assert_eq!(
            names,
            [
                "accept-encoding",
                "authorization",
                "content-length",
                "x-many"
            ]
        );
        assert_eq!(untouched.get_all("x-many").iter().count(), 2);

        let read = request_headers(&h, false);
        assert!(read.get(header::CONTENT_LENGTH).is_none());
        assert_eq!(read[header::ACCEPT_ENCODING], "identity");
        assert_eq!(read[header::AUTHORIZATION], "Bearer k");

        let mut r = HeaderMap::new();
        r.insert(header::CONTENT_LENGTH, HeaderValue::from_static("99"));
        r.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        r.insert(
            header::TRANSFER_ENCODING,
            HeaderValue::from_static("chunked"),
        );
        let out = response_headers(&r, true);
        assert_eq!(out.len(), 1);
        assert_eq!(response_headers(&r, false).len(), 2);
    }

    #[test]
    fn the_error_event_is_openai_s() {
        let event = error_event("boom \"quoted\"");
        let text = std::str::from_utf8(&event).unwrap();
        let data = text
            .strip_prefix("data: ")
            .unwrap()
            .strip_suffix("\n\n")
            .unwrap();
        let v: Value = serde_json::from_str(data).unwrap();
        assert_eq!(v["error"]["message"], "boom \"quoted\"");
        assert_eq!(v["error"]["type"], "upstream_error");
    }
}
