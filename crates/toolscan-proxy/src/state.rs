//! The settings resolved once, which every request shares ([`Proxy`]): the
//! HTTP client, the upstream's base URL, the grammars by model.

use std::collections::HashMap;
use std::sync::Arc;

use crate::cut::Cut;
use axum::http::Uri;
use serde_json::Value;
use toolscan_core::{format_for_model, Check, Grammar, IdMint, Options, Tools};
use toolscan_sse::Tally;
use tracing::warn;

use crate::redact::redact;
use crate::settings::{ModelSettings, Settings};
use crate::upstream::Client;
use crate::{ConfigError, Metrics};

/// The resolved configuration every request shares.
pub(crate) struct Proxy {
    pub(crate) settings: Settings,
    pub(crate) client: Client,
    /// The configured URL ended in `/v1`, dropped from `base`.
    pub(crate) api_base: bool,
    /// `Some`: every completion is read with this.
    fixed: Option<(String, Arc<Grammar>)>,
    /// Model id → format.
    by_model: HashMap<String, (String, Arc<Grammar>)>,
    auto: Arc<Grammar>,
    /// `settings.metrics`, or counters nobody reads.
    pub(crate) metrics: Metrics,
    /// Cancelled at the end of the shutdown grace period: the streams
    /// still open end with an error event.
    pub(crate) cut: Cut,
    /// The kept responses (`--responses-store N`, N > 0).
    pub(crate) responses: Option<Arc<crate::responses::ResponseStore>>,
}

/// The upstream's base URL (no trailing `/`, no `/v1` API base), and
/// whether it ended in `/v1`.
fn base_of(upstream: &str) -> Result<(String, bool), ConfigError> {
    let refuse = |reason: &str| ConfigError::Upstream {
        url: redact(upstream),
        reason: reason.into(),
    };
    let url = reqwest::Url::parse(upstream).map_err(|e| refuse(&e.to_string()))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(refuse("the scheme must be http or https"));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(refuse("no host"));
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(refuse("a query or fragment cannot be a prefix"));
    }
    let base = url.as_str().trim_end_matches('/');
    // The `/v1` base URL of OpenAI-style servers: requests bring their
    // own `/v1`.
    Ok(match base.strip_suffix("/v1") {
        Some(origin) => (origin.to_owned(), true),
        None => (base.to_owned(), false),
    })
}

impl Proxy {
    pub(crate) fn new(settings: &Settings) -> Result<Proxy, ConfigError> {
        let (base, api_base) = base_of(&settings.upstream)?;
        let registry = &settings.registry;
        let grammar = |name: &str| {
            registry
                .grammar(name)
                .map(|g| (name.to_owned(), g))
                .map_err(ConfigError::Format)
        };
        let fixed = match settings.format.as_deref() {
            None | Some("auto") => None,
            Some(name) => Some(grammar(name)?),
        };
        let routed = settings
            .routes
            .iter()
            .filter_map(|(m, r)| r.format.as_ref().map(|f| (m, f)));
        let by_model = settings
            .model_map
            .iter()
            .chain(routed)
            .map(|(model, format)| Ok((model.clone(), grammar(format)?)))
            .collect::<Result<_, ConfigError>>()?;
        let auto = registry.grammar("auto").map_err(ConfigError::Format)?;
        let client = Client::new(&base, settings.connect_timeout)?;
        Ok(Proxy {
            metrics: settings.metrics.clone().unwrap_or_default(),
            settings: settings.clone(),
            client,
            api_base,
            fixed,
            by_model,
            auto,
            cut: Cut::default(),
            responses: (settings.responses_store > 0).then(|| {
                Arc::new(crate::responses::ResponseStore::new(
                    settings.responses_store,
                    settings.responses_store_ttl,
                ))
            }),
        })
    }

    /// The format a request's completion is read with.
    pub(crate) fn grammar_for(&self, model: Option<&str>) -> (String, Arc<Grammar>) {
        if let Some(fixed) = &self.fixed {
            return fixed.clone();
        }
        if let Some(model) = model {
            if let Some(mapped) = self.by_model.get(model) {
                return mapped.clone();
            }
            let registry = &self.settings.registry;
            if let Some(name) = format_for_model(model) {
                if registry.get(name).is_some() {
                    if let Ok(g) = registry.grammar(name) {
                        return (name.to_owned(), g);
                    }
                }
            }
        }
        ("auto".to_owned(), Arc::clone(&self.auto))
    }

    /// The content options for `model`: the proxy's, with its route's.
    pub(crate) fn model_settings(&self, model: Option<&str>) -> ModelSettings {
        let route = model.and_then(|m| self.settings.routes.get(m));
        self.settings.model.with_route(route)
    }

    /// How a request's completion is read, from what the request asks
    /// (`tools`, `tool_choice`, `parallel_tool_calls`); `None`: it is
    /// passed on as it comes.
    pub(crate) fn options_for(&self, request: Option<&Value>) -> Option<Options> {
        let field = |name: &str| request.and_then(|r| r.get(name));
        let m = self.model_settings(field("model").and_then(Value::as_str));
        let tools = field("tools").filter(|t| t.as_array().is_some_and(|a| !a.is_empty()));
        let choice = field("tool_choice");
        let none = choice.and_then(Value::as_str) == Some("none");
        let calls = !none && (tools.is_some() || m.parse_always);
        if !calls && !m.reasoning {
            return None;
        }
        // Random ids: seeded ones would repeat across the turns of a
        // conversation. (A call a `stop` sequence cut is completed by the
        // rewrite: `Config::complete_at_stop`.)
        let mut options = Options::new()
            .with_ids(IdMint::Random)
            .with_reasoning(m.reasoning)
            .with_starts_in_reasoning(m.starts_in_reasoning)
            .with_calls_in_reasoning(m.calls_in_reasoning)
            .with_normalize_tool_names(!self.settings.keep_tool_names)
            .with_limits(self.settings.limits);
        if !calls {
            // Reasoning only: call markup stays content.
            return Some(options.with_max_calls(0));
        }
        if let Some(tools) = tools {
            match Tools::from_json(tools) {
                Ok(tools) => options = options.with_tools(tools),
                Err(e) => warn!(error = %e, "the request's tools are ignored"),
            }
        }
        if m.invalid_calls_as_text {
            options = options.with_check_calls(Check::Reject);
        }
        if field("parallel_tool_calls").and_then(Value::as_bool) == Some(false) {
            options = options.with_max_calls(1);
        }
        // A named function: `{"type": "function", "function": {"name": …}}`
        // (and the flat `{"type": "function", "name": …}`).
        if let Some(name) = choice
            .filter(|c| c.is_object())
            .and_then(|c| c.pointer("/function/name").or_else(|| c.get("name")))
            .and_then(Value::as_str)
        {
            options = options.with_only_tool(name);
        }
        Some(options)
    }

    /// How a read answer is rewritten: `grammar` and `options`, the
    /// model's `settings`, the proxy's bounds, counted in `tally`.
    pub(crate) fn rewrite_config(
        &self,
        grammar: Arc<Grammar>,
        options: Options,
        settings: &ModelSettings,
        tally: &Arc<Tally>,
    ) -> toolscan_sse::Config {
        toolscan_sse::Config::new(grammar)
            .with_options(options)
            .with_stream_arguments(settings.stream_arguments)
            .with_max_choices(self.settings.max_choices)
            .with_tally(Arc::clone(tally))
    }
}

/// A request's path and query: what of its target goes upstream, after
/// the upstream's base URL.
pub(crate) fn path_of(uri: &Uri) -> &str {
    uri.path_and_query().map_or("/", |p| p.as_str())
}

/// The settings, the upstream's user and password as `***`.
impl std::fmt::Debug for Settings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Settings")
            .field("upstream", &redact(&self.upstream))
            .field("format", &self.format)
            .field("model_map", &self.model_map)
            .field("routes", &self.routes)
            .field("model", &self.model)
            .field("keep_tool_names", &self.keep_tool_names)
            .field("forward_health", &self.forward_health)
            .field("responses", &self.responses)
            .field("responses_store", &self.responses_store)
            .field("responses_store_ttl", &self.responses_store_ttl)
            .field("limits", &self.limits)
            .field("metrics", &self.metrics)
            .field("connect_timeout", &self.connect_timeout)
            .field("upstream_idle_timeout", &self.upstream_idle_timeout)
            .field("request_body_timeout", &self.request_body_timeout)
            .field("max_request_bytes", &self.max_request_bytes)
            .field("max_sse_line", &self.max_sse_line)
            .field("max_response_bytes", &self.max_response_bytes)
            .field("max_sse_event", &self.max_sse_event)
            .field("max_choices", &self.max_choices)
            .field("header_read_timeout", &self.header_read_timeout)
            .field("max_connections", &self.max_connections)
            .field("shutdown_grace", &self.shutdown_grace)
            .field("registry", &self.registry)
            .finish()
    }
}

impl Settings {
    /// Checks the configuration: the upstream is an `http`/`https` URL, and
    /// every format named exists.
    pub fn validate(&self) -> Result<(), ConfigError> {
        Proxy::new(self).map(|_| ())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ProxyConfig;

    #[test]
    fn the_debug_form_never_shows_the_upstreams_password() {
        let shown = format!("{:?}", ProxyConfig::new("http://admin:S3CRET@host:8000/v1"));
        assert!(!shown.contains("S3CRET"), "{shown}");
        assert!(shown.contains("http://***@host:8000/v1"), "{shown}");
    }

    fn proxy(config: ProxyConfig) -> Proxy {
        Proxy::new(&config).expect("a valid configuration")
    }

    #[test]
    fn the_format_comes_from_the_config_then_the_map_then_the_family_then_auto() {
        let map: HashMap<String, String> =
            [("my-finetune".to_owned(), "mistral".to_owned())].into();
        let by_model = proxy(ProxyConfig::new("http://h:1").with_model_map(map.clone()));
        let name = |p: &Proxy, model: Option<&str>| p.grammar_for(model).0;
        assert_eq!(name(&by_model, Some("my-finetune")), "mistral");
        assert_eq!(name(&by_model, Some("Qwen/Qwen3-8B")), "hermes");
        assert_eq!(name(&by_model, Some("some-org/unknown")), "auto");
        assert_eq!(name(&by_model, None), "auto");
        let auto = proxy(
            ProxyConfig::new("http://h:1")
                .with_format("auto")
                .with_model_map(map.clone()),
        );
        assert_eq!(name(&auto, Some("my-finetune")), "mistral");
        let fixed = proxy(
            ProxyConfig::new("http://h:1")
                .with_format("hermes")
                .with_model_map(map),
        );
        assert_eq!(name(&fixed, Some("my-finetune")), "hermes");
        assert_eq!(name(&fixed, None), "hermes");
    }

    #[test]
    fn a_refused_upstream_is_printed_without_its_password() {
        let e = ProxyConfig::new("ftp://admin:S3CRET@h")
            .validate()
            .unwrap_err();
        assert!(!e.to_string().contains("S3CRET"), "{e}");
    }

    #[test]
    fn only_the_path_and_query_of_a_target_are_kept() {
        let uri: Uri = "http://elsewhere.invalid/v1/models?a=1".parse().unwrap();
        assert_eq!(path_of(&uri), "/v1/models?a=1");
        let uri: Uri = "http://elsewhere.invalid".parse().unwrap();
        assert_eq!(path_of(&uri), "/");
    }

    #[test]
    fn bad_upstreams_are_refused() {
        for url in [
            "",
            "upstream:8000",
            "ftp://h",
            "http://h:1/?q=1",
            "http://h:1/#f",
        ] {
            assert!(
                matches!(
                    ProxyConfig::new(url).validate(),
                    Err(ConfigError::Upstream { .. })
                ),
                "{url}"
            );
        }
    }
}
