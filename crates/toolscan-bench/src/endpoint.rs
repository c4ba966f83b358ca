//! Where requests go: an OpenAI-compatible server, given by its origin
//! (`http://host:8000`), its `/v1` base URL or its full
//! `/v1/chat/completions` URL.

use crate::error::SetupError;

/// A server's chat completions URL and its model list URL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Endpoint {
    /// The URL as the user gave it (what outputs print).
    pub given: String,
    /// `…/v1/chat/completions`.
    pub chat_url: String,
    /// `…/v1/models` (asked for a model id when none is given).
    pub models_url: String,
}

impl Endpoint {
    /// Reads `url`: `http(s)://host[:port][/prefix]`, with or without a
    /// final `/v1` or `/v1/chat/completions`.
    ///
    /// ```
    /// use toolscan_bench::Endpoint;
    /// for url in ["http://127.0.0.1:8000", "http://127.0.0.1:8000/v1/",
    ///             "http://127.0.0.1:8000/v1/chat/completions"] {
    ///     let e = Endpoint::parse(url).unwrap();
    ///     assert_eq!(e.chat_url, "http://127.0.0.1:8000/v1/chat/completions");
    ///     assert_eq!(e.models_url, "http://127.0.0.1:8000/v1/models");
    /// }
    /// assert!(Endpoint::parse("127.0.0.1:8000").is_err());
    /// ```
    pub fn parse(url: &str) -> Result<Endpoint, SetupError> {
        let trimmed = url.trim();
        let rest = trimmed
            .strip_prefix("http://")
            .or_else(|| trimmed.strip_prefix("https://"));
        match rest {
            Some(host) if !host.is_empty() && !host.starts_with('/') => {}
            _ => {
                return Err(SetupError(format!(
                    "`{url}` is not an http:// or https:// URL of an OpenAI-compatible server"
                )))
            }
        }
        let mut base = trimmed.trim_end_matches('/');
        base = base.strip_suffix("/chat/completions").unwrap_or(base);
        base = base.strip_suffix("/v1").unwrap_or(base);
        Ok(Endpoint {
            given: trimmed.to_owned(),
            chat_url: format!("{base}/v1/chat/completions"),
            models_url: format!("{base}/v1/models"),
        })
    }
}
