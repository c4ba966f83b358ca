//! What the fuzz targets share: the table of formats they pick from, the
//! options an input's flag byte selects, feeding a parser in the chunks a
//! chunking byte selects, the contract checks, and writing seeds and
//! dictionaries (`scripts/fuzz.sh` asks each target for its own, so the
//! layout of an input is written down once, next to where it is read).

pub mod check;
pub mod chunks;
pub mod formats;
pub mod known;
pub mod last;
pub mod seed;
pub mod stream;

use toolscan_core::{CallsInReasoning, IdMint, Limits, Options, Tools};

/// Bits of an input's flag byte (the core and format-file targets).
pub mod flag {
    /// Reasoning separation.
    pub const REASONING: u8 = 1;
    /// With reasoning separation, the stream starts inside a reasoning
    /// block.
    pub const STARTS_IN_REASONING: u8 = 1 << 1;
    /// The parser knows the tools of [`super::tools`].
    pub const TOOLS: u8 = 1 << 2;
    /// `complete_at_stop`, and the run ends with `finish_at_stop`.
    pub const AT_STOP: u8 = 1 << 3;
    /// The small limits of [`super::SMALL_LIMITS`], so that every limit
    /// can trip within an input of a few kilobytes.
    pub const SMALL_LIMITS: u8 = 1 << 4;
    /// Call markup inside reasoning is a call at once
    /// (`CallsInReasoning::Call`; without it, the default: reasoning,
    /// but for a block the stream never closes).
    pub const CALLS_IN_REASONING: u8 = 1 << 5;
    /// One call at most (`Options::with_max_calls(1)`, the proxy's
    /// `parallel_tool_calls: false`).
    pub const ONE_CALL: u8 = 1 << 6;
    /// Only calls of `get_weather` (`Options::with_only_tool`, a named
    /// `tool_choice`).
    pub const ONLY_TOOL: u8 = 1 << 7;
}

/// Limits small enough that a fuzz input reaches each of them.
pub const SMALL_LIMITS: Limits = Limits::new()
    .with_max_call_bytes(200)
    .with_max_depth(4)
    .with_max_holdback(48)
    .with_max_name_bytes(12);

/// The tools the [`flag::TOOLS`] bit gives the parser: the names the
/// conformance cases call, with schemas of every JSON type (so that
/// parameter-style values are coerced every way).
pub fn tools() -> &'static Tools {
    static TOOLS: std::sync::OnceLock<Tools> = std::sync::OnceLock::new();
    TOOLS.get_or_init(|| {
        let obj = |props: serde_json::Value| {
            serde_json::json!({"type": "object", "properties": props})
        };
        let list = serde_json::json!([
            {"type": "function", "function": {"name": "get_weather", "parameters": obj(serde_json::json!({
                "city": {"type": "string"}, "location": {"type": "string"},
                "unit": {"type": "string", "enum": ["c", "f"]}, "days": {"type": "integer"}}))}},
            {"type": "function", "function": {"name": "search", "parameters": obj(serde_json::json!({
                "query": {"type": "string"}, "max": {"type": "integer"},
                "filters": {"type": "object", "properties": {
                    "tags": {"type": "array", "items": {"type": "string"}},
                    "max": {"type": "integer"}}}}))}},
            {"type": "function", "function": {"name": "calculate", "parameters": obj(serde_json::json!({
                "expression": {"type": "string"}, "precise": {"type": "boolean"},
                "scale": {"type": "number"}, "extra": {"type": ["null", "integer"]}}))}},
            {"type": "function", "function": {"name": "python", "parameters": obj(serde_json::json!({
                "code": {"type": "string"}}))}},
            {"type": "function", "function": {"name": "get_time", "parameters": obj(serde_json::json!({}))}},
            {"name": "f", "parameters": obj(serde_json::json!({"a": {"type": "array"}, "b": {}}))}
        ]);
        Tools::from_json(&list).unwrap_or_default()
    })
}

/// The options a flag byte selects (ids minted from seed 0, so that two
/// runs of one input give equal events).
pub fn options(flags: u8) -> Options {
    let mut o = Options::new()
        .with_ids(IdMint::Seeded(0))
        .with_reasoning(flags & flag::REASONING != 0)
        .with_starts_in_reasoning(flags & flag::STARTS_IN_REASONING != 0)
        .with_complete_at_stop(flags & flag::AT_STOP != 0);
    if flags & flag::TOOLS != 0 {
        o = o.with_tools(tools().clone());
    }
    if flags & flag::SMALL_LIMITS != 0 {
        o = o.with_limits(SMALL_LIMITS);
    }
    if flags & flag::CALLS_IN_REASONING != 0 {
        o = o.with_calls_in_reasoning(CallsInReasoning::Call);
    }
    if flags & flag::ONE_CALL != 0 {
        o = o.with_max_calls(1);
    }
    if flags & flag::ONLY_TOOL != 0 {
        o = o.with_only_tool("get_weather");
    }
    o
}
