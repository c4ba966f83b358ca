//! Per-model settings: what a model map says about one model id (a
//! [`Route`], declared with [`ModelSettings`](crate::ModelSettings) in
//! `settings.rs`).

use std::collections::HashMap;

use serde_json::Value;

use crate::config_error::ConfigError;
pub use crate::settings::Route;

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
/// of `format` and the per-model options ([`Route::KEYS`]).
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
                        if key == "format" {
                            r.format = Some(v.as_str().map(str::to_owned).ok_or_else(|| {
                                bad(format!("the format of model `{model}` is not a string"))
                            })?);
                            continue;
                        }
                        match r.set(&key, &v) {
                            Ok(true) => {}
                            Ok(false) => {
                                return Err(bad(format!(
                                    "unknown setting `{key}` for model `{model}`"
                                )))
                            }
                            Err(expected) => {
                                return Err(bad(format!(
                                    "`{key}` of model `{model}` is not {expected}"
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

impl crate::Settings {
    /// Reads a model map, as the command line's `--model-map FILE` holds:
    /// an object of model id → format name, or → an object of settings
    /// (`format` and the fields of [`ModelSettings`](crate::ModelSettings): [`Route::KEYS`])
    /// that override the proxy's own for that model.
    pub fn parse_routes(text: &str) -> Result<HashMap<String, Route>, ConfigError> {
        parse(text)
    }
}
