//! The options `new Parser({...})` and `parse(text, {...})` take, read from
//! their JSON into the core's grammar and `Options`. The JavaScript side
//! sends them as given (camelCase keys), with one addition: `seed` drawn
//! from `crypto.getRandomValues` when ids are random (a WebAssembly module
//! has no source of randomness of its own).

use std::sync::Arc;

use serde::Deserialize;
use serde_json::Value;
use toolscan_core::{
    format_for_model, CallsInReasoning, Check, Error, Grammar, IdMint, Limits, Options, Registry,
    Tools,
};

use crate::json::Failure;

/// The options as JavaScript gave them (every one optional; unknown keys
/// are refused, so a misspelt option is not silently ignored).
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Given {
    format: Option<String>,
    model: Option<String>,
    tools: Option<Value>,
    #[serde(default)]
    reasoning: bool,
    #[serde(default)]
    starts_in_reasoning: bool,
    calls_in_reasoning: Option<String>,
    check_calls: Option<String>,
    #[serde(default)]
    complete_at_stop: bool,
    max_calls: Option<u64>,
    only_tool: Option<String>,
    #[serde(default)]
    normalize_tool_names: bool,
    ids: Option<String>,
    seed: Option<u64>,
    /// The random seed the JavaScript side drew, for `ids: "random"`.
    random_seed: Option<u64>,
    limits: Option<GivenLimits>,
    invalid_utf8: Option<String>,
    /// A call's events wait for its end (`WholeCalls`); a streaming
    /// parser's option (`parse` gives completed calls only anyway).
    #[serde(default)]
    whole_calls: bool,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct GivenLimits {
    max_call_bytes: Option<u64>,
    max_depth: Option<u64>,
    max_holdback: Option<u64>,
    max_name_bytes: Option<u64>,
}

/// A parser's configuration.
pub(crate) struct Config {
    /// The format's canonical name, or `auto`.
    pub name: String,
    pub grammar: Arc<Grammar>,
    pub options: Options,
    /// Bytes that are not UTF-8 are refused (`invalidUtf8: "throw"`)
    /// rather than read as U+FFFD with a diagnostic.
    pub strict_utf8: bool,
    /// `wholeCalls`: a call's start and arguments wait for its end, and a
    /// call that breaks sends none (the core's `WholeCalls`).
    pub whole_calls: bool,
}

/// Reads the options' JSON text (empty: every default).
pub(crate) fn read(json: &[u8]) -> Result<Config, Failure> {
    let given: Given = if json.is_empty() {
        Given::default()
    } else {
        serde_json::from_slice(json).map_err(|e| Failure::Options(format!("options: {e}")))?
    };
    given.build()
}

/// The built-in format a model writes, if this build has it.
pub(crate) fn builtin_for_model(model: &str) -> Option<&'static str> {
    format_for_model(model).filter(|name| Registry::builtin().get(name).is_some())
}

/// The core's configuration error as the JavaScript one.
fn core_error(e: Error) -> Failure {
    match e {
        Error::UnknownFormat { .. } => Failure::UnknownFormat(e.to_string()),
        _ => Failure::Options(e.to_string()),
    }
}

/// A limit: at least 1, and what this platform's `usize` holds.
fn limit(value: Option<u64>, name: &str) -> Result<Option<usize>, Failure> {
    match value {
        None => Ok(None),
        Some(n) if n >= 1 => usize::try_from(n)
            .map(Some)
            .map_err(|_| Failure::Options(format!("limits.{name} is too large ({n})"))),
        Some(n) => Err(Failure::Options(format!(
            "limits.{name} must be at least 1 (got {n})"
        ))),
    }
}

/// One of a few names.
fn one_of<T: Copy>(
    value: Option<&str>,
    name: &str,
    choices: &[(&str, T)],
) -> Result<Option<T>, Failure> {
    let Some(v) = value else { return Ok(None) };
    match choices.iter().find(|(k, _)| *k == v) {
        Some((_, t)) => Ok(Some(*t)),
        None => {
            let names: Vec<String> = choices.iter().map(|(k, _)| format!("{k:?}")).collect();
            Err(Failure::Options(format!(
                "{name} must be {} (got {v:?})",
                names.join(" or ")
            )))
        }
    }
}

impl Given {
    fn build(self) -> Result<Config, Failure> {
        let requested = match (self.format.as_deref(), self.model.as_deref()) {
            (Some(f), _) if f != "auto" => f.to_owned(),
            (_, Some(m)) => builtin_for_model(m).unwrap_or("auto").to_owned(),
            _ => "auto".to_owned(),
        };
        let registry = Registry::builtin();
        let grammar = registry.grammar(&requested).map_err(core_error)?;
        let name = match registry.get(&requested) {
            Some(f) if requested != "auto" => f.name().to_owned(),
            _ => requested,
        };

        let limits = limits(self.limits.unwrap_or_default())?;
        let calls_in_reasoning = one_of(
            self.calls_in_reasoning.as_deref(),
            "callsInReasoning",
            &[
                ("text", CallsInReasoning::Text),
                ("call", CallsInReasoning::Call),
            ],
        )?
        .unwrap_or(CallsInReasoning::Text);
        let check = one_of(
            self.check_calls.as_deref(),
            "checkCalls",
            &[
                ("off", Check::Off),
                ("report", Check::Report),
                ("reject", Check::Reject),
            ],
        )?
        .unwrap_or(Check::Off);
        let strict_utf8 = one_of(
            self.invalid_utf8.as_deref(),
            "invalidUtf8",
            &[("replace", false), ("throw", true)],
        )?
        .unwrap_or(false);
        let ids = ids(self.ids.as_deref(), self.seed, self.random_seed)?;

        let mut options = Options::new()
            .with_limits(limits)
            .with_ids(ids)
            .with_reasoning(self.reasoning)
            .with_starts_in_reasoning(self.starts_in_reasoning)
            .with_calls_in_reasoning(calls_in_reasoning)
            .with_check_calls(check)
            .with_complete_at_stop(self.complete_at_stop)
            .with_normalize_tool_names(self.normalize_tool_names);
        if let Some(t) = self.tools.as_ref().filter(|t| !t.is_null()) {
            options = options.with_tools(tools(t)?);
        }
        if let Some(n) = self.max_calls {
            let n = usize::try_from(n)
                .map_err(|_| Failure::Options(format!("maxCalls is too large ({n})")))?;
            options = options.with_max_calls(n);
        }
        if let Some(only) = self.only_tool {
            options = options.with_only_tool(only);
        }
        Ok(Config {
            name,
            grammar,
            options,
            strict_utf8,
            whole_calls: self.whole_calls,
        })
    }
}

/// The limits given, each at least 1.
fn limits(given: GivenLimits) -> Result<Limits, Failure> {
    let mut limits = Limits::new();
    if let Some(n) = limit(given.max_call_bytes, "maxCallBytes")? {
        limits = limits.with_max_call_bytes(n);
    }
    if let Some(n) = limit(given.max_depth, "maxDepth")? {
        limits = limits.with_max_depth(n);
    }
    if let Some(n) = limit(given.max_holdback, "maxHoldback")? {
        limits = limits.with_max_holdback(n);
    }
    if let Some(n) = limit(given.max_name_bytes, "maxNameBytes")? {
        limits = limits.with_max_name_bytes(n);
    }
    Ok(limits)
}

/// How ids are minted: random ids from the seed the JavaScript side drew.
fn ids(ids: Option<&str>, seed: Option<u64>, random_seed: Option<u64>) -> Result<IdMint, Failure> {
    match (ids, seed) {
        (None | Some("random"), None) => Ok(IdMint::Seeded(random_seed.unwrap_or(0))),
        (None | Some("seeded"), seed) => Ok(IdMint::Seeded(seed.unwrap_or(0))),
        (Some("mistral"), seed) => Ok(IdMint::Mistral(seed.unwrap_or(0))),
        (Some("random"), Some(_)) => Err(Failure::Options(
            "seed is for ids \"seeded\" or \"mistral\", not \"random\"".into(),
        )),
        (Some(other), _) => Err(Failure::Options(format!(
            "ids must be \"random\", \"seeded\" or \"mistral\" (got {other:?})"
        ))),
    }
}

/// The tools: the OpenAI `tools` array, or its JSON text.
pub(crate) fn tools(value: &Value) -> Result<Tools, Failure> {
    match value {
        Value::String(text) => Tools::from_json_str(text),
        other => Tools::from_json(other),
    }
    .map_err(|e| Failure::Options(format!("tools: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failure(json: &str) -> Failure {
        match read(json.as_bytes()) {
            Ok(_) => panic!("{json} was accepted"),
            Err(f) => f,
        }
    }

    #[test]
    fn a_named_format_wins_over_the_model_and_auto_defers_to_it() {
        let name = |json: &str| read(json.as_bytes()).map(|c| c.name).ok();
        assert_eq!(
            name(r#"{"format": "mistral", "model": "Qwen/Qwen3-8B"}"#).as_deref(),
            Some("mistral")
        );
        assert_eq!(
            name(r#"{"format": "auto", "model": "Qwen/Qwen3-8B"}"#).as_deref(),
            Some("hermes")
        );
        assert_eq!(
            name(r#"{"model": "no/such-model"}"#).as_deref(),
            Some("auto")
        );
        assert_eq!(name("").as_deref(), Some("auto"));
    }

    #[test]
    fn wrong_values_say_which_option_and_what_it_takes() {
        assert!(matches!(
            failure(r#"{"format": "nope"}"#),
            Failure::UnknownFormat(_)
        ));
        let Failure::Options(m) = failure(r#"{"checkCalls": "maybe"}"#) else {
            panic!("not an options error")
        };
        assert_eq!(
            m,
            "checkCalls must be \"off\" or \"report\" or \"reject\" (got \"maybe\")"
        );
        let Failure::Options(m) = failure(r#"{"limits": {"maxDepth": 0}}"#) else {
            panic!("not an options error")
        };
        assert!(m.contains("limits.maxDepth must be at least 1"), "{m}");
        let Failure::Options(m) = failure(r#"{"reasonning": true}"#) else {
            panic!("not an options error")
        };
        assert!(m.contains("unknown field `reasonning`"), "{m}");
        let Failure::Options(m) = failure(r#"{"reasoning": "yes"}"#) else {
            panic!("not an options error")
        };
        assert!(m.contains("expected a boolean"), "{m}");
        assert!(matches!(
            failure(r#"{"ids": "random", "seed": 3}"#),
            Failure::Options(_)
        ));
        assert!(matches!(failure(r#"{"tools": [1]}"#), Failure::Options(_)));
    }
}
