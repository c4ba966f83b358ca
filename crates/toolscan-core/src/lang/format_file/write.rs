//! Writing a format as a description, in the program form: every opener's
//! steps one by one. What [`Format::from_json`] reads back is the same
//! format, so a built-in format can be copied out, changed and loaded.

use serde_json::{json, Map, Value};

use crate::error::{child, FormatFileError};
use crate::lang::format::{
    ByteSet, CallKeys, Capture, Close, Field, Format, JsonStep, Label, Lit, Opener, PyArgs, PyStep,
    PyStrings, Shape, Step, Trim, Trust, ValueStep,
};

impl Format {
    /// The format as a JSON description (pretty-printed), each opener in
    /// the program form, so that [`Format::from_json`] gives back an equal
    /// format (under the same name).
    ///
    /// Fails only for a format whose literals are not UTF-8 text, which
    /// JSON cannot hold, whose steps hold an empty list (a fork without
    /// branches, a `Then` without literals: descriptions leave empty lists
    /// out), or (in a build whose format language has grown) a step this
    /// writer does not know.
    ///
    /// ```
    /// use toolscan_core::{Format, Registry};
    /// let hermes = Registry::builtin().get("hermes").unwrap().clone();
    /// let text = hermes.to_json().unwrap();
    /// assert_eq!(Format::from_json(&text).unwrap(), hermes);
    /// ```
    pub fn to_json(&self) -> Result<String, FormatFileError> {
        let openers = self
            .openers
            .iter()
            .enumerate()
            .map(|(i, o)| opener(o, &child("/openers", &i.to_string())))
            .collect::<Result<Vec<Value>, _>>()?;
        Ok(render(
            &[
                ("name", self.name.as_str()),
                ("models", self.models.as_str()),
                ("description", self.description.as_str()),
            ],
            &openers,
        ))
    }
}

/// The description as text: indented, each step of a program on a line of
/// its own.
fn render(fields: &[(&str, &str)], openers: &[Value]) -> String {
    let compact = |v: &Value| v.to_string();
    let mut out = String::from("{\n");
    for (k, v) in fields {
        out += &format!("  {}: {},\n", compact(&(*k).into()), compact(&(*v).into()));
    }
    out += "  \"openers\": [\n";
    let openers: Vec<String> = openers
        .iter()
        .map(|o| {
            let mut lines = Vec::new();
            for (k, v) in o.as_object().into_iter().flatten() {
                let key = compact(&k.as_str().into());
                match v {
                    Value::Array(steps) if k == "program" => {
                        let steps: Vec<String> = steps
                            .iter()
                            .map(|s| format!("        {}", compact(s)))
                            .collect();
                        lines.push(format!("      {key}: [\n{}\n      ]", steps.join(",\n")));
                    }
                    _ => lines.push(format!("      {key}: {}", compact(v))),
                }
            }
            format!("    {{\n{}\n    }}", lines.join(",\n"))
        })
        .collect();
    out += &openers.join(",\n");
    out += "\n  ]\n}";
    out
}

/// Text of some bytes, or an error at `at`.
fn text(bytes: &[u8], at: &str) -> Result<String, FormatFileError> {
    String::from_utf8(bytes.to_vec())
        .map_err(|_| FormatFileError::new(at, "not UTF-8 text: JSON cannot hold it"))
}

/// A literal: a string, or an object when it is case-insensitive.
fn lit(l: &Lit, at: &str) -> Result<Value, FormatFileError> {
    let t = text(&l.bytes, at)?;
    Ok(if l.case_insensitive {
        json!({"text": t, "case_insensitive": true})
    } else {
        Value::String(t)
    })
}

fn opener(o: &Opener, at: &str) -> Result<Value, FormatFileError> {
    let mut m = Map::new();
    if o.stream_start {
        m.insert("stream_start".into(), true.into());
    } else {
        m.insert("open".into(), lit(&o.marker, &child(at, "open"))?);
    }
    if o.line_start {
        m.insert("line_start".into(), true.into());
    }
    let trust = match o.trust {
        Trust::Definite => None,
        Trust::Tentative => Some("tentative"),
        Trust::Bare => Some("bare"),
    };
    if let Some(t) = trust {
        m.insert("trust".into(), t.into());
    }
    if o.replay != (o.trust == Trust::Bare) && !o.stream_start {
        m.insert("replay".into(), o.replay.into());
    }
    let at = child(at, "program");
    let steps = o
        .program
        .iter()
        .enumerate()
        .map(|(i, s)| step(s, &child(&at, &i.to_string())))
        .collect::<Result<Vec<_>, _>>()?;
    m.insert("program".into(), Value::Array(steps));
    Ok(Value::Object(m))
}

fn jumps(opts: &[(Lit, Label)], at: &str) -> Result<Value, FormatFileError> {
    if opts.is_empty() {
        return Err(FormatFileError::new(
            at,
            "an empty list of literals cannot be described",
        ));
    }
    opts.iter()
        .enumerate()
        .map(|(i, (l, to))| {
            Ok(json!({"lit": lit(l, &child(at, &i.to_string()))?, "goto": to.as_str()}))
        })
        .collect::<Result<Vec<_>, _>>()
        .map(Value::Array)
}

fn step(s: &Step, at: &str) -> Result<Value, FormatFileError> {
    Ok(match s {
        Step::Ws => "ws".into(),
        Step::Blank => "blank".into(),
        Step::Word => "word".into(),
        Step::Dispatch => "dispatch".into(),
        Step::Definite => "definite".into(),
        Step::CloseOpen => "close_open".into(),
        Step::Frame => "frame".into(),
        Step::End => "end".into(),
        Step::Reasoning(on) => json!({ "reasoning": on }),
        Step::StringParam(key) => json!({ "string_param": key }),
        Step::Py(p) => py(p, at)?,
        Step::Label(l) => json!({"label": l.as_str()}),
        Step::Goto(l) => json!({"goto": l.as_str()}),
        Step::Lit(l) => json!({"lit": lit(l, at)?}),
        Step::OptLit(l) => json!({"opt_lit": lit(l, at)?}),
        Step::LitOrEof(l) => json!({"lit_or_end": lit(l, at)?}),
        Step::Capture(c) => capture(c, at)?,
        Step::Json(j) => json_step(j),
        Step::Value(v) => value(v, at)?,
        Step::Open(list) => json!({"container": if *list { "list" } else { "object" }}),
        Step::Fork(alts) if alts.is_empty() => {
            return Err(FormatFileError::new(
                at,
                "a fork without branches cannot be described",
            ))
        }
        Step::Fork(alts) => {
            let alts = alts
                .iter()
                .map(|(set, to)| {
                    let on = match set {
                        ByteSet::Any => "any".into(),
                        ByteSet::End => "end".into(),
                        ByteSet::Bytes(b) => json!({"bytes": text(b, at)?}),
                        ByteSet::AnyBut(b) => json!({"any_but": text(b, at)?}),
                        #[allow(unreachable_patterns)]
                        _ => {
                            return Err(FormatFileError::new(
                                at,
                                "a byte set this writer does not know",
                            ))
                        }
                    };
                    Ok(json!({"on": on, "goto": to.as_str()}))
                })
                .collect::<Result<Vec<_>, FormatFileError>>()?;
            json!({ "fork": alts })
        }
        Step::Then(opts) => json!({"then": jumps(opts, at)?}),
        Step::OneOf(opts) => json!({"one_of": jumps(opts, at)?}),
        Step::Recover(opts) => json!({"recover": jumps(opts, at)?}),
        Step::RecoverElement(ends, to) => json!({
            "recover_element": String::from_utf8_lossy(ends),
            "goto": to.as_str(),
        }),
        // A step added to the format language after this writer.
        #[allow(unreachable_patterns)]
        _ => return Err(FormatFileError::new(at, "a step this writer does not know")),
    })
}

fn capture(c: &Capture, at: &str) -> Result<Value, FormatFileError> {
    let field = match c.field {
        Field::Name => "name",
        Field::Id => "id",
        Field::Discard => "discard",
        Field::Key => "key",
        Field::Type => "type",
        Field::NamedId => "named_id",
        #[allow(unreachable_patterns)]
        _ => {
            return Err(FormatFileError::new(
                at,
                "a field this writer does not know",
            ))
        }
    };
    let mut m = Map::new();
    m.insert("capture".into(), field.into());
    if !c.delims.is_empty() {
        let until = c
            .delims
            .iter()
            .map(|(l, to)| {
                let l = lit(l, at)?;
                Ok(match to {
                    None => l,
                    Some(to) => json!({"lit": l, "goto": to.as_str()}),
                })
            })
            .collect::<Result<Vec<_>, FormatFileError>>()?;
        m.insert("until".into(), Value::Array(until));
    }
    if !c.stop.is_empty() {
        m.insert("before".into(), text(&c.stop, at)?.into());
    }
    if c.at_end {
        m.insert("at_end".into(), true.into());
    }
    if !c.keywords.is_empty() {
        let words = c
            .keywords
            .iter()
            .map(|(w, to)| json!({"lit": w, "goto": to.as_str()}))
            .collect();
        m.insert("keywords".into(), Value::Array(words));
    }
    Ok(Value::Object(m))
}

fn py(p: &PyStep, at: &str) -> Result<Value, FormatFileError> {
    let args = match p.args {
        PyArgs::Keywords => "keywords",
        PyArgs::BareKeys => "bare_keys",
        #[allow(unreachable_patterns)]
        _ => {
            return Err(FormatFileError::new(
                at,
                "an argument notation this writer does not know",
            ))
        }
    };
    let strings = match &p.strings {
        PyStrings::Quoted => "quoted".into(),
        PyStrings::Delimited(l) => lit(l, at)?,
        #[allow(unreachable_patterns)]
        _ => {
            return Err(FormatFileError::new(
                at,
                "a string notation this writer does not know",
            ))
        }
    };
    Ok(json!({
        "py": args,
        "strings": strings,
        "python_literals": p.python_literals,
        "json_literals": p.json_literals,
    }))
}

fn json_step(j: &JsonStep) -> Value {
    let shape = match j.shape {
        Shape::Args => "args",
        Shape::Call => "call",
        Shape::CallList => "call_list",
        Shape::Root => "root",
    };
    let mut m = Map::new();
    m.insert("json".into(), shape.into());
    let k = &j.keys;
    let d = if k.keyed {
        CallKeys::keyed()
    } else {
        CallKeys::default()
    };
    if k.name != d.name {
        m.insert("name_keys".into(), k.name.clone().into());
    }
    if k.args != d.args {
        m.insert("argument_keys".into(), k.args.clone().into());
    }
    if let Some(id) = &k.id {
        m.insert("id_key".into(), id.clone().into());
    }
    if let Some(f) = &k.function {
        m.insert("function_key".into(), f.clone().into());
    }
    if k.other != d.other {
        m.insert("other_keys".into(), k.other.clone().into());
    }
    if let Some(t) = &k.text {
        m.insert("text_key".into(), t.clone().into());
    }
    if j.lenient {
        m.insert("lenient".into(), true.into());
    }
    if k.keyed {
        m.insert("keyed".into(), true.into());
    }
    if !k.no_call.is_empty() {
        m.insert("no_call_names".into(), k.no_call.clone().into());
    }
    Value::Object(m)
}

fn value(v: &ValueStep, at: &str) -> Result<Value, FormatFileError> {
    let special = |s: &str| json!({ "special": s });
    let close = match &v.close {
        Close::Lit(l) => lit(l, at)?,
        Close::KeyTag => special("key_tag"),
        Close::Space => special("space"),
        Close::Balanced => special("balanced"),
    };
    let mut m = Map::new();
    m.insert("value".into(), close);
    for (key, list) in [
        ("recover", &v.recover),
        ("recover_at_end", &v.recover_at_end),
        ("nest", &v.nest),
    ] {
        if !list.is_empty() {
            m.insert(key.into(), jumps(list, at)?);
        }
    }
    if let Some((open, close)) = &v.guard {
        m.insert("guard".into(), json!([lit(open, at)?, lit(close, at)?]));
    }
    match v.trim {
        Trim::None => {}
        Trim::Newline => {
            m.insert("trim".into(), "newline".into());
        }
        Trim::All => {
            m.insert("trim".into(), "all".into());
        }
    }
    if v.entities {
        m.insert("entities".into(), true.into());
    }
    if v.or_end {
        m.insert("or_end".into(), true.into());
    }
    if v.null {
        m.insert("null".into(), true.into());
    }
    Ok(Value::Object(m))
}
