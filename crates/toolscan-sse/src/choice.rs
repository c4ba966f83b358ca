//! One choice of a response: its parser and its delta rules.

use toolscan_core::{IdMint, Parser};

use crate::config::Config;
use crate::deltas::{Delta, Deltas};

/// The parser options of choice `index`: the configured ones, with
/// `complete_at_stop` from the [`Config`], and a seeded id scheme shifted
/// per choice so that two choices never mint the same id (choice 0 keeps
/// the seed as given, so its ids are those `toolscan parse` prints).
pub(crate) fn parser_for(config: &Config, index: u64) -> Parser {
    let mut options = config.options.clone();
    options.complete_at_stop = config.complete_at_stop;
    let shift = index.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    options.ids = match options.ids {
        IdMint::Seeded(seed) => IdMint::Seeded(seed.wrapping_add(shift)),
        IdMint::Mistral(seed) => IdMint::Mistral(seed.wrapping_add(shift)),
        other => other,
    };
    Parser::new(config.grammar.clone(), options)
}

/// The `finish_reason` to send for a choice the upstream ended with
/// `upstream` after `completed` text calls completed in it: `"length"` is
/// kept (the output was cut, whatever came before), else `"tool_calls"`
/// when a text call completed, else the upstream's own.
pub(crate) fn finish_reason(upstream: &str, completed: usize) -> &str {
    if upstream != "length" && completed > 0 {
        "tool_calls"
    } else {
        upstream
    }
}

/// Everything one choice keeps between chunks.
#[derive(Debug)]
pub(crate) struct Choice {
    /// The choice's parser.
    pub(crate) parser: Parser,
    /// Its delta rules (output indices, calls held until they end).
    pub(crate) deltas: Deltas,
    /// Whether the parser was finished.
    pub(crate) finished: bool,
}

impl Choice {
    pub(crate) fn new(config: &Config, index: u64) -> Choice {
        Choice {
            parser: parser_for(config, index),
            deltas: Deltas::for_config(config),
            finished: false,
        }
    }

    /// Feeds `content`; its pieces go into `out`.
    pub(crate) fn feed(&mut self, content: &str, out: &mut Delta) {
        self.parser
            .feed_str_with(content, &mut self.deltas.sink(out));
    }

    /// Ends the parser as the upstream's `finish_reason` says (see
    /// [`finish_reason`]); the remaining pieces go into `out`.
    pub(crate) fn finish(&mut self, upstream_reason: Option<&str>, out: &mut Delta) {
        self.finished = true;
        let mut sink = self.deltas.sink(out);
        if upstream_reason == Some("stop") {
            self.parser.finish_at_stop_with(&mut sink);
        } else {
            self.parser.finish_with(&mut sink);
        }
    }
}
