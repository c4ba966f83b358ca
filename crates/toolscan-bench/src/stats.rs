//! The distributions of a run: one HDR histogram per metric
//! ([`Metric`]), in microseconds with three significant digits, read as
//! p50 / p90 / p99 / mean / max; and the counts (requests, errors by kind,
//! calls by kind).

use std::collections::BTreeMap;

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use crate::record::RequestRecord;
use crate::timeline::CallKind;

/// What a run measures. Each is a key of the summary's `metrics` object
/// ([`Metric::key`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Metric {
    /// The answer's first byte, per request.
    FirstByte,
    /// Time to first token, per request.
    Ttft,
    /// Every gap between two chunks with tokens, over all requests.
    Itl,
    /// Time per output token after the first, per request.
    Tpot,
    /// When each call began, per call.
    CallStart,
    /// When each call was ready, per call.
    CallReady,
    /// The first `finish_reason`, per request.
    Finish,
    /// `[DONE]`, per request (end-to-end latency).
    Done,
    /// `[DONE]` − ready, per call.
    HeadStart,
    /// The turn's end with tools started at ready (`--tool-ms`), per
    /// request with calls.
    TurnAtReady,
    /// The turn's end with tools started at `[DONE]`, per request with
    /// calls.
    TurnAtDone,
}

impl Metric {
    /// Every metric, in the order tables print them.
    pub const ALL: [Metric; 11] = [
        Metric::FirstByte,
        Metric::Ttft,
        Metric::Itl,
        Metric::Tpot,
        Metric::CallStart,
        Metric::CallReady,
        Metric::Finish,
        Metric::Done,
        Metric::HeadStart,
        Metric::TurnAtReady,
        Metric::TurnAtDone,
    ];

    /// Its key in the JSON summary.
    pub fn key(self) -> &'static str {
        match self {
            Metric::FirstByte => "first_byte_ms",
            Metric::Ttft => "ttft_ms",
            Metric::Itl => "itl_ms",
            Metric::Tpot => "tpot_ms",
            Metric::CallStart => "call_start_ms",
            Metric::CallReady => "call_ready_ms",
            Metric::Finish => "finish_ms",
            Metric::Done => "done_ms",
            Metric::HeadStart => "head_start_ms",
            Metric::TurnAtReady => "turn_tools_at_ready_ms",
            Metric::TurnAtDone => "turn_tools_at_done_ms",
        }
    }

    /// Its name in tables and pictures.
    pub fn label(self) -> &'static str {
        match self {
            Metric::FirstByte => "first byte",
            Metric::Ttft => "TTFT",
            Metric::Itl => "ITL",
            Metric::Tpot => "TPOT",
            Metric::CallStart => "call start",
            Metric::CallReady => "call ready",
            Metric::Finish => "finish_reason",
            Metric::Done => "[DONE]",
            Metric::HeadStart => "head start",
            Metric::TurnAtReady => "turn, tools at ready",
            Metric::TurnAtDone => "turn, tools at [DONE]",
        }
    }

    /// What it counts, for a page's captions.
    pub fn about(self) -> &'static str {
        match self {
            Metric::FirstByte => "time to the answer's first byte, per request",
            Metric::Ttft => {
                "time to the first chunk with content, reasoning or a tool-call delta, per request"
            }
            Metric::Itl => "gap between two chunks with tokens, every gap of every request",
            Metric::Tpot => "time per output token after the first, per request",
            Metric::CallStart => "when each call began, per call",
            Metric::CallReady => "when each call was whole and could be dispatched, per call",
            Metric::Finish => "the chunk with the finish_reason, per request",
            Metric::Done => "data: [DONE], per request (end-to-end latency)",
            Metric::HeadStart => {
                "[DONE] − call ready: how much sooner each call could start, per call"
            }
            Metric::TurnAtReady => {
                "the turn's end when each tool starts at its call's ready, per request with calls"
            }
            Metric::TurnAtDone => {
                "the turn's end when the tools start at [DONE], per request with calls"
            }
        }
    }

    /// The metric of this key.
    pub fn from_key(key: &str) -> Option<Metric> {
        Metric::ALL.into_iter().find(|m| m.key() == key)
    }

    /// Its values in `records` (milliseconds): every request's, call's or
    /// gap's, successful requests only.
    pub fn values(self, records: &[RequestRecord]) -> Vec<f64> {
        let ok = records.iter().filter(|r| r.ok);
        let calls = || ok.clone().flat_map(|r| r.calls.iter());
        match self {
            Metric::FirstByte => ok.filter_map(|r| r.first_byte_ms).collect(),
            Metric::Ttft => ok.filter_map(|r| r.ttft_ms).collect(),
            Metric::Itl => ok
                .flat_map(|r| r.token_ms.windows(2).map(|w| w[1] - w[0]))
                .collect(),
            Metric::Tpot => ok.filter_map(|r| r.tpot_ms).collect(),
            Metric::CallStart => calls().map(|c| c.start_ms).collect(),
            Metric::CallReady => calls().filter_map(|c| c.ready_ms).collect(),
            Metric::Finish => ok.filter_map(|r| r.finish_ms).collect(),
            Metric::Done => ok.filter_map(|r| r.done_ms).collect(),
            Metric::HeadStart => calls().filter_map(|c| c.head_start_ms).collect(),
            Metric::TurnAtReady => ok.filter_map(|r| r.turn_tools_at_ready_ms).collect(),
            Metric::TurnAtDone => ok.filter_map(|r| r.turn_tools_at_done_ms).collect(),
        }
    }
}

/// One metric's distribution, in milliseconds.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct MetricStats {
    /// How many values.
    pub count: u64,
    /// The smallest.
    pub min: f64,
    /// The median.
    pub p50: f64,
    /// The 90th percentile.
    pub p90: f64,
    /// The 99th percentile.
    pub p99: f64,
    /// The mean.
    pub mean: f64,
    /// The largest.
    pub max: f64,
}

/// The largest value a histogram holds: an hour, in microseconds (larger
/// ones are counted as an hour).
const MAX_US: u64 = 3_600_000_000;

impl MetricStats {
    /// The distribution of `values` (ms; negative ones count as 0), `None`
    /// when there are none.
    pub fn of(values: &[f64]) -> Option<MetricStats> {
        let mut h = Histogram::<u64>::new_with_bounds(1, MAX_US, 3).ok()?;
        for &v in values {
            let us = (v.max(0.0) * 1000.0).round() as u64;
            h.saturating_record(us.clamp(1, MAX_US));
        }
        if h.is_empty() {
            return None;
        }
        let at = |q: f64| h.value_at_quantile(q) as f64 / 1000.0;
        Some(MetricStats {
            count: h.len(),
            min: h.min() as f64 / 1000.0,
            p50: at(0.5),
            p90: at(0.9),
            p99: at(0.99),
            mean: h.mean() / 1000.0,
            max: h.max() as f64 / 1000.0,
        })
    }
}

/// A run's statistics.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Summary {
    /// Requests measured.
    pub requests: usize,
    /// Of which succeeded.
    pub ok: usize,
    /// Of which failed.
    pub failed: usize,
    /// Failures by [`crate::ErrorKind`] name.
    pub errors: BTreeMap<String, usize>,
    /// Calls read from the content (successful requests).
    pub text_calls: usize,
    /// Calls sent as `delta.tool_calls` (successful requests).
    pub native_calls: usize,
    /// Text calls that began but never closed.
    pub unclosed_calls: usize,
    /// Successful requests a second over the run.
    pub requests_per_s: f64,
    /// Each metric's distribution, by [`Metric::key`] (absent: no value).
    pub metrics: BTreeMap<String, MetricStats>,
}

impl Summary {
    /// The statistics of `records`, a run of `duration_s` seconds.
    pub fn of(records: &[RequestRecord], duration_s: f64) -> Summary {
        let ok = records.iter().filter(|r| r.ok).count();
        let mut errors = BTreeMap::new();
        for e in records.iter().filter_map(|r| r.error.as_ref()) {
            *errors.entry(e.kind.name().to_owned()).or_insert(0) += 1;
        }
        let calls = || records.iter().filter(|r| r.ok).flat_map(|r| r.calls.iter());
        let metrics = Metric::ALL
            .into_iter()
            .filter_map(|m| Some((m.key().to_owned(), MetricStats::of(&m.values(records))?)))
            .collect();
        Summary {
            requests: records.len(),
            ok,
            failed: records.len() - ok,
            errors,
            text_calls: calls().filter(|c| c.kind == CallKind::Text).count(),
            native_calls: calls().filter(|c| c.kind == CallKind::Native).count(),
            unclosed_calls: calls().filter(|c| c.ready_ms.is_none()).count(),
            requests_per_s: if duration_s > 0.0 {
                ok as f64 / duration_s
            } else {
                0.0
            },
            metrics,
        }
    }

    /// One metric's distribution.
    pub fn get(&self, m: Metric) -> Option<&MetricStats> {
        self.metrics.get(m.key())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_of_a_known_distribution() {
        let values: Vec<f64> = (1..=100).map(f64::from).collect();
        let s = MetricStats::of(&values).unwrap();
        assert_eq!(s.count, 100);
        // Three significant digits: within 0.1%.
        for (got, want) in [
            (s.p50, 50.0),
            (s.p90, 90.0),
            (s.p99, 99.0),
            (s.max, 100.0),
            (s.min, 1.0),
        ] {
            assert!((got - want).abs() <= want * 0.001, "{got} vs {want}");
        }
        assert!((s.mean - 50.5).abs() < 0.1);
        assert!(MetricStats::of(&[]).is_none());
    }
}
