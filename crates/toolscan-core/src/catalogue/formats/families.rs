//! The built-in formats of model families whose calls are JSON inside their
//! own markers (Granite, Phi-4-mini, InternLM, Jamba, MiniMax-M1, Cohere,
//! xLAM, Apertus, Nemotron, GigaChat), and the formats framed by message
//! headers or recipient lines (Harmony, Functionary v3.2, Kimi K2) — data
//! over the same machinery as every other format.

use crate::catalogue::shorthand::{
    capture, fence, fork, framed, json, label, lit, opt, prefer, styled, then, wrapped_spaced,
    writes,
};
use crate::lang::format::{
    ByteSet, CallKeys, Capture, Field, Format, Label, Lit, Opener, Shape, Step, Style, Trim, Trust,
    ValueStep,
};

/// `{"name", "arguments"}` (or `parameters`).
fn name_args() -> CallKeys {
    CallKeys::new(&["name"], &["arguments", "parameters"])
}

/// A list of call objects (or one) after optional whitespace, then
/// `close`: each call is dispatched as soon as its object closes.
fn list_closed_by(close: &str, keys: CallKeys) -> Vec<Step> {
    list_in_style_closed_by(None, close, keys)
}

/// [`list_closed_by`], the list rendered in `style` (if given).
fn list_in_style_closed_by(style: Option<Style>, close: &str, keys: CallKeys) -> Vec<Step> {
    [Step::Ws]
        .into_iter()
        .chain(style.map(styled))
        .chain([
            json(Shape::CallList, keys, false),
            Step::Ws,
            lit(close),
            Step::Dispatch,
            Step::End,
        ])
        .collect()
}

pub(crate) fn granite() -> Format {
    let list = || {
        vec![
            Step::Ws,
            fork(&[(b"[", "list")]),
            label("list"),
            // vLLM's Granite template writes `json.dumps(indent=4)`.
            styled(Style {
                indent: Some(4),
                ..Style::default()
            }),
            json(Shape::CallList, name_args(), false),
            Step::Dispatch,
            Step::End,
        ]
    };
    Format::new(
        "granite",
        "IBM Granite 3.x, Granite-20B-FunctionCalling",
        "<|tool_call|>[{\"name\", \"arguments\"}, …] (3.0) or <tool_call>[…] (3.1–3.3), no end \
         marker; <function_call> {json} per call (20B-FC)",
    )
    .opener(Opener::definite("<|tool_call|>", list()))
    .opener(Opener::definite("<tool_call>", list()))
    .opener(Opener::definite(
        "<function_call>",
        vec![
            label("call"),
            Step::Ws,
            json(Shape::Call, name_args(), false),
            Step::Dispatch,
            then(&[("<function_call>", "call")]),
            Step::End,
        ],
    ))
}

pub(crate) fn phi4_mini() -> Format {
    // `functools[`: the `[` is the list's own; the marker is read again as
    // the body's first bytes. Prose about Python's `functools` module has
    // no `[` after the word, and a `[` that holds no call is text.
    let opener = Opener {
        trust: Trust::Tentative,
        replay: true,
        ..Opener::definite(
            "functools[",
            vec![
                lit("functools"),
                json(Shape::CallList, name_args(), false),
                Step::Dispatch,
                Step::End,
            ],
        )
    };
    Format::new(
        "phi4-mini",
        "Phi-4-mini, FireFunction v2",
        "functools[{\"name\", \"arguments\"}, …]",
    )
    .opener(opener)
}

pub(crate) fn internlm() -> Format {
    Format::new(
        "internlm",
        "InternLM2, InternLM2.5, Intern-S1",
        "<|action_start|><|plugin|>{\"name\", \"parameters\"}<|action_end|>",
    )
    .opener(wrapped_spaced(
        "<|action_start|><|plugin|>",
        Lit::new("<|action_end|>"),
        // (Rendered with `arguments`, as the template writes it.)
        &CallKeys::new(&["name"], &["arguments", "parameters"]),
        Trust::Definite,
        ["\n", "", ""],
    ))
}

pub(crate) fn jamba() -> Format {
    let mut program = vec![Step::Ws, fork(&[(b"[", "list")]), label("list")];
    program.extend(list_closed_by("</tool_calls>", name_args()));
    Format::new(
        "jamba",
        "Jamba 1.5, Hunyuan-A13B",
        "<tool_calls>[{\"name\", \"arguments\"}, …]</tool_calls>",
    )
    .opener(Opener::definite("<tool_calls>", program))
}

pub(crate) fn minimax_m1() -> Format {
    Format::new(
        "minimax-m1",
        "MiniMax-M1, MiniMax-Text-01",
        "<tool_calls>, one {\"name\", \"arguments\"} per line, </tool_calls>",
    )
    .opener(Opener::definite(
        "<tool_calls>",
        vec![
            writes("\n"),
            Step::Ws,
            // A line that fails does not end the block: it is text, and
            // reading goes on at the next line.
            Step::Recover(vec![
                (Lit::new("\n"), Label::from("line")),
                (Lit::new("</tool_calls>"), Label::from("end")),
            ]),
            label("call"),
            json(Shape::Call, name_args(), false),
            Step::Dispatch,
            label("line"),
            writes("\n"),
            Step::Ws,
            Step::Fork(vec![
                (ByteSet::Bytes(b"{".to_vec()), Label::from("call")),
                (ByteSet::Bytes(b"<".to_vec()), Label::from("close")),
                // (The stream ended between lines.)
                (ByteSet::End, Label::from("end")),
            ]),
            label("close"),
            lit("</tool_calls>"),
            label("end"),
            Step::End,
        ],
    ))
}

/// Cohere's call objects: `tool_name`, `parameters`; `tool_call_id` is a
/// hint only (ids are minted); the pseudo-tool `directly-answer` means no
/// tool.
fn cohere_keys() -> CallKeys {
    let mut keys = CallKeys::new(&["tool_name"], &["parameters"]).with_no_call("directly-answer");
    keys.other.push("tool_call_id".into());
    keys
}

pub(crate) fn command_r() -> Format {
    // Rendered as the official template writes it: `json` on the fence's
    // line, the list indented by 4 (`tojson(indent=4)`).
    let program = vec![
        writes("json"),
        Step::Word,
        writes("\n"),
        Step::Ws,
        styled(Style {
            indent: Some(4),
            ..Style::default()
        }),
        json(Shape::CallList, cohere_keys(), false),
        Step::Ws,
        Step::LitOrEof(Lit::new("```")),
        Step::Dispatch,
        Step::End,
    ];
    // The official template puts the fence on the next line, and the
    // action on a line of its own.
    let f = Format::new(
        "command-r",
        "Cohere Command R, R+",
        "Action: ```json [{\"tool_name\", \"parameters\"}, …] ``` (or one object; the fence \
         may start the next line)",
    )
    .opener(Opener::tentative("Action:\n```", program.clone()))
    .opener(Opener::tentative("Action: ```", program));
    framed(f, "", "\n", "\n", "\n")
}

pub(crate) fn command_r7b() -> Format {
    let f = Format::new(
        "command-r7b",
        "Cohere Command R7B, Command A",
        "<|START_ACTION|>[{\"tool_call_id\", \"tool_name\", \"parameters\"}, …]<|END_ACTION|> \
         (or one object); <|START_RESPONSE|>…<|END_RESPONSE|> and <|START_TEXT|>…<|END_TEXT|> \
         frame text",
    )
    .opener(Opener::definite(
        "<|START_ACTION|>",
        // The template writes a call a line, each with its place as
        // `tool_call_id`.
        list_in_style_closed_by(
            Some(Style {
                lines: Some(4),
                ordinal: Some("tool_call_id".into()),
                ..Style::default()
            }),
            "<|END_ACTION|>",
            cohere_keys(),
        ),
    ));
    // The template closes an empty reasoning block before the calls.
    let f = framed(f, "<|START_THINKING|><|END_THINKING|>", "", "", "");
    // The answer is framed (Command A's newer templates write `TEXT` for
    // `RESPONSE`): the frame is markup, the content text.
    [
        "<|START_RESPONSE|>",
        "<|END_RESPONSE|>",
        "<|START_TEXT|>",
        "<|END_TEXT|>",
    ]
    .into_iter()
    .fold(f, |f, frame| {
        f.opener(Opener::definite(frame, vec![Step::Frame, Step::End]))
    })
}

pub(crate) fn xlam() -> Format {
    let list = vec![
        json(Shape::CallList, name_args(), false),
        Step::Dispatch,
        Step::End,
    ];
    Format::new(
        "xlam",
        "Salesforce xLAM",
        "a bare JSON list [{\"name\", \"arguments\"}, …], or fenced",
    )
    .opener(Opener::bare("[", list))
    .opener(Opener {
        trust: Trust::Bare,
        ..fence(Shape::CallList, &name_args(), Trust::Bare)
    })
}

pub(crate) fn apertus() -> Format {
    Format::new(
        "apertus",
        "Swiss AI Apertus",
        "<|tools_prefix|>[{\"NAME\": {arguments}}, …]<|tools_suffix|>",
    )
    .opener(Opener::definite(
        "<|tools_prefix|>",
        list_closed_by("<|tools_suffix|>", CallKeys::keyed()),
    ))
}

pub(crate) fn nemotron() -> Format {
    let f = Format::new(
        "nemotron",
        "Llama-3.x-Nemotron",
        "<TOOLCALL>[{\"name\", \"arguments\"}, …]</TOOLCALL> (or one object)",
    )
    .opener(Opener::definite(
        "<TOOLCALL>",
        list_closed_by("</TOOLCALL>", name_args()),
    ));
    // A newline between the content and the calls.
    framed(f, "", "\n", "", "")
}

pub(crate) fn gigachat3() -> Format {
    const HEADER: &str = "function call<|role_sep|>";
    let call = || {
        vec![
            writes("\n"),
            Step::Ws,
            json(Shape::Call, name_args(), false),
            Step::Dispatch,
            then(&[("</s>", "end")]),
            label("end"),
            Step::End,
        ]
    };
    let mut after_sep = vec![writes("\n\n"), Step::Ws, lit(HEADER)];
    after_sep.extend(call());
    Format::new(
        "gigachat3",
        "GigaChat 3",
        "<|message_sep|>function call<|role_sep|>{\"name\", \"arguments\"} (the separator is \
         left out at the start of the completion), or <|function_call|>{json}",
    )
    // The message separator belongs to the call only when a call follows.
    // Without content before it, the completion starts with the header.
    .opener(Opener::tentative("<|message_sep|>", after_sep))
    .opener(Opener::stream_start({
        let mut v = vec![lit(HEADER)];
        v.extend(call());
        v
    }))
    .opener(Opener::definite("<|function_call|>", call()))
}

pub(crate) fn functionary_v32() -> Format {
    // The prompt ends with `>>>`: the completion begins with a recipient,
    // a function name (a call: `NAME\n{json}`) or `all` (text follows);
    // later recipients come after `>>>`. Recipient lines are markup.
    //
    // A call's arguments are a JSON object, or, for a tool such as
    // `python`, raw code up to the next recipient: the value of the tool's
    // one string parameter.
    let program = vec![
        label("recipient"),
        Step::Capture(
            Capture::until(Field::Name, vec![(Lit::new("\n"), None)]).keyword("all", "text"),
        ),
        Step::Ws,
        fork(&[(b"{", "json"), (b"", "code")]),
        label("json"),
        Step::args(),
        Step::Dispatch,
        Step::End,
        label("code"),
        Step::StringParam("code".into()),
        Step::Value(ValueStep::until(">>>").trim(Trim::All).or_end()),
        Step::Dispatch,
        Step::Fork(vec![
            (ByteSet::End, Label::from("end")),
            (ByteSet::Any, Label::from("recipient")),
        ]),
        label("end"),
        Step::End,
        label("text"),
        Step::Frame,
        Step::End,
    ];
    Format::new(
        "functionary-v3.2",
        "MeetKai Functionary v3.2",
        "recipient lines: NAME\\n{json} for a call, all\\n before text; later ones after >>> \
         (the completion starts with one)",
    )
    .opener(Opener::stream_start(program.clone()))
    // `>>>` is everywhere in prose and code (a Python prompt, quoted mail,
    // merge conflicts): like a bare `{`, it is left out of `auto`.
    .opener(Opener::tentative(">>>", program).with_trust(Trust::Bare))
}

/// Harmony's message from its `<|channel|>` on (see [`harmony`]).
fn harmony_channel() -> Vec<Step> {
    const MESSAGE: &str = "<|message|>";
    // The header of a message: which channel, then (for a call) the
    // recipient and the content type. Headers are markup; a message that
    // is not a call leaves its content as text (reasoning, for the
    // `analysis` channel with reasoning separation on).
    vec![
        label("channel"),
        Step::OneOf(vec![
            (Lit::new("analysis"), Label::from("analysis")),
            (Lit::new("final"), Label::from("text")),
            (Lit::new("commentary"), Label::from("commentary")),
        ]),
        label("commentary"),
        fork(&[(b"<", "text"), (b" ", "to")]),
        label("to"),
        lit(" to="),
        opt("functions."),
        Step::Capture(Capture::before(Field::Name, b" <")),
        // The content type: `<|constrain|>json`, a bare word (`json`, as
        // the HF template writes it), or none — the recipient may go
        // straight to `<|message|>`.
        label("content-type"),
        // Rendered as gpt-oss's template writes it: ` json<|message|>`.
        writes(" "),
        Step::Blank,
        prefer("type-word"),
        fork(&[(b"<", "constrain-or-message"), (b"", "type-word")]),
        label("constrain-or-message"),
        Step::OneOf(vec![
            (Lit::new("<|constrain|>"), Label::from("type-word")),
            (Lit::new(MESSAGE), Label::from("message")),
        ]),
        label("type-word"),
        writes("json"),
        Step::Word,
        lit(MESSAGE),
        label("message"),
        Step::Ws,
        Step::args(),
        Step::Dispatch,
        // `<|call|>` is a stop token, often stripped.
        writes("<|call|>"),
        then(&[("<|call|>", "end")]),
        label("end"),
        Step::End,
        label("analysis"),
        lit(MESSAGE),
        Step::Frame,
        Step::Reasoning(true),
        Step::End,
        label("text"),
        lit(MESSAGE),
        Step::Frame,
        Step::End,
    ]
}

pub(crate) fn harmony() -> Format {
    let channel = harmony_channel();
    // `<|start|>assistant`, the recipient maybe in the role part, then the
    // channel.
    let role_to = || {
        vec![
            label("role-to"),
            lit(" to="),
            opt("functions."),
            Step::Capture(Capture::before(Field::Name, b" <")),
            lit("<|channel|>"),
            // A recipient and a channel: Harmony's markup, at the start of
            // the stream too (a failure from here on is reported).
            Step::Definite,
            writes("commentary"),
            Step::Capture(Capture::before(Field::Discard, b" <")),
            Step::goto("content-type"),
        ]
    };
    let mut start = vec![
        lit("assistant"),
        fork(&[(b"<", "to-channel"), (b" ", "role-to")]),
    ];
    start.extend(role_to());
    start.extend([label("to-channel"), lit("<|channel|>")]);
    start.extend(channel.clone());
    // The prompt ends with `<|start|>assistant`: the completion may begin
    // with the recipient of the role part (` to=functions.NAME<|channel|>…`).
    let mut stream_start = vec![fork(&[(b" ", "role-to")])];
    stream_start.extend(role_to());
    stream_start.extend(channel.clone());
    let end_of_message = vec![Step::Frame, Step::Reasoning(false), Step::End];
    Format::new(
        "harmony",
        "gpt-oss",
        "<|start|>assistant<|channel|>commentary to=functions.NAME <|constrain|>json<|message|>\
         {json}<|call|>; other channels' headers are markup, their content text (analysis: \
         reasoning)",
    )
    // (The stream's start first: a rendering of calls alone writes them
    // as gpt-oss's template does, the recipient in the role part.)
    .opener(Opener::stream_start(stream_start))
    .opener(Opener::definite("<|channel|>", channel))
    .opener(Opener::definite("<|start|>", start))
    .opener(Opener::definite("<|end|>", end_of_message.clone()))
    .opener(Opener::definite("<|return|>", end_of_message.clone()))
    .opener(Opener::definite("<|call|>", end_of_message))
}

pub(crate) fn kimi_k2() -> Format {
    const CALL_BEGIN: &str = "<|tool_call_begin|>";
    const CALL_END: &str = "<|tool_call_end|>";
    const SECTION_END: &str = "<|tool_calls_section_end|>";
    // A call that fails does not end the section (as DeepSeek's).
    let program = vec![
        Step::Ws,
        lit(CALL_BEGIN),
        Step::Recover(vec![
            (Lit::new(CALL_END), Label::from("next")),
            (Lit::new(CALL_BEGIN), Label::from("call")),
            (Lit::new(SECTION_END), Label::from("end")),
        ]),
        label("call"),
        capture(Field::NamedId, &[("<|tool_call_argument_begin|>", None)]),
        Step::Ws,
        Step::args(),
        Step::Ws,
        lit(CALL_END),
        Step::Dispatch,
        label("next"),
        writes(SECTION_END),
        then(&[(CALL_BEGIN, "call"), (SECTION_END, "end")]),
        label("end"),
        Step::End,
    ];
    Format::new(
        "kimi-k2",
        "Kimi K2, K2-Thinking, K2.5, K2.6",
        "<|tool_calls_section_begin|><|tool_call_begin|>functions.NAME:IDX\
         <|tool_call_argument_begin|>{json}<|tool_call_end|>…<|tool_calls_section_end|>; the id \
         functions.NAME:IDX is kept",
    )
    .opener(Opener::definite("<|tool_calls_section_begin|>", program))
}
