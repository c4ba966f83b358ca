//! The terminal table: one row per metric with values, p50 / p90 / p99 /
//! mean / max in milliseconds; with two runs, a row per run and metric and
//! the change of the median. Under it, the counts and what "call ready"
//! meant for the calls seen.

use std::fmt::Write as _;

use crate::report::Run;
use crate::stats::{Metric, MetricStats, Summary};

/// A number of milliseconds, in a width of 9.
fn num(v: f64) -> String {
    if v.abs() >= 10_000.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

/// The table of `runs` (one, or two side by side), lines ending in `\n`.
pub fn render(runs: &[Run]) -> String {
    let mut out = String::new();
    let two = runs.len() > 1;
    let head = if two {
        format!(
            "{:<22} {:>3} {:>6} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}\n",
            "metric (ms)", "run", "count", "p50", "p90", "p99", "mean", "max", "Δp50"
        )
    } else {
        format!(
            "{:<22} {:>6} {:>9} {:>9} {:>9} {:>9} {:>9}\n",
            "metric (ms)", "count", "p50", "p90", "p99", "mean", "max"
        )
    };
    out.push_str(&head);
    out.push_str(&"-".repeat(head.trim_end().chars().count()));
    out.push('\n');
    if runs.iter().all(|r| r.summary.metrics.is_empty()) {
        out.push_str("(no request succeeded: nothing measured)\n");
    }
    for m in Metric::ALL {
        let rows: Vec<Option<&MetricStats>> = runs.iter().map(|r| r.summary.get(m)).collect();
        if rows.iter().all(Option::is_none) {
            continue;
        }
        let base = rows.first().copied().flatten();
        for (i, (run, s)) in runs.iter().zip(&rows).enumerate() {
            let name = if i == 0 { m.label() } else { "" };
            let mut line = format!("{name:<22}");
            if two {
                let _ = write!(line, " {:>3}", run.label);
            }
            match s {
                Some(s) => {
                    let _ = write!(
                        line,
                        " {:>6} {:>9} {:>9} {:>9} {:>9} {:>9}",
                        s.count,
                        num(s.p50),
                        num(s.p90),
                        num(s.p99),
                        num(s.mean),
                        num(s.max)
                    );
                    if let (true, Some(b)) = (two && i > 0, base) {
                        let _ = write!(line, " {:>+9.1}", s.p50 - b.p50);
                    }
                }
                None => {
                    let _ = write!(line, " {:>6}", 0);
                }
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
    }
    out.push('\n');
    for run in runs {
        out.push_str(&counts(run, two));
    }
    out
}

/// The counts of a run, and what its calls' "ready" means.
fn counts(run: &Run, two: bool) -> String {
    let s: &Summary = &run.summary;
    let mut out = String::new();
    let who = if two {
        format!("{}: ", run.label)
    } else {
        String::new()
    };
    let _ = write!(
        out,
        "{who}{} requests to {} (model {}, format {}), {} ok, {} failed",
        s.requests,
        run.upstream,
        run.model.as_deref().unwrap_or("of each line"),
        run.format,
        s.ok,
        s.failed
    );
    if !s.errors.is_empty() {
        let kinds: Vec<String> = s.errors.iter().map(|(k, n)| format!("{n} {k}")).collect();
        let _ = write!(out, " ({})", kinds.join(", "));
    }
    let _ = writeln!(
        out,
        "; {:.2} requests/s over {:.2} s.",
        s.requests_per_s, run.duration_s
    );
    if run.interrupted {
        let _ = writeln!(
            out,
            "{who}interrupted: the requests finished by then only; those in flight were dropped."
        );
    }
    let _ = write!(
        out,
        "{who}calls: {} text, {} native",
        s.text_calls, s.native_calls
    );
    if s.unclosed_calls > 0 {
        let _ = write!(out, ", {} never closed", s.unclosed_calls);
    }
    out.push_str(".\n");
    if s.text_calls > 0 {
        let _ = writeln!(
            out,
            "{who}text calls: \"call ready\" is when toolscan read the call's end in the content."
        );
    }
    if s.native_calls > 0 {
        let _ = writeln!(
            out,
            "{who}native calls (delta.tool_calls): \"call ready\" is when the server sent the call's last argument delta."
        );
    }
    if let (Some(h), Some(d)) = (s.get(Metric::HeadStart), s.get(Metric::Done)) {
        let _ = writeln!(
            out,
            "{who}head start: p50 {} ms of a p50 {} ms stream: a tool dispatched at ready starts that much before [DONE].",
            num(h.p50),
            num(d.p50)
        );
    }
    if let (Some(tool), Some(a), Some(b)) = (
        run.tool_ms,
        s.get(Metric::TurnAtReady),
        s.get(Metric::TurnAtDone),
    ) {
        let _ = writeln!(
            out,
            "{who}with a {} ms tool: the turn ends at p50 {} ms when tools start at ready, {} ms when they start at [DONE] ({} ms sooner).",
            num(tool),
            num(a.p50),
            num(b.p50),
            num(b.p50 - a.p50)
        );
    }
    out
}
