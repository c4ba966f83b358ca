//! How responses are rewritten ([`Config`]).

use std::sync::Arc;

use toolscan_core::{Grammar, Options};

use crate::tally::Tally;

/// How responses are rewritten: the format each choice's content is read
/// with, and the parser options (tools, reasoning, ids).
///
/// ```
/// use toolscan_core::{Options, Registry};
/// use toolscan_sse::Config;
///
/// let grammar = Registry::builtin().grammar("hermes").unwrap();
/// let config = Config::new(grammar).with_options(Options::new().with_reasoning(true));
/// assert!(config.complete_at_stop);
/// ```
#[derive(Clone, Debug)]
pub struct Config {
    /// The compiled format (`Registry::grammar`).
    pub grammar: Arc<Grammar>,
    /// Options for each choice's parser. Their `complete_at_stop` is
    /// replaced by [`Config::complete_at_stop`]; an
    /// [`IdMint::Seeded`](toolscan_core::IdMint::Seeded) (or `Mistral`)
    /// seed is shifted per choice so that choices never share an id
    /// (choice 0 uses it as given).
    pub options: Options,
    /// Whether a choice the upstream ended with `finish_reason: "stop"`
    /// completes a call whose closing markup a stop sequence cut (see
    /// [`Options::complete_at_stop`]). Default: `true`.
    pub complete_at_stop: bool,
    /// Where the calls and diagnostics found are counted, if anywhere.
    pub tally: Option<Arc<Tally>>,
}

impl Config {
    /// Reads content with `grammar`, default options, `complete_at_stop`
    /// on.
    pub fn new(grammar: Arc<Grammar>) -> Config {
        Config {
            grammar,
            options: Options::default(),
            complete_at_stop: true,
            tally: None,
        }
    }

    /// Counts the calls and diagnostics found into `tally`.
    pub fn with_tally(mut self, tally: Arc<Tally>) -> Config {
        self.tally = Some(tally);
        self
    }

    /// Sets the parser options.
    pub fn with_options(mut self, options: Options) -> Config {
        self.options = options;
        self
    }

    /// Sets [`Config::complete_at_stop`].
    pub fn with_complete_at_stop(mut self, on: bool) -> Config {
        self.complete_at_stop = on;
        self
    }
}
