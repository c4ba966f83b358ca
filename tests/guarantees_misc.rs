//! Issue 29's items 10 and 14: a call's tool found when the model spells
//! its name without (or with) the namespace the request declares it in;
//! a group of calls whose closing marker survives a failed element;
//! format files with markers and programs that cannot be compiled. Each
//! test is named after what it protects.

use toolscan::{DiagnosticKind, Event, Options, Registry, Tools};
use toolscan_testkit::check::{calls_of, diagnostics_of, names_of, text_of};
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

// ---------------------------------------------------------------------------
// Item 14: a history call whose value holds its format's closing tag.

/// A call whose string value quotes the format's own closing tag (a model
/// that edits its own chat template, a shell command that greps for it)
/// is written so that the format reads it back: the emulating proxy
/// renders every earlier call of a conversation, and a refusal made every
/// later turn of it a 400. (`Qwen3-Coder.jinja` writes a value raw between
/// `<parameter=KEY>\n` and `\n</parameter>`; `tool_chat_template_glm4.jinja`
/// between `<arg_value>` and `</arg_value>`.)
///
/// Today `render/walk.rs` (`write_value`) refuses such a value before any
/// read-back, and the readers end the value at the quoted tag; item 6
/// (values that quote their own closing tag, read where the format's
/// structure follows) makes the read-back hold, after which that early
/// refusal has to give way to the read-back.
#[test]
fn a_value_quoting_its_formats_closing_tag_is_written_so_that_it_reads_back() {
    let registry = Registry::builtin();
    for (format, value) in [
        ("qwen3-coder", "grep -n '</parameter>' template.jinja"),
        ("glm45", "grep -n '</arg_value>' template.jinja"),
    ] {
        let f = registry.get(format).expect("built-in");
        let call = toolscan::render::Call::from_value("run", &serde_json::json!({"cmd": value}))
            .expect("an object");
        let written = f
            .render("", std::slice::from_ref(&call), None)
            .unwrap_or_else(|e| panic!("{format}: {e}"));
        let events = run(format, &seeded_options(), &written);
        assert_eq!(
            calls_of(&events),
            [("run".to_owned(), serde_json::json!({"cmd": value}))],
            "{format}: {written}"
        );
    }
}

// ---------------------------------------------------------------------------
// Item 14: format files whose markers or programs cannot be used say so
// about their own marker, in a line, and cost little.

/// A format file's marker `<` begins every built-in marker that begins
/// with `<`: under `auto` the error names it and its format, and why, not
/// two built-in markers it has nothing to do with.
#[test]
fn a_short_marker_under_auto_is_named_with_its_format() {
    let mut registry = Registry::builtin();
    registry
        .register_json(
            r#"{"name": "mine", "openers": [{"open": "<", "program": [{"json": "call"}, "dispatch", "end"]}]}"#,
        )
        .expect("the format alone compiles");
    let e = registry
        .grammar("auto")
        .expect_err("`<` hides other markers");
    let m = e.to_string();
    assert!(
        m.contains("marker `<` (format `mine`) occurs inside marker `<"),
        "{m}"
    );
    assert!(m.contains("would never open a block"), "{m}");
}

/// An over-long marker's error shows its first characters, not the whole
/// marker (a 5 MB marker made a 5 MB message).
#[test]
fn an_over_long_markers_error_is_one_short_line() {
    let marker = format!("<{}>", "x".repeat(5 << 20));
    let text = serde_json::json!({"name": "long", "openers": [
        {"open": marker, "program": [{"json": "call"}, "dispatch", "end"]}]})
    .to_string();
    let e = toolscan::Format::from_json(&text).expect_err("longer than 256 bytes");
    let m = e.to_string();
    assert!(
        m.len() < 300,
        "{} bytes: {}",
        m.len(),
        &m[..300.min(m.len())]
    );
    assert!(m.contains("is longer than 256 bytes"), "{m}");
    assert!(m.contains(&format!("({} bytes)", marker.len())), "{m}");
}

/// A program of a million steps is refused by the bound on steps, at its
/// field, before anything is compiled (it took 1.2 GB to load).
#[test]
fn a_program_of_a_million_steps_is_refused() {
    let mut steps = vec![serde_json::json!("ws"); 1_000_000];
    steps.extend([
        serde_json::json!({"json": "call"}),
        serde_json::json!("dispatch"),
    ]);
    let text =
        serde_json::json!({"name": "many", "openers": [{"open": "<many>", "program": steps}]})
            .to_string();
    let e = toolscan::Format::from_json(&text).expect_err("too many steps");
    let m = e.to_string();
    assert!(
        m.starts_with("/openers/0/program: has 1000002 steps, more than the 10000"),
        "{m}"
    );
    // At the bound, a program is read.
    let mut steps = vec![serde_json::json!("ws"); toolscan::format_file::MAX_STEPS - 2];
    steps.extend([
        serde_json::json!({"json": "call"}),
        serde_json::json!("dispatch"),
    ]);
    let text =
        serde_json::json!({"name": "many", "openers": [{"open": "<many>", "program": steps}]})
            .to_string();
    toolscan::Format::from_json(&text).expect("10 000 steps are read");
}

// ---------------------------------------------------------------------------
// Item 14: a group of calls whose last element failed keeps its closing
// marker as text.

/// After a failed element, the group's closing marker comes back as text:
/// dropped, it glued the failed element's text to the text after the
/// group. Written from the formats' own templates: Mistral's
/// `[TOOL_CALLS][…]` list (`tool_chat_template_mistral.jinja`), DeepSeek
/// V3's section (`tool_chat_template_deepseekv3.jinja`), the Claude-style
/// `<function_calls>` wrapper of invokes. A group whose last call went
/// through still owns its closer.
#[test]
fn a_groups_closing_marker_after_a_failed_element_is_text() {
    let cases: [(&str, &str, &str); 3] = [
        (
            "mistral",
            r#"[TOOL_CALLS][{"name": "a", "arguments": {}}, 5] after"#,
            ", 5] after",
        ),
        (
            "deepseek-v3",
            "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>a\n```json\n{}\n```<｜tool▁call▁end｜>\
             <｜tool▁call▁begin｜>function<｜tool▁sep｜>b\n```json\n{oops}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜> after",
            "<｜tool▁call▁begin｜>function<｜tool▁sep｜>b\n```json\n{oops}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜> after",
        ),
        (
            "claude-xml",
            "<function_calls>\n<invoke name=\"a\">\n<parameter name=\"x\">1</parameter>\n</invoke>\n\
             <invoke name=\"b c\">\n</invoke>\n</function_calls> after",
            "\n<invoke name=\"b c\">\n</invoke>\n</function_calls> after",
        ),
    ];
    for (format, input, text) in cases {
        let events = run(format, &seeded_options(), input);
        assert_eq!(calls_of(&events).len(), 1, "{format}: {events:?}");
        assert_eq!(text_of(&events), text, "{format}");
        assert!(
            diagnostics_of(&events)
                .iter()
                .any(|(k, _)| *k == DiagnosticKind::Malformed),
            "{format}: {events:?}"
        );
    }
    // The last call went through: the closer is the calls'.
    let input = r#"[TOOL_CALLS][5, {"name": "a", "arguments": {}}] after"#;
    let events = run("mistral", &seeded_options(), input);
    assert_eq!(calls_of(&events).len(), 1, "{events:?}");
    // (A failed first element is text from the block's start.)
    assert_eq!(text_of(&events), "[TOOL_CALLS][5 after");
}
