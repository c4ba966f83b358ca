//! Issue 29's items 10 and 14: a call's tool found when the model spells
//! its name without (or with) the namespace the request declares it in;
//! a group of calls whose closing marker survives a failed element;
//! format files with markers and programs that cannot be compiled. Each
//! test is named after what it protects.

use toolscan::{DiagnosticKind, Event, Options, Tools};
use toolscan_testkit::check::{calls_of, diagnostics_of, names_of, nothing_lost, text_of};
use toolscan_testkit::chunk::{self, seeded_options};

/// Runs `input` under `format` with `options`, every chunking and API, and
/// returns the coalesced events.
fn run(format: &str, options: &Options, input: &str) -> Vec<Event> {
    chunk::events_everywhere(format, options, input)
}

// ---------------------------------------------------------------------------
// Item 10: a call's tool, by the exact name, else by the name without its
// namespace prefix.

/// The request's tools as the fleet's clients declare them: qualified.
fn qualified_tools() -> Tools {
    Tools::from_json_str(
        r#"[{"type": "function", "function": {"name": "functions.exec", "parameters": {
            "type": "object", "required": ["pid"],
            "properties": {"pid": {"type": "string"}, "signal": {"type": "integer"}}}}}]"#,
    )
    .expect("tools")
}

/// A Qwen3-Coder call as its template writes one (`Qwen3-Coder.jinja`:
/// `<tool_call>\n<function=NAME>\n<parameter=KEY>\nVALUE\n</parameter>\n`).
fn qwen_call(name: &str) -> String {
    format!(
        "Stopping it.\n<tool_call>\n<function={name}>\n<parameter=pid>\n99797\n</parameter>\n\
         <parameter=signal>\n9\n</parameter>\n</function>\n</tool_call>"
    )
}

/// A model names the tool bare (`exec`) while the request declares it
/// `functions.exec`: its values are typed by that tool's schema (the
/// declared string `99797` stays a string), and, the option off, the call
/// keeps the name the model wrote.
#[test]
fn a_bare_name_finds_the_tool_declared_with_a_namespace() {
    let options = seeded_options().with_tools(qualified_tools());
    let input = qwen_call("exec");
    let events = run("qwen3-coder", &options, &input);
    assert_eq!(
        calls_of(&events),
        [(
            "exec".to_owned(),
            serde_json::json!({"pid": "99797", "signal": 9})
        )]
    );
    assert!(
        !diagnostics_of(&events)
            .iter()
            .any(|(k, _)| *k == DiagnosticKind::UnknownTool),
        "{events:?}"
    );
    // The exact arguments text: a string, not the integer 99797.
    let args = events.iter().find_map(|e| match e {
        Event::ToolCallEnd { arguments, .. } => Some(arguments.as_str().to_owned()),
        _ => None,
    });
    assert_eq!(args.as_deref(), Some(r#"{"pid":"99797","signal":9}"#));
}

/// With the option on, the call takes the declared name, in its start as
/// in its end (clients dispatch by their own names).
#[test]
fn normalising_gives_the_call_the_declared_name() {
    let options = seeded_options()
        .with_tools(qualified_tools())
        .with_normalize_tool_names(true);
    let events = run("qwen3-coder", &options, &qwen_call("exec"));
    assert_eq!(names_of(&events), ["functions.exec"]);
    let started: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            Event::ToolCallStart { name, .. } => Some(name.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(started, ["functions.exec"]);
}

/// The reverse: the model qualifies a name the request declares bare
/// (`default_api.` is what Gemini-trained models write); checked against
/// the schema, the call fits.
#[test]
fn a_qualified_name_finds_the_tool_declared_bare() {
    let tools = Tools::from_json_str(
        r#"[{"name": "exec", "parameters": {"type": "object", "required": ["pid"],
            "properties": {"pid": {"type": "string"}, "signal": {"type": "integer"}}}}]"#,
    )
    .expect("tools");
    let options = seeded_options()
        .with_tools(tools.clone())
        .with_check_calls(toolscan::Check::Reject);
    let events = run("qwen3-coder", &options, &qwen_call("default_api.exec"));
    assert_eq!(
        calls_of(&events),
        [(
            "default_api.exec".to_owned(),
            serde_json::json!({"pid": "99797", "signal": 9})
        )]
    );
    assert!(diagnostics_of(&events).is_empty(), "{events:?}");
    let options = options.with_normalize_tool_names(true);
    assert_eq!(
        names_of(&run(
            "qwen3-coder",
            &options,
            &qwen_call("default_api.exec")
        )),
        ["exec"]
    );
}

/// Two tools that differ only in their namespace: a bare name matches
/// neither (it is an unknown tool, its values typed by their shape), and
/// each qualified name its own.
#[test]
fn a_bare_name_two_tools_share_matches_neither() {
    let tools = Tools::from_json_str(
        r#"[{"name": "shell.exec", "parameters": {"type": "object",
              "properties": {"pid": {"type": "string"}}}},
            {"name": "docker.exec", "parameters": {"type": "object",
              "properties": {"pid": {"type": "string"}}}}]"#,
    )
    .expect("tools");
    let options = seeded_options()
        .with_tools(tools)
        .with_normalize_tool_names(true);
    let events = run("qwen3-coder", &options, &qwen_call("exec"));
    assert_eq!(
        calls_of(&events),
        [(
            "exec".to_owned(),
            serde_json::json!({"pid": 99797, "signal": 9})
        )]
    );
    assert!(diagnostics_of(&events)
        .iter()
        .any(|(k, _)| *k == DiagnosticKind::UnknownTool));
    let events = run("qwen3-coder", &options, &qwen_call("docker.exec"));
    assert_eq!(
        calls_of(&events),
        [(
            "docker.exec".to_owned(),
            serde_json::json!({"pid": "99797", "signal": 9})
        )]
    );
}

/// Where only known tools make a call (a bare JSON object under `json`),
/// a bare name of a qualified tool is a call; a named `tool_choice` naming
/// the declared tool lets it through.
#[test]
fn a_bare_name_is_a_known_tool_for_tentative_blocks_and_tool_choice() {
    let options = seeded_options()
        .with_tools(qualified_tools())
        .with_only_tool("functions.exec");
    let input = r#"Sure. {"name": "exec", "arguments": {"pid": "1"}}"#;
    let events = run("json", &options, input);
    assert_eq!(
        calls_of(&events),
        [("exec".to_owned(), serde_json::json!({"pid": "1"}))]
    );
}
