//! The built-in formats, as data: each is a list of openers (a marker and
//! a program of steps) over the same machinery.

use crate::format::{
    ByteSet, CallKeys, Capture, Field, Format, JsonStep, Label, Lit, Opener, Shape, Step, Trust,
};

fn lit(s: &str) -> Step {
    Step::Lit(Lit::new(s))
}

fn opt(s: &str) -> Step {
    Step::OptLit(Lit::new(s))
}

fn json(shape: Shape, keys: CallKeys, lenient: bool) -> Step {
    Step::Json(JsonStep {
        shape,
        keys,
        lenient,
    })
}

fn capture(field: Field, delims: &[(&str, Option<&'static str>)]) -> Step {
    Step::Capture(Capture::until(
        field,
        delims
            .iter()
            .map(|&(d, j)| (Lit::new(d), j.map(Label::from)))
            .collect(),
    ))
}

fn label(name: &'static str) -> Step {
    Step::label(name)
}

fn fork(alts: &[(&[u8], &'static str)]) -> Step {
    Step::Fork(
        alts.iter()
            .map(|&(set, l)| {
                let set = if set.is_empty() {
                    ByteSet::Any
                } else {
                    ByteSet::Bytes(set.to_vec())
                };
                (set, Label::from(l))
            })
            .collect(),
    )
}

/// The arguments object, then a closing literal: the call is complete.
fn args_closed_by(close: &str) -> Vec<Step> {
    vec![
        Step::Ws,
        Step::args(),
        Step::Ws,
        lit(close),
        Step::Dispatch,
        Step::End,
    ]
}

fn then(opts: &[(&str, &'static str)]) -> Step {
    Step::Then(
        opts.iter()
            .map(|&(l, j)| (Lit::new(l), Label::from(j)))
            .collect(),
    )
}

/// `OPEN` json-call `CLOSE`.
fn wrapped(open: &str, close: Lit, keys: &CallKeys, trust: Trust) -> Opener {
    Opener {
        marker: Lit {
            bytes: open.as_bytes().to_vec(),
            case_insensitive: close.case_insensitive,
        },
        line_start: false,
        trust,
        replay: false,
        program: vec![
            Step::Ws,
            json(Shape::Call, keys.clone(), false),
            Step::Ws,
            Step::Lit(close),
            Step::Dispatch,
            Step::End,
        ],
    }
}

/// ` ``` ` info-word, a JSON value of `shape`, closing fence (or the end of
/// the stream).
fn fence(shape: Shape, keys: &CallKeys, trust: Trust) -> Opener {
    Opener {
        marker: Lit::new("```"),
        line_start: false,
        trust,
        replay: false,
        program: vec![
            Step::Word,
            Step::Ws,
            json(shape, keys.clone(), false),
            Step::Ws,
            Step::LitOrEof(Lit::new("```")),
            Step::Dispatch,
            Step::End,
        ],
    }
}

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
    program.extend([label("after"), Step::Then(after), label("end"), Step::End]);
    Opener::tentative("```", program)
}

fn hermes() -> Format {
    let keys = CallKeys::new(&["name"], &["arguments", "parameters"]);
    let mut f = Format::new(
        "hermes",
        "Hermes 2/3, Qwen2.5, Qwen3, QwQ (and llama.cpp's tolerated variants)",
        "<tool_call>{\"name\", \"arguments\"}</tool_call>; also <function_call>, <tools>, <tool>, \
         <response>, <json>, <xml>, code fences (around a call object or wrapped calls), \
         <function=NAME>, <function name=\"NAME\">",
    );
    for (open, close, trust) in hermes_wrappers() {
        f = f.opener(wrapped(open, close, &keys, trust));
    }
    f.opener(hermes_fence(&keys))
        .opener(function_eq())
        .opener(Opener::definite(
            "<function name=\"",
            [
                vec![capture(Field::Name, &[("\"", None)]), lit(">")],
                args_closed_by("</function>"),
            ]
            .concat(),
        ))
}

fn tool_arguments() -> Format {
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
                Step::End,
            ],
        )
        .at_line_start(),
    )
}

fn tool_request() -> Format {
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

fn end_tool_request() -> Format {
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

fn run_module() -> Format {
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

fn tool_call_json() -> Format {
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

fn function_tag() -> Format {
    Format::new(
        "function-tag",
        "Functionary v3.1",
        "<function=NAME>{json}</function>",
    )
    .opener(function_eq())
}

fn llama3_json() -> Format {
    let keys = CallKeys::new(&["name"], &["parameters", "arguments"]);
    Format::new(
        "llama3-json",
        "Llama 3.1, 3.2, 3.3",
        "{\"name\", \"parameters\"}, optionally after <|python_tag|>, `;`-separated, \
         optional <|eom_id|>",
    )
    .opener(Opener::definite(
        "<|python_tag|>",
        vec![
            label("call"),
            Step::Ws,
            json(Shape::Call, keys.clone(), false),
            Step::Dispatch,
            then(&[(";", "call"), ("<|eom_id|>", "end"), ("<|eot_id|>", "end")]),
            label("end"),
            Step::End,
        ],
    ))
    .opener(Opener::bare(
        "{",
        vec![
            label("call"),
            json(Shape::Call, keys, false),
            Step::Dispatch,
            then(&[(";", "next"), ("<|eom_id|>", "end"), ("<|eot_id|>", "end")]),
            label("end"),
            Step::End,
            label("next"),
            Step::Ws,
            Step::goto("call"),
        ],
    ))
}

fn json_format() -> Format {
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

fn deepseek(name: &str, models: &str, description: &str) -> Format {
    const CALL_BEGIN: &str = "<｜tool▁call▁begin｜>";
    const CALL_END: &str = "<｜tool▁call▁end｜>";
    const SEP: &str = "<｜tool▁sep｜>";
    const CALLS_END: &str = "<｜tool▁calls▁end｜>";
    const EOS: &str = "<｜end▁of▁sentence｜>";
    // DeepSeek-R1 distills open the section with `<｜tool▁calls｜>`.
    const SECTIONS: [&str; 2] = ["<｜tool▁calls▁begin｜>", "<｜tool▁calls｜>"];
    // V3 writes `function<｜tool▁sep｜>NAME\n` + fenced JSON, V3.1
    // `NAME<｜tool▁sep｜>{json}`: one program reads both — the word before
    // the separator is the name unless a name follows it.
    //
    // A call that fails does not end the section: its bytes are text, and
    // reading goes on at the next call, or at the end of the failed call or
    // of the section (which still belongs to the calls that completed), or
    // at a new section.
    let program = vec![
        label("section"),
        Step::Ws,
        lit(CALL_BEGIN),
        Step::Recover(vec![
            (Lit::new(CALL_END), Label::from("next")),
            (Lit::new(CALL_BEGIN), Label::from("call")),
            (Lit::new(CALLS_END), Label::from("after-section")),
            (Lit::new(SECTIONS[0]), Label::from("section")),
            (Lit::new(SECTIONS[1]), Label::from("section")),
        ]),
        label("call"),
        capture(Field::Name, &[(SEP, None)]),
        Step::Ws,
        fork(&[(b"{", "args"), (b"`", "fence"), (b"", "v3-name")]),
        label("v3-name"),
        capture(Field::Name, &[("\n", None)]),
        Step::Ws,
        label("fence"),
        Step::OptLit(Lit::new("```")),
        Step::Word,
        Step::Ws,
        label("args"),
        Step::args(),
        Step::Ws,
        opt("```"),
        Step::Ws,
        lit(CALL_END),
        Step::Dispatch,
        label("next"),
        then(&[
            (CALL_BEGIN, "call"),
            (CALLS_END, "after-section"),
            (EOS, "end"),
        ]),
        label("after-section"),
        then(&[(EOS, "end")]),
        label("end"),
        Step::End,
    ];
    Format::new(name, models, description)
        .opener(Opener::definite(SECTIONS[0], program.clone()))
        .opener(Opener::definite(SECTIONS[1], program))
}

fn mistral_programs() -> (Opener, Opener) {
    let keys = CallKeys::new(&["name"], &["arguments"]).with_id("id");
    let array = Opener::definite(
        "[TOOL_CALLS]",
        vec![
            Step::Ws,
            json(Shape::CallList, keys, false),
            Step::Dispatch,
            Step::End,
        ],
    );
    // Some servers drop `[ARGS]`: `[TOOL_CALLS]NAME{json}` — the object
    // then ends the name (or the id).
    let before_object = |step: Step| match step {
        Step::Capture(mut c) => {
            c.stop = b"{".to_vec();
            Step::Capture(c)
        }
        other => other,
    };
    let compact = Opener::definite(
        "[TOOL_CALLS]",
        vec![
            before_object(capture(
                Field::Name,
                &[("[CALL_ID]", Some("id")), ("[ARGS]", Some("args"))],
            )),
            Step::goto("args"),
            label("id"),
            before_object(capture(Field::Id, &[("[ARGS]", None)])),
            label("args"),
            Step::args(),
            Step::Dispatch,
            Step::End,
        ],
    );
    (array, compact)
}

fn mistral() -> Format {
    let (array, compact) = mistral_programs();
    Format::new(
        "mistral",
        "Mistral v3, Nemo, Mixtral, Codestral",
        "[TOOL_CALLS] [{\"name\", \"arguments\", \"id\"}, ...] (also reads the v11 form)",
    )
    .opener(array)
    .opener(compact)
}

fn mistral_v11() -> Format {
    let (array, compact) = mistral_programs();
    Format::new(
        "mistral-v11",
        "Mistral Small 3.2+, Magistral, Devstral",
        "[TOOL_CALLS]NAME[CALL_ID]ID[ARGS]{json} / [TOOL_CALLS]NAME[ARGS]{json} / \
         [TOOL_CALLS]NAME{json}, no end marker (also reads the array form)",
    )
    .opener(compact)
    .opener(array)
}

/// Every built-in format, in `auto` precedence order.
pub(crate) fn builtin() -> Vec<Format> {
    vec![
        hermes(),
        function_tag(),
        deepseek(
            "deepseek-v3",
            "DeepSeek V3, R1",
            "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME\\n```json {args} ```<｜tool▁call▁end｜>…",
        ),
        deepseek(
            "deepseek-v3.1",
            "DeepSeek V3.1, V3.2-Exp",
            "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{args}<｜tool▁call▁end｜>…",
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
    ]
}
