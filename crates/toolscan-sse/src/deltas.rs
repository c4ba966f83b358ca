//! The OpenAI delta rules over one parser's events ([`Deltas`]): what
//! goes into a `delta` (text, reasoning, `tool_calls` entries) for the
//! events of one feed. The chunk rewrite ([`ChunkRewriter`]), the whole
//! answer's rewrite and the bindings in other languages (the Python
//! package's vLLM plugin) all take their deltas from here.
//!
//! [`ChunkRewriter`]: crate::ChunkRewriter

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use serde_json::{Map, Value};
use toolscan_core::sink::WholeCalls;
use toolscan_core::{Check, Diagnostic, EventRef, FinishReason, Sink};

use crate::tally::Tally;

/// The output indices of a choice's tool calls, native and from text.
///
/// A native call (the upstream's own `delta.tool_calls`) keeps its index,
/// unless a text call already took it: then it gets the next free index,
/// and keeps that one for the rest of the stream. A text call gets the
/// next free index (one above every index used so far in the choice) when
/// its entry is first sent. With only native calls, or only text calls,
/// nothing is renumbered; text calls are `0, 1, 2…` in the order their
/// entries go out.
#[derive(Debug, Default)]
struct Indices {
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
    /// one the first time.
    fn text(&mut self, index: usize) -> u64 {
        if let Some(&i) = self.text.get(&index) {
            return i;
        }
        let i = self.take_next();
        self.text.insert(index, i);
        i
    }

    /// The output index of native call `index` (the upstream's).
    fn native(&mut self, index: u64) -> u64 {
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

/// The OpenAI delta rules of one choice, over its parser's events: text
/// to `content`, reasoning apart, each call one `tool_calls` entry with
/// all its arguments in the feed that completes it — or, with live
/// arguments, a first entry at its start and argument entries as they
/// come. A block that fails never produces an entry (its bytes come back
/// from the parser as text).
///
/// Feed the parser with [`Deltas::sink`]; what one feed produced is the
/// [`Delta`] given to it.
///
/// ```
/// use toolscan_core::{Options, Parser, Registry};
/// use toolscan_sse::{Delta, Deltas, Entry};
///
/// let grammar = Registry::builtin().grammar("hermes").unwrap();
/// let mut parser = Parser::new(grammar, Options::default());
/// let mut rules = Deltas::new(false);
///
/// let mut first = Delta::default();
/// parser.feed_str_with(r#"Sure. <tool_call>{"name": "f", "argu"#, &mut rules.sink(&mut first));
/// assert_eq!(first.text, "Sure. ");
/// assert!(first.entries.is_empty(), "the call waits for its end");
///
/// let mut second = Delta::default();
/// parser.feed_str_with(r#"ments": {"a": 1}}</tool_call>"#, &mut rules.sink(&mut second));
/// let [Entry::Start { index: 0, name, arguments, .. }] = &second.entries[..] else {
///     panic!("{:?}", second.entries)
/// };
/// assert_eq!((name.as_str(), arguments.as_str()), ("f", r#"{"a": 1}"#));
/// ```
#[derive(Debug)]
pub struct Deltas {
    /// The calls' output indices.
    indices: Indices,
    /// Text calls completed so far.
    completed: usize,
    /// Where calls and diagnostics are counted.
    tally: Option<Arc<Tally>>,
    /// Whether a call's entries wait for its end.
    hold: bool,
    /// Where they wait, when `hold`: the core's rule, which the bindings
    /// in other languages share.
    gate: WholeCalls,
    /// Whether reasoning goes to [`Delta::text`], in its place among the
    /// text.
    reasoning_as_text: bool,
    /// Whether text or reasoning was seen (its time is in the tally).
    token_seen: bool,
}

impl Deltas {
    /// The rules of a new choice. `stream_arguments`: a call's entries
    /// are sent as it streams (see [`Config::stream_arguments`]);
    /// otherwise one entry, whole, at its end.
    ///
    /// [`Config::stream_arguments`]: crate::Config::stream_arguments
    pub fn new(stream_arguments: bool) -> Deltas {
        Deltas {
            indices: Indices::default(),
            completed: 0,
            tally: None,
            hold: !stream_arguments,
            gate: WholeCalls::new(),
            reasoning_as_text: false,
            token_seen: false,
        }
    }

    /// The rules of a choice rewritten with `config` (calls whose schema
    /// check may still reject them always wait for their end).
    pub(crate) fn for_config(config: &crate::Config) -> Deltas {
        let live = config.stream_arguments && config.options.check_calls != Check::Reject;
        Deltas {
            tally: config.tally.clone(),
            ..Deltas::new(live)
        }
    }

    /// Reasoning goes to [`Delta::text`], where it came among the text,
    /// rather than to [`Delta::reasoning`] (for a consumer with no place
    /// for it: what a format marks as reasoning itself, such as Harmony's
    /// analysis channel, is then not lost).
    pub fn with_reasoning_as_text(mut self) -> Deltas {
        self.reasoning_as_text = true;
        self
    }

    /// The sink to feed the choice's parser with; the feed's pieces go
    /// into `out` (appended to what it holds).
    pub fn sink<'a>(&'a mut self, out: &'a mut Delta) -> DeltaSink<'a> {
        DeltaSink { rules: self, out }
    }

    /// Text calls completed so far.
    pub fn completed(&self) -> usize {
        self.completed
    }

    /// The output index of the upstream's native call `index`.
    pub(crate) fn native(&mut self, index: u64) -> u64 {
        self.indices.native(index)
    }
}

/// What feeds of a choice's parser produced: the pieces of one OpenAI
/// delta (or message).
#[derive(Debug, Default)]
pub struct Delta {
    /// Text, concatenated.
    pub text: String,
    /// Reasoning, concatenated (empty with
    /// [`Deltas::with_reasoning_as_text`]).
    pub reasoning: String,
    /// `tool_calls` entries, in order: at most one per call (consecutive
    /// argument deltas of a call are merged, and a call's start carries
    /// the arguments that came with it).
    pub entries: Vec<Entry>,
    /// Calls completed, with their output index (kept only in a delta
    /// made by [`Delta::keeping`]).
    pub calls: Vec<Call>,
    /// The parser's diagnostics (kept only in a delta made by
    /// [`Delta::keeping`]; they are always counted in the
    /// [`Tally`] and logged at debug level).
    pub diagnostics: Vec<Diagnostic>,
    /// The parser's finish reason, once it finished.
    pub done: Option<FinishReason>,
    /// Whether completed calls and diagnostics are kept.
    keep: bool,
}

impl Delta {
    /// A delta that also keeps the completed calls and the diagnostics.
    pub fn keeping() -> Delta {
        Delta {
            keep: true,
            ..Delta::default()
        }
    }

    /// Empties it for the next feed, keeping what its buffers hold (a
    /// stream's deltas are fed one after another into one).
    pub(crate) fn clear(&mut self) {
        self.text.clear();
        self.reasoning.clear();
        self.entries.clear();
        self.calls.clear();
        self.diagnostics.clear();
        self.done = None;
    }

    /// Whether anything but text was produced.
    pub(crate) fn has_calls_or_reasoning(&self) -> bool {
        !self.entries.is_empty() || !self.reasoning.is_empty()
    }
}

/// One `tool_calls` entry of a delta.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Entry {
    /// A call's first entry: `{index, id, type: "function", function:
    /// {name, arguments}}`; the arguments are all of them when calls wait
    /// for their end, else those that came with the start (maybe `""`).
    Start {
        /// The output index.
        index: u64,
        /// The call's id.
        id: String,
        /// The tool's name.
        name: String,
        /// Arguments JSON text (or the start of it).
        arguments: String,
    },
    /// More arguments of a call: `{index, function: {arguments}}`.
    Args {
        /// The output index.
        index: u64,
        /// The next piece of the arguments' JSON text.
        arguments: String,
    },
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

/// A completed call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Call {
    /// The output index of its entries.
    pub index: u64,
    /// Its id.
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// Its arguments' JSON text.
    pub arguments: String,
}

/// The sink of a choice's parser ([`Deltas::sink`]): events into a
/// [`Delta`], call indices mapped to output indices.
#[derive(Debug)]
pub struct DeltaSink<'a> {
    rules: &'a mut Deltas,
    out: &'a mut Delta,
}

impl DeltaSink<'_> {
    /// A call's arguments, live: appended to the delta's last entry when
    /// it is the same call's, else a new entry.
    fn args(&mut self, index: usize, delta: &str) {
        let index = self.rules.indices.text(index);
        match self.out.entries.last_mut() {
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
            _ => self.out.entries.push(Entry::Args {
                index,
                arguments: delta.to_owned(),
            }),
        }
    }

    /// An event the rules send on.
    fn take(&mut self, event: EventRef<'_>) {
        if let (EventRef::Text(t) | EventRef::Reasoning(t), Some(tally)) =
            (&event, &self.rules.tally)
        {
            if !self.rules.token_seen && !t.is_empty() {
                self.rules.token_seen = true;
                tally.token();
            }
        }
        match event {
            EventRef::Text(t) => self.out.text.push_str(t),
            EventRef::Reasoning(t) if self.rules.reasoning_as_text => self.out.text.push_str(t),
            EventRef::Reasoning(t) => self.out.reasoning.push_str(t),
            EventRef::ToolCallStart { index, id, name } => {
                let index = self.rules.indices.text(index);
                self.out.entries.push(Entry::Start {
                    index,
                    id: id.to_owned(),
                    name: name.to_owned(),
                    arguments: String::new(),
                })
            }
            EventRef::ToolCallArgs { index, delta } => self.args(index, delta),
            EventRef::ToolCallEnd {
                index,
                id,
                name,
                arguments,
            } => {
                let r = &mut *self.rules;
                r.completed += 1;
                if let Some(t) = &r.tally {
                    t.call();
                }
                if self.out.keep {
                    self.out.calls.push(Call {
                        index: r.indices.text(index),
                        id: id.to_owned(),
                        name: name.to_owned(),
                        arguments: arguments.to_owned(),
                    });
                }
            }
            EventRef::Diagnostic(d) => {
                if let Some(t) = &self.rules.tally {
                    t.diagnostic(d.kind);
                }
                tracing::debug!(diagnostic = %d, "toolscan-sse: content diagnostic");
                if self.out.keep {
                    self.out.diagnostics.push(d.clone());
                }
            }
            EventRef::Done { finish_reason } => self.out.done = Some(finish_reason),
            _ => {}
        }
    }
}

impl Sink for DeltaSink<'_> {
    fn event(&mut self, event: EventRef<'_>) {
        if self.rules.hold {
            // A held call's start and arguments come with its end, and
            // make one entry (its arguments are appended to its start).
            self.rules.gate.pass(event).for_each(|e| self.take(e));
        } else {
            self.take(event);
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
