//! Other names of the built-in formats: the tool-parser names of vLLM
//! (`--tool-call-parser`) and SGLang, so that their users find their
//! parser under the name they know, and the suggestion an unknown name
//! gets.
//!
//! A name is looked up as given, then folded (ASCII lower case, `_` read
//! as `-`), then in [`ALIASES`].

/// Alias → format name, after folding.
pub const ALIASES: &[(&str, &str)] = &[
    // Hermes-style `<tool_call>` (Qwen 2.5, Qwen3; vLLM `hermes`, SGLang
    // `qwen25`/`qwen`).
    ("qwen", "hermes"),
    ("qwen25", "hermes"),
    ("qwen2.5", "hermes"),
    ("ernie45", "hermes"),
    ("ernie-4.5", "hermes"),
    // Llama 3.1+/4 JSON.
    ("llama3", "llama3-json"),
    ("llama4-json", "llama3-json"),
    // Llama 4 / Llama 3.2 pythonic lists.
    ("llama4-pythonic", "pythonic"),
    // gpt-oss.
    ("openai", "harmony"),
    ("gpt-oss", "harmony"),
    // Qwen3-Coder's XML (vLLM has both names).
    ("qwen3-xml", "qwen3-coder"),
    // DeepSeek.
    ("deepseekv3", "deepseek-v3"),
    ("deepseek-r1", "deepseek-v3"),
    ("deepseek-v31", "deepseek-v3.1"),
    ("deepseekv31", "deepseek-v3.1"),
    ("deepseek-v32", "deepseek-v3.2"),
    ("deepseekv32", "deepseek-v3.2"),
    // MiniMax.
    ("minimax", "minimax-m1"),
    // GLM.
    ("glm4-moe", "glm45"),
    ("glm-4.5", "glm45"),
    ("glm-4.7", "glm47"),
    // Kimi.
    ("kimi", "kimi-k2"),
    // Phi-4-mini.
    ("phi4-mini-json", "phi4-mini"),
    // InternLM 2.5, Intern-S1.
    ("internlm2", "internlm"),
    ("interns1", "internlm"),
    // Granite 3.x.
    ("granite3", "granite"),
];

/// The aliases of the format `name`.
///
/// ```
/// assert_eq!(toolscan_core::aliases::of("harmony"), ["openai", "gpt-oss"]);
/// ```
pub fn of(name: &str) -> Vec<&'static str> {
    ALIASES
        .iter()
        .filter(|&&(_, f)| f == name)
        .map(|&(a, _)| a)
        .collect()
}

/// `name` in ASCII lower case, `_` read as `-`.
pub(crate) fn fold(name: &str) -> String {
    name.to_ascii_lowercase().replace('_', "-")
}

/// The format an alias stands for (`name` folded).
pub(crate) fn alias(folded: &str) -> Option<&'static str> {
    ALIASES.iter().find(|(a, _)| *a == folded).map(|&(_, f)| f)
}

/// The known name closest to an unknown `name`, if one is close: a few
/// edits away, or one holding the other.
pub(crate) fn suggest<'a>(name: &str, known: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    let folded = fold(name);
    if folded.is_empty() {
        return None;
    }
    known
        .map(|k| {
            let d = distance(&folded, k);
            let holds = k.contains(folded.as_str()) || folded.contains(k);
            (if holds { d.min(2) } else { d }, k)
        })
        .filter(|&(d, k)| d <= 2.max(k.len().min(folded.len()) / 4))
        .min_by_key(|&(d, _)| d)
        .map(|(_, k)| k)
}

/// Levenshtein distance of two short ASCII-ish names, by bytes.
fn distance(a: &str, b: &str) -> usize {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, &x) in a.iter().enumerate() {
        let mut diag = row[0];
        row[0] = i + 1;
        for (j, &y) in b.iter().enumerate() {
            let next = (diag + usize::from(x != y))
                .min(row[j] + 1)
                .min(row[j + 1] + 1);
            diag = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances() {
        assert_eq!(distance("hermes", "hermes"), 0);
        assert_eq!(distance("hermse", "hermes"), 2);
        assert_eq!(distance("herme", "hermes"), 1);
        assert_eq!(distance("", "abc"), 3);
    }

    #[test]
    fn suggestions_are_close_names_only() {
        let known = ["hermes", "mistral", "qwen3-coder", "llama3-json"];
        assert_eq!(suggest("hermse", known.into_iter()), Some("hermes"));
        assert_eq!(suggest("Mistral_", known.into_iter()), Some("mistral"));
        assert_eq!(
            suggest("qwen3coder", known.into_iter()),
            Some("qwen3-coder")
        );
        assert_eq!(suggest("llama3", known.into_iter()), Some("llama3-json"));
        assert_eq!(suggest("zzzzzz", known.into_iter()), None);
        assert_eq!(suggest("", known.into_iter()), None);
    }
}
