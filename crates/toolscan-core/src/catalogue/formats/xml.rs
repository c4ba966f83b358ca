//! Formats whose arguments are parameters in XML-like tags: Qwen3-Coder, Seed-OSS, GLM, MiniMax-M2, Claude-style XML, DeepSeek V3.2, Kimi K3, Step 3, `<tool>`/`<use>` tags, key–value lines, Autobyteus XML.

use crate::catalogue::shorthand::{
    capture, fork, framed, label, lit, opt, prefer, styled, then, writes,
};
use crate::lang::format::{
    ByteSet, Capture, Close, Container, Field, Format, Hint, Label, Lit, Opener, Step, Style, Trim,
    TypeWords, ValueStep,
};
use crate::lang::hint::PyValues;

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
    /// Opens the next call in the same block (`<function=`), if one may
    /// stand where a parameter or the call's closer is due (the call's
    /// closer is missing): the call ends before it, and the program goes
    /// on at `next-call`, which dispatches it (`DispatchBefore`).
    next_call: Option<&'static str>,
    trim: Trim,
    entities: bool,
    /// The text `null` is JSON null whatever the declared type.
    null: bool,
    /// Rendering: the whitespace written before each parameter and before
    /// the call's closer, and the hint of each value.
    ws: &'static str,
    value_hint: Option<Step>,
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
            next_call: None,
            trim: Trim::None,
            entities: false,
            null: false,
            ws: "",
            value_hint: None,
        }
    }

    fn ws(mut self, ws: &'static str) -> Params {
        self.ws = ws;
        self
    }

    fn value_hint(mut self, hint: Step) -> Params {
        self.value_hint = Some(hint);
        self
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

    fn next_call(mut self, lit: &'static str) -> Params {
        self.next_call = Some(lit);
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
        if let Some(call) = self.next_call {
            next.push((Lit::new(call), Label::from("next-call")));
        }
        let mut v = vec![label("params")];
        if !self.ws.is_empty() {
            v.push(writes(self.ws));
        }
        v.extend([
            Step::Ws,
            Step::OneOf(next),
            label("param"),
            Step::key_until(self.key_end),
        ]);
        v.extend(self.between.iter().cloned());
        v.extend(self.value_hint.clone());
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
///
/// Rendered as the templates write it: each tag on a line of its own, a
/// newline between two calls; `padded`: a value between newlines
/// (Qwen3-Coder), else not (Seed-OSS).
///
/// A block may hold several calls, each its own `<function=…>`
/// (Qwen's reference parser reads every one): `<function=` after a call's
/// `</function>`, or where a parameter or `</function>` is due (the
/// `</function>` missing), ends the call before it and begins the next.
fn qwen_xml(open: &str, close: &'static str, padded: bool) -> Opener {
    const FUNCTION: &str = "<function=";
    let mut params = Params::new("<parameter=", ">", "</parameter>")
        .call_close("</function>")
        .outer_close(close)
        .next_call(FUNCTION)
        .trim(Trim::Newline)
        .null()
        .ws("\n");
    // Qwen3-Coder's templates print booleans and null with `|string`
    // (`True`, `None`), lists and objects as JSON; Seed-OSS's print every
    // value that way (`{'a': True}`).
    params = params.value_hint(if padded {
        styled(Style {
            python: PyValues::Scalars,
            ..Style::default()
        })
    } else {
        Step::Render(Hint {
            write: Some(String::new()),
            ..Hint::style(Style {
                python: PyValues::All,
                ..Style::default()
            })
        })
    });
    let mut program = vec![
        writes("\n"),
        Step::Ws,
        lit(FUNCTION),
        label("call-name"),
        capture(Field::Name, &[(">", None)]),
    ];
    program.extend(params.steps());
    program.extend([
        writes("\n"),
        Step::Ws,
        Step::OneOf(vec![
            (Lit::new(close), Label::from("call-done")),
            (Lit::new(FUNCTION), Label::from("next-call")),
        ]),
        label("call-done"),
        Step::Dispatch,
        writes("\n"),
        Step::End,
        label("next-call"),
        Step::DispatchBefore(Lit::new(FUNCTION)),
        Step::goto("call-name"),
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

pub(super) fn qwen3_coder() -> Format {
    let f = Format::new(
        "qwen3-coder",
        "Qwen3-Coder, Qwen3.5+, Step-3.5, Nemotron-3",
        "<tool_call><function=NAME><parameter=KEY>\\nvalue\\n</parameter>…</function></tool_call>; \
         values are raw text typed by the tools schema; also without <tool_call>",
    )
    .opener(qwen_xml("<tool_call>", "</tool_call>", true))
    .opener(qwen_bare());
    // Qwen3-Coder's templates write a blank line between the content and
    // the first call.
    framed(f, "", "\n\n", "", "")
}

pub(super) fn seed_oss() -> Format {
    let f = Format::new(
        "seed-oss",
        "ByteDance Seed-OSS",
        "<seed:tool_call><function=NAME><parameter=KEY>value</parameter>…</function></seed:tool_call>",
    )
    .opener(qwen_xml("<seed:tool_call>", "</seed:tool_call>", false));
    // A blank line between the content and the first call.
    framed(f, "", "\n\n", "", "")
}

/// GLM-4.5 and later: `<tool_call>NAME<arg_key>K</arg_key><arg_value>V</arg_value>…</tool_call>`,
/// with or without newlines between the tags.
///
/// `ws` is what the template writes between the tags (GLM-4.5/4.6 a
/// newline, GLM-4.7 nothing), and between two calls.
pub(super) fn glm(name: &str, models: &str, description: &str, ws: &'static str) -> Format {
    let mut between = vec![Step::Ws, lit("<arg_value>")];
    if !ws.is_empty() {
        between.insert(0, writes(ws));
    }
    let params = Params::new("<arg_key>", "</arg_key>", "</arg_value>")
        .between(between)
        .call_close("</tool_call>")
        .ws(ws);
    // GLM-4.5/4.6 write a newline after the name too (tried first).
    let after_name = format!("{ws}<arg_key>");
    let after_bare = format!("{ws}</tool_call>");
    let mut delims = vec![
        ("<arg_key>", Some("param")),
        ("</tool_call>", Some("params-done")),
    ];
    if !ws.is_empty() {
        delims.insert(0, (after_bare.as_str(), Some("params-done")));
        delims.insert(0, (after_name.as_str(), Some("param")));
    }
    let mut program = vec![capture(Field::Name, &delims)];
    program.extend(params.steps());
    program.extend([Step::Dispatch, writes(ws), Step::End]);
    let f = Format::new(name, models, description).opener(Opener::definite("<tool_call>", program));
    // The templates close an empty reasoning block before the turn's text
    // (GLM-4.5/4.6 on lines of their own, GLM-4.7 a bare `</think>`).
    if ws.is_empty() {
        framed(f, "</think>", "", "", "")
    } else {
        framed(f, "\n<think></think>\n", ws, "", "")
    }
}

/// `<invoke name="NAME">` parameters `</invoke>`, then more invokes or
/// `wrapper_close`. A call that fails does not end the group: its bytes
/// are text, and reading goes on at the next invoke (or the end of the
/// failed one, or the group's end).
///
/// Rendered with each tag on a line of its own (MiniMax-M2's and DeepSeek
/// V3.2's templates).
fn invokes(params: &Params, invoke: &'static str, wrapper_close: &str) -> Vec<Step> {
    let closer = format!("\n{wrapper_close}");
    let mut program = vec![
        writes("\n"),
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
        writes(&closer),
        then(&[(invoke, "name"), (wrapper_close, "end")]),
        label("end"),
        Step::End,
    ]);
    program
}

pub(super) fn minimax_m2() -> Format {
    let params = Params::new("<parameter name=\"", "\">", "</parameter>")
        .call_close("</invoke>")
        .ws("\n");
    let f = Format::new(
        "minimax-m2",
        "MiniMax-M2",
        "<minimax:tool_call><invoke name=\"NAME\"><parameter name=\"KEY\">value</parameter>…\
         </invoke>…</minimax:tool_call>",
    )
    .opener(Opener::definite(
        "<minimax:tool_call>",
        invokes(&params, "<invoke name=", "</minimax:tool_call>"),
    ));
    // A newline before the first call, after the content or not.
    framed(f, "", "\n", "\n", "")
}

pub(super) fn claude_xml() -> Format {
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

pub(super) fn deepseek_v32() -> Format {
    const INVOKE: &str = "<｜DSML｜invoke name=";
    let mut between = type_attribute(" string=\"", ">");
    // `string="true"` for a string, `"false"` for any other value.
    between.insert(
        3,
        styled(Style {
            types: TypeWords::Bool,
            ..Style::default()
        }),
    );
    let params = Params::new("<｜DSML｜parameter name=\"", "\"", "</｜DSML｜parameter>")
        .between(between)
        .call_close("</｜DSML｜invoke>")
        .ws("\n");
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
    // A blank line before the first call, after the content or not.
    framed(f, "", "\n\n", "\n\n", "")
}

/// The end of a marker that is framing only where the stream ends: the
/// block is dropped there (`frame`), and anything after it makes it text
/// (`text`, an empty tentative block: silently).
fn framing_at_end() -> Vec<Step> {
    vec![
        Step::Fork(vec![
            (ByteSet::End, Label::from("frame")),
            (ByteSet::Any, Label::from("text")),
        ]),
        label("text"),
        Step::End,
        label("frame"),
        Step::Frame,
        Step::End,
    ]
}

/// What Kimi K3 writes.
const KIMI_K3: &str =
    "<|open|>tools<|sep|><|open|>call tool=\"NAME\" index=\"N\"<|sep|><|open|>argument \
     key=\"KEY\" type=\"TYPE\"<|sep|>value<|close|>argument<|sep|>… (or <|open|>json \
     type=\"object\"<|sep|>{json}<|close|>json<|sep|>)<|close|>call<|sep|>…<|close|>tools<|sep|>; \
     a call after the section ended (a think block or prose between two calls) is read on its own";

// No frame: its template frames the turn in markup the reader drops (a
// closed think, a response frame), and the renderer writes only a frame
// that reads back as text.
pub(super) fn kimi_k3() -> Format {
    const CALL: &str = "<|open|>call tool=\"";
    const CALL_CLOSE: &str = "<|close|>call<|sep|>";
    const JSON: &str = "<|open|>json type=\"object\"<|sep|>";
    const TOOLS_CLOSE: &str = "<|close|>tools<|sep|>";
    // A call whose `<|close|>call<|sep|>` is missing ends where the
    // section's close (`call-done`) or the next call's opener
    // (`next-call`) stands in its place.
    let params = Params::new("<|open|>argument key=\"", "\"", "<|close|>argument<|sep|>")
        .between(type_attribute(" type=\"", "<|sep|>"))
        .call_close(CALL_CLOSE)
        .outer_close(TOOLS_CLOSE)
        .next_call(CALL);
    let missing_close = || {
        [
            (Lit::new(TOOLS_CLOSE), Label::from("call-done")),
            (Lit::new(CALL), Label::from("next-call")),
        ]
    };
    // From the call's name on: what the section and a call on its own
    // share. A call that fails does not end the section (as DeepSeek's).
    let mut call = vec![
        Step::Recover(vec![
            (Lit::new(CALL_CLOSE), Label::from("next")),
            (Lit::new(CALL), Label::from("name")),
            (Lit::new(TOOLS_CLOSE), Label::from("end")),
        ]),
        label("name"),
        capture(Field::Name, &[("\"", None)]),
        fork(&[(b" ", "index"), (b"<", "sep")]),
        label("index"),
        lit(" index=\""),
        capture(Field::Ordinal, &[("\"", None)]),
        label("sep"),
        lit("<|sep|>"),
        // Arguments given to the template as a string are one JSON block;
        // no arguments, nothing (the order a rendering tries them in).
        Step::Ws,
        prefer("param"),
        Step::OneOf(
            [
                (Lit::new(CALL_CLOSE), Label::from("params-done")),
                (Lit::new(JSON), Label::from("json")),
                (Lit::new("<|open|>argument key=\""), Label::from("param")),
            ]
            .into_iter()
            .chain(missing_close())
            .collect(),
        ),
    ];
    call.extend(params.steps());
    call.extend([
        Step::Dispatch,
        label("next"),
        writes(TOOLS_CLOSE),
        then(&[(CALL, "name"), (TOOLS_CLOSE, "end")]),
        label("end"),
        Step::End,
        label("json"),
        Step::Ws,
        Step::args(),
        Step::Ws,
        lit("<|close|>json<|sep|>"),
        Step::Ws,
        Step::OneOf(
            [(Lit::new(CALL_CLOSE), Label::from("params-done"))]
                .into_iter()
                .chain(missing_close())
                .collect(),
        ),
        label("call-done"),
        Step::Dispatch,
        Step::End,
        label("next-call"),
        Step::DispatchBefore(Lit::new(CALL)),
        Step::goto("name"),
    ]);
    kimi_k3_framed(call, CALL)
}

/// Kimi K3 from its program from a call's name on (`call`, after the call
/// opener `call_open`): the call section, a call on its own, the framing
/// of the content, as its template frames a turn with calls.
fn kimi_k3_framed(call: Vec<Step>, call_open: &str) -> Format {
    let mut section = vec![Step::Ws, lit(call_open)];
    section.extend(call.iter().cloned());
    let end_of_msg = framing_at_end();
    let f = Format::new("kimi-k3", "Kimi K3", KIMI_K3)
        .opener(Opener::definite("<|open|>tools<|sep|>", section))
        // A call after the section's end: a think block or prose between two
        // calls ends the section, and the next call is read on its own.
        .opener(Opener::definite(call_open, call))
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
        .opener(Opener::tentative(
            "<|close|>message<|sep|>",
            kimi_k3_message_close(),
        ))
        .opener(Opener::tentative("<|end_of_msg|>", end_of_msg));
    // The template closes the (empty) think block and frames the content
    // as the response, closed before the calls, whether there is content
    // or not.
    const RESPONSE_CLOSE: &str = "<|close|>response<|sep|>";
    framed(
        f,
        "<|close|>think<|sep|><|open|>response<|sep|>",
        RESPONSE_CLOSE,
        RESPONSE_CLOSE,
        "",
    )
}

/// Kimi K3's message close, which ends the completion: framing like the
/// response's, there only (`<|end_of_msg|>` may follow it). Before
/// anything else it is text, silently (a tentative block).
fn kimi_k3_message_close() -> Vec<Step> {
    let mut message_close = vec![
        Step::Fork(vec![
            (ByteSet::End, Label::from("frame")),
            (ByteSet::Bytes(b"<".to_vec()), Label::from("end-of-msg")),
            (ByteSet::Any, Label::from("text")),
        ]),
        label("end-of-msg"),
        Step::OneOf(vec![(Lit::new("<|end_of_msg|>"), Label::from("after"))]),
        label("after"),
    ];
    message_close.extend(framing_at_end());
    message_close
}

pub(super) fn step3() -> Format {
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
pub(super) fn xml_tool() -> Format {
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
        writes(" "),
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
pub(super) fn use_tag() -> Format {
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
pub(super) fn key_value() -> Format {
    const EOL: &[u8] = b"\r\n";
    let value = |close: Close| Step::Value(ValueStep::closed_by(close));
    let program = vec![
        writes(" "),
        Step::Blank,
        Step::Capture(Capture::before(Field::Name, b" \t\r\n").or_end()),
        writes(" "),
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
        writes(" "),
        Step::Blank,
        Step::Fork(vec![
            (ByteSet::Bytes(EOL.to_vec()), Label::from("eol")),
            (ByteSet::End, Label::from("eol")),
            (ByteSet::Any, Label::from("key")),
        ]),
        label("key"),
        Step::Capture(Capture::before(Field::Key, b" \t\r\n")),
        writes(" "),
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
        writes(""),
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
pub(super) fn autobyteus_xml() -> Format {
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
        Step::Open(Container::Object),
        Step::goto("arg"),
        label("list"),
        Step::Open(Container::List),
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
