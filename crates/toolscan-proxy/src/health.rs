//! `GET /health` and `GET /ready` on the serving port (unless
//! [`Settings::forward_health`](crate::Settings::forward_health) hands
//! them to the upstream): `/health` is `200 ok` while the proxy runs;
//! `/ready` is `200` when the upstream answers (`GET /v1/models` with any
//! status below 500, within [`READY_TIMEOUT`]), else `503` and why.

use std::sync::Arc;
use std::time::Duration;

use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode};
use axum::response::{IntoResponse, Response};

use crate::errors::error_response;
use crate::state::Proxy;
use crate::upstream::{error_chain, Outgoing};

/// The paths, answered here by default.
pub const HEALTH: &str = "/health";
/// See [`HEALTH`].
pub const READY: &str = "/ready";

/// How long `/ready` waits for the upstream.
pub const READY_TIMEOUT: Duration = Duration::from_secs(5);

/// `/health`: the proxy runs.
pub(crate) async fn health() -> &'static str {
    "ok"
}

/// `/ready`: the upstream answers.
pub(crate) async fn ready(State(proxy): State<Arc<Proxy>>) -> Response {
    let mut probe = Outgoing::new(Method::GET, "/v1/models", HeaderMap::new());
    probe.timeout = Some(READY_TIMEOUT);
    let why = match proxy.client.send(probe).await {
        Ok(r) if !r.status.is_server_error() => return "ready".into_response(),
        Ok(r) => format!("the upstream answered {}", r.status),
        Err(e) => format!("cannot reach the upstream: {}", error_chain(&e)),
    };
    error_response(StatusCode::SERVICE_UNAVAILABLE, &why, "upstream_error")
}
