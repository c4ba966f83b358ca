//! `toolscan bench`: the head start of early tool dispatch, measured on
//! the user's own OpenAI-compatible server (the work is
//! `toolscan_bench`'s; this file is its options and its output files).

use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::Args;
use toolscan_bench::{html, json, table, Endpoint, Plan, Progress, Run, Target, Workload};

use crate::failure::Failure;

/// Options of `toolscan bench`.
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// The server to measure: its origin (`http://127.0.0.1:8000`), its
    /// `/v1` base URL or its `/v1/chat/completions` URL.
    #[arg(long, value_name = "URL", required_unless_present = "compare_json")]
    pub upstream: Option<String>,

    /// Its API key, sent as `Authorization: Bearer` [default: the
    /// environment's TOOLSCAN_API_KEY, else OPENAI_API_KEY].
    #[arg(long, value_name = "KEY")]
    pub api_key: Option<String>,

    /// The model id sent with every request [default: each line's own
    /// `model`, else the first of the server's /v1/models]. Also picks the
    /// format text calls are read with, when this build knows its family.
    #[arg(long, value_name = "ID")]
    pub model: Option<String>,

    /// The workload: JSON Lines of chat completion requests (`messages`,
    /// `tools`, …), sent in turn; `stream` is set to true [default: a
    /// bundled workload of a few prompts with tools].
    #[arg(long, value_name = "FILE")]
    pub requests: Option<PathBuf>,

    /// How many requests to measure (per server).
    #[arg(long, value_name = "N", default_value_t = 20,
          value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub requests_count: u64,

    /// At most C requests in flight [default: 1, or no limit with
    /// `--rate`].
    #[arg(long, value_name = "C", value_parser = clap::value_parser!(u64).range(1..=100_000))]
    pub concurrency: Option<u64>,

    /// Send R requests a second, at even intervals (open loop), whatever
    /// the answers' pace.
    #[arg(long, value_name = "R", value_parser = positive)]
    pub rate: Option<f64>,

    /// Requests sent first and not measured (per server).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub warmup: u64,

    /// Seconds the server may send nothing (before its answer, or between
    /// two reads of it) before the request counts as failed.
    #[arg(long, value_name = "SECS", default_value_t = 60.0, value_parser = positive)]
    pub timeout: f64,

    /// A simulated tool of MS milliseconds: each request with calls is
    /// also timed as a turn whose tools start at their call's ready, and
    /// at [DONE].
    #[arg(long, value_name = "MS", value_parser = non_negative)]
    pub tool_ms: Option<f64>,

    /// The format text calls in the content are read with (see `toolscan
    /// formats`), or `auto` [default: by the model id, else auto]. Native
    /// `delta.tool_calls` are read whatever the format.
    #[arg(long, value_name = "NAME|auto")]
    pub format: Option<String>,

    /// Write every request's timeline and the summary as JSON.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,

    /// Write a self-contained HTML page: timelines of sample requests and
    /// the distribution of each metric.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,

    /// Write the timeline picture alone, as one SVG file (for a README or
    /// a report).
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,

    /// A second server to run the same workload against, interleaved with
    /// the first (e.g. the same server through `toolscan proxy`); the
    /// outputs show both side by side.
    #[arg(long, value_name = "URL2")]
    pub compare: Option<String>,

    /// Compare two earlier runs' `--json` files, side by side (nothing is
    /// sent).
    #[arg(long, num_args = 2, value_names = ["A.json", "B.json"],
          conflicts_with_all = ["upstream", "compare"])]
    pub compare_json: Option<Vec<PathBuf>>,
}

fn positive(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(x) if x > 0.0 && x.is_finite() => Ok(x),
        _ => Err("expected a positive number".to_owned()),
    }
}

fn non_negative(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(x) if x >= 0.0 && x.is_finite() => Ok(x),
        _ => Err("expected a number, 0 or more".to_owned()),
    }
}

/// Runs `toolscan bench`: the table on stdout, the files asked for.
pub fn run(args: BenchArgs) -> Result<(), Failure> {
    let runs = match &args.compare_json {
        Some(files) => compared(files)?,
        None => measure(&args)?,
    };
    let mut out = table::render(&runs);
    if let Some(path) = &args.json {
        write(path, &json::to_string(&runs))?;
        out.push_str(&format!("JSON: {}\n", path.display()));
    }
    if let Some(path) = &args.html {
        write(path, &html::render(&runs))?;
        out.push_str(&format!("HTML: {}\n", path.display()));
    }
    if let Some(path) = &args.svg {
        write(path, &html::picture(&runs))?;
        out.push_str(&format!("SVG: {}\n", path.display()));
    }
    {
        use std::io::Write;
        let mut stdout = std::io::stdout().lock();
        stdout
            .write_all(out.as_bytes())
            .and_then(|()| stdout.flush())
            .map_err(Failure::Output)?;
    }
    if runs.iter().all(|r| r.interrupted && r.requests.is_empty()) {
        return Err(Failure::Failed(
            "bench: interrupted before any request finished".to_owned(),
        ));
    }
    if args.compare_json.is_none() && runs.iter().all(|r| r.summary.ok == 0) {
        return Err(Failure::Failed(
            "bench: every request failed (see the lines above)".to_owned(),
        ));
    }
    Ok(())
}

fn measure(args: &BenchArgs) -> Result<Vec<Run>, Failure> {
    let workload = match &args.requests {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| Failure::Usage(format!("cannot read `{}`: {e}", path.display())))?;
            Workload::from_jsonl(&text, &path.display().to_string())
        }
        None => Ok(Workload::bundled()),
    }
    .map_err(|e| Failure::Usage(e.to_string()))?;
    let api_key = args
        .api_key
        .clone()
        .or_else(|| std::env::var("TOOLSCAN_API_KEY").ok())
        .or_else(|| std::env::var("OPENAI_API_KEY").ok())
        .filter(|k| !k.is_empty());
    let mut targets = Vec::new();
    let urls = args.upstream.iter().chain(args.compare.iter());
    for (url, label) in urls.zip(["A", "B"]) {
        targets.push(Target {
            label: label.to_owned(),
            endpoint: Endpoint::parse(url).map_err(|e| Failure::Usage(e.to_string()))?,
            api_key: api_key.clone(),
            model: args.model.clone(),
        });
    }
    let plan = Plan {
        targets,
        workload,
        requests: usize::try_from(args.requests_count).unwrap_or(usize::MAX),
        concurrency: args
            .concurrency
            .map(|c| usize::try_from(c).unwrap_or(usize::MAX)),
        rate: args.rate,
        warmup: usize::try_from(args.warmup).unwrap_or(usize::MAX),
        timeout: Duration::from_secs_f64(args.timeout),
        tool_ms: args.tool_ms,
        format: args.format.clone(),
    };
    let runtime = crate::runtime::server_runtime(None)?;
    let progress = Progress::stderr();
    // Ctrl-C ends the run with the requests finished so far.
    let stop = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
        progress.error_line("bench: interrupted: reporting the requests finished so far");
    };
    runtime
        .block_on(toolscan_bench::run_until(&plan, &progress, stop))
        .map_err(|e| Failure::Usage(e.to_string()))
}

/// The first run of each file, labelled A and B.
fn compared(files: &[PathBuf]) -> Result<Vec<Run>, Failure> {
    let mut runs = Vec::new();
    for (path, label) in files.iter().zip(["A", "B"]) {
        let text = std::fs::read_to_string(path)
            .map_err(|e| Failure::Usage(format!("cannot read `{}`: {e}", path.display())))?;
        let mut run = json::from_str(&text, &path.display().to_string())
            .map_err(|e| Failure::Usage(e.to_string()))?
            .remove(0);
        run.label = label.to_owned();
        runs.push(run);
    }
    Ok(runs)
}

fn write(path: &Path, text: &str) -> Result<(), Failure> {
    std::fs::write(path, text)
        .map_err(|e| Failure::Failed(format!("cannot write `{}`: {e}", path.display())))
}
