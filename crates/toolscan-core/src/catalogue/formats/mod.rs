//! The built-in formats, as data: each is a list of openers (a marker and
//! a program of steps) over the same machinery. One file per family of
//! notation; [`builtin`] lists them all, in precedence order. How each
//! writes tool results is one table (`results.rs`).

mod deepseek;
mod families;
mod json;
mod mistral;
mod python;
mod results;
mod xml;

use crate::lang::format::Format;
use deepseek::deepseek;
use json::{
    end_tool_request, function_tag, hermes, json_format, llama3_json, run_module, tool_arguments,
    tool_call_json, tool_request,
};
use mistral::{mistral, mistral_v11};
use python::{functiongemma, gemma4, gemma_tool_code, lfm2, olmo3, pythonic};
use xml::{
    autobyteus_xml, claude_xml, deepseek_v32, glm, key_value, kimi_k3, minimax_m2, qwen3_coder,
    seed_oss, step3, use_tag, xml_tool,
};

/// Every built-in format, in `auto` precedence order, with its tool
/// results where its templates define them (`results.rs`).
pub(crate) fn builtin() -> Vec<Format> {
    formats()
        .into_iter()
        .map(|f| match results::of(f.name()) {
            Some(r) => f.tool_results(r),
            None => f,
        })
        .collect()
}

/// Every built-in format's openers, in `auto` precedence order.
fn formats() -> Vec<Format> {
    vec![
        hermes(),
        function_tag(),
        deepseek(
            "deepseek-v3",
            "DeepSeek V3, R1",
            "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME\\n```json {args} ```<｜tool▁call▁end｜>…",
            true,
        ),
        deepseek(
            "deepseek-v3.1",
            "DeepSeek V3.1, V3.2-Exp",
            "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{args}<｜tool▁call▁end｜>…",
            false,
        ),
        mistral(),
        mistral_v11(),
        llama3_json(),
        tool_request(),
        end_tool_request(),
        run_module(),
        tool_arguments(),
        tool_call_json(),
        json_format(),
        qwen3_coder(),
        seed_oss(),
        glm(
            "glm45",
            "GLM-4.5, GLM-4.6",
            "<tool_call>NAME\\n<arg_key>KEY</arg_key>\\n<arg_value>value</arg_value>…</tool_call>",
            "\n",
        ),
        glm(
            "glm47",
            "GLM-4.7, GLM-5",
            "<tool_call>NAME<arg_key>KEY</arg_key><arg_value>value</arg_value>…</tool_call>",
            "",
        ),
        minimax_m2(),
        claude_xml(),
        deepseek_v32(),
        kimi_k3(),
        step3(),
        xml_tool(),
        autobyteus_xml(),
        use_tag(),
        key_value(),
        families::granite(),
        families::phi4_mini(),
        families::internlm(),
        families::jamba(),
        families::minimax_m1(),
        families::command_r(),
        families::command_r7b(),
        families::xlam(),
        families::apertus(),
        families::nemotron(),
        families::gigachat3(),
        families::functionary_v32(),
        families::harmony(),
        families::kimi_k2(),
        pythonic(),
        olmo3(),
        lfm2(),
        gemma_tool_code(),
        functiongemma(),
        gemma4(),
    ]
}
