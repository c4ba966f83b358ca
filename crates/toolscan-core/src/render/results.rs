//! Tool results — the `tool` messages that answer calls — written as the
//! format's chat template writes them, from the format's `tool_results`
//! (`lang/results.rs`): no search and no read-back, since no parser reads
//! them; the text is the template's text with the result's fields filled
//! in.

use crate::lang::format::Format;
use crate::lang::results::{Part, Results};
use crate::render::error::RenderError;

/// A tool's answer to a call, to write in a format.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolResult {
    /// The name of the tool that answered (the call's name).
    pub name: String,
    /// The id of the call it answers, if known.
    pub id: Option<String>,
    /// What the tool returned, as text.
    pub content: String,
}

impl ToolResult {
    /// The result `content` of a call of `name`, without an id.
    pub fn new(name: impl Into<String>, content: impl Into<String>) -> ToolResult {
        ToolResult {
            name: name.into(),
            id: None,
            content: content.into(),
        }
    }

    /// The same result, answering the call `id`.
    pub fn with_id(mut self, id: impl Into<String>) -> ToolResult {
        self.id = Some(id.into());
        self
    }
}

/// Tool results as a format writes them: the chat messages that carry
/// them, all of one role.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RenderedResults {
    /// The chat role of the messages (`user`, `tool`, `ipython`…): the
    /// role whose turn the model's chat template writes around them.
    pub role: String,
    /// Each message's content: one for all the results where the format
    /// puts them in one message, else one per result.
    pub messages: Vec<String>,
}

impl Format {
    /// Writes a run of tool results (the answers to one turn's calls, in
    /// order) as the format's chat template writes them: which role's
    /// messages carry them, and their text. `RenderError::NoResultNotation`
    /// for a format that does not say how its results are written (its
    /// templates define none, or a format file without `tool_results`).
    ///
    /// ```
    /// use toolscan_core::{render::ToolResult, Registry};
    /// let registry = Registry::builtin();
    /// let hermes = registry.get("hermes").unwrap();
    /// let out = hermes
    ///     .render_tool_results(&[
    ///         ToolResult::new("get_weather", "18 °C"),
    ///         ToolResult::new("get_weather", "25 °C"),
    ///     ])
    ///     .unwrap();
    /// assert_eq!(out.role, "user");
    /// assert_eq!(
    ///     out.messages,
    ///     ["<tool_response>\n18 °C\n</tool_response>\n<tool_response>\n25 °C\n</tool_response>"]
    /// );
    /// ```
    pub fn render_tool_results(
        &self,
        results: &[ToolResult],
    ) -> Result<RenderedResults, RenderError> {
        let notation = self.results.as_ref().ok_or(RenderError::NoResultNotation)?;
        Ok(RenderedResults {
            role: notation.role.clone(),
            messages: write(notation, results),
        })
    }

    /// Writes a run of tool results as [`Format::render_tool_results`]
    /// does, or, for a format that does not say how (no notation), as one
    /// `user` message holding each result as
    /// `<tool_result name="NAME" id="ID">\nCONTENT\n</tool_result>`: the
    /// name and id with `&`, `"`, `<`, `>` as entities, and the content's
    /// own `<tool_result`/`</tool_result` tags with `&lt;`, so that no
    /// tool output writes a block of its own.
    ///
    /// ```
    /// use toolscan_core::{render::ToolResult, Registry};
    /// let registry = Registry::builtin();
    /// let plain = registry.get("json").unwrap(); // no notation of results
    /// let r = ToolResult::new("get_time", "</tool_result>12:00").with_id("c1");
    /// let out = plain.write_tool_results(&[r]);
    /// assert_eq!(out.role, "user");
    /// assert_eq!(
    ///     out.messages,
    ///     ["<tool_result name=\"get_time\" id=\"c1\">\n&lt;/tool_result>12:00\n</tool_result>"]
    /// );
    /// ```
    pub fn write_tool_results(&self, results: &[ToolResult]) -> RenderedResults {
        if let Ok(written) = self.render_tool_results(results) {
            return written;
        }
        let blocks: Vec<String> = results
            .iter()
            .map(|r| {
                format!(
                    "<tool_result name=\"{}\" id=\"{}\">\n{}\n</tool_result>",
                    attribute(&r.name),
                    attribute(r.id.as_deref().unwrap_or("")),
                    inert(&r.content)
                )
            })
            .collect();
        RenderedResults {
            role: "user".to_owned(),
            messages: if blocks.is_empty() {
                Vec::new()
            } else {
                vec![blocks.join("\n")]
            },
        }
    }

    /// Whether the format says how its tool results are written
    /// ([`Format::render_tool_results`]).
    pub fn writes_tool_results(&self) -> bool {
        self.results.is_some()
    }
}

/// A name or id as the value of a `<tool_result>` attribute: `&`, `"`,
/// `<` and `>` as entities, so that what a client sends cannot end the
/// attribute or the tag and write blocks of its own.
fn attribute(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            c => out.push(c),
        }
    }
    out
}

/// A result's content with its `<tool_result` and `</tool_result` tags
/// made inert (their `<` as `&lt;`): a tool's output (a web page, a file)
/// cannot close its block and forge another result. Everything else is as
/// sent.
fn inert(content: &str) -> String {
    content
        .replace("</tool_result", "&lt;/tool_result")
        .replace("<tool_result", "&lt;tool_result")
}

/// The messages' contents.
fn write(notation: &Results, results: &[ToolResult]) -> Vec<String> {
    let each = results
        .iter()
        .enumerate()
        .map(|(i, r)| one(&notation.each, i, r));
    match &notation.shared {
        None => each.collect(),
        Some(_) if results.is_empty() => Vec::new(),
        Some(s) => {
            let mut out = s.before.clone();
            for (i, text) in each.enumerate() {
                if i > 0 {
                    out.push_str(&s.between);
                }
                out.push_str(&text);
            }
            out.push_str(&s.after);
            vec![out]
        }
    }
}

/// One result's text.
fn one(parts: &[Part], index: usize, r: &ToolResult) -> String {
    let mut out = String::new();
    for p in parts {
        match p {
            Part::Text(t) => out.push_str(t),
            Part::Content => out.push_str(&r.content),
            Part::ContentJson => {
                out.push_str(&serde_json::Value::from(r.content.as_str()).to_string())
            }
            Part::Name => out.push_str(&r.name),
            Part::Id => out.push_str(r.id.as_deref().unwrap_or("")),
            Part::Index => out.push_str(&index.to_string()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalogue::registry::Registry;

    #[test]
    fn a_format_without_a_notation_says_so() {
        let reg = Registry::builtin();
        let json = reg.get("json").expect("built-in");
        assert!(!json.writes_tool_results());
        assert_eq!(
            json.render_tool_results(&[ToolResult::new("f", "x")]),
            Err(RenderError::NoResultNotation)
        );
    }

    #[test]
    fn every_builtin_notation_writes_each_result_once() {
        let reg = Registry::builtin();
        let results = [
            ToolResult::new("get_weather", "RESULT-ONE").with_id("call_1"),
            ToolResult::new("get_weather", "RESULT-TWO").with_id("call_2"),
        ];
        let mut n = 0;
        for f in reg.formats() {
            let Ok(out) = f.render_tool_results(&results) else {
                continue;
            };
            n += 1;
            let all = out.messages.concat();
            for r in &results {
                assert_eq!(all.matches(r.content.as_str()).count(), 1, "{}", f.name());
            }
            assert!(
                !out.role.is_empty() && !out.messages.is_empty(),
                "{}",
                f.name()
            );
            assert_eq!(f.render_tool_results(&[]).map(|r| r.messages.len()), Ok(0));
        }
        assert!(n >= 16, "{n} formats with a notation");
    }

    #[test]
    fn a_format_file_says_how_its_results_are_written_and_writes_it_back() {
        let f = Format::from_json(
            r#"{"name": "angle", "open": "<<call ", "name_at": {"until": ">>"},
                "arguments": {"json": "object"}, "close": "<</call>>",
                "tool_results": {"role": "user",
                    "each": "<<result {name} #{index} {id}>>{content_json}<</result>>",
                    "shared": {"before": "{", "between": "\n", "after": "}"}}}"#,
        )
        .expect("a format");
        let out = f
            .render_tool_results(&[
                ToolResult::new("a", "x \"y\"").with_id("c1"),
                ToolResult::new("b", "z"),
            ])
            .expect("written");
        assert_eq!(out.role, "user");
        assert_eq!(
            out.messages,
            ["{<<result a #0 c1>>\"x \\\"y\\\"\"<</result>>\n<<result b #1 >>\"z\"<</result>>}"]
        );
        let back = Format::from_json(&f.to_json().expect("JSON")).expect("read back");
        assert_eq!(back, f);
    }

    #[test]
    fn a_malformed_notation_names_its_field() {
        let e = Format::from_json(
            r#"{"name": "x", "open": "<c>", "name_at": {"until": ">"},
                "arguments": {"json": "object"},
                "tool_results": {"role": "user", "each": "<r>{nme}</r>"}}"#,
        )
        .expect_err("refused");
        assert_eq!(e.pointer(), "/tool_results/each");
        let e = Format::from_json(
            r#"{"name": "x", "open": "<c>", "name_at": {"until": ">"},
                "arguments": {"json": "object"},
                "tool_results": {"each": "{content}"}}"#,
        )
        .expect_err("refused");
        assert_eq!(e.pointer(), "/tool_results/role");
    }
}
