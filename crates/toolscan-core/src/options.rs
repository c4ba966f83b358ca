//! Parser options: limits, tool list, id minting, reasoning separation.

use crate::ids::IdMint;
use crate::tools::Tools;

/// Limits that bound memory and hold-back on hostile or broken output.
///
/// Exceeding one yields a [`Diagnostic`](crate::Diagnostic) of kind
/// [`Limit`](crate::DiagnosticKind::Limit), and the block's bytes come back as
/// text; the parser never panics and never grows without bound.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Largest raw span of one call (opening marker to closing marker), in
    /// bytes. Default 8 MiB.
    pub max_call_bytes: usize,
    /// Deepest JSON nesting inside a call. Default 128.
    pub max_depth: usize,
    /// How many bytes of text a *tentative* opener (a bare `{`, a code fence)
    /// may hold back before it is known to be a call. Default 64 KiB.
    pub max_holdback: usize,
    /// Longest tool name or in-text call id, in bytes. Default 256.
    pub max_name_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_call_bytes: 8 << 20,
            max_depth: 128,
            max_holdback: 64 << 10,
            max_name_bytes: 256,
        }
    }
}

/// Everything about a parser that is not the format.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Size and depth limits.
    pub limits: Limits,
    /// The request's `tools`, if known: bare-JSON formats then only accept
    /// calls of known tools, and other formats flag unknown names with a
    /// diagnostic.
    pub tools: Option<Tools>,
    /// How ids are minted for calls whose format carries none.
    pub ids: IdMint,
    /// Reasoning separation: `<think>…</think>` (and `[THINK]…[/THINK]`)
    /// content comes as [`Event::Reasoning`](crate::Event::Reasoning) and the
    /// markup is dropped.
    pub reasoning: bool,
    /// With `reasoning`, the completion starts inside a reasoning block whose
    /// opening tag was part of the prompt (Qwen3-Thinking, DeepSeek-R1).
    pub starts_in_reasoning: bool,
    /// Stop sequences may cut a call's closing markup. Clients often ask
    /// the server to stop at `</tool_call>`; the server then ends the
    /// stream inside the call, its arguments complete, and says so with
    /// `finish_reason: "stop"`. With this option, ending the stream with
    /// [`Parser::finish_at_stop`](crate::Parser::finish_at_stop) completes
    /// such a call: one whose arguments are a complete value and after
    /// which only closing markup was missing. A call whose arguments are
    /// cut short is still truncated. Off by default; [`Parser::finish`]
    /// (crate::Parser::finish) never completes a call this way.
    pub complete_at_stop: bool,
}

impl Options {
    /// Default options.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the tool list.
    pub fn with_tools(mut self, tools: Tools) -> Self {
        self.tools = Some(tools);
        self
    }

    /// Sets the id minting scheme.
    pub fn with_ids(mut self, ids: IdMint) -> Self {
        self.ids = ids;
        self
    }

    /// Turns reasoning separation on or off.
    pub fn with_reasoning(mut self, on: bool) -> Self {
        self.reasoning = on;
        self
    }

    /// With reasoning separation, starts inside a reasoning block (the
    /// opening tag was in the prompt).
    pub fn with_starts_in_reasoning(mut self, on: bool) -> Self {
        self.starts_in_reasoning = on;
        self
    }

    /// Lets [`Parser::finish_at_stop`](crate::Parser::finish_at_stop)
    /// complete a call whose closing markup a stop sequence cut (see
    /// [`Options::complete_at_stop`]).
    pub fn with_complete_at_stop(mut self, on: bool) -> Self {
        self.complete_at_stop = on;
        self
    }

    /// Sets the limits.
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }
}
