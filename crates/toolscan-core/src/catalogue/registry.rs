//! Named formats, `auto`, and the mapping from model ids to formats.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use crate::catalogue::formats;
use crate::engine::parser::Parser;
use crate::error::Error;
use crate::lang::format::{Format, Trust};
use crate::lang::grammar::Grammar;
use crate::options::Options;

/// The formats a parser can be built for, by name.
///
/// [`Registry::builtin`] has every built-in format; [`register`](Registry::register)
/// adds a custom one at run time.
///
/// ```
/// use toolscan_core::Registry;
/// let reg = Registry::builtin();
/// assert!(reg.get("hermes").is_some());
/// let auto = reg.grammar("auto").unwrap();
/// assert_eq!(auto.name(), "auto");
/// ```
#[derive(Clone, Debug)]
pub struct Registry {
    /// Shared with every other copy of the built-in registry until a format
    /// is registered (copy on write).
    formats: Arc<Vec<Format>>,
    /// No custom format was registered: compiled grammars can be shared
    /// process-wide.
    pristine: bool,
}

fn cache() -> &'static Mutex<HashMap<String, Arc<Grammar>>> {
    static CACHE: OnceLock<Mutex<HashMap<String, Arc<Grammar>>>> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(HashMap::new()))
}

impl Registry {
    /// The built-in formats (`toolscan formats` lists them).
    pub fn builtin() -> Registry {
        static BUILTIN: OnceLock<Arc<Vec<Format>>> = OnceLock::new();
        Registry {
            formats: Arc::clone(BUILTIN.get_or_init(|| Arc::new(formats::builtin()))),
            pristine: true,
        }
    }

    /// Adds a custom format. Its name must be new (and not `auto`), and its
    /// markers must compile on their own.
    pub fn register(&mut self, format: Format) -> Result<(), Error> {
        let invalid = |reason: &str| Error::InvalidFormat {
            format: format.name.clone(),
            reason: reason.into(),
        };
        if format.name == "auto" || self.get(&format.name).is_some() {
            return Err(invalid("a format of that name exists"));
        }
        if format.openers.is_empty() {
            return Err(invalid("no opening marker"));
        }
        Grammar::new(&format.name, &[&format])?;
        Arc::make_mut(&mut self.formats).push(format);
        self.pristine = false;
        Ok(())
    }

    /// The format of that name, or of that alias: a name folded (ASCII
    /// lower case, `_` read as `-`) or one of vLLM's and SGLang's parser
    /// names ([`ALIASES`](crate::catalogue::aliases::ALIASES)).
    ///
    /// ```
    /// use toolscan_core::Registry;
    /// let reg = Registry::builtin();
    /// assert_eq!(reg.get("qwen3_coder").unwrap().name(), "qwen3-coder");
    /// assert_eq!(reg.get("openai").unwrap().name(), "harmony");
    /// assert_eq!(reg.get("phi4_mini_json").unwrap().name(), "phi4-mini");
    /// assert!(reg.get("nope").is_none());
    /// ```
    pub fn get(&self, name: &str) -> Option<&Format> {
        let exact = |n: &str| self.formats.iter().find(|f| f.name == n);
        exact(name).or_else(|| {
            let folded = crate::catalogue::aliases::fold(name);
            exact(&folded).or_else(|| crate::catalogue::aliases::alias(&folded).and_then(exact))
        })
    }

    /// Why `name` is no format: the error, with the closest known name or
    /// alias as a suggestion.
    fn unknown(&self, name: &str) -> Error {
        let names = self.formats.iter().map(|f| f.name.as_str());
        let aliases = crate::catalogue::aliases::ALIASES.iter().map(|&(a, _)| a);
        Error::UnknownFormat {
            name: name.to_string(),
            suggestion: crate::catalogue::aliases::suggest(name, names.chain(aliases))
                .map(str::to_string),
        }
    }

    /// All formats, in `auto` precedence order.
    pub fn formats(&self) -> &[Format] {
        &self.formats
    }

    /// A parser for format (or alias, or `auto`) `name` of this registry,
    /// with `options`.
    ///
    /// ```
    /// use toolscan_core::{Event, Options, Registry};
    ///
    /// let mut p = Registry::builtin().parser("qwen25", Options::new()).unwrap();
    /// let ev = p.feed(br#"<tool_call>{"name": "f", "arguments": {}}</tool_call>"#);
    /// assert!(ev.iter().any(|e| matches!(e, Event::ToolCallEnd { .. })));
    /// ```
    pub fn parser(&self, name: &str, options: Options) -> Result<Parser, Error> {
        Ok(Parser::new(self.grammar(name)?, options))
    }

    /// The compiled grammar of a format, or of `auto` (every format's
    /// openers except bare JSON ones, first match decides; openers that share
    /// a marker are told apart by the first byte of their body).
    pub fn grammar(&self, name: &str) -> Result<Arc<Grammar>, Error> {
        // An alias is its format's name.
        let name = match self.get(name) {
            Some(f) if name != "auto" => f.name.as_str(),
            _ => name,
        };
        if self.pristine {
            if let Some(g) = cache().lock().ok().and_then(|c| c.get(name).cloned()) {
                return Ok(g);
            }
        }
        let g = Arc::new(if name == "auto" {
            let picked: Vec<Format> = self
                .formats
                .iter()
                .map(|f| {
                    let mut f = f.clone();
                    f.openers
                        .retain(|o| o.trust != Trust::Bare && !o.stream_start);
                    f
                })
                .collect();
            let refs: Vec<&Format> = picked.iter().filter(|f| !f.openers.is_empty()).collect();
            Grammar::new("auto", &refs)?
        } else {
            let f = self.get(name).ok_or_else(|| self.unknown(name))?;
            Grammar::new(name, &[f])?
        });
        if self.pristine {
            if let Ok(mut c) = cache().lock() {
                c.insert(name.to_string(), Arc::clone(&g));
            }
        }
        Ok(g)
    }
}

/// Model-id fragments and the format each family writes, most specific
/// first.
const MODELS: &[(&str, &str)] = &[
    ("qwen3-coder", "qwen3-coder"),
    ("qwen3.5", "qwen3-coder"), // Qwen3.5+ switched to the XML form (P23)
    ("qwen3.6", "qwen3-coder"),
    ("qwen3.8", "qwen3-coder"),
    ("step-3.5", "qwen3-coder"),
    ("step3.5", "qwen3-coder"),
    ("nemotron-3", "qwen3-coder"),
    ("qwq", "hermes"),
    ("qwen", "hermes"), // Qwen2.5, Qwen3
    ("hermes", "hermes"),
    ("granite-4", "hermes"),
    ("ernie-4.5", "hermes"),
    ("deepseek-v3.2-exp", "deepseek-v3.1"),
    ("deepseek-v3.1", "deepseek-v3.1"),
    ("deepseek-v3.2", "deepseek-v3.2"),
    ("deepseek-v4", "deepseek-v3.2"),
    ("deepseek-v3", "deepseek-v3"),
    ("deepseek-r1", "deepseek-v3"),
    ("mistral-small-3.2", "mistral-v11"),
    ("mistral-small-4", "mistral-v11"),
    ("mistral-medium-3.5", "mistral-v11"),
    ("magistral", "mistral-v11"),
    ("devstral", "mistral-v11"),
    ("ministral-3", "mistral-v11"),
    ("mistral", "mistral"),
    ("mixtral", "mistral"),
    ("codestral", "mistral"),
    // Fine-tunes of Llama 3 with formats of their own, before `llama-3`.
    ("nemotron", "nemotron"), // Llama-3.x-Nemotron, Nemotron Nano v2
    ("firefunction", "phi4-mini"),
    ("functionary-small-v3.1", "function-tag"),
    ("functionary-medium-v3.1", "function-tag"),
    ("functionary", "functionary-v3.2"),
    ("llama-4", "pythonic"),
    ("llama4", "pythonic"),
    ("llama-3", "llama3-json"),
    ("llama3", "llama3-json"),
    ("gpt-oss", "harmony"),
    ("kimi-k3", "kimi-k3"),
    ("kimi-k2", "kimi-k2"),
    ("glm-4.5", "glm45"),
    ("glm-4.6", "glm45"),
    ("glm-4.7", "glm47"),
    ("glm-5", "glm47"),
    ("minimax-m2", "minimax-m2"),
    ("minimax-m1", "minimax-m1"),
    ("minimax-text-01", "minimax-m1"),
    ("granite", "granite"),
    ("phi-4-mini", "phi4-mini"),
    ("internlm", "internlm"),
    ("intern-s1", "internlm"),
    ("jamba", "jamba"),
    ("hunyuan", "jamba"),
    ("command-r7b", "command-r7b"),
    ("command-a", "command-r7b"),
    ("command-r", "command-r"),
    ("xlam", "xlam"),
    ("apertus", "apertus"),
    ("gigachat", "gigachat3"),
    ("step-3", "step3"),
    ("step3", "step3"),
    ("seed-oss", "seed-oss"),
    ("olmo-3", "olmo3"),
    ("olmo3", "olmo3"),
    ("lfm2", "lfm2"),
    ("functiongemma", "functiongemma"),
    ("gemma-4", "gemma4"),
    ("gemma-3", "gemma-tool-code"),
    ("apriel", "jamba"),
];

/// The format a model id is known to write, from its family name
/// (`Qwen/Qwen3-8B` → `hermes`, `mistralai/Mistral-Small-3.2-24B-Instruct-2506`
/// → `mistral-v11`). `None` for an unknown family. The format may be one this
/// build does not implement yet ([`Registry::get`] tells).
///
/// ```
/// use toolscan_core::format_for_model;
/// assert_eq!(format_for_model("Qwen/Qwen3-8B"), Some("hermes"));
/// assert_eq!(format_for_model("deepseek-ai/DeepSeek-V3.1"), Some("deepseek-v3.1"));
/// assert_eq!(format_for_model("some-org/unknown-model"), None);
/// ```
pub fn format_for_model(model: &str) -> Option<&'static str> {
    let id = model.to_ascii_lowercase().replace('_', "-");
    let base = id.rsplit('/').next().unwrap_or(&id);
    MODELS
        .iter()
        .find(|(frag, _)| base.contains(frag))
        .map(|&(_, f)| f)
}

impl Parser {
    /// A parser for a built-in format name (or alias, or `auto`) with
    /// default options: [`Registry::builtin`] then [`Registry::parser`].
    pub fn for_format(name: &str) -> Result<Parser, Error> {
        Registry::builtin().parser(name, Options::default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_families() {
        for (model, want) in [
            ("Qwen/Qwen2.5-7B-Instruct", "hermes"),
            ("Qwen/Qwen3.5-4B", "qwen3-coder"),
            ("Qwen/Qwen3-Coder-30B-A3B-Instruct", "qwen3-coder"),
            ("NousResearch/Hermes-3-Llama-3.1-8B", "hermes"),
            ("meta-llama/Llama-3.1-8B-Instruct", "llama3-json"),
            ("meta-llama/Llama-4-Scout-17B-16E-Instruct", "pythonic"),
            ("mistralai/Mistral-7B-Instruct-v0.3", "mistral"),
            (
                "mistralai/Mistral-Small-3.2-24B-Instruct-2506",
                "mistral-v11",
            ),
            ("deepseek-ai/DeepSeek-R1-0528", "deepseek-v3"),
            ("deepseek-ai/DeepSeek-V3.2", "deepseek-v3.2"),
            ("openai/gpt-oss-20b", "harmony"),
            ("zai-org/GLM-4.7-Flash", "glm47"),
            ("moonshotai/Kimi-K2-Instruct-0905", "kimi-k2"),
            ("ibm-granite/granite-3.3-8b-instruct", "granite"),
            ("ibm-granite/granite-4.0-h-small", "hermes"),
            ("microsoft/Phi-4-mini-instruct", "phi4-mini"),
            ("CohereLabs/c4ai-command-r7b-12-2024", "command-r7b"),
            ("CohereForAI/c4ai-command-r-plus", "command-r"),
            ("Salesforce/xLAM-2-8b-fc-r", "xlam"),
            ("swiss-ai/Apertus-8B-Instruct-2509", "apertus"),
            ("ai-sage/GigaChat3-10B-A1.8B", "gigachat3"),
            ("meetkai/functionary-medium-v3.2", "functionary-v3.2"),
            ("allenai/Olmo-3-7B-Instruct", "olmo3"),
            ("LiquidAI/LFM2-1.2B", "lfm2"),
            ("google/gemma-4-31b-it", "gemma4"),
            ("google/functiongemma-270m-it", "functiongemma"),
            ("MiniMaxAI/MiniMax-M1-80k", "minimax-m1"),
            ("internlm/internlm2_5-7b-chat", "internlm"),
            ("ai21labs/AI21-Jamba-Mini-1.5", "jamba"),
            ("nvidia/Llama-3.3-Nemotron-Super-49B-v1", "nemotron"),
            ("nvidia/NVIDIA-Nemotron-Nano-9B-v2", "nemotron"),
            ("nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16", "qwen3-coder"),
            ("fireworks-ai/llama-3-firefunction-v2", "phi4-mini"),
            ("meetkai/functionary-medium-v3.1", "function-tag"),
            ("ServiceNow-AI/Apriel-1.5-15b-Thinker", "jamba"),
        ] {
            assert_eq!(format_for_model(model), Some(want), "{model}");
        }
        // Every family maps to a format this build has.
        let reg = Registry::builtin();
        for (fragment, format) in MODELS {
            assert!(reg.get(format).is_some(), "{fragment} → {format}");
        }
    }

    #[test]
    fn every_builtin_compiles_and_auto_too() {
        let reg = Registry::builtin();
        for f in reg.formats() {
            reg.grammar(f.name()).unwrap();
        }
        reg.grammar("auto").unwrap();
        assert!(matches!(
            reg.grammar("nope"),
            Err(Error::UnknownFormat { .. })
        ));
    }

    #[test]
    fn register_rejects_duplicates() {
        let mut reg = Registry::builtin();
        let f = reg.get("hermes").unwrap().clone();
        assert!(reg.register(f).is_err());
    }
}
