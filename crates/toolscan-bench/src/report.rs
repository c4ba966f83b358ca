//! A run's report: the run against one server as the outputs and the
//! JSON file hold it — its settings, its requests and their summary.

use serde::{Deserialize, Serialize};

use crate::record::RequestRecord;
use crate::stats::Summary;

/// A run against one server: its settings, its requests and their
/// summary.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Run {
    /// `A`, or `B` for the `--compare` server.
    pub label: String,
    /// The server's URL as given.
    pub upstream: String,
    /// The model sent (`null`: each line's own).
    pub model: Option<String>,
    /// The format text calls were read with (`auto`, `hermes`, …), or
    /// [`crate::BY_LINE`]: each request's by the model its line names.
    pub format: String,
    /// The simulated tool time, if any.
    pub tool_ms: Option<f64>,
    /// The concurrency limit, if any.
    pub concurrency: Option<usize>,
    /// The arrival rate, requests a second, if any.
    pub rate: Option<f64>,
    /// Seconds from the first request sent to the last one finished.
    pub duration_s: f64,
    /// Whether the run was stopped early (Ctrl-C): `requests` holds the
    /// requests finished by then.
    #[serde(default)]
    pub interrupted: bool,
    /// The measured requests (warm-up requests are not kept).
    pub requests: Vec<RequestRecord>,
    /// Their statistics ([`Summary::of`]; recomputed when a file is read).
    pub summary: Summary,
}
