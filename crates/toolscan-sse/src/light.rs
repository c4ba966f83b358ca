//! The common case read without building a `serde_json::Value`: a chunk of
//! one choice whose delta is text only, no `tool_calls`, no
//! `finish_reason`. Its content is borrowed from the event's data (copied
//! only when it holds escapes); every other field is skipped unread.

use std::borrow::Cow;

use serde::Deserialize;

/// Top-level fields of a chunk that are the same in every chunk of a
/// response (or carry no content): a chunk with nothing else is not worth
/// sending (here and in the general path, `chunks.rs`).
pub(crate) const ENVELOPE: [&str; 7] = [
    "id",
    "object",
    "created",
    "model",
    "system_fingerprint",
    "service_tier",
    "obfuscation",
];

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

/// A text-only chunk whose text the parser changed (held back, or released
/// with text held before) but that carries no calls and no reasoning: what
/// the general path would send for it, found without a `serde_json::Value`
/// and without writing the chunk anew. `Some(None)`: it carries nothing
/// (the general path holds it back); `Some(Some(json))`: the chunk's data
/// with its `delta.content` string replaced by `text`, every other byte as
/// it came. `None` (a key with escapes, a shape the check does not read):
/// the general path takes the chunk.
///
/// The rewrite of such chunks is the cost of the stream around a call (its
/// text is held chunk by chunk): building, rewriting and writing out a
/// `Value` for each took most of the rewrite's time.
pub(crate) fn changed_text(data: &str, text: &str) -> Option<Option<String>> {
    let top = fields(data)?;
    let choices = last(&top, "choices")?;
    let choices: Vec<&serde_json::value::RawValue> = serde_json::from_str(choices.get()).ok()?;
    let [choice] = choices.as_slice() else {
        return None;
    };
    let choice = fields(choice.get())?;
    let delta = fields(last(&choice, "delta")?.get())?;
    let content = last(&delta, "content")?.get();
    let nothing = top.iter().all(|(k, v)| match *k {
        "choices" => true,
        k if ENVELOPE.contains(&k) => true,
        _ => is_null(v.get()),
    }) && choice.iter().all(|(k, v)| match *k {
        "index" | "delta" => true,
        _ => is_null(v.get()),
    }) && delta.iter().all(|(k, v)| match *k {
        "content" => text.is_empty(),
        _ => {
            let v = v.get();
            // Empty text or nulls only; an empty array too.
            is_null(v)
                || v == "\"\""
                || v.strip_prefix('[')
                    .and_then(|a| a.strip_suffix(']'))
                    .is_some_and(|a| a.trim().is_empty())
        }
    });
    if nothing {
        return Some(None);
    }
    // The content's place in `data` (a `RawValue` borrowed from it).
    let start = (content.as_ptr() as usize).checked_sub(data.as_ptr() as usize)?;
    let end = start.checked_add(content.len())?;
    if data.get(start..end) != Some(content) {
        return None;
    }
    let text = serde_json::to_string(text).ok()?;
    let mut out = String::with_capacity(data.len() - content.len() + text.len());
    out.push_str(&data[..start]);
    out.push_str(&text);
    out.push_str(&data[end..]);
    Some(Some(out))
}

/// An object's fields, as they came (keys with escapes: `None`).
fn fields(json: &str) -> Option<Vec<(&str, &serde_json::value::RawValue)>> {
    let map: Fields = serde_json::from_str(json).ok()?;
    Some(map.0)
}

/// The last field named `key` (as a `serde_json::Value` keeps it).
fn last<'a>(
    fields: &[(&'a str, &'a serde_json::value::RawValue)],
    key: &str,
) -> Option<&'a serde_json::value::RawValue> {
    fields
        .iter()
        .rev()
        .find(|(k, _)| *k == key)
        .map(|(_, v)| *v)
}

fn is_null(raw: &str) -> bool {
    raw == "null"
}

/// An object's fields in order, borrowed.
struct Fields<'a>(Vec<(&'a str, &'a serde_json::value::RawValue)>);

impl<'de: 'a, 'a> Deserialize<'de> for Fields<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> serde::de::Visitor<'de> for Visit<'a> {
            type Value = Fields<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<M: serde::de::MapAccess<'de>>(
                self,
                mut m: M,
            ) -> Result<Fields<'a>, M::Error> {
                let mut fields = Vec::new();
                while let Some(entry) =
                    m.next_entry::<&'de str, &'de serde_json::value::RawValue>()?
                {
                    fields.push(entry);
                }
                Ok(Fields(fields))
            }
        }
        d.deserialize_map(Visit(std::marker::PhantomData))
    }
}
