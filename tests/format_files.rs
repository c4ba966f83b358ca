//! Formats described in JSON (`examples/formats/*.json`): each file
//! describes a built-in format, compiles to the built-in's very openers,
//! and reads every corpus case of that format exactly as the built-in
//! does — the same events, under every standard chunking, through every
//! parser API. And descriptions with mistakes are refused, naming the
//! field.

use std::path::{Path, PathBuf};

use toolscan::{Error, Format, Parser, Registry};
use toolscan_testkit::chunk;
use toolscan_testkit::corpus::{check_expect, corpus_dir, load_corpus, options_for, Outcome};

fn examples() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/formats");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    files
}

/// The built-in format a file re-expresses: its stem.
fn builtin_of(file: &Path) -> String {
    file.file_stem()
        .expect("a file name")
        .to_string_lossy()
        .into_owned()
}

/// A format's openers, each with its whole program, as its program form
/// writes them.
/// The openers in the program form, without rendering hints (`{"render":
/// …}` steps read nothing and compile to nothing; the parts form of a
/// description has none, so a built-in's hints are not compared).
fn program_form(f: &Format) -> serde_json::Value {
    let text = f.to_json().unwrap_or_else(|e| panic!("{}: {e}", f.name()));
    let mut v: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    for o in v["openers"].as_array_mut().into_iter().flatten() {
        if let Some(steps) = o["program"].as_array_mut() {
            steps.retain(|s| s.get("render").is_none());
        }
    }
    v["openers"].clone()
}

#[test]
fn at_least_four_builtins_are_described() {
    let files = examples();
    assert!(files.len() >= 4, "{files:?}");
    for f in &files {
        let name = builtin_of(f);
        assert!(
            Registry::builtin().get(&name).is_some(),
            "{}: no built-in format `{name}`",
            f.display()
        );
    }
}

#[test]
fn each_description_compiles_to_its_builtins_openers() {
    for file in examples() {
        let builtin = builtin_of(&file);
        let mut reg = Registry::builtin();
        let described = reg
            .register_file(&file)
            .unwrap_or_else(|e| panic!("{e}"))
            .clone();
        assert_eq!(described.name(), format!("file-{builtin}"));
        let want = Registry::builtin()
            .get(&builtin)
            .cloned()
            .expect("built-in");
        assert_eq!(
            program_form(&described),
            program_form(&want),
            "{}: the programs differ",
            file.display()
        );
        assert_eq!(described.markers(), want.markers());
    }
}

#[test]
fn each_description_reads_its_corpus_cases_as_the_builtin_does() {
    let cases = load_corpus(&corpus_dir());
    for file in examples() {
        let builtin = builtin_of(&file);
        let mut reg = Registry::builtin();
        let name = reg
            .register_file(&file)
            .unwrap_or_else(|e| panic!("{e}"))
            .name()
            .to_owned();
        let described = reg.grammar(&name).expect("the described grammar");
        let original = Registry::builtin().grammar(&builtin).expect("built-in");
        let mine: Vec<_> = cases.iter().filter(|c| c.format == builtin).collect();
        assert!(mine.len() >= 4, "{builtin}: {} corpus cases", mine.len());
        for case in mine {
            let input = case.input.as_bytes();
            for plan in chunk::standard(input.len()) {
                let run = |g: &std::sync::Arc<toolscan::Grammar>| {
                    chunk::feed_every_api(
                        || Parser::new(g.clone(), options_for(case)),
                        input,
                        &plan,
                    )
                    .unwrap_or_else(|e| panic!("{} ({builtin}): {e}", case.id))
                };
                let got = run(&described);
                assert_eq!(
                    got,
                    run(&original),
                    "{} [{plan}]: {} reads it otherwise than {builtin}",
                    case.id,
                    file.display()
                );
                check_expect(&case.expect, &Outcome::from_events(&got))
                    .unwrap_or_else(|e| panic!("{} [{plan}]: {e}", case.id));
            }
        }
    }
}

#[test]
fn a_described_format_joins_auto() {
    let mut reg = Registry::builtin();
    reg.register_json(
        r#"{"name": "angle", "open": "<<call ", "name_at": {"until": ">>"},
            "arguments": {"json": "object"}, "close": "<</call>>"}"#,
    )
    .unwrap();
    let r = toolscan::parse(
        reg.grammar("auto").unwrap(),
        chunk::seeded_options(),
        b"a <<call f>>{\"x\": 1}<</call>> b",
    );
    assert_eq!(r.text, "a  b");
    assert_eq!(r.tool_calls[0].name, "f");
    assert_eq!(r.tool_calls[0].arguments.as_str(), r#"{"x": 1}"#);
}

/// A valid one-opener description with `field` replaced (or removed, for
/// `null`).
fn with(field: &str, value: serde_json::Value) -> String {
    let mut v = serde_json::json!({
        "name": "t",
        "open": "<c>",
        "name_at": {"until": ">"},
        "arguments": {"json": "object"},
        "close": "</c>"
    });
    let obj = v.as_object_mut().unwrap();
    if value.is_null() {
        obj.remove(field);
    } else {
        obj.insert(field.to_owned(), value);
    }
    v.to_string()
}

/// A one-opener description in the program form.
fn program(steps: serde_json::Value) -> String {
    serde_json::json!({"name": "t", "open": "<c>", "program": steps}).to_string()
}

#[test]
fn mistakes_name_the_field_and_why() {
    use serde_json::json;
    assert!(Format::from_json(&with("close", json!("</c>"))).is_ok());
    assert!(
        Format::from_json(&program(json!(["ws", {"json": "call"}, "dispatch", "end"]))).is_ok()
    );
    let params = |p: serde_json::Value| with("arguments", json!({ "params": p }));
    let table: Vec<(String, &str, &str)> = vec![
        ("{".into(), "", "not JSON"),
        ("[]".into(), "", "must be a JSON object"),
        (with("name", json!(null)), "/name", "missing"),
        (with("name", json!("auto")), "/name", "reserved"),
        (with("open", json!("")), "/open", "must be a non-empty string"),
        (with("open", json!(7)), "/open", "must be a non-empty string"),
        (with("opne", json!("x")), "/opne", "unknown key"),
        (with("trust", json!("maybe")), "/trust", "unknown value \"maybe\""),
        (with("line_start", json!("yes")), "/line_start", "true or false"),
        (with("name_at", json!(null)), "/name_at", "missing"),
        (with("name_at", json!({})), "/name_at", "`until`"),
        (with("name_at", json!({"until": ">", "before": " "})), "/name_at/before", "not both"),
        (with("name_at", json!({"before": "→"})), "/name_at/before", "ASCII"),
        (with("name_at", json!({"upto": ">"})), "/name_at/upto", "unknown key"),
        (with("arguments", json!(null)), "/arguments", "missing"),
        (with("arguments", json!("json")), "/arguments", "must be an object"),
        (with("arguments", json!({"xml2": {}})), "/arguments", "unknown encoding \"xml2\"; expected one of json, params"),
        (with("arguments", json!({"json": "array"})), "/arguments/json", "unknown JSON shape"),
        (with("arguments", json!({"json": "object", "name_keys": ["n"]})), "/arguments/name_keys", "unknown key"),
        (with("arguments", json!({"json": "call"})), "/name_at", "not allowed with a JSON call"),
        (params(json!({"open": "<p=", "key_end": ">", "close": "</p>"})), "/arguments/params/end", "missing"),
        (params(json!({"open": "<p=", "key_end": ">", "close": "", "end": "</f>"})), "/arguments/params/close", "non-empty"),
        (params(json!({"open": "<p=", "key_end": ">", "close": "</p>", "end": "</f>", "trim": "some"})), "/arguments/params/trim", "expected one of none, newline, all"),
        (with("separators", json!([])), "/separators", "non-empty array"),
        (with("terminators", json!([";", ""])), "/terminators/1", "non-empty string"),
        (with("trust", json!("bare")), "/trust", "`bare` needs JSON call arguments"),
        (
            json!({"name": "t", "open": "<c>", "between": ":", "arguments": {"json": "call"}}).to_string(),
            "/between",
            "`prefix`",
        ),
        (
            json!({"name": "t", "open": "[", "trust": "bare", "arguments": {"json": "call"}}).to_string(),
            "/open",
            "first byte of the JSON",
        ),
        (
            json!({"name": "t", "openers": [], "models": "m"}).to_string(),
            "/openers",
            "non-empty array",
        ),
        (
            json!({"name": "t", "open": "<c>", "openers": [{"open": "<d>", "arguments": {"json": "call"}}]}).to_string(),
            "/open",
            "belongs in each opener",
        ),
        (
            json!({"name": "t", "openers": [
                {"open": "<d>", "arguments": {"json": "call"}},
                {"open": "<e>", "arguments": {"json": "call"}, "clsoe": "</e>"}
            ]}).to_string(),
            "/openers/1/clsoe",
            "unknown key",
        ),
        // Markers that cannot share a grammar.
        (
            json!({"name": "t", "openers": [
                {"open": "<call>", "arguments": {"json": "call"}},
                {"open": "<call>x", "arguments": {"json": "call"}}
            ]}).to_string(),
            "/openers",
            "occurs inside",
        ),
        // The program form.
        (program(json!(["ws", "jump"])), "/program/1", "unknown step \"jump\""),
        (program(json!([{"litt": "x"}])), "/program/0", "unknown step kind \"litt\""),
        (program(json!([{"lit": "x", "goto": "y"}])), "/program/0/lit", "one kind"),
        (program(json!([{"lit": ""}])), "/program/0/lit", "must be a literal"),
        (program(json!([{"goto": "nowhere"}])), "/program", "undefined label `nowhere`"),
        (program(json!([{"label": "a"}, {"label": "a"}, "end"])), "/program", "defined twice"),
        (program(json!([{"capture": "name"}, "end"])), "/program/0", "needs `until`"),
        (program(json!([{"capture": "tool", "until": [">"]}, "end"])), "/program/0/capture", "unknown value"),
        (program(json!([{"fork": [{"on": "some", "goto": "a"}]}])), "/program/0/fork/0/on", "must be"),
        (program(json!([{"json": "call", "lenient": 1}])), "/program/0/lenient", "true or false"),
        (program(json!([{"value": {"special": "eol"}}])), "/program/0/value/special", "unknown value"),
        (program(json!([{"value": "</p>", "guard": ["a"]}])), "/program/0/guard", "must be [opening"),
        (program(json!([])), "/program", "non-empty array of steps"),
        (
            json!({"name": "t", "open": "<c>", "close": "</c>", "program": ["end"]}).to_string(),
            "/close",
            "not allowed beside `program`",
        ),
    ];
    for (text, pointer, why) in table {
        let e = Format::from_json(&text).expect_err(&text);
        assert_eq!(e.pointer(), pointer, "{text}: {e}");
        assert!(e.reason().contains(why), "{text}: {e}");
        let shown = e.to_string();
        assert!(shown.starts_with(pointer) && shown.contains(why), "{shown}");
    }
}

#[test]
fn registering_names_the_file_and_refuses_a_taken_name() {
    let mut reg = Registry::builtin();
    let e = reg
        .register_json(r#"{"name": "hermes", "open": "<x>", "arguments": {"json": "call"}}"#)
        .unwrap_err();
    match &e {
        Error::FormatFile(f) => assert_eq!(f.pointer(), "/name"),
        other => panic!("{other:?}"),
    }
    let dir = std::env::temp_dir().join(format!("toolscan-format-files-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.json");
    std::fs::write(&bad, with("close", serde_json::json!(""))).unwrap();
    let e = reg.register_file(&bad).unwrap_err().to_string();
    assert!(
        e.contains("bad.json: /close: must be a non-empty string"),
        "{e}"
    );
    let e = reg
        .register_file(dir.join("missing.json"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("missing.json: cannot read it"), "{e}");
    // Nothing was registered by the failures.
    assert_eq!(reg.formats().len(), Registry::builtin().formats().len());
}

#[test]
fn the_descriptions_in_the_documentation_are_valid() {
    let doc =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/format-files.md"))
            .expect("docs/format-files.md");
    let mut n = 0;
    for block in doc.split("```json\n").skip(1) {
        let json = block.split("```").next().expect("a closed block");
        let f = Format::from_json(json).unwrap_or_else(|e| panic!("{e}\n{json}"));
        // Each one registers beside the built-ins.
        Registry::builtin()
            .register(f)
            .unwrap_or_else(|e| panic!("{e}\n{json}"));
        n += 1;
    }
    assert!(n >= 4, "{n} examples");
}

#[test]
fn the_documented_first_example_reads_its_call() {
    let doc =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/format-files.md"))
            .expect("docs/format-files.md");
    let json = doc
        .split("```json\n")
        .nth(1)
        .and_then(|b| b.split("```").next())
        .expect("a first example");
    let mut reg = Registry::builtin();
    let name = reg.register_json(json).expect("valid").name().to_owned();
    let r = toolscan::parse(
        reg.grammar(&name).expect("grammar"),
        chunk::seeded_options(),
        b"Sure. <<call get_weather>>{\"city\": \"Paris\"}<</call>>\n",
    );
    assert_eq!(r.text, "Sure. \n");
    assert_eq!(r.tool_calls[0].name, "get_weather");
    assert_eq!(r.tool_calls[0].arguments.as_str(), r#"{"city": "Paris"}"#);
}

/// The documentation's example description named `name`.
fn documented(name: &str) -> String {
    let doc =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/format-files.md"))
            .expect("docs/format-files.md");
    doc.split("```json\n")
        .skip(1)
        .filter_map(|b| b.split("```").next())
        .find(|json| json.contains(&format!("\"name\": \"{name}\"")))
        .unwrap_or_else(|| panic!("no example named {name}"))
        .to_owned()
}

#[test]
fn the_documented_programs_read_what_the_page_says() {
    let mut reg = Registry::builtin();
    reg.register_json(&documented("calls")).expect("valid");
    reg.register_json(&documented("py-angle")).expect("valid");
    // A section that survives its bad call.
    let input = "<calls><call>a {oops}</call><call>b {}</call></calls>";
    let g = reg.grammar("calls").expect("grammar");
    let r = toolscan::parse(g.clone(), chunk::seeded_options(), input.as_bytes());
    assert_eq!(r.text, "<calls><call>a {oops}</call>");
    assert_eq!(r.diagnostics.len(), 1, "{:?}", r.diagnostics);
    assert_eq!(r.tool_calls.len(), 1);
    assert_eq!(r.tool_calls[0].name, "b");
    assert_eq!(r.tool_calls[0].arguments.as_str(), "{}");
    chunk::invariant(
        || Parser::new(g.clone(), chunk::seeded_options()),
        input.as_bytes(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    // Python keyword arguments, as JSON.
    let input = "<<get_weather(city='Paris', days=[1, 2])>>";
    let g = reg.grammar("py-angle").expect("grammar");
    let r = toolscan::parse(g.clone(), chunk::seeded_options(), input.as_bytes());
    assert_eq!(r.text, "");
    assert_eq!(r.tool_calls[0].name, "get_weather");
    assert_eq!(
        r.tool_calls[0].arguments.as_str(),
        r#"{"city":"Paris","days":[1,2]}"#
    );
    chunk::invariant(
        || Parser::new(g.clone(), chunk::seeded_options()),
        input.as_bytes(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn every_builtin_can_be_written_in_the_program_form_and_read_back() {
    for f in Registry::builtin().formats() {
        let text = f.to_json().unwrap_or_else(|e| panic!("{}: {e}", f.name()));
        // Under a new name, it registers beside the built-in.
        let mut v: serde_json::Value = serde_json::from_str(&text).expect("JSON");
        v["name"] = format!("copy-of-{}", f.name()).into();
        let mut reg = Registry::builtin();
        let copy = reg
            .register_json(&v.to_string())
            .unwrap_or_else(|e| panic!("{}: {e}", f.name()));
        assert_eq!(program_form(copy), program_form(f), "{}", f.name());
        assert_eq!(copy.description(), f.description());
        assert_eq!(Format::from_json(&text).expect("reads back"), *f);
    }
}

/// Every JSON pointer of `v` below the root.
fn pointers(v: &serde_json::Value, at: String, out: &mut Vec<String>) {
    let children: Vec<(String, &serde_json::Value)> = match v {
        serde_json::Value::Object(m) => m
            .iter()
            .map(|(k, v)| {
                (
                    format!("{at}/{}", k.replace('~', "~0").replace('/', "~1")),
                    v,
                )
            })
            .collect(),
        serde_json::Value::Array(a) => a
            .iter()
            .enumerate()
            .map(|(i, v)| (format!("{at}/{i}"), v))
            .collect(),
        _ => Vec::new(),
    };
    for (p, child) in children {
        out.push(p.clone());
        pointers(child, p, out);
    }
}

#[test]
fn a_wrong_value_anywhere_is_an_error_naming_that_field() {
    use serde_json::json;
    // Of another type than any field holds, or an empty literal, or a list
    // of non-strings.
    let wrong = [
        json!(null),
        json!(7),
        json!(""),
        json!([]),
        json!({}),
        json!([7]),
    ];
    let mut checked = 0;
    for file in examples() {
        let text = std::fs::read_to_string(&file).expect("readable");
        let v: serde_json::Value = serde_json::from_str(&text).expect("JSON");
        let mut all = Vec::new();
        pointers(&v, String::new(), &mut all);
        for p in &all {
            for w in &wrong {
                let mut m = v.clone();
                *m.pointer_mut(p).expect("a pointer of v") = w.clone();
                match Format::from_json(&m.to_string()) {
                    // Who writes a format, and what it looks like, may be
                    // any text.
                    Ok(_) => assert!(
                        ["/models", "/description"].contains(&p.as_str()) && *w == json!(""),
                        "{}: {p} = {w} was accepted",
                        file.display()
                    ),
                    Err(e) => assert!(
                        p.starts_with(e.pointer()) || e.pointer().starts_with(p.as_str()),
                        "{}: {p} = {w} gave an error about {}: {e}",
                        file.display(),
                        e.pointer()
                    ),
                }
                checked += 1;
            }
        }
    }
    assert!(checked > 1000, "{checked} mutations checked");
}

/// A description with `n` openers `<cK>NAME>{json}</c>`.
fn many_openers(n: usize) -> String {
    let openers: Vec<serde_json::Value> = (0..n)
        .map(|k| {
            serde_json::json!({
                "open": format!("<c{k}>"),
                "name_at": {"until": ">"},
                "arguments": {"json": "object"},
                "close": "</c>"
            })
        })
        .collect();
    serde_json::json!({"name": "many", "openers": openers}).to_string()
}

#[test]
fn loading_thousands_of_openers_is_not_quadratic() {
    // 4 000 openers took 15.8 s (release) when every marker was compared
    // with every other, and each opener built automata of its own; now
    // the clashes are found with one automaton over the markers.
    let f = Format::from_json(&many_openers(4000)).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(f.markers().len(), 4000);
    let mut reg = Registry::builtin();
    reg.register(f).expect("registers");
    let mut p = Parser::new(reg.grammar("many").expect("grammar"), Default::default());
    let mut ev = p.feed(b"x <c3999>get>{\"a\": 1}</c> <c0>f>{}</c>");
    ev.extend(p.finish());
    let names: Vec<&str> = ev
        .iter()
        .filter_map(|e| match e {
            toolscan::Event::ToolCallEnd { name, .. } => Some(name.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(names, ["get", "f"]);
}

/// A description with one opener per marker.
fn openers(markers: &[(&str, bool)]) -> String {
    let openers: Vec<serde_json::Value> = markers
        .iter()
        .map(|(open, ci)| {
            serde_json::json!({
                "open": open,
                "case_insensitive": ci,
                "name_at": {"until": ">"},
                "arguments": {"json": "object"}
            })
        })
        .collect();
    serde_json::json!({"name": "clash", "openers": openers}).to_string()
}

/// What the error of a marker inside another says after naming them.
const INSIDE: &str = ": the shorter is found first, so the longer would never open a block (a marker may hold another only at its end)";

#[test]
fn overlapping_markers_error_names_the_markers_as_written() {
    // `[TOOL_CALLS]` holds `TOOL_CALL`: the grammar cuts it to
    // `[TOOL_CALL` internally; the message names the markers the
    // description wrote.
    let e = Format::from_json(&openers(&[
        ("[TOOL_CALLS]", false),
        ("TOOL_CALL", false),
        ("l_c", true),
    ]))
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        format!("/openers: marker `l_c` occurs inside marker `[TOOL_CALLS]`{INSIDE}")
    );
    let e = Format::from_json(&openers(&[
        ("[TOOL_CALLS]", false),
        ("TOOL_CALL", false),
        ("[TOOL_CALL", false),
    ]))
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        format!("/openers: marker `[TOOL_CALL` occurs inside marker `[TOOL_CALLS]`{INSIDE}")
    );
    // Inner first, outer second, whatever the order of the openers.
    let e = Format::from_json(&openers(&[("x<A>y", true), ("<a>", false)])).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!("/openers: marker `<a>` occurs inside marker `x<A>y`{INSIDE}")
    );
    // A marker inside another that ignores no case is read by cutting the
    // outer one: no error.
    assert!(Format::from_json(&openers(&[("<a>", false), ("x<a>y", false)])).is_ok());
}

#[test]
fn a_key_given_twice_is_refused_naming_it() {
    let e = Format::from_json(
        r#"{"name": "a", "open": "<c>", "name": "b", "name_at": {"until": ">"}, "arguments": {"json": "object"}}"#,
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "/name: the key `name` is given twice in this object"
    );
    // Nested, in an array, and with a key that needs escaping.
    let e = Format::from_json(
        r#"{"name": "a", "openers": [{"open": "<c>", "name_at": {"until": ">"}, "arguments": {"json": "object", "json": "call"}}]}"#,
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "/openers/0/arguments/json: the key `json` is given twice in this object"
    );
    let e = Format::from_json(r#"{"name": "a", "x/y": 1, "x/y": 2}"#).unwrap_err();
    assert_eq!(
        e.to_string(),
        "/x~1y: the key `x/y` is given twice in this object"
    );
    // The same key in two objects is no duplicate.
    assert!(Format::from_json(
        r#"{"name": "a", "openers": [{"open": "<c>", "name_at": {"until": ">"}, "arguments": {"json": "object"}}, {"open": "<d>", "name_at": {"until": ">"}, "arguments": {"json": "object"}}]}"#
    )
    .is_ok());
}

#[test]
fn a_byte_order_mark_before_the_description_is_accepted() {
    let text = r#"{"name": "bom", "open": "<c>", "name_at": {"until": ">"}, "arguments": {"json": "object"}, "close": "</c>"}"#;
    let with_bom = format!("\u{FEFF}{text}");
    assert_eq!(
        Format::from_json(&with_bom).map(|f| f.markers()),
        Ok(vec!["<c>".to_string()])
    );
    // From a file, as editors on Windows save it.
    let dir = std::env::temp_dir().join(format!("toolscan-bom-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("bom.json");
    std::fs::write(&path, with_bom.as_bytes()).expect("write");
    let mut reg = Registry::builtin();
    assert_eq!(
        reg.register_file(&path)
            .map(|f| f.name().to_string())
            .ok()
            .as_deref(),
        Some("bom")
    );
    let _ = std::fs::remove_dir_all(&dir);
}
