//! The events a [`Parser`](crate::Parser) emits, and how they serialise.
//!
//! There are two forms of every event:
//!
//! - [`EventRef`] borrows its text from the parser or from the chunk being
//!   fed: it is what a [`Sink`](crate::Sink) receives, with no allocation
//!   per event;
//! - [`Event`] owns its text: what [`Parser::feed`](crate::Parser::feed)
//!   returns, and what `toolscan parse` writes.
//!
//! Serialised with `serde_json`, every event is one JSON object with a `type`
//! field — exactly the JSON Lines the `toolscan parse` command writes:
//!
//! ```
//! use toolscan_core::Event;
//! let e = Event::ToolCallArgs { index: 0, delta: "{\"city\"".into() };
//! assert_eq!(
//!     serde_json::to_string(&e).unwrap(),
//!     r#"{"type":"tool_call_args","index":0,"delta":"{\"city\""}"#
//! );
//! ```

use std::fmt;

use serde::{Serialize, Serializer};
use serde_json::{Map, Value};

/// One event of the output stream, in input order, owning its text.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Event {
    /// Content outside tool calls. Always valid UTF-8 cut at character
    /// boundaries.
    Text {
        /// The text.
        delta: Delta,
    },
    /// Content of a reasoning block (only with reasoning separation on).
    Reasoning {
        /// The reasoning text.
        delta: Delta,
    },
    /// A call began and its name is known. Sent once per `index`.
    ToolCallStart {
        /// 0-based ordinal of the call in this response.
        index: usize,
        /// The call id: taken from the text when the format carries one,
        /// minted otherwise.
        id: String,
        /// The tool name.
        name: String,
    },
    /// A piece of the call's arguments. The concatenation of all deltas of
    /// one index is exactly the final arguments JSON text.
    ToolCallArgs {
        /// The call's index.
        index: usize,
        /// The next piece of the arguments JSON text.
        delta: Delta,
    },
    /// The call is complete and may be dispatched now.
    ToolCallEnd {
        /// The call's index.
        index: usize,
        /// The call id (same as in [`Event::ToolCallStart`]).
        id: String,
        /// The tool name (same as in [`Event::ToolCallStart`]).
        name: String,
        /// The arguments: the JSON text of an object (`{}` for a call
        /// without arguments), parsed only when asked.
        arguments: Arguments,
    },
    /// Something was not as the format says.
    Diagnostic(Diagnostic),
    /// The last event, emitted by [`Parser::finish`](crate::Parser::finish).
    Done {
        /// Why the response ended.
        finish_reason: FinishReason,
    },
}

/// The text of a delta in an owned [`Event`]: a string that keeps short
/// text (up to 24 bytes, a token or a few) inline, without allocating, so
/// owned events of token-sized chunks cost little more than borrowed ones.
/// It dereferences to `str`.
#[derive(Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Delta(compact_str::CompactString);

impl Delta {
    /// The text.
    #[inline]
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Appends text.
    #[inline]
    pub fn push_str(&mut self, s: &str) {
        self.0.push_str(s)
    }

    /// The text as a `String`.
    pub fn into_string(self) -> String {
        self.0.into_string()
    }
}

impl std::ops::Deref for Delta {
    type Target = str;
    #[inline]
    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for Delta {
    #[inline]
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl std::borrow::Borrow<str> for Delta {
    #[inline]
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl From<&str> for Delta {
    #[inline]
    fn from(s: &str) -> Delta {
        Delta(s.into())
    }
}

impl From<String> for Delta {
    fn from(s: String) -> Delta {
        Delta(s.into())
    }
}

impl From<Delta> for String {
    fn from(d: Delta) -> String {
        d.into_string()
    }
}

impl PartialEq<str> for Delta {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for Delta {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialEq<String> for Delta {
    fn eq(&self, other: &String) -> bool {
        self.as_str() == other
    }
}

impl fmt::Debug for Delta {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for Delta {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Delta {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// One event, borrowing its text: what a [`Sink`](crate::Sink) receives.
///
/// Text and argument deltas borrow from the chunk that was fed whenever the
/// bytes are there; only bytes held back across a chunk boundary (a possible
/// marker, an unfinished character) or kept for a call are copied, once.
/// [`to_owned`](EventRef::to_owned) makes an [`Event`].
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum EventRef<'a> {
    /// See [`Event::Text`].
    Text(&'a str),
    /// See [`Event::Reasoning`].
    Reasoning(&'a str),
    /// See [`Event::ToolCallStart`].
    ToolCallStart {
        /// The call's index.
        index: usize,
        /// The call id.
        id: &'a str,
        /// The tool name.
        name: &'a str,
    },
    /// See [`Event::ToolCallArgs`].
    ToolCallArgs {
        /// The call's index.
        index: usize,
        /// The next piece of the arguments JSON text.
        delta: &'a str,
    },
    /// See [`Event::ToolCallEnd`].
    ToolCallEnd {
        /// The call's index.
        index: usize,
        /// The call id.
        id: &'a str,
        /// The tool name.
        name: &'a str,
        /// The arguments JSON text (a validated JSON object).
        arguments: &'a str,
    },
    /// See [`Event::Diagnostic`].
    Diagnostic(&'a Diagnostic),
    /// See [`Event::Done`].
    Done {
        /// Why the response ended.
        finish_reason: FinishReason,
    },
}

/// Serialises exactly as the owned [`Event`] does (one JSON object with a
/// `type` field), without making one.
impl Serialize for EventRef<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(None)?;
        match *self {
            EventRef::Text(delta) => {
                m.serialize_entry("type", "text")?;
                m.serialize_entry("delta", delta)?;
            }
            EventRef::Reasoning(delta) => {
                m.serialize_entry("type", "reasoning")?;
                m.serialize_entry("delta", delta)?;
            }
            EventRef::ToolCallStart { index, id, name } => {
                m.serialize_entry("type", "tool_call_start")?;
                m.serialize_entry("index", &index)?;
                m.serialize_entry("id", id)?;
                m.serialize_entry("name", name)?;
            }
            EventRef::ToolCallArgs { index, delta } => {
                m.serialize_entry("type", "tool_call_args")?;
                m.serialize_entry("index", &index)?;
                m.serialize_entry("delta", delta)?;
            }
            EventRef::ToolCallEnd {
                index,
                id,
                name,
                arguments,
            } => {
                m.serialize_entry("type", "tool_call_end")?;
                m.serialize_entry("index", &index)?;
                m.serialize_entry("id", id)?;
                m.serialize_entry("name", name)?;
                let raw = serde_json::value::RawValue::from_string(compact_json(arguments))
                    .map_err(serde::ser::Error::custom)?;
                m.serialize_entry("arguments", &raw)?;
            }
            EventRef::Diagnostic(d) => {
                m.serialize_entry("type", "diagnostic")?;
                m.serialize_entry("kind", &d.kind)?;
                m.serialize_entry("offset", &d.offset)?;
                m.serialize_entry("message", &d.message)?;
            }
            EventRef::Done { finish_reason } => {
                m.serialize_entry("type", "done")?;
                m.serialize_entry("finish_reason", &finish_reason)?;
            }
        }
        m.end()
    }
}

impl EventRef<'_> {
    /// The owned form.
    pub fn to_owned(&self) -> Event {
        match *self {
            EventRef::Text(t) => Event::Text { delta: t.into() },
            EventRef::Reasoning(t) => Event::Reasoning { delta: t.into() },
            EventRef::ToolCallStart { index, id, name } => Event::ToolCallStart {
                index,
                id: id.into(),
                name: name.into(),
            },
            EventRef::ToolCallArgs { index, delta } => Event::ToolCallArgs {
                index,
                delta: delta.into(),
            },
            EventRef::ToolCallEnd {
                index,
                id,
                name,
                arguments,
            } => Event::ToolCallEnd {
                index,
                id: id.into(),
                name: name.into(),
                arguments: Arguments::from_validated(arguments.into()),
            },
            EventRef::Diagnostic(d) => Event::Diagnostic(d.clone()),
            EventRef::Done { finish_reason } => Event::Done { finish_reason },
        }
    }
}

impl Event {
    /// The borrowed form.
    pub fn as_ref(&self) -> EventRef<'_> {
        match self {
            Event::Text { delta } => EventRef::Text(delta),
            Event::Reasoning { delta } => EventRef::Reasoning(delta),
            Event::ToolCallStart { index, id, name } => EventRef::ToolCallStart {
                index: *index,
                id,
                name,
            },
            Event::ToolCallArgs { index, delta } => EventRef::ToolCallArgs {
                index: *index,
                delta,
            },
            Event::ToolCallEnd {
                index,
                id,
                name,
                arguments,
            } => EventRef::ToolCallEnd {
                index: *index,
                id,
                name,
                arguments: arguments.as_str(),
            },
            Event::Diagnostic(d) => EventRef::Diagnostic(d),
            Event::Done { finish_reason } => EventRef::Done {
                finish_reason: *finish_reason,
            },
        }
    }
}

/// The arguments of a completed call: the JSON text of an object, exactly
/// as the model wrote it (for formats whose arguments are JSON; normalised
/// for lenient JSON), kept as text like `serde_json`'s `RawValue`.
///
/// Parsing is deferred to whoever needs a value:
///
/// ```
/// use toolscan_core::{Event, Parser};
/// let mut p = Parser::for_format("hermes").unwrap();
/// let ev = p.feed(br#"<tool_call>{"name": "f", "arguments": {"n": 99999999999999999999}}</tool_call>"#);
/// let Some(Event::ToolCallEnd { arguments, .. }) = ev.last() else { panic!() };
/// assert_eq!(arguments.as_str(), r#"{"n": 99999999999999999999}"#); // exact
/// assert!(arguments.parse().unwrap()["n"].is_number());
/// // serialised compactly, the digits kept
/// assert_eq!(serde_json::to_string(arguments).unwrap(), r#"{"n":99999999999999999999}"#);
/// ```
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Arguments {
    /// Invariant: a complete JSON object, valid UTF-8.
    json: Box<str>,
}

impl Arguments {
    /// Text the parser already validated as one JSON object.
    pub(crate) fn from_validated(json: Box<str>) -> Arguments {
        Arguments { json }
    }

    /// Checks that `json` is one JSON object.
    pub fn new(json: impl Into<String>) -> Result<Arguments, serde_json::Error> {
        let json: String = json.into();
        serde_json::from_str::<Map<String, Value>>(&json)?;
        Ok(Arguments { json: json.into() })
    }

    /// The empty object `{}`.
    pub fn empty() -> Arguments {
        Arguments { json: "{}".into() }
    }

    /// The JSON text, exactly as recorded.
    pub fn as_str(&self) -> &str {
        &self.json
    }

    /// Parses the text into a JSON object (numbers beyond `f64` precision
    /// are rounded here; [`as_str`](Self::as_str) keeps them exact).
    pub fn parse(&self) -> Result<Map<String, Value>, serde_json::Error> {
        serde_json::from_str(&self.json)
    }

    /// Deserialises the arguments into a type of the caller's.
    pub fn deserialize<'de, T: serde::Deserialize<'de>>(&'de self) -> serde_json::Result<T> {
        serde_json::from_str(&self.json)
    }

    /// The text with the whitespace between tokens removed.
    pub fn compact(&self) -> String {
        compact_json(&self.json)
    }
}

impl fmt::Debug for Arguments {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.json)
    }
}

impl fmt::Display for Arguments {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.json)
    }
}

impl Serialize for Arguments {
    /// Writes the object compactly (one line), every token as written.
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let raw = serde_json::value::RawValue::from_string(self.compact())
            .map_err(serde::ser::Error::custom)?;
        raw.serialize(s)
    }
}

/// Removes whitespace outside strings from valid JSON text.
fn compact_json(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    let mut in_str = false;
    let mut esc = false;
    for c in json.chars() {
        if in_str {
            out.push(c);
            if esc {
                esc = false;
            } else if c == '\\' {
                esc = true;
            } else if c == '"' {
                in_str = false;
            }
        } else if !matches!(c, ' ' | '\t' | '\n' | '\r') {
            in_str = c == '"';
            out.push(c);
        }
    }
    out
}

/// Why a response ended, as OpenAI's `finish_reason`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum FinishReason {
    /// No call completed.
    Stop,
    /// At least one call completed and the stream did not end inside a call.
    ToolCalls,
    /// The stream ended inside a call (it was not dispatched).
    Length,
}

impl FinishReason {
    /// The OpenAI spelling: `stop`, `tool_calls` or `length`.
    pub fn as_str(self) -> &'static str {
        match self {
            FinishReason::Stop => "stop",
            FinishReason::ToolCalls => "tool_calls",
            FinishReason::Length => "length",
        }
    }
}

/// A note that something was not as the format says, with the byte offset
/// in the input where it was found.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Diagnostic {
    /// What kind of problem this is.
    pub kind: DiagnosticKind,
    /// Byte offset in the whole input (not in the chunk).
    pub offset: u64,
    /// A human-readable explanation.
    pub message: String,
}

impl Diagnostic {
    /// A diagnostic of `kind` at byte `offset` of the input.
    pub fn new(kind: DiagnosticKind, offset: u64, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            kind,
            offset,
            message: message.into(),
        }
    }
}

/// The kinds of [`Diagnostic`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum DiagnosticKind {
    /// A block that opened like a call did not parse; its bytes came back as
    /// text.
    Malformed,
    /// The stream ended inside a call; its bytes came back as text.
    Truncated,
    /// A configured limit (call size, nesting depth, hold-back) was hit.
    Limit,
    /// The call names a tool that is not in the `tools` list (reported
    /// before its `tool_call_start`; with the schema check on, just before
    /// its `tool_call_end`, with the check's other diagnostics).
    UnknownTool,
    /// Bytes that are not UTF-8: they became U+FFFD in the text.
    InvalidUtf8,
    /// A parameter the tool's schema does not declare; its value was
    /// kept by the untyped rule.
    UnknownParameter,
    /// A parameter value that fits none of the types its schema declares;
    /// it was kept by the untyped rule.
    TypeMismatch,
    /// A parameter value whose closing tag was missing ended at the
    /// markup that followed it; the call was kept. Or, where the value
    /// held markup (of the format, or of a reasoning block), nothing but
    /// its closing tag could end it: the call's bytes came back as text.
    Unclosed,
    /// A call the options do not let through ([`Admit`](crate::Admit): a
    /// call after the allowed number, or of another tool than the one
    /// allowed); its bytes came back as text.
    NotAllowed,
    /// Schema check ([`Options::check_calls`](crate::Options::check_calls)):
    /// a parameter the tool's schema (or a nested object's) lists in
    /// `required` is absent.
    MissingParameter,
    /// Schema check: an argument's JSON type is none of those its schema
    /// declares (`type`, a list of types, `anyOf`/`oneOf`; `integer` is a
    /// number without a fractional part), at any depth (nested objects'
    /// `properties`, arrays' `items`).
    WrongType,
    /// Schema check: an argument is not one of its schema's `enum` values
    /// (or not its `const`).
    NotInEnum,
    /// A parameter named again in the same call (`<arg_key>k</arg_key>`
    /// twice, `f(a=1, a=2)`): the first value, which has already streamed,
    /// is kept; this one is dropped (no argument bytes at all).
    DuplicateParameter,
}

impl DiagnosticKind {
    /// Every kind, in declaration order (counters index them by their
    /// place here).
    pub const ALL: [DiagnosticKind; 13] = [
        DiagnosticKind::Malformed,
        DiagnosticKind::Truncated,
        DiagnosticKind::Limit,
        DiagnosticKind::UnknownTool,
        DiagnosticKind::InvalidUtf8,
        DiagnosticKind::UnknownParameter,
        DiagnosticKind::TypeMismatch,
        DiagnosticKind::Unclosed,
        DiagnosticKind::NotAllowed,
        DiagnosticKind::MissingParameter,
        DiagnosticKind::WrongType,
        DiagnosticKind::NotInEnum,
        DiagnosticKind::DuplicateParameter,
    ];

    /// The snake_case name used in JSON output.
    pub fn as_str(self) -> &'static str {
        match self {
            DiagnosticKind::Malformed => "malformed",
            DiagnosticKind::Truncated => "truncated",
            DiagnosticKind::Limit => "limit",
            DiagnosticKind::UnknownTool => "unknown_tool",
            DiagnosticKind::InvalidUtf8 => "invalid_utf8",
            DiagnosticKind::UnknownParameter => "unknown_parameter",
            DiagnosticKind::TypeMismatch => "type_mismatch",
            DiagnosticKind::Unclosed => "unclosed",
            DiagnosticKind::NotAllowed => "not_allowed",
            DiagnosticKind::MissingParameter => "missing_parameter",
            DiagnosticKind::WrongType => "wrong_type",
            DiagnosticKind::NotInEnum => "not_in_enum",
            DiagnosticKind::DuplicateParameter => "duplicate_parameter",
        }
    }

    /// Whether this kind says a completed call does not fit the tools it
    /// was given: [`UnknownTool`](DiagnosticKind::UnknownTool) and the
    /// kinds of the schema check
    /// ([`Options::check_calls`](crate::Options::check_calls)).
    pub fn is_schema(self) -> bool {
        matches!(
            self,
            DiagnosticKind::UnknownTool
                | DiagnosticKind::MissingParameter
                | DiagnosticKind::WrongType
                | DiagnosticKind::NotInEnum
        )
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} at byte {}: {}",
            self.kind.as_str(),
            self.offset,
            self.message
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compacting_keeps_strings() {
        assert_eq!(
            compact_json("{ \"a b\" : [1, \"x \\\" y\" ],\n\t\"c\":{} }"),
            r#"{"a b":[1,"x \" y"],"c":{}}"#
        );
    }

    #[test]
    fn owned_and_borrowed_round_trip() {
        let d = Diagnostic {
            kind: DiagnosticKind::InvalidUtf8,
            offset: 3,
            message: "x".into(),
        };
        for e in [
            EventRef::Text("a"),
            EventRef::Reasoning("b"),
            EventRef::ToolCallStart {
                index: 1,
                id: "i",
                name: "n",
            },
            EventRef::ToolCallArgs {
                index: 1,
                delta: "{",
            },
            EventRef::ToolCallEnd {
                index: 1,
                id: "i",
                name: "n",
                arguments: "{ \"a\": [1, 2.50] }",
            },
            EventRef::Diagnostic(&d),
            EventRef::Done {
                finish_reason: FinishReason::Stop,
            },
        ] {
            assert_eq!(e.to_owned().as_ref(), e);
            assert_eq!(
                serde_json::to_string(&e).unwrap(),
                serde_json::to_string(&e.to_owned()).unwrap()
            );
        }
    }

    #[test]
    fn arguments_check_and_serialise() {
        assert!(Arguments::new("[1]").is_err());
        let a = Arguments::new("{\n  \"x\": 1.50\n}").unwrap();
        assert_eq!(serde_json::to_string(&a).unwrap(), r#"{"x":1.50}"#);
        assert_eq!(a.parse().unwrap()["x"], 1.5);
        assert_eq!(Arguments::empty().as_str(), "{}");
    }
}
