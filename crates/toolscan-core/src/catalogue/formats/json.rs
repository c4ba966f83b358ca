//! Formats that write a call as a JSON object (or list) between markers: Hermes and its relatives, Llama 3's JSON, `TOOL_REQUEST`, `[RUN_MODULE]`, bare JSON.

use crate::catalogue::shorthand::{
    args_closed_by, capture, fence, fork, framed, json, label, lit, opt, then, wrapped,
    wrapped_spaced, writes,
};
use crate::lang::format::{
    CallKeys, Capture, Field, Format, Hint, Label, Lit, Opener, PyStep, Shape, Step, Trust,
};
/// `<function=NAME>{args}</function>` (Functionary v3.1; also a variant
/// llama.cpp tolerates for Hermes models).
fn function_eq() -> Opener {
    Opener::definite(
        "<function=",
        [
            vec![capture(Field::Name, &[(">", None)])],
            args_closed_by("</function>"),
        ]
        .concat(),
    )
}

/// Hermes' wrappers of one JSON call object: (open, close, trust).
fn hermes_wrappers() -> Vec<(&'static str, Lit, Trust)> {
    vec![
        ("<tool_call>", Lit::new("</tool_call>"), Trust::Definite),
        (
            "<function_call>",
            Lit::new("</function_call>"),
            Trust::Definite,
        ),
        // Words that also name ordinary markup: a call only once one shows.
        ("<tools>", Lit::new("</tools>"), Trust::Tentative),
        ("<tool>", Lit::new("</tool>"), Trust::Tentative),
        ("<response>", Lit::ci("</response>"), Trust::Tentative),
        ("<json>", Lit::ci("</json>"), Trust::Tentative),
        ("<xml>", Lit::ci("</xml>"), Trust::Tentative),
    ]
}

/// A code fence holding a call object, or wrapped calls
/// (` ```xml\n<response>{…}</response>\n``` `): the fence belongs to the
/// calls. A definite wrapper inside makes the block definite.
fn hermes_fence(keys: &CallKeys) -> Opener {
    let wrappers = hermes_wrappers();
    let open_lit = |open: &str, close: &Lit| Lit {
        bytes: open.as_bytes().to_vec(),
        case_insensitive: close.case_insensitive,
    };
    let to_wrapper = |k: usize| Label::from(format!("wrapper-{k}"));
    let opts: Vec<(Lit, Label)> = wrappers
        .iter()
        .enumerate()
        .map(|(k, (open, close, _))| (open_lit(open, close), to_wrapper(k)))
        .collect();
    let mut program = vec![
        Step::Word,
        Step::Ws,
        fork(&[(b"{", "object"), (b"<", "wrapped")]),
        label("object"),
        json(Shape::Call, keys.clone(), false),
        Step::Ws,
        Step::LitOrEof(Lit::new("```")),
        Step::Dispatch,
        Step::End,
        label("wrapped"),
        Step::OneOf(opts.clone()),
    ];
    for (k, (_, close, trust)) in wrappers.into_iter().enumerate() {
        program.push(Step::Label(to_wrapper(k)));
        if trust == Trust::Definite {
            program.push(Step::Definite);
        }
        program.extend([
            Step::Ws,
            json(Shape::Call, keys.clone(), false),
            Step::Ws,
            Step::Lit(close),
            Step::Dispatch,
            Step::goto("after"),
        ]);
    }
    let mut after = vec![(Lit::new("```"), Label::from("end"))];
    after.extend(opts);
    program.extend([
        label("after"),
        // Once a wrapped call was read, one that fails is text, and the
        // next one is read (a fence whose first call fails is not read as
        // calls: what it holds is read anew, as without the fence).
        Step::Recover(after.clone()),
        Step::Then(after),
        label("end"),
        Step::End,
    ]);
    Opener::tentative("```", program)
}

pub(super) fn hermes() -> Format {
    let keys = CallKeys::new(&["name"], &["arguments", "parameters"]);
    let mut f = Format::new(
        "hermes",
        "Hermes 2/3, Qwen2.5, Qwen3, QwQ (and llama.cpp's tolerated variants)",
        "<tool_call>{\"name\", \"arguments\"}</tool_call>; also <function_call>, <tools>, <tool>, \
         <response>, <json>, <xml>, code fences (around a call object or wrapped calls), \
         <function=NAME>, <function name=\"NAME\">",
    );
    for (open, close, trust) in hermes_wrappers() {
        // Rendered as the Qwen and Hermes templates write it:
        // `<tool_call>\n{…}\n</tool_call>`, a newline between two.
        f = f.opener(if open == "<tool_call>" {
            wrapped_spaced(open, close, &keys, trust, ["\n", "\n", "\n"])
        } else {
            wrapped(open, close, &keys, trust)
        });
    }
    let f = f
        .opener(hermes_fence(&keys))
        .opener(function_eq())
        .opener(Opener::definite(
            "<function name=\"",
            [
                vec![capture(Field::Name, &[("\"", None)]), lit(">")],
                args_closed_by("</function>"),
            ]
            .concat(),
        ));
    // The Qwen, Granite 4 and Bielik templates write a newline between the
    // content and the first call.
    framed(f, "", "\n", "", "")
}

pub(super) fn tool_arguments() -> Format {
    Format::new(
        "tool-arguments",
        "line protocols of simple agents",
        "TOOL: NAME (at a line start, maybe indented), newline, ARGUMENTS: {json}; no end marker",
    )
    .opener(
        Opener::definite(
            "TOOL:",
            vec![
                capture(Field::Name, &[("\n", None)]),
                Step::Ws,
                lit("ARGUMENTS:"),
                Step::Ws,
                Step::args(),
                Step::Dispatch,
                // The next call's `TOOL:` begins a line.
                writes("\n"),
                Step::End,
            ],
        )
        .at_line_start(),
    )
}

pub(super) fn tool_request() -> Format {
    Format::new(
        "tool-request",
        "LLxprt",
        "[TOOL_REQUEST]NAME {json}[TOOL_REQUEST_END]",
    )
    .opener(Opener::definite(
        "[TOOL_REQUEST]",
        [
            vec![
                Step::Ws,
                Step::Capture(Capture::before(Field::Name, b" \t\r\n{")),
            ],
            args_closed_by("[TOOL_REQUEST_END]"),
        ]
        .concat(),
    ))
}

pub(super) fn end_tool_request() -> Format {
    let keys = CallKeys::new(&["name"], &["arguments", "parameters"]);
    let body = |ws: bool| {
        let mut v = Vec::new();
        if ws {
            v.push(Step::Ws);
        }
        v.extend([
            json(Shape::Call, keys.clone(), false),
            Step::Ws,
            lit("[END_TOOL_REQUEST]"),
            Step::Dispatch,
            Step::End,
        ]);
        v
    };
    Format::new(
        "end-tool-request",
        "LM Studio's default bridge",
        "{\"name\", \"arguments\"}[END_TOOL_REQUEST], optionally after [TOOL_REQUEST]",
    )
    .opener(Opener::definite("[TOOL_REQUEST]", body(true)))
    .opener(Opener::bare("{", body(false)))
}

pub(super) fn run_module() -> Format {
    let keys = CallKeys::new(&["name", "module"], &["args", "arguments"]);
    Format::new(
        "run-module",
        "Autobyteus",
        "[RUN_MODULE]{\"name\"|\"module\", \"args\"|\"arguments\"}[/RUN_MODULE], case-insensitive",
    )
    .opener(wrapped(
        "[RUN_MODULE]",
        Lit::ci("[/RUN_MODULE]"),
        &keys,
        Trust::Definite,
    ))
}

pub(super) fn tool_call_json() -> Format {
    let keys = CallKeys::new(
        &["tool_name", "tool", "name"],
        &["parameters", "params", "arguments"],
    );
    Format::new(
        "tool-call-json",
        "selectools",
        "TOOL_CALL (anywhere) [:] then a lenient JSON object {\"tool_name\", \"parameters\"}, \
         optionally fenced",
    )
    .opener(Opener::definite(
        "TOOL_CALL",
        vec![
            opt(":"),
            Step::Ws,
            fork(&[(b"`", "fenced"), (b"{", "bare")]),
            label("fenced"),
            lit("```"),
            Step::Word,
            Step::Ws,
            json(Shape::Call, keys.clone(), true),
            Step::Ws,
            Step::LitOrEof(Lit::new("```")),
            Step::goto("dispatch"),
            label("bare"),
            json(Shape::Call, keys, true),
            label("dispatch"),
            Step::Dispatch,
            Step::End,
        ],
    ))
}

pub(super) fn function_tag() -> Format {
    Format::new(
        "function-tag",
        "Functionary v3.1",
        "<function=NAME>{json}</function>",
    )
    .opener(function_eq())
}

pub(super) fn llama3_json() -> Format {
    let keys = CallKeys::new(&["name"], &["parameters", "arguments"]);
    let f = Format::new(
        "llama3-json",
        "Llama 3.1, 3.2, 3.3",
        "{\"name\", \"parameters\"}, optionally after <|python_tag|>, `;`-separated, \
         optional <|eom_id|>; built-in tools as <|python_tag|>NAME.call(key=value, …)",
    )
    // The bare object first: it is what the template writes for a call of
    // the user's tools (the tag stands before built-in tools), and the
    // renderer writes the first opener that reads back.
    .opener(Opener::bare(
        "{",
        vec![
            label("call"),
            json(Shape::Call, keys.clone(), false),
            Step::Dispatch,
            // Llama 4's template writes the calls one after another, each
            // read as a block of its own (Llama 3's write one call).
            Step::Render(Hint::sep("")),
            then(&[(";", "next"), ("<|eom_id|>", "end"), ("<|eot_id|>", "end")]),
            label("end"),
            Step::End,
            label("next"),
            Step::Ws,
            Step::goto("call"),
        ],
    ))
    .opener(Opener::definite(
        "<|python_tag|>",
        vec![
            // A call object, or a built-in tool: `brave_search.call(query="…")`.
            label("call"),
            Step::Ws,
            fork(&[(b"{", "object"), (b"", "builtin")]),
            label("object"),
            json(Shape::Call, keys, false),
            Step::goto("complete"),
            label("builtin"),
            capture(Field::Name, &[(".call(", None)]),
            Step::Py(PyStep::keywords()),
            label("complete"),
            Step::Dispatch,
            then(&[(";", "call"), ("<|eom_id|>", "end"), ("<|eot_id|>", "end")]),
            label("end"),
            Step::End,
        ],
    ));
    // Llama 4's template ends the turn's calls with a newline.
    framed(f, "", "", "", "\n")
}

pub(super) fn json_format() -> Format {
    // llama.cpp's generic schema: `{"tool_calls": […]}`, `{"tool_call":
    // {…}}`, or the model's text as `{"response": "…"}`.
    let keys = CallKeys::new(&["name"], &["arguments", "parameters", "args"])
        .with_id("id")
        .with_function("function")
        .with_text("response");
    let root = vec![
        json(Shape::Root, keys.clone(), false),
        Step::Dispatch,
        Step::End,
    ];
    Format::new(
        "json",
        "any model asked for JSON; llama.cpp's generic envelope",
        "bare or fenced JSON: a call object, a list of them, {\"tool_calls\": [...]}, \
         {\"tool_call\": {...}}; arguments as object or JSON string; \
         {\"response\": \"...\"} is text",
    )
    .opener(Opener::bare("{", root.clone()))
    .opener(Opener::bare("[", root))
    .opener(Opener {
        trust: Trust::Bare,
        ..fence(Shape::Root, &keys, Trust::Bare)
    })
}
