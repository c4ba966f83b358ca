//! Command-line definitions (clap derive): the `parse`, `sse` and `formats`
//! subcommands, with their options.
//!
//! Everything that can be checked without touching the file system is checked
//! here, so that clap reports it as a usage error (exit status 2).

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};
use toolscan_core::Limits;

use crate::chunking::ChunkPlan;

/// `toolscan`: streaming extraction of tool calls from LLM output.
#[derive(Debug, Parser)]
#[command(name = "toolscan", version, about, propagate_version = true)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Parse model output into tool-call events (JSON Lines on stdout).
    Parse(ParseArgs),
    /// Rewrite an OpenAI chat.completions SSE stream: text tool calls become
    /// `delta.tool_calls` (SSE on stdout, written as the input arrives).
    Sse(SseArgs),
    /// List the built-in formats (and a described one, with
    /// `--format-file`) with their opening markers.
    Formats(FormatsArgs),
    /// Write a response (the object `parse --output final` prints: `text`,
    /// `tool_calls`) as the model writes it in a format: the inverse of
    /// `parse`.
    Render(RenderArgs),
    /// Write the manifest of a list of tools in a format: a system-prompt
    /// section that describes each tool, says how to call them and shows
    /// one example call per tool, written as the format writes it.
    Manifest(ManifestArgs),
    /// Replay a bundled recorded stream at token pace, rewritten as the
    /// proxy rewrites it, and print what the client receives with
    /// timestamps: each tool starts before the stream ends.
    Demo(DemoArgs),
    /// An OpenAI-compatible HTTP proxy: the upstream's /v1/chat/completions
    /// answers (streaming or not) come back with text tool calls as
    /// `tool_calls`; other routes are forwarded untouched.
    Proxy(Box<ProxyArgs>),
    /// An OpenAI-style server that plays recorded completions back at token
    /// pace (what `toolscan-replay` serves), to try the proxy without a
    /// model server. Prints the URL it serves on, then serves until
    /// SIGINT or SIGTERM.
    Replay(ReplayArgs),
    /// Ask a URL (`GET`): exit 0 when it answers 2xx within the timeout,
    /// 1 otherwise (for a container's `HEALTHCHECK`: the image has no
    /// shell nor curl).
    Health(HealthArgs),
    /// Measure a live OpenAI-compatible server: time to first token, each
    /// call's start and ready, [DONE], and the head start of dispatching
    /// at ready (a table; `--json`, `--html` pages).
    Bench(crate::bench::BenchArgs),
}

/// Options of `toolscan replay`.
#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// The recordings: NAME.sse (streamed answers) and NAME.json (whole
    /// answers), played for the requests whose `model` is NAME [default:
    /// the recordings of examples/data/sse, built into the binary].
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,

    /// Milliseconds between two events of a stream.
    #[arg(long, value_name = "MS", default_value_t = 20)]
    pub delay_ms: u64,

    /// The recording played for a model that has none of its own
    /// [default: proxy-qwen3-weather].
    #[arg(long, value_name = "NAME")]
    pub default: Option<String>,

    /// Address to listen on (port 0: a free port, printed at start).
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8000")]
    pub listen: String,
}

/// Options of `toolscan proxy`. Each flag can also come from the
/// environment variable named in its help (`TOOLSCAN_…`); a flag given on
/// the command line wins. The proxy's own settings are
/// [`toolscan_proxy::Settings`] (written once there, with their flags);
/// these are the ones of the command line around it.
#[derive(Debug, Args)]
pub struct ProxyArgs {
    /// Address to listen on.
    #[arg(
        long,
        value_name = "ADDR",
        default_value = "127.0.0.1:8080",
        env = "TOOLSCAN_LISTEN"
    )]
    pub listen: String,

    /// The proxy's settings (`--upstream`, `--format`, the content options,
    /// timeouts and bounds).
    #[command(flatten)]
    pub settings: toolscan_proxy::Settings,

    /// A format described in JSON (see docs/format-files.md): registered
    /// beside the built-in formats, and used for every completion unless
    /// `--format` names another (`auto`: by model, see `--model-map`, which
    /// may name it too).
    #[arg(long, value_name = "FORMAT.json", env = "TOOLSCAN_FORMAT_FILE")]
    pub format_file: Option<PathBuf>,

    /// JSON object of model id → format name, for the models whose family
    /// this build does not know (or writes otherwise); or → an object of
    /// settings for that model: `format`, `reasoning`,
    /// `starts_in_reasoning`, `calls_in_reasoning` ("text"/"call"),
    /// `parse_always`, `emulate_tools`,
    /// `invalid_calls_as_text`, `stream_arguments`.
    #[arg(long, value_name = "FILE", env = "TOOLSCAN_MODEL_MAP")]
    pub model_map: Option<PathBuf>,

    /// Threads that serve the requests (default: one per core). With 1,
    /// the proxy runs on one thread only, the cheapest per event: run
    /// one such process per core behind the load balancer for the most
    /// streams a machine can take.
    #[arg(long, value_name = "N", env = "TOOLSCAN_WORKERS")]
    pub workers: Option<std::num::NonZeroUsize>,

    /// Serve Prometheus metrics (`/metrics`) and a health check
    /// (`/health`) on this address of their own (never on `--listen`,
    /// where the upstream's own `/metrics` is forwarded).
    #[arg(long, value_name = "ADDR", env = "TOOLSCAN_METRICS_LISTEN")]
    pub metrics_listen: Option<String>,

    /// How log lines are written on stderr: `text`, or `json` (one object
    /// per line). Which lines: `RUST_LOG` (default `info`: one access line
    /// per request, upstream errors, start and stop).
    #[arg(long, value_enum, value_name = "text|json", default_value_t = LogFormat::Text,
          env = "TOOLSCAN_LOG_FORMAT")]
    pub log_format: LogFormat,

    /// Limits on what one call may hold.
    #[command(flatten)]
    pub limits: LimitArgs,
}

/// Options of `toolscan health`.
#[derive(Debug, Args)]
pub struct HealthArgs {
    /// The URL to ask (`GET`), e.g. `http://127.0.0.1:8080/health`.
    #[arg(value_name = "URL")]
    pub url: String,

    /// Seconds the answer may take.
    #[arg(long, value_name = "SECS", default_value_t = 5.0, value_parser = seconds)]
    pub timeout: f64,
}

/// Parses a duration in seconds: a number, at least 0.001.
fn seconds(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(x) if (0.001..=1e9).contains(&x) => Ok(x),
        _ => Err("expected a number of seconds (at least 0.001)".to_owned()),
    }
}

/// How log lines are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines.
    Text,
    /// One JSON object per line.
    Json,
}

/// Options of `toolscan demo`.
#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Milliseconds between two tokens of the replayed stream.
    #[arg(long, value_name = "MS", default_value_t = 20)]
    pub delay_ms: u64,

    /// How long each (simulated) tool takes, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 500)]
    pub tool_ms: u64,
}

/// What `parse` and `sse` read content with: the format, the tools, the
/// reasoning markers, ids and limits.
#[derive(Debug, Args)]
pub struct ContentArgs {
    /// Format name (see `toolscan formats`), or `auto` to detect it from the
    /// content. Default: `auto`, unless `--model` names a known model (or
    /// `--format-file` describes one). Takes precedence over `--model`.
    #[arg(long, value_name = "NAME|auto")]
    pub format: Option<String>,

    /// A format described in JSON (see docs/format-files.md): it is
    /// registered beside the built-in formats and used, unless `--format`
    /// names another (`--format auto` detects it among all of them).
    #[arg(long, value_name = "FORMAT.json")]
    pub format_file: Option<PathBuf>,

    /// Pick the format from a model id, e.g. `Qwen/Qwen3-8B`. A model this
    /// build has no format for falls back to `auto` with a warning.
    #[arg(long, value_name = "MODEL_ID")]
    pub model: Option<String>,

    /// OpenAI-style `tools` array (JSON file). A call to a tool not in it
    /// gets an `unknown_tool` diagnostic (and is still reported); JSON that
    /// is only tentatively a call (bare `{…}`, code fences, `<tools>`,
    /// `<response>`…) counts as a call only if it names a listed tool.
    #[arg(long, value_name = "TOOLS.json")]
    pub tools: Option<PathBuf>,

    /// A call finds its tool in `--tools` by its exact name, else by its
    /// name without a namespace prefix (`exec` for `functions.exec`, and
    /// the reverse) when one tool matches; with this flag such a call is
    /// given the declared name (it keeps the model's by default).
    #[arg(long)]
    pub normalize_tool_names: bool,

    /// Separate reasoning (`<think>…</think>`, `[THINK]…[/THINK]` and every
    /// family's reasoning markers, see docs/formats.md) into `reasoning`
    /// events (`delta.reasoning_content` for `sse`); the markers are
    /// dropped. Harmony's analysis channel is reasoning with or without
    /// this flag: the channel is the format's own marking, not a guess.
    /// Calls inside it: see `--calls-in-reasoning`.
    #[arg(long)]
    pub reasoning: bool,

    /// The completion starts inside a reasoning block whose opening marker
    /// was in the prompt (Kimi K2.5+, Qwen3 thinking templates), up to the
    /// first closing marker.
    #[arg(long)]
    pub starts_in_reasoning: bool,

    /// What a call written inside a reasoning block is: `text` (the
    /// default: reasoning — models quote calls while thinking —, unless
    /// the completion never closes the block: then its calls are calls,
    /// sent at the end) or `call` (a call, at once). With or without
    /// `--reasoning`.
    #[arg(long, value_enum, value_name = "text|call", default_value_t = CallsInReasoning::Text)]
    pub calls_in_reasoning: CallsInReasoning,

    /// How ids are minted for calls whose format carries none. `seeded`
    /// (the default) gives reproducible output.
    #[arg(long, value_enum, default_value_t = Ids::Seeded)]
    pub ids: Ids,

    /// Limits on what one call may hold.
    #[command(flatten)]
    pub limits: LimitArgs,
}

/// Options of `toolscan parse`.
#[derive(Debug, Args)]
pub struct ParseArgs {
    /// Feed the input in pieces of N bytes, or of random sizes 1..=64 drawn
    /// from SEED (`random:SEED`). Default: as it is read.
    #[arg(long, value_name = "N|random:SEED")]
    pub chunk: Option<ChunkPlan>,

    /// `events`: one JSON object per event per line; `coalesced`: the same,
    /// with consecutive deltas merged (the same lines for every `--chunk`);
    /// `final`: one object with the whole response.
    #[arg(long, value_enum, default_value_t = Output::Events)]
    pub output: Output,

    /// The format, tools, reasoning, ids and limits.
    #[command(flatten)]
    pub content: ContentArgs,

    /// Input file; `-` or nothing reads stdin.
    #[arg(value_name = "FILE|-")]
    pub input: Option<PathBuf>,
}

/// Options of `toolscan sse`.
#[derive(Debug, Args)]
pub struct SseArgs {
    /// The format of the choices' content, tools, reasoning, ids and
    /// limits.
    #[command(flatten)]
    pub content: ContentArgs,

    /// Stream a call's arguments as they come (for UIs that show them
    /// live). By default a call's `tool_calls` entry (id, name, all its
    /// arguments) goes out in the chunk that completes the call, and a call
    /// that breaks (malformed, cut by the token limit) is content, never an
    /// entry. With this flag a call that breaks after it began has already
    /// sent entries with partial arguments, and its markup follows as
    /// content.
    #[arg(long)]
    pub stream_arguments: bool,

    /// A recorded `chat.completions` stream (`data: {…}` events, `data:
    /// [DONE]`); `-` or nothing reads stdin.
    #[arg(value_name = "FILE|-")]
    pub input: Option<PathBuf>,
}

/// The parser's limits (`toolscan_core::Limits`). Hitting one is not an
/// error: the block comes back as text with a `limit` diagnostic.
#[derive(Debug, Args)]
#[command(next_help_heading = "Limits")]
pub struct LimitArgs {
    /// Largest call, in bytes, its markup included. A longer one comes back
    /// as text with a `limit` diagnostic.
    #[arg(long, value_name = "N", value_parser = at_least_one,
          default_value_t = Limits::default().max_call_bytes, env = "TOOLSCAN_MAX_CALL_BYTES")]
    pub max_call_bytes: usize,

    /// Deepest nesting of objects and lists in a call (`{"a": [1]}` is
    /// 2 deep; a call object around the arguments adds 1; nested parameters
    /// count the same). Deeper: text and
    /// a `limit` diagnostic.
    #[arg(long, value_name = "N", value_parser = at_least_one,
          default_value_t = Limits::default().max_depth, env = "TOOLSCAN_MAX_DEPTH")]
    pub max_depth: usize,

    /// How many bytes a tentative block (a bare `{`, a code fence,
    /// `<response>`…) may hold back before it shows a tool name and
    /// arguments. Past that: text and a `limit` diagnostic.
    #[arg(long, value_name = "N", value_parser = at_least_one,
          default_value_t = Limits::default().max_holdback, env = "TOOLSCAN_MAX_HOLDBACK")]
    pub max_holdback: usize,

    /// Longest tool name or in-text call id, in bytes. A longer one makes
    /// the block text.
    #[arg(long, value_name = "N", value_parser = at_least_one,
          default_value_t = Limits::default().max_name_bytes, env = "TOOLSCAN_MAX_NAME_BYTES")]
    pub max_name_bytes: usize,
}

impl LimitArgs {
    /// The core's limits: the library defaults, overridden by the flags.
    pub fn limits(&self) -> Limits {
        // Written with `..` so that a limit the core adds keeps its default.
        #[allow(clippy::needless_update)]
        Limits::new()
            .with_max_call_bytes(self.max_call_bytes)
            .with_max_depth(self.max_depth)
            .with_max_holdback(self.max_holdback)
            .with_max_name_bytes(self.max_name_bytes)
    }
}

/// Parses a limit: a whole number, at least 1.
fn at_least_one(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(0) => Err("must be at least 1".to_owned()),
        Ok(n) => Ok(n),
        Err(_) => Err("expected a whole number, at least 1".to_owned()),
    }
}

/// Options of `toolscan formats`.
#[derive(Debug, Args)]
pub struct FormatsArgs {
    /// One JSON object per format per line instead of a table.
    #[arg(long)]
    pub json: bool,

    /// Also list the format described in this JSON file (see
    /// docs/format-files.md), after the built-in ones.
    #[arg(long, value_name = "FORMAT.json")]
    pub format_file: Option<PathBuf>,

    /// Print the format NAME as a JSON description, each opener as its
    /// program of steps: a format file to start from (see
    /// docs/format-files.md).
    #[arg(long, value_name = "NAME", conflicts_with = "json")]
    pub describe: Option<String>,
}

/// Options of `toolscan render`.
#[derive(Debug, Args)]
pub struct RenderArgs {
    /// The format to write (`toolscan formats` lists them; not `auto`).
    #[arg(long, value_name = "NAME")]
    pub format: String,

    /// A format described in this JSON file (see docs/format-files.md),
    /// which `--format` may then name.
    #[arg(long, value_name = "FORMAT.json")]
    pub format_file: Option<PathBuf>,

    /// The request's `tools` array (JSON): types parameter values where
    /// the format writes them raw, as `parse --tools` reads them.
    #[arg(long, value_name = "TOOLS.json")]
    pub tools: Option<PathBuf>,

    /// The response: a JSON object with `text` (a string) and `tool_calls`
    /// (each with `name`, `arguments` — an object or a JSON string — and
    /// optionally `id`), as `parse --output final` writes it; `-` or none
    /// for stdin.
    ///
    /// Or tool results: a chat message with `"role": "tool"` (`content`,
    /// and optionally `name` and `tool_call_id`), or an array of them (one
    /// turn's results, in order). They are written as the format's chat
    /// template writes them, and printed as a JSON array of the chat
    /// messages that carry them (`[{"role": …, "content": …}]`); a format
    /// that does not say how its results are written is an error.
    #[arg(value_name = "FILE")]
    pub input: Option<PathBuf>,

    /// Write TEXT before the response's text when it has calls, instead of
    /// what most of the format's chat templates write there (an empty
    /// `<think></think>` for Kimi-K2-Thinking; `""` for nothing).
    #[arg(long, value_name = "TEXT")]
    pub frame_before: Option<String>,

    /// Write TEXT between the response's text and its first call, instead
    /// of the format's default.
    #[arg(long, value_name = "TEXT")]
    pub frame_text_sep: Option<String>,

    /// Write TEXT before the first call of a response without text,
    /// instead of the format's default.
    #[arg(long, value_name = "TEXT")]
    pub frame_lead: Option<String>,

    /// Write TEXT after the last call, instead of the format's default.
    #[arg(long, value_name = "TEXT")]
    pub frame_tail: Option<String>,
}

/// Options of `toolscan manifest`.
#[derive(Debug, Args)]
pub struct ManifestArgs {
    /// The format the model writes (`toolscan formats` lists them; not
    /// `auto`).
    #[arg(long, value_name = "NAME")]
    pub format: String,

    /// A format described in this JSON file (see docs/format-files.md),
    /// which `--format` may then name.
    #[arg(long, value_name = "FORMAT.json")]
    pub format_file: Option<PathBuf>,

    /// The request's `tools` array (JSON, OpenAI style).
    #[arg(long, value_name = "TOOLS.json")]
    pub tools: PathBuf,

    /// A prompt to place the manifest in: at each `{{tools}}`, or after
    /// it when it has none.
    #[arg(long, value_name = "FILE")]
    pub template: Option<PathBuf>,

    /// `text`: the manifest (or the filled template); `json`: an object
    /// `{"text": …, "examples": [one example call per tool]}`.
    #[arg(long, value_enum, default_value_t = ManifestOutput::Text)]
    pub output: ManifestOutput,
}

/// What `toolscan manifest` writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ManifestOutput {
    /// The manifest's text, or the template with it in place.
    Text,
    /// A JSON object: `text` and `examples`.
    Json,
}

/// What `toolscan parse` writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Output {
    /// One JSON object per event per line.
    Events,
    /// Like `events`, with consecutive `text` deltas, consecutive
    /// `reasoning` deltas and consecutive `tool_call_args` deltas of one call
    /// merged into one line each: the same output for every chunking.
    Coalesced,
    /// One JSON object: text, tool_calls, diagnostics, finish_reason (and
    /// reasoning, with `--reasoning`).
    Final,
}

/// What a call inside a reasoning block is
/// (`toolscan_core::CallsInReasoning`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum CallsInReasoning {
    /// Reasoning, unless the completion never closes the block (then a
    /// call, sent at the end).
    Text,
    /// A call, at once.
    Call,
}

impl CallsInReasoning {
    /// The core's option for this choice.
    pub fn core(self) -> toolscan_core::CallsInReasoning {
        match self {
            CallsInReasoning::Text => toolscan_core::CallsInReasoning::Text,
            CallsInReasoning::Call => toolscan_core::CallsInReasoning::Call,
        }
    }
}

/// How call ids are minted when the format carries none.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Ids {
    /// `call_` + 24 alphanumerics from a fixed seed (reproducible).
    Seeded,
    /// `call_` + 24 alphanumerics from a random seed.
    Random,
    /// Mistral's 9 alphanumerics, from a fixed seed (reproducible).
    Mistral,
}

impl Ids {
    /// The core's minting scheme for this choice.
    pub fn mint(self) -> toolscan_core::IdMint {
        match self {
            Ids::Seeded => toolscan_core::IdMint::Seeded(0),
            Ids::Random => toolscan_core::IdMint::Random,
            Ids::Mistral => toolscan_core::IdMint::Mistral(0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn definitions_are_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn defaults() {
        let cli = Cli::try_parse_from(["toolscan", "parse"]).unwrap();
        let Command::Parse(p) = cli.command else {
            panic!("expected parse");
        };
        assert_eq!(p.content.format, None);
        assert_eq!(p.content.format_file, None);
        assert_eq!(p.output, Output::Events);
        assert_eq!(p.content.ids, Ids::Seeded);
        assert_eq!(p.chunk, None);
        assert!(!p.content.reasoning);
        assert!(!p.content.starts_in_reasoning);
        assert_eq!(p.content.calls_in_reasoning, CallsInReasoning::Text);
        assert_eq!(p.input, None);
        assert_eq!(p.content.limits.limits(), Limits::default());
    }

    #[test]
    fn sse_defaults() {
        let cli = Cli::try_parse_from(["toolscan", "sse"]).unwrap();
        let Command::Sse(a) = cli.command else {
            panic!("expected sse");
        };
        let c = &a.content;
        assert_eq!(
            (&c.format, &c.model, &c.tools, &a.input),
            (&None, &None, &None, &None)
        );
        assert!(!c.reasoning);
        assert_eq!(c.ids, Ids::Seeded);
        let cli = Cli::try_parse_from([
            "toolscan",
            "sse",
            "--format",
            "hermes",
            "--reasoning",
            "--starts-in-reasoning",
            "x.sse",
        ])
        .unwrap();
        let Command::Sse(a) = cli.command else {
            panic!("expected sse");
        };
        assert_eq!(a.content.format.as_deref(), Some("hermes"));
        assert!(a.content.reasoning && a.content.starts_in_reasoning);
        assert_eq!(a.input, Some(PathBuf::from("x.sse")));
    }

    #[test]
    fn format_file_is_taken_by_parse_sse_and_formats() {
        for sub in ["parse", "sse", "formats"] {
            let cli = Cli::try_parse_from(["toolscan", sub, "--format-file", "my.json"]).unwrap();
            let file = match cli.command {
                Command::Parse(a) => a.content.format_file,
                Command::Sse(a) => a.content.format_file,
                Command::Formats(a) => a.format_file,
                other => panic!("{other:?}"),
            };
            assert_eq!(file, Some(PathBuf::from("my.json")), "{sub}");
        }
        let cli = Cli::try_parse_from([
            "toolscan",
            "proxy",
            "--upstream",
            "http://127.0.0.1:1",
            "--format-file",
            "my.json",
        ])
        .unwrap();
        let Command::Proxy(a) = cli.command else {
            panic!("expected proxy");
        };
        assert_eq!(a.format_file, Some(PathBuf::from("my.json")));
    }

    #[test]
    fn calls_in_reasoning_is_taken_by_parse_sse_and_proxy() {
        for sub in [
            &["parse"][..],
            &["sse"],
            &["proxy", "--upstream", "http://127.0.0.1:1"],
        ] {
            let mut argv = vec!["toolscan"];
            argv.extend_from_slice(sub);
            argv.extend(["--calls-in-reasoning", "call"]);
            let calls = match Cli::try_parse_from(&argv).unwrap().command {
                Command::Parse(a) => a.content.calls_in_reasoning,
                Command::Sse(a) => a.content.calls_in_reasoning,
                Command::Proxy(a) => match a.settings.model.calls_in_reasoning {
                    toolscan_core::CallsInReasoning::Call => CallsInReasoning::Call,
                    _ => CallsInReasoning::Text,
                },
                other => panic!("{other:?}"),
            };
            assert_eq!(calls, CallsInReasoning::Call, "{sub:?}");
        }
        // starting inside reasoning holds calls with separation off too
        assert!(Cli::try_parse_from(["toolscan", "parse", "--starts-in-reasoning"]).is_ok());
    }

    #[test]
    fn limit_flags_set_the_limits() {
        let cli = Cli::try_parse_from([
            "toolscan",
            "parse",
            "--max-call-bytes",
            "100",
            "--max-depth",
            "3",
            "--max-holdback",
            "50",
            "--max-name-bytes",
            "7",
        ])
        .unwrap();
        let Command::Parse(p) = cli.command else {
            panic!("expected parse");
        };
        let l = p.content.limits.limits();
        assert_eq!(
            (
                l.max_call_bytes,
                l.max_depth,
                l.max_holdback,
                l.max_name_bytes
            ),
            (100, 3, 50, 7)
        );
    }

    #[test]
    fn usage_errors_exit_2() {
        for argv in [
            &["toolscan", "parse", "--bogus"][..],
            &["toolscan", "parse", "--chunk", "0"],
            &["toolscan", "parse", "--chunk", "random:x"],
            &["toolscan", "parse", "--output", "yaml"],
            &["toolscan", "parse", "--max-call-bytes", "0"],
            &["toolscan", "parse", "--max-depth", "0"],
            &["toolscan", "parse", "--max-holdback", "0"],
            &["toolscan", "parse", "--max-name-bytes", "0"],
            &["toolscan", "nope"],
            &["toolscan", "sse", "--bogus"],
            &["toolscan", "sse", "a", "b"],
            &["toolscan", "sse", "--ids", "nope"],
            &["toolscan", "parse", "--calls-in-reasoning", "maybe"],
        ] {
            let err = Cli::try_parse_from(argv).unwrap_err();
            assert_eq!(err.exit_code(), 2, "{argv:?}");
        }
    }
}
