//! What the module answers, as JSON text: events (the JSON Lines fields of
//! `toolscan parse --output events`, with a call's `arguments` as JSON
//! text, as OpenAI's `function.arguments` is), whole responses, and
//! errors.

use std::fmt;

use serde::ser::{Serialize, SerializeMap, Serializer};
use toolscan_core::{Diagnostic, Event, EventRef, Response};

use crate::buffers::set_index;
use crate::{FAILED, OK, ONE_ARGS, ONE_REASONING, ONE_TEXT};

/// Why a call failed: the error class JavaScript throws (its `code`) and
/// the message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Failure {
    /// An option of the wrong type or value.
    Options(String),
    /// No built-in format of that name.
    UnknownFormat(String),
    /// `feed` after `finish`.
    Finished,
    /// A handle that names no parser (freed, or never made).
    Freed,
    /// Bytes that are not UTF-8 (with `invalidUtf8: "throw"`), at this
    /// offset of the answer.
    InvalidUtf8(u64),
    /// A manifest of the tools cannot be written.
    Manifest(String),
    /// A response cannot be rendered.
    Render(String),
    /// A request the JavaScript side built wrongly (a bug there).
    Request(String),
}

impl Failure {
    /// The `code` of the JavaScript error.
    fn code(&self) -> &'static str {
        match self {
            Failure::Options(_) => "options",
            Failure::UnknownFormat(_) => "unknown_format",
            Failure::Finished => "finished",
            Failure::Freed => "freed",
            Failure::InvalidUtf8(_) => "invalid_utf8",
            Failure::Manifest(_) => "manifest",
            Failure::Render(_) => "render",
            Failure::Request(_) => "request",
        }
    }

    /// Writes the error object into `out`; false (the call's status).
    pub(crate) fn write(&self, out: &mut Vec<u8>) -> bool {
        let mut error = serde_json::Map::new();
        error.insert("error".into(), self.code().into());
        error.insert("message".into(), self.to_string().into());
        if let Failure::InvalidUtf8(at) = self {
            error.insert("offset".into(), (*at).into());
        }
        // Writing a map of strings into a Vec cannot fail.
        let _ = serde_json::to_writer(out, &error);
        false
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::Options(m)
            | Failure::UnknownFormat(m)
            | Failure::Manifest(m)
            | Failure::Render(m)
            | Failure::Request(m) => f.write_str(m),
            Failure::Finished => f.write_str("feed() after finish()"),
            Failure::Freed => f.write_str("the parser was freed"),
            Failure::InvalidUtf8(at) => write!(f, "invalid UTF-8 at byte {at} of the answer"),
        }
    }
}

/// Writes `value` as the answer; true (the call's status).
pub(crate) fn write_value<T: Serialize + ?Sized>(out: &mut Vec<u8>, value: &T) -> bool {
    match serde_json::to_writer(&mut *out, value) {
        Ok(()) => true,
        Err(e) => {
            out.clear();
            Failure::Request(format!("cannot write the answer: {e}")).write(out)
        }
    }
}

/// Writes `events`; the status that says how. Most feeds of a stream
/// decide one delta or none, and a JSON array costs JavaScript a
/// `JSON.parse` (a quarter of a text delta's time, measured), so:
/// nothing at all for no events ([`OK`]); one text, reasoning or argument
/// delta as its bare UTF-8 ([`ONE_TEXT`], [`ONE_REASONING`],
/// [`ONE_ARGS`], with the call's index beside it); else a JSON array
/// ([`OK`]).
pub(crate) fn write_events(out: &mut Vec<u8>, events: &[Event]) -> i32 {
    let bare = |out: &mut Vec<u8>, delta: &str, status: i32| {
        out.extend_from_slice(delta.as_bytes());
        status
    };
    match events {
        [] => OK,
        [Event::Text { delta }] => bare(out, delta.as_str(), ONE_TEXT),
        [Event::Reasoning { delta }] => bare(out, delta.as_str(), ONE_REASONING),
        [Event::ToolCallArgs { index, delta }] => match u32::try_from(*index) {
            Ok(i) => {
                set_index(i);
                bare(out, delta.as_str(), ONE_ARGS)
            }
            Err(_) => json_array(out, events),
        },
        _ => json_array(out, events),
    }
}

/// Writes `events` as a JSON array.
fn json_array(out: &mut Vec<u8>, events: &[Event]) -> i32 {
    let list: Vec<JsEvent<'_>> = events.iter().map(|e| JsEvent(e.as_ref())).collect();
    if write_value(out, &list) {
        OK
    } else {
        FAILED
    }
}

/// An event as JavaScript gets it.
struct JsEvent<'a>(EventRef<'a>);

impl Serialize for JsEvent<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            EventRef::ToolCallEnd {
                index,
                id,
                name,
                arguments,
            } => {
                let mut m = s.serialize_map(Some(5))?;
                m.serialize_entry("type", "tool_call_end")?;
                m.serialize_entry("index", &index)?;
                m.serialize_entry("id", id)?;
                m.serialize_entry("name", name)?;
                m.serialize_entry("arguments", arguments)?;
                m.end()
            }
            other => other.serialize(s),
        }
    }
}

/// A whole response as JavaScript gets it: `toolscan parse --output
/// final`'s object, each call's `arguments` as JSON text.
pub(crate) struct JsResponse<'a>(pub(crate) &'a Response);

impl Serialize for JsResponse<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let r = self.0;
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("text", &r.text)?;
        if let Some(reasoning) = &r.reasoning {
            m.serialize_entry("reasoning", reasoning)?;
        }
        let calls: Vec<JsCall<'_>> = r
            .tool_calls
            .iter()
            .map(|c| JsCall {
                id: &c.id,
                name: &c.name,
                arguments: c.arguments.as_str(),
                diagnostics: &c.diagnostics,
            })
            .collect();
        m.serialize_entry("tool_calls", &calls)?;
        m.serialize_entry("diagnostics", &r.diagnostics)?;
        m.serialize_entry("finish_reason", &r.finish_reason)?;
        m.end()
    }
}

#[derive(serde::Serialize)]
struct JsCall<'a> {
    id: &'a str,
    name: &'a str,
    arguments: &'a str,
    #[serde(skip_serializing_if = "<[Diagnostic]>::is_empty")]
    diagnostics: &'a [Diagnostic],
}
