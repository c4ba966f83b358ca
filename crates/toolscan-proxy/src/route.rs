//! Per-model settings: what a model map says about one model id.

use std::collections::HashMap;

use serde_json::Value;
use toolscan_core::CallsInReasoning;

use crate::config_error::ConfigError;

/// What the proxy does for one model: the format its completions are read
/// with, and the content options that differ from the proxy's own (a
/// thinking model behind the same proxy as one that does not think).
/// `None` fields take the proxy's setting.
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
    /// Reasoning separation.
    pub reasoning: Option<bool>,
    /// Completions start inside a reasoning block.
    pub starts_in_reasoning: Option<bool>,
    /// What call markup inside reasoning is.
    pub calls_in_reasoning: Option<CallsInReasoning>,
    /// Read calls even without `tools` in the request.
    pub parse_always: Option<bool>,
    /// Emulate tool calling (see
    /// [`ProxyConfig::emulate_tools`](crate::ProxyConfig::emulate_tools)).
    pub emulate_tools: Option<bool>,
    /// Calls that do not fit the request's `tools` are content (see
    /// [`ProxyConfig::invalid_calls_as_text`](crate::ProxyConfig::invalid_calls_as_text)).
    pub invalid_calls_as_text: Option<bool>,
    /// Stream a call's arguments as they come (see
    /// [`ProxyConfig::stream_arguments`](crate::ProxyConfig::stream_arguments)).
    pub stream_arguments: Option<bool>,
}

impl Route {
    /// A route that only names a format.
    pub fn format(name: impl Into<String>) -> Route {
        Route {
            format: Some(name.into()),
            ..Route::default()
        }
    }
}

/// Reads a model map: an object of model id → format name, or → an object
/// of `format`, `reasoning`, `starts_in_reasoning`, `calls_in_reasoning`
/// (`"text"` or `"call"`), `parse_always`, `emulate_tools`,
/// `invalid_calls_as_text` and `stream_arguments`.
pub(crate) fn parse(text: &str) -> Result<HashMap<String, Route>, ConfigError> {
    let bad = |why: String| ConfigError::ModelMap(why);
    let value: Value = serde_json::from_str(text).map_err(|e| bad(e.to_string()))?;
    let Value::Object(object) = value else {
        return Err(bad(
            "expected a JSON object of model id → format name (or settings)".into(),
        ));
    };
    object
        .into_iter()
        .map(|(model, v)| {
            let route = match v {
                Value::String(format) => Route::format(format),
                Value::Object(o) => {
                    let mut r = Route::default();
                    for (key, v) in o {
                        let flag = |v: &Value| {
                            v.as_bool().ok_or_else(|| {
                                bad(format!("`{key}` of model `{model}` is not true or false"))
                            })
                        };
                        match key.as_str() {
                            "format" => {
                                r.format = Some(v.as_str().map(str::to_owned).ok_or_else(|| {
                                    bad(format!("the format of model `{model}` is not a string"))
                                })?)
                            }
                            "reasoning" => r.reasoning = Some(flag(&v)?),
                            "starts_in_reasoning" => r.starts_in_reasoning = Some(flag(&v)?),
                            "parse_always" => r.parse_always = Some(flag(&v)?),
                            "emulate_tools" => r.emulate_tools = Some(flag(&v)?),
                            "invalid_calls_as_text" => r.invalid_calls_as_text = Some(flag(&v)?),
                            "stream_arguments" => r.stream_arguments = Some(flag(&v)?),
                            "calls_in_reasoning" => {
                                r.calls_in_reasoning = Some(match v.as_str() {
                                    Some("text") => CallsInReasoning::Text,
                                    Some("call") => CallsInReasoning::Call,
                                    _ => {
                                        return Err(bad(format!(
                                            "`calls_in_reasoning` of model `{model}` is not \
                                             \"text\" or \"call\""
                                        )))
                                    }
                                })
                            }
                            other => {
                                return Err(bad(format!(
                                    "unknown setting `{other}` for model `{model}`"
                                )))
                            }
                        }
                    }
                    r
                }
                _ => {
                    return Err(bad(format!(
                        "model `{model}`: expected a format name or an object of settings"
                    )))
                }
            };
            Ok((model, route))
        })
        .collect()
}
