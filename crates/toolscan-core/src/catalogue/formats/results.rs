//! How the built-in formats write tool results, as their models' chat
//! templates write a run of `tool` messages: the role of the turn that
//! carries them and the text of each (`lang/results.rs`). Only formats
//! whose templates define it have one; `tests/templates.rs` renders the
//! templates and compares, byte for byte.
//!
//! The role is the one a plain chat message takes (`user`, Llama's
//! `ipython`): where a template writes the results in a turn of their own
//! that no plain message opens (Kimi K2's `<|im_system|>tool`, GLM's
//! `<|observation|>`, MiniMax-M2's `]~b]tool`, Mistral's and DeepSeek's
//! bare `[TOOL_RESULTS]` and `<｜tool▁output▁begin｜>` after the
//! assistant's turn), the notation is the same and the role is `user`.

use crate::lang::results::Results;

/// The built-in format `name`'s tool results, if its templates define
/// them.
pub(crate) fn of(name: &str) -> Option<Results> {
    Some(match name {
        // Qwen2.5, Qwen3, QwQ, MiMo-VL, Bielik, Granite 4: the results of
        // one turn in one user message.
        "hermes" => Results::new("user", "<tool_response>\n{content}\n</tool_response>")
            .shared("", "\n", ""),
        // Qwen3-Coder: each result ends with its own newline.
        "qwen3-coder" => Results::new("user", "<tool_response>\n{content}\n</tool_response>\n")
            .shared("", "", ""),
        "glm45" => Results::new("user", "<tool_response>\n{content}\n</tool_response>")
            .shared("", "\n", ""),
        "glm47" => {
            Results::new("user", "<tool_response>{content}</tool_response>").shared("", "", "")
        }
        "minimax-m2" => Results::new("user", "<response>{content}</response>").shared("", "\n", ""),
        // Llama 3.x and 4 (JSON and Python-like calls), Functionary v3.1,
        // xLAM on Llama: each result is an `ipython` turn of its own, the
        // content as it is (Llama 4's pythonic template quotes it as a
        // JSON string itself). MiniMax-M1's template takes `ipython` for
        // `tool` and writes its `tool result: ` lines around the content.
        "llama3-json" | "function-tag" | "pythonic" | "xlam" | "minimax-m1" => {
            Results::new("ipython", "{content}")
        }
        // Granite 3.x: a `tool_response` turn per result.
        "granite" => Results::new("tool_response", "{content}"),
        // Mistral v3 / Nemo: a JSON-like object, the content as is.
        "mistral" => Results::new(
            "user",
            "[TOOL_RESULTS]{{\"content\": {content}, \"call_id\": \"{id}\"}}[/TOOL_RESULTS]",
        )
        .shared("", "", ""),
        // Mistral Small 3.2 (tokenizer v11): the call id, then the content.
        "mistral-v11" => Results::new(
            "user",
            "[TOOL_RESULTS]{id}[TOOL_CONTENT]{content}[/TOOL_RESULTS]",
        )
        .shared("", "", ""),
        // DeepSeek V3 / R1: the outputs of one turn in one section.
        "deepseek-v3" => Results::new(
            "user",
            "<｜tool▁output▁begin｜>{content}<｜tool▁output▁end｜>",
        )
        .shared("<｜tool▁outputs▁begin｜>", "\n", "<｜tool▁outputs▁end｜>"),
        "deepseek-v3.1" => Results::new(
            "user",
            "<｜tool▁output▁begin｜>{content}<｜tool▁output▁end｜>",
        )
        .shared("", "", ""),
        "kimi-k2" => Results::new("user", "## Return of {id}\n{content}"),
        // DeepSeek V4: the results of a turn in one user turn, a blank
        // line between two.
        "deepseek-v3.2" => {
            Results::new("user", "<tool_result>{content}</tool_result>").shared("", "\n\n", "")
        }
        _ => return None,
    })
}
