//! `toolscan bench`'s engine: the head start of early tool dispatch,
//! measured on a live OpenAI-compatible server.
//!
//! toolscan lets a tool start the moment its call closes, long before the
//! completion ends. This crate sends a workload of chat requests with
//! tools to a server (streaming), times every request's stream —
//! sent, first byte, first token, each token, each call's start and
//! *ready*, `finish_reason`, `[DONE]` — and reports the distributions: a
//! terminal table ([`table`]), a JSON document ([`json`]), a
//! self-contained HTML page ([`html`]).
//!
//! Calls are read from the content with toolscan when the server writes
//! them as text, and from `delta.tool_calls` when it sends them natively
//! ([`detect`]); a native call is *ready* when the server sent its last
//! argument delta, a text call when toolscan emitted its end. The **head
//! start** of a call is `[DONE]` − ready: how much sooner a client that
//! dispatches at ready starts the tool than one that waits for the
//! finished message. With a simulated tool time, each request's turn is
//! timed both ways.
//!
//! ```no_run
//! use std::time::Duration;
//! use toolscan_bench::{json, run, table, Endpoint, Plan, Progress, Target, Workload};
//!
//! # async fn go() -> Result<(), Box<dyn std::error::Error>> {
//! let plan = Plan {
//!     targets: vec![Target {
//!         label: "A".into(),
//!         endpoint: Endpoint::parse("http://127.0.0.1:8000/v1")?,
//!         api_key: None,
//!         model: Some("Qwen/Qwen3-8B".into()),
//!     }],
//!     workload: Workload::bundled(),
//!     requests: 20,
//!     concurrency: Some(4),
//!     rate: None,
//!     warmup: 2,
//!     timeout: Duration::from_secs(30),
//!     tool_ms: Some(300.0),
//!     format: None,
//! };
//! let runs = run(&plan, &Progress::stderr()).await?;
//! print!("{}", table::render(&runs));
//! std::fs::write("bench.json", json::to_string(&runs))?;
//! # Ok(()) }
//! ```
//!
//! # The JSON document (`--json FILE`)
//!
//! One object: `{"toolscan_bench": 1, "runs": [RUN, …]}` (one run, or two
//! with `--compare`). Field names are stable; a new version adds fields
//! and never renames one. Times are milliseconds since the request was
//! sent; a moment that never came is `null`.
//!
//! A RUN ([`Run`]): `label` (`A`, `B`), `upstream`, `model`, `format`,
//! `tool_ms`, `concurrency`, `rate`, `duration_s`, `interrupted` (stopped
//! early by Ctrl-C: only the requests finished by then), `requests` (one
//! object per measured request), `summary`.
//!
//! A request ([`RequestRecord`]): `index`, `line` (of the workload),
//! `ok`, `error` (`null` or `{"kind", "message"}`, `kind` one of
//! `connect`, `status`, `not_sse`, `timeout`, `broken`, `upstream`,
//! `unfinished`), `status`, `first_byte_ms`, `ttft_ms`, `tokens`,
//! `token_ms` (each chunk with tokens), `itl_mean_ms`, `tpot_ms`, `calls`,
//! `finish_ms`, `finish_reason`, `done_ms`, `done_marker` (the server sent
//! `[DONE]`), `completion_tokens`, `turn_tools_at_ready_ms`,
//! `turn_tools_at_done_ms`.
//!
//! A call ([`CallRecord`]): `index`, `kind` (`text` or `native`), `name`,
//! `start_ms`, `ready_ms`, `head_start_ms` (`done_ms` − `ready_ms`).
//!
//! The summary ([`Summary`]): `requests`, `ok`, `failed`, `errors` (count
//! by kind), `text_calls`, `native_calls`, `unclosed_calls`,
//! `requests_per_s`, and `metrics`: for each of `first_byte_ms`,
//! `ttft_ms`, `itl_ms`, `tpot_ms`, `call_start_ms`, `call_ready_ms`,
//! `finish_ms`, `done_ms`, `head_start_ms`, `turn_tools_at_ready_ms`,
//! `turn_tools_at_done_ms` that has values, `{"count", "min", "p50",
//! "p90", "p99", "mean", "max"}` ([`MetricStats`], from an HDR histogram
//! with three significant digits). Only successful requests count in the
//! metrics.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod client;
pub mod detect;
mod endpoint;
mod error;
pub mod html;
pub mod json;
mod progress;
mod record;
mod report;
mod run;
pub mod stats;
pub mod table;
pub mod timeline;
mod workload;

pub use endpoint::Endpoint;
pub use error::{ErrorKind, RequestError, SetupError};
pub use progress::Progress;
pub use record::{CallRecord, RequestRecord};
pub use report::Run;
pub use run::{run, run_until, Plan, Target, BY_LINE};
pub use stats::{Metric, MetricStats, Summary};
pub use timeline::{CallKind, CallTiming, Timeline};
pub use workload::{WorkRequest, Workload, BUNDLED};
