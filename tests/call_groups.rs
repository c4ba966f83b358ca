//! Blocks that group several calls, and the headers and sections around
//! them (issue 15): a bad call in a group is text with a diagnostic and the
//! next call is still read, in every format that groups calls; an unclosed
//! value ends at its own call's closer, not at the next call's markup;
//! Harmony's recipient without a content type; DeepSeek R1 distills'
//! section without its first call marker.
//!
//! Every input runs whole, byte by byte and in random chunks through every
//! feeding API (`chunk::invariant`), which must agree and keep the event
//! contract.

use serde_json::json;
use toolscan::DiagnosticKind;
use toolscan_testkit::expect::{call, expect};

const MALFORMED: &[DiagnosticKind] = &[DiagnosticKind::Malformed];
const UNCLOSED: &[DiagnosticKind] = &[DiagnosticKind::Unclosed];

// ---------------------------------------------------------------- Harmony

/// gpt-oss may send a call's recipient straight to `<|message|>`, with no
/// content type (`<|constrain|>json` or the template's bare `json`).
#[test]
fn harmony_recipient_without_a_content_type_is_a_call() {
    let input = "<|start|>assistant<|channel|>commentary to=functions.calc<|message|>\
                 {\"x\": 1}<|call|>";
    expect(
        &["harmony", "auto"],
        input,
        &[call("calc", json!({"x": 1}))],
        "",
        &[],
    );
    // The same after an analysis message, with the header's other forms.
    for header in [
        "commentary to=functions.calc <|constrain|>json",
        "commentary to=functions.calc<|constrain|>json",
        "commentary to=functions.calc json",
        "commentary to=functions.calc",
    ] {
        let input = format!(
            "<|channel|>analysis<|message|>Need calc.<|end|>\
             <|start|>assistant<|channel|>{header}<|message|>{{\"x\": 1}}<|call|>"
        );
        expect(
            &["harmony"],
            &input,
            &[call("calc", json!({"x": 1}))],
            // The analysis channel is reasoning (issue 29, item 11).
            "",
            &[],
        );
    }
}

/// "The recipient might be defined in the role or channel section of the
/// header": in the role part too it may go straight to `<|message|>`, after
/// `<|start|>` and where the completion starts (the prompt ends with
/// `<|start|>assistant`).
#[test]
fn harmony_recipient_in_the_role_part_without_a_content_type_is_a_call() {
    for input in [
        "<|start|>assistant to=functions.calc<|channel|>commentary<|message|>{\"x\": 1}<|call|>",
        " to=functions.calc<|channel|>commentary<|message|>{\"x\": 1}<|call|>",
        // What the gpt-oss template writes.
        " to=functions.calc<|channel|>commentary json<|message|>{\"x\": 1}<|call|>",
    ] {
        expect(
            &["harmony"],
            input,
            &[call("calc", json!({"x": 1}))],
            "",
            &[],
        );
    }
}

/// A call whose recipient and channel were read at the start of the stream
/// is Harmony's markup: when it breaks, the failure is reported.
#[test]
fn harmony_bad_call_at_the_start_of_the_stream_is_reported() {
    let header = " to=functions.calc<|channel|>commentary<|message|>{\"x\": }";
    // (`<|call|>`, which ends a message, is markup.)
    let input = format!("{header}<|call|>");
    expect(&["harmony"], &input, &[], header, MALFORMED);
}

// ------------------------------------------------- DeepSeek R1 distills

const CALLS: &str = "<｜tool▁calls｜>";
const BEGIN: &str = "<｜tool▁call▁begin｜>";
const SEP: &str = "<｜tool▁sep｜>";
const CALL_END: &str = "<｜tool▁call▁end｜>";
const CALLS_END: &str = "<｜tool▁calls▁end｜>";

/// R1 distills open the section with `<｜tool▁calls｜>` and go straight on
/// to the call, without `<｜tool▁call▁begin｜>`.
#[test]
fn deepseek_section_without_its_first_call_begin_is_read() {
    let input = format!(
        "Let me check.{CALLS}function{SEP}get_weather\n```json\n{{\"city\": \"Paris\"}}\n```\
         {CALL_END}{BEGIN}function{SEP}get_time\n```json\n{{}}\n```{CALL_END}{CALLS_END}"
    );
    expect(
        &["deepseek-v3", "deepseek-v3.1", "auto"],
        &input,
        &[
            call("get_weather", json!({"city": "Paris"})),
            call("get_time", json!({})),
        ],
        "Let me check.",
        &[],
    );
}

// ------------------------------------------- recovery after a bad call

/// DeepSeek V3 / V3.1 (and R1's section): the call after a bad one is read.
#[test]
fn deepseek_reads_the_call_after_a_bad_one() {
    let bad = format!("{BEGIN}function{SEP}broken\n```json\n{{\"a\": }}\n```{CALL_END}");
    let input = format!(
        "<｜tool▁calls▁begin｜>{BEGIN}get_time{SEP}{{}}{CALL_END}{bad}\
         {BEGIN}get_date{SEP}{{\"tz\": \"UTC\"}}{CALL_END}{CALLS_END}"
    );
    expect(
        &["deepseek-v3", "deepseek-v3.1"],
        &input,
        &[
            call("get_time", json!({})),
            call("get_date", json!({"tz": "UTC"})),
        ],
        &bad,
        MALFORMED,
    );
}

/// DSML: an invoke with an empty name is text; the invokes after it are
/// calls, and the block's closer still belongs to them.
#[test]
fn dsml_reads_the_invoke_after_one_with_an_empty_name() {
    let bad = "<｜DSML｜function_calls>\n<｜DSML｜invoke name=\"\">\n\
               <｜DSML｜parameter name=\"a\" string=\"true\">1</｜DSML｜parameter>\n\
               </｜DSML｜invoke>";
    let input = format!(
        "{bad}\n<｜DSML｜invoke name=\"get_weather\">\n\
         <｜DSML｜parameter name=\"city\" string=\"true\">Paris</｜DSML｜parameter>\n\
         </｜DSML｜invoke>\n<｜DSML｜invoke name=\"get_time\">\n</｜DSML｜invoke>\n\
         </｜DSML｜function_calls>"
    );
    expect(
        &["deepseek-v3.2", "auto"],
        &input,
        &[
            call("get_weather", json!({"city": "Paris"})),
            call("get_time", json!({})),
        ],
        bad,
        MALFORMED,
    );
}

/// MiniMax-M2 and the `<function_calls>` wrapper of Claude-style invokes:
/// the invoke after a bad one is read, and so is the group's closer. (The
/// whitespace before a call goes with it: here, text.)
#[test]
fn invoke_groups_read_the_invoke_after_a_bad_one() {
    for (format, open, close) in [
        ("minimax-m2", "<minimax:tool_call>", "</minimax:tool_call>"),
        ("claude-xml", "<function_calls>", "</function_calls>"),
    ] {
        let bad = "<invoke name=\"a b\">\n<parameter name=\"x\">1</parameter>\n</invoke>";
        let input = format!(
            "{open}\n<invoke name=\"get_time\">\n</invoke>\n{bad}\n\
             <invoke name=\"get_weather\">\n<parameter name=\"city\">Paris</parameter>\n\
             </invoke>\n{close}"
        );
        expect(
            &[format],
            &input,
            &[
                call("get_time", json!({})),
                call("get_weather", json!({"city": "Paris"})),
            ],
            &format!("\n{bad}"),
            MALFORMED,
        );
    }
}

/// Kimi K2 and K3: the call after a bad one is read.
#[test]
fn kimi_sections_read_the_call_after_a_bad_one() {
    let bad = "<|tool_call_begin|>functions.broken:1<|tool_call_argument_begin|>{\"a\": }\
               <|tool_call_end|>";
    let input = format!(
        "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_time:0\
         <|tool_call_argument_begin|>{{}}<|tool_call_end|>{bad}<|tool_call_begin|>\
         functions.get_date:2<|tool_call_argument_begin|>{{}}<|tool_call_end|>\
         <|tool_calls_section_end|>"
    );
    expect(
        &["kimi-k2", "auto"],
        &input,
        &[call("get_time", json!({})), call("get_date", json!({}))],
        bad,
        MALFORMED,
    );

    let bad = "<|open|>call tool=\"\" index=\"2\"<|sep|><|close|>call<|sep|>";
    let input = format!(
        "<|open|>tools<|sep|><|open|>call tool=\"get_time\" index=\"1\"<|sep|>\
         <|close|>call<|sep|>{bad}<|open|>call tool=\"get_weather\" index=\"3\"<|sep|>\
         <|open|>argument key=\"city\" type=\"string\"<|sep|>Paris<|close|>argument<|sep|>\
         <|close|>call<|sep|><|close|>tools<|sep|>"
    );
    expect(
        &["kimi-k3", "auto"],
        &input,
        &[
            call("get_time", json!({})),
            call("get_weather", json!({"city": "Paris"})),
        ],
        bad,
        MALFORMED,
    );
}

/// Step-3: the call after a bad one is read.
#[test]
fn step3_reads_the_call_after_a_bad_one() {
    let bad = "<｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name=\"\">\n\
               </steptml:invoke><｜tool_call_end｜>";
    let input = format!(
        "<｜tool_calls_begin｜>\n{bad}\n<｜tool_call_begin｜>function<｜tool_sep｜>\
         <steptml:invoke name=\"get_weather\">\n\
         <steptml:parameter name=\"city\">Paris</steptml:parameter>\n\
         </steptml:invoke><｜tool_call_end｜>\n<｜tool_calls_end｜>"
    );
    expect(
        &["step3", "auto"],
        &input,
        &[call("get_weather", json!({"city": "Paris"}))],
        &format!("<｜tool_calls_begin｜>\n{bad}"),
        MALFORMED,
    );
}

/// MiniMax-M1 writes one call object per line: a line that does not parse
/// is text, the next line is still a call.
#[test]
fn minimax_m1_reads_the_line_after_an_unparsable_one() {
    let input = "<tool_calls>\n{\"name\": \"get_time\", \"arguments\": {}}\n\
                 {\"name\": \"broken\", \"arguments\": {\"a\": }}\n\
                 {\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_calls>";
    expect(
        &["minimax-m1"],
        input,
        &[
            call("get_time", json!({})),
            call("get_weather", json!({"city": "Paris"})),
        ],
        "\n{\"name\": \"broken\", \"arguments\": {\"a\": }}",
        MALFORMED,
    );
    // A bad first line: the block's opener goes with it.
    let input = "<tool_calls>\n{\"name\": \"\", \"arguments\": {}}\n\
                 {\"name\": \"get_time\", \"arguments\": {}}\n</tool_calls>";
    expect(
        &["minimax-m1"],
        input,
        &[call("get_time", json!({}))],
        "<tool_calls>\n{\"name\": \"\", \"arguments\": {}}",
        MALFORMED,
    );
}

/// Olmo 3 writes one call per line: a bad line is text, the next is read.
#[test]
fn olmo3_reads_the_line_after_a_bad_call() {
    let input = "<function_calls>get_time()\nbroken(1)\nget_weather(city=\"Paris\")\
                 </function_calls>";
    expect(
        &["olmo3"],
        input,
        &[
            call("get_time", json!({})),
            call("get_weather", json!({"city": "Paris"})),
        ],
        "\nbroken(1)",
        MALFORMED,
    );
}

/// GLM's calls are blocks of their own: the call after a bad one is read.
#[test]
fn glm_reads_the_call_after_a_bad_one() {
    let bad = "<tool_call>bad name<arg_key>a</arg_key><arg_value>1</arg_value></tool_call>";
    let input = format!(
        "{bad}\n<tool_call>get_weather<arg_key>city</arg_key><arg_value>Paris</arg_value>\
         </tool_call>"
    );
    expect(
        &["glm47"],
        &input,
        &[call("get_weather", json!({"city": "Paris"}))],
        &format!("{bad}\n"),
        MALFORMED,
    );
}

// ------------------------------------- an unclosed value and the next call

/// A value that misses its closer ends at its own call's closer once the
/// next call of the group shows, not at the next call's first parameter:
/// two calls stay two.
#[test]
fn an_unclosed_value_ends_at_its_calls_closer_before_the_next_call() {
    let input = "<｜DSML｜function_calls>\n<｜DSML｜invoke name=\"get_weather\">\n\
                 <｜DSML｜parameter name=\"city\" string=\"true\">Paris</｜DSML｜invoke>\n\
                 <｜DSML｜invoke name=\"get_time\">\n\
                 <｜DSML｜parameter name=\"tz\" string=\"true\">UTC</｜DSML｜parameter>\n\
                 </｜DSML｜invoke>\n</｜DSML｜function_calls>";
    expect(
        &["deepseek-v3.2", "auto"],
        input,
        &[
            call("get_weather", json!({"city": "Paris"})),
            call("get_time", json!({"tz": "UTC"})),
        ],
        "",
        UNCLOSED,
    );
    // The next call has no parameter; the value misses its closer last.
    let input = "<｜DSML｜function_calls>\n<｜DSML｜invoke name=\"get_time\">\n</｜DSML｜invoke>\n\
                 <｜DSML｜invoke name=\"get_weather\">\n\
                 <｜DSML｜parameter name=\"city\" string=\"true\">Paris</｜DSML｜invoke>\n\
                 </｜DSML｜function_calls>";
    expect(
        &["deepseek-v3.2"],
        input,
        &[
            call("get_time", json!({})),
            call("get_weather", json!({"city": "Paris"})),
        ],
        "",
        UNCLOSED,
    );
    for (format, open, close) in [
        ("minimax-m2", "<minimax:tool_call>", "</minimax:tool_call>"),
        ("claude-xml", "<function_calls>", "</function_calls>"),
    ] {
        let input = format!(
            "{open}\n<invoke name=\"get_weather\">\n<parameter name=\"city\">Paris</invoke>\n\
             <invoke name=\"get_time\">\n</invoke>\n{close}"
        );
        expect(
            &[format],
            &input,
            &[
                call("get_weather", json!({"city": "Paris"})),
                call("get_time", json!({})),
            ],
            "",
            UNCLOSED,
        );
    }
}

/// Where each call is a block of its own, the next block's marker and a
/// parameter after it show the value ended at the call's closer before
/// them.
#[test]
fn an_unclosed_value_ends_at_its_calls_closer_before_the_next_block() {
    let input = "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris\n\
                 </tool_call>\n<tool_call>get_time\n<arg_key>tz</arg_key>\n\
                 <arg_value>UTC</arg_value>\n</tool_call>";
    expect(
        &["glm45"],
        input,
        &[
            call("get_weather", json!({"city": "Paris\n"})),
            call("get_time", json!({"tz": "UTC"})),
        ],
        "\n",
        UNCLOSED,
    );
    let input = "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</function>\n\
                 </tool_call>\n<tool_call>\n<function=get_time>\n<parameter=tz>\nUTC\n\
                 </parameter>\n</function>\n</tool_call>";
    expect(
        &["qwen3-coder"],
        input,
        &[
            call("get_weather", json!({"city": "Paris"})),
            call("get_time", json!({"tz": "UTC"})),
        ],
        "\n",
        UNCLOSED,
    );
}
