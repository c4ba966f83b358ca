//! What formats' calls hold and how their markup reads, one test per
//! behaviour: Qwen3-Coder calls that miss `</function>` or `<tool_call>`,
//! Cohere's response framing, JSON literals in LFM2's Python calls, `null`
//! in raw parameter values, and names no tool can have.
//!
//! Every input runs under every chunking of the test kit
//! (`chunk::events_everywhere`: whole, fixed sizes 1–16, seeded random
//! sizes, each through every feeding API, which must agree and keep the
//! event contract, with the same coalesced events for every chunking; the
//! one-shot `parse` must give what the events collect to).

use serde_json::{json, Value};
use toolscan::{DiagnosticKind, Event, Options, Tools};
use toolscan_testkit::check::{calls_of, diagnostics_of, text_of};
use toolscan_testkit::chunk;

fn run(format: &str, input: &str) -> Vec<Event> {
    chunk::events_everywhere(format, &chunk::seeded_options(), input)
}

fn run_with(format: &str, opts: &Options, input: &str) -> Vec<Event> {
    chunk::events_everywhere(format, opts, input)
}

fn call(name: &str, args: Value) -> (String, Value) {
    (name.to_string(), args)
}

fn kinds(events: &[Event]) -> Vec<DiagnosticKind> {
    diagnostics_of(events).into_iter().map(|(k, _)| k).collect()
}

/// Options with one tool `name` whose parameters have these schemas.
fn with_tool(name: &str, properties: Value) -> Options {
    let tools = json!([{"type": "function", "function": {"name": name,
        "parameters": {"type": "object", "properties": properties}}}]);
    chunk::seeded_options().with_tools(Tools::from_json(&tools).expect("tools"))
}

// ------------------------------------------------- Qwen3-Coder's call markup

/// The Qwen3-Coder template's call, `</function>` dropped: every value is
/// closed and `</tool_call>` ends the call.
#[test]
fn qwen3_coder_call_without_function_closer_ends_at_tool_call() {
    let input = "Let me look.\n<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n\
                 </parameter>\n<parameter=days>\n3\n</parameter>\n</tool_call>\nDone.";
    for format in ["qwen3-coder", "auto"] {
        let events = run(format, input);
        assert_eq!(
            calls_of(&events),
            [call("get_weather", json!({"city": "Paris", "days": 3}))],
            "{format}"
        );
        assert_eq!(text_of(&events), "Let me look.\n\nDone.", "{format}");
        assert_eq!(kinds(&events), [], "{format}");
    }
    // The same in Seed-OSS, whose body is Qwen's.
    let events = run(
        "seed-oss",
        "<seed:tool_call><function=f><parameter=a>1</parameter></seed:tool_call>",
    );
    assert_eq!(calls_of(&events), [call("f", json!({"a": 1}))]);
}

/// Qwen3-Coder models sometimes drop the opening `<tool_call>`:
/// `<function=Read>…</function></tool_call>` is the call, the stray
/// closer belongs to it, and so is a call with no `</tool_call>` at all.
#[test]
fn qwen3_coder_call_without_tool_call_opener_is_read() {
    let body = "<function=Read>\n<parameter=path>\n/src/main.rs\n</parameter>\n</function>";
    for format in ["qwen3-coder", "auto"] {
        for (input, text) in [
            (
                format!("I will read it.\n{body}\n</tool_call>"),
                "I will read it.\n",
            ),
            (
                format!("I will read it.\n{body}\nThen more."),
                "I will read it.\n\nThen more.",
            ),
            (
                format!(
                    "{body}\n<function=Read>\n<parameter=path>\nb.rs\n</parameter>\n</function>"
                ),
                "\n",
            ),
        ] {
            let events = run(format, &input);
            let calls = calls_of(&events);
            assert_eq!(
                calls[0],
                call("Read", json!({"path": "/src/main.rs"})),
                "{format}"
            );
            assert_eq!(text_of(&events), text, "{format}: {input:?}");
            assert_eq!(kinds(&events), [], "{format}");
        }
    }
    // A missing `</parameter>` is recovered at `</function>` as in the
    // wrapped form.
    let events = run(
        "qwen3-coder",
        "<function=f>\n<parameter=a>\nx\n</function>\n</tool_call>",
    );
    assert_eq!(calls_of(&events), [call("f", json!({"a": "x"}))]);
    assert_eq!(kinds(&events), [DiagnosticKind::Unclosed]);
}

/// `auto` reads `<function=NAME>` followed by a JSON object (Functionary
/// v3.1, Hermes' tolerated variant) and by Qwen's parameters alike: the
/// name is read once, then the byte after it decides.
#[test]
fn auto_reads_function_tag_with_json_or_parameters() {
    let input = "<function=a>{\"x\": 1}</function>\n\
                 <function=b>\n<parameter=y>\n2\n</parameter>\n</function>";
    let events = run("auto", input);
    assert_eq!(
        calls_of(&events),
        [call("a", json!({"x": 1})), call("b", json!({"y": 2}))]
    );
    assert_eq!(text_of(&events), "\n");
    // Neither: the block is text, with a diagnostic.
    let events = run("auto", "<function=a>not a call</function>");
    assert_eq!(calls_of(&events), []);
    assert_eq!(text_of(&events), "<function=a>not a call</function>");
    assert_eq!(kinds(&events), [DiagnosticKind::Malformed]);
}

// ------------------------------------------------- Cohere's response frame

/// Command R7B's template ends a turn without calls as
/// `<|START_RESPONSE|>…<|END_RESPONSE|>` (Command A's newer ones write
/// `<|START_TEXT|>…<|END_TEXT|>`): the frame is markup, dropped like other
/// formats' framing; the content is the text.
#[test]
fn command_r7b_response_frame_is_dropped_and_its_content_is_text() {
    for format in ["command-r7b", "auto"] {
        for (open, close) in [
            ("<|START_RESPONSE|>", "<|END_RESPONSE|>"),
            ("<|START_TEXT|>", "<|END_TEXT|>"),
        ] {
            let input = format!("{open}It is 21 °C in Paris.{close}");
            let events = run(format, &input);
            assert_eq!(text_of(&events), "It is 21 °C in Paris.", "{format}");
            assert_eq!(kinds(&events), [], "{format}");
        }
        // After a turn's calls, as the template's tool loop writes them.
        let input = "<|START_THINKING|>I will check the weather.<|END_THINKING|>\
                     <|START_ACTION|>[\n    {\"tool_call_id\": \"0\", \"tool_name\": \"get_weather\", \
                     \"parameters\": {\"city\": \"Paris\"}}\n]<|END_ACTION|>\
                     <|START_RESPONSE|>Sunny.<|END_RESPONSE|>";
        let events = run(format, input);
        assert_eq!(
            calls_of(&events),
            [call("get_weather", json!({"city": "Paris"}))],
            "{format}"
        );
        assert_eq!(
            text_of(&events),
            "<|START_THINKING|>I will check the weather.<|END_THINKING|>Sunny.",
            "{format}"
        );
    }
}

// ------------------------------------------------ LFM2's JSON literals

/// LFM2 writes JSON's `true`, `false` and `null` in its Python calls; they
/// are literals, as Python's are, and the calls after them in the list
/// are read too.
#[test]
fn lfm2_python_calls_accept_json_literals() {
    let input = "<|tool_call_start|>[search(query=\"café\", exact=true, page=null), \
                 set_flag(on=false), get_weather(city=\"Zürich\", metric=True, unit=None)]\
                 <|tool_call_end|>Checking.";
    let events = run("lfm2", input);
    assert_eq!(
        calls_of(&events),
        [
            call(
                "search",
                json!({"query": "café", "exact": true, "page": null})
            ),
            call("set_flag", json!({"on": false})),
            call(
                "get_weather",
                json!({"city": "Zürich", "metric": true, "unit": null})
            ),
        ]
    );
    assert_eq!(text_of(&events), "Checking.");
    assert_eq!(kinds(&events), []);
}

// ------------------------------------------------ `null` in raw values

/// Newer Qwen templates write a `None` value as `null`, and strings
/// verbatim, so `null` can only mean null: it is JSON null whatever the
/// schema declares, a string included. Text that merely begins like it is
/// the string, streamed as usual.
#[test]
fn qwen3_coder_null_text_is_json_null_whatever_the_type() {
    let opts = with_tool(
        "note",
        json!({"title": {"type": "string"}, "body": {"type": "string"},
               "tag": {"type": "string"}, "days": {"type": "integer"},
               "meta": {}}),
    );
    let param = |k: &str, v: &str| format!("<parameter={k}>\n{v}\n</parameter>\n");
    let input = format!(
        "<tool_call>\n<function=note>\n{}{}{}{}{}</function>\n</tool_call>",
        param("title", "null"),
        param("body", "nullable"),
        param("tag", "nul"),
        param("days", "null"),
        param("meta", "null"),
    );
    for format in ["qwen3-coder", "auto"] {
        let events = run_with(format, &opts, &input);
        assert_eq!(
            calls_of(&events),
            [call(
                "note",
                json!({"title": null, "body": "nullable", "tag": "nul", "days": null, "meta": null})
            )],
            "{format}"
        );
        assert_eq!(kinds(&events), [], "{format}");
    }
    // Seed-OSS reads values as Qwen does; the bare `<function=` form too.
    let events = run_with(
        "seed-oss",
        &opts,
        "<seed:tool_call><function=note><parameter=title>null</parameter></function></seed:tool_call>",
    );
    assert_eq!(calls_of(&events), [call("note", json!({"title": null}))]);
    let events = run_with(
        "qwen3-coder",
        &opts,
        "<function=note>\n<parameter=title>\nnull\n</parameter>\n</function>",
    );
    assert_eq!(calls_of(&events), [call("note", json!({"title": null}))]);
    // GLM writes every non-string value as JSON: there a string stays one.
    let events = run_with(
        "glm47",
        &opts,
        "<tool_call>note<arg_key>title</arg_key><arg_value>null</arg_value></tool_call>",
    );
    assert_eq!(calls_of(&events), [call("note", json!({"title": "null"}))]);
}

// ------------------------------------------------ names no tool can have

/// Anthropic's prompt shows the call syntax with placeholders; a model (or
/// a document) that quotes it in a code fence makes no call: a name that
/// holds `$`, whitespace, quotes or brackets is no tool's, in any format.
/// The block is text, with a diagnostic.
#[test]
fn names_no_tool_can_have_are_text_with_a_diagnostic() {
    let example = "The syntax is:\n```\n<function_calls>\n<invoke name=\"$FUNCTION_NAME\">\n\
                   <parameter name=\"$PARAMETER_NAME\">$PARAMETER_VALUE</parameter>\n\
                   </invoke>\n</function_calls>\n```\nThat is all.";
    for format in ["claude-xml", "auto"] {
        let events = run(format, example);
        assert_eq!(calls_of(&events), [], "{format}");
        assert_eq!(text_of(&events), example, "{format}");
        assert_eq!(kinds(&events), [DiagnosticKind::Malformed], "{format}");
    }
    for (format, input) in [
        (
            "hermes",
            "<tool_call>{\"name\": \"$TOOL\", \"arguments\": {}}</tool_call>",
        ),
        (
            "hermes",
            "<tool_call>{\"name\": \"get weather\", \"arguments\": {}}</tool_call>",
        ),
        (
            "hermes",
            "<tool_call>{\"name\": \"get\\\"weather\", \"arguments\": {}}</tool_call>",
        ),
        (
            "qwen3-coder",
            "<tool_call>\n<function=$NAME>\n</function>\n</tool_call>",
        ),
        (
            "qwen3-coder",
            "<tool_call>\n<function=get weather>\n</function>\n</tool_call>",
        ),
        (
            "glm47",
            "<tool_call>f[0]<arg_key>a</arg_key><arg_value>1</arg_value></tool_call>",
        ),
        (
            "minimax-m2",
            "<minimax:tool_call><invoke name=\"'f'\"></invoke></minimax:tool_call>",
        ),
        ("mistral-v11", "[TOOL_CALLS]${name}[ARGS]{}"),
    ] {
        let events = run(format, input);
        assert_eq!(calls_of(&events), [], "{format}: {input}");
        assert_eq!(text_of(&events), input, "{format}");
        assert_eq!(
            kinds(&events),
            [DiagnosticKind::Malformed],
            "{format}: {input}"
        );
    }
}

/// A parameter's name that markup cuts into (GLM's `<arg_key>x>y`) fails
/// the call, and the diagnostic says it is the parameter's name, not the
/// tool's.
#[test]
fn bad_parameter_name_is_reported_as_a_parameter_name() {
    let input = "<tool_call>f<arg_key>x>y</arg_key><arg_value>1</arg_value></tool_call>";
    let events = run("glm47", input);
    assert_eq!(calls_of(&events), []);
    assert_eq!(text_of(&events), input);
    let messages: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            Event::Diagnostic(d) => Some(d.message.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(messages.len(), 1, "{messages:?}");
    assert!(
        messages[0].contains("parameter name") && !messages[0].contains("tool name"),
        "{messages:?}"
    );
    // A `$` is no markup in a parameter's name.
    let events = run(
        "glm47",
        "<tool_call>f<arg_key>$ref</arg_key><arg_value>1</arg_value></tool_call>",
    );
    assert_eq!(calls_of(&events), [call("f", json!({"$ref": 1}))]);
}
