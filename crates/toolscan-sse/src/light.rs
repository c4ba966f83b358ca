//! The common case read without building a `serde_json::Value`: a chunk of
//! one choice whose delta is text only, no `tool_calls`, no
//! `finish_reason`. Its content is borrowed from the event's data (copied
//! only when it holds escapes); every other field is skipped unread.

use std::borrow::Cow;

use serde::Deserialize;

/// A chunk, as far as the fast path needs it.
#[derive(Deserialize)]
pub(crate) struct Chunk<'a> {
    #[serde(borrow)]
    choices: Option<Vec<ChoiceView<'a>>>,
}

#[derive(Deserialize)]
struct ChoiceView<'a> {
    index: Option<u64>,
    #[serde(borrow)]
    delta: Option<Delta<'a>>,
    #[serde(borrow)]
    finish_reason: Option<&'a serde_json::value::RawValue>,
}

#[derive(Deserialize)]
struct Delta<'a> {
    #[serde(borrow)]
    content: Option<Cow<'a, str>>,
    #[serde(borrow)]
    tool_calls: Option<&'a serde_json::value::RawValue>,
}

/// What the fast path may handle in a chunk: its one choice's index and
/// text (`None`: no content).
pub(crate) struct Text<'a> {
    pub(crate) index: u64,
    pub(crate) content: Option<Cow<'a, str>>,
}

/// The chunk's one text-only choice, if that is all it is; `None` sends it
/// down the general path.
pub(crate) fn text_only(data: &str) -> Option<Text<'_>> {
    let chunk: Chunk<'_> = serde_json::from_str(data).ok()?;
    let mut choices = chunk.choices?;
    if choices.len() != 1 {
        return None;
    }
    let c = choices.pop()?;
    if c.finish_reason.is_some_and(|r| r.get() != "null") {
        return None;
    }
    let (content, tool_calls) = match c.delta {
        Some(d) => (d.content, d.tool_calls),
        None => (None, None),
    };
    if tool_calls.is_some_and(|t| t.get() != "null") {
        return None;
    }
    Some(Text {
        index: c.index.unwrap_or(0),
        content,
    })
}
