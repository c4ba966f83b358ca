//! Turning a checked description into a [`Format`]: each opener becomes a
//! marker and a program of [`Step`]s, written the way the built-in formats
//! write theirs, so that a description of a built-in format compiles to
//! the built-in's very program.
//!
//! Where whitespace is allowed follows one rule: optional whitespace before
//! every part of a call (prefix, arguments, between, close) except
//!
//! - a name read `until` a literal, which trims whitespace itself;
//! - the first part of a `bare` opener, whose marker is the first byte of
//!   the JSON;
//! - parameters, whose loop allows whitespace before each parameter.
//!
//! A name read `before` some characters gets whitespace before it too:
//! those characters usually include whitespace, which would otherwise end
//! the name before it begins.

use crate::lang::format::{
    Capture, Field, Format, JsonStep, Label, Lit, Opener, Shape, Step, ValueStep,
};

use super::description::{ArgumentsDesc, Description, NameAt, OpenerDesc, OpenerSpec, ParamsDesc};

/// The format a description describes.
pub(crate) fn format(d: &Description) -> Format {
    let mut f = d.openers.iter().fold(
        Format::new(&d.name, &d.models, &d.description),
        |f, (_, o)| f.opener(compile_opener(o)),
    );
    f.results = d.results.clone();
    f.alone = Default::default();
    f
}

/// One opener: compiled from its parts, or its program as written.
pub(crate) fn compile_opener(o: &OpenerSpec) -> Opener {
    match o {
        OpenerSpec::Parts(parts) => opener(parts),
        OpenerSpec::Program(opener) => opener.clone(),
    }
}

/// A literal, ASCII-case-insensitive if `ci`.
fn lit(s: &str, ci: bool) -> Lit {
    if ci {
        Lit::ci(s)
    } else {
        Lit::new(s)
    }
}

/// One opener's marker and program.
fn opener(d: &OpenerDesc) -> Opener {
    let bare = d.trust == crate::lang::format::Trust::Bare;
    let repeats = !d.separators.is_empty() || !d.terminators.is_empty();
    let mut p = Vec::new();
    if !d.separators.is_empty() {
        // Where the call after a separator begins.
        p.push(Step::label("call"));
    }
    // With parameters and a close, the prefix opens each call: a block
    // may hold several (see `next_call`).
    let next_call = match (&d.prefix, &d.arguments, &d.close) {
        (Some(prefix), ArgumentsDesc::Params(_), Some(_)) => Some(prefix.as_str()),
        _ => None,
    };
    if let Some(prefix) = &d.prefix {
        p.extend([Step::Ws, Step::lit(prefix)]);
        if next_call.is_some() {
            p.push(Step::label("call-name"));
        }
    }
    match &d.name_at {
        Some(NameAt::Until(delim)) => p.push(Step::name_until(delim)),
        Some(NameAt::Before(stop)) => {
            p.extend([Step::Ws, Step::Capture(Capture::before(Field::Name, stop))])
        }
        None => {}
    }
    if let Some(between) = &d.between {
        p.extend([Step::Ws, Step::lit(between)]);
    }
    match &d.arguments {
        ArgumentsDesc::Object { lenient } => {
            p.extend([Step::Ws, json(Shape::Args, Default::default(), *lenient)]);
        }
        ArgumentsDesc::Call {
            keys,
            lenient,
            list,
        } => {
            if !bare {
                p.push(Step::Ws);
            }
            let shape = if *list { Shape::CallList } else { Shape::Call };
            p.push(json(shape, keys.clone(), *lenient));
        }
        ArgumentsDesc::Params(params) => {
            p.extend(params_steps(params, d.close.as_deref(), next_call))
        }
    }
    if let Some(close) = &d.close {
        let close = lit(close, d.case_insensitive);
        p.push(Step::Ws);
        p.push(match next_call {
            Some(prefix) => Step::OneOf(vec![
                (close, Label::from("call-done")),
                (Lit::new(prefix), Label::from("next-call")),
            ]),
            None => Step::Lit(close),
        });
        if matches!(d.arguments, ArgumentsDesc::Params(_)) {
            p.push(Step::label("call-done"));
        }
    }
    p.push(Step::Dispatch);
    p.extend(after_dispatch(d, repeats, bare, next_call));
    let mut o = match d.trust {
        crate::lang::format::Trust::Bare => Opener::bare(&d.open, p),
        trust => Opener::definite(&d.open, p).with_trust(trust),
    };
    if d.case_insensitive {
        o = o.case_insensitive();
    }
    if d.line_start {
        o = o.at_line_start();
    }
    o
}

/// The steps after a call's dispatch: the separators to the next call or
/// the terminators (`repeats`), else the block's end; and the next call
/// that the prefix of a call with parameters begins (`next_call`).
fn after_dispatch(d: &OpenerDesc, repeats: bool, bare: bool, next_call: Option<&str>) -> Vec<Step> {
    let mut p = Vec::new();
    if repeats {
        let again = if bare { "next" } else { "call" };
        let opts = d
            .separators
            .iter()
            .map(|s| (Lit::new(s), Label::from(again)))
            .chain(
                d.terminators
                    .iter()
                    .map(|s| (Lit::new(s), Label::from("end"))),
            )
            .collect();
        p.extend([Step::Then(opts), Step::label("end"), Step::End]);
        if bare && !d.separators.is_empty() {
            // The marker began the first call; the next one begins after
            // the separator and whitespace.
            p.extend([Step::label("next"), Step::Ws, Step::goto("call")]);
        }
    } else {
        p.push(Step::End);
    }
    if let Some(prefix) = next_call {
        // The next call's prefix ends the call before it.
        p.extend([
            Step::label("next-call"),
            Step::DispatchBefore(Lit::new(prefix)),
            Step::goto("call-name"),
        ]);
    }
    p
}

/// A JSON step.
fn json(shape: Shape, keys: crate::lang::format::CallKeys, lenient: bool) -> Step {
    let j = JsonStep::new(shape, keys);
    Step::Json(if lenient { j.lenient() } else { j })
}

/// The parameter loop, up to and including the parameters' end: labels
/// `params` (the loop), `param` (after a parameter's opening tag) and
/// `params-done` (after the end). A value whose closing tag is missing
/// ends at the next parameter's opening tag; at the end of the stream, at
/// the parameters' end, or at the call's `close` (then the program goes on
/// at `call-done`, after it). The call's `close` right after a parameter
/// also stands for a missing parameters' end, and so does `next_call`,
/// the prefix of the next call in the block (the program goes on at
/// `next-call`).
fn params_steps(d: &ParamsDesc, call_close: Option<&str>, next_call: Option<&str>) -> Vec<Step> {
    let mut value = ValueStep::until(&d.close)
        .trim(d.trim)
        .recover(&d.open, "param")
        .recover_at_end(&d.end, "params-done");
    if let Some(close) = call_close {
        value = value.recover_at_end(close, "call-done");
    }
    if d.entities {
        value = value.entities();
    }
    if d.null {
        value = value.null();
    }
    let mut next = vec![
        (Lit::new(&d.open), Label::from("param")),
        (Lit::new(&d.end), Label::from("params-done")),
    ];
    if let Some(close) = call_close {
        // The call's close after the last parameter: the parameters' end
        // is missing.
        next.push((Lit::new(close), Label::from("call-done")));
    }
    if let Some(call) = next_call {
        next.push((Lit::new(call), Label::from("next-call")));
    }
    let mut v = vec![
        Step::label("params"),
        Step::Ws,
        Step::OneOf(next),
        Step::label("param"),
        Step::key_until(&d.key_end),
    ];
    if let Some(start) = &d.value_start {
        v.extend([Step::Ws, Step::lit(start)]);
    }
    v.extend([
        Step::Value(value),
        Step::goto("params"),
        Step::label("params-done"),
    ]);
    v
}
