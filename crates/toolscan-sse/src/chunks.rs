//! The streaming rewrite at the level of chunks: one upstream chunk's JSON
//! in, the chunks to send in its place out ([`ChunkRewriter`]). The SSE
//! stream (`stream.rs`) and the Python package's `openai` wrapper both
//! stand on it, so the OpenAI delta rules are written once.
//!
//! The rules (also in the crate documentation):
//!
//! - a chunk that is not JSON, not an object, or an object without a
//!   `choices` array (an error object…) is passed on unchanged; invalid
//!   JSON is logged with `tracing::warn!`;
//! - a chunk is rewritten choice by choice; a chunk the rewrite did not
//!   change is passed on byte for byte (its `data` as it came); one whose
//!   only change is its one choice's text (keys without escapes) keeps
//!   every other byte as it came, its `delta.content` replaced in place;
//! - a rewritten chunk whose choice carries tool calls and a
//!   `finish_reason` is sent as two chunks, the `finish_reason` in the
//!   second, after the calls ([`split_finish`]);
//! - a changed chunk that now carries nothing — every choice's delta only
//!   empty text or nulls, no `finish_reason`, no non-null field beyond the
//!   envelope (`id`, `object`, `created`, `model`, `system_fingerprint`,
//!   `service_tier`, `obfuscation`) — is not sent: its text was held back
//!   (a possible marker) and comes in a later chunk, which has its own
//!   envelope;
//! - text, reasoning and calls still held when the upstream ends a choice
//!   without a `finish_reason` (at `[DONE]`, at a usage-only chunk, or at
//!   the end of the body) are sent in one extra chunk that copies the
//!   envelope of the last upstream chunk;
//! - a call's entries wait for its end unless
//!   [`Config::stream_arguments`] is on (see [`crate`]).

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::choice::{finish_reason, Choice};
use crate::config::Config;
use crate::deltas::Delta;
use crate::light::{Like, Seen, ENVELOPE};

/// What to send for an upstream chunk: the pieces [`ChunkRewriter::chunk`]
/// and [`ChunkRewriter::end`] append, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Emit {
    /// The upstream chunk itself, as it came (the rewrite did not change
    /// it).
    Upstream,
    /// The upstream chunk, rewritten: its JSON text. It takes the
    /// upstream chunk's place (an SSE event keeps its other fields).
    Rewritten(String),
    /// A chunk the rewrite adds (a choice's end after its calls, what a
    /// choice still held when the upstream ended it): its JSON text.
    Added(String),
}

/// The rewrite of one streamed `chat.completions` answer, chunk by chunk,
/// over each chunk's JSON text: the OpenAI delta rules of the
/// [crate](crate), without SSE. [`rewrite_stream`](crate::rewrite_stream)
/// runs one over an SSE body; bindings in other languages run one over
/// their own chunk objects.
///
/// ```
/// use toolscan_core::Registry;
/// use toolscan_sse::{ChunkRewriter, Config, Emit};
///
/// let config = Config::new(Registry::builtin().grammar("hermes").unwrap());
/// let mut rewriter = ChunkRewriter::new(config);
/// let mut out = Vec::new();
/// rewriter.chunk(r#"{"choices":[{"index":0,"delta":{"content":"Hi"}}]}"#, &mut out);
/// assert_eq!(out, [Emit::Upstream]);
/// out.clear();
/// rewriter.chunk(
///     r#"{"choices":[{"index":0,"delta":{"content":"<tool_call>{\"name\": \"f\", \"arguments\": {}}</tool_call>"},"finish_reason":"stop"}]}"#,
///     &mut out,
/// );
/// let Emit::Rewritten(call) = &out[0] else { panic!("{out:?}") };
/// assert!(call.contains(r#""name":"f","arguments":"{}""#), "{call}");
/// let Emit::Added(end) = &out[1] else { panic!("{out:?}") };
/// assert!(end.contains(r#""finish_reason":"tool_calls""#), "{end}");
/// ```
#[derive(Debug)]
pub struct ChunkRewriter {
    config: Config,
    /// Each choice's state, by its `index`.
    choices: BTreeMap<u64, Choice>,
    /// The last chunk's top-level fields, without `usage`, `choices` set to
    /// null in its place: the envelope of chunks this rewrite adds.
    envelope: Map<String, Value>,
    /// The data of a chunk later than `envelope`'s, read by the fast path
    /// (which builds no `Value`): its envelope is taken when one is needed.
    later: String,
    /// Whether `later` holds such a chunk.
    stale: bool,
    /// Where `later`'s content string stands (read from `later` as it is
    /// now), if it has one: the next chunk is read against it.
    seen: Option<Seen>,
    /// A choice's events the fast path fed and found changed, for the
    /// general path to use rather than feed the content again.
    prefed: Option<(u64, Delta)>,
    /// What the fast path feeds each chunk's content into, kept between
    /// chunks so that its text buffer is not made again for each (empty
    /// between two calls of `fast`).
    scratch: Delta,
    /// A chunk brought more choices than `config.max_choices`: it and the
    /// rest of the stream are not read.
    over: bool,
}

impl ChunkRewriter {
    /// A rewrite with `config`, before its first chunk.
    pub fn new(config: Config) -> ChunkRewriter {
        ChunkRewriter {
            config,
            choices: BTreeMap::new(),
            envelope: Map::new(),
            later: String::new(),
            stale: false,
            seen: None,
            prefed: None,
            scratch: Delta::default(),
            over: false,
        }
    }

    /// Whether a chunk brought more distinct choices than
    /// [`Config::max_choices`] (that chunk was not rewritten, nor should
    /// any after it be).
    pub fn too_many_choices(&self) -> bool {
        self.over
    }

    /// Whether the choice `index` may have a parser: one it has, or a new
    /// one within the bound (else `over` is set).
    fn admits(&mut self, index: u64) -> bool {
        if self.choices.len() >= self.config.max_choices && !self.choices.contains_key(&index) {
            self.over = true;
        }
        !self.over
    }

    /// The fast path: a chunk whose one choice carries text only, and whose
    /// text the parser passes on unchanged (no marker begins in it, none
    /// was held), goes out byte for byte without a `Value` being built.
    /// So does one whose changed text came without calls or reasoning
    /// (the text held around a call): spliced into its data, or held back
    /// ([`changed_text`](crate::light::changed_text)), what the general path
    /// would send for it is pushed to `out`.
    /// `false`: the general path takes the chunk (with the events of the
    /// feed, if the fast path fed it: see `prefed`).
    fn fast(&mut self, data: &str, out: &mut Vec<Emit>) -> bool {
        self.prefed = None;
        let like = self.seen.map(|seen| Like {
            data: &self.later,
            seen,
        });
        let Some(t) = crate::light::text_only(data, like) else {
            return false;
        };
        if !self.admits(t.index) {
            return false;
        }
        let config = &self.config;
        let state = self
            .choices
            .entry(t.index)
            .or_insert_with(|| Choice::new(config, t.index));
        if !state.finished {
            if let Some(content) = &t.content {
                let mut pieces = std::mem::take(&mut self.scratch);
                state.feed(content, &mut pieces);
                if pieces.text != **content || pieces.has_calls_or_reasoning() {
                    let spliced = match &t.seen {
                        Some(seen) if !pieces.has_calls_or_reasoning() => {
                            crate::light::changed_text(data, seen, &pieces.text)
                        }
                        _ => None,
                    };
                    let Some(spliced) = spliced else {
                        self.prefed = Some((t.index, pieces));
                        return false;
                    };
                    pieces.clear();
                    self.scratch = pieces;
                    if let Some(json) = spliced {
                        out.push(Emit::Rewritten(json));
                    } else {
                        tracing::trace!("toolscan-sse: chunk held back entirely");
                    }
                    self.later_chunk(data, t.seen);
                    return true;
                }
                pieces.clear();
                self.scratch = pieces;
            }
        }
        out.push(Emit::Upstream);
        self.later_chunk(data, t.seen);
        true
    }

    /// The fast path read `data`: its envelope is the latest, taken when
    /// one is needed.
    fn later_chunk(&mut self, data: &str, seen: Option<Seen>) {
        self.later.clear();
        self.later.push_str(data);
        self.stale = true;
        self.seen = seen;
    }

    /// Takes the envelope of the last chunk the fast path read, if it is
    /// later than the one remembered.
    fn refresh_envelope(&mut self) {
        if std::mem::take(&mut self.stale) {
            if let Ok(Value::Object(chunk)) = serde_json::from_str::<Value>(&self.later) {
                self.remember_envelope(&chunk);
            }
        }
    }

    /// Rewrites one upstream chunk (its JSON text: an SSE event's `data`);
    /// what to send in its place goes to `out` (nothing, when its text is
    /// held back: it comes in a later chunk).
    pub fn chunk(&mut self, data: &str, out: &mut Vec<Emit>) {
        if self.over {
            return;
        }
        if self.fast(data, out) {
            return;
        }
        let mut chunk = match serde_json::from_str::<Value>(data) {
            Ok(Value::Object(chunk)) => chunk,
            Ok(_) => {
                out.push(Emit::Upstream);
                return;
            }
            Err(e) => {
                tracing::warn!(error = %e, "toolscan-sse: an SSE data line is not JSON; passed on unchanged");
                out.push(Emit::Upstream);
                return;
            }
        };
        match chunk.get("choices") {
            Some(Value::Array(choices)) if choices.is_empty() => {
                // The usage chunk (`stream_options.include_usage`): every
                // choice has ended.
                if chunk.get("usage").is_some_and(|u| !u.is_null()) {
                    self.end(out);
                }
                out.push(Emit::Upstream);
                return;
            }
            Some(Value::Array(_)) => {}
            _ => {
                out.push(Emit::Upstream);
                return;
            }
        }
        self.stale = false;
        self.remember_envelope(&chunk);
        if !self.rewrite_choices(&mut chunk) {
            if !self.over {
                out.push(Emit::Upstream);
            }
            return;
        }
        if carries_nothing(&chunk) {
            tracing::trace!("toolscan-sse: chunk held back entirely");
            return;
        }
        let end = split_finish(&mut chunk);
        out.push(Emit::Rewritten(Value::Object(chunk).to_string()));
        if let Some(end) = end {
            out.push(Emit::Added(Value::Object(end).to_string()));
        }
    }

    /// Ends every choice that is still open, sending what its parser still
    /// held in one chunk (the upstream ended, sent `[DONE]`, or sent its
    /// usage). A choice that was ended already is left as it is, so a
    /// second call adds nothing.
    pub fn end(&mut self, out: &mut Vec<Emit>) {
        let mut choices = Vec::new();
        for (&index, state) in self.choices.iter_mut() {
            if state.finished {
                continue;
            }
            let mut pieces = Delta::default();
            state.finish(None, &mut pieces);
            let mut choice = Map::new();
            choice.insert("index".into(), index.into());
            choice.insert("delta".into(), Value::Object(Map::new()));
            let reason = match pieces.done {
                Some(toolscan_core::FinishReason::ToolCalls) => Value::from("tool_calls"),
                _ => Value::Null,
            };
            let changed = apply(&mut choice, None, pieces) || !reason.is_null();
            choice.insert("finish_reason".into(), reason);
            if changed {
                choices.push(Value::Object(choice));
            }
        }
        if choices.is_empty() {
            return;
        }
        self.refresh_envelope();
        let mut chunk = self.envelope.clone();
        chunk.insert("choices".into(), Value::Array(choices));
        let end = split_finish(&mut chunk);
        out.push(Emit::Added(Value::Object(chunk).to_string()));
        if let Some(end) = end {
            out.push(Emit::Added(Value::Object(end).to_string()));
        }
    }

    fn remember_envelope(&mut self, chunk: &Map<String, Value>) {
        self.envelope.clear();
        for (k, v) in chunk {
            match k.as_str() {
                "usage" => {}
                "choices" => {
                    self.envelope.insert(k.clone(), Value::Null);
                }
                _ => {
                    self.envelope.insert(k.clone(), v.clone());
                }
            }
        }
    }

    /// Rewrites every choice of `chunk`; whether anything changed.
    fn rewrite_choices(&mut self, chunk: &mut Map<String, Value>) -> bool {
        let Some(Value::Array(choices)) = chunk.get_mut("choices") else {
            return false;
        };
        let indices = choices
            .iter()
            .enumerate()
            .map(|(pos, c)| c.get("index").and_then(Value::as_u64).unwrap_or(pos as u64));
        let mut new: Vec<u64> = indices.filter(|i| !self.choices.contains_key(i)).collect();
        new.sort_unstable();
        new.dedup();
        if self.choices.len() + new.len() > self.config.max_choices {
            self.over = true;
            return false;
        }
        let config = &self.config;
        let mut prefed = self.prefed.take();
        let mut changed = false;
        for (pos, choice) in choices.iter_mut().enumerate() {
            let Some(choice) = choice.as_object_mut() else {
                continue;
            };
            let index = choice
                .get("index")
                .and_then(Value::as_u64)
                .unwrap_or(pos as u64);
            let state = self
                .choices
                .entry(index)
                .or_insert_with(|| Choice::new(config, index));
            let fed = prefed.take_if(|(i, _)| *i == index).map(|(_, p)| p);
            changed |= rewrite_choice(state, choice, fed);
        }
        changed
    }
}

/// Rewrites one choice of a chunk: its `delta.content` through its parser,
/// native call indices, `finish_reason`. Whether anything changed.
/// `fed`: the events of its content, when the fast path fed it already.
fn rewrite_choice(state: &mut Choice, choice: &mut Map<String, Value>, fed: Option<Delta>) -> bool {
    if state.finished {
        // Content after the choice's end: nothing to parse it with.
        return false;
    }
    let mut pieces = Delta::default();
    let mut changed = false;
    let mut original = None;
    if let Some(delta) = choice.get_mut("delta").and_then(Value::as_object_mut) {
        if let Some(Value::String(content)) = delta.get_mut("content") {
            let content = std::mem::take(content);
            match fed {
                Some(fed) => pieces = fed,
                None => state.feed(&content, &mut pieces),
            }
            original = Some(content);
        }
        if let Some(Value::Array(calls)) = delta.get_mut("tool_calls") {
            for call in calls.iter_mut().filter_map(Value::as_object_mut) {
                let Some(upstream) = call.get("index").and_then(Value::as_u64) else {
                    continue;
                };
                let index = state.deltas.native(upstream);
                if index != upstream {
                    call.insert("index".into(), index.into());
                    changed = true;
                }
            }
        }
    }
    if let Some(Value::String(upstream)) = choice.get("finish_reason") {
        let upstream = upstream.clone();
        state.finish(Some(&upstream), &mut pieces);
        let reason = finish_reason(&upstream, state.deltas.completed());
        if reason != upstream {
            choice.insert("finish_reason".into(), reason.into());
            changed = true;
        }
    }
    apply(choice, original, pieces) || changed
}

/// Writes `pieces` into `choice`'s delta: `content` (back into its slot
/// when the upstream had one, else added if there is text),
/// `reasoning_content` (appended to the upstream's), `tool_calls` (after
/// the upstream's). Whether the delta changed.
fn apply(choice: &mut Map<String, Value>, original: Option<String>, pieces: Delta) -> bool {
    let text_changed = match &original {
        Some(o) => *o != pieces.text,
        None => !pieces.text.is_empty(),
    };
    if !text_changed && !pieces.has_calls_or_reasoning() {
        if let Some(o) = original {
            // Put the text back where it was taken from.
            set_content(choice, o);
        }
        return false;
    }
    let delta = match choice.get_mut("delta") {
        Some(Value::Object(d)) => d,
        _ => {
            choice.insert("delta".into(), Value::Object(Map::new()));
            match choice.get_mut("delta") {
                Some(Value::Object(d)) => d,
                _ => return false,
            }
        }
    };
    if original.is_some() || !pieces.text.is_empty() {
        delta.insert("content".into(), pieces.text.into());
    }
    if !pieces.reasoning.is_empty() {
        match delta.get_mut("reasoning_content") {
            Some(Value::String(r)) => r.push_str(&pieces.reasoning),
            _ => {
                delta.insert("reasoning_content".into(), pieces.reasoning.into());
            }
        }
    }
    if !pieces.entries.is_empty() {
        let entries = pieces.entries.into_iter().map(|e| e.into_value());
        match delta.get_mut("tool_calls") {
            Some(Value::Array(calls)) => calls.extend(entries),
            _ => {
                delta.insert("tool_calls".into(), Value::Array(entries.collect()));
            }
        }
    }
    true
}

/// Takes the `finish_reason` of every choice whose delta carries tool
/// calls out of `chunk`, into a chunk of its own to send after it (with
/// the envelope): OpenAI's clients
/// (the stream helper of `openai-python`) finish a call's arguments only
/// when a later chunk comes, so a call's last delta must not share its
/// chunk with the end of the choice. Every other field stays where it
/// was (a `usage` too). `None` if no choice had both.
fn split_finish(chunk: &mut Map<String, Value>) -> Option<Map<String, Value>> {
    let Some(Value::Array(choices)) = chunk.get_mut("choices") else {
        return None;
    };
    let mut ends = Vec::new();
    for choice in choices.iter_mut().filter_map(Value::as_object_mut) {
        let has_calls = choice
            .get("delta")
            .and_then(|d| d.get("tool_calls"))
            .and_then(Value::as_array)
            .is_some_and(|a| !a.is_empty());
        let reason = choice.get("finish_reason").filter(|r| !r.is_null());
        if let (true, Some(reason)) = (has_calls, reason.cloned()) {
            choice.insert("finish_reason".into(), Value::Null);
            let mut end = Map::new();
            end.insert(
                "index".into(),
                choice.get("index").cloned().unwrap_or(Value::from(0)),
            );
            end.insert("delta".into(), Value::Object(Map::new()));
            end.insert("finish_reason".into(), reason);
            ends.push(Value::Object(end));
        }
    }
    if ends.is_empty() {
        return None;
    }
    let mut end: Map<String, Value> = chunk
        .iter()
        .filter(|(k, _)| ENVELOPE.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    end.insert("choices".into(), Value::Array(ends));
    Some(end)
}

/// Puts `content` back into `choice.delta.content`.
fn set_content(choice: &mut Map<String, Value>, content: String) {
    if let Some(Value::Object(delta)) = choice.get_mut("delta") {
        delta.insert("content".into(), content.into());
    }
}

/// Whether a (rewritten) chunk carries nothing worth sending: see the
/// module documentation.
fn carries_nothing(chunk: &Map<String, Value>) -> bool {
    chunk.iter().all(|(k, v)| match k.as_str() {
        "choices" => match v {
            Value::Array(choices) => !choices.is_empty() && choices.iter().all(choice_is_empty),
            _ => false,
        },
        k if ENVELOPE.contains(&k) => true,
        _ => v.is_null(),
    })
}

/// A choice whose delta holds only empty text or nulls, with no
/// `finish_reason` and no other non-null field.
fn choice_is_empty(choice: &Value) -> bool {
    let Value::Object(choice) = choice else {
        return false;
    };
    choice.iter().all(|(k, v)| match k.as_str() {
        "index" => true,
        "delta" => match v {
            Value::Null => true,
            Value::Object(d) => d.values().all(|v| match v {
                Value::Null => true,
                Value::String(s) => s.is_empty(),
                Value::Array(a) => a.is_empty(),
                _ => false,
            }),
            _ => false,
        },
        _ => v.is_null(),
    })
}

#[cfg(test)]
mod tests {
    use serde_json::{Map, Value};

    use super::carries_nothing;
    use crate::light::{changed_text, text_only, Like};

    /// What the general path sends for a text-only chunk whose text became
    /// `text`: the chunk, its content replaced, unless it carries nothing.
    fn general(data: &str, text: &str) -> Option<Value> {
        let mut chunk: Map<String, Value> = serde_json::from_str(data).unwrap();
        let delta = chunk["choices"][0]["delta"].as_object_mut().unwrap();
        delta.insert("content".into(), text.into());
        (!carries_nothing(&chunk)).then_some(Value::Object(chunk))
    }

    /// What the fast path sends for `data` (read against `like`, the chunk
    /// before it, if any) whose text became `text`.
    fn fast(data: &str, like: Option<&str>, text: &str) -> Option<Value> {
        let like = like.map(|before| Like {
            data: before,
            seen: text_only(before, None).unwrap().seen.unwrap(),
        });
        let seen = text_only(data, like)
            .expect("a text-only chunk")
            .seen
            .unwrap();
        let spliced = changed_text(data, &seen, text).expect("read by the fast path");
        spliced.map(|json| serde_json::from_str::<Value>(&json).unwrap())
    }

    #[test]
    fn changed_text_sends_what_the_general_path_sends() {
        let chunks = [
            r#"{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"<tool"},"finish_reason":null}]}"#,
            r#"{"id":"c","choices":[{"index":0,"delta":{"content":"x","role":null,"tool_calls":null},"logprobs":null}],"usage":null}"#,
            r#"{"id":"c","choices":[{"index":0,"delta":{"content":"x","reasoning_content":""}}],"t_us":17}"#,
            r#"{"id":"c","choices":[{"index":0,"delta":{"content":"x","role":"assistant"}}]}"#,
            r#"{"id":"c","choices":[{"index":0,"delta":{"content":"x"},"logprobs":{"content":[]}}]}"#,
            r#"{"id":"c","choices":[{"index":0,"delta":{"content":"x","refusal":[ ]}}]}"#,
            r#"{"id":"c","choices":[{"index":0,"delta":{"content":"x","audio":[0]}}]}"#,
            r#"{"id":"c","choices":[{"index":0,"delta":{"content":"x"},"logprobs":null,"x":null}],"usage":{"n":1}}"#,
            r#"{ "id": "c", "choices": [ { "index": 0, "delta": { "content": "a\"b" } } ], "extra": [1] }"#,
        ];
        for data in chunks {
            for text in ["", "held <b>\"quoted\"\n"] {
                assert_eq!(
                    fast(data, None, text),
                    general(data, text),
                    "{data} with {text:?}"
                );
            }
        }
    }

    /// A chunk read against the one before it (only its content and
    /// numbers differ) is spliced and held back as when read whole.
    #[test]
    fn changed_text_of_a_chunk_read_against_the_last() {
        let pairs = [
            (
                r#"{"id":"c","created":1,"choices":[{"index":0,"delta":{"content":"a"},"logprobs":null}]}"#,
                r#"{"id":"c","created":22,"choices":[{"index":0,"delta":{"content":"bb"},"logprobs":null}]}"#,
            ),
            (
                r#"{"id":"c","t":1,"choices":[{"index":0,"delta":{"content":"a"}}],"usage":{"n":1}}"#,
                r#"{"id":"c","t":2,"choices":[{"index":0,"delta":{"content":"<tool_call>"}}],"usage":{"n":2}}"#,
            ),
        ];
        for (before, data) in pairs {
            for text in ["", "kept"] {
                assert_eq!(
                    fast(data, Some(before), text),
                    general(data, text),
                    "{data} with {text:?}"
                );
            }
        }
    }
}
