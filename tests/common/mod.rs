//! Shared helpers of the integration tests: the conformance corpus, chunk
//! plans and event checks.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use serde_json::Value;
use toolscan::{coalesce, Event, IdMint, Options, Parser, Registry, Response, Tools};

/// One corpus case (contract §4).
#[derive(Clone, Debug)]
pub struct Case {
    pub file: String,
    pub id: String,
    pub format: String,
    pub input: String,
    pub tools: Option<Value>,
    pub expect: Value,
    pub note: String,
}

pub fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus")
}

/// Every case of `tests/corpus/*.jsonl` (the in-repo copy of the shared
/// corpus; `scripts/refresh-corpus.sh` refreshes it).
pub fn load_corpus() -> Vec<Case> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(corpus_dir())
        .expect("tests/corpus exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    let mut cases = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).expect("readable corpus file");
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let v: Value = serde_json::from_str(line).expect("corpus line is JSON");
            cases.push(Case {
                file: f.file_name().unwrap().to_string_lossy().into_owned(),
                id: v["id"].as_str().unwrap().to_string(),
                format: v["format"].as_str().unwrap().to_string(),
                input: v["input"].as_str().unwrap().to_string(),
                tools: v.get("tools").cloned(),
                expect: v["expect"].clone(),
                note: v
                    .get("note")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string(),
            });
        }
    }
    cases
}

/// The format a case exercises: its `format`, or for `auto` cases the one
/// the note says detection must pick.
pub fn target_format(case: &Case) -> String {
    if case.format != "auto" {
        return case.format.clone();
    }
    if let Some(rest) = case.note.split("must pick `").nth(1) {
        return rest.split('`').next().unwrap_or("auto").to_string();
    }
    if let Some(rest) = case.note.split("may pick `").nth(1) {
        return rest.split('`').next().unwrap_or("auto").to_string();
    }
    "auto".to_string()
}

/// Whether this build implements what the case needs.
pub fn implemented(case: &Case) -> bool {
    let reg = Registry::builtin();
    let t = target_format(case);
    t == "auto" || reg.get(&t).is_some()
}

/// Chunk plans: cut points for the whole input, 1-byte pieces, a few fixed
/// sizes and seeded random sizes (1..=17) — splitting UTF-8 characters and
/// multi-byte markers.
pub fn plans(len: usize) -> Vec<(String, Vec<usize>)> {
    let mut plans = vec![("whole".to_string(), vec![len])];
    for n in [1, 2, 3, 5, 7, 16] {
        let mut v = vec![n; len / n];
        if len % n != 0 {
            v.push(len % n);
        }
        plans.push((format!("size {n}"), v));
    }
    for seed in [1u64, 2, 3, 42, 1234] {
        let mut s = seed;
        let mut v = Vec::new();
        let mut left = len;
        while left > 0 {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            let n = ((s % 17) as usize + 1).min(left);
            v.push(n);
            left -= n;
        }
        plans.push((format!("random seed {seed}"), v));
    }
    plans
}

pub fn options_for(case: &Case) -> Options {
    let mut o = Options::new().with_ids(IdMint::Seeded(0));
    if let Some(t) = &case.tools {
        o = o.with_tools(Tools::from_json(t).expect("corpus tools parse"));
    }
    o
}

/// Feeds `input` in pieces of the given sizes.
pub fn run(format: &str, options: Options, input: &[u8], sizes: &[usize]) -> Vec<Event> {
    let g = Registry::builtin().grammar(format).expect("format exists");
    let mut p = Parser::new(g, options);
    let mut events = Vec::new();
    let mut at = 0;
    for &n in sizes {
        p.feed_into(&input[at..at + n], &mut events);
        at += n;
    }
    p.finish_into(&mut events);
    events
}

pub fn normalize_ws(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Checks the contract's structural rules on one event sequence: `done`
/// last and only once; per index: one start, then argument deltas, then at
/// most one end whose arguments equal the concatenated deltas; indices are
/// ordinals; ids unique.
pub fn check_structure(events: &[Event]) -> Result<(), String> {
    let n = events.len();
    match events.last() {
        Some(Event::Done { .. }) => {}
        other => return Err(format!("last event is not done: {other:?}")),
    }
    if events[..n - 1]
        .iter()
        .any(|e| matches!(e, Event::Done { .. }))
    {
        return Err("done before the end".into());
    }
    let mut started: Vec<(String, String, String, bool)> = Vec::new(); // id, name, args, ended
    for e in events {
        match e {
            Event::ToolCallStart { index, id, name } => {
                if *index != started.len() {
                    return Err(format!("start index {index}, expected {}", started.len()));
                }
                if started.iter().any(|s| &s.0 == id) {
                    return Err(format!("duplicate id {id}"));
                }
                started.push((id.clone(), name.clone(), String::new(), false));
            }
            Event::ToolCallArgs { index, delta } => {
                let s = started
                    .get_mut(*index)
                    .ok_or(format!("args for unstarted index {index}"))?;
                if s.3 {
                    return Err(format!("args after end for {index}"));
                }
                s.2.push_str(delta);
            }
            Event::ToolCallEnd {
                index,
                id,
                name,
                arguments,
            } => {
                let s = started
                    .get_mut(*index)
                    .ok_or(format!("end for unstarted index {index}"))?;
                if s.3 || &s.0 != id || &s.1 != name {
                    return Err(format!("end of {index} does not match its start"));
                }
                s.3 = true;
                if s.2 != arguments.as_str() {
                    return Err(format!(
                        "deltas of {index} ({}) differ from arguments ({:?})",
                        s.2, arguments
                    ));
                }
                let parsed = arguments
                    .parse()
                    .map_err(|e| format!("arguments of {index} are not an object ({e})"))?;
                let streamed: Value = serde_json::from_str(&s.2)
                    .map_err(|e| format!("deltas of {index} are not JSON ({e}): {:?}", s.2))?;
                if streamed != Value::Object(parsed) {
                    return Err(format!("deltas of {index} parse to another value"));
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// Compares a collected response with a case's expectations.
pub fn check_expect(case: &Case, events: &[Event]) -> Result<(), String> {
    let r = Response::from_events(events);
    let want_text = case.expect["text"].as_str().unwrap_or("");
    let got_text = normalize_ws(&r.text);
    if got_text != want_text {
        return Err(format!("text\n   got: {got_text:?}\n  want: {want_text:?}"));
    }
    let want_calls = case.expect["tool_calls"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    if r.tool_calls.len() != want_calls.len() {
        return Err(format!(
            "{} calls, want {}: {:?}",
            r.tool_calls.len(),
            want_calls.len(),
            r.tool_calls
        ));
    }
    for (got, want) in r.tool_calls.iter().zip(&want_calls) {
        if got.name != want["name"].as_str().unwrap_or("") {
            return Err(format!("name {:?}, want {}", got.name, want["name"]));
        }
        let parsed = got.arguments.parse().map_err(|e| e.to_string())?;
        if Value::Object(parsed) != want["arguments"] {
            return Err(format!(
                "arguments of {}: {:?}, want {}",
                got.name, got.arguments, want["arguments"]
            ));
        }
        if let Some(id) = want.get("id").and_then(Value::as_str) {
            if got.id != id {
                return Err(format!("id {:?}, want {id:?}", got.id));
            }
        }
        if got.id.is_empty() {
            return Err("empty id".into());
        }
    }
    if let Some(d) = case.expect.get("diagnostics").and_then(Value::as_u64) {
        if r.diagnostics.len() as u64 != d {
            return Err(format!(
                "{} diagnostics, want {d}: {:?}",
                r.diagnostics.len(),
                r.diagnostics
            ));
        }
    }
    Ok(())
}

/// Runs a case under every plan: each must meet the expectations and the
/// structural rules, and all must coalesce to the same events.
pub fn check_case(case: &Case) -> Result<(), String> {
    let input = case.input.as_bytes();
    let mut reference: Option<Vec<Event>> = None;
    for (name, sizes) in plans(input.len()) {
        let events = run(&case.format, options_for(case), input, &sizes);
        check_structure(&events).map_err(|e| format!("[{name}] {e}"))?;
        check_expect(case, &events).map_err(|e| format!("[{name}] {e}"))?;
        let c = coalesce(events);
        match &reference {
            None => reference = Some(c),
            Some(r) if *r != c => {
                return Err(format!(
                    "[{name}] events differ from the whole-input run:\n   got: {c:?}\n  want: {r:?}"
                ))
            }
            _ => {}
        }
    }
    Ok(())
}
