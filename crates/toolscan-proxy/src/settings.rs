//! The proxy's settings, written once: [`Settings`] is the library's
//! configuration, the command line's `toolscan proxy` flags and their
//! `TOOLSCAN_*` variables (with the feature `cli`, it derives
//! [`clap::Args`]); the options a model map may set per model are
//! [`ModelSettings`], from which [`Route`] and its keys are made
//! (`model_settings!` below).
//!
//! A new option is its field here (its doc is its `--help` text, its
//! `#[arg]` its flag and variable), its default in [`Settings::new`] (for
//! a per-model option, both are one line of `model_settings!`), and the
//! code that uses it.

use std::collections::HashMap;
use std::time::Duration;

use serde_json::Value;
use toolscan_core::{CallsInReasoning, Limits, Registry};

use crate::{ConfigError, Metrics};

/// A value a model map may give a per-model option.
pub(crate) trait FromRoute: Sized {
    /// What the value must be, for the error message (`true or false`).
    const EXPECTED: &'static str;
    fn from_route(v: &Value) -> Option<Self>;
}

impl FromRoute for bool {
    const EXPECTED: &'static str = "true or false";
    fn from_route(v: &Value) -> Option<bool> {
        v.as_bool()
    }
}

impl FromRoute for CallsInReasoning {
    const EXPECTED: &'static str = "\"text\" or \"call\"";
    fn from_route(v: &Value) -> Option<CallsInReasoning> {
        match v.as_str()? {
            "text" => Some(CallsInReasoning::Text),
            "call" => Some(CallsInReasoning::Call),
            _ => None,
        }
    }
}

/// `--calls-in-reasoning text|call`.
#[cfg(feature = "cli")]
fn calls_in_reasoning(s: &str) -> Result<CallsInReasoning, String> {
    CallsInReasoning::from_route(&Value::String(s.to_owned()))
        .ok_or_else(|| format!("expected {}", CallsInReasoning::EXPECTED))
}

/// Declares the per-model options once: their field in [`ModelSettings`]
/// (with its flag), their `Option` in [`Route`], their key in a model map
/// (the field's name), their default and their builder on [`Settings`].
macro_rules! model_settings {
    ($( $(#[doc = $doc:literal])* #[arg($($arg:tt)*)]
        $name:ident: $ty:ty = $default:expr, $builder:ident; )*) => {
        /// The content options a model map may set per model (its
        /// [`Route`]s); the proxy's own are [`Settings::model`].
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        #[cfg_attr(feature = "cli", derive(clap::Args))]
        #[non_exhaustive]
        pub struct ModelSettings {
            $( $(#[doc = $doc])* #[cfg_attr(feature = "cli", arg($($arg)*))] pub $name: $ty, )*
        }

        impl Default for ModelSettings {
            fn default() -> ModelSettings {
                ModelSettings { $( $name: $default, )* }
            }
        }

        /// What the proxy does for one model: the format its completions
        /// are read with, and the content options that differ from the
        /// proxy's own (a thinking model behind the same proxy as one that
        /// does not think). `None` fields take the proxy's setting.
        ///
        /// ```
        /// use toolscan_proxy::{ProxyConfig, Route};
        /// let routes = ProxyConfig::parse_routes(r#"{
        ///     "my-finetune": "hermes",
        ///     "Qwen/Qwen3-32B": {"format": "hermes", "reasoning": true, "starts_in_reasoning": true}
        /// }"#).unwrap();
        /// assert_eq!(routes["my-finetune"], Route::format("hermes"));
        /// assert_eq!(routes["Qwen/Qwen3-32B"].starts_in_reasoning, Some(true));
        /// assert!(ProxyConfig::parse_routes(r#"{"m": {"reasoning": "yes"}}"#).is_err());
        /// ```
        #[derive(Clone, Debug, Default, PartialEq, Eq)]
        #[non_exhaustive]
        pub struct Route {
            /// The format (a name or alias of the registry).
            pub format: Option<String>,
            $( $(#[doc = $doc])* pub $name: Option<$ty>, )*
        }

        impl ModelSettings {
            /// These settings, with what `route` sets instead.
            pub fn with_route(self, route: Option<&Route>) -> ModelSettings {
                let Some(r) = route else { return self };
                ModelSettings { $( $name: r.$name.unwrap_or(self.$name), )* }
            }
        }

        impl Route {
            /// The model map's keys, besides `format`.
            pub const KEYS: &'static [&'static str] = &[$( stringify!($name), )*];

            /// Sets the option `key` from a model map's value: `Ok(false)`
            /// for a key that names none, `Err` with what it must be.
            pub(crate) fn set(&mut self, key: &str, v: &Value) -> Result<bool, &'static str> {
                match key {
                    $( stringify!($name) => {
                        self.$name = Some(<$ty as FromRoute>::from_route(v)
                            .ok_or(<$ty as FromRoute>::EXPECTED)?);
                    } )*
                    _ => return Ok(false),
                }
                Ok(true)
            }
        }

        impl Settings {
            $(
                #[doc = concat!("Sets [`ModelSettings::", stringify!($name), "`].")]
                pub fn $builder(mut self, value: $ty) -> Settings {
                    self.model.$name = value;
                    self
                }
            )*
        }
    };
}

model_settings! {
    /// Read calls even when a request lists no `tools` (agents that
    /// describe their tools in the prompt). Without it, as vLLM does, a
    /// request without `tools` or with `"tool_choice": "none"` gets the
    /// content as written; `"tool_choice": "none"` always wins.
    #[arg(long, env = "TOOLSCAN_PARSE_ALWAYS")]
    parse_always: bool = false, with_parse_always;

    /// Tool calling for models served without it: a request's `tools`
    /// become the format's manifest in the system message (at its
    /// `{{tools}}`, else after it), the history's calls and results become
    /// text, `tools`/`tool_choice` are not sent upstream; the answer's
    /// calls come back as `tool_calls`. Format `auto` is taken as
    /// `hermes` here.
    #[arg(long, env = "TOOLSCAN_EMULATE_TOOLS")]
    emulate_tools: bool = false, with_emulate_tools;

    /// Send a call that does not fit the request's `tools` (a tool not in
    /// them, a required parameter missing, a value of the wrong type or
    /// outside its `enum`) as content, its markup as written, instead of a
    /// `tool_calls` entry.
    #[arg(long, env = "TOOLSCAN_INVALID_CALLS_AS_TEXT")]
    invalid_calls_as_text: bool = false, with_invalid_calls_as_text;

    /// Stream a call's arguments as they come (for UIs that show them
    /// live). By default a call's `tool_calls` entry (id, name, all its
    /// arguments) goes out in the chunk that completes the call, and a call
    /// that breaks (malformed, cut by the token limit) is content, never an
    /// entry. With this flag a call that breaks after it began has already
    /// sent entries with partial arguments, and its markup follows as
    /// content: clients that parse every call they were sent then fail.
    #[arg(long, env = "TOOLSCAN_STREAM_ARGUMENTS")]
    stream_arguments: bool = false, with_stream_arguments;

    /// Separate reasoning (`<think>…</think>`) into `reasoning_content`.
    /// (Harmony's analysis channel is reasoning with or without it, when
    /// the completion is parsed.)
    #[arg(long, env = "TOOLSCAN_REASONING")]
    reasoning: bool = false, with_reasoning;

    /// Completions start inside a reasoning block whose opening marker was
    /// in the prompt (Qwen3, Kimi K2.5+ and R1 thinking templates), up to
    /// the first closing marker.
    #[arg(long, env = "TOOLSCAN_STARTS_IN_REASONING")]
    starts_in_reasoning: bool = false, with_starts_in_reasoning;

    /// What a call written inside a reasoning block is: `text` (the
    /// default: reasoning, unless the completion never closes the block)
    /// or `call` (a call, at once).
    #[arg(long, value_name = "text|call", default_value = "text",
          value_parser = calls_in_reasoning, env = "TOOLSCAN_CALLS_IN_REASONING")]
    calls_in_reasoning: CallsInReasoning = CallsInReasoning::Text, with_calls_in_reasoning;
}

/// `--…-timeout SECS`: a number of seconds, at least 0.001.
#[cfg(feature = "cli")]
fn seconds(s: &str) -> Result<Duration, String> {
    match s.parse::<f64>() {
        Ok(x) if (0.001..=1e9).contains(&x) => Ok(Duration::from_secs_f64(x)),
        _ => Err("expected a number of seconds (at least 0.001)".to_owned()),
    }
}

/// What the proxy does with `POST /v1/responses` (`--responses`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
#[non_exhaustive]
pub enum ResponsesMode {
    /// Served over the upstream's Chat Completions: the request
    /// translated into a chat request, the answer (its text calls read as
    /// on the chat route) into Responses output items or events.
    #[default]
    Translate,
    /// Forwarded as it came to an upstream that serves `/v1/responses`
    /// itself, the text calls of its answer rewritten into
    /// `function_call` items (when the request offers function tools).
    Passthrough,
    /// Forwarded untouched, like any other route.
    Off,
}

/// `BYTES`: a whole number, at least 1.
#[cfg(feature = "cli")]
fn at_least_one(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err("expected a whole number, at least 1".to_owned()),
    }
}

/// How the proxy runs: where it forwards to, how it reads completions,
/// its bounds. Each field with a flag is also the command line's
/// `toolscan proxy --FLAG` and its `TOOLSCAN_*` variable (feature `cli`:
/// `#[command(flatten)]` it); the others are set in code or from files
/// (`model_map`, `routes`: [`Settings::parse_routes`]; `registry`;
/// `metrics`; `limits`).
///
/// ```
/// use toolscan_proxy::ProxyConfig;
/// let config = ProxyConfig::new("http://127.0.0.1:8000").with_format("hermes");
/// assert!(config.validate().is_ok());
/// ```
///
/// Its `Debug` form shows the upstream with any user and password in it
/// as `***`.
#[derive(Clone)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
pub struct Settings {
    /// The OpenAI-compatible server to forward to: its origin, e.g.
    /// `http://127.0.0.1:8000`, or its `/v1` base URL (vLLM, llama.cpp,
    /// Ollama, LM Studio…). Requests keep their own path, `/v1/…`
    /// included; any other path in it is a prefix put before every
    /// request's path.
    #[cfg_attr(
        feature = "cli",
        arg(long, value_name = "URL", env = "TOOLSCAN_UPSTREAM")
    )]
    pub upstream: String,

    /// Format of every completion (see `toolscan formats`), or `auto`.
    /// Default: by each request's `model` (see `--model-map`), else `auto`.
    #[cfg_attr(
        feature = "cli",
        arg(long, value_name = "NAME|auto", env = "TOOLSCAN_FORMAT")
    )]
    pub format: Option<String>,

    /// Model id → format name, consulted when `format` does not fix one. A
    /// model not in it gets the format of its family (`format_for_model`)
    /// when this build has that format, else `auto`.
    #[cfg_attr(feature = "cli", arg(skip))]
    pub model_map: HashMap<String, String>,

    /// Model id → its format and content options (read from a model map
    /// file by [`Settings::parse_routes`]). Where both name a model, a
    /// route's format wins over `model_map`'s.
    #[cfg_attr(feature = "cli", arg(skip))]
    pub routes: HashMap<String, Route>,

    /// The content options, which a [`Route`] may change per model.
    #[cfg_attr(feature = "cli", command(flatten))]
    pub model: ModelSettings,

    /// Keep the name a model wrote for a call whose tool it named without
    /// (or with) the namespace the request declares it in (`exec` for
    /// `functions.exec`). By default such a call's `tool_calls` entry
    /// carries the declared name, the one the client dispatches by.
    #[cfg_attr(feature = "cli", arg(long, env = "TOOLSCAN_KEEP_TOOL_NAMES"))]
    pub keep_tool_names: bool,

    /// Forward `/health` and `/ready` to the upstream (a server that has
    /// its own) instead of answering them here. By default the proxy
    /// answers them on `--listen`: `/health` is `200` while it runs,
    /// `/ready` is `200` once the upstream answers (`503` else), for a
    /// load balancer or the container's `HEALTHCHECK` (`toolscan health
    /// URL`).
    #[cfg_attr(feature = "cli", arg(long, env = "TOOLSCAN_FORWARD_HEALTH"))]
    pub forward_health: bool,

    /// `POST /v1/responses`: `translate` (the default) serves the
    /// Responses API over the upstream's `/v1/chat/completions`, its text
    /// calls becoming `function_call` items; `passthrough` forwards it to
    /// an upstream that serves it and rewrites the text calls of its
    /// answer; `off` forwards it untouched.
    #[cfg_attr(
        feature = "cli",
        arg(
            long,
            value_name = "MODE",
            value_enum,
            default_value = "translate",
            env = "TOOLSCAN_RESPONSES"
        )
    )]
    pub responses: ResponsesMode,

    /// Responses kept in memory for `previous_response_id` (and the
    /// `item_reference`s of a later turn): the last N, each for
    /// `--responses-store-ttl`. 0 (the default): stateless, and a request
    /// naming an earlier response is a `400`. Kept in this process only:
    /// replicas behind a load balancer do not share them.
    #[cfg_attr(
        feature = "cli",
        arg(
            long,
            value_name = "N",
            default_value = "0",
            env = "TOOLSCAN_RESPONSES_STORE"
        )
    )]
    pub responses_store: usize,

    /// Seconds a kept response stays (see `--responses-store`).
    #[cfg_attr(feature = "cli", arg(long, value_name = "SECS", default_value = "3600",
        value_parser = seconds, env = "TOOLSCAN_RESPONSES_STORE_TTL"))]
    pub responses_store_ttl: Duration,

    /// The parser's limits (the command line has flags of its own for
    /// them, shared with `toolscan parse`).
    #[cfg_attr(feature = "cli", arg(skip))]
    pub limits: Limits,

    /// Where the proxy counts requests, calls, diagnostics, upstream
    /// errors and the latency it adds (serve [`Metrics::router`] on an
    /// address of its own). `None`: counted nowhere.
    #[cfg_attr(feature = "cli", arg(skip))]
    pub metrics: Option<Metrics>,

    /// Seconds connecting to the upstream may take.
    #[cfg_attr(feature = "cli", arg(long, value_name = "SECS", default_value = "10",
        value_parser = seconds, env = "TOOLSCAN_CONNECT_TIMEOUT"))]
    pub connect_timeout: Duration,

    /// Seconds the upstream may send nothing (before its answer, or between
    /// two reads of it) before the proxy gives up: `504` before the answer
    /// began, else an error event ends the stream.
    #[cfg_attr(feature = "cli", arg(long, value_name = "SECS", default_value = "300",
        value_parser = seconds, env = "TOOLSCAN_UPSTREAM_IDLE_TIMEOUT"))]
    pub upstream_idle_timeout: Duration,

    /// Seconds a client may take to send a chat request's body (`408`
    /// after).
    #[cfg_attr(feature = "cli", arg(long, value_name = "SECS", default_value = "60",
        value_parser = seconds, env = "TOOLSCAN_REQUEST_BODY_TIMEOUT"))]
    pub request_body_timeout: Duration,

    /// Largest chat request body, in bytes (`413`; a larger
    /// `Content-Length` is refused before the body is read). Other routes
    /// are streamed, without a limit.
    #[cfg_attr(feature = "cli", arg(long, value_name = "BYTES", default_value = "33554432",
        value_parser = at_least_one, env = "TOOLSCAN_MAX_REQUEST_BYTES"))]
    pub max_request_bytes: usize,

    /// Longest line of an upstream SSE answer, in bytes: a longer one ends
    /// the stream with an error event instead of being buffered.
    #[cfg_attr(feature = "cli", arg(long, value_name = "BYTES", default_value = "16777216",
        value_parser = at_least_one, env = "TOOLSCAN_MAX_SSE_LINE"))]
    pub max_sse_line: usize,

    /// Largest answer the upstream may send when it is read whole (a
    /// non-streamed chat completion), in bytes: a larger one (by its
    /// `Content-Length`, or as it arrives) is a `502`, not buffered.
    #[cfg_attr(feature = "cli", arg(long, value_name = "BYTES", default_value = "67108864",
        value_parser = at_least_one, env = "TOOLSCAN_MAX_RESPONSE_BYTES"))]
    pub max_response_bytes: usize,

    /// Largest event of an upstream SSE answer, in bytes, all its lines
    /// together (one event of many `data:` lines is buffered whole): a
    /// larger one is a `502` before the answer began, else an error event
    /// ends the stream.
    #[cfg_attr(feature = "cli", arg(long, value_name = "BYTES", default_value = "16777216",
        value_parser = at_least_one, env = "TOOLSCAN_MAX_SSE_EVENT"))]
    pub max_sse_event: usize,

    /// Most distinct choices (`index`es) an upstream stream may bring, each
    /// read by a parser of its own: one more is a `502` before the answer
    /// began, else an error event ends the stream.
    #[cfg_attr(feature = "cli", arg(long, value_name = "N", default_value = "128",
        value_parser = at_least_one, env = "TOOLSCAN_MAX_CHOICES"))]
    pub max_choices: usize,

    /// Seconds a client connection may take to send a request's headers,
    /// counted from when the connection opened or its previous answer
    /// ended: also the keep-alive idle timeout. The connection is closed
    /// after.
    #[cfg_attr(feature = "cli", arg(long, value_name = "SECS", default_value = "60",
        value_parser = seconds, env = "TOOLSCAN_HEADER_READ_TIMEOUT"))]
    pub header_read_timeout: Duration,

    /// Most client connections open at once; one more is answered `503`
    /// and closed (with a log line). Default: half the process's
    /// open-files limit (each connection may hold one to the upstream
    /// too), 512 where it cannot be read.
    #[cfg_attr(feature = "cli", arg(long, value_name = "N",
        value_parser = at_least_one, env = "TOOLSCAN_MAX_CONNECTIONS"))]
    pub max_connections: Option<usize>,

    /// Seconds requests in flight may take to finish after SIGINT/SIGTERM;
    /// streams still open then get an SSE error event and end.
    #[cfg_attr(feature = "cli", arg(long, value_name = "SECS", default_value = "30",
        value_parser = seconds, env = "TOOLSCAN_SHUTDOWN_GRACE"))]
    pub shutdown_grace: Duration,

    /// The formats names refer to: [`Registry::builtin`], plus any a user
    /// registered (a format described in a file, say).
    #[cfg_attr(feature = "cli", arg(skip = Registry::builtin()))]
    pub registry: Registry,
}

/// The name the proxy's configuration had first.
pub type ProxyConfig = Settings;

impl Settings {
    /// Forwards to `upstream`; format by model, no reasoning separation;
    /// the defaults of the command line.
    pub fn new(upstream: impl Into<String>) -> Settings {
        Settings {
            upstream: upstream.into(),
            format: None,
            model_map: HashMap::new(),
            routes: HashMap::new(),
            model: ModelSettings::default(),
            keep_tool_names: false,
            forward_health: false,
            responses: ResponsesMode::Translate,
            responses_store: 0,
            responses_store_ttl: Duration::from_secs(3600),
            limits: Limits::default(),
            metrics: None,
            connect_timeout: Duration::from_secs(10),
            upstream_idle_timeout: Duration::from_secs(300),
            request_body_timeout: Duration::from_secs(60),
            max_request_bytes: 32 << 20,
            max_sse_line: 16 << 20,
            max_response_bytes: 64 << 20,
            max_sse_event: 16 << 20,
            max_choices: 128,
            header_read_timeout: Duration::from_secs(60),
            max_connections: None,
            shutdown_grace: Duration::from_secs(30),
            registry: Registry::builtin(),
        }
    }

    /// Reads format names in `registry` (the built-in formats and the
    /// user's own: see [`Registry::register_file`]).
    pub fn with_registry(mut self, registry: Registry) -> Settings {
        self.registry = registry;
        self
    }

    /// Reads every completion with the format `name` (`auto` means: by
    /// model).
    pub fn with_format(mut self, name: impl Into<String>) -> Settings {
        self.format = Some(name.into());
        self
    }

    /// Sets the model → format map.
    pub fn with_model_map(mut self, map: HashMap<String, String>) -> Settings {
        self.model_map = map;
        self
    }

    /// Gives calls the declared names of their tools (on by default; see
    /// [`Settings::keep_tool_names`]).
    pub fn with_normalize_tool_names(mut self, on: bool) -> Settings {
        self.keep_tool_names = !on;
        self
    }

    /// Sets [`Settings::upstream_idle_timeout`].
    pub fn with_upstream_idle_timeout(mut self, t: Duration) -> Settings {
        self.upstream_idle_timeout = t;
        self
    }

    /// Sets [`Settings::max_sse_line`].
    pub fn with_max_sse_line(mut self, bytes: usize) -> Settings {
        self.max_sse_line = bytes;
        self
    }

    /// Sets [`Settings::shutdown_grace`].
    pub fn with_shutdown_grace(mut self, t: Duration) -> Settings {
        self.shutdown_grace = t;
        self
    }

    /// Counts into `metrics` (see [`Settings::metrics`]).
    pub fn with_metrics(mut self, metrics: Metrics) -> Settings {
        self.metrics = Some(metrics);
        self
    }

    /// Sets the parser's limits.
    pub fn with_limits(mut self, limits: Limits) -> Settings {
        self.limits = limits;
        self
    }

    /// Sets the per-model routes (see [`Settings::routes`]).
    pub fn with_routes(mut self, routes: HashMap<String, Route>) -> Settings {
        self.routes = routes;
        self
    }

    /// Reads a model map from JSON text: an object of model id → format
    /// name (see [`Settings::parse_routes`] for settings per model).
    ///
    /// ```
    /// use toolscan_proxy::ProxyConfig;
    /// let map = ProxyConfig::parse_model_map(r#"{"my-finetune": "hermes"}"#).unwrap();
    /// assert_eq!(map["my-finetune"], "hermes");
    /// assert!(ProxyConfig::parse_model_map(r#"["hermes"]"#).is_err());
    /// ```
    pub fn parse_model_map(text: &str) -> Result<HashMap<String, String>, ConfigError> {
        let value: Value =
            serde_json::from_str(text).map_err(|e| ConfigError::ModelMap(e.to_string()))?;
        let Value::Object(object) = value else {
            return Err(ConfigError::ModelMap(
                "expected a JSON object of model id → format name".into(),
            ));
        };
        object
            .into_iter()
            .map(|(model, format)| match format {
                Value::String(format) => Ok((model, format)),
                _ => Err(ConfigError::ModelMap(format!(
                    "the format of model `{model}` is not a string"
                ))),
            })
            .collect()
    }
}
