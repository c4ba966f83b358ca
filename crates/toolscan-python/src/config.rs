//! The keyword options `Parser(...)` and `parse(...)` take, read into the
//! core's grammar and `Options`.

use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::PyString;
use toolscan_core::{
    format_for_model, CallsInReasoning, Check, Error, Grammar, IdMint, Limits, Options, Registry,
    Tools,
};

use crate::errors::{OptionsError, UnknownFormatError};

/// The options as Python gave them (every one optional).
pub(crate) struct Args<'py> {
    pub format: Option<String>,
    pub model: Option<String>,
    pub tools: Option<Bound<'py, PyAny>>,
    pub reasoning: bool,
    pub starts_in_reasoning: bool,
    pub calls_in_reasoning: Option<String>,
    pub check_calls: Option<String>,
    pub complete_at_stop: bool,
    pub max_calls: Option<Bound<'py, PyAny>>,
    pub only_tool: Option<String>,
    pub normalize_tool_names: bool,
    pub ids: Option<String>,
    pub seed: Option<Bound<'py, PyAny>>,
    pub max_call_bytes: Option<Bound<'py, PyAny>>,
    pub max_depth: Option<Bound<'py, PyAny>>,
    pub max_holdback: Option<Bound<'py, PyAny>>,
    pub max_name_bytes: Option<Bound<'py, PyAny>>,
}

/// The format's name as the registry knows it, its grammar, and the options.
pub(crate) struct Config {
    pub name: String,
    pub grammar: Arc<Grammar>,
    pub options: Options,
}

/// The format to use: `format` when it names one (not `auto`), else the one
/// `model` maps to when this build has it, else `auto` (as the CLI's
/// `--format` and `--model`).
pub(crate) fn resolve_format(format: Option<&str>, model: Option<&str>) -> String {
    match (format, model) {
        (Some(f), _) if f != "auto" => f.to_owned(),
        (_, Some(m)) => builtin_for_model(m).unwrap_or("auto").to_owned(),
        _ => "auto".to_owned(),
    }
}

/// The built-in format a model writes, if this build has it.
pub(crate) fn builtin_for_model(model: &str) -> Option<&'static str> {
    format_for_model(model).filter(|name| Registry::builtin().get(name).is_some())
}

/// The core's configuration error as the Python exception.
pub(crate) fn core_error(e: Error) -> PyErr {
    match e {
        Error::UnknownFormat { .. } => UnknownFormatError::new_err(e.to_string()),
        _ => OptionsError::new_err(e.to_string()),
    }
}

/// A whole number option, at least `min`.
fn whole(value: Option<&Bound<'_, PyAny>>, name: &str, min: u64) -> PyResult<Option<u64>> {
    let Some(v) = value else { return Ok(None) };
    if v.is_none() {
        return Ok(None);
    }
    match v.extract::<u64>() {
        Ok(n) if n >= min && !v.is_instance_of::<pyo3::types::PyBool>() => Ok(Some(n)),
        _ => Err(OptionsError::new_err(format!(
            "{name} must be a whole number, at least {min} (got {})",
            v.repr()?.to_cow()?
        ))),
    }
}

/// A limit: a whole number of at least 1 that fits the platform's `usize`.
fn limit(value: Option<&Bound<'_, PyAny>>, name: &str) -> PyResult<Option<usize>> {
    match whole(value, name, 1)? {
        None => Ok(None),
        Some(n) => usize::try_from(n)
            .map(Some)
            .map_err(|_| OptionsError::new_err(format!("{name} is too large ({n})"))),
    }
}

/// The tools: the OpenAI `tools` array as JSON text, or as Python objects
/// (turned into JSON text with `json.dumps`).
fn tools(py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<Tools> {
    let text = if let Ok(s) = value.cast::<PyString>() {
        s.to_cow()?.into_owned()
    } else {
        let dumped = py
            .import("json")?
            .getattr("dumps")?
            .call1((value,))
            .map_err(|e| {
                OptionsError::new_err(format!("tools: not JSON-serialisable: {}", e.value(py)))
            })?;
        dumped.extract::<String>()?
    };
    Tools::from_json_str(&text).map_err(|e| OptionsError::new_err(e.to_string()))
}

impl<'py> Args<'py> {
    /// Every option at its default, the format `format`.
    pub(crate) fn new(format: Option<String>) -> Args<'py> {
        Args {
            format,
            model: None,
            tools: None,
            reasoning: false,
            starts_in_reasoning: false,
            calls_in_reasoning: None,
            check_calls: None,
            complete_at_stop: false,
            max_calls: None,
            only_tool: None,
            ids: None,
            seed: None,
            max_call_bytes: None,
            max_depth: None,
            max_holdback: None,
            max_name_bytes: None,
            normalize_tool_names: false,
        }
    }

    /// Sets the option `key` (a keyword of `Parser`) from a keyword
    /// argument given as a dict entry; an unknown key is an
    /// `OptionsError`. Values are checked by [`Args::build`], as `Parser`'s
    /// are.
    pub(crate) fn set(&mut self, key: &str, value: Bound<'py, PyAny>) -> PyResult<()> {
        let text = |v: &Bound<'py, PyAny>| -> PyResult<Option<String>> {
            v.extract::<Option<String>>()
                .map_err(|_| OptionsError::new_err(format!("{key} must be a string or None")))
        };
        let yes = |v: &Bound<'py, PyAny>| -> PyResult<bool> {
            v.extract::<bool>()
                .map_err(|_| OptionsError::new_err(format!("{key} must be True or False")))
        };
        match key {
            "model" => self.model = text(&value)?,
            "tools" => self.tools = Some(value),
            "reasoning" => self.reasoning = yes(&value)?,
            "starts_in_reasoning" => self.starts_in_reasoning = yes(&value)?,
            "calls_in_reasoning" => self.calls_in_reasoning = text(&value)?,
            "check_calls" => self.check_calls = text(&value)?,
            "complete_at_stop" => self.complete_at_stop = yes(&value)?,
            "max_calls" => self.max_calls = Some(value),
            "only_tool" => self.only_tool = text(&value)?,
            "ids" => self.ids = text(&value)?,
            "seed" => self.seed = Some(value),
            "max_call_bytes" => self.max_call_bytes = Some(value),
            "max_depth" => self.max_depth = Some(value),
            "max_holdback" => self.max_holdback = Some(value),
            "max_name_bytes" => self.max_name_bytes = Some(value),
            "normalize_tool_names" => self.normalize_tool_names = yes(&value)?,
            other => {
                return Err(OptionsError::new_err(format!(
                    "unknown option {other:?} (the options are Parser's)"
                )))
            }
        }
        Ok(())
    }

    /// Reads the options; a bad value is an `OptionsError`, an unknown
    /// format an `UnknownFormatError`.
    pub(crate) fn build(&self, py: Python<'_>) -> PyResult<Config> {
        let requested = resolve_format(self.format.as_deref(), self.model.as_deref());
        let registry = Registry::builtin();
        let grammar = registry.grammar(&requested).map_err(core_error)?;
        let name = match registry.get(&requested) {
            Some(f) if requested != "auto" => f.name().to_owned(),
            _ => requested,
        };

        let mut limits = Limits::new();
        if let Some(n) = limit(self.max_call_bytes.as_ref(), "max_call_bytes")? {
            limits = limits.with_max_call_bytes(n);
        }
        if let Some(n) = limit(self.max_depth.as_ref(), "max_depth")? {
            limits = limits.with_max_depth(n);
        }
        if let Some(n) = limit(self.max_holdback.as_ref(), "max_holdback")? {
            limits = limits.with_max_holdback(n);
        }
        if let Some(n) = limit(self.max_name_bytes.as_ref(), "max_name_bytes")? {
            limits = limits.with_max_name_bytes(n);
        }

        let calls_in_reasoning = match self.calls_in_reasoning.as_deref() {
            None | Some("text") => CallsInReasoning::Text,
            Some("call") => CallsInReasoning::Call,
            Some(other) => {
                return Err(OptionsError::new_err(format!(
                    "calls_in_reasoning must be \"text\" or \"call\" (got {other:?})"
                )))
            }
        };
        let check = match self.check_calls.as_deref() {
            None | Some("off") => Check::Off,
            Some("report") => Check::Report,
            Some("reject") => Check::Reject,
            Some(other) => {
                return Err(OptionsError::new_err(format!(
                    "check_calls must be \"off\", \"report\" or \"reject\" (got {other:?})"
                )))
            }
        };
        let seed = whole(self.seed.as_ref(), "seed", 0)?;
        let ids = match (self.ids.as_deref(), seed) {
            (None | Some("random"), None) => IdMint::Random,
            (None | Some("seeded"), seed) => IdMint::Seeded(seed.unwrap_or(0)),
            (Some("mistral"), seed) => IdMint::Mistral(seed.unwrap_or(0)),
            (Some("random"), Some(_)) => {
                return Err(OptionsError::new_err(
                    "seed is for ids=\"seeded\" or \"mistral\", not \"random\"",
                ))
            }
            (Some(other), _) => {
                return Err(OptionsError::new_err(format!(
                    "ids must be \"random\", \"seeded\" or \"mistral\" (got {other:?})"
                )))
            }
        };

        let mut options = Options::new()
            .with_limits(limits)
            .with_ids(ids)
            .with_reasoning(self.reasoning)
            .with_starts_in_reasoning(self.starts_in_reasoning)
            .with_calls_in_reasoning(calls_in_reasoning)
            .with_check_calls(check)
            .with_complete_at_stop(self.complete_at_stop)
            .with_normalize_tool_names(self.normalize_tool_names);
        if let Some(t) = &self.tools {
            if !t.is_none() {
                options = options.with_tools(tools(py, t)?);
            }
        }
        if let Some(n) = whole(self.max_calls.as_ref(), "max_calls", 0)? {
            let n = usize::try_from(n)
                .map_err(|_| OptionsError::new_err(format!("max_calls is too large ({n})")))?;
            options = options.with_max_calls(n);
        }
        if let Some(only) = &self.only_tool {
            options = options.with_only_tool(only.clone());
        }
        Ok(Config {
            name,
            grammar,
            options,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_named_format_wins_over_the_model_and_auto_defers_to_it() {
        assert_eq!(
            resolve_format(Some("mistral"), Some("Qwen/Qwen3-8B")),
            "mistral"
        );
        assert_eq!(
            resolve_format(Some("auto"), Some("Qwen/Qwen3-8B")),
            "hermes"
        );
        assert_eq!(resolve_format(None, Some("Qwen/Qwen3-8B")), "hermes");
        assert_eq!(resolve_format(None, None), "auto");
    }

    #[test]
    fn an_unknown_model_reads_with_auto() {
        assert_eq!(builtin_for_model("no/such-model"), None);
        assert_eq!(resolve_format(None, Some("no/such-model")), "auto");
    }
}
