//! Rendering: a response — text and calls — written in a format, as the
//! model itself would write it. There is no printer per format: the
//! format's own programs, the steps that parse it, are run as writers
//! (`walk.rs`), and values are spelled by `value.rs`. Where a program
//! allows several spellings (optional whitespace, an optional literal, a
//! branch), a rendering hint in the program (`{"render": …}`, a step that
//! reads nothing) says which one the model's chat template writes.
//!
//! Every rendering is read back by the format's parser before it is
//! returned: bytes that would parse as anything but the response given
//! are never returned; the search tries the program's other paths, and
//! when none reads back, the result is a [`RenderError`].
//!
//! Tool results (`results.rs`) are written from what the format says of
//! them (its `tool_results`), as its chat template writes them.

mod error;
mod results;
mod value;
mod walk;

pub use error::{RenderError, RenderLimit};
pub use results::{RenderedResults, ToolResult};

use serde_json::Value;

use crate::event::Arguments;
use crate::lang::format::Format;
use crate::lang::grammar::Grammar;
use crate::options::Options;
use crate::response::ToolCall;
use crate::tools::Tools;
use value::Node;
use walk::{Item, Outcome, Walk};

/// A call to render: the tool's name, its arguments (a JSON object) and,
/// optionally, its id (written where the format carries ids).
#[derive(Clone, Debug, PartialEq)]
pub struct Call {
    /// The tool's name.
    pub name: String,
    /// The arguments object, as JSON text (its key order is kept).
    pub arguments: Arguments,
    /// The call's id, if it has one.
    pub id: Option<String>,
}

impl Call {
    /// A call of `name` with `arguments` and no id.
    pub fn new(name: impl Into<String>, arguments: Arguments) -> Call {
        Call {
            name: name.into(),
            arguments,
            id: None,
        }
    }

    /// A call of `name` with the arguments `arguments`, which must be a
    /// JSON object (`None` otherwise).
    pub fn from_value(name: impl Into<String>, arguments: &Value) -> Option<Call> {
        if !arguments.is_object() {
            return None;
        }
        Some(Call::new(name, Arguments::new(arguments.to_string()).ok()?))
    }

    /// The same call with an id.
    pub fn with_id(mut self, id: impl Into<String>) -> Call {
        self.id = Some(id.into());
        self
    }
}

impl From<&ToolCall> for Call {
    fn from(c: &ToolCall) -> Call {
        Call {
            name: c.name.clone(),
            arguments: c.arguments.clone(),
            id: Some(c.id.clone()),
        }
    }
}

/// How a turn with calls is framed, where the chat templates of one format
/// disagree: each field set replaces what the format writes by default
/// (the spelling most of its templates use); `Some("")` writes nothing.
/// What is written there must read back as text.
///
/// ```
/// use toolscan_core::{render::{Call, RenderOptions}, Registry};
/// let registry = Registry::builtin();
/// let kimi = registry.get("kimi-k2").unwrap();
/// let call = Call::from_value("f", &serde_json::json!({})).unwrap();
/// // Kimi-K2-Thinking's template closes an empty reasoning block first.
/// let options = RenderOptions {
///     before: Some("<think></think>".into()),
///     ..RenderOptions::default()
/// };
/// let out = kimi.render_with("", &[call], None, &options).unwrap();
/// assert!(out.starts_with("<think></think><|tool_calls_section_begin|>"));
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RenderOptions {
    /// What goes before the text (an empty `<think></think>`).
    pub before: Option<String>,
    /// What goes between the text and the first call, when there is text.
    pub text_sep: Option<String>,
    /// What goes before the first call when there is no text.
    pub lead: Option<String>,
    /// What goes after the last call.
    pub tail: Option<String>,
}

impl RenderOptions {
    /// No frame at all: the calls alone, as a manifest's examples show
    /// them (the frame is the turn's, not the call's).
    pub fn unframed() -> RenderOptions {
        let none = || Some(String::new());
        RenderOptions {
            before: none(),
            text_sep: none(),
            lead: none(),
            tail: none(),
        }
    }

    /// The format's frame with these options over it.
    fn over(&self, frame: Option<&crate::lang::hint::Frame>) -> crate::lang::hint::Frame {
        let mut f = frame.cloned().unwrap_or_default();
        for (mine, theirs) in [
            (&self.before, &mut f.before),
            (&self.text_sep, &mut f.text_sep),
            (&self.lead, &mut f.lead),
            (&self.tail, &mut f.tail),
        ] {
            if let Some(s) = mine {
                *theirs = (!s.is_empty()).then(|| s.clone());
            }
        }
        f
    }
}

/// How many candidate renderings are read back before giving up.
const MAX_CHECKS: usize = 64;

/// How much one rendering holds, checked before anything is written:
/// the calls, their parameters and their bytes. Each is a
/// [`RenderError::Limit`] past it.
fn over_limit(text: &str, calls: &[Call], args: &[Vec<(String, Node)>]) -> Option<RenderLimit> {
    if calls.len() > RenderLimit::Calls.max() {
        return Some(RenderLimit::Calls);
    }
    let mut params = 0usize;
    let mut bytes = text.len();
    for (c, a) in calls.iter().zip(args) {
        params = params.saturating_add(value::param_count(a));
        bytes = bytes
            .saturating_add(c.name.len())
            .saturating_add(c.arguments.as_str().len())
            .saturating_add(c.id.as_ref().map_or(0, String::len));
    }
    if params > RenderLimit::Params.max() {
        return Some(RenderLimit::Params);
    }
    (bytes > RenderLimit::Bytes.max()).then_some(RenderLimit::Bytes)
}

impl Format {
    /// Renders a response — `text`, then `calls` — as this format writes
    /// it, derived from the format's programs. `tools` types parameter
    /// values where the format writes them raw (as the parser reads them).
    ///
    /// The bytes returned parse back, with this format and `tools`, to
    /// `text` followed by what the format writes between two blocks of
    /// calls (which reads as text), and to `calls` (arguments as JSON
    /// values; ids where the format carries them). Text is written first
    /// and as is.
    ///
    /// What one rendering takes is bounded ([`RenderLimit`]: calls,
    /// parameters, bytes); past a bound the answer is
    /// [`RenderError::Limit`]. The search is iterative and linear in what
    /// is written: any number of calls and keys within the bounds renders
    /// on any thread's stack.
    ///
    /// ```
    /// use toolscan_core::{render::Call, Registry};
    /// let registry = Registry::builtin();
    /// let hermes = registry.get("hermes").unwrap();
    /// let call = Call::from_value("get_weather", &serde_json::json!({"city": "Paris"})).unwrap();
    /// // (Qwen's templates write a newline between the text and the call.)
    /// let out = hermes.render("Let me check.", &[call], None).unwrap();
    /// assert_eq!(
    ///     out,
    ///     "Let me check.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>"
    /// );
    /// ```
    pub fn render(
        &self,
        text: &str,
        calls: &[Call],
        tools: Option<&Tools>,
    ) -> Result<String, RenderError> {
        self.render_with(text, calls, tools, &RenderOptions::default())
    }

    /// [`Format::render`], with the turn framed as `options` say where
    /// they say otherwise than the format.
    pub fn render_with(
        &self,
        text: &str,
        calls: &[Call],
        tools: Option<&Tools>,
        options: &RenderOptions,
    ) -> Result<String, RenderError> {
        let frame = options.over(walk::frame_of(self));
        let mut args = Vec::with_capacity(calls.len());
        for (i, c) in calls.iter().enumerate() {
            if c.name.is_empty() {
                return Err(RenderError::EmptyName(i));
            }
            match Node::parse(c.arguments.as_str()) {
                Some(Node::Obj(m)) => args.push(m),
                // (`Arguments` always holds an object.)
                _ => return Err(RenderError::Unwritable),
            }
        }
        if let Some(limit) = over_limit(text, calls, &args) {
            return Err(RenderError::Limit(limit));
        }
        let size = calls
            .len()
            .saturating_add(args.iter().map(|a| value::param_count(a)).sum::<usize>());
        let items: Vec<Item<'_>> = calls
            .iter()
            .zip(&args)
            .map(|(c, a)| Item {
                name: &c.name,
                args: a,
                id: c.id.as_deref(),
            })
            .collect();
        let erased = self
            .alone
            .get_or_try_init(|| {
                let g: crate::lang::format::Erased = Grammar::new(self.name(), &[self])?.shared();
                Ok::<_, crate::Error>(g)
            })
            .map_err(|_| RenderError::Unwritable)?;
        let grammar = erased
            .downcast::<Grammar>()
            .map_err(|_| RenderError::Unwritable)?;
        let mut options = Options::default();
        if let Some(t) = tools {
            options = options.with_tools(t.clone());
        }
        let want: Vec<_> = calls.iter().map(|c| c.arguments.parse().ok()).collect();
        let mut checks = 0;
        let mut exhausted = false;
        // What the frame around the turn's text reads back as, each part on
        // its own (a frame may be markup the parser drops, as Kimi K3's
        // response frame), for the frame it was last read for: the text
        // itself must read back as it is, between the two.
        let mut frame_text: Option<((String, String), (String, String))> = None;
        let mut walk = Walk::new(self, &frame, &items, size, tools, |st| {
            checks += 1;
            if checks > MAX_CHECKS {
                exhausted = true;
                return false;
            }
            let r = crate::parse(grammar.clone(), options.clone(), st.out.as_bytes());
            let read = |part: &str| crate::parse(grammar.clone(), options.clone(), part.as_bytes());
            let (before, between) = match &frame_text {
                Some((frame, back)) if frame.0 == st.before && frame.1 == st.between => back,
                _ => {
                    let back = (read(&st.before).text, read(&st.between).text);
                    let frame = (st.before.clone(), st.between.clone());
                    &frame_text.insert((frame, back)).1
                }
            };
            r.text
                .strip_prefix(before.as_str())
                .and_then(|t| t.strip_suffix(between.as_str()))
                == Some(text)
                && r.reasoning.as_deref().unwrap_or("").is_empty()
                && r.diagnostics.is_empty()
                && r.tool_calls.len() == calls.len()
                && r.tool_calls
                    .iter()
                    .zip(calls)
                    .enumerate()
                    .all(|(i, (got, c))| {
                        got.name == c.name
                            && got.arguments.parse().ok() == want[i]
                            && (!st.id_written[i] || Some(&got.id) == c.id.as_ref())
                    })
        });
        let found = walk.run(text);
        drop(walk);
        match found {
            Ok(tape) => Ok(tape.out),
            Err(Outcome::Budget) => Err(RenderError::TooComplex),
            Err(Outcome::NoPath) if exhausted => Err(RenderError::TooComplex),
            Err(Outcome::NoPath) => Err(RenderError::Unwritable),
        }
    }
}
