//! The program form of an opener: its steps written out one by one, each
//! JSON step mirroring one [`Step`], so that any format — every built-in
//! one included — can be described. Jumps name labels, as in Rust.
//!
//! A step is a string (`"ws"`) or an object whose *kind* key names it
//! (`{"lit": "</call>"}`) with modifiers beside it. Lists are never empty
//! (leave an optional one out). A kind this build does not know is an
//! error naming the step: a step added to the format language needs one
//! arm here (and one in `write.rs`).

use serde_json::Value;

use super::fields::Obj;
use crate::error::{child, FormatFileError};
use crate::lang::format::{
    ByteSet, CallKeys, Capture, Close, Field, JsonStep, Label, Lit, PyStep, PyStrings, Shape, Step,
    Trim, ValueStep,
};

/// Steps written as a bare string.
const WORDS: &[&str] = &[
    "ws",
    "blank",
    "word",
    "dispatch",
    "definite",
    "close_open",
    "frame",
    "end",
];

/// Kind keys of steps written as an object.
const KINDS: &[&str] = &[
    "label",
    "goto",
    "lit",
    "opt_lit",
    "lit_or_end",
    "capture",
    "json",
    "value",
    "container",
    "fork",
    "then",
    "one_of",
    "recover",
    "recover_element",
    "reasoning",
    "string_param",
    "py",
];

/// Reads a `program` array.
pub(crate) fn read_program(v: &Value, at: &str) -> Result<Vec<Step>, FormatFileError> {
    let items = match v {
        Value::Array(items) if !items.is_empty() => items,
        _ => {
            return Err(FormatFileError::new(
                at,
                "must be a non-empty array of steps",
            ))
        }
    };
    items
        .iter()
        .enumerate()
        .map(|(i, s)| step(s, &child(at, &i.to_string())))
        .collect()
}

/// One step.
fn step(v: &Value, at: &str) -> Result<Step, FormatFileError> {
    if let Value::String(word) = v {
        return Ok(match word.as_str() {
            "ws" => Step::Ws,
            "blank" => Step::Blank,
            "word" => Step::Word,
            "dispatch" => Step::Dispatch,
            "definite" => Step::Definite,
            "close_open" => Step::CloseOpen,
            "frame" => Step::Frame,
            "end" => Step::End,
            other => {
                return Err(FormatFileError::new(
                    at,
                    format!(
                        "unknown step {other:?}; expected one of {}, or an object with one of {}",
                        WORDS.join(", "),
                        KINDS.join(", ")
                    ),
                ))
            }
        });
    }
    let o = Obj::new(v, at.to_owned())?;
    // `recover` is a step of its own and also a modifier of `value`.
    // (`recover_element` names its label with `goto`.)
    let kinds: Vec<&str> = if o.has("value") {
        vec!["value"]
    } else if o.has("recover_element") {
        vec!["recover_element"]
    } else {
        KINDS.iter().copied().filter(|k| o.has(k)).collect()
    };
    let kind = match kinds.as_slice() {
        [k] => *k,
        [] => {
            let reason = match o.first_key() {
                Some(k) => format!(
                    "unknown step kind {k:?}; expected one of {}",
                    KINDS.join(", ")
                ),
                None => format!("empty step; expected one of {}", KINDS.join(", ")),
            };
            return Err(FormatFileError::new(at, reason));
        }
        [a, b, ..] => {
            return Err(o.err(b, format!("a step has one kind; this one is already `{a}`")))
        }
    };
    let jumps = |key: &str| -> Result<Vec<(Lit, Label)>, FormatFileError> {
        let list = o.get(key).unwrap_or(&Value::Null);
        jump_list(list, &o.at(key))
    };
    Ok(match kind {
        "label" | "goto" => {
            o.only(&[kind])?;
            let l = Label::from(o.need_lit(kind)?.to_owned());
            if kind == "label" {
                Step::Label(l)
            } else {
                Step::Goto(l)
            }
        }
        "lit" | "opt_lit" | "lit_or_end" => {
            o.only(&[kind])?;
            let l = lit(o.get(kind).unwrap_or(&Value::Null), &o.at(kind))?;
            match kind {
                "lit" => Step::Lit(l),
                "opt_lit" => Step::OptLit(l),
                _ => Step::LitOrEof(l),
            }
        }
        "capture" => capture(&o)?,
        "json" => json(&o)?,
        "value" => value(&o)?,
        "container" => {
            o.only(&["container"])?;
            match o.choice("container", &["object", "list"])? {
                Some("list") => Step::Open(true),
                _ => Step::Open(false),
            }
        }
        "fork" => {
            o.only(&["fork"])?;
            Step::Fork(fork(o.get("fork").unwrap_or(&Value::Null), &o.at("fork"))?)
        }
        "then" => {
            o.only(&["then"])?;
            Step::Then(jumps("then")?)
        }
        "reasoning" => {
            o.only(&["reasoning"])?;
            Step::Reasoning(o.flag("reasoning")?)
        }
        "string_param" => {
            o.only(&["string_param"])?;
            Step::StringParam(o.need_lit("string_param")?.to_owned())
        }
        "py" => py(&o)?,
        "one_of" => {
            o.only(&["one_of"])?;
            Step::OneOf(jumps("one_of")?)
        }
        "recover_element" => {
            o.only(&["recover_element", "goto"])?;
            let ends = o.need_lit("recover_element")?.as_bytes().to_vec();
            Step::RecoverElement(ends, Label::from(o.need_lit("goto")?.to_owned()))
        }
        _ => {
            o.only(&["recover"])?;
            Step::Recover(jumps("recover")?)
        }
    })
}

/// A literal: a non-empty string, or `{"text": …, "case_insensitive":
/// true}`.
pub(crate) fn lit(v: &Value, at: &str) -> Result<Lit, FormatFileError> {
    match v {
        Value::String(s) if !s.is_empty() => Ok(Lit::new(s)),
        Value::Object(_) => {
            let o = Obj::new(v, at.to_owned())?;
            o.only(&["text", "case_insensitive"])?;
            let text = o.need_lit("text")?;
            Ok(if o.flag("case_insensitive")? {
                Lit::ci(text)
            } else {
                Lit::new(text)
            })
        }
        _ => Err(FormatFileError::new(
            at,
            "must be a literal: a non-empty string or {\"text\": …, \"case_insensitive\": true}",
        )),
    }
}

/// A list of `{"lit": LITERAL, "goto": LABEL}`.
fn jump_list(v: &Value, at: &str) -> Result<Vec<(Lit, Label)>, FormatFileError> {
    let items = match v {
        Value::Array(items) if !items.is_empty() => items,
        _ => {
            return Err(FormatFileError::new(
                at,
                "must be a non-empty array of {\"lit\": …, \"goto\": …}",
            ))
        }
    };
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let o = Obj::new(item, child(at, &i.to_string()))?;
            o.only(&["lit", "goto"])?;
            let l = lit(o.get("lit").unwrap_or(&Value::Null), &o.at("lit"))?;
            Ok((l, Label::from(o.need_lit("goto")?.to_owned())))
        })
        .collect()
}

/// `{"capture": FIELD, "until": [LITERAL | {"lit", "goto"}…], "before":
/// CHARACTERS, "at_end": true}`.
fn capture(o: &Obj<'_>) -> Result<Step, FormatFileError> {
    o.only(&["capture", "until", "before", "at_end", "keywords"])?;
    let field = match o.choice(
        "capture",
        &["name", "id", "discard", "key", "type", "named_id"],
    )? {
        Some("id") => Field::Id,
        Some("named_id") => Field::NamedId,
        Some("discard") => Field::Discard,
        Some("key") => Field::Key,
        Some("type") => Field::Type,
        _ => Field::Name,
    };
    let mut delims = Vec::new();
    if let Some(until) = o.get("until") {
        let at = o.at("until");
        let items = match until {
            Value::Array(items) if !items.is_empty() => items,
            _ => {
                return Err(o.err(
                    "until",
                    "must be a non-empty array of literals or {\"lit\", \"goto\"}",
                ))
            }
        };
        for (i, item) in items.iter().enumerate() {
            let here = child(&at, &i.to_string());
            match item {
                Value::Object(m) if m.contains_key("lit") => {
                    let d = Obj::new(item, here)?;
                    d.only(&["lit", "goto"])?;
                    let l = lit(d.get("lit").unwrap_or(&Value::Null), &d.at("lit"))?;
                    let to = d.lit("goto")?.map(|g| Label::from(g.to_owned()));
                    delims.push((l, to));
                }
                _ => delims.push((lit(item, &here)?, None)),
            }
        }
    }
    let stop = o.str("before")?.unwrap_or("").as_bytes().to_vec();
    if delims.is_empty() && stop.is_empty() {
        return Err(FormatFileError::new(
            o.path(),
            "a capture needs `until` (literals that end the word) or `before` (characters that do)",
        ));
    }
    let mut c = Capture::before(field, &stop);
    c.delims = delims;
    c.at_end = o.flag("at_end")?;
    if let Some(list) = o.get("keywords") {
        for (l, to) in jump_list(list, &o.at("keywords"))? {
            let word = String::from_utf8_lossy(&l.bytes).into_owned();
            c = c.keyword(&word, to);
        }
    }
    Ok(Step::Capture(c))
}

/// `{"py": "keywords" | "bare_keys", "strings": "quoted" | LITERAL,
/// "python_literals": BOOL, "json_literals": BOOL}`: Python-like call
/// arguments.
fn py(o: &Obj<'_>) -> Result<Step, FormatFileError> {
    o.only(&["py", "strings", "python_literals", "json_literals"])?;
    let mut step = match o.choice("py", &["keywords", "bare_keys"])? {
        Some("bare_keys") => PyStep::bare_keys("\""),
        _ => PyStep::keywords(),
    };
    match o.get("strings") {
        None => {}
        Some(Value::String(s)) if s == "quoted" => step.strings = PyStrings::Quoted,
        Some(v) => step.strings = PyStrings::Delimited(lit(v, &o.at("strings"))?),
    }
    if o.has("python_literals") {
        step.python_literals = o.flag("python_literals")?;
    }
    if o.has("json_literals") {
        step.json_literals = o.flag("json_literals")?;
    }
    Ok(Step::Py(step))
}

/// The keys of a call object, from `name_keys`, `argument_keys`, `id_key`,
/// `function_key`, `other_keys`, `text_key` (defaults: [`CallKeys::default`]).
pub(crate) fn call_keys(o: &Obj<'_>) -> Result<CallKeys, FormatFileError> {
    let mut keys = if o.flag("keyed")? {
        CallKeys::keyed()
    } else {
        CallKeys::default()
    };
    if let Some(k) = o.lits("name_keys")? {
        keys.name = k;
    }
    if let Some(k) = o.lits("argument_keys")? {
        keys.args = k;
    }
    if let Some(k) = o.lit("id_key")? {
        keys = keys.with_id(k);
    }
    if let Some(k) = o.lit("function_key")? {
        keys = keys.with_function(k);
    }
    if let Some(k) = o.lit("text_key")? {
        keys = keys.with_text(k);
    }
    if let Some(k) = o.lits("no_call_names")? {
        keys.no_call = k;
    }
    if let Some(k) = o.get("other_keys") {
        keys.other = match k {
            Value::Array(a) if a.is_empty() => Vec::new(),
            _ => o.lits("other_keys")?.unwrap_or_default(),
        };
    }
    Ok(keys)
}

/// The keys a `json` step may carry besides its shape.
pub(crate) const CALL_KEY_FIELDS: &[&str] = &[
    "name_keys",
    "argument_keys",
    "id_key",
    "function_key",
    "other_keys",
    "text_key",
    "keyed",
    "no_call_names",
];

/// `{"json": SHAPE, …keys, "lenient": true}`.
fn json(o: &Obj<'_>) -> Result<Step, FormatFileError> {
    let mut allowed = vec!["json", "lenient"];
    allowed.extend_from_slice(CALL_KEY_FIELDS);
    o.only(&allowed)?;
    let shape = match o.choice("json", &["args", "call", "call_list", "root"])? {
        Some("call") => Shape::Call,
        Some("call_list") => Shape::CallList,
        Some("root") => Shape::Root,
        Some(_) => Shape::Args,
        None => return Err(o.err("json", "must be a string")),
    };
    let j = JsonStep::new(shape, call_keys(o)?);
    Ok(Step::Json(if o.flag("lenient")? { j.lenient() } else { j }))
}

/// `{"value": CLOSE, "recover", "recover_at_end", "nest", "guard", "trim",
/// "entities", "or_end", "null"}`; CLOSE is a literal or `{"special": "key_tag" | "space" |
/// "balanced"}`.
fn value(o: &Obj<'_>) -> Result<Step, FormatFileError> {
    o.only(&[
        "value",
        "recover",
        "recover_at_end",
        "nest",
        "guard",
        "trim",
        "entities",
        "or_end",
        "null",
    ])?;
    let close_v = o.get("value").unwrap_or(&Value::Null);
    let close = match close_v {
        Value::Object(m) if m.contains_key("special") => {
            let c = Obj::new(close_v, o.at("value"))?;
            c.only(&["special"])?;
            match c.choice("special", &["key_tag", "space", "balanced"])? {
                Some("key_tag") => Close::KeyTag,
                Some("space") => Close::Space,
                _ => Close::Balanced,
            }
        }
        _ => Close::Lit(lit(close_v, &o.at("value"))?),
    };
    let mut v = ValueStep::closed_by(close);
    let list = |key: &str| -> Result<Vec<(Lit, Label)>, FormatFileError> {
        match o.get(key) {
            None => Ok(Vec::new()),
            Some(l) => jump_list(l, &o.at(key)),
        }
    };
    v.recover = list("recover")?;
    v.recover_at_end = list("recover_at_end")?;
    v.nest = list("nest")?;
    if let Some(g) = o.get("guard") {
        let at = o.at("guard");
        let Value::Array(pair) = g else {
            return Err(o.err("guard", "must be [opening literal, closing literal]"));
        };
        let [open, close] = pair.as_slice() else {
            return Err(o.err("guard", "must be [opening literal, closing literal]"));
        };
        v.guard = Some((lit(open, &child(&at, "0"))?, lit(close, &child(&at, "1"))?));
    }
    v.trim = match o.choice("trim", &["none", "newline", "all"])? {
        None | Some("none") => Trim::None,
        Some("newline") => Trim::Newline,
        Some(_) => Trim::All,
    };
    v.entities = o.flag("entities")?;
    v.or_end = o.flag("or_end")?;
    v.null = o.flag("null")?;
    Ok(Step::Value(v))
}

/// `[{"on": SET, "goto": LABEL}…]`; SET is `"any"`, `"end"`, `{"bytes":
/// CHARS}` or `{"any_but": CHARS}`.
fn fork(v: &Value, at: &str) -> Result<Vec<(ByteSet, Label)>, FormatFileError> {
    let items = match v {
        Value::Array(items) if !items.is_empty() => items,
        _ => {
            return Err(FormatFileError::new(
                at,
                "must be a non-empty array of {\"on\": …, \"goto\": …}",
            ))
        }
    };
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let o = Obj::new(item, child(at, &i.to_string()))?;
            o.only(&["on", "goto"])?;
            let set_at = o.at("on");
            let set = match o.get("on") {
                Some(Value::String(s)) if s == "any" => ByteSet::Any,
                Some(Value::String(s)) if s == "end" => ByteSet::End,
                Some(set @ Value::Object(_)) => {
                    let s = Obj::new(set, set_at.clone())?;
                    s.only(&["bytes", "any_but"])?;
                    match (s.lit("bytes")?, s.lit("any_but")?) {
                        (Some(b), None) => ByteSet::Bytes(b.as_bytes().to_vec()),
                        (None, Some(b)) => ByteSet::AnyBut(b.as_bytes().to_vec()),
                        _ => {
                            return Err(FormatFileError::new(
                                set_at,
                                "must have one of `bytes`, `any_but`",
                            ))
                        }
                    }
                }
                _ => {
                    return Err(FormatFileError::new(
                        set_at,
                        "must be \"any\", \"end\", {\"bytes\": …} or {\"any_but\": …}",
                    ))
                }
            };
            Ok((set, Label::from(o.need_lit("goto")?.to_owned())))
        })
        .collect()
}
