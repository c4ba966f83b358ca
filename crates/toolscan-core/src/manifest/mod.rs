//! Manifests: the part of a system prompt that tells a model which tools
//! it has and how to call them, in its own format.
//!
//! Nothing here is written per format. How the tools are described
//! follows the format's [`Notation`], read off its program (a JSON step,
//! raw parameter values, or Python-like arguments); the examples are
//! made from each tool's schema and written by
//! [`Format::render`](crate::Format::render), so they read back as calls
//! of their tool; whether several calls fit in one turn is asked of the
//! renderer too (it writes two, or refuses). A format loaded from a file
//! gets a manifest the same way.

mod describe;
mod example;
mod notation;

use std::fmt;

use serde_json::{json, Value};

use crate::lang::format::Format;
use crate::render::{Call, RenderError, RenderOptions};
use crate::tools::Tools;
use describe::Nesting;
pub use notation::Notation;

/// Where [`Manifest::fill`] puts the manifest in a prompt.
pub const PLACEHOLDER: &str = "{{tools}}";

/// A system-prompt section for a format and a list of tools: each tool
/// described, how to call them, and one usage example per tool.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Manifest {
    /// The whole section, examples included.
    pub text: String,
    /// Each tool's example call, as the format writes it, in the order of
    /// the tools.
    pub examples: Vec<String>,
    /// Two calls written in one turn, when the format holds several calls
    /// in one turn (`None` when it holds one).
    pub several: Option<String>,
    /// How the tools are described.
    pub notation: Notation,
}

/// Why a format has no manifest for a list of tools.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ManifestError {
    /// The list of tools is empty.
    NoTools,
    /// No program of the format reads a call's arguments.
    NoArguments,
    /// The example of this tool (its index in the list) cannot be
    /// written in the format.
    Example(usize, RenderError),
}

impl fmt::Display for ManifestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ManifestError::NoTools => f.write_str("no tools to describe"),
            ManifestError::NoArguments => {
                f.write_str("the format's programs read no call arguments")
            }
            ManifestError::Example(i, e) => {
                write!(f, "the example call of tool #{i} cannot be written: {e}")
            }
        }
    }
}

impl std::error::Error for ManifestError {}

impl Manifest {
    /// `template` with the manifest in place of its `{{tools}}` (or
    /// `{{ tools }}`) placeholders; a template without one gets the
    /// manifest after it, a blank line between.
    ///
    /// ```
    /// use toolscan_core::{manifest::Manifest, Registry, Tools};
    /// let tools = Tools::from_json_str(r#"[{"name": "get_time"}]"#).unwrap();
    /// let m = Registry::builtin().get("hermes").unwrap().manifest(&tools).unwrap();
    /// let prompt = m.fill("You are a helpful assistant.\n\n{{tools}}\n\nBe brief.");
    /// assert!(prompt.starts_with("You are a helpful assistant.\n\n# Tools"));
    /// assert!(prompt.ends_with("\n\nBe brief."));
    /// assert_eq!(m.fill(""), m.text);
    /// ```
    pub fn fill(&self, template: &str) -> String {
        if template.contains(PLACEHOLDER) || template.contains("{{ tools }}") {
            return template
                .replace(PLACEHOLDER, &self.text)
                .replace("{{ tools }}", &self.text);
        }
        let head = template.trim_end();
        if head.is_empty() {
            self.text.clone()
        } else {
            format!("{head}\n\n{}", self.text)
        }
    }
}

impl Format {
    /// The manifest of `tools` in this format: a system-prompt section
    /// that describes each tool in the style of the format's
    /// [`Notation`], says how to call them (and how to call several in one
    /// turn, where the format allows it), with one example call per tool
    /// made from its parameters schema (its required parameters, values of
    /// their types) and written by [`Format::render`], so it parses back
    /// as a call of that tool.
    ///
    /// ```
    /// use toolscan_core::{manifest::Notation, Registry, Tools};
    /// let tools = Tools::from_json_str(r#"[{"type": "function", "function": {
    ///     "name": "get_weather", "description": "Current weather in a city.",
    ///     "parameters": {"type": "object", "required": ["city"],
    ///       "properties": {"city": {"type": "string"}}}}}]"#).unwrap();
    /// let registry = Registry::builtin();
    /// let m = registry.get("hermes").unwrap().manifest(&tools).unwrap();
    /// assert_eq!(m.notation, Notation::Json);
    /// assert_eq!(
    ///     m.examples,
    ///     ["<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"example city\"}}\n</tool_call>"]
    /// );
    /// assert!(m.text.contains("## get_weather\nCurrent weather in a city.\n"));
    /// let py = registry.get("pythonic").unwrap().manifest(&tools).unwrap();
    /// assert!(py.text.contains("def get_weather(city: str):"));
    /// ```
    pub fn manifest(&self, tools: &Tools) -> Result<Manifest, ManifestError> {
        if tools.is_empty() {
            return Err(ManifestError::NoTools);
        }
        let notation = Notation::of(self).ok_or(ManifestError::NoArguments)?;
        let mut calls = Vec::with_capacity(tools.len());
        let mut examples = Vec::with_capacity(tools.len());
        // The calls alone: what comes around them is the turn's.
        let unframed = RenderOptions::unframed();
        for (i, tool) in tools.iter().enumerate() {
            let args = Value::Object(example::arguments(&tool.parameters));
            let call = Call::from_value(tool.name.as_str(), &args)
                .ok_or(ManifestError::Example(i, RenderError::Unwritable))?;
            let out = self
                .render_with("", std::slice::from_ref(&call), Some(tools), &unframed)
                .map_err(|e| ManifestError::Example(i, e))?;
            calls.push(call);
            examples.push(out);
        }
        let two = match calls.as_slice() {
            [one] => vec![one.clone(), one.clone()],
            [a, b, ..] => vec![a.clone(), b.clone()],
            [] => Vec::new(),
        };
        let several = self.render_with("", &two, Some(tools), &unframed).ok();
        let nesting = match notation {
            Notation::Parameters => self.nesting(),
            _ => Nesting::default(),
        };

        let mut text = String::from("# Tools\n\nYou can call the tools below. ");
        text.push_str(&describe::preamble(notation, nesting));
        text.push_str("\n\n");
        for (tool, ex) in tools.iter().zip(&examples) {
            text.push_str(&describe::tool(notation, tool, nesting));
            text.push_str("Example:\n");
            text.push_str(ex);
            text.push_str("\n\n");
        }
        text.push_str(
            "## How to call a tool\nWrite the call exactly as the examples do, with the \
             tool's name and its arguments, and the call's result will be given to you.",
        );
        match &several {
            Some(s) => {
                text.push_str(" To call several tools in one turn, write the calls like this:\n");
                text.push_str(s);
            }
            None => text.push_str(
                " Make one call per turn: this format holds a single call in a reply, so wait \
                 for its result before calling the next tool.",
            ),
        }
        text.push('\n');
        Ok(Manifest {
            text,
            examples,
            several,
            notation,
        })
    }

    /// How this format writes a list and an object parameter: renders one
    /// of each and looks for their JSON text.
    fn nesting(&self) -> Nesting {
        let Ok(tools) = Tools::from_json(&json!([{"name": "probe", "parameters": {
        "type": "object",
        "properties": {
            "tags": {"type": "array", "items": {"type": "string"}},
            "point": {"type": "object", "properties": {"px": {"type": "string"}}}
        }}}])) else {
            return Nesting::default();
        };
        let probe = |args: Value, as_json: &[&str]| {
            let call = Call::from_value("probe", &args)?;
            let out = self
                .render_with("", &[call], Some(&tools), &RenderOptions::unframed())
                .ok()?;
            Some(as_json.iter().any(|j| out.contains(j)))
        };
        Nesting {
            lists_as_json: probe(
                json!({"tags": ["t1", "t2"]}),
                &[r#"["t1", "t2"]"#, r#"["t1","t2"]"#],
            ),
            objects_as_json: probe(
                json!({"point": {"px": "p1"}}),
                &[r#"{"px": "p1"}"#, r#"{"px":"p1"}"#],
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalogue::registry::Registry;

    #[test]
    fn every_builtin_format_has_a_notation() {
        for f in Registry::builtin().formats() {
            assert!(Notation::of(f).is_some(), "{}", f.name());
        }
    }

    #[test]
    fn fill_places_the_manifest_at_each_placeholder_or_after_the_prompt() {
        let m = Manifest {
            text: "T".into(),
            examples: Vec::new(),
            several: None,
            notation: Notation::Json,
        };
        assert_eq!(m.fill("a {{tools}} b {{ tools }}"), "a T b T");
        assert_eq!(m.fill("Be brief.\n"), "Be brief.\n\nT");
        assert_eq!(m.fill("  \n"), "T");
    }

    #[test]
    fn no_tools_no_manifest() {
        let hermes = Registry::builtin()
            .get("hermes")
            .cloned()
            .expect("built-in");
        assert_eq!(
            hermes.manifest(&Tools::default()),
            Err(ManifestError::NoTools)
        );
    }
}
