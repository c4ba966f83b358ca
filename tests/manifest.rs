//! Manifests, checked by reading their examples back: for every built-in
//! format (and one loaded from a file), the manifest of a list of tools
//! with nested objects, lists and enums describes each tool in the style
//! of the format's notation, and each example — written by the renderer
//! from the tool's schema — parses, under every standard chunking and
//! feeding API, to one call of its tool whose arguments hold the
//! schema's required keys with values of the declared types (checked
//! here, by this file's own reading of the schema, which also refuses
//! keys the schema does not declare) and that the parser's own schema
//! check (`Check::Report`) finds nothing wrong with.

use serde_json::{json, Value};
use toolscan::{Check, Event, Format, Notation, Options, Registry, Tools};
use toolscan_testkit::check::{calls_of, text_of};
use toolscan_testkit::chunk::{events_everywhere, seeded_options};

fn tools() -> Tools {
    Tools::from_json(&json!([
        {"type": "function", "function": {
            "name": "get_weather",
            "description": "Current weather in a city.",
            "parameters": {"type": "object", "properties": {
                "city": {"type": "string", "description": "The city's name."},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
                "days": {"type": "integer", "minimum": 1, "maximum": 7}},
                "required": ["city", "unit"]}}},
        {"type": "function", "function": {
            "name": "plan_trip",
            "description": "Plans a trip with its stops.",
            "parameters": {"type": "object", "properties": {
                "traveller": {"type": "object", "properties": {
                    "name": {"type": "string"},
                    "age": {"type": "integer"},
                    "email": {"type": "string", "format": "email"}},
                    "required": ["name", "age"]},
                "stops": {"type": "array", "items": {"type": "object", "properties": {
                    "city": {"type": "string"},
                    "nights": {"type": "integer", "minimum": 1}},
                    "required": ["city", "nights"]}},
                "tags": {"type": "array", "items": {"type": "string", "enum": ["beach", "museum"]}},
                "budget": {"type": "number"},
                "flexible": {"type": "boolean"},
                "start": {"type": "string", "format": "date"},
                "note": {"type": "string"}},
                "required": ["traveller", "stops", "tags", "budget", "flexible", "start"]}}},
        {"type": "function", "function": {
            "name": "get_time", "description": "The current time.",
            "parameters": {"type": "object", "properties": {}}}}
    ]))
    .expect("tools")
}

/// Whether `v` holds to `schema`: its type (an integer where `integer`,
/// a number where `number`…), its enum, and, for objects, every required
/// key (and each member that the schema declares); lists, item by item.
fn holds_to(v: &Value, schema: &Value) -> Result<(), String> {
    if let Some(e) = schema.get("enum").and_then(Value::as_array) {
        if !e.contains(v) {
            return Err(format!("{v} is not one of {e:?}"));
        }
    }
    let ty = schema.get("type").and_then(Value::as_str);
    let ok = match ty {
        Some("string") => v.is_string(),
        Some("integer") => v.is_i64() || v.is_u64(),
        Some("number") => v.is_number(),
        Some("boolean") => v.is_boolean(),
        Some("array") => v.is_array(),
        Some("object") => v.is_object(),
        _ => true,
    };
    if !ok {
        return Err(format!("{v} is not of type {ty:?}"));
    }
    if let (Some(o), Some(props)) = (
        v.as_object(),
        schema.get("properties").and_then(Value::as_object),
    ) {
        for r in schema
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
        {
            if !o.contains_key(r) {
                return Err(format!("required key {r:?} missing from {v}"));
            }
        }
        for (k, x) in o {
            let s = props
                .get(k)
                .ok_or_else(|| format!("undeclared key {k:?}"))?;
            holds_to(x, s).map_err(|e| format!("{k}: {e}"))?;
        }
    }
    if let (Some(items), Some(s)) = (v.as_array(), schema.get("items")) {
        for x in items {
            holds_to(x, s)?;
        }
    }
    Ok(())
}

/// The manifest's checks for one format; the problems found.
fn check_format(format: &Format, tools: &Tools, options: &Options) -> Vec<String> {
    let name = format.name();
    let mut problems = Vec::new();
    let m = match format.manifest(tools) {
        Ok(m) => m,
        Err(e) => return vec![format!("{name}: no manifest: {e}")],
    };
    if m.examples.len() != tools.len() {
        problems.push(format!("{name}: {} examples", m.examples.len()));
    }
    let style = match m.notation {
        Notation::Json => ["Parameters (JSON Schema):", "\"properties\"", "\"enum\""],
        Notation::Parameters => [
            "- stops (list of objects, required)",
            "  - each item: object",
            "- unit (string, required): one of \"celsius\", \"fahrenheit\".",
        ],
        Notation::Python => [
            "def plan_trip(traveller: dict, stops: list[dict]",
            "unit: Literal[\"celsius\", \"fahrenheit\"]",
            "days: int = None",
        ],
        other => panic!("a new notation: {other:?}"),
    };
    for s in style {
        if !m.text.contains(s) {
            problems.push(format!(
                "{name} ({:?}): no {s:?} in\n{}",
                m.notation, m.text
            ));
        }
    }
    for (tool, ex) in tools.iter().zip(&m.examples) {
        if !m.text.contains(&format!("## {}", tool.name))
            && !m.text.contains(&format!("def {}(", tool.name))
        {
            problems.push(format!("{name}: {} not described", tool.name));
        }
        if !m.text.contains(ex.as_str()) {
            problems.push(format!("{name}: example of {} not in the text", tool.name));
        }
        let events = events_everywhere(name, options, ex);
        // The parser's own schema check (on in `options`) finds nothing.
        for e in &events {
            if let Event::Diagnostic(d) = e {
                if d.kind.is_schema() {
                    problems.push(format!("{name}: example {ex:?}: {}", d.message));
                }
            }
        }
        let calls = calls_of(&events);
        match calls.as_slice() {
            [(n, args)] if *n == tool.name => {
                if let Err(e) = holds_to(args, &tool.parameters) {
                    problems.push(format!("{name}: example {ex:?} of {}: {e}", tool.name));
                }
            }
            _ => problems.push(format!(
                "{name}: example {ex:?} of {} reads back as {calls:?}",
                tool.name
            )),
        }
        if !text_of(&events).trim().is_empty() {
            problems.push(format!("{name}: example {ex:?} leaves text"));
        }
    }
    if let Some(s) = &m.several {
        if !m.text.contains(s.as_str()) {
            problems.push(format!("{name}: the two-call example is not in the text"));
        }
        let calls = calls_of(&events_everywhere(name, options, s));
        if calls.len() != 2 {
            problems.push(format!("{name}: two calls {s:?} read back as {calls:?}"));
        }
    } else if !m.text.contains("one call per turn") {
        problems.push(format!("{name}: one call a turn, not said"));
    }
    problems
}

#[test]
fn every_builtin_format_has_a_manifest_whose_examples_read_back() {
    let reg = Registry::builtin();
    let tools = tools();
    let options = seeded_options()
        .with_tools(tools.clone())
        .with_check_calls(Check::Report);
    let mut problems = Vec::new();
    for format in reg.formats() {
        problems.extend(check_format(format, &tools, &options));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn a_format_loaded_from_a_file_has_a_manifest() {
    let reg = Registry::builtin();
    for base in ["hermes", "qwen3-coder", "pythonic"] {
        let text = reg.get(base).expect("built-in").to_json().expect("writes");
        let mut v: Value = serde_json::from_str(&text).expect("JSON");
        let own = format!("my-{base}");
        v["name"] = Value::String(own.clone());
        let format = Format::from_json(&v.to_string()).expect("reads");
        let mut mine = Registry::builtin();
        mine.register(format.clone()).expect("registers");
        let tools = tools();
        let m = format.manifest(&tools).expect("a manifest");
        let builtin = reg
            .get(base)
            .expect("built-in")
            .manifest(&tools)
            .expect("a manifest");
        assert_eq!(m.notation, builtin.notation, "{base}");
        assert_eq!(m.examples, builtin.examples, "{base}");
        let g = mine.grammar(&own).expect("grammar");
        for (tool, ex) in tools.iter().zip(&m.examples) {
            let r = toolscan::parse(
                g.clone(),
                Options::default().with_tools(tools.clone()),
                ex.as_bytes(),
            );
            assert_eq!(r.tool_calls.len(), 1, "{own}: {ex:?}");
            assert_eq!(r.tool_calls[0].name, tool.name);
        }
    }
}

#[test]
fn notation_follows_the_program() {
    let reg = Registry::builtin();
    let of = |n: &str| Notation::of(reg.get(n).expect("built-in"));
    assert_eq!(of("hermes"), Some(Notation::Json));
    assert_eq!(of("mistral"), Some(Notation::Json));
    assert_eq!(of("qwen3-coder"), Some(Notation::Parameters));
    assert_eq!(of("minimax-m2"), Some(Notation::Parameters));
    assert_eq!(of("pythonic"), Some(Notation::Python));
    assert_eq!(of("functiongemma"), Some(Notation::Python));
}

#[test]
fn the_tools_placeholder_takes_the_manifest() {
    let tools = tools();
    let m = Registry::builtin()
        .get("qwen3-coder")
        .expect("built-in")
        .manifest(&tools)
        .expect("a manifest");
    let prompt = m.fill("You are a travel agent.\n\n{{tools}}\n\nAnswer in French.");
    assert_eq!(
        prompt,
        format!("You are a travel agent.\n\n{}\n\nAnswer in French.", m.text)
    );
    assert_eq!(
        m.fill("You are a travel agent."),
        format!("You are a travel agent.\n\n{}", m.text)
    );
}

/// The README shows, for one tool, the part of three formats' manifests
/// that describes it: each must be what the manifest holds.
#[test]
fn the_readme_shows_real_manifests() {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).expect("README");
    // The tools file the README's commands name, as shipped.
    let tools = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/data/tools.json"
    ))
    .expect("examples/data/tools.json");
    let tools = Tools::from_json_str(&tools).expect("tools");
    let reg = Registry::builtin();
    for format in ["hermes", "qwen3-coder", "pythonic"] {
        let m = reg
            .get(format)
            .expect("built-in")
            .manifest(&tools)
            .expect("a manifest");
        let shown = readme
            .split(&format!(
                "$ toolscan manifest --format {format} --tools examples/data/tools.json\n"
            ))
            .nth(1)
            .and_then(|rest| rest.split("\n\n").next())
            .unwrap_or_else(|| panic!("README shows no manifest of {format}"));
        let shown = shown.trim_end_matches("\n```");
        assert!(
            m.text.contains(&format!("{shown}\n")),
            "README's manifest of {format} is out of date; it is now:\n{}",
            m.text
        );
    }
}
