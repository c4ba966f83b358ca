//! The conformance corpus (contract §4): loading the cases, and checking a
//! run — events from the library, or the final object the command line
//! prints — against a case's expectations.

use std::path::{Path, PathBuf};

use serde_json::Value;
use toolscan_core::{parse, Event, Options, Parser, Registry, Response, Tools};

use crate::check::{check_events, offsets_within, same_coalesced};
use crate::chunk;

/// One corpus case: a line of a `*.jsonl` file.
#[derive(Clone, Debug)]
pub struct Case {
    /// The file it comes from (`hermes.jsonl`).
    pub file: String,
    /// Its unique id.
    pub id: String,
    /// The format to parse it with: a format name or `auto`.
    pub format: String,
    /// The model output.
    pub input: String,
    /// The OpenAI `tools` array, when the case gives one.
    pub tools: Option<Value>,
    /// `{"text", "tool_calls", "diagnostics"?}`: see [`check_expect`].
    pub expect: Value,
    /// Why the case exists (for `auto` cases, which format detection must
    /// pick); never compared.
    pub note: String,
}

/// The workspace's conformance corpus, `tests/corpus` (maintainers refresh
/// it with `scripts/refresh-corpus.sh`).
pub fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/corpus")
}

/// Every case of `dir/*.jsonl`, files in name order, lines in file order.
///
/// # Panics
///
/// If `dir` cannot be read or a line is not a case: the corpus is part of
/// the tests.
/// The cases of `dir` that contradict the contract or the catalogue: id →
/// why, from `dir/skip.json` (an object; absent: none). The project's own
/// file, which the corpus refresh leaves alone.
pub fn skipped(dir: &Path) -> Vec<(String, String)> {
    let path = dir.join("skip.json");
    let Ok(text) = std::fs::read_to_string(&path) else {
        return Vec::new();
    };
    let v: Value =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: not JSON: {e}", path.display()));
    let Value::Object(o) = v else {
        panic!("{}: not an object of case id → reason", path.display());
    };
    o.into_iter()
        .map(|(id, why)| (id, why.as_str().unwrap_or_default().to_owned()))
        .collect()
}

/// Every case of `dir`'s `*.jsonl` files, in file and line order, less the
/// ones [`skipped`] names (each said on stderr with its reason).
pub fn load_corpus(dir: &Path) -> Vec<Case> {
    let skip = skipped(dir);
    let mut cases = load_every_case(dir);
    cases.retain(|c| match skip.iter().find(|(id, _)| *id == c.id) {
        Some((id, why)) => {
            eprintln!("skip {id}: {why}");
            false
        }
        None => true,
    });
    cases
}

fn load_every_case(dir: &Path) -> Vec<Case> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("corpus directory {}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    let mut cases = Vec::new();
    for f in files {
        let file = f.file_name().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(&f).unwrap_or_else(|e| panic!("{file}: {e}"));
        for (n, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let v: Value = serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("{file}:{}: not JSON: {e}", n + 1));
            let field = |k: &str| {
                v[k].as_str()
                    .unwrap_or_else(|| panic!("{file}:{}: no string {k:?}", n + 1))
                    .to_string()
            };
            cases.push(Case {
                id: field("id"),
                format: field("format"),
                input: field("input"),
                tools: v.get("tools").cloned(),
                expect: v["expect"].clone(),
                note: v.get("note").and_then(Value::as_str).unwrap_or("").into(),
                file: file.clone(),
            });
        }
    }
    cases
}

/// The format a case exercises: its `format`, or for an `auto` case the
/// one its note says detection must (or may) pick, or `auto`.
pub fn target_format(case: &Case) -> &str {
    if case.format != "auto" {
        return &case.format;
    }
    ["must pick `", "may pick `"]
        .iter()
        .find_map(|p| case.note.split(p).nth(1))
        .and_then(|rest| rest.split('`').next())
        .unwrap_or("auto")
}

/// Whether this build implements the format the case exercises.
pub fn implemented(case: &Case) -> bool {
    let t = target_format(case);
    t == "auto" || Registry::builtin().get(t).is_some()
}

/// The options a case runs with: ids minted from seed 0
/// ([`chunk::seeded_options`]), and the case's tools.
///
/// # Panics
///
/// If the case's tools do not parse.
pub fn options_for(case: &Case) -> Options {
    let mut o = chunk::seeded_options();
    if let Some(t) = &case.tools {
        let tools = Tools::from_json(t).unwrap_or_else(|e| panic!("{}: tools: {e}", case.id));
        o = o.with_tools(tools);
    }
    o
}

/// Trims `s` and collapses every run of whitespace to one space (how
/// `expect.text` is compared).
pub fn normalize_ws(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A completed call, as expectations compare it.
#[derive(Clone, Debug, PartialEq)]
pub struct OutCall {
    /// The call id.
    pub id: String,
    /// The tool name.
    pub name: String,
    /// The arguments, parsed.
    pub arguments: Value,
}

/// What a run gave, in the terms of a case's expectations: from a
/// [`Response`], from events, or from the object `toolscan parse --output
/// final` prints.
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    /// All text, concatenated.
    pub text: String,
    /// The completed calls, in order.
    pub tool_calls: Vec<OutCall>,
    /// How many diagnostics there were.
    pub diagnostics: usize,
}

impl Outcome {
    /// The outcome of a collected response.
    ///
    /// # Panics
    ///
    /// If a call's arguments are not a JSON object (which
    /// [`check_events`] reports first).
    pub fn from_response(r: &Response) -> Outcome {
        Outcome {
            text: r.text.clone(),
            tool_calls: r
                .tool_calls
                .iter()
                .map(|c| OutCall {
                    id: c.id.clone(),
                    name: c.name.clone(),
                    arguments: Value::Object(c.arguments.parse().expect("arguments parse")),
                })
                .collect(),
            diagnostics: r.diagnostics.len(),
        }
    }

    /// The outcome of a run's events.
    pub fn from_events(events: &[Event]) -> Outcome {
        Outcome::from_response(&Response::from_events(events))
    }

    /// The outcome of the `--output final` object: `{"text", "tool_calls":
    /// [{"id", "name", "arguments"}], "diagnostics": [...], …}`.
    pub fn from_final_json(v: &Value) -> Result<Outcome, String> {
        let text = v["text"].as_str().ok_or("no \"text\" string")?;
        let calls = v["tool_calls"]
            .as_array()
            .ok_or("no \"tool_calls\" array")?;
        let diagnostics = v["diagnostics"]
            .as_array()
            .ok_or("no \"diagnostics\" array")?;
        let tool_calls = calls
            .iter()
            .map(|c| {
                Ok(OutCall {
                    id: c["id"].as_str().ok_or("a call without an id")?.into(),
                    name: c["name"].as_str().ok_or("a call without a name")?.into(),
                    arguments: c["arguments"].clone(),
                })
            })
            .collect::<Result<_, String>>()?;
        Ok(Outcome {
            text: text.into(),
            tool_calls,
            diagnostics: diagnostics.len(),
        })
    }
}

/// Compares an outcome with a case's `expect` object:
///
/// - `text`: the outcome's text, whitespace normalised ([`normalize_ws`]),
///   equals it;
/// - `tool_calls`: as many calls, in order, with the same `name`,
///   `arguments` as JSON values, and the same `id` where one is given; every
///   id is non-empty;
/// - `diagnostics` (when present): the number of diagnostics.
pub fn check_expect(expect: &Value, got: &Outcome) -> Result<(), String> {
    let want_text = expect["text"].as_str().unwrap_or("");
    let got_text = normalize_ws(&got.text);
    if got_text != want_text {
        return Err(format!("text\n   got: {got_text:?}\n  want: {want_text:?}"));
    }
    let no_calls = Vec::new();
    let want_calls = expect["tool_calls"].as_array().unwrap_or(&no_calls);
    if got.tool_calls.len() != want_calls.len() {
        return Err(format!(
            "{} calls, want {}: {:?}",
            got.tool_calls.len(),
            want_calls.len(),
            got.tool_calls
        ));
    }
    for (got, want) in got.tool_calls.iter().zip(want_calls) {
        if got.name != want["name"].as_str().unwrap_or("") {
            return Err(format!("name {:?}, want {}", got.name, want["name"]));
        }
        if got.arguments != want["arguments"] {
            return Err(format!(
                "arguments of {}: {}, want {}",
                got.name, got.arguments, want["arguments"]
            ));
        }
        if let Some(id) = want.get("id").and_then(Value::as_str) {
            if got.id != id {
                return Err(format!("id {:?}, want {id:?}", got.id));
            }
        }
        if got.id.is_empty() {
            return Err(format!("call {} has an empty id", got.name));
        }
    }
    if let Some(d) = expect.get("diagnostics").and_then(Value::as_u64) {
        if got.diagnostics as u64 != d {
            return Err(format!("{} diagnostics, want {d}", got.diagnostics));
        }
    }
    Ok(())
}

/// Runs a case under every plan of [`chunk::standard`], each through every
/// parser API ([`chunk::feed_every_api`]: they must agree). Every run must
/// meet the event contract ([`check_events`], diagnostics within the
/// input) and the case's expectations; all plans must give the same
/// coalesced events; and the one-shot [`parse`] must give the response the
/// events collect to.
pub fn check_case(case: &Case) -> Result<(), String> {
    let grammar = Registry::builtin()
        .grammar(&case.format)
        .map_err(|e| e.to_string())?;
    let input = case.input.as_bytes();
    let make = || Parser::new(grammar.clone(), options_for(case));
    let mut reference: Option<Vec<Event>> = None;
    for plan in chunk::standard(input.len()) {
        let events = chunk::feed_every_api(make, input, &plan)?;
        let at = |e: String| format!("[{plan}] {e}");
        check_events(&events).map_err(at)?;
        offsets_within(&events, input.len()).map_err(at)?;
        check_expect(&case.expect, &Outcome::from_events(&events)).map_err(at)?;
        match &reference {
            None => {
                let one_shot = parse(grammar.clone(), options_for(case), input);
                if one_shot != Response::from_events(&events) {
                    return Err(at(format!(
                        "parse differs from the streamed events: {one_shot:?}"
                    )));
                }
                reference = Some(events);
            }
            Some(r) => same_coalesced(&events, r)
                .map_err(|e| at(format!("not what the whole input gives: {e}")))?,
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn case(format: &str, note: &str) -> Case {
        Case {
            file: "x.jsonl".into(),
            id: "x".into(),
            format: format.into(),
            input: String::new(),
            tools: None,
            expect: json!({}),
            note: note.into(),
        }
    }

    #[test]
    fn target_format_reads_the_note_of_auto_cases() {
        assert_eq!(target_format(&case("hermes", "must pick `json`")), "hermes");
        assert_eq!(
            target_format(&case("auto", "must pick `mistral` here")),
            "mistral"
        );
        assert_eq!(target_format(&case("auto", "may pick `hermes`")), "hermes");
        assert_eq!(target_format(&case("auto", "text only")), "auto");
        assert!(implemented(&case("auto", "must pick `hermes`")));
        assert!(!implemented(&case("no-such-format", "")));
    }

    #[test]
    fn check_expect_compares_text_calls_ids_and_diagnostics() {
        let got = Outcome {
            text: "  Sure.\n\n done ".into(),
            tool_calls: vec![OutCall {
                id: "call_1".into(),
                name: "f".into(),
                arguments: json!({"a": 1}),
            }],
            diagnostics: 0,
        };
        let call = json!({"name": "f", "arguments": {"a": 1}});
        let ok = json!({"text": "Sure. done", "tool_calls": [call], "diagnostics": 0});
        assert_eq!(check_expect(&ok, &got), Ok(()));
        for bad in [
            json!({"text": "Sure.", "tool_calls": [call]}),
            json!({"text": "Sure. done", "tool_calls": []}),
            json!({"text": "Sure. done", "tool_calls": [{"name": "g", "arguments": {"a": 1}}]}),
            json!({"text": "Sure. done", "tool_calls": [{"name": "f", "arguments": {"a": 2}}]}),
            json!({"text": "Sure. done", "tool_calls": [{"name": "f", "arguments": {"a": 1}, "id": "x"}]}),
            json!({"text": "Sure. done", "tool_calls": [call], "diagnostics": 1}),
        ] {
            assert!(check_expect(&bad, &got).is_err(), "{bad}");
        }
    }

    #[test]
    fn outcomes_of_a_response_and_of_its_final_object_agree() {
        let input = "Hi <tool_call>{\"name\": \"f\", \"arguments\": {\"a\": [1]}}</tool_call>";
        let r = parse(
            Registry::builtin().grammar("hermes").unwrap(),
            chunk::seeded_options(),
            input.as_bytes(),
        );
        let from_json = Outcome::from_final_json(&serde_json::to_value(&r).unwrap()).unwrap();
        assert_eq!(from_json, Outcome::from_response(&r));
        assert_eq!(from_json.tool_calls[0].arguments, json!({"a": [1]}));
        assert!(Outcome::from_final_json(&json!({"text": ""})).is_err());
    }

    #[test]
    fn the_workspace_corpus_loads() {
        let cases = load_corpus(&corpus_dir());
        assert!(cases.len() >= 500, "{} cases", cases.len());
        assert!(cases
            .iter()
            .all(|c| !c.id.is_empty() && c.expect.is_object()));
    }
}
