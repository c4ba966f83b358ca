//! The JSON form of each step payload (`lang/payload.rs`): how a format
//! file writes it, read with its errors pointing at the key, and written
//! back.

use serde_json::{json, Map, Value};

use crate::error::{child, FormatFileError};
use crate::lang::format_file::fields::{Obj, Payload};
use crate::lang::payload::*;

/// Text of some bytes, or an error at `at`.
pub(crate) fn text(bytes: &[u8], at: &str) -> Result<String, FormatFileError> {
    String::from_utf8(bytes.to_vec())
        .map_err(|_| FormatFileError::new(at, "not UTF-8 text: JSON cannot hold it"))
}

/// A literal: a non-empty string, or `{"text": …, "case_insensitive":
/// true}`.
pub(crate) fn read_lit(v: &Value, at: &str) -> Result<Lit, FormatFileError> {
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

/// A literal written: a string, or an object when it is case-insensitive.
pub(crate) fn write_lit(l: &Lit, at: &str) -> Result<Value, FormatFileError> {
    let t = text(&l.bytes, at)?;
    Ok(if l.case_insensitive {
        json!({"text": t, "case_insensitive": true})
    } else {
        Value::String(t)
    })
}

/// A non-empty array, or an error saying what its items must be.
fn items<'v>(v: Option<&'v Value>, at: &str, what: &str) -> Result<&'v [Value], FormatFileError> {
    match v {
        Some(Value::Array(items)) if !items.is_empty() => Ok(items),
        _ => Err(FormatFileError::new(
            at,
            format!("must be a non-empty array of {what}"),
        )),
    }
}

/// A list of `{"lit": LITERAL, "goto": LABEL}`.
pub(crate) fn read_jumps(
    v: Option<&Value>,
    at: &str,
) -> Result<Vec<(Lit, Label)>, FormatFileError> {
    items(v, at, "{\"lit\": …, \"goto\": …}")?
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let o = Obj::new(item, child(at, &i.to_string()))?;
            o.only(&["lit", "goto"])?;
            let l = read_lit(o.get("lit").unwrap_or(&Value::Null), &o.at("lit"))?;
            Ok((l, Label::from(o.need_lit("goto")?.to_owned())))
        })
        .collect()
}

/// A list of jumps written; an empty one cannot be (descriptions leave
/// empty lists out).
fn write_jumps(opts: &[(Lit, Label)], at: &str) -> Result<Value, FormatFileError> {
    if opts.is_empty() {
        return Err(FormatFileError::new(
            at,
            "an empty list of literals cannot be described",
        ));
    }
    opts.iter()
        .enumerate()
        .map(|(i, (l, to))| {
            Ok(json!({"lit": write_lit(l, &child(at, &i.to_string()))?, "goto": to.as_str()}))
        })
        .collect::<Result<Vec<_>, _>>()
        .map(Value::Array)
}

/// `{"label": L}`, `{"goto": L}`.
impl Payload for Label {
    fn read(o: &Obj<'_>, kind: &str) -> Result<Label, FormatFileError> {
        Ok(Label::from(o.need_lit(kind)?.to_owned()))
    }
    fn write(
        &self,
        kind: &str,
        m: &mut Map<String, Value>,
        _: &str,
    ) -> Result<(), FormatFileError> {
        m.insert(kind.into(), self.as_str().into());
        Ok(())
    }
}

/// `{"lit": LIT}` and the other single-literal steps.
impl Payload for Lit {
    fn read(o: &Obj<'_>, kind: &str) -> Result<Lit, FormatFileError> {
        read_lit(o.get(kind).unwrap_or(&Value::Null), &o.at(kind))
    }
    fn write(
        &self,
        kind: &str,
        m: &mut Map<String, Value>,
        at: &str,
    ) -> Result<(), FormatFileError> {
        m.insert(kind.into(), write_lit(self, at)?);
        Ok(())
    }
}

/// `{"then": JUMPS}` and the other steps over a list of jumps.
impl Payload for Vec<(Lit, Label)> {
    fn read(o: &Obj<'_>, kind: &str) -> Result<Self, FormatFileError> {
        read_jumps(o.get(kind), &o.at(kind))
    }
    fn write(
        &self,
        kind: &str,
        m: &mut Map<String, Value>,
        at: &str,
    ) -> Result<(), FormatFileError> {
        m.insert(kind.into(), write_jumps(self, at)?);
        Ok(())
    }
}

/// `{"reasoning": B}`.
impl Payload for bool {
    fn read(o: &Obj<'_>, kind: &str) -> Result<bool, FormatFileError> {
        o.flag(kind)
    }
    fn write(
        &self,
        kind: &str,
        m: &mut Map<String, Value>,
        _: &str,
    ) -> Result<(), FormatFileError> {
        m.insert(kind.into(), (*self).into());
        Ok(())
    }
}

/// `{"string_param": KEY}`.
impl Payload for String {
    fn read(o: &Obj<'_>, kind: &str) -> Result<String, FormatFileError> {
        Ok(o.need_lit(kind)?.to_owned())
    }
    fn write(
        &self,
        kind: &str,
        m: &mut Map<String, Value>,
        _: &str,
    ) -> Result<(), FormatFileError> {
        m.insert(kind.into(), self.as_str().into());
        Ok(())
    }
}

/// `{"container": "object" | "list"}`.
impl Payload for Container {
    fn read(o: &Obj<'_>, kind: &str) -> Result<Container, FormatFileError> {
        Ok(match o.choice(kind, &["object", "list"])? {
            Some("list") => Container::List,
            _ => Container::Object,
        })
    }
    fn write(
        &self,
        kind: &str,
        m: &mut Map<String, Value>,
        _: &str,
    ) -> Result<(), FormatFileError> {
        let name = match self {
            Container::Object => "object",
            Container::List => "list",
        };
        m.insert(kind.into(), name.into());
        Ok(())
    }
}

/// `{"recover_element": CHARS, "goto": L}`.
impl Payload for ElementEnd {
    const MODIFIERS: &'static [&'static str] = &["goto"];
    fn read(o: &Obj<'_>, kind: &str) -> Result<ElementEnd, FormatFileError> {
        let ends = o.need_lit(kind)?.as_bytes();
        Ok(ElementEnd::new(ends, o.need_lit("goto")?.to_owned()))
    }
    fn write(
        &self,
        kind: &str,
        m: &mut Map<String, Value>,
        at: &str,
    ) -> Result<(), FormatFileError> {
        m.insert(kind.into(), text(&self.ends, at)?.into());
        m.insert("goto".into(), self.to.as_str().into());
        Ok(())
    }
}

/// `[{"on": SET, "goto": LABEL}…]`; SET is `"any"`, `"end"`, `{"bytes":
/// CHARS}` or `{"any_but": CHARS}`.
impl Payload for Vec<(ByteSet, Label)> {
    fn read(o: &Obj<'_>, kind: &str) -> Result<Self, FormatFileError> {
        let at = o.at(kind);
        items(o.get(kind), &at, "{\"on\": …, \"goto\": …}")?
            .iter()
            .enumerate()
            .map(|(i, item)| {
                let o = Obj::new(item, child(&at, &i.to_string()))?;
                o.only(&["on", "goto"])?;
                let set = byte_set(o.get("on"), o.at("on"))?;
                Ok((set, Label::from(o.need_lit("goto")?.to_owned())))
            })
            .collect()
    }
    fn write(
        &self,
        kind: &str,
        m: &mut Map<String, Value>,
        at: &str,
    ) -> Result<(), FormatFileError> {
        if self.is_empty() {
            return Err(FormatFileError::new(
                at,
                "a fork without branches cannot be described",
            ));
        }
        let alts = self
            .iter()
            .map(|(set, to)| {
                let on = match set {
                    ByteSet::Any => "any".into(),
                    ByteSet::End => "end".into(),
                    ByteSet::Bytes(b) => json!({"bytes": text(b, at)?}),
                    ByteSet::AnyBut(b) => json!({"any_but": text(b, at)?}),
                };
                Ok(json!({"on": on, "goto": to.as_str()}))
            })
            .collect::<Result<Vec<_>, FormatFileError>>()?;
        m.insert(kind.into(), Value::Array(alts));
        Ok(())
    }
}

/// A fork's byte set.
fn byte_set(v: Option<&Value>, at: String) -> Result<ByteSet, FormatFileError> {
    match v {
        Some(Value::String(s)) if s == "any" => Ok(ByteSet::Any),
        Some(Value::String(s)) if s == "end" => Ok(ByteSet::End),
        Some(set @ Value::Object(_)) => {
            let s = Obj::new(set, at.clone())?;
            s.only(&["bytes", "any_but"])?;
            match (s.lit("bytes")?, s.lit("any_but")?) {
                (Some(b), None) => Ok(ByteSet::Bytes(b.as_bytes().to_vec())),
                (None, Some(b)) => Ok(ByteSet::AnyBut(b.as_bytes().to_vec())),
                _ => Err(FormatFileError::new(
                    at,
                    "must have one of `bytes`, `any_but`",
                )),
            }
        }
        _ => Err(FormatFileError::new(
            at,
            "must be \"any\", \"end\", {\"bytes\": …} or {\"any_but\": …}",
        )),
    }
}

/// `{"capture": FIELD, "until": [LITERAL | {"lit", "goto"}…], "before":
/// CHARACTERS, "at_end": true, "keywords": JUMPS}`.
impl Payload for Capture {
    const MODIFIERS: &'static [&'static str] = &["until", "before", "at_end", "keywords"];
    fn read(o: &Obj<'_>, kind: &str) -> Result<Capture, FormatFileError> {
        let field = match o.choice(
            kind,
            &[
                "name", "id", "discard", "ordinal", "key", "type", "named_id",
            ],
        )? {
            Some("id") => Field::Id,
            Some("named_id") => Field::NamedId,
            Some("discard") => Field::Discard,
            Some("ordinal") => Field::Ordinal,
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
                        let l = read_lit(d.get("lit").unwrap_or(&Value::Null), &d.at("lit"))?;
                        let to = d.lit("goto")?.map(|g| Label::from(g.to_owned()));
                        delims.push((l, to));
                    }
                    _ => delims.push((read_lit(item, &here)?, None)),
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
        if o.has("keywords") {
            for (i, (l, to)) in read_jumps(o.get("keywords"), &o.at("keywords"))?
                .into_iter()
                .enumerate()
            {
                if l.case_insensitive {
                    // A keyword is compared with the whole captured word,
                    // byte for byte.
                    let at = child(&child(&o.at("keywords"), &i.to_string()), "lit");
                    return Err(FormatFileError::new(
                        &at,
                        "a keyword is matched exactly: `case_insensitive` is not allowed here",
                    ));
                }
                let word = String::from_utf8_lossy(&l.bytes).into_owned();
                c = c.keyword(&word, to);
            }
        }
        Ok(c)
    }
    fn write(
        &self,
        kind: &str,
        m: &mut Map<String, Value>,
        at: &str,
    ) -> Result<(), FormatFileError> {
        let field = match self.field {
            Field::Name => "name",
            Field::Id => "id",
            Field::Discard => "discard",
            Field::Ordinal => "ordinal",
            Field::Key => "key",
            Field::Type => "type",
            Field::NamedId => "named_id",
        };
        m.insert(kind.into(), field.into());
        if !self.delims.is_empty() {
            let until = self
                .delims
                .iter()
                .map(|(l, to)| {
                    let l = write_lit(l, at)?;
                    Ok(match to {
                        None => l,
                        Some(to) => json!({"lit": l, "goto": to.as_str()}),
                    })
                })
                .collect::<Result<Vec<_>, FormatFileError>>()?;
            m.insert("until".into(), Value::Array(until));
        }
        if !self.stop.is_empty() {
            m.insert("before".into(), text(&self.stop, at)?.into());
        }
        if self.at_end {
            m.insert("at_end".into(), true.into());
        }
        if !self.keywords.is_empty() {
            let words = self
                .keywords
                .iter()
                .map(|(w, to)| json!({"lit": w, "goto": to.as_str()}))
                .collect();
            m.insert("keywords".into(), Value::Array(words));
        }
        Ok(())
    }
}

impl CallKeys {
    /// The keys of a call object, from `name_keys`, `argument_keys`,
    /// `id_key`, `function_key`, `other_keys`, `text_key`, `keyed`,
    /// `no_call_names` (defaults: [`CallKeys::default`]).
    pub(crate) fn read(o: &Obj<'_>) -> Result<CallKeys, FormatFileError> {
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

    /// Writes the keys that differ from the defaults.
    fn write(&self, m: &mut Map<String, Value>) {
        let d = if self.keyed {
            CallKeys::keyed()
        } else {
            CallKeys::default()
        };
        if self.name != d.name {
            m.insert("name_keys".into(), self.name.clone().into());
        }
        if self.args != d.args {
            m.insert("argument_keys".into(), self.args.clone().into());
        }
        if let Some(id) = &self.id {
            m.insert("id_key".into(), id.clone().into());
        }
        if let Some(f) = &self.function {
            m.insert("function_key".into(), f.clone().into());
        }
        if self.other != d.other {
            m.insert("other_keys".into(), self.other.clone().into());
        }
        if let Some(t) = &self.text {
            m.insert("text_key".into(), t.clone().into());
        }
        if self.keyed {
            m.insert("keyed".into(), true.into());
        }
        if !self.no_call.is_empty() {
            m.insert("no_call_names".into(), self.no_call.clone().into());
        }
    }
}

/// `{"json": SHAPE, …call keys, "lenient": true}`.
impl Payload for JsonStep {
    const MODIFIERS: &'static [&'static str] = &[
        "lenient",
        "name_keys",
        "argument_keys",
        "id_key",
        "function_key",
        "other_keys",
        "text_key",
        "keyed",
        "no_call_names",
    ];
    fn read(o: &Obj<'_>, kind: &str) -> Result<JsonStep, FormatFileError> {
        let shape = match o.choice(kind, &["args", "call", "call_list", "root"])? {
            Some("call") => Shape::Call,
            Some("call_list") => Shape::CallList,
            Some("root") => Shape::Root,
            Some(_) => Shape::Args,
            None => return Err(o.err(kind, "must be a string")),
        };
        let j = JsonStep::new(shape, CallKeys::read(o)?);
        Ok(if o.flag("lenient")? { j.lenient() } else { j })
    }
    fn write(
        &self,
        kind: &str,
        m: &mut Map<String, Value>,
        _: &str,
    ) -> Result<(), FormatFileError> {
        let shape = match self.shape {
            Shape::Args => "args",
            Shape::Call => "call",
            Shape::CallList => "call_list",
            Shape::Root => "root",
        };
        m.insert(kind.into(), shape.into());
        if self.lenient {
            m.insert("lenient".into(), true.into());
        }
        self.keys.write(m);
        Ok(())
    }
}

/// `{"value": CLOSE, "recover", "recover_at_end", "nest", "guard", "trim",
/// "entities", "or_end", "null"}`; CLOSE is a literal or `{"special":
/// "key_tag" | "space" | "balanced"}`.
impl Payload for ValueStep {
    const MODIFIERS: &'static [&'static str] = &[
        "recover",
        "recover_at_end",
        "nest",
        "guard",
        "trim",
        "entities",
        "or_end",
        "null",
    ];
    fn read(o: &Obj<'_>, kind: &str) -> Result<ValueStep, FormatFileError> {
        let close_v = o.get(kind).unwrap_or(&Value::Null);
        let close = match close_v {
            Value::Object(m) if m.contains_key("special") => {
                let c = Obj::new(close_v, o.at(kind))?;
                c.only(&["special"])?;
                match c.choice("special", &["key_tag", "space", "balanced"])? {
                    Some("key_tag") => Close::KeyTag,
                    Some("space") => Close::Space,
                    _ => Close::Balanced,
                }
            }
            _ => Close::Lit(read_lit(close_v, &o.at(kind))?),
        };
        let mut v = ValueStep::closed_by(close);
        let list = |key: &str| -> Result<Vec<(Lit, Label)>, FormatFileError> {
            match o.get(key) {
                None => Ok(Vec::new()),
                Some(l) => read_jumps(Some(l), &o.at(key)),
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
            v.guard = Some((
                read_lit(open, &child(&at, "0"))?,
                read_lit(close, &child(&at, "1"))?,
            ));
        }
        v.trim = match o.choice("trim", &["none", "newline", "all"])? {
            None | Some("none") => Trim::None,
            Some("newline") => Trim::Newline,
            Some(_) => Trim::All,
        };
        v.entities = o.flag("entities")?;
        v.or_end = o.flag("or_end")?;
        v.null = o.flag("null")?;
        Ok(v)
    }
    fn write(
        &self,
        kind: &str,
        m: &mut Map<String, Value>,
        at: &str,
    ) -> Result<(), FormatFileError> {
        let special = |s: &str| json!({ "special": s });
        let close = match &self.close {
            Close::Lit(l) => write_lit(l, at)?,
            Close::KeyTag => special("key_tag"),
            Close::Space => special("space"),
            Close::Balanced => special("balanced"),
        };
        m.insert(kind.into(), close);
        for (key, list) in [
            ("recover", &self.recover),
            ("recover_at_end", &self.recover_at_end),
            ("nest", &self.nest),
        ] {
            if !list.is_empty() {
                m.insert(key.into(), write_jumps(list, at)?);
            }
        }
        if let Some((open, close)) = &self.guard {
            m.insert(
                "guard".into(),
                json!([write_lit(open, at)?, write_lit(close, at)?]),
            );
        }
        match self.trim {
            Trim::None => {}
            Trim::Newline => {
                m.insert("trim".into(), "newline".into());
            }
            Trim::All => {
                m.insert("trim".into(), "all".into());
            }
        }
        for (key, on) in [
            ("entities", self.entities),
            ("or_end", self.or_end),
            ("null", self.null),
        ] {
            if on {
                m.insert(key.into(), true.into());
            }
        }
        Ok(())
    }
}

/// `{"py": "keywords" | "bare_keys", "strings": "quoted" | LITERAL,
/// "python_literals": BOOL, "json_literals": BOOL}`.
impl Payload for PyStep {
    const MODIFIERS: &'static [&'static str] = &["strings", "python_literals", "json_literals"];
    fn read(o: &Obj<'_>, kind: &str) -> Result<PyStep, FormatFileError> {
        let mut step = match o.choice(kind, &["keywords", "bare_keys"])? {
            Some("bare_keys") => PyStep::bare_keys("\""),
            _ => PyStep::keywords(),
        };
        match o.get("strings") {
            None => {}
            Some(Value::String(s)) if s == "quoted" => step.strings = PyStrings::Quoted,
            Some(v) => step.strings = PyStrings::Delimited(read_lit(v, &o.at("strings"))?),
        }
        if o.has("python_literals") {
            step.python_literals = o.flag("python_literals")?;
        }
        if o.has("json_literals") {
            step.json_literals = o.flag("json_literals")?;
        }
        Ok(step)
    }
    fn write(
        &self,
        kind: &str,
        m: &mut Map<String, Value>,
        at: &str,
    ) -> Result<(), FormatFileError> {
        let args = match self.args {
            PyArgs::Keywords => "keywords",
            PyArgs::BareKeys => "bare_keys",
        };
        let strings = match &self.strings {
            PyStrings::Quoted => "quoted".into(),
            PyStrings::Delimited(l) => write_lit(l, at)?,
        };
        m.insert(kind.into(), args.into());
        m.insert("strings".into(), strings);
        m.insert("python_literals".into(), self.python_literals.into());
        m.insert("json_literals".into(), self.json_literals.into());
        Ok(())
    }
}
