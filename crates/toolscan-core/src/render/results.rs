//! Tool results — the `tool` messages that answer calls — written as the
//! format's chat template writes them, from the format's `tool_results`
//! (`lang/results.rs`): no search and no read-back, since no parser reads
//! them; the text is the template's text with the result's fields filled
//! in.

use crate::lang::format::Format;
use crate::lang::results::{Part, Results};
use crate::render::RenderError;

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

    /// Whether the format says how its tool results are written
    /// ([`Format::render_tool_results`]).
    pub fn writes_tool_results(&self) -> bool {
        self.results.is_some()
    }
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
