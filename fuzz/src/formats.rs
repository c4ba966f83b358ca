//! The formats a target picks from, and what its text may be checked
//! against.

use std::sync::{Arc, OnceLock};

use toolscan_core::format::{Opener, Step, Trust};
use toolscan_core::{Format, Grammar, Registry};

/// What a run's text can be compared with, decided from the format's own
/// data (its openers' programs), so that a new format is classified when
/// it is added.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum TextRule {
    /// The format drops nothing but calls: with no completed call and
    /// reasoning separation off, the text is the input (invalid UTF-8 as
    /// U+FFFD).
    Exact,
    /// The format drops framing (`Step::Frame`: Harmony's headers,
    /// Functionary's recipient lines; a "no call" object: Cohere's
    /// `directly-answer`) even when no call completes: the text is the
    /// input with pieces taken out (a subsequence of it).
    Framed,
    /// The format decodes text out of a JSON string (the `{"response":
    /// "…"}` envelope of `json`): the text need not occur in the input.
    Decoded,
}

/// The rule of one opener's program.
fn opener_rule(o: &Opener) -> TextRule {
    o.program
        .iter()
        .map(|s| match s {
            Step::Frame => TextRule::Framed,
            Step::Json(j) if j.keys.text.is_some() => TextRule::Decoded,
            Step::Json(j) if !j.keys.no_call.is_empty() => TextRule::Framed,
            _ => TextRule::Exact,
        })
        .max()
        .unwrap_or(TextRule::Exact)
}

/// The rule of a grammar made of `formats`; `auto` reads every opener but
/// the bare and start-of-stream ones (as `Registry::grammar` builds it).
pub fn text_rule<'a>(formats: impl IntoIterator<Item = &'a Format>, auto: bool) -> TextRule {
    formats
        .into_iter()
        .flat_map(|f| f.openers())
        .filter(|o| !auto || (o.trust != Trust::Bare && !o.stream_start))
        .map(opener_rule)
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
