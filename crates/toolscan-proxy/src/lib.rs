//! An OpenAI-compatible HTTP proxy that turns the text tool calls of the
//! upstream's completions into `tool_calls`.
//!
//! Put it between an OpenAI client and a server whose completions carry
//! tool calls as text (`<tool_call>{…}</tool_call>`, `[TOOL_CALLS]…`):
//!
//! - `POST /v1/chat/completions` is forwarded to the upstream, and its
//!   answer rewritten by [`toolscan_sse`]: streaming (`"stream": true`,
//!   SSE) chunk by chunk as it arrives, whole answers at once. The format
//!   is [`Settings::format`], or picked per request from its `model`
//!   ([`Settings::routes`] and [`Settings::model_map`], then the
//!   model families toolscan knows, then `auto`); the request's `tools`
//!   make the parser typed.
//! - Calls are read only when the request asks for them, as vLLM does: a
//!   request without `tools`, or with `"tool_choice": "none"`, gets the
//!   content as written (unless [`ModelSettings::parse_always`]);
//!   `"parallel_tool_calls": false` lets one call through, a named
//!   `tool_choice` only that function's calls.
//! - Tool calling for models served without it
//!   ([`ModelSettings::emulate_tools`], per model in the model map): a
//!   request's `tools` become the format's manifest in the system message,
//!   the history's calls and results become text, and the answer is read
//!   back into `tool_calls` as above.
//! - One access line per request (target `toolscan_proxy::access`: status,
//!   upstream status, bytes, latency, calls, diagnostics); counters for
//!   Prometheus with [`Metrics`].
//! - Timeouts and bounds, each with its flag and a default: on what the
//!   upstream sends, [`Settings::max_response_bytes`] (a whole answer,
//!   64 MiB), [`Settings::max_sse_line`] and [`Settings::max_sse_event`]
//!   (an SSE line, an SSE event of many `data:` lines: 16 MiB each),
//!   [`Settings::max_choices`] (distinct choices, each with a parser of
//!   its own: 128), [`Settings::upstream_idle_timeout`] — beyond one, a
//!   `502` (`504` for the timeout) before the answer began, else an SSE
//!   error event, and a log line; on what clients send,
//!   [`Settings::max_request_bytes`] (a larger `Content-Length` is refused
//!   before the body is read), [`Settings::request_body_timeout`],
//!   [`Settings::header_read_timeout`] (a request's headers, and a
//!   keep-alive connection's idle time), [`Settings::max_connections`]
//!   (one more is a `503`); [`Settings::shutdown_grace`].
//! - Paths are normalised before routing: escaped unreserved characters
//!   decoded (`/v1/chat/%63ompletions` is the chat path), dot segments
//!   (`/../`, `%2e%2e`) refused with `400`, so that no request escapes the
//!   upstream's path prefix or reaches a route read here unread; `CONNECT`
//!   is `405`, `*` is for `OPTIONS` only.
//! - A user and password in the upstream's URL are printed as `***`.
//! - An answer the proxy reads is asked for as `identity`; an upstream
//!   that compresses it anyway gets the client a `502` saying so (it is
//!   not decoded).
//! - Every other route is forwarded untouched, both ways, streamed.
//! - Headers pass through (`Authorization` too) except hop-by-hop ones and
//!   `Host`; headers are never logged, nor query strings: the request
//!   span holds the method, the path, the status and the duration.
//! - Requests go to the configured upstream only: an absolute-form request
//!   target (`GET http://elsewhere/…`) keeps only its path and query,
//!   redirects are handed to the client rather than followed, and
//!   environment proxy settings are ignored.
//! - Call ids minted for calls that carry none are random per response
//!   ([`IdMint::Random`](toolscan_core::IdMint::Random)), so the turns of one conversation never repeat
//!   an id.
//! - An upstream that cannot be reached, answers 5xx, or fails before the
//!   first byte of the rewritten answer gives a `502` with an OpenAI error
//!   object; one that fails mid-stream gives the client an SSE
//!   `data: {"error": {"message": …, "type": "upstream_error"}}` event and
//!   a close without `[DONE]`, as OpenAI does.
//! - A client that disconnects drops its response body, and with it the
//!   upstream response: the upstream request is cancelled, also before
//!   the answer began. A client that only half-closes after its request
//!   (the same FIN on TCP) still gets its answer: an HTTP/1.1 client's
//!   connection then gets an interim `100 Continue`, which a closed socket
//!   answers with a reset (see `client_io`).
//! - `POST /v1/responses`, the Responses API, is served over the
//!   upstream's chat completions ([`Settings::responses`],
//!   [`ResponsesMode::Translate`]): the request translated into a chat
//!   request, its answer read as above and translated into output items
//!   (`message`, `function_call`, `reasoning`) or the Responses event
//!   stream; a built-in tool is a `400` naming it;
//!   `previous_response_id` needs [`Settings::responses_store`].
//!   [`ResponsesMode::Passthrough`] forwards it to an upstream that serves
//!   it and rewrites the text calls of its answer.
//! - `GET /health` (`200` while the proxy runs) and `GET /ready` (`200`
//!   once the upstream answers) are answered here, on the serving port:
//!   see [`health`]. An upstream that serves its own (vLLM's `/health`)
//!   is reached through them instead with [`Settings::forward_health`].
//!
//! [`serve`] runs it until a shutdown future resolves ([`shutdown_signal`]:
//! SIGINT or SIGTERM), letting requests in flight finish within the grace
//! period; streams still open after it get an SSE error event, and their
//! access line the outcome `shutdown`.
//!
//! The code, one concern per module: `settings` ([`Settings`]: the
//! library's configuration, the command line's flags and variables, the
//! per-model [`Route`]s), `state` (the settings resolved once), the
//! router here (`.route()` per endpoint read, `.fallback(forward)`),
//! `access` (the access line and metrics, a layer; `woken`: its streamed
//! body polled again only once it woke), `chat` (the chat
//! completions handler, and the layer that reads its body), `emulate`,
//! `relay` (the rewritten answer on its way out), `line_guard`, `forward`
//! (the pass-through), `headers`, `errors`, `path` (the normalising
//! layer), [`health`], `serve` (the accept loop: hyper's HTTP/1 server)
//! and `client_io` (a client connection, and whether its client left).
//!
//! The [`replay`] module is a small upstream that plays recorded
//! completions back, for tests, demos and load measurements (the
//! `toolscan-replay` binary serves it).
#![forbid(unsafe_code)]
#![warn(missing_docs)]

use std::sync::Arc;

use axum::extract::DefaultBodyLimit;
use axum::handler::Handler as _;
use axum::http::StatusCode;
use axum::middleware::from_fn_with_state;
use axum::routing::{get, post};
use axum::Router;
use tracing::info;

mod access;
mod chat;
mod client_io;
mod config_error;
mod cut;
mod drain;
mod emulate;
mod errors;
mod forward;
mod headers;
pub mod health;
mod idle;
mod line_guard;
mod metrics;
mod path;
mod redact;
mod relay;
pub mod replay;
mod responses;
mod responses_route;
mod route;
mod serve;
mod settings;
mod state;
mod upstream;
mod woken;

pub use config_error::ConfigError;
pub use metrics::Metrics;
pub use route::Route;
pub use serve::{serve, shutdown_signal};
pub use settings::{ModelSettings, ProxyConfig, ResponsesMode, Settings};

use state::Proxy;

/// The path whose answers are rewritten.
pub const CHAT_COMPLETIONS: &str = "/v1/chat/completions";

/// The Responses API's path, served over [`CHAT_COMPLETIONS`]
/// ([`Settings::responses`]).
pub const RESPONSES: &str = "/v1/responses";

/// The proxy's router: `/v1/chat/completions` rewritten, everything else
/// forwarded untouched. A configuration that does not
/// [validate](Settings::validate) gives a router that answers every
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
pub fn router(config: Settings) -> Router {
    match try_router(config) {
        Ok(router) => router,
        Err(e) => {
            tracing::error!(error = %e, "the proxy is misconfigured; every request gets 500");
            let message = format!("proxy misconfigured: {e}");
            Router::new().fallback(move || {
                let message = message.clone();
                async move {
                    let status = StatusCode::INTERNAL_SERVER_ERROR;
                    errors::error_response(status, &message, "server_error")
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
pub fn try_router(config: Settings) -> Result<Router, ConfigError> {
    build(config).map(|(app, _)| app)
}

/// The router, and the token that cuts its open streams (see [`serve`]).
fn build(config: Settings) -> Result<(Router, cut::Cut), ConfigError> {
    let proxy = Arc::new(Proxy::new(&config)?);
    // Said once per router (`validate` builds a `Proxy` too, silently).
    if proxy.api_base {
        let upstream = redact::redact(&config.upstream);
        info!(%upstream, "the upstream's `/v1` is its API base: requests keep their own `/v1/…` path");
    }
    let cut = proxy.cut.clone();
    Ok((app(proxy), cut))
}

/// The routes: one per endpoint the proxy reads, the rest forwarded; the
/// path normalised before routing; the access line around them all.
fn app(proxy: Arc<Proxy>) -> Router {
    // The body is read (and bounded) by `read_body`; the handler's `Bytes`
    // take it whole.
    let chat = chat::chat
        .layer(DefaultBodyLimit::disable())
        .layer(from_fn_with_state(Arc::clone(&proxy), chat::read_body));
    let mut routes = Router::new()
        // Other methods on the path go to the upstream, as any route does.
        .route(CHAT_COMPLETIONS, post(chat).fallback(forward::forward));
    let read = || from_fn_with_state(Arc::clone(&proxy), chat::read_body);
    match proxy.settings.responses {
        ResponsesMode::Translate => {
            let handler = responses_route::responses
                .layer(DefaultBodyLimit::disable())
                .layer(read());
            routes = routes.route(RESPONSES, post(handler).fallback(forward::forward));
        }
        ResponsesMode::Passthrough => {
            let handler = responses_route::passthrough
                .layer(DefaultBodyLimit::disable())
                .layer(read());
            routes = routes.route(RESPONSES, post(handler).fallback(forward::forward));
        }
        ResponsesMode::Off => {}
    }
    if !proxy.settings.forward_health {
        routes = routes
            .route(health::HEALTH, get(health::health))
            .route(health::READY, get(health::ready));
    }
    let routes = routes
        .fallback(forward::forward)
        .with_state(Arc::clone(&proxy));
    // Layers run outside in: the access line, then the path, then routing.
    Router::new()
        .fallback_service(routes)
        .layer(axum::middleware::from_fn(path::normalise))
        .layer(from_fn_with_state(proxy, access::access))
}
