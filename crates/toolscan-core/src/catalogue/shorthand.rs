//! The shorthands the built-in formats are written with: steps and
//! openers that many of them share (a literal, a capture with its
//! delimiters, a fork on bytes, a JSON call wrapped in two literals, a code
//! fence). Formats from files do not use them: they are a convenience of
//! the catalogue.

use crate::lang::format::{
    ByteSet, CallKeys, Capture, Field, Format, Hint, JsonStep, Label, Lit, Opener, Shape, Step,
    Style, Trust,
};
use crate::lang::hint::Frame;

/// A rendering hint: the next step writes `s` (see [`Hint::write`]).
pub(crate) fn writes(s: &str) -> Step {
    Step::Render(Hint::write(s))
}

/// A rendering hint: the next choice tries `label` first.
pub(crate) fn prefer(label: &'static str) -> Step {
    Step::Render(Hint::prefer(label))
}

/// `f` with how its templates frame a turn with calls (see [`Frame`]):
/// what they write before the text, between the text and the first call,
/// before the first call when there is no text, and after the last call
/// (`""`: nothing). The hint opens the first opener's program.
pub(crate) fn framed(
    mut f: Format,
    before: &str,
    text_sep: &str,
    lead: &str,
    tail: &str,
) -> Format {
    let some = |s: &str| (!s.is_empty()).then(|| s.to_owned());
    let frame = Frame {
        before: some(before),
        text_sep: some(text_sep),
        lead: some(lead),
        tail: some(tail),
    };
    if let Some(o) = f.openers.first_mut() {
        o.program.insert(0, Step::Render(Hint::frame(frame)));
    }
    f
}

/// A rendering hint: how the next value step spells values.
pub(crate) fn styled(style: Style) -> Step {
    Step::Render(Hint::style(style))
}

pub(crate) fn lit(s: &str) -> Step {
    Step::Lit(Lit::new(s))
}

pub(crate) fn opt(s: &str) -> Step {
    Step::OptLit(Lit::new(s))
}

pub(crate) fn json(shape: Shape, keys: CallKeys, lenient: bool) -> Step {
    Step::Json(JsonStep {
        shape,
        keys,
        lenient,
    })
}

pub(crate) fn capture(field: Field, delims: &[(&str, Option<&'static str>)]) -> Step {
    Step::Capture(Capture::until(
        field,
        delims
            .iter()
            .map(|&(d, j)| (Lit::new(d), j.map(Label::from)))
            .collect(),
    ))
}

pub(crate) fn label(name: &'static str) -> Step {
    Step::label(name)
}

pub(crate) fn fork(alts: &[(&[u8], &'static str)]) -> Step {
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
pub(crate) fn args_closed_by(close: &str) -> Vec<Step> {
    vec![
        Step::Ws,
        Step::args(),
        Step::Ws,
        lit(close),
        Step::Dispatch,
        Step::End,
    ]
}

pub(crate) fn then(opts: &[(&str, &'static str)]) -> Step {
    Step::Then(
        opts.iter()
            .map(|&(l, j)| (Lit::new(l), Label::from(j)))
            .collect(),
    )
}

/// `OPEN` json-call `CLOSE`.
pub(crate) fn wrapped(open: &str, close: Lit, keys: &CallKeys, trust: Trust) -> Opener {
    wrapped_spaced(open, close, keys, trust, ["", "", ""])
}

/// `OPEN` json-call `CLOSE`, rendered with `ws[0]` after `OPEN`, `ws[1]`
/// before `CLOSE` and `ws[2]` between two such blocks.
pub(crate) fn wrapped_spaced(
    open: &str,
    close: Lit,
    keys: &CallKeys,
    trust: Trust,
    ws: [&str; 3],
) -> Opener {
    let hint = |s: &str, step: Step| {
        if s.is_empty() {
            vec![step]
        } else {
            vec![writes(s), step]
        }
    };
    Opener {
        marker: Lit {
            bytes: open.as_bytes().to_vec(),
            case_insensitive: close.case_insensitive,
        },
        line_start: false,
        stream_start: false,
        trust,
        replay: false,
        program: [
            hint(ws[0], Step::Ws),
            vec![json(Shape::Call, keys.clone(), false)],
            hint(ws[1], Step::Ws),
            vec![Step::Lit(close), Step::Dispatch],
            hint(ws[2], Step::End),
        ]
        .concat(),
    }
}

/// ` ``` ` info-word, a JSON value of `shape`, closing fence (or the end of
/// the stream).
pub(crate) fn fence(shape: Shape, keys: &CallKeys, trust: Trust) -> Opener {
    Opener {
        marker: Lit::new("```"),
        line_start: false,
        stream_start: false,
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
