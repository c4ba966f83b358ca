//! Lists of calls recover after a bad element (issue 15): the element is
//! text with one diagnostic, the calls before it stay dispatched, and the
//! element after it is read — in every format whose calls come as a list.
//!
//! What is text: the failed element with the separator before it (from the
//! end of the call before it; for a first element, from the block's start,
//! its marker included). The separator after it, and the list's end, go
//! with the next call.
//!
//! Every input runs whole, byte by byte and in random chunks through every
//! feeding API (`chunk::invariant`), which must agree and keep the event
//! contract (nothing lost, earliest dispatch).

use serde_json::{json, Value};
use toolscan::DiagnosticKind;
use toolscan_testkit::check::{calls_of as calls, text_of as text};
use toolscan_testkit::chunk;
use toolscan_testkit::expect::{call, expect, kinds, run};

const MALFORMED: &[DiagnosticKind] = &[DiagnosticKind::Malformed];

fn two_good() -> Vec<(String, Value)> {
    vec![
        call("get_time", json!({})),
        call("get_weather", json!({"city": "Paris"})),
    ]
}

/// `{"name", "arguments"}` lists: (formats, list opener, list closer).
const NAME_ARGS: &[(&[&str], &str, &str)] = &[
    (&["mistral", "auto"], "[TOOL_CALLS] [", "]"),
    (&["granite", "auto"], "<|tool_call|>[", "]"),
    (&["granite", "auto"], "<tool_call>[", "]"),
    (&["jamba", "auto"], "<tool_calls>[", "]</tool_calls>"),
    (&["nemotron", "auto"], "<TOOLCALL>[", "]</TOOLCALL>"),
    (&["phi4-mini", "auto"], "functools[", "]"),
    (&["xlam", "json"], "[", "]"),
    (&["json"], "{\"tool_calls\": [", "]}"),
];

/// A call object without a name between two good calls: the element is
/// text, the call after it is read.
#[test]
fn json_lists_read_the_call_after_one_without_a_name() {
    let bad = "{\"arguments\": {\"a\": 1}}";
    for (formats, open, close) in NAME_ARGS {
        let input = format!(
            "{open}{{\"name\": \"get_time\", \"arguments\": {{}}}}, {bad}, \
             {{\"name\": \"get_weather\", \"arguments\": {{\"city\": \"Paris\"}}}}{close}"
        );
        expect(formats, &input, &two_good(), &format!(", {bad}"), MALFORMED);
    }
}

/// An element that is no call object at all (a number, a string, a list).
#[test]
fn json_lists_read_the_call_after_an_element_that_is_not_an_object() {
    for bad in ["42", "\"get_time\"", "[1, {\"name\": \"x\"}]", "null"] {
        for (formats, open, close) in NAME_ARGS {
            let input = format!(
                "{open}{{\"name\": \"get_time\", \"arguments\": {{}}}}, {bad}, \
                 {{\"name\": \"get_weather\", \"arguments\": {{\"city\": \"Paris\"}}}}{close}"
            );
            expect(formats, &input, &two_good(), &format!(", {bad}"), MALFORMED);
        }
    }
}

/// Cohere's lists (`tool_name`, `parameters`): Command R's `Action:` fence
/// and Command R7B's `<|START_ACTION|>`.
#[test]
fn cohere_lists_read_the_call_after_one_without_a_name() {
    let bad = "{\"parameters\": {\"a\": 1}}";
    let good = "{\"tool_name\": \"get_time\", \"parameters\": {}}";
    let next = "{\"tool_name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\"}}";
    for (formats, open, close) in [
        (&["command-r", "auto"], "Action: ```json\n[\n", "\n]\n```"),
        (
            &["command-r7b", "auto"],
            "<|START_ACTION|>[\n",
            "\n]<|END_ACTION|>",
        ),
    ] {
        let input = format!("{open}{good},\n{bad},\n{next}{close}");
        expect(
            formats,
            &input,
            &two_good(),
            &format!(",\n{bad}"),
            MALFORMED,
        );
    }
}

/// Apertus' `{NAME: ARGUMENTS}` objects: an object with two names is text.
#[test]
fn apertus_reads_the_call_after_one_with_two_names() {
    let bad = "{\"a\": {}, \"b\": {}}";
    let input = format!(
        "<|tools_prefix|>[{{\"get_time\": {{}}}}, {bad}, \
         {{\"get_weather\": {{\"city\": \"Paris\"}}}}]<|tools_suffix|>"
    );
    expect(
        &["apertus", "auto"],
        &input,
        &two_good(),
        &format!(", {bad}"),
        MALFORMED,
    );
}

/// A bad first element of a definite list: the block's marker goes with
/// it, as text; the calls after it are read.
#[test]
fn a_bad_first_element_is_text_with_the_lists_marker() {
    let bad = "{\"arguments\": {\"a\": 1}}";
    let input = format!(
        "[TOOL_CALLS] [{bad}, {{\"name\": \"get_time\", \"arguments\": {{}}}}, \
         {{\"name\": \"get_weather\", \"arguments\": {{\"city\": \"Paris\"}}}}]"
    );
    expect(
        &["mistral", "auto"],
        &input,
        &two_good(),
        &format!("[TOOL_CALLS] [{bad}"),
        MALFORMED,
    );
}

/// A definite list whose every element is bad: each is reported once, the
/// whole block is text, and no second diagnostic says the list was empty.
#[test]
fn a_list_of_bad_elements_is_text_with_one_diagnostic_each() {
    let input = "<TOOLCALL>[{\"arguments\": {}}, 7]</TOOLCALL>";
    expect(
        &["nemotron", "auto"],
        input,
        &[],
        input,
        &[DiagnosticKind::Malformed, DiagnosticKind::Malformed],
    );
}

/// A bare `[` that was no call before its bad element stays silent prose:
/// nothing in it is reported, all of it is text.
#[test]
fn bare_brackets_in_prose_stay_silent() {
    for input in [
        "see [1, 2] and [{\"x\": 1}, {\"name\": \"get_time\", \"arguments\": {}}]",
        "[\"a\", {\"name\": \"get_time\"}]",
    ] {
        for format in ["json", "xlam"] {
            let ev = run(format, input);
            assert_eq!(calls(&ev), [], "{format}: {input:?}");
            assert_eq!(text(&ev), input, "{format}: {input:?}");
            assert_eq!(kinds(&ev), [], "{format}: {input:?}");
        }
    }
}

/// Earliest dispatch: the call before the bad element is dispatched in the
/// feed that brings its `}`, the one after it in the feed that brings its
/// own, whatever the bad element holds; the bad element is text in the
/// feed that ends it.
#[test]
fn calls_around_a_bad_element_are_dispatched_at_their_own_end() {
    let first = "[TOOL_CALLS] [{\"name\": \"get_time\", \"arguments\": {}}";
    let bad = ", {\"arguments\": {\"a\": \"}]\"}}";
    let last = ", {\"name\": \"get_date\", \"arguments\": {}}";
    let mut p = chunk::parser("mistral", chunk::seeded_options());
    let ev = p.feed(first.as_bytes());
    assert_eq!(calls(&ev), [call("get_time", json!({}))]);
    // The element is given back as soon as it ends.
    let ev = p.feed(bad.as_bytes());
    assert_eq!(calls(&ev), []);
    assert_eq!(text(&ev), bad);
    assert_eq!(kinds(&ev), MALFORMED);
    let ev = p.feed(last.as_bytes());
    assert_eq!(calls(&ev), [call("get_date", json!({}))]);
    let ev = [p.feed(b"]"), p.finish()].concat();
    assert_eq!(text(&ev), "");
}

/// Python lists: (formats, list opener, list closer).
const PY_LISTS: &[(&[&str], &str, &str)] = &[
    (
        &["pythonic", "auto"],
        "<|python_start|>[",
        "]<|python_end|>",
    ),
    (&["pythonic"], "[", "]"),
    (
        &["lfm2", "auto"],
        "<|tool_call_start|>[",
        "]<|tool_call_end|>",
    ),
];

/// `input` between two good Python calls, in every Python list.
fn py_between(bad: &str) {
    for (formats, open, close) in PY_LISTS {
        let input = format!("{open}get_time(), {bad}, get_weather(city='Paris'){close}");
        expect(formats, &input, &two_good(), &format!(", {bad}"), MALFORMED);
    }
}

/// A positional argument: the element is text, the call after it is read.
#[test]
fn python_lists_read_the_call_after_one_with_a_positional_argument() {
    py_between("lookup('x', n=1)");
    py_between("lookup(n=1, 2)");
}

/// A nested call, or a name that is no literal, as a value.
#[test]
fn python_lists_read_the_call_after_a_nested_call_or_a_bare_name() {
    py_between("lookup(q=find(a=1))");
    py_between("lookup(q=somewhere)");
}

/// Separators and brackets inside the bad element's strings and nested
/// brackets do not end it: it ends at the `,` at the list's own level.
#[test]
fn python_lists_skip_a_bad_element_by_its_brackets_and_strings() {
    py_between("lookup(1, q='a, b]', r=[1, (2, 3)], s={'k': \"x]\"})");
    py_between("lookup(q=bad, t='''it's, ]''', u=\"\\\", ]\")");
    py_between("lookup(q=r'\\', ]', 1)");
}

/// An element that is no call at all: a number, a string, a list.
#[test]
fn python_lists_read_the_call_after_an_element_that_is_not_a_call() {
    py_between("42");
    py_between("'get_time(), x'");
    py_between("[get_time(), 1]");
}

/// Arguments left open, then junk: the element runs to the `,` at the
/// list's level once its brackets close.
#[test]
fn python_lists_read_the_call_after_unclosed_arguments_and_junk() {
    py_between("lookup(a=1 junk)");
    py_between("lookup(a=1 (junk, []))");
}

/// A bracket that closes what is not open (the list's `]` while the
/// arguments are open) leaves the element's end unknown: the list ends
/// there with one diagnostic, the rest is text, and a later list is read
/// anew.
#[test]
fn python_lists_end_at_a_bracket_that_does_not_fit() {
    let input = "[get_time(), lookup(a='x'] Sorry. [get_weather(city='Paris')]";
    let ev = run("pythonic", input);
    assert_eq!(calls(&ev), two_good());
    assert_eq!(text(&ev), ", lookup(a='x'] Sorry. ");
    assert_eq!(kinds(&ev), MALFORMED);
}

/// Junk after a complete call: the call was dispatched at its `)`; the
/// junk up to the next `,` is text with a diagnostic, and the list reads
/// on.
#[test]
fn python_lists_read_on_after_junk_behind_a_call() {
    for (formats, open, close) in PY_LISTS {
        let input = format!("{open}get_time() junk [,], get_weather(city='Paris'){close}");
        expect(formats, &input, &two_good(), " junk [,]", MALFORMED);
    }
}

/// A bad first element of a definite Python list: text with the list's
/// marker; the calls after it are read.
#[test]
fn a_bad_first_python_element_is_text_with_the_lists_marker() {
    let input = "<|python_start|>[lookup(1), get_time(), get_weather(city='Paris')]<|python_end|>";
    expect(
        &["pythonic", "auto"],
        input,
        &two_good(),
        "<|python_start|>[lookup(1)",
        MALFORMED,
    );
}

/// A bare `[` that showed no call before its bad element stays silent
/// prose, whatever follows.
#[test]
fn bare_python_brackets_in_prose_stay_silent() {
    for input in [
        "see [1, 2] and [see (a)]",
        "[lookup(1), get_time()]",
        "[note, get_time()]",
    ] {
        let ev = run("pythonic", input);
        assert_eq!(calls(&ev), [], "{input:?}");
        assert_eq!(text(&ev), input, "{input:?}");
        assert_eq!(kinds(&ev), [], "{input:?}");
    }
}

/// Earliest dispatch in a Python list: the call before the bad element
/// is dispatched in the feed that brings its `)`, the one after in the
/// feed that brings its own; the bad element is text as it comes, and
/// the diagnostic comes with its failing byte.
#[test]
fn python_calls_around_a_bad_element_are_dispatched_at_their_own_end() {
    let mut p = chunk::parser("lfm2", chunk::seeded_options());
    let ev = p.feed(b"<|tool_call_start|>[get_time()");
    assert_eq!(calls(&ev), [call("get_time", json!({}))]);
    let ev = p.feed(b", lookup(1");
    assert_eq!(calls(&ev), []);
    assert_eq!(text(&ev), ", lookup(1");
    assert_eq!(kinds(&ev), MALFORMED);
    let ev = p.feed(b", q=')]')");
    assert_eq!(text(&ev), ", q=')]')");
    let ev = p.feed(b", get_date()");
    assert_eq!(calls(&ev), [call("get_date", json!({}))]);
    assert_eq!(text(&ev), "");
    let ev = [p.feed(b"]<|tool_call_end|>"), p.finish()].concat();
    assert_eq!(text(&ev), "");
    assert_eq!(kinds(&ev), []);
}

/// LFM2's list of JSON call objects: a bad object — a call that fails
/// (no name) or JSON that does not parse — is text up to the `,` at the
/// list's own level (its strings and brackets followed from the byte
/// that failed it), and the object after it is read.
#[test]
fn lfm2_json_object_lists_read_the_call_after_a_bad_object() {
    for bad in [
        "{\"name\": \"\", \"arguments\": {\"a\": 1}}",
        "{\"arguments\": {\"a\": 1}}",
        "{\"name\": \"x\" \"arguments\": {\"s\": \"], {\"}}",
        "{\"name\": \"x\", \"arguments\": {\"s\": \"a\" [1, {\"k\": \"]\"}]}}",
        "{\"name\": \"x\", \"arguments\": {\"s\": \"\\\"], \"} oops}",
    ] {
        let input = format!(
            "<|tool_call_start|>[{{\"name\": \"get_time\", \"arguments\": {{}}}}, {bad}, \
             {{\"name\": \"get_weather\", \"arguments\": {{\"city\": \"Paris\"}}}}]<|tool_call_end|>"
        );
        expect(
            &["lfm2", "auto"],
            &input,
            &two_good(),
            &format!(", {bad}"),
            MALFORMED,
        );
    }
}

/// Gemma 3's `tool_code` fence, one call a line: a bad call is text up to
/// its line's end (a newline inside its brackets or strings is its own),
/// and the next line is read.
#[test]
fn gemma_tool_code_reads_the_line_after_a_bad_call() {
    for bad in [
        "lookup('x', n=1)",
        "lookup(q='a\nb', 2)",
        "lookup(a=[1,\n2], b)",
        "42",
        "lookup",
        "see below:",
    ] {
        let input = format!("```tool_code\nget_time()\n{bad}\nget_weather(city='Paris')\n```");
        expect(
            &["gemma-tool-code"],
            &input,
            &two_good(),
            &format!("\n{bad}"),
            MALFORMED,
        );
    }
}

/// Hermes' code fence around wrapped calls: a wrapped call that fails is
/// text, the next one is read, and the fence's end still belongs to the
/// calls.
#[test]
fn hermes_fenced_calls_read_the_call_after_a_bad_one() {
    let bad = "<tool_call>{\"name\": \"\", \"arguments\": {}}</tool_call>";
    let input = format!(
        "```\n<tool_call>{{\"name\": \"get_time\", \"arguments\": {{}}}}</tool_call>\n{bad}\n\
         <tool_call>{{\"name\": \"get_weather\", \"arguments\": {{\"city\": \"Paris\"}}}}</tool_call>\n```"
    );
    expect(
        &["hermes", "auto"],
        &input,
        &two_good(),
        &format!("\n{bad}\n"),
        MALFORMED,
    );
}

/// Llama 3's `;`-separated calls are calls of their own: a bad one (no
/// name; JSON that does not parse) is text, and the call after it is
/// read.
#[test]
fn llama3_json_chains_read_the_call_after_a_bad_one() {
    for bad in [
        "{\"name\": \"\", \"parameters\": {}}",
        "{\"name\": \"x\" \"parameters\": {}}",
    ] {
        for open in ["", "<|python_tag|>"] {
            let input = format!(
                "{open}{{\"name\": \"get_time\", \"parameters\": {{}}}}; {bad}; \
                 {{\"name\": \"get_weather\", \"parameters\": {{\"city\": \"Paris\"}}}}"
            );
            expect(
                &["llama3-json"],
                &input,
                &two_good(),
                &format!("; {bad}; "),
                MALFORMED,
            );
        }
    }
}
