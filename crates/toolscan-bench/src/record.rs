//! A finished request, as `--json` writes it ([`RequestRecord`]), and a
//! run of them against one server ([`Run`]). Times are milliseconds since
//! the request was sent, as JSON numbers (three decimals: microseconds);
//! a moment that never came is `null`.

use serde::{Deserialize, Serialize};

use crate::error::RequestError;
use crate::timeline::{CallKind, Micros, Timeline};

/// One request of a run. The field names are stable (see the crate's
/// documentation for each).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RequestRecord {
    /// Its place in the run, in the order sent (from 0).
    pub index: usize,
    /// The workload line it was (from 1).
    pub line: usize,
    /// No error: the stream ended with `[DONE]` (or cleanly after a
    /// `finish_reason`).
    pub ok: bool,
    /// Why it failed.
    pub error: Option<RequestError>,
    /// The HTTP status.
    pub status: Option<u16>,
    /// The first byte of the body.
    pub first_byte_ms: Option<f64>,
    /// Time to first token: the first chunk with content, reasoning or a
    /// tool-call delta.
    pub ttft_ms: Option<f64>,
    /// How many chunks carried tokens.
    pub tokens: usize,
    /// When each of them arrived.
    pub token_ms: Vec<f64>,
    /// The mean gap between two of them (inter-token latency).
    pub itl_mean_ms: Option<f64>,
    /// Time per output token after the first: (last − first) ÷ (tokens −
    /// 1), tokens being `completion_tokens` when the server sent usage,
    /// else the chunks.
    pub tpot_ms: Option<f64>,
    /// The calls, in the order they began.
    pub calls: Vec<CallRecord>,
    /// The chunk with the first `finish_reason`.
    pub finish_ms: Option<f64>,
    /// That `finish_reason`.
    pub finish_reason: Option<String>,
    /// `data: [DONE]` (or the body's end, see `done_marker`).
    pub done_ms: Option<f64>,
    /// Whether the server sent `[DONE]`.
    pub done_marker: bool,
    /// `usage.completion_tokens`, if sent.
    pub completion_tokens: Option<u64>,
    /// With `--tool-ms`, a request with calls: when the turn is over if
    /// each tool starts at its call's ready and takes the simulated time
    /// (the later of `[DONE]` and the last tool's end).
    pub turn_tools_at_ready_ms: Option<f64>,
    /// The same if the tools start only at `[DONE]` (what clients that act
    /// on the finished message do): `[DONE]` + the tool time.
    pub turn_tools_at_done_ms: Option<f64>,
}

/// One call of a request.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CallRecord {
    /// Its index among its kind's calls.
    pub index: usize,
    /// `text` (read by toolscan from the content) or `native`
    /// (`delta.tool_calls`).
    pub kind: CallKind,
    /// The tool's name.
    pub name: String,
    /// When it began.
    pub start_ms: f64,
    /// When it was whole: for a text call, when toolscan emitted its end;
    /// for a native call, when the server sent its last argument delta.
    /// `null`: a text call that never closed.
    pub ready_ms: Option<f64>,
    /// `done_ms` − `ready_ms`: how long before the end of the stream the
    /// call could have been dispatched.
    pub head_start_ms: Option<f64>,
}

/// Microseconds as milliseconds.
pub(crate) fn ms(us: Micros) -> f64 {
    us as f64 / 1000.0
}

/// Milliseconds rounded to the microsecond (what JSON shows: `350.792`,
/// not `350.79200000000003`).
fn round(ms: f64) -> f64 {
    (ms * 1000.0).round() / 1000.0
}

impl RequestRecord {
    /// The record of a timeline; `tool_ms`: the simulated tool time.
    pub fn of(index: usize, line: usize, t: Timeline, tool_ms: Option<f64>) -> RequestRecord {
        let done = t.done;
        let calls: Vec<CallRecord> = t
            .calls
            .iter()
            .map(|c| CallRecord {
                index: c.index,
                kind: c.kind,
                name: c.name.clone(),
                start_ms: ms(c.start),
                ready_ms: c.ready.map(ms),
                head_start_ms: match (done, c.ready) {
                    (Some(d), Some(r)) => Some(ms(d.saturating_sub(r))),
                    _ => None,
                },
            })
            .collect();
        let gaps: Vec<Micros> = t
            .tokens
            .windows(2)
            .map(|w| w[1].saturating_sub(w[0]))
            .collect();
        let itl_mean_ms =
            (!gaps.is_empty()).then(|| round(ms(gaps.iter().sum::<Micros>()) / gaps.len() as f64));
        let tpot_ms = match (t.tokens.first(), t.tokens.last()) {
            (Some(&first), Some(&last)) => {
                let n = t
                    .completion_tokens
                    .map_or(t.tokens.len() as u64, |n| n.max(1));
                (n > 1).then(|| round(ms(last.saturating_sub(first)) / (n - 1) as f64))
            }
            _ => None,
        };
        let (at_ready, at_done) = match (tool_ms, done) {
            (Some(tool), Some(d)) if !calls.is_empty() => {
                let d = ms(d);
                let last_tool = calls
                    .iter()
                    .map(|c| c.ready_ms.unwrap_or(d) + tool)
                    .fold(d, f64::max);
                (Some(round(last_tool)), Some(round(d + tool)))
            }
            _ => (None, None),
        };
        RequestRecord {
            index,
            line,
            ok: t.error.is_none(),
            error: t.error.clone(),
            status: t.status,
            first_byte_ms: t.first_byte.map(ms),
            ttft_ms: t.ttft().map(ms),
            tokens: t.tokens.len(),
            token_ms: t.tokens.iter().map(|&u| ms(u)).collect(),
            itl_mean_ms,
            tpot_ms,
            calls,
            finish_ms: t.finish.map(ms),
            finish_reason: t.finish_reason.clone(),
            done_ms: done.map(ms),
            done_marker: t.done_marker,
            completion_tokens: t.completion_tokens,
            turn_tools_at_ready_ms: at_ready,
            turn_tools_at_done_ms: at_done,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timeline::CallTiming;

    #[test]
    fn head_start_and_turns_from_the_moments() {
        let t = Timeline {
            status: Some(200),
            first_byte: Some(1_000),
            tokens: vec![10_000, 20_000, 30_000, 40_000],
            calls: vec![CallTiming {
                index: 0,
                kind: CallKind::Text,
                name: "f".into(),
                start: 20_000,
                ready: Some(30_000),
            }],
            finish: Some(90_000),
            finish_reason: Some("tool_calls".into()),
            done: Some(100_000),
            done_marker: true,
            ..Timeline::default()
        };
        let r = RequestRecord::of(0, 1, t, Some(50.0));
        assert!(r.ok);
        assert_eq!(r.ttft_ms, Some(10.0));
        assert_eq!(r.itl_mean_ms, Some(10.0));
        assert_eq!(r.tpot_ms, Some(10.0));
        assert_eq!(r.calls[0].head_start_ms, Some(70.0));
        // The tool ends at 80 ms, before [DONE]: the turn is [DONE].
        assert_eq!(r.turn_tools_at_ready_ms, Some(100.0));
        assert_eq!(r.turn_tools_at_done_ms, Some(150.0));
    }
}
