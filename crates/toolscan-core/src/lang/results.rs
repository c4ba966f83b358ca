//! How a format writes tool results — the `tool` messages that answer its
//! calls — as its model's chat template writes them: the chat role that
//! carries them, the text around each result (with the tool's name, the
//! call's id or the result's place where the template writes them), and
//! whether several results share one message.
//!
//! In a format file it is the key `tool_results` (see
//! `docs/format-files.md`):
//!
//! ```json
//! "tool_results": {
//!   "role": "user",
//!   "each": "<tool_response>\n{content}\n</tool_response>",
//!   "shared": {"between": "\n"}
//! }
//! ```
//!
//! `each` is text with fields in braces — `{content}` (the result as
//! sent), `{content_json}` (the result as a JSON string), `{name}`,
//! `{id}`, `{index}` (the result's place in its run, from 0) — and `{{`,
//! `}}` for a brace. Without `shared`, each result is a message of its
//! own; with it, a run of results is one message: `before`, the results
//! joined by `between`, `after` (each text, default empty).

use serde_json::{Map, Value};

use crate::error::FormatFileError;
use crate::lang::format_file::fields::Obj;

/// A part of the text written for one result.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Part {
    /// Text as it is.
    Text(String),
    /// The result's content, as sent.
    Content,
    /// The result's content as a JSON string literal.
    ContentJson,
    /// The name of the tool that answered.
    Name,
    /// The id of the call answered (empty without one).
    Id,
    /// The result's place in its run of results, from 0.
    Index,
}

/// Several results written as one message.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub(crate) struct Shared {
    /// Before the first result.
    pub before: String,
    /// Between two results.
    pub between: String,
    /// After the last result.
    pub after: String,
}

/// How a format writes tool results.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Results {
    /// The chat role of the message(s) that carry them (`user`, `tool`,
    /// `ipython`…).
    pub role: String,
    /// The text written for each result.
    pub each: Vec<Part>,
    /// A run of results is one message (else one message each).
    pub shared: Option<Shared>,
}

/// The keys of `tool_results`.
const KEYS: &[&str] = &["role", "each", "shared"];
/// The keys of `shared`.
const SHARED_KEYS: &[&str] = &["before", "between", "after"];

impl Results {
    /// Results in `role`, each written by the template `each` (fields in
    /// braces, as in a format file). A malformed template is written as
    /// plain text, without the result: the built-in formats' templates are
    /// checked by a test (each holds the content).
    pub(crate) fn new(role: &str, each: &str) -> Results {
        Results {
            role: role.into(),
            each: parse_each(each).unwrap_or_else(|_| vec![Part::Text(each.into())]),
            shared: None,
        }
    }

    /// Several results share one message: `before`, the results joined by
    /// `between`, `after`.
    pub(crate) fn shared(mut self, before: &str, between: &str, after: &str) -> Results {
        self.shared = Some(Shared {
            before: before.into(),
            between: between.into(),
            after: after.into(),
        });
        self
    }

    /// Reads `tool_results` from its object.
    pub(crate) fn read(o: &Obj<'_>) -> Result<Results, FormatFileError> {
        o.only(KEYS)?;
        let role = o.need_lit("role")?;
        let each = o
            .lit("each")?
            .ok_or_else(|| o.err("each", "missing; must be a non-empty string"))?;
        let each = parse_each(each).map_err(|why| o.err("each", why))?;
        let shared = match o.obj("shared")? {
            None => None,
            Some(s) => {
                s.only(SHARED_KEYS)?;
                let text = |k: &str| s.str(k).map(|v| v.unwrap_or("").to_owned());
                Some(Shared {
                    before: text("before")?,
                    between: text("between")?,
                    after: text("after")?,
                })
            }
        };
        Ok(Results {
            role: role.to_owned(),
            each,
            shared,
        })
    }

    /// The JSON form, as [`Results::read`] reads it.
    pub(crate) fn write(&self) -> Value {
        let mut m = Map::new();
        m.insert("role".into(), self.role.clone().into());
        m.insert("each".into(), write_each(&self.each).into());
        if let Some(s) = &self.shared {
            let mut sm = Map::new();
            for (k, v) in [
                ("before", &s.before),
                ("between", &s.between),
                ("after", &s.after),
            ] {
                if !v.is_empty() {
                    sm.insert(k.into(), v.clone().into());
                }
            }
            m.insert("shared".into(), Value::Object(sm));
        }
        Value::Object(m)
    }
}

/// The parts of an `each` template: text, fields in braces, `{{` and `}}`
/// for braces.
fn parse_each(s: &str) -> Result<Vec<Part>, String> {
    let mut parts = Vec::new();
    let mut text = String::new();
    let mut rest = s;
    while let Some(c) = rest.chars().next() {
        if let Some(r) = rest.strip_prefix("{{") {
            text.push('{');
            rest = r;
        } else if let Some(r) = rest.strip_prefix("}}") {
            text.push('}');
            rest = r;
        } else if c == '{' {
            let Some(end) = rest.find('}') else {
                return Err("a `{` without its `}` (write `{{` for a brace)".into());
            };
            let part = match &rest[1..end] {
                "content" => Part::Content,
                "content_json" => Part::ContentJson,
                "name" => Part::Name,
                "id" => Part::Id,
                "index" => Part::Index,
                other => {
                    return Err(format!(
                        "unknown field {{{other}}}; expected one of {{content}}, \
                         {{content_json}}, {{name}}, {{id}}, {{index}} (write `{{{{` for a brace)"
                    ))
                }
            };
            if !text.is_empty() {
                parts.push(Part::Text(std::mem::take(&mut text)));
            }
            parts.push(part);
            rest = &rest[end + 1..];
        } else if c == '}' {
            return Err("a `}` without its `{` (write `}}` for a brace)".into());
        } else {
            text.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    if !text.is_empty() {
        parts.push(Part::Text(text));
    }
    if !parts
        .iter()
        .any(|p| matches!(p, Part::Content | Part::ContentJson))
    {
        return Err("holds no `{content}` or `{content_json}`: the result would be lost".into());
    }
    Ok(parts)
}

/// An `each` template written back.
fn write_each(parts: &[Part]) -> String {
    let mut s = String::new();
    for p in parts {
        match p {
            Part::Text(t) => s.push_str(&t.replace('{', "{{").replace('}', "}}")),
            Part::Content => s.push_str("{content}"),
            Part::ContentJson => s.push_str("{content_json}"),
            Part::Name => s.push_str("{name}"),
            Part::Id => s.push_str("{id}"),
            Part::Index => s.push_str("{index}"),
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_templates_read_and_write_back() {
        let t = "[TOOL_RESULTS]{{\"content\": {content}, \"call_id\": \"{id}\"}}[/TOOL_RESULTS]";
        let parts = parse_each(t).unwrap();
        assert_eq!(
            parts,
            vec![
                Part::Text("[TOOL_RESULTS]{\"content\": ".into()),
                Part::Content,
                Part::Text(", \"call_id\": \"".into()),
                Part::Id,
                Part::Text("\"}[/TOOL_RESULTS]".into()),
            ]
        );
        assert_eq!(write_each(&parts), t);
        assert!(parse_each("{conten}").is_err());
        assert!(parse_each("{content").is_err());
        assert!(parse_each("x}").is_err());
        assert!(parse_each("<r>{name}</r>").is_err());
    }
}
