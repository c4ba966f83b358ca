//! What `toolscan parse` and `toolscan sse` set up alike from their
//! arguments: the format (`--format`, `--model`), the tools file, the
//! input (a file, or stdin).

use std::fs::File;
use std::path::Path;

use std::sync::Arc;

use toolscan_core::{format_for_model, Format, Grammar, Options, Registry, Tools};

use crate::args::ContentArgs;

use crate::failure::{warn, Failure};

/// The format to use: `--format` if given, else the one `--model` maps to,
/// else `auto` (with a warning when `--model` named an unknown model).
pub fn resolve_format(format: Option<&str>, model: Option<&str>) -> String {
    if let Some(name) = format {
        return name.to_owned();
    }
    let Some(model) = model else {
        return "auto".to_owned();
    };
    match format_for_model(model) {
        Some(name) if Registry::builtin().get(name).is_some() => name.to_owned(),
        Some(name) => {
            warn(&format!(
                "model `{model}` writes format `{name}`, which this build does not implement yet; \
                 detecting it from the content (--format auto)"
            ));
            "auto".to_owned()
        }
        None => {
            warn(&format!(
                "no known format for model `{model}`; detecting it from the content (--format auto)"
            ));
            "auto".to_owned()
        }
    }
}

/// What `parse` and `sse` read content with: the grammar of
/// `--format`/`--format-file`/`--model`, and the parser options of
/// `--tools`, `--reasoning`, `--starts-in-reasoning`,
/// `--calls-in-reasoning`, `--ids` and the limits.
///
/// A `--format-file` format is registered beside the built-in ones; it is
/// the one used unless `--format` names another (`auto` included, which
/// then detects it among all of them), and it wins over `--model`.
pub fn grammar_and_options(args: &ContentArgs) -> Result<(Arc<Grammar>, Options), Failure> {
    let (registry, described) = registry_with(args.format_file.as_deref())?;
    let name = match (args.format.as_deref(), described) {
        (None, Some(described)) => described,
        (format, _) => resolve_format(format, args.model.as_deref()),
    };
    let grammar = registry
        .grammar(&name)
        .map_err(|e| Failure::Usage(e.to_string()))?;
    let mut options = Options::new()
        .with_limits(args.limits.limits())
        .with_ids(args.ids.mint())
        .with_reasoning(args.reasoning)
        .with_starts_in_reasoning(args.starts_in_reasoning)
        .with_calls_in_reasoning(args.calls_in_reasoning.core())
        .with_normalize_tool_names(args.normalize_tool_names);
    options.tools = args.tools.as_deref().map(read_tools).transpose()?;
    Ok((grammar, options))
}

/// The built-in formats, plus the one `--format-file` describes (its name
/// is returned too).
pub fn registry_with(format_file: Option<&Path>) -> Result<(Registry, Option<String>), Failure> {
    let mut registry = Registry::builtin();
    let described = match format_file {
        Some(path) => Some(
            registry
                .register_file(path)
                .map_err(|e| Failure::Usage(e.to_string()))?
                .name()
                .to_owned(),
        ),
        None => None,
    };
    Ok((registry, described))
}

/// The format named `name` in `registry` (`auto` is none: it names a
/// grammar of all of them), or a usage error saying why not.
pub fn format_named<'r>(registry: &'r Registry, name: &str) -> Result<&'r Format, Failure> {
    registry.get(name).ok_or_else(|| {
        Failure::Usage(
            registry
                .grammar(name)
                .err()
                .map_or_else(|| format!("`{name}` is not one format"), |e| e.to_string()),
        )
    })
}

/// Reads and checks the `--tools` file.
pub fn read_tools(path: &Path) -> Result<Tools, Failure> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| Failure::Usage(format!("cannot read tools file `{}`: {e}", path.display())))?;
    Tools::from_json_str(&text)
        .map_err(|e| Failure::Usage(format!("tools file `{}`: {e}", path.display())))
}

/// Opens the input: a file, or stdin for `-` or no argument.
pub fn open_input(path: Option<&Path>) -> Result<Input, Failure> {
    match path {
        None => Ok(Input::Stdin),
        Some(p) if p.as_os_str() == "-" => Ok(Input::Stdin),
        Some(p) => File::open(p)
            .map(|f| Input::File(f, p.display().to_string()))
            .map_err(|e| Failure::Usage(format!("cannot read `{}`: {e}", p.display()))),
    }
}

/// Where the model output comes from.
pub enum Input {
    /// Standard input (`-` or no FILE).
    Stdin,
    /// The file and its name for messages.
    File(File, String),
}

impl Input {
    /// The name used in messages.
    pub fn name(&self) -> &str {
        match self {
            Input::Stdin => "<stdin>",
            Input::File(_, name) => name,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn explicit_format_wins_over_model() {
        assert_eq!(
            resolve_format(Some("hermes"), Some("Qwen/Qwen3-8B")),
            "hermes"
        );
        assert_eq!(resolve_format(Some("auto"), None), "auto");
    }

    #[test]
    fn defaults_to_auto() {
        assert_eq!(resolve_format(None, None), "auto");
        assert_eq!(resolve_format(None, Some("no-such/model-xyz")), "auto");
    }

    #[test]
    fn model_maps_to_its_format() {
        let model = "Qwen/Qwen3-8B";
        let want = format_for_model(model).unwrap_or("auto");
        assert_eq!(resolve_format(None, Some(model)), want);
    }
}
