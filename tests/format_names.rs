//! Formats are found under the names vLLM's and SGLang's users know
//! (`--tool-call-parser` values), and an unknown name gets a suggestion.

use toolscan::{Error, Registry};

/// vLLM's and SGLang's parser names, and the format each reads.
#[test]
fn peer_parser_names_find_their_format() {
    let reg = Registry::builtin();
    for (name, want) in [
        ("hermes", "hermes"),
        ("qwen3_coder", "qwen3-coder"),
        ("qwen3_xml", "qwen3-coder"),
        ("llama3_json", "llama3-json"),
        ("llama4_json", "llama3-json"),
        ("llama4_pythonic", "pythonic"),
        ("deepseek_v3", "deepseek-v3"),
        ("deepseek_v31", "deepseek-v3.1"),
        ("deepseekv31", "deepseek-v3.1"),
        ("deepseek_v32", "deepseek-v3.2"),
        ("kimi_k2", "kimi-k2"),
        ("openai", "harmony"),
        ("gpt-oss", "harmony"),
        ("phi4_mini_json", "phi4-mini"),
        ("minimax", "minimax-m1"),
        ("minimax_m2", "minimax-m2"),
        ("qwen25", "hermes"),
        ("seed_oss", "seed-oss"),
        ("glm45", "glm45"),
        ("Mistral", "mistral"),
    ] {
        let f = reg.get(name).unwrap_or_else(|| panic!("{name}"));
        assert_eq!(f.name(), want, "{name}");
        let g = reg.grammar(name).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(
            g.name(),
            want,
            "{name}: the grammar has the format's own name"
        );
    }
}

/// Every alias stands for a built-in format.
#[test]
fn every_alias_names_a_format() {
    let reg = Registry::builtin();
    for (alias, format) in toolscan::aliases::ALIASES {
        assert!(reg.get(format).is_some(), "{alias} → {format}");
        assert_eq!(reg.get(alias).map(|f| f.name()), Some(*format), "{alias}");
    }
}

/// A misspelt name is refused with the closest name; a name far from all
/// gets none.
#[test]
fn an_unknown_name_gets_a_suggestion() {
    let reg = Registry::builtin();
    match reg.grammar("qwen3_corder") {
        Err(Error::UnknownFormat { name, suggestion }) => {
            assert_eq!(name, "qwen3_corder");
            assert_eq!(suggestion.as_deref(), Some("qwen3-coder"));
        }
        other => panic!("{other:?}"),
    }
    let e = reg.grammar("hermse").unwrap_err().to_string();
    assert!(e.contains("did you mean `hermes`?"), "{e}");
    match reg.grammar("completely-different") {
        Err(Error::UnknownFormat { suggestion, .. }) => assert_eq!(suggestion, None),
        other => panic!("{other:?}"),
    }
}
