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
/// assert!(!config.stream_arguments, "a call is sent whole, once it ended");
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
    /// Whether a call's arguments are sent as they stream (`false`, the
    /// default: a call's `tool_calls` entry — id, name and all its
    /// arguments — is sent in the chunk where its end is confirmed, and a
    /// call that fails or is cut short never produces one: its markup is
    /// `content`, as the upstream sent it).
    ///
    /// `true` sends a call's first entry (id, name) when it starts and its
    /// arguments as they come, for UIs that show them live. A call that
    /// then breaks (malformed JSON, a stray closer, the token limit) has
    /// already sent its entries with partial arguments (`{"city": `), and
    /// its markup follows as `content`: clients that parse the arguments
    /// of every entry they received (`openai-python`'s `.stream()` with a
    /// typed tool, the AI SDK) then fail on a call the model never
    /// completed. With [`Check::Reject`](toolscan_core::Check::Reject)
    /// calls wait for their end either way.
    pub stream_arguments: bool,
    /// Where the calls and diagnostics found are counted, if anywhere.
    pub tally: Option<Arc<Tally>>,
    /// The most distinct choice `index`es a stream may bring (each has a
    /// parser of its own): a chunk that brings one more ends the stream
    /// with [`RewriteError::TooManyChoices`](crate::RewriteError::TooManyChoices)
    /// after what came before it. Default 128 (OpenAI's largest `n`).
    pub max_choices: usize,
}

impl Config {
    /// Reads content with `grammar`, default options, `complete_at_stop`
    /// on, `stream_arguments` off.
    pub fn new(grammar: Arc<Grammar>) -> Config {
        Config {
            grammar,
            options: Options::default(),
            complete_at_stop: true,
            stream_arguments: false,
            tally: None,
            max_choices: 128,
        }
    }

    /// Sets [`Config::max_choices`].
    pub fn with_max_choices(mut self, max: usize) -> Config {
        self.max_choices = max;
        self
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

    /// Sets [`Config::stream_arguments`].
    pub fn with_stream_arguments(mut self, on: bool) -> Config {
        self.stream_arguments = on;
        self
    }

    /// Sets [`Config::complete_at_stop`].
    pub fn with_complete_at_stop(mut self, on: bool) -> Config {
        self.complete_at_stop = on;
        self
    }
}
