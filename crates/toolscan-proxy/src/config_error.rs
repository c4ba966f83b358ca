//! A configuration the proxy cannot run with ([`ConfigError`]).

use std::fmt;

/// A configuration the proxy cannot run with.
#[derive(Debug)]
#[non_exhaustive]
pub enum ConfigError {
    /// The upstream is not an `http`/`https` URL with a host.
    Upstream {
        /// The URL as given.
        url: String,
        /// Why it is refused.
        reason: String,
    },
    /// A format named by `format` or the model map is unknown.
    Format(toolscan_core::Error),
    /// The model map is not a JSON object of strings.
    ModelMap(String),
    /// The HTTP client could not be built (TLS backend initialisation).
    Client(reqwest::Error),
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigError::Upstream { url, reason } => {
                write!(f, "invalid upstream `{url}`: {reason}")
            }
            ConfigError::Format(e) => e.fmt(f),
            ConfigError::ModelMap(why) => write!(f, "invalid model map: {why}"),
            ConfigError::Client(e) => write!(f, "cannot build the HTTP client: {e}"),
        }
    }
}

impl std::error::Error for ConfigError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ConfigError::Format(e) => Some(e),
            ConfigError::Client(e) => Some(e),
            _ => None,
        }
    }
}
