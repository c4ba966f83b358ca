//! How many concurrent streams one core of the proxy sustains, and the
//! latency it adds per chunk.
//!
//! ```text
//! cargo run --release -p toolscan-proxy --example load -- [--streams 100,250,500,1000,1500,2000,3000]
//!     [--tokens 60] [--rate 50] [--proxy-threads 1]
//!     [--via URL --via-pid PID[,PID…]] [--upstream-port PORT] [--tools yes|no] [--every-stage yes]
//! ```
//!
//! `--via` sends the clients to a proxy running in another process (nginx,
//! `toolscan proxy`) instead of the one in this process, and `--via-pid`
//! names the processes whose CPU time is that proxy's (all their threads);
//! `--upstream-port` fixes the replay upstream's port, so that the other
//! proxy can be pointed at it before this starts. `--tools no` leaves
//! `tools` out of the requests: a `toolscan proxy` then forwards the
//! answers untouched, and the streams need not carry `tool_calls`.
//! `scripts/load-vs-nginx.sh` runs nginx and `toolscan proxy` this way,
//! side by side. Each stage also prints a `RESULT` line for scripts;
//! `--every-stage yes` runs every stage even after one that was not
//! sustained (to compare CPU per event at the same load).
//!
//! In one process: a replay upstream (`toolscan_proxy::replay`) that plays
//! a Qwen3-style stream with a tool call, `--tokens` events at `--rate`
//! events a second, each stamped with its send time; the proxy, alone on
//! one thread (a current-thread runtime), or on `--proxy-threads N` worker
//! threads of a multi-threaded runtime (streams per machine); and the clients, which read the
//! rewritten streams and take, for every event, the time from the upstream
//! sending it to the client receiving its rewritten counterpart (the
//! rewrite keeps the stamp field). The upstream and the clients share a
//! second runtime of one worker thread.
//!
//! A first stage without the proxy (clients straight to the upstream) is
//! the baseline; "added" is the proxied latency minus the baseline's at the
//! same percentile. Then stages of more and more concurrent streams: a stage
//! is *sustained* when every stream completes (`[DONE]`, its call as
//! `tool_calls`) and the p99 latency stays within one token interval. The
//! proxy thread's CPU time (from `/proc`, Linux only) tells how much of its
//! core a stage took, so the streams one core would carry at 100% can be
//! estimated too, and the proxy CPU time per upstream token event.
#![forbid(unsafe_code)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use toolscan_proxy::replay::{now_micros, Replay, STAMP_FIELD};
use toolscan_proxy::{serve, ProxyConfig};

const PROXY_THREAD: &str = "toolscan-proxy";
const LOADGEN_THREAD: &str = "loadgen";
/// Stream starts are spread over this much time.
const RAMP: Duration = Duration::from_millis(500);

/// The soft limit on open files, from `/proc` (`None` off Linux).
fn open_files_limit() -> Option<usize> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits.lines().find(|l| l.starts_with("Max open files"))?;
    line.split_whitespace().nth(3)?.parse().ok()
}

struct Args {
    streams: Vec<usize>,
    tokens: usize,
    rate: u64,
    proxy_threads: usize,
    /// An external proxy's chat-completions URL, and its processes.
    via: Option<(String, Vec<u32>)>,
    upstream_port: u16,
    tools: bool,
    every_stage: bool,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        streams: vec![100, 250, 500, 1000, 1500, 2000, 3000],
        tokens: 60,
        rate: 50,
        proxy_threads: 1,
        via: None,
        upstream_port: 0,
        tools: true,
        every_stage: false,
    };
    let mut via_url = None;
    let mut via_pids = Vec::new();
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let value = it.next().ok_or_else(|| format!("{arg} needs a value"))?;
        match arg.as_str() {
            "--streams" => {
                args.streams = value
                    .split(',')
                    .map(|n| n.trim().parse().map_err(|e| format!("--streams: {e}")))
                    .collect::<Result<_, _>>()?
            }
            "--tokens" => args.tokens = value.parse().map_err(|e| format!("--tokens: {e}"))?,
            "--rate" => args.rate = value.parse().map_err(|e| format!("--rate: {e}"))?,
            "--proxy-threads" => {
                args.proxy_threads = value.parse().map_err(|e| format!("--proxy-threads: {e}"))?
            }
            "--via" => via_url = Some(value),
            "--via-pid" => {
                via_pids = value
                    .split(',')
                    .map(|n| n.trim().parse().map_err(|e| format!("--via-pid: {e}")))
                    .collect::<Result<_, _>>()?
            }
            "--upstream-port" => {
                args.upstream_port = value.parse().map_err(|e| format!("--upstream-port: {e}"))?
            }
            "--every-stage" => args.every_stage = value == "yes",
            "--tools" => {
                args.tools = match value.as_str() {
                    "yes" => true,
                    "no" => false,
                    _ => return Err("--tools: yes or no".into()),
                }
            }
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    if args.rate == 0 || args.tokens < 30 || args.proxy_threads == 0 {
        return Err("--rate and --proxy-threads must be positive and --tokens at least 30".into());
    }
    match (via_url, via_pids.is_empty()) {
        (Some(url), false) => args.via = Some((url, via_pids)),
        (None, true) => {}
        _ => return Err("--via and --via-pid go together".into()),
    }
    Ok(args)
}

/// A vLLM-style stream of `tokens` content events: prose, then a
/// `<tool_call>` split as a tokenizer would.
fn recording(tokens: usize) -> String {
    let call = [
        "<tool_call>",
        "\n",
        "{\"",
        "name",
        "\":",
        " \"",
        "get",
        "_weather",
        "\",",
        " \"",
        "arguments",
        "\":",
        " {\"",
        "city",
        "\":",
        " \"",
        "Paris",
        "\"}}",
        "\n",
        "</tool_call>",
    ];
    let prose = [
        "Let", " me", " look", " up", " the", " weather", " in", " Paris", " for", " you", ".",
        "\n\n",
    ];
    let mut pieces: Vec<&str> = prose
        .iter()
        .copied()
        .cycle()
        .take(tokens - call.len())
        .collect();
    pieces.extend(call);
    let chunk = |delta: serde_json::Value, finish: serde_json::Value| {
        let v = serde_json::json!({
            "id": "chatcmpl-load", "object": "chat.completion.chunk", "created": 1749816000,
            "model": "Qwen/Qwen3-8B",
            "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}],
        });
        format!("data: {v}\n\n")
    };
    let mut sse = chunk(
        serde_json::json!({"role": "assistant", "content": ""}),
        serde_json::Value::Null,
    );
    for piece in pieces {
        sse.push_str(&chunk(
            serde_json::json!({ "content": piece }),
            serde_json::Value::Null,
        ));
    }
    sse.push_str(&chunk(serde_json::json!({}), "stop".into()));
    sse.push_str("data: [DONE]\n\n");
    sse
}

/// CPU seconds of this process's threads whose name starts with `prefix`
/// (`None` off Linux). Assumes the usual 100 clock ticks a second.
fn cpu_seconds(prefix: &str) -> Option<f64> {
    let mut ticks = 0u64;
    for task in std::fs::read_dir("/proc/self/task").ok()? {
        let dir = task.ok()?.path();
        let comm = std::fs::read_to_string(dir.join("comm")).unwrap_or_default();
        if !comm.trim().starts_with(prefix) {
            continue;
        }
        let stat = std::fs::read_to_string(dir.join("stat")).ok()?;
        let after = stat.rsplit_once(')')?.1;
        let fields: Vec<&str> = after.split_whitespace().collect();
        // Fields 14 and 15 of stat (utime, stime); `after` starts at field 3.
        ticks += fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    }
    Some(ticks as f64 / 100.0)
}

/// CPU seconds of processes `pids`, and of those the seconds in the kernel
/// (`None` off Linux).
fn process_cpu_split(pids: &[u32]) -> Option<(f64, f64)> {
    let (mut all, mut system) = (0u64, 0u64);
    for pid in pids {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        let after = stat.rsplit_once(')')?.1;
        let fields: Vec<&str> = after.split_whitespace().collect();
        let stime = fields.get(12)?.parse::<u64>().ok()?;
        all += fields.get(11)?.parse::<u64>().ok()? + stime;
        system += stime;
    }
    Some((all as f64 / 100.0, system as f64 / 100.0))
}

/// CPU seconds of processes `pids`, all their threads (`None` off Linux):
/// the sum of each thread's `se.sum_exec_runtime` in `/proc/…/sched`
/// (milliseconds, to the nanosecond: a stage's third of a second of CPU
/// is only 35 ticks of `stat`, ±3 % by the tick alone), else from `stat`.
fn process_cpu_seconds(pids: &[u32]) -> Option<f64> {
    let scheduled = || {
        let mut ms = 0.0;
        for pid in pids {
            for task in std::fs::read_dir(format!("/proc/{pid}/task")).ok()? {
                let sched = std::fs::read_to_string(task.ok()?.path().join("sched")).ok()?;
                let line = sched
                    .lines()
                    .find(|l| l.starts_with("se.sum_exec_runtime"))?;
                ms += line.rsplit(':').next()?.trim().parse::<f64>().ok()?;
            }
        }
        Some(ms / 1e3)
    };
    scheduled().or_else(|| process_cpu_split(pids).map(|(all, _)| all))
}

/// Where the proxy's CPU time is read: threads of this process, or other
/// processes.
#[derive(Clone)]
enum ProxyCpu {
    Threads(&'static str),
    Processes(Vec<u32>),
}

impl ProxyCpu {
    fn seconds(&self) -> Option<f64> {
        match self {
            ProxyCpu::Threads(prefix) => cpu_seconds(prefix),
            ProxyCpu::Processes(pids) => process_cpu_seconds(pids),
        }
    }

    /// The kernel's part of [`ProxyCpu::seconds`] (for other processes
    /// only: `None` for threads of this one).
    fn system_seconds(&self) -> Option<f64> {
        match self {
            ProxyCpu::Threads(_) => None,
            ProxyCpu::Processes(pids) => process_cpu_split(pids).map(|(_, system)| system),
        }
    }
}

struct Stage {
    streams: usize,
    complete: usize,
    /// Latencies in microseconds, sorted.
    latencies: Vec<u64>,
    wall: f64,
    proxy_cpu: Option<f64>,
    /// The kernel's part of `proxy_cpu`.
    proxy_system: Option<f64>,
    loadgen_cpu: Option<f64>,
}

impl Stage {
    fn percentile(&self, p: f64) -> f64 {
        if self.latencies.is_empty() {
            return f64::NAN;
        }
        let i = ((self.latencies.len() - 1) as f64 * p).round() as usize;
        self.latencies[i] as f64 / 1000.0
    }
}

/// One client: the stream's latencies, and whether it completed.
/// `tools`: the request offers them (a proxy reads calls only then);
/// `want_call`: the stream must carry `tool_calls` (it went through a
/// toolscan proxy that reads calls).
async fn one_stream(
    client: reqwest::Client,
    url: Arc<str>,
    delay: Duration,
    (tools, want_call): (bool, bool),
) -> (Vec<u64>, bool) {
    tokio::time::sleep(delay).await;
    let body = if tools {
        r#"{"model":"Qwen/Qwen3-8B","stream":true,"messages":[{"role":"user","content":"Weather in Paris?"}],"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}}]}"#
    } else {
        r#"{"model":"Qwen/Qwen3-8B","stream":true,"messages":[{"role":"user","content":"Weather in Paris?"}]}"#
    };
    let Ok(mut response) = client
        .post(&*url)
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
    else {
        return (Vec::new(), false);
    };
    let needle = format!("\"{STAMP_FIELD}\":");
    let mut latencies = Vec::with_capacity(80);
    let mut buf: Vec<u8> = Vec::new();
    let mut saw_call = false;
    let mut last_done = false;
    loop {
        let chunk = match response.chunk().await {
            Ok(Some(chunk)) => chunk,
            Ok(None) => break,
            Err(_) => return (latencies, false),
        };
        let now = now_micros();
        buf.extend_from_slice(&chunk);
        while let Some(end) = buf.windows(2).position(|w| w == b"\n\n") {
            let event = &buf[..end];
            let text = String::from_utf8_lossy(event);
            if let Some(at) = text.find(&needle) {
                let digits: String = text[at + needle.len()..]
                    .chars()
                    .take_while(char::is_ascii_digit)
                    .collect();
                if let Ok(sent) = digits.parse::<u64>() {
                    latencies.push(now.saturating_sub(sent));
                }
            }
            saw_call |= text.contains("\"tool_calls\"");
            last_done = text.trim() == "data: [DONE]";
            buf.drain(..end + 2);
        }
    }
    (latencies, last_done && (saw_call || !want_call))
}

async fn run_stage(
    url: &str,
    streams: usize,
    ramp: Duration,
    request: (bool, bool),
    proxy: &ProxyCpu,
) -> Stage {
    let client = reqwest::Client::builder()
        .no_proxy()
        .pool_max_idle_per_host(streams)
        .tcp_nodelay(true)
        .build()
        .expect("an HTTP client");
    let url: Arc<str> = Arc::from(url);
    let proxy_before = proxy.seconds();
    let system_before = proxy.system_seconds();
    let loadgen_before = cpu_seconds(LOADGEN_THREAD);
    let start = Instant::now();
    // Starts spread over the ramp: no burst of connections, and events do
    // not come in lockstep.
    let tasks: Vec<_> = (0..streams)
        .map(|i| {
            let delay = ramp.mul_f64(i as f64 / streams as f64);
            tokio::spawn(one_stream(client.clone(), Arc::clone(&url), delay, request))
        })
        .collect();
    let mut latencies = Vec::new();
    let mut complete = 0;
    for task in tasks {
        if let Ok((l, ok)) = task.await {
            latencies.extend(l);
            complete += usize::from(ok);
        }
    }
    let wall = start.elapsed().as_secs_f64();
    latencies.sort_unstable();
    let used = |before: Option<f64>, now: Option<f64>| Some((now? - before?) / wall);
    Stage {
        streams,
        complete,
        latencies,
        wall,
        proxy_cpu: used(proxy_before, proxy.seconds()),
        proxy_system: used(system_before, proxy.system_seconds()),
        loadgen_cpu: used(loadgen_before, cpu_seconds(LOADGEN_THREAD)),
    }
}

fn percent(x: Option<f64>) -> String {
    x.map_or("n/a".into(), |x| format!("{:.0}%", x * 100.0))
}

/// Starts the proxy on its own thread(s), forwarding to `upstream`; its
/// chat-completions URL.
fn start_proxy(upstream: String, threads: usize) -> String {
    let config = ProxyConfig::new(upstream);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .name(PROXY_THREAD.into())
        .spawn(move || {
            let rt = if threads == 1 {
                tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
            } else {
                tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(threads)
                    .thread_name(PROXY_THREAD)
                    .enable_all()
                    .build()
            }
            .expect("a runtime");
            rt.block_on(async move {
                // A deep accept queue: thousands of clients connect at once.
                let socket = tokio::net::TcpSocket::new_v4().expect("a socket");
                socket
                    .bind("127.0.0.1:0".parse().expect("an address"))
                    .expect("a port");
                let listener = socket.listen(8192).expect("a listener");
                let _ = tx.send(listener.local_addr().expect("an address"));
                if let Err(e) = serve(listener, config, std::future::pending()).await {
                    eprintln!("load: the proxy failed: {e}");
                }
            });
        })
        .expect("the proxy thread");
    format!(
        "http://{}/v1/chat/completions",
        rx.recv().expect("the proxy's address")
    )
}

fn main() {
    let args = match parse_args() {
        Ok(args) => args,
        Err(why) => {
            eprintln!("load: {why}");
            std::process::exit(2);
        }
    };
    let interval = Duration::from_micros(1_000_000 / args.rate);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .thread_name(LOADGEN_THREAD)
        .enable_all()
        .build()
        .expect("a runtime");

    // The upstream.
    let replay = Replay::new()
        .with_stream("load", &recording(args.tokens))
        .with_default("load")
        .with_delay(interval)
        .with_stamp(true);
    let upstream = runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", args.upstream_port))
            .await
            .expect("a port");
        let addr = listener.local_addr().expect("an address");
        let listener = axum::serve::ListenerExt::tap_io(listener, |tcp| {
            let _ = tcp.set_nodelay(true);
        });
        runtime.spawn(async move { axum::serve(listener, replay.router()).await });
        format!("http://{addr}")
    });

    // The proxy, alone on its thread(s), unless it runs elsewhere.
    let (proxy, proxy_cpu) = match &args.via {
        Some((url, pids)) => (url.clone(), ProxyCpu::Processes(pids.clone())),
        None => (
            start_proxy(upstream.clone(), args.proxy_threads),
            ProxyCpu::Threads(PROXY_THREAD),
        ),
    };
    // Four descriptors a stream in this process: client, proxy (both
    // sides), upstream.
    let mut stages = args.streams.clone();
    if let Some(limit) = open_files_limit() {
        let most = limit.saturating_sub(200) / 4;
        if stages.iter().any(|&n| n > most) {
            println!(
                "(open files limited to {limit}: stages capped at {most} streams; \
                 `ulimit -n` raises it)"
            );
            stages.retain(|&n| n <= most);
        }
    }

    println!(
        "{} tokens a stream at {} tokens/s (one event every {:?}); the proxy on {} thread(s)",
        args.tokens, args.rate, interval, args.proxy_threads
    );
    let direct = format!("{upstream}/v1/chat/completions");
    let none = ProxyCpu::Processes(Vec::new());
    let base = runtime.block_on(
        runtime.spawn(async move { run_stage(&direct, 100, RAMP, (true, false), &none).await }),
    );
    let Ok(base) = base else {
        eprintln!("load: the baseline stage failed");
        std::process::exit(1);
    };
    let (b50, b99) = (base.percentile(0.5), base.percentile(0.99));
    println!(
        "baseline, no proxy, 100 streams: p50 {b50:.2} ms, p99 {b99:.2} ms ({}/100 complete)",
        base.complete
    );
    println!(
        "{:>8} {:>10} {:>8} {:>8} {:>10} {:>10} {:>10} {:>12} {:>10}",
        "streams",
        "complete",
        "p50 ms",
        "p99 ms",
        "added p50",
        "added p99",
        "proxy CPU",
        "load-gen CPU",
        "µs/event"
    );
    let mut best: Option<Stage> = None;
    let want_call = args.tools && args.via.is_none();
    for &n in &stages {
        let (proxy, cpu) = (proxy.clone(), proxy_cpu.clone());
        let request = (args.tools, want_call);
        let Ok(stage) = runtime.block_on(
            runtime.spawn(async move { run_stage(&proxy, n, RAMP, request, &cpu).await }),
        ) else {
            break;
        };
        let (p50, p99) = (stage.percentile(0.5), stage.percentile(0.99));
        // Proxy CPU time per upstream event (the content events, the
        // finish and `[DONE]`).
        let us_per_event = stage
            .proxy_cpu
            .map(|c| c * stage.wall * 1e6 / (n * (args.tokens + 2)) as f64);
        let sys_per_event = stage
            .proxy_system
            .map(|c| c * stage.wall * 1e6 / (n * (args.tokens + 2)) as f64);
        let per_event = us_per_event.map_or("n/a".to_string(), |us| format!("{us:.1}"));
        let field = |us: Option<f64>| us.map_or("nan".to_string(), |us| format!("{us:.2}"));
        println!(
            "RESULT streams={n} complete={} p50_ms={p50:.2} p99_ms={p99:.2} cpu_us_per_event={} sys_us_per_event={}",
            stage.complete,
            field(us_per_event),
            field(sys_per_event),
        );
        println!(
            "{:>8} {:>10} {:>8.2} {:>8.2} {:>10.2} {:>10.2} {:>10} {:>12} {:>10}   ({:.1} s)",
            n,
            format!("{}/{}", stage.complete, n),
            p50,
            p99,
            p50 - b50,
            p99 - b99,
            percent(stage.proxy_cpu),
            percent(stage.loadgen_cpu),
            per_event,
            stage.wall,
        );
        let sustained = stage.complete == n && p99 <= interval.as_secs_f64() * 1000.0;
        if !sustained {
            println!("  not sustained: streams failed or p99 above one token interval");
            if args.every_stage {
                continue;
            }
            break;
        }
        best = Some(stage);
    }
    match best {
        Some(stage) => {
            let per_core = stage
                .proxy_cpu
                .filter(|c| *c > 0.0)
                .map(|c| {
                    format!(
                        ", about {:.0} at 100% of a core by CPU time",
                        stage.streams as f64 / c
                    )
                })
                .unwrap_or_default();
            println!(
                "{} proxy thread(s) sustained {} concurrent streams at {} tokens/s (proxy CPU {}){per_core}",
                args.proxy_threads,
                stage.streams,
                args.rate,
                percent(stage.proxy_cpu)
            );
        }
        None => println!("no stage was sustained"),
    }
}
