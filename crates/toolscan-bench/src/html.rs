//! The page of `--html FILE`: one self-contained HTML file (inline CSS and
//! SVG; no script, no external resource) with
//!
//! - the summary table of each run;
//! - a timeline of sample requests (the first [`SAMPLES`] of each run),
//!   one `<g class="request" id="request-RUN-INDEX">` per request: a line
//!   from sent to `[DONE]`, a tick per chunk with tokens, a bar from each
//!   call's start to its ready (class `call text` or `call native`), a
//!   mark at `[DONE]` (class `done`), and, for a failed request, its error
//!   (class `error`);
//! - the distribution of each metric (`<figure class="metric"
//!   id="metric-KEY">`): a histogram per run, share of values per bin,
//!   with the p50 and p99 marked.

use std::fmt::Write as _;

use crate::record::RequestRecord;
use crate::report::Run;
use crate::stats::{Metric, MetricStats};

/// How many requests of a run the timeline shows.
pub const SAMPLES: usize = 24;

const WIDTH: f64 = 960.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 20.0;
const ROW: f64 = 18.0;
const BINS: usize = 40;
const COLORS: [&str; 2] = ["#2f6fdf", "#e0672a"];

/// `s` with `<`, `>`, `&`, `"` and `'` escaped, for text and attributes.
fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

fn f(v: f64) -> String {
    format!("{v:.1}")
}

/// A "nice" step for an axis spanning `span` with about `n` ticks.
fn step(span: f64, n: f64) -> f64 {
    let raw = (span / n).max(1e-9);
    let mag = 10f64.powf(raw.log10().floor());
    let norm = raw / mag;
    let nice = if norm < 1.5 {
        1.0
    } else if norm < 3.5 {
        2.0
    } else if norm < 7.5 {
        5.0
    } else {
        10.0
    };
    nice * mag
}

/// The page of `runs`.
pub fn render(runs: &[Run]) -> String {
    let mut out = String::new();
    out.push_str(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>toolscan bench</title>\n<style>\n",
    );
    out.push_str(CSS);
    out.push_str("</style>\n</head>\n<body>\n<h1>toolscan bench</h1>\n");
    out.push_str(
        "<p class=\"lead\">Each request's stream, timed as it arrived: a tool can start at its \
         call's <em>ready</em>; the <strong>head start</strong> is how long before <code>[DONE]</code> \
         that is. Text calls are ready when toolscan read their end in the content; native \
         calls (<code>delta.tool_calls</code>) when the server sent their last argument delta.</p>\n",
    );
    summary_tables(&mut out, runs);
    out.push_str("<h2>Timelines</h2>\n");
    legend(&mut out);
    let span = span_of(runs);
    for (i, run) in runs.iter().enumerate() {
        timeline(&mut out, run, COLORS[i % COLORS.len()], span);
    }
    out.push_str("<h2>Distributions</h2>\n<div class=\"metrics\">\n");
    for m in Metric::ALL {
        distribution(&mut out, runs, m);
    }
    out.push_str("</div>\n</body>\n</html>\n");
    out
}

/// The last moment of a request that the timeline draws.
fn end_of(r: &RequestRecord) -> f64 {
    let calls = r.calls.iter().map(|c| c.ready_ms.unwrap_or(c.start_ms));
    r.done_ms
        .into_iter()
        .chain(r.token_ms.last().copied())
        .chain(r.first_byte_ms)
        .chain(calls)
        .fold(0.0, f64::max)
}

fn summary_tables(out: &mut String, runs: &[Run]) {
    for (i, run) in runs.iter().enumerate() {
        let s = &run.summary;
        let _ = writeln!(
            out,
            "<section class=\"summary\" id=\"summary-{label}\">\n<h2><span class=\"swatch\" style=\"background:{color}\"></span>{label}: {up}</h2>\n\
             <p>{n} requests, {ok} ok, {failed} failed; model {model}, format {format}; \
             {text} text calls, {native} native calls; {rps:.2} requests/s over {dur:.2} s.</p>",
            label = esc(&run.label),
            color = COLORS[i % COLORS.len()],
            up = esc(&run.upstream),
            n = s.requests,
            ok = s.ok,
            failed = s.failed,
            model = esc(run.model.as_deref().unwrap_or("of each line")),
            format = esc(&run.format),
            text = s.text_calls,
            native = s.native_calls,
            rps = s.requests_per_s,
            dur = run.duration_s,
        );
        out.push_str(
            "<table>\n<thead><tr><th>metric (ms)</th><th>count</th><th>p50</th><th>p90</th>\
             <th>p99</th><th>mean</th><th>max</th></tr></thead>\n<tbody>\n",
        );
        for m in Metric::ALL {
            if let Some(st) = s.get(m) {
                let _ = writeln!(
                    out,
                    "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                    esc(m.label()),
                    st.count,
                    f(st.p50),
                    f(st.p90),
                    f(st.p99),
                    f(st.mean),
                    f(st.max)
                );
            }
        }
        out.push_str("</tbody>\n</table>\n</section>\n");
    }
}

fn legend(out: &mut String) {
    out.push_str(
        "<svg class=\"legend\" width=\"860\" height=\"22\" viewBox=\"0 0 860 22\" role=\"img\" aria-label=\"legend\">\n",
    );
    legend_items(out, 0.0);
    out.push_str("</svg>\n");
}

/// The legend's marks, on a line from `y0`.
fn legend_items(out: &mut String, y0: f64) {
    let items = [
        (
            "<line class=\"life\" x1=\"4\" x2=\"34\" y1=\"11\" y2=\"11\"/>",
            40,
            "request",
        ),
        (
            "<line class=\"tick\" x1=\"115\" x2=\"115\" y1=\"5\" y2=\"17\"/>",
            122,
            "chunk with tokens",
        ),
        (
            "<rect class=\"call text\" x=\"250\" y=\"6\" width=\"30\" height=\"10\"/>",
            286,
            "text call: start → ready",
        ),
        (
            "<rect class=\"call native\" x=\"445\" y=\"6\" width=\"30\" height=\"10\"/>",
            481,
            "native call",
        ),
        (
            "<circle class=\"ready\" cx=\"580\" cy=\"11\" r=\"3.5\"/>",
            588,
            "ready",
        ),
        (
            "<line class=\"done\" x1=\"650\" x2=\"650\" y1=\"3\" y2=\"19\"/>",
            658,
            "[DONE]",
        ),
    ];
    let _ = write!(
        out,
        "<g class=\"legend-items\" transform=\"translate(0 {y0})\">"
    );
    for (mark, x, text) in items {
        let _ = write!(out, "{mark}<text x=\"{x}\" y=\"15\">{}</text>", esc(text));
    }
    out.push_str("</g>\n");
}

/// The height of a run's timeline rows.
fn timeline_height(run: &Run) -> f64 {
    28.0 + ROW * run.requests.len().min(SAMPLES) as f64 + 8.0
}

fn timeline(out: &mut String, run: &Run, color: &str, span: f64) {
    let height = timeline_height(run);
    let _ = writeln!(
        out,
        "<section class=\"run\" id=\"run-{label}\">\n<h3><span class=\"swatch\" style=\"background:{color}\"></span>{label}: {up} — the first {n} of {total} requests</h3>\n\
         <svg class=\"timeline\" width=\"{WIDTH}\" height=\"{height}\" viewBox=\"0 0 {WIDTH} {height}\" role=\"img\" aria-label=\"timelines of {label}\">",
        label = esc(&run.label),
        up = esc(&run.upstream),
        n = run.requests.len().min(SAMPLES),
        total = run.requests.len(),
    );
    timeline_rows(out, run, color, span, 0.0);
    out.push_str("</svg>\n</section>\n");
}

/// The timelines alone, as one standalone SVG file (`--svg FILE`): each
/// run's sample requests under a heading, on one time scale.
pub fn picture(runs: &[Run]) -> String {
    let span = span_of(runs);
    let heading = 24.0;
    let height: f64 = runs
        .iter()
        .map(|r| heading + timeline_height(r))
        .sum::<f64>()
        + 30.0;
    let mut out = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"timeline\" width=\"{WIDTH}\" height=\"{height}\" viewBox=\"0 0 {WIDTH} {height}\" role=\"img\" aria-label=\"toolscan bench timelines\">\n<style>\n{CSS}</style>\n<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>\n"
    );
    legend_items(&mut out, 4.0);
    let mut y = 30.0;
    for (i, run) in runs.iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
        let _ = writeln!(
            out,
            "<rect x=\"4\" y=\"{:.1}\" width=\"10\" height=\"10\" rx=\"2\" style=\"fill:{color}\"/><text class=\"heading\" x=\"20\" y=\"{:.1}\">{}: {} — the first {} of {} requests</text>",
            y + 6.0,
            y + 15.0,
            esc(&run.label),
            esc(&run.upstream),
            run.requests.len().min(SAMPLES),
            run.requests.len()
        );
        y += heading;
        timeline_rows(&mut out, run, color, span, y);
        y += timeline_height(run);
    }
    out.push_str("</svg>\n");
    out
}

/// The common time scale of the runs' timelines (ms).
fn span_of(runs: &[Run]) -> f64 {
    runs.iter()
        .flat_map(|r| r.requests.iter().take(SAMPLES))
        .map(end_of)
        .fold(1.0, f64::max)
}

/// A run's time axis and sample rows, from `y0` down.
fn timeline_rows(out: &mut String, run: &Run, color: &str, span: f64, y0: f64) {
    let samples: Vec<&RequestRecord> = run.requests.iter().take(SAMPLES).collect();
    let top = y0 + 28.0;
    let height = timeline_height(run);
    let scale = (WIDTH - LEFT - RIGHT) / span;
    let x = |ms: f64| LEFT + ms.max(0.0) * scale;
    // The time axis.
    let st = step(span, 8.0);
    let mut t = 0.0;
    while t <= span + 1e-9 {
        let _ = writeln!(
            out,
            "<line class=\"grid\" x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"{ya:.1}\" y2=\"{yb:.1}\"/><text class=\"axis\" x=\"{x:.1}\" y=\"{yt:.1}\">{t} ms</text>",
            x = x(t),
            ya = top - 6.0,
            yb = y0 + height - 4.0,
            yt = y0 + 14.0,
            t = f(t).trim_end_matches(".0"),
        );
        t += st;
    }
    for (row, r) in samples.iter().enumerate() {
        let y = top + ROW * row as f64 + ROW / 2.0;
        let _ = write!(
            out,
            "<g class=\"request{fail}\" id=\"request-{label}-{index}\" data-index=\"{index}\">\
             <title>{tip}</title><text class=\"label\" x=\"{lx}\" y=\"{ty:.1}\">#{index}</text>",
            fail = if r.ok { "" } else { " failed" },
            label = esc(&run.label),
            index = r.index,
            tip = esc(&tooltip(r)),
            lx = LEFT - 8.0,
            ty = y + 4.0,
        );
        let end = end_of(r);
        let _ = write!(
            out,
            "<line class=\"life\" x1=\"{:.1}\" x2=\"{:.1}\" y1=\"{y:.1}\" y2=\"{y:.1}\"/>",
            x(0.0),
            x(end)
        );
        if !r.token_ms.is_empty() {
            let mut d = String::new();
            for &ms in &r.token_ms {
                let _ = write!(d, "M{:.1} {:.1}v8", x(ms), y - 4.0);
            }
            let _ = write!(out, "<path class=\"tick\" d=\"{d}\"/>");
        }
        for c in &r.calls {
            let start = x(c.start_ms);
            let ready = c.ready_ms.map_or(start, x);
            let _ = write!(
                out,
                "<rect class=\"call {kind}\" x=\"{start:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"10\" style=\"fill:{color}\"><title>{} call {} {}: start {} ms, ready {}</title></rect>",
                y - 5.0,
                (ready - start).max(2.0),
                c.kind.name(),
                c.index,
                esc(&c.name),
                f(c.start_ms),
                c.ready_ms.map_or("never".to_owned(), |r| format!("{} ms", f(r))),
                kind = c.kind.name(),
            );
            if c.ready_ms.is_some() {
                let _ = write!(
                    out,
                    "<circle class=\"ready\" cx=\"{ready:.1}\" cy=\"{y:.1}\" r=\"3.5\"/>"
                );
            }
        }
        if let Some(done) = r.done_ms {
            let _ = write!(
                out,
                "<line class=\"done\" x1=\"{d:.1}\" x2=\"{d:.1}\" y1=\"{:.1}\" y2=\"{:.1}\"/>",
                y - 7.0,
                y + 7.0,
                d = x(done)
            );
        }
        if let Some(e) = &r.error {
            let _ = write!(
                out,
                "<text class=\"error\" x=\"{:.1}\" y=\"{:.1}\">✕ {}</text>",
                x(end) + 6.0,
                y + 4.0,
                esc(&e.message)
            );
        }
        out.push_str("</g>\n");
    }
}

fn tooltip(r: &RequestRecord) -> String {
    let mut s = format!("request {} (workload line {})", r.index, r.line);
    let opt = |v: Option<f64>| v.map_or("—".to_owned(), |v| format!("{} ms", f(v)));
    let _ = write!(
        s,
        ": TTFT {}, [DONE] {}, {} chunks",
        opt(r.ttft_ms),
        opt(r.done_ms),
        r.tokens
    );
    for c in &r.calls {
        let _ = write!(
            s,
            "; {} {} ready {}, head start {}",
            c.kind.name(),
            c.name,
            opt(c.ready_ms),
            opt(c.head_start_ms)
        );
    }
    if let Some(e) = &r.error {
        let _ = write!(s, "; error: {}", e.message);
    }
    s
}

fn distribution(out: &mut String, runs: &[Run], m: Metric) {
    let values: Vec<Vec<f64>> = runs.iter().map(|r| m.values(&r.requests)).collect();
    if values.iter().all(Vec::is_empty) {
        return;
    }
    let (w, h, left, bottom) = (440.0, 170.0, 40.0, 24.0);
    let lo = values
        .iter()
        .flatten()
        .copied()
        .fold(f64::INFINITY, f64::min)
        .max(0.0);
    let hi = values.iter().flatten().copied().fold(0.0, f64::max);
    let span = (hi - lo).max(1.0);
    let bin = span / BINS as f64;
    let x = |v: f64| left + (v - lo) / span * (w - left - 10.0);
    let _ = writeln!(
        out,
        "<figure class=\"metric\" id=\"metric-{key}\">\n<figcaption><strong>{label}</strong> — {about}</figcaption>\n\
         <svg width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" role=\"img\" aria-label=\"distribution of {label}\">",
        key = m.key(),
        label = esc(m.label()),
        about = esc(m.about()),
    );
    let plot = h - bottom - 8.0;
    let counts: Vec<Vec<usize>> = values
        .iter()
        .map(|vs| {
            let mut c = vec![0usize; BINS];
            for &v in vs {
                let i = (((v - lo) / bin).floor().max(0.0) as usize).min(BINS - 1);
                c[i] += 1;
            }
            c
        })
        .collect();
    let top_share = counts
        .iter()
        .zip(&values)
        .flat_map(|(c, vs)| c.iter().map(move |&n| n as f64 / vs.len().max(1) as f64))
        .fold(0.0, f64::max)
        .max(1e-9);
    let bar_w = (w - left - 10.0) / BINS as f64;
    for (k, (c, vs)) in counts.iter().zip(&values).enumerate() {
        let color = COLORS[k % COLORS.len()];
        for (i, &n) in c.iter().enumerate() {
            if n == 0 {
                continue;
            }
            let share = n as f64 / vs.len().max(1) as f64;
            let bh = share / top_share * plot;
            let _ = write!(
                out,
                "<rect class=\"bar\" x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{bh:.1}\" style=\"fill:{color}\"><title>{}: {} values in {}–{} ms</title></rect>",
                left + bar_w * i as f64 + 0.5,
                8.0 + plot - bh,
                (bar_w - 1.0).max(1.0),
                esc(&runs[k].label),
                n,
                f(lo + bin * i as f64),
                f(lo + bin * (i + 1) as f64),
            );
        }
        if let Some(s) = MetricStats::of(vs) {
            for (q, v) in [("p50", s.p50), ("p99", s.p99)] {
                let _ = write!(
                    out,
                    "<line class=\"quantile\" x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"8\" y2=\"{:.1}\" style=\"stroke:{color}\"><title>{} {q} {} ms</title></line>",
                    8.0 + plot,
                    esc(&runs[k].label),
                    f(v),
                    x = x(v),
                );
            }
        }
    }
    let _ = write!(
        out,
        "<line class=\"axisline\" x1=\"{left}\" x2=\"{:.1}\" y1=\"{y:.1}\" y2=\"{y:.1}\"/>\
         <text class=\"axis\" x=\"{left}\" y=\"{ty:.1}\">{} ms</text><text class=\"axis end\" x=\"{:.1}\" y=\"{ty:.1}\">{} ms</text>",
        w - 10.0,
        f(lo),
        w - 10.0,
        f(hi),
        y = 8.0 + plot,
        ty = h - 6.0,
    );
    out.push_str("</svg>\n<table class=\"quantiles\"><tr><th></th><th>count</th><th>p50</th><th>p90</th><th>p99</th><th>max</th></tr>\n");
    for (k, vs) in values.iter().enumerate() {
        if let Some(s) = MetricStats::of(vs) {
            let _ = writeln!(
                out,
                "<tr><td><span class=\"swatch\" style=\"background:{}\"></span>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                COLORS[k % COLORS.len()],
                esc(&runs[k].label),
                s.count,
                f(s.p50),
                f(s.p90),
                f(s.p99),
                f(s.max)
            );
        }
    }
    out.push_str("</table>\n</figure>\n");
}

const CSS: &str = "\
body { font: 14px/1.45 system-ui, -apple-system, 'Segoe UI', sans-serif; margin: 24px auto; max-width: 1000px; padding: 0 16px; color: #1d2430; background: #fff; }
h1 { font-size: 22px; margin: 0 0 6px; }
h2 { font-size: 17px; margin: 22px 0 8px; }
h3 { font-size: 15px; margin: 14px 0 6px; }
code { background: #f1f3f6; padding: 0 3px; border-radius: 3px; }
table { border-collapse: collapse; margin: 6px 0; font-variant-numeric: tabular-nums; }
th, td { padding: 2px 10px; text-align: right; border-bottom: 1px solid #e3e6eb; }
th:first-child, td:first-child { text-align: left; }
.swatch { display: inline-block; width: 10px; height: 10px; border-radius: 2px; margin-right: 6px; }
svg text { font-family: system-ui, -apple-system, 'Segoe UI', sans-serif; font-size: 11px; fill: #4a5466; }
svg .label { text-anchor: end; }
svg .axis { text-anchor: middle; }
svg .axis.end { text-anchor: end; }
.legend-items .life, .timeline .life { stroke: #b8bfcc; stroke-width: 1.5; }
.timeline .grid { stroke: #eef0f4; }
.legend-items .tick, .timeline .tick { stroke: #7b8496; stroke-width: 1; fill: none; }
.call { opacity: 0.85; }
.legend-items .call.text { fill: #2f6fdf; }
.legend-items .call.native { fill: #2f6fdf; opacity: 0.45; }
.timeline .call.native { opacity: 0.45; }
.done { stroke: #111; stroke-width: 2; }
.ready { fill: #111; stroke: #fff; stroke-width: 1; }
svg .heading { font-size: 13px; font-weight: 600; fill: #1d2430; }
.failed .life { stroke: #d43c3c; stroke-dasharray: 3 2; }
svg .error { fill: #c02020; }
.metrics { display: grid; grid-template-columns: repeat(auto-fill, minmax(450px, 1fr)); gap: 12px; }
figure.metric { margin: 0; padding: 8px; border: 1px solid #e3e6eb; border-radius: 6px; }
figcaption { font-size: 13px; margin-bottom: 4px; }
.bar { opacity: 0.6; }
.quantile { stroke-width: 1.5; stroke-dasharray: 4 2; }
.axisline { stroke: #9aa3b2; }
.quantiles td, .quantiles th { padding: 1px 8px; font-size: 12px; }
";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_escaped() {
        assert_eq!(
            esc("<a href='x'>&\"</a>"),
            "&lt;a href=&#39;x&#39;&gt;&amp;&quot;&lt;/a&gt;"
        );
    }

    #[test]
    fn axis_steps_are_round() {
        assert_eq!(step(1000.0, 8.0), 100.0);
        assert_eq!(step(1330.0, 8.0), 200.0);
        assert_eq!(step(7.0, 8.0), 1.0);
    }
}
