//! Which calls a stream carries, and when each began and became ready.
//!
//! Two sources, both watched in every stream:
//!
//! - text calls: `delta.content` fed to a toolscan [`Parser`] (any format,
//!   or `auto`); a call begins at its `tool_call_start` and is ready at its
//!   `tool_call_end`, the moment toolscan has read its last byte (the
//!   arrival time of the chunk that held it);
//! - native calls: `delta.tool_calls` entries, by their `index`; a call
//!   begins with its first entry and is ready at its last entry that
//!   carried anything (a name or an argument delta), which only the rest
//!   of the stream shows to be the last.
//!
//! Only the first choice (`choices[0]`) is read.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::Value;
use toolscan_core::{sink, EventRef, Grammar, Options, Parser};

use crate::timeline::{CallKind, CallTiming, Micros};

/// Reads one stream's calls.
pub struct Detector {
    /// `None`: text calls are not read (no grammar).
    parser: Option<Parser>,
    /// Every call seen, in the order they began.
    calls: Vec<CallTiming>,
    /// Toolscan's call index → place in `calls`.
    text: HashMap<usize, usize>,
    /// `delta.tool_calls[].index` → place in `calls`.
    native: HashMap<u64, usize>,
}

/// What one feed of the parser said about calls.
enum Seen {
    Start(usize, String),
    End(usize, String),
}

impl Detector {
    /// A detector reading text calls with `grammar` (none: only native
    /// calls).
    pub fn new(grammar: Option<Arc<Grammar>>, options: Options) -> Detector {
        Detector {
            parser: grammar.map(|g| Parser::new(g, options)),
            calls: Vec::new(),
            text: HashMap::new(),
            native: HashMap::new(),
        }
    }

    /// A piece of `delta.content` that arrived at `at`.
    pub fn content(&mut self, text: &str, at: Micros) {
        let Some(parser) = self.parser.as_mut() else {
            return;
        };
        let mut seen = Vec::new();
        parser.feed_str_with(text, &mut sink::from_fn(|e| note(e, &mut seen)));
        self.apply(seen, at);
    }

    /// The end of the stream, at `at`: a call the parser completes only
    /// there (its closer optional) is ready then.
    pub fn finish(&mut self, at: Micros) {
        let Some(parser) = self.parser.as_mut() else {
            return;
        };
        let mut seen = Vec::new();
        parser.finish_with(&mut sink::from_fn(|e| note(e, &mut seen)));
        self.apply(seen, at);
    }

    /// One `delta.tool_calls` entry that arrived at `at`.
    pub fn native(&mut self, entry: &Value, at: Micros) {
        let index = entry.get("index").and_then(Value::as_u64).unwrap_or(0);
        let function = entry.get("function");
        let name = function
            .and_then(|f| f.get("name"))
            .and_then(Value::as_str)
            .filter(|n| !n.is_empty());
        let args = function
            .and_then(|f| f.get("arguments"))
            .and_then(Value::as_str)
            .filter(|a| !a.is_empty());
        let place = *self.native.entry(index).or_insert_with(|| {
            self.calls.push(CallTiming {
                index: usize::try_from(index).unwrap_or(usize::MAX),
                kind: CallKind::Native,
                name: String::new(),
                start: at,
                ready: Some(at),
            });
            self.calls.len() - 1
        });
        let Some(call) = self.calls.get_mut(place) else {
            return;
        };
        if let Some(name) = name {
            call.name.push_str(name);
        }
        if name.is_some() || args.is_some() {
            call.ready = Some(at);
        }
    }

    /// The calls, in the order they began.
    pub fn into_calls(self) -> Vec<CallTiming> {
        self.calls
    }

    fn apply(&mut self, seen: Vec<Seen>, at: Micros) {
        for s in seen {
            match s {
                Seen::Start(index, name) => {
                    self.calls.push(CallTiming {
                        index,
                        kind: CallKind::Text,
                        name,
                        start: at,
                        ready: None,
                    });
                    self.text.insert(index, self.calls.len() - 1);
                }
                Seen::End(index, name) => {
                    let place = match self.text.get(&index) {
                        Some(&p) => p,
                        None => {
                            // An end with no start seen: it began here.
                            self.calls.push(CallTiming {
                                index,
                                kind: CallKind::Text,
                                name: String::new(),
                                start: at,
                                ready: None,
                            });
                            self.text.insert(index, self.calls.len() - 1);
                            self.calls.len() - 1
                        }
                    };
                    if let Some(call) = self.calls.get_mut(place) {
                        call.name = name;
                        call.ready = Some(at);
                    }
                }
            }
        }
    }
}

fn note(event: EventRef<'_>, seen: &mut Vec<Seen>) {
    match event {
        EventRef::ToolCallStart { index, name, .. } => seen.push(Seen::Start(index, name.into())),
        EventRef::ToolCallEnd { index, name, .. } => seen.push(Seen::End(index, name.into())),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use toolscan_core::Registry;

    #[test]
    fn text_call_is_ready_at_the_chunk_that_closes_it() {
        let g = Registry::builtin().grammar("hermes").unwrap();
        let mut d = Detector::new(Some(g), Options::new());
        d.content("Sure.\n<tool_call>\n{\"name\": \"get_weather\", ", 100);
        d.content("\"arguments\": {\"city\": \"Paris\"}}\n", 200);
        d.content("</tool_call>", 300);
        d.content(" more text", 400);
        d.finish(500);
        let calls = d.into_calls();
        assert_eq!(calls.len(), 1);
        assert_eq!(calls[0].kind, CallKind::Text);
        assert_eq!(calls[0].name, "get_weather");
        assert_eq!(calls[0].start, 100);
        assert_eq!(calls[0].ready, Some(300));
    }

    #[test]
    fn native_call_is_ready_at_its_last_argument_delta() {
        let mut d = Detector::new(None, Options::new());
        let entry = |i: u64, name: Option<&str>, args: &str| json!({"index": i, "function": {"name": name, "arguments": args}});
        d.native(&entry(0, Some("a"), ""), 10);
        d.native(&entry(0, None, "{\"x\":"), 20);
        d.native(&entry(0, None, "1}"), 30);
        d.native(&entry(1, Some("b"), "{}"), 40);
        d.native(&entry(0, None, ""), 50); // empty: not a delta
        let calls = d.into_calls();
        assert_eq!(calls.len(), 2);
        assert_eq!((calls[0].start, calls[0].ready), (10, Some(30)));
        assert_eq!(calls[0].name, "a");
        assert_eq!((calls[1].start, calls[1].ready), (40, Some(40)));
        assert_eq!(calls[1].kind, CallKind::Native);
    }
}
