//! Formats that write calls in Python-like notation: pythonic lists, OLMo 3, LFM2, Gemma's `tool_code` and its `call:` notation.

use crate::catalogue::shorthand::{capture, fork, json, label, lit, prefer, styled, then, writes};
use crate::lang::format::{
    ByteSet, CallKeys, ElementEnd, Field, Format, Label, Lit, Opener, PyStep, Shape, Step, Style,
    Trust,
};
/// A call in Python keyword notation after its name: `NAME(k=v, …)`.
fn py_call(step: PyStep) -> Vec<Step> {
    vec![
        capture(Field::Name, &[("(", None)]),
        Step::Py(step),
        Step::Dispatch,
    ]
}

/// [`py_call`], its arguments rendered in `style`.
fn py_call_styled(step: PyStep, style: Style) -> Vec<Step> {
    let mut call = py_call(step);
    // The hint just before the `py` step, after the name.
    call.insert(1, styled(style));
    call
}

/// A bracketed list of Python calls, `[f(a=1), g(b='x')]`, from its `[`:
/// each call is dispatched as soon as its `)` is read. A bad element is
/// text, and the list reads on after it. Its values are rendered in
/// `style`.
fn py_list(style: Style) -> Vec<Step> {
    [
        vec![
            lit("["),
            Step::RecoverElement(ElementEnd::new(b",]", "sep")),
            label("call"),
            Step::Ws,
        ],
        py_call_styled(PyStep::keywords(), style),
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
pub(super) fn pythonic() -> Format {
    let mut wrapped = vec![Step::Ws];
    wrapped.extend(py_list(Style::default()));
    wrapped.extend([then(&[("<|python_end|>", "end")]), label("end"), Step::End]);
    // Rendered as Llama 4's template writes a call turn: the bare list
    // (the first opener is the one a rendering tries first), strings in
    // double quotes.
    let mut bare = py_list(Style {
        quote: '"',
        ..Style::default()
    });
    bare.push(Step::End);
    Format::new(
        "pythonic",
        "Llama 3.2, Llama 4, ToolACE",
        "[NAME(key=value, …), …] with Python literals; also between <|python_start|> and \
         <|python_end|>",
    )
    .opener(Opener::bare("[", bare))
    .opener(Opener::definite("<|python_start|>", wrapped))
}

/// Olmo 3: calls one per line between `<function_calls>` and
/// `</function_calls>`; JSON's literals are allowed besides Python's.
pub(super) fn olmo3() -> Format {
    // A call that fails does not end the block: its line is text, and
    // reading goes on at the next line.
    let mut program = vec![
        Step::Recover(vec![
            (Lit::new("\n"), Label::from("line")),
            (Lit::new("</function_calls>"), Label::from("end")),
        ]),
        // The template writes each call on a line of its own.
        writes("\n"),
        label("call"),
        Step::Ws,
    ];
    // Its template writes a value that is not a string with `tojson`.
    program.extend(py_call_styled(
        PyStep::keywords().json_literals(),
        Style {
            json_values: true,
            ..Style::default()
        },
    ));
    program.extend([
        label("line"),
        writes("\n"),
        Step::Ws,
        prefer("call"),
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
pub(super) fn lfm2() -> Format {
    let keys = CallKeys::new(&["name"], &["arguments", "parameters"]);
    let mut program = vec![
        Step::Ws,
        lit("["),
        Step::Ws,
        fork(&[(b"{", "objects"), (b"", "call")]),
        // A bad element of either list is text, and the list reads on.
        label("objects"),
        Step::RecoverElement(ElementEnd::new(b",]", "object-sep")),
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
    program.push(Step::RecoverElement(ElementEnd::new(b",]", "sep")));
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
pub(super) fn gemma_tool_code() -> Format {
    // A call that fails is text up to the end of its line (brackets and
    // strings followed: a newline inside them is the call's), and the next
    // line is read.
    let mut program = vec![
        lit("tool_code"),
        Step::Definite,
        Step::RecoverElement(ElementEnd::new(b"\n`", "line")),
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
///
/// `sorted`: the template writes the keys sorted (Gemma 4's iterates the
/// arguments with `dictsort`).
fn gemma_call(open: &str, close: &str, delimiter: &str, sorted: bool) -> Opener {
    let style = Style {
        item_sep: ",".into(),
        sort_keys: sorted,
        ..Style::default()
    };
    Opener::definite(
        open,
        vec![
            lit("call:"),
            capture(Field::Name, &[("{", None)]),
            styled(style),
            Step::Py(PyStep::bare_keys(delimiter)),
            Step::Ws,
            lit(close),
            Step::Dispatch,
            Step::End,
        ],
    )
}

pub(super) fn functiongemma() -> Format {
    Format::new(
        "functiongemma",
        "FunctionGemma",
        "<start_function_call>call:NAME{key:<escape>text<escape>,key:1}<end_function_call>",
    )
    .opener(gemma_call(
        "<start_function_call>",
        "<end_function_call>",
        "<escape>",
        false,
    ))
}

pub(super) fn gemma4() -> Format {
    Format::new(
        "gemma4",
        "Gemma 4",
        "<|tool_call>call:NAME{key:<|\"|>text<|\"|>,key:1}<tool_call|>",
    )
    .opener(gemma_call("<|tool_call>", "<tool_call|>", "<|\"|>", true))
}
