//! One choice of a response: its parser, the output indices of its calls,
//! and the sink that turns the parser's events into the pieces of one
//! OpenAI delta (or message).

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value};
use toolscan_core::{Check, EventRef, FinishReason, IdMint, Parser, Sink};

use crate::config::Config;

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

/// The output indices of a choice's tool calls, native and from text.
///
/// A native call (the upstream's own `delta.tool_calls`) keeps its index,
/// unless a text call already took it: then it gets the next free index,
/// and keeps that one for the rest of the stream. A text call gets the
/// next free index (one above every index used so far in the choice) when
/// it starts. With only native calls, or only text calls, nothing is
/// renumbered; text calls are `0, 1, 2…` as the parser numbers them.
#[derive(Debug, Default)]
pub(crate) struct Indices {
    /// Output index of each text call, by the parser's index (a call that
    /// is held and then rejected never gets one).
    text: HashMap<usize, u64>,
    /// Output index of each native call, by its upstream index.
    native: HashMap<u64, u64>,
    /// Every output index handed out.
    used: HashSet<u64>,
    /// One above the largest index handed out.
    next: u64,
}

impl Indices {
    /// The output index of text call `index` (the parser's), allocating
    /// one at its start.
    fn text(&mut self, index: usize) -> u64 {
        if let Some(&i) = self.text.get(&index) {
            return i;
        }
        let i = self.take_next();
        self.text.insert(index, i);
        i
    }

    /// The output index of native call `index` (the upstream's).
    pub(crate) fn native(&mut self, index: u64) -> u64 {
        if let Some(&i) = self.native.get(&index) {
            return i;
        }
        let out = if self.used.contains(&index) {
            self.take_next()
        } else {
            self.used.insert(index);
            self.next = self.next.max(index.saturating_add(1));
            index
        };
        self.native.insert(index, out);
        out
    }

    fn take_next(&mut self) -> u64 {
        let i = self.next;
        self.used.insert(i);
        self.next = i.saturating_add(1);
        i
    }
}

/// Everything one choice keeps between chunks.
#[derive(Debug)]
pub(crate) struct Choice {
    /// The choice's parser.
    pub(crate) parser: Parser,
    /// Its calls' output indices.
    pub(crate) indices: Indices,
    /// Text calls completed so far.
    pub(crate) completed: usize,
    /// Whether the parser was finished.
    pub(crate) finished: bool,
    /// Where calls and diagnostics are counted.
    tally: Option<std::sync::Arc<crate::tally::Tally>>,
    /// `Some` when a call's entries wait for its end (the default: see
    /// [`Config::stream_arguments`]; always when the schema check rejects
    /// calls, [`Check::Reject`]): the open call's, if any.
    held: Option<Held>,
}

/// The entries of a call held until it ends: its parser index, id, name
/// and arguments so far.
#[derive(Debug, Default)]
pub(crate) struct Held {
    call: Option<(usize, String, String, String)>,
}

impl Choice {
    pub(crate) fn new(config: &Config, index: u64) -> Choice {
        Choice {
            parser: parser_for(config, index),
            indices: Indices::default(),
            completed: 0,
            finished: false,
            tally: config.tally.clone(),
            held: (!config.stream_arguments || config.options.check_calls == Check::Reject)
                .then(Held::default),
        }
    }

    /// Feeds `content`; its events go into `out`.
    pub(crate) fn feed(&mut self, content: &str, out: &mut Pieces) {
        let mut sink = PieceSink {
            pieces: out,
            indices: &mut self.indices,
            completed: &mut self.completed,
            tally: self.tally.as_deref(),
            held: self.held.as_mut(),
        };
        self.parser.feed_str_with(content, &mut sink);
    }

    /// Ends the parser as the upstream's `finish_reason` says (see
    /// [`finish`]); the remaining events go into `out`.
    pub(crate) fn finish(&mut self, upstream_reason: Option<&str>, out: &mut Pieces) {
        self.finished = true;
        let mut sink = PieceSink {
            pieces: out,
            indices: &mut self.indices,
            completed: &mut self.completed,
            tally: self.tally.as_deref(),
            held: self.held.as_mut(),
        };
        if upstream_reason == Some("stop") {
            self.parser.finish_at_stop_with(&mut sink);
        } else {
            self.parser.finish_with(&mut sink);
        }
    }
}

/// One tool-call entry of a delta, before it becomes JSON. A delta holds
/// at most one entry per call: a call's start carries the arguments that
/// came with it (OpenAI's clients, the stream helper of `openai-python`
/// among them, read one entry per index per chunk).
#[derive(Debug)]
pub(crate) enum Entry {
    /// A call's first entry: `{index, id, type, function: {name,
    /// arguments}}`, the arguments those of the same delta (maybe `""`).
    Start {
        index: u64,
        id: String,
        name: String,
        arguments: String,
    },
    /// Arguments: `{index, function: {arguments}}`.
    Args { index: u64, arguments: String },
}

impl Entry {
    /// The OpenAI JSON of the entry.
    pub(crate) fn into_value(self) -> Value {
        let mut entry = Map::new();
        let mut function = Map::new();
        match self {
            Entry::Start {
                index,
                id,
                name,
                arguments,
            } => {
                entry.insert("index".into(), index.into());
                entry.insert("id".into(), id.into());
                entry.insert("type".into(), "function".into());
                function.insert("name".into(), name.into());
                function.insert("arguments".into(), arguments.into());
            }
            Entry::Args { index, arguments } => {
                entry.insert("index".into(), index.into());
                function.insert("arguments".into(), arguments.into());
            }
        }
        entry.insert("function".into(), Value::Object(function));
        Value::Object(entry)
    }
}

/// A completed call (for whole responses).
#[derive(Debug)]
pub(crate) struct Call {
    pub(crate) id: String,
    pub(crate) name: String,
    pub(crate) arguments: String,
}

/// What one feed (or finish) of a choice produced: the pieces of one delta.
#[derive(Debug, Default)]
pub(crate) struct Pieces {
    /// Text, concatenated.
    pub(crate) text: String,
    /// Reasoning, concatenated.
    pub(crate) reasoning: String,
    /// Tool-call entries, in order; consecutive argument deltas of one
    /// call merged.
    pub(crate) entries: Vec<Entry>,
    /// Calls completed (kept only when `keep_calls` is set).
    pub(crate) calls: Vec<Call>,
    /// Whether to keep completed calls in `calls`.
    pub(crate) keep_calls: bool,
    /// The core's finish reason, once the parser finished.
    pub(crate) done: Option<FinishReason>,
}

impl Pieces {
    /// Whether nothing but possibly text was produced.
    pub(crate) fn has_calls_or_reasoning(&self) -> bool {
        !self.entries.is_empty() || !self.reasoning.is_empty()
    }
}

/// The sink of a choice's parser: events into [`Pieces`], call indices
/// mapped to output indices.
struct PieceSink<'a> {
    pieces: &'a mut Pieces,
    indices: &'a mut Indices,
    completed: &'a mut usize,
    tally: Option<&'a crate::tally::Tally>,
    held: Option<&'a mut Held>,
}

impl Sink for PieceSink<'_> {
    fn event(&mut self, event: EventRef<'_>) {
        if let Some(held) = self.held.as_deref_mut() {
            // A call's entries wait for its end: its start and arguments
            // are kept; at its end they go out as one entry; anything
            // else but its schema diagnostics means it failed (its bytes
            // come back as text), and they are dropped.
            match event {
                EventRef::ToolCallStart { index, id, name } => {
                    held.call = Some((index, id.to_owned(), name.to_owned(), String::new()));
                    return;
                }
                EventRef::ToolCallArgs { index, delta } => {
                    if let Some((_, _, _, args)) = held.call.as_mut().filter(|c| c.0 == index) {
                        args.push_str(delta);
                        return;
                    }
                }
                EventRef::ToolCallEnd { index, .. } => {
                    if let Some((i, id, name, arguments)) = held.call.take() {
                        if i == index {
                            self.pieces.entries.push(Entry::Start {
                                index: self.indices.text(i),
                                id,
                                name,
                                arguments,
                            });
                        }
                    }
                }
                EventRef::Diagnostic(d) if d.kind.is_schema() => {}
                _ => held.call = None,
            }
        }
        let p = &mut *self.pieces;
        match event {
            EventRef::Text(t) => p.text.push_str(t),
            EventRef::Reasoning(t) => p.reasoning.push_str(t),
            EventRef::ToolCallStart { index, id, name } => p.entries.push(Entry::Start {
                index: self.indices.text(index),
                id: id.to_owned(),
                name: name.to_owned(),
                arguments: String::new(),
            }),
            EventRef::ToolCallArgs { index, delta } => {
                let index = self.indices.text(index);
                match p.entries.last_mut() {
                    Some(
                        Entry::Args {
                            index: i,
                            arguments,
                        }
                        | Entry::Start {
                            index: i,
                            arguments,
                            ..
                        },
                    ) if *i == index => arguments.push_str(delta),
                    _ => p.entries.push(Entry::Args {
                        index,
                        arguments: delta.to_owned(),
                    }),
                }
            }
            EventRef::ToolCallEnd {
                id,
                name,
                arguments,
                ..
            } => {
                *self.completed += 1;
                if let Some(t) = self.tally {
                    t.call();
                }
                if p.keep_calls {
                    p.calls.push(Call {
                        id: id.to_owned(),
                        name: name.to_owned(),
                        arguments: arguments.to_owned(),
                    });
                }
            }
            EventRef::Diagnostic(d) => {
                if let Some(t) = self.tally {
                    t.diagnostic(d.kind);
                }
                tracing::debug!(diagnostic = %d, "toolscan-sse: content diagnostic");
            }
            EventRef::Done { finish_reason } => p.done = Some(finish_reason),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn native_indices_kept_text_indices_after_them() {
        let mut ix = Indices::default();
        assert_eq!(ix.native(0), 0);
        assert_eq!(ix.native(0), 0);
        assert_eq!(ix.text(0), 1);
        assert_eq!(ix.native(1), 2, "1 was taken by a text call");
        assert_eq!(ix.native(1), 2, "and keeps its new index");
        assert_eq!(ix.text(1), 3);
        assert_eq!(ix.native(7), 7);
        assert_eq!(ix.text(2), 8);
    }

    #[test]
    fn text_only_indices_are_the_parsers() {
        let mut ix = Indices::default();
        assert_eq!(
            (ix.text(0), ix.text(1), ix.text(1), ix.text(2)),
            (0, 1, 1, 2)
        );
    }
}
