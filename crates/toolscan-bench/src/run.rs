//! A run: the plan ([`Plan`]: the servers, the workload, how many
//! requests, at what concurrency or rate), warm-up first, then the
//! measured requests, each timed by [`crate::client`]; with two servers
//! (`--compare`) the same workload goes to both, interleaved (request
//! `i` to A then B, `i + 1` to B then A), under one concurrency limit.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::future::{FusedFuture, FutureExt};

use serde_json::Value;
use tokio::sync::Semaphore;
use tokio::task::JoinSet;
use toolscan_core::{format_for_model, Grammar, Options, Registry};

use crate::client::Sender;
use crate::detect::Detector;
use crate::endpoint::Endpoint;
use crate::error::SetupError;
use crate::progress::Progress;
use crate::record::RequestRecord;
use crate::report::Run;
use crate::stats::Summary;
use crate::timeline::Timeline;
use crate::workload::Workload;

/// A server to measure.
#[derive(Clone, Debug)]
pub struct Target {
    /// `A`, `B`: how outputs name it.
    pub label: String,
    /// Where it is.
    pub endpoint: Endpoint,
    /// Its API key.
    pub api_key: Option<String>,
    /// The model to ask for (`None`: each line's own, else the first of
    /// the server's `/v1/models`).
    pub model: Option<String>,
}

/// What a run does.
#[derive(Clone, Debug)]
pub struct Plan {
    /// One server, or two to compare.
    pub targets: Vec<Target>,
    /// The requests.
    pub workload: Workload,
    /// How many measured requests per server.
    pub requests: usize,
    /// At most this many requests in flight (`None` with a rate: no limit;
    /// with neither: 1).
    pub concurrency: Option<usize>,
    /// Requests a second, sent at even intervals (`None`: as fast as the
    /// concurrency allows).
    pub rate: Option<f64>,
    /// Requests sent first and not measured, per server.
    pub warmup: usize,
    /// The idle limit of a request.
    pub timeout: Duration,
    /// The simulated tool time for the turn metrics.
    pub tool_ms: Option<f64>,
    /// The format text calls are read with (a name or `auto`); `None`: by
    /// the model's id when known, else `auto`.
    pub format: Option<String>,
}

/// One server, set up.
struct Ready {
    target: Target,
    /// The model resolved (when the server was asked).
    model: Option<String>,
    /// The format's name, or [`BY_LINE`].
    format: String,
    /// `None`: each request's by its line's model.
    grammar: Option<Arc<Grammar>>,
}

/// The `format` of a run whose lines name their own models and no format
/// was given: each request's text calls are read in its model's format.
pub const BY_LINE: &str = "by each line's model";

/// The format a model id writes, when this build has it; else `auto`.
fn format_of(model: Option<&str>, registry: &Registry) -> String {
    model
        .and_then(format_for_model)
        .filter(|f| registry.get(f).is_some())
        .unwrap_or("auto")
        .to_owned()
}

/// One request to send.
#[derive(Clone, Copy)]
struct Job {
    target: usize,
    index: usize,
}

impl Plan {
    /// The concurrency limit in force.
    fn limit(&self) -> usize {
        match (self.concurrency, self.rate) {
            (Some(c), _) => c.max(1),
            (None, Some(_)) => Semaphore::MAX_PERMITS,
            (None, None) => 1,
        }
    }
}

/// Runs `plan`: a [`Run`] per server, in the order of `plan.targets`.
/// Only setup fails (a format that does not exist, no model to ask for);
/// a request that fails is recorded with its error.
pub async fn run(plan: &Plan, progress: &Progress) -> Result<Vec<Run>, SetupError> {
    run_until(plan, progress, std::future::pending()).await
}

/// [`run`], stopped early when `stop` completes (Ctrl-C, say): no request
/// is sent after it, those in flight are dropped, and the runs hold the
/// requests finished by then ([`Run::interrupted`] set).
pub async fn run_until(
    plan: &Plan,
    progress: &Progress,
    stop: impl Future<Output = ()>,
) -> Result<Vec<Run>, SetupError> {
    let stop = std::pin::pin!(stop.fuse());
    let mut stop: Stop<'_> = stop;
    let http = reqwest::Client::builder()
        .connect_timeout(plan.timeout)
        .build()
        .map_err(|e| SetupError(format!("cannot make an HTTP client: {e}")))?;
    let mut ready = Vec::new();
    for target in &plan.targets {
        ready.push(set_up(plan, target, &http).await?);
    }
    let ready = Arc::new(ready);
    let jobs = |n: usize| -> Vec<Job> {
        let mut jobs = Vec::new();
        for index in 0..n {
            let mut order: Vec<usize> = (0..ready.len()).collect();
            if index % 2 == 1 {
                order.reverse();
            }
            jobs.extend(order.into_iter().map(|target| Job { target, index }));
        }
        jobs
    };
    let mut interrupted = false;
    if plan.warmup > 0 {
        progress.phase("warm-up", plan.warmup * ready.len());
        let warm = jobs(plan.warmup);
        interrupted = phase(plan, &ready, &http, warm, progress, false, &mut stop)
            .await
            .1;
    }
    progress.phase("requests", plan.requests * ready.len());
    let started = Instant::now();
    let mut results = Vec::new();
    if !interrupted {
        let measured = jobs(plan.requests);
        (results, interrupted) =
            phase(plan, &ready, &http, measured, progress, true, &mut stop).await;
    }
    let duration_s = started.elapsed().as_secs_f64();
    progress.finish();
    let mut runs = Vec::new();
    for (t, r) in ready.iter().enumerate() {
        let mut requests: Vec<RequestRecord> = results
            .iter()
            .filter(|(job, _)| job.target == t)
            .map(|(job, timeline)| {
                let line = plan.workload.get(job.index).map_or(0, |w| w.line);
                RequestRecord::of(job.index, line, timeline.clone(), plan.tool_ms)
            })
            .collect();
        requests.sort_by_key(|r| r.index);
        let summary = Summary::of(&requests, duration_s);
        runs.push(Run {
            label: r.target.label.clone(),
            upstream: r.target.endpoint.given.clone(),
            model: r.model.clone(),
            format: r.format.clone(),
            tool_ms: plan.tool_ms,
            concurrency: plan.concurrency.or(plan.rate.is_none().then_some(1)),
            rate: plan.rate,
            duration_s,
            interrupted,
            requests,
            summary,
        });
    }
    Ok(runs)
}

async fn set_up(plan: &Plan, target: &Target, http: &reqwest::Client) -> Result<Ready, SetupError> {
    let model = match &target.model {
        Some(m) => Some(m.clone()),
        None if plan.workload.all_have_model() => None,
        None => Some(
            first_model(
                http,
                &target.endpoint,
                target.api_key.as_deref(),
                plan.timeout,
            )
            .await?,
        ),
    };
    let registry = Registry::builtin();
    let format = match (&plan.format, &model) {
        (Some(f), _) => f.clone(),
        (None, Some(m)) => format_of(Some(m), &registry),
        (None, None) => {
            return Ok(Ready {
                target: target.clone(),
                model,
                format: BY_LINE.to_owned(),
                grammar: None,
            })
        }
    };
    let grammar = Some(
        registry
            .grammar(&format)
            .map_err(|e| SetupError(format!("--format {format}: {e}")))?,
    );
    Ok(Ready {
        target: target.clone(),
        model,
        format,
        grammar,
    })
}

/// The first model id of the server's `/v1/models`.
async fn first_model(
    http: &reqwest::Client,
    endpoint: &Endpoint,
    api_key: Option<&str>,
    timeout: Duration,
) -> Result<String, SetupError> {
    let url = &endpoint.models_url;
    let fail = |why: String| {
        SetupError(format!(
            "no --model given, and the server's model list did not say one: GET {url}: {why}"
        ))
    };
    let mut request = http.get(url);
    if let Some(key) = api_key {
        request = request.bearer_auth(key);
    }
    let answer = tokio::time::timeout(timeout, async {
        let response = request.send().await.map_err(|e| e.to_string())?;
        let status = response.status();
        if !status.is_success() {
            return Err(format!("HTTP {status}"));
        }
        response.bytes().await.map_err(|e| e.to_string())
    })
    .await
    .map_err(|_| fail("no answer within --timeout".into()))?
    .map_err(fail)?;
    let list: Value =
        serde_json::from_slice(&answer).map_err(|e| fail(format!("not JSON: {e}")))?;
    list.get("data")
        .and_then(Value::as_array)
        .and_then(|d| d.first())
        .and_then(|m| m.get("id"))
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| fail("no model in `data`".into()))
}

/// The future that stops a run early, fused (it may be polled after it
/// completed).
type Stop<'a> = Pin<&'a mut (dyn FusedFuture<Output = ()> + 'a)>;

/// Sends `jobs` under the plan's limit and pace; their timelines, in the
/// order they finished, and whether `stop` cut the phase short (then the
/// requests in flight were dropped).
async fn phase(
    plan: &Plan,
    ready: &Arc<Vec<Ready>>,
    http: &reqwest::Client,
    jobs: Vec<Job>,
    progress: &Progress,
    measured: bool,
    stop: &mut Stop<'_>,
) -> (Vec<(Job, Timeline)>, bool) {
    let mut stopped = false;
    let limit = Arc::new(Semaphore::new(plan.limit()));
    let mut pace = plan.rate.filter(|r| *r > 0.0).map(|r| {
        let mut i = tokio::time::interval(Duration::from_secs_f64(1.0 / r));
        i.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Burst);
        i
    });
    let mut tasks: JoinSet<(Job, Timeline)> = JoinSet::new();
    let mut done = Vec::with_capacity(jobs.len());
    let mut failed = 0;
    let mut finished = |job: Job, t: Timeline, done: &mut Vec<(Job, Timeline)>| {
        if let Some(e) = &t.error {
            failed += 1;
            let who = if ready.len() > 1 {
                format!("{} ", ready[job.target].target.label)
            } else {
                String::new()
            };
            let line = plan.workload.get(job.index).map_or(0, |w| w.line);
            let what = if measured {
                "request"
            } else {
                "warm-up request"
            };
            progress.error_line(&format!(
                "bench: {who}{what} {} (workload line {line}): {e}",
                job.index
            ));
        }
        progress.tick(failed);
        done.push((job, t));
    };
    'jobs: for job in jobs {
        if let Some(pace) = pace.as_mut() {
            tokio::select! {
                _ = pace.tick() => {}
                () = stop.as_mut() => {
                    stopped = true;
                    break 'jobs;
                }
            }
        }
        // Wait for a free slot, collecting what finished meanwhile.
        let permit = loop {
            tokio::select! {
                permit = Arc::clone(&limit).acquire_owned() => break permit,
                Some(joined) = tasks.join_next(), if !tasks.is_empty() => {
                    if let Ok((job, t)) = joined {
                        finished(job, t, &mut done);
                    }
                }
                () = stop.as_mut() => {
                    stopped = true;
                    break 'jobs;
                }
            }
        };
        let Ok(permit) = permit else { break };
        let r = &ready[job.target];
        let Some(work) = plan.workload.get(job.index) else {
            continue;
        };
        let body = work.body_for(r.model.as_deref().or(r.target.model.as_deref()));
        let mut options = Options::new().with_reasoning(true);
        if let Some(tools) = &work.tools {
            options = options.with_tools(tools.clone());
        }
        let grammar = match &r.grammar {
            Some(g) => Some(Arc::clone(g)),
            None => {
                let registry = Registry::builtin();
                let format = format_of(work.model(None), &registry);
                registry.grammar(&format).ok()
            }
        };
        let detector = Detector::new(grammar, options);
        let http = http.clone();
        let url = r.target.endpoint.chat_url.clone();
        let key = r.target.api_key.clone();
        let timeout = plan.timeout;
        tasks.spawn(async move {
            let send = Sender {
                http: &http,
                url: &url,
                api_key: key.as_deref(),
                timeout,
            };
            let t = send.run(body, detector).await;
            drop(permit);
            (job, t)
        });
    }
    if stopped {
        tasks.abort_all();
    }
    loop {
        tokio::select! {
            joined = tasks.join_next() => match joined {
                // An aborted request is dropped.
                Some(Ok((job, t))) => finished(job, t, &mut done),
                Some(Err(_)) => {}
                None => break,
            },
            () = stop.as_mut(), if !stopped => {
                stopped = true;
                tasks.abort_all();
            }
        }
    }
    (done, stopped)
}
