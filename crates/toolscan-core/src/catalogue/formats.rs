//! The built-in formats, as data: each is a list of openers (a marker and
//! a program of steps) over the same machinery.

use crate::catalogue::build::{
    args_closed_by, capture, fence, fork, json, label, lit, opt, then, wrapped,
};
use crate::catalogue::families;
use crate::lang::format::{
    ByteSet, CallKeys, Capture, Close, Field, Format, Label, Lit, Opener, PyStep, Shape, Step,
    Trim, Trust, ValueStep,
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
         optional <|eom_id|>; built-in tools as <|python_tag|>NAME.call(key=value, …)",
    )
    .opener(Opener::definite(
        "<|python_tag|>",
        vec![
            // A call object, or a built-in tool: `brave_search.call(query="…")`.
            label("call"),
            Step::Ws,
            fork(&[(b"{", "object"), (b"", "builtin")]),
            label("object"),
            json(Shape::Call, keys.clone(), false),
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
    //
    // R1 distills may leave out the first `<｜tool▁call▁begin｜>`:
    // `<｜tool▁calls｜>function<｜tool▁sep｜>NAME…` (a name never begins
    // with `<`).
    let program = vec![
        label("section"),
        Step::Ws,
        Step::OptLit(Lit::new(CALL_BEGIN)),
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

/// How a parameter-style body writes one parameter.
struct Params {
    /// Opens a parameter, up to its key (`<parameter=`).
    open: &'static str,
    /// Ends the key (`>`); what follows, up to the value, is `between`.
    key_end: &'static str,
    /// Steps between the key and the value (a type attribute, a value
    /// tag).
    between: Vec<Step>,
    /// Closes a value (`</parameter>`).
    close: &'static str,
    /// Closes the call's parameters (`</function>`).
    call_close: &'static str,
    /// Closes the block around the call (`</tool_call>`), if a value that
    /// misses both its closer and `call_close` may end there at the end of
    /// the stream: the program goes on at `call-done`, after it.
    outer_close: Option<&'static str>,
    trim: Trim,
    entities: bool,
    /// The text `null` is JSON null whatever the declared type.
    null: bool,
}

impl Params {
    fn new(open: &'static str, key_end: &'static str, close: &'static str) -> Params {
        Params {
            open,
            key_end,
            between: Vec::new(),
            close,
            call_close: "",
            outer_close: None,
            trim: Trim::None,
            entities: false,
            null: false,
        }
    }

    fn between(mut self, steps: Vec<Step>) -> Params {
        self.between = steps;
        self
    }

    fn call_close(mut self, lit: &'static str) -> Params {
        self.call_close = lit;
        self
    }

    fn outer_close(mut self, lit: &'static str) -> Params {
        self.outer_close = Some(lit);
        self
    }

    fn trim(mut self, trim: Trim) -> Params {
        self.trim = trim;
        self
    }

    fn entities(mut self) -> Params {
        self.entities = true;
        self
    }

    fn null(mut self) -> Params {
        self.null = true;
        self
    }

    /// The value of one parameter: its recovery when its closer is missing
    /// is the next parameter's opener (at once) or the call's closer (when
    /// the stream ends: that closer may be part of the value).
    fn value(&self) -> Step {
        let mut v = ValueStep::until(self.close)
            .trim(self.trim)
            .recover(self.open, "param")
            .recover_at_end(self.call_close, "params-done");
        if let Some(outer) = self.outer_close {
            v = v.recover_at_end(outer, "call-done");
        }
        v.entities = self.entities;
        v.null = self.null;
        Step::Value(v)
    }

    /// The parameters up to and including the call's closer: labels
    /// `params` (the loop), `param` (after a parameter's opener) and
    /// `params-done` (after the call's closer). Where the block has its own
    /// closer, it may stand for a missing call closer after the last
    /// parameter: the program goes on at `call-done`, after it.
    fn steps(&self) -> Vec<Step> {
        let mut next = vec![
            (Lit::new(self.open), Label::from("param")),
            (Lit::new(self.call_close), Label::from("params-done")),
        ];
        if let Some(outer) = self.outer_close {
            next.push((Lit::new(outer), Label::from("call-done")));
        }
        let mut v = vec![
            label("params"),
            Step::Ws,
            Step::OneOf(next),
            label("param"),
            Step::key_until(self.key_end),
        ];
        v.extend(self.between.iter().cloned());
        v.extend([self.value(), Step::goto("params"), label("params-done")]);
        v
    }
}

/// An optional type attribute after a parameter's key (` string="true"`,
/// ` type="number"`), then `end`, the end of the parameter's tag.
fn type_attribute(attr: &str, end: &str) -> Vec<Step> {
    let end_first = [end.as_bytes()[0]];
    vec![
        Step::Fork(vec![
            (ByteSet::Bytes(vec![b' ']), Label::from("type")),
            (ByteSet::Bytes(end_first.to_vec()), Label::from("value")),
        ]),
        label("type"),
        lit(attr),
        capture(Field::Type, &[("\"", None)]),
        label("value"),
        lit(end),
    ]
}

/// A name in quotes, `"` or `'`, then `>`: jumps to `after`.
fn quoted_name(after: &'static str) -> Vec<Step> {
    vec![
        fork(&[(b"\"", "dq"), (b"'", "sq")]),
        label("dq"),
        lit("\""),
        capture(Field::Name, &[("\">", Some(after))]),
        label("sq"),
        lit("'"),
        capture(Field::Name, &[("'>", Some(after))]),
    ]
}

/// Qwen3-Coder's body, inside `open`…`close`:
/// `<function=NAME>` `<parameter=KEY>` value `</parameter>` … `</function>`.
/// Strings are written verbatim, so the text `null` is the only way to
/// write null: it is null whatever the schema says.
fn qwen_xml(open: &str, close: &'static str) -> Opener {
    let params = Params::new("<parameter=", ">", "</parameter>")
        .call_close("</function>")
        .outer_close(close)
        .trim(Trim::Newline)
        .null();
    let mut program = vec![
        Step::Ws,
        lit("<function="),
        capture(Field::Name, &[(">", None)]),
    ];
    program.extend(params.steps());
    program.extend([
        Step::Ws,
        lit(close),
        label("call-done"),
        Step::Dispatch,
        Step::End,
    ]);
    Opener::definite(open, program)
}

/// Qwen3-Coder's body without its `<tool_call>` (the models sometimes
/// drop it): `<function=NAME>` parameters `</function>`, then maybe the
/// `</tool_call>` that belongs to it.
fn qwen_bare() -> Opener {
    let params = Params::new("<parameter=", ">", "</parameter>")
        .call_close("</function>")
        .trim(Trim::Newline)
        .null();
    let mut program = vec![capture(Field::Name, &[(">", None)])];
    program.extend(params.steps());
    program.extend([
        Step::Dispatch,
        then(&[("</tool_call>", "end")]),
        label("end"),
        Step::End,
    ]);
    Opener::definite("<function=", program)
}

fn qwen3_coder() -> Format {
    Format::new(
        "qwen3-coder",
        "Qwen3-Coder, Qwen3.5+, Step-3.5, Nemotron-3",
        "<tool_call><function=NAME><parameter=KEY>\\nvalue\\n</parameter>…</function></tool_call>; \
         values are raw text typed by the tools schema; also without <tool_call>",
    )
    .opener(qwen_xml("<tool_call>", "</tool_call>"))
    .opener(qwen_bare())
}

fn seed_oss() -> Format {
    Format::new(
        "seed-oss",
        "ByteDance Seed-OSS",
        "<seed:tool_call><function=NAME><parameter=KEY>value</parameter>…</function></seed:tool_call>",
    )
    .opener(qwen_xml("<seed:tool_call>", "</seed:tool_call>"))
}

/// GLM-4.5 and later: `<tool_call>NAME<arg_key>K</arg_key><arg_value>V</arg_value>…</tool_call>`,
/// with or without newlines between the tags.
fn glm(name: &str, models: &str, description: &str) -> Format {
    let params = Params::new("<arg_key>", "</arg_key>", "</arg_value>")
        .between(vec![Step::Ws, lit("<arg_value>")])
        .call_close("</tool_call>");
    let mut program = vec![capture(
        Field::Name,
        &[
            ("<arg_key>", Some("param")),
            ("</tool_call>", Some("params-done")),
        ],
    )];
    program.extend(params.steps());
    program.extend([Step::Dispatch, Step::End]);
    Format::new(name, models, description).opener(Opener::definite("<tool_call>", program))
}

/// `<invoke name="NAME">` parameters `</invoke>`, then more invokes or
/// `wrapper_close`. A call that fails does not end the group: its bytes
/// are text, and reading goes on at the next invoke (or the end of the
/// failed one, or the group's end).
fn invokes(params: &Params, invoke: &'static str, wrapper_close: &str) -> Vec<Step> {
    let mut program = vec![
        Step::Ws,
        lit(invoke),
        Step::Recover(vec![
            (Lit::new(params.call_close), Label::from("next")),
            (Lit::new(invoke), Label::from("name")),
            (Lit::new(wrapper_close), Label::from("end")),
        ]),
        label("name"),
    ];
    program.extend(quoted_name("named"));
    program.push(label("named"));
    program.extend(params.steps());
    program.extend([
        Step::Dispatch,
        label("next"),
        then(&[(invoke, "name"), (wrapper_close, "end")]),
        label("end"),
        Step::End,
    ]);
    program
}

fn minimax_m2() -> Format {
    let params = Params::new("<parameter name=\"", "\">", "</parameter>").call_close("</invoke>");
    Format::new(
        "minimax-m2",
        "MiniMax-M2",
        "<minimax:tool_call><invoke name=\"NAME\"><parameter name=\"KEY\">value</parameter>…\
         </invoke>…</minimax:tool_call>",
    )
    .opener(Opener::definite(
        "<minimax:tool_call>",
        invokes(&params, "<invoke name=", "</minimax:tool_call>"),
    ))
}

fn claude_xml() -> Format {
    let params = Params::new("<parameter name=\"", "\">", "</parameter>")
        .call_close("</invoke>")
        .entities();
    let mut bare = vec![label("name")];
    bare.extend(quoted_name("named"));
    bare.push(label("named"));
    bare.extend(params.steps());
    bare.extend([Step::Dispatch, Step::End]);
    Format::new(
        "claude-xml",
        "Claude-style prompts and models that imitate them",
        "<function_calls><invoke name=\"NAME\"><parameter name=\"KEY\">value</parameter>…\
         </invoke>…</function_calls>, the wrapper optional",
    )
    .opener(Opener::definite(
        "<function_calls>",
        invokes(&params, "<invoke name=", "</function_calls>"),
    ))
    .opener(Opener::definite("<invoke name=", bare))
}

fn deepseek_v32() -> Format {
    const INVOKE: &str = "<｜DSML｜invoke name=";
    let params = Params::new("<｜DSML｜parameter name=\"", "\"", "</｜DSML｜parameter>")
        .between(type_attribute(" string=\"", ">"))
        .call_close("</｜DSML｜invoke>");
    let mut f = Format::new(
        "deepseek-v3.2",
        "DeepSeek V3.2, V4 (DSML)",
        "<｜DSML｜function_calls><｜DSML｜invoke name=\"NAME\"><｜DSML｜parameter name=\"KEY\" \
         string=\"true|false\">value</｜DSML｜parameter>…</｜DSML｜invoke>…</｜DSML｜function_calls>; \
         also <｜DSML｜tool_calls>",
    );
    for (open, close) in [
        ("<｜DSML｜function_calls>", "</｜DSML｜function_calls>"),
        ("<｜DSML｜tool_calls>", "</｜DSML｜tool_calls>"),
    ] {
        f = f.opener(Opener::definite(open, invokes(&params, INVOKE, close)));
    }
    f
}

fn kimi_k3() -> Format {
    const CALL: &str = "<|open|>call tool=\"";
    const CALL_CLOSE: &str = "<|close|>call<|sep|>";
    const JSON: &str = "<|open|>json type=\"object\"<|sep|>";
    let params = Params::new("<|open|>argument key=\"", "\"", "<|close|>argument<|sep|>")
        .between(type_attribute(" type=\"", "<|sep|>"))
        .call_close(CALL_CLOSE);
    const TOOLS_CLOSE: &str = "<|close|>tools<|sep|>";
    // A call that fails does not end the section (as DeepSeek's).
    let mut program = vec![
        Step::Ws,
        lit(CALL),
        Step::Recover(vec![
            (Lit::new(CALL_CLOSE), Label::from("next")),
            (Lit::new(CALL), Label::from("name")),
            (Lit::new(TOOLS_CLOSE), Label::from("end")),
        ]),
        label("name"),
    ];
    program.extend([
        capture(Field::Name, &[("\"", None)]),
        fork(&[(b" ", "index"), (b"<", "sep")]),
        label("index"),
        lit(" index=\""),
        capture(Field::Discard, &[("\"", None)]),
        label("sep"),
        lit("<|sep|>"),
        // Arguments given to the template as a string are one JSON block.
        Step::Ws,
        Step::OneOf(vec![
            (Lit::new(JSON), Label::from("json")),
            (Lit::new("<|open|>argument key=\""), Label::from("param")),
            (Lit::new(CALL_CLOSE), Label::from("params-done")),
        ]),
    ]);
    program.extend(params.steps());
    program.extend([
        Step::Dispatch,
        label("next"),
        then(&[(CALL, "name"), (TOOLS_CLOSE, "end")]),
        label("end"),
        Step::End,
        label("json"),
        Step::Ws,
        Step::args(),
        Step::Ws,
        lit("<|close|>json<|sep|>"),
        Step::Ws,
        lit(CALL_CLOSE),
        Step::goto("params-done"),
    ]);
    Format::new(
        "kimi-k3",
        "Kimi K3",
        "<|open|>tools<|sep|><|open|>call tool=\"NAME\" index=\"N\"<|sep|><|open|>argument \
         key=\"KEY\" type=\"TYPE\"<|sep|>value<|close|>argument<|sep|>… (or <|open|>json \
         type=\"object\"<|sep|>{json}<|close|>json<|sep|>)<|close|>call<|sep|>…<|close|>tools<|sep|>",
    )
    .opener(Opener::definite("<|open|>tools<|sep|>", program))
    // The message's content is framed: the frame is markup, the content
    // text.
    .opener(Opener::definite(
        "<|open|>response<|sep|>",
        vec![Step::Frame, Step::End],
    ))
    .opener(Opener::definite(
        "<|close|>response<|sep|>",
        vec![Step::Frame, Step::End],
    ))
}

fn step3() -> Format {
    const CALL: &str = "<｜tool_call_begin｜>";
    let params = Params::new("<steptml:parameter name=\"", "\">", "</steptml:parameter>")
        .call_close("</steptml:invoke>")
        .trim(Trim::All);
    const CALL_END: &str = "<｜tool_call_end｜>";
    const CALLS_END: &str = "<｜tool_calls_end｜>";
    // A call that fails does not end the section (as DeepSeek's).
    let mut program = vec![
        Step::Ws,
        lit(CALL),
        Step::Recover(vec![
            (Lit::new(CALL_END), Label::from("next")),
            (Lit::new(CALL), Label::from("call")),
            (Lit::new(CALLS_END), Label::from("end")),
        ]),
        label("call"),
        lit("function"),
        lit("<｜tool_sep｜>"),
        lit("<steptml:invoke name=\""),
        capture(Field::Name, &[("\">", None)]),
    ];
    program.extend(params.steps());
    program.extend([
        Step::Ws,
        lit(CALL_END),
        Step::Dispatch,
        label("next"),
        then(&[(CALL, "call"), (CALLS_END, "end")]),
        label("end"),
        Step::End,
    ]);
    Format::new(
        "step3",
        "StepFun Step-3",
        "<｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke \
         name=\"NAME\"><steptml:parameter name=\"KEY\">value</steptml:parameter>…\
         </steptml:invoke><｜tool_call_end｜>…<｜tool_calls_end｜>",
    )
    .opener(Opener::definite("<｜tool_calls_begin｜>", program))
}

/// `<tool><name>NAME</name><arguments>…</arguments></tool>`: arguments as
/// a JSON object, or as XML children `<KEY>value</KEY>` /
/// `<parameter name="KEY">value</parameter>`.
fn xml_tool() -> Format {
    let child = |close: Close| {
        let mut v = ValueStep::until("</arguments>").entities();
        v.close = close;
        v.recover_at_end = vec![(Lit::new("</arguments>"), Label::from("args-done"))];
        Step::Value(v)
    };
    let program = vec![
        Step::Ws,
        lit("<name>"),
        Step::Definite,
        capture(Field::Name, &[("</name>", None)]),
        Step::Ws,
        lit("<arguments>"),
        Step::Ws,
        fork(&[(b"{", "json"), (b"<", "children")]),
        label("json"),
        Step::args(),
        Step::Ws,
        lit("</arguments>"),
        Step::goto("args-done"),
        label("children"),
        lit("<"),
        fork(&[(b"/", "close-args"), (b"", "child")]),
        label("child"),
        Step::Capture(Capture::until(
            Field::Key,
            vec![
                (Lit::new(">"), Some(Label::from("tag-value"))),
                (Lit::new(" name=\""), Some(Label::from("named"))),
            ],
        )),
        label("named"),
        Step::key_until("\">"),
        child(Close::Lit(Lit::new("</parameter>"))),
        Step::Ws,
        Step::goto("children"),
        label("tag-value"),
        child(Close::KeyTag),
        Step::Ws,
        Step::goto("children"),
        label("close-args"),
        lit("/arguments>"),
        label("args-done"),
        Step::Ws,
        lit("</tool>"),
        Step::Dispatch,
        Step::End,
    ];
    Format::new(
        "xml-tool",
        "LLxprt's generic XML",
        "<tool><name>NAME</name><arguments>{json} | <KEY>value</KEY>… | \
         <parameter name=\"KEY\">value</parameter>…</arguments></tool>",
    )
    .opener(Opener::tentative("<tool>", program))
}

/// Attributes `KEY="value"` / `KEY='value'` up to `>`, which jumps to
/// `gt` (raw values: no entities, nothing trimmed).
fn attributes(gt: &'static str) -> Vec<Step> {
    vec![
        label("attrs"),
        Step::Ws,
        fork(&[(b">", gt), (b"", "attr")]),
        label("attr"),
        Step::key_until("="),
        fork(&[(b"\"", "dq"), (b"'", "sq")]),
        label("dq"),
        lit("\""),
        Step::Value(ValueStep::until("\"")),
        Step::goto("attrs"),
        label("sq"),
        lit("'"),
        Step::Value(ValueStep::until("'")),
        Step::goto("attrs"),
    ]
}

/// LLxprt's `<use NAME k="v">` (an optional `</use>` right after belongs
/// to the call) and `<use_NAME k="v">…</use_NAME>`.
fn use_tag() -> Format {
    let name = || Step::Capture(Capture::before(Field::Name, b" \t\r\n>"));
    let mut plain = vec![name()];
    plain.extend(attributes("gt"));
    plain.extend([
        label("gt"),
        lit(">"),
        Step::Dispatch,
        then(&[("</use>", "end")]),
        label("end"),
        Step::End,
    ]);
    let mut named = vec![name()];
    named.extend(attributes("gt"));
    named.extend([
        label("gt"),
        lit(">"),
        Step::Dispatch,
        then(&[("</use_", "closer")]),
        label("end"),
        Step::End,
        label("closer"),
        capture(Field::Discard, &[(">", Some("end"))]),
    ]);
    Format::new(
        "use-tag",
        "LLxprt",
        "<use NAME KEY=\"value\"…> (optionally </use>) or <use_NAME KEY=\"value\"…></use_NAME>; \
         arguments are attributes",
    )
    .opener(Opener::definite("<use ", plain))
    .opener(Opener::definite("<use_", named))
}

/// LLxprt's Gemini-CLI-style line `✦ tool_call: NAME for KEY VALUE…`: a
/// value is a word, a `"quoted string"` or a JSON object or array; the
/// call ends with its line, or with the stream. `✦ tool_call: NAME` alone
/// is a call without arguments.
fn key_value() -> Format {
    const EOL: &[u8] = b"\r\n";
    let value = |close: Close| Step::Value(ValueStep::closed_by(close));
    let program = vec![
        Step::Blank,
        Step::Capture(Capture::before(Field::Name, b" \t\r\n").or_end()),
        Step::Blank,
        Step::Fork(vec![
            (ByteSet::Bytes(EOL.to_vec()), Label::from("eol")),
            (ByteSet::End, Label::from("eol")),
            (ByteSet::Bytes(b"f".to_vec()), Label::from("for")),
        ]),
        label("for"),
        lit("for"),
        // After `for`, and after each value: the next key, or the end.
        label("next"),
        Step::Blank,
        Step::Fork(vec![
            (ByteSet::Bytes(EOL.to_vec()), Label::from("eol")),
            (ByteSet::End, Label::from("eol")),
            (ByteSet::Any, Label::from("key")),
        ]),
        label("key"),
        Step::Capture(Capture::before(Field::Key, b" \t\r\n")),
        Step::Blank,
        Step::Fork(vec![
            (ByteSet::Bytes(b"\"".to_vec()), Label::from("quoted")),
            (ByteSet::Bytes(b"{[".to_vec()), Label::from("json")),
            (ByteSet::AnyBut(EOL.to_vec()), Label::from("word")),
        ]),
        label("quoted"),
        lit("\""),
        Step::Value(ValueStep::until("\"")),
        Step::goto("next"),
        label("json"),
        value(Close::Balanced),
        Step::goto("next"),
        label("word"),
        value(Close::Space),
        Step::goto("next"),
        label("eol"),
        opt("\r"),
        Step::LitOrEof(Lit::new("\n")),
        Step::Dispatch,
        Step::End,
    ];
    Format::new(
        "key-value",
        "LLxprt (Gemini-CLI style)",
        "✦ tool_call: NAME for KEY VALUE KEY \"quoted value\" KEY {json}…, to the end of the line",
    )
    .opener(Opener::definite("✦ tool_call:", program))
}

/// Autobyteus: `<tool name="NAME"><arguments><arg name="KEY">value</arg>…</arguments></tool>`;
/// an `<arg>` holding `<arg>`s is an object, one holding `<item>`s a list;
/// `__START_CONTENT__`…`__END_CONTENT__` guard a value that holds markup.
fn autobyteus_xml() -> Format {
    let value = |close: &str| {
        Step::Value(
            ValueStep::until(close)
                .trim(Trim::All)
                .entities()
                .nest("<arg name=\"", "object")
                .nest("<item>", "list")
                .guard("__START_CONTENT__", "__END_CONTENT__")
                .recover_at_end("</arguments>", "args-done"),
        )
    };
    let mut program = quoted_name("named");
    program.extend([
        label("named"),
        Step::Ws,
        lit("<arguments>"),
        // After a value: the next argument or item, or the end of an
        // object or list, or of the arguments.
        label("next"),
        Step::Ws,
        Step::OneOf(vec![
            (Lit::new("<arg name=\""), Label::from("arg")),
            (Lit::new("<item>"), Label::from("item")),
            (Lit::new("</arg>"), Label::from("up")),
            (Lit::new("</item>"), Label::from("up")),
            (Lit::new("</arguments>"), Label::from("args-done")),
        ]),
        label("arg"),
        Step::key_until("\">"),
        value("</arg>"),
        Step::goto("next"),
        label("item"),
        value("</item>"),
        Step::goto("next"),
        label("object"),
        Step::Open(false),
        Step::goto("arg"),
        label("list"),
        Step::Open(true),
        Step::goto("item"),
        label("up"),
        Step::CloseOpen,
        Step::goto("next"),
        label("args-done"),
        Step::Ws,
        lit("</tool>"),
        Step::Dispatch,
        Step::End,
    ]);
    Format::new(
        "autobyteus-xml",
        "Autobyteus",
        "<tool name=\"NAME\"><arguments><arg name=\"KEY\">value</arg>…</arguments></tool>; \
         nested <arg> objects, <item> lists, __START_CONTENT__ guards; values trimmed, XML \
         entities decoded",
    )
    .opener(Opener::definite("<tool name=", program))
}

/// A call in Python keyword notation after its name: `NAME(k=v, …)`.
fn py_call(step: PyStep) -> Vec<Step> {
    vec![
        capture(Field::Name, &[("(", None)]),
        Step::Py(step),
        Step::Dispatch,
    ]
}

/// A bracketed list of Python calls, `[f(a=1), g(b='x')]`, from its `[`:
/// each call is dispatched as soon as its `)` is read. A bad element is
/// text, and the list reads on after it.
fn py_list() -> Vec<Step> {
    [
        vec![
            lit("["),
            Step::RecoverElement(b",]".to_vec(), Label::from("sep")),
            label("call"),
            Step::Ws,
        ],
        py_call(PyStep::keywords()),
        vec![
            label("sep"),
            Step::Ws,
            Step::OneOf(vec![
                (Lit::new(","), Label::from("call")),
                (Lit::new("]"), Label::from("listed")),
            ]),
            label("listed"),
        ],
    ]
    .concat()
}

/// Llama 3.2 / Llama 4 and ToolACE: a Python list of calls, bare or
/// between Llama 4's `<|python_start|>` and `<|python_end|>`.
fn pythonic() -> Format {
    let mut wrapped = vec![Step::Ws];
    wrapped.extend(py_list());
    wrapped.extend([then(&[("<|python_end|>", "end")]), label("end"), Step::End]);
    let mut bare = py_list();
    bare.push(Step::End);
    Format::new(
        "pythonic",
        "Llama 3.2, Llama 4, ToolACE",
        "[NAME(key=value, …), …] with Python literals; also between <|python_start|> and \
         <|python_end|>",
    )
    .opener(Opener::definite("<|python_start|>", wrapped))
    .opener(Opener::bare("[", bare))
}

/// Olmo 3: calls one per line between `<function_calls>` and
/// `</function_calls>`; JSON's literals are allowed besides Python's.
fn olmo3() -> Format {
    // A call that fails does not end the block: its line is text, and
    // reading goes on at the next line.
    let mut program = vec![
        Step::Recover(vec![
            (Lit::new("\n"), Label::from("line")),
            (Lit::new("</function_calls>"), Label::from("end")),
        ]),
        label("call"),
        Step::Ws,
    ];
    program.extend(py_call(PyStep::keywords().json_literals()));
    program.extend([
        label("line"),
        Step::Ws,
        Step::Fork(vec![
            (ByteSet::Bytes(b"<".to_vec()), Label::from("close")),
            // (The stream ended between lines.)
            (ByteSet::End, Label::from("end")),
            (ByteSet::Any, Label::from("call")),
        ]),
        label("close"),
        lit("</function_calls>"),
        label("end"),
        Step::End,
    ]);
    Format::new(
        "olmo3",
        "Olmo 3",
        "<function_calls>NAME(key=value, …)\\nNAME(…)</function_calls>; Python or JSON literals",
    )
    .opener(Opener::definite("<function_calls>", program))
}

/// LFM2: a Python list of calls between `<|tool_call_start|>` and
/// `<|tool_call_end|>`; a list of JSON call objects (`[{"name": …,
/// "arguments": {…}}]`, what LFM2 writes when its prompt asks for JSON) is
/// read too.
fn lfm2() -> Format {
    let keys = CallKeys::new(&["name"], &["arguments", "parameters"]);
    let mut program = vec![
        Step::Ws,
        lit("["),
        Step::Ws,
        fork(&[(b"{", "objects"), (b"", "call")]),
        // A bad element of either list is text, and the list reads on.
        label("objects"),
        Step::RecoverElement(b",]".to_vec(), Label::from("object-sep")),
        label("object"),
        json(Shape::Call, keys, false),
        Step::Dispatch,
        label("object-sep"),
        Step::Ws,
        Step::OneOf(vec![
            (Lit::new(","), Label::from("next-object")),
            (Lit::new("]"), Label::from("listed")),
        ]),
        label("next-object"),
        Step::Ws,
        Step::goto("object"),
        label("call"),
        Step::Ws,
    ];
    // LFM2 writes JSON's literals (`true`, `null`) as well as Python's.
    program.push(Step::RecoverElement(b",]".to_vec(), Label::from("sep")));
    program.extend(py_call(PyStep::keywords().json_literals()));
    program.extend([
        label("sep"),
        Step::Ws,
        Step::OneOf(vec![
            (Lit::new(","), Label::from("call")),
            (Lit::new("]"), Label::from("listed")),
        ]),
        label("listed"),
        then(&[("<|tool_call_end|>", "end")]),
        label("end"),
        Step::End,
    ]);
    Format::new(
        "lfm2",
        "LFM2, LFM2.5",
        "<|tool_call_start|>[NAME(key=value, …), …]<|tool_call_end|>, Python or JSON literals; \
         also a list of JSON call objects",
    )
    .opener(Opener::definite("<|tool_call_start|>", program))
}

/// Gemma 3's community convention: calls one per line in a ` ```tool_code `
/// fence. Other fences are text. `auto` leaves it out: its marker, a code
/// fence, is Hermes' too, and sharing it would change how Hermes' fences
/// read.
fn gemma_tool_code() -> Format {
    // A call that fails is text up to the end of its line (brackets and
    // strings followed: a newline inside them is the call's), and the next
    // line is read.
    let mut program = vec![
        lit("tool_code"),
        Step::Definite,
        Step::RecoverElement(b"\n`".to_vec(), Label::from("line")),
        label("call"),
        Step::Ws,
    ];
    // A name that a line end ends is no call: the `(` it lacks fails there.
    let mut name = capture(Field::Name, &[("(", Some("args"))]);
    if let Step::Capture(c) = &mut name {
        c.stop = b"\n".to_vec();
    }
    program.extend([
        name,
        lit("("),
        label("args"),
        Step::Py(PyStep::keywords()),
        Step::Dispatch,
        label("line"),
        Step::Ws,
        Step::Fork(vec![
            (ByteSet::Bytes(b"`".to_vec()), Label::from("close")),
            (ByteSet::End, Label::from("end")),
            (ByteSet::Any, Label::from("call")),
        ]),
        label("close"),
        Step::LitOrEof(Lit::new("```")),
        label("end"),
        Step::End,
    ]);
    Format::new(
        "gemma-tool-code",
        "Gemma 3 (community template)",
        "```tool_code\\nNAME(key=value, …)\\n``` — one call per line",
    )
    .opener(Opener::tentative("```", program).with_trust(Trust::Bare))
}

/// `OPEN call:NAME{key:value,…} CLOSE`, strings between two `delimiter`s
/// (FunctionGemma, Gemma 4).
fn gemma_call(open: &str, close: &str, delimiter: &str) -> Opener {
    Opener::definite(
        open,
        vec![
            lit("call:"),
            capture(Field::Name, &[("{", None)]),
            Step::Py(PyStep::bare_keys(delimiter)),
            Step::Ws,
            lit(close),
            Step::Dispatch,
            Step::End,
        ],
    )
}

fn functiongemma() -> Format {
    Format::new(
        "functiongemma",
        "FunctionGemma",
        "<start_function_call>call:NAME{key:<escape>text<escape>,key:1}<end_function_call>",
    )
    .opener(gemma_call(
        "<start_function_call>",
        "<end_function_call>",
        "<escape>",
    ))
}

fn gemma4() -> Format {
    Format::new(
        "gemma4",
        "Gemma 4",
        "<|tool_call>call:NAME{key:<|\"|>text<|\"|>,key:1}<tool_call|>",
    )
    .opener(gemma_call("<|tool_call>", "<tool_call|>", "<|\"|>"))
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
        qwen3_coder(),
        seed_oss(),
        glm(
            "glm45",
            "GLM-4.5, GLM-4.6",
            "<tool_call>NAME\\n<arg_key>KEY</arg_key>\\n<arg_value>value</arg_value>…</tool_call>",
        ),
        glm(
            "glm47",
            "GLM-4.7, GLM-5",
            "<tool_call>NAME<arg_key>KEY</arg_key><arg_value>value</arg_value>…</tool_call>",
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
