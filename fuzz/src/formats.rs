//! The formats a target picks from, and what its text may be checked
//! against.

use std::sync::{Arc, OnceLock};

use serde_json::Value;
use toolscan_core::{Format, Grammar, Registry};

/// What a run's text can be compared with, decided from the format's own
/// data (its openers' programs, as its description writes them:
/// `Format::to_json`), so that a new format is classified when it is
/// added.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum TextRule {
    /// The format drops nothing but calls: with no completed call and
    /// reasoning separation off, the text is the input (invalid UTF-8 as
    /// U+FFFD).
    Exact,
    /// The format drops framing (a `"frame"` step: Harmony's headers,
    /// Functionary's recipient lines; a "no call" object: Cohere's
    /// `directly-answer`) even when no call completes: the text is the
    /// input with pieces taken out (a subsequence of it).
    Framed,
    /// The format decodes text out of a JSON string (the `{"response":
    /// "…"}` envelope of `json`): the text need not occur in the input.
    Decoded,
}

/// The rule of one opener's program (the opener as its format's
/// description writes it).
fn opener_rule(o: &Value) -> TextRule {
    let steps = o["program"].as_array().map(Vec::as_slice).unwrap_or(&[]);
    steps
        .iter()
        .map(|s| match s {
            Value::String(word) if word == "frame" => TextRule::Framed,
            Value::Object(m) if m.contains_key("json") && m.contains_key("text_key") => {
                TextRule::Decoded
            }
            Value::Object(m) if m.contains_key("json") && m.contains_key("no_call_names") => {
                TextRule::Framed
            }
            _ => TextRule::Exact,
        })
        .max()
        .unwrap_or(TextRule::Exact)
}

/// A format's openers, as its description writes them.
fn openers(f: &Format) -> Vec<Value> {
    let described = f.to_json().expect("a loaded format can be described");
    let v: Value = serde_json::from_str(&described).expect("a description is JSON");
    v["openers"].as_array().cloned().unwrap_or_default()
}

/// The rule of a grammar made of `formats`; `auto` reads every opener but
/// the bare and start-of-stream ones (as `Registry::grammar` builds it).
pub fn text_rule<'a>(formats: impl IntoIterator<Item = &'a Format>, auto: bool) -> TextRule {
    formats
        .into_iter()
        .flat_map(openers)
        .filter(|o| !auto || (o["trust"] != "bare" && o["stream_start"] != true))
        .map(|o| opener_rule(&o))
        .max()
        .unwrap_or(TextRule::Exact)
}

/// One format a target may pick.
#[derive(Clone, Debug)]
pub struct Entry {
    /// Its name (`auto` for detection).
    pub name: String,
    /// Its compiled grammar.
    pub grammar: Arc<Grammar>,
    /// What its text may be checked against.
    pub rule: TextRule,
}

/// Every built-in format, in `Registry::builtin().formats()` order, then
/// `auto`: the table an input's format byte indexes (modulo its length).
pub fn builtin() -> &'static [Entry] {
    static TABLE: OnceLock<Vec<Entry>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let reg = Registry::builtin();
        let mut table: Vec<Entry> = reg
            .formats()
            .iter()
            .map(|f| Entry {
                name: f.name().to_string(),
                grammar: reg.grammar(f.name()).expect("a built-in grammar compiles"),
                rule: text_rule([f], false),
            })
            .collect();
        table.push(Entry {
            name: "auto".into(),
            grammar: reg.grammar("auto").expect("auto compiles"),
            rule: text_rule(reg.formats(), true),
        });
        table
    })
}

/// The index of a format in [`builtin`]; an unknown name is `auto` (the
/// conformance cases of formats this build lacks are read by `auto`).
pub fn index_of(name: &str) -> usize {
    let t = builtin();
    t.iter().position(|e| e.name == name).unwrap_or(t.len() - 1)
}

/// The entry an input's format byte picks.
pub fn pick(byte: u8) -> &'static Entry {
    let t = builtin();
    &t[usize::from(byte) % t.len()]
}
