//! A format description read from JSON and checked field by field, before
//! it is compiled into openers and programs.

use serde_json::Value;

use super::fields::Obj;
use crate::error::{child, FormatFileError};
use crate::lang::format::{CallKeys, Lit, Opener, Step, Trim, Trust};
use crate::lang::format_file::payloads::read_lit;
use crate::lang::results::Results;

/// Refuses an object that names a key twice (JSON parsers keep one of
/// the two silently: a misspelt copy-paste would change the format
/// unseen), naming the second one's pointer. Text that is not JSON is
/// left for the parser proper to report.
fn no_duplicate_keys(text: &str) -> Result<(), FormatFileError> {
    let dup = std::cell::RefCell::new(None);
    let mut de = serde_json::Deserializer::from_str(text);
    let _ = serde::de::DeserializeSeed::deserialize(
        Keys {
            at: String::new(),
            dup: &dup,
        },
        &mut de,
    );
    match dup.into_inner() {
        Some((at, key)) => Err(FormatFileError::new(
            at,
            format!("the key `{key}` is given twice in this object"),
        )),
        None => Ok(()),
    }
}

/// A JSON value being walked for duplicate keys: its pointer, and where
/// the first duplicate found goes.
struct Keys<'a> {
    at: String,
    dup: &'a std::cell::RefCell<Option<(String, String)>>,
}

impl<'de> serde::de::DeserializeSeed<'de> for Keys<'_> {
    type Value = ();

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for Keys<'_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }

    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }

    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }

    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }

    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }

    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut i = 0usize;
        while seq
            .next_element_seed(Keys {
                at: child(&self.at, &i.to_string()),
                dup: self.dup,
            })?
            .is_some()
        {
            i += 1;
        }
        Ok(())
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut seen = std::collections::HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            let at = child(&self.at, &key);
            if !seen.insert(key.clone()) {
                *self.dup.borrow_mut() = Some((at, key));
                return Err(serde::de::Error::custom("duplicate key"));
            }
            map.next_value_seed(Keys { at, dup: self.dup })?;
        }
        Ok(())
    }
}

/// The keys of one opener (at the top level when there is one opener).
const OPENER_KEYS: &[&str] = &[
    "open",
    "case_insensitive",
    "line_start",
    "trust",
    "prefix",
    "name_at",
    "between",
    "arguments",
    "close",
    "separators",
    "terminators",
];

/// The keys of an opener written as a program.
const PROGRAM_KEYS: &[&str] = &[
    "open",
    "case_insensitive",
    "line_start",
    "trust",
    "replay",
    "stream_start",
    "program",
];

/// The keys of the description itself.
const FORMAT_KEYS: &[&str] = &["name", "models", "description", "openers", "tool_results"];

/// A whole description: the format's name and its openers.
#[derive(Debug)]
pub(crate) struct Description {
    /// The format's name: non-empty, not `auto`.
    pub name: String,
    /// Who writes the format (may be empty).
    pub models: String,
    /// One line on what it looks like (may be empty).
    pub description: String,
    /// At least one opener, each with the pointer of its object (empty for
    /// the one-opener form, where the opener's keys are at the top level).
    pub openers: Vec<(String, OpenerSpec)>,
    /// How tool results are written, if the description says.
    pub results: Option<Results>,
}

/// An opener as a description gives it.
#[derive(Debug)]
pub(crate) enum OpenerSpec {
    /// By its parts (compiled into a program).
    Parts(Box<OpenerDesc>),
    /// As a program, step by step (already the opener).
    Program(Opener),
}

/// How the tool name is written before the arguments.
#[derive(Debug)]
pub(crate) enum NameAt {
    /// Up to this literal (non-empty), which is consumed.
    Until(String),
    /// Up to any of these bytes (non-empty, ASCII), which are left for what
    /// follows.
    Before(Vec<u8>),
}

/// How the arguments are written.
#[derive(Debug)]
pub(crate) enum ArgumentsDesc {
    /// The arguments object itself; the name came before it.
    Object {
        /// Accept what models write by hand (single quotes, trailing
        /// commas, Python literals).
        lenient: bool,
    },
    /// One call object holding name and arguments (`list`: an array of
    /// them, a single object accepted too).
    Call {
        /// Which keys hold the name, the arguments, the id.
        keys: CallKeys,
        /// Accept what models write by hand.
        lenient: bool,
        /// An array of call objects rather than one.
        list: bool,
    },
    /// Each argument between tags.
    Params(ParamsDesc),
}

/// Parameter-style arguments: `OPEN key KEY_END [VALUE_START] value CLOSE`…
/// `END`. Every literal is non-empty.
#[derive(Debug)]
pub(crate) struct ParamsDesc {
    /// Opens a parameter, up to its key (`<parameter=`).
    pub open: String,
    /// Ends the key (`>`).
    pub key_end: String,
    /// Markup between the key and the value, whitespace before it allowed
    /// (`<arg_value>`).
    pub value_start: Option<String>,
    /// Ends a value (`</parameter>`).
    pub close: String,
    /// Ends the parameters: the call's closing tag (`</function>`).
    pub end: String,
    /// Which whitespace around a value is markup.
    pub trim: Trim,
    /// Values are XML text: entities are decoded.
    pub entities: bool,
    /// The text `null` is JSON null, whatever the value's declared type.
    pub null: bool,
}

/// One opener: its marker and how the calls after it are written.
#[derive(Debug)]
pub(crate) struct OpenerDesc {
    /// The marker (non-empty).
    pub open: String,
    /// The marker and `close` match ASCII letters in either case.
    pub case_insensitive: bool,
    /// The marker only counts at the start of a line.
    pub line_start: bool,
    /// How much the marker says. `Bare` only with `open` `{` or `[` and
    /// JSON call arguments (checked when read).
    pub trust: Trust,
    /// Markup before each call's name (non-empty if present).
    pub prefix: Option<String>,
    /// Where the name is: present exactly when the arguments are not a call
    /// object (checked when read).
    pub name_at: Option<NameAt>,
    /// Markup between the name and the arguments (only with `name_at`).
    pub between: Option<String>,
    /// How the arguments are written.
    pub arguments: ArgumentsDesc,
    /// What ends each call (non-empty if present).
    pub close: Option<String>,
    /// After a call, one of these (whitespace before it allowed) means
    /// another call follows (each non-empty).
    pub separators: Vec<String>,
    /// After the last call, one of these belongs to the calls and ends the
    /// block (each non-empty).
    pub terminators: Vec<String>,
}

impl Description {
    /// Reads a description from its JSON text.
    pub(crate) fn from_json(text: &str) -> Result<Description, FormatFileError> {
        // A byte-order mark (editors on Windows write one) is not content.
        let text = text.strip_prefix('\u{FEFF}').unwrap_or(text);
        no_duplicate_keys(text)?;
        let v: Value = serde_json::from_str(text)
            .map_err(|e| FormatFileError::new("", format!("not JSON: {e}")))?;
        let root = Obj::new(&v, String::new())
            .map_err(|_| FormatFileError::new("", "must be a JSON object"))?;
        let name = root.need_lit("name")?;
        if name == "auto" {
            return Err(root.err("name", "`auto` is reserved for format detection"));
        }
        let openers = match root.get("openers") {
            Some(list) => {
                if let Some(k) = OPENER_KEYS.iter().chain(PROGRAM_KEYS).find(|k| root.has(k)) {
                    return Err(
                        root.err(k, "not allowed beside `openers`: it belongs in each opener")
                    );
                }
                root.only(FORMAT_KEYS)?;
                let at = root.at("openers");
                let items = match list {
                    Value::Array(items) if !items.is_empty() => items,
                    _ => return Err(root.err("openers", "must be a non-empty array of openers")),
                };
                items
                    .iter()
                    .enumerate()
                    .map(|(i, item)| {
                        let o = Obj::new(item, child(&at, &i.to_string()))?;
                        Ok((child(&at, &i.to_string()), OpenerSpec::read(&o, &[])?))
                    })
                    .collect::<Result<Vec<_>, FormatFileError>>()?
            }
            None => vec![(String::new(), OpenerSpec::read(&root, FORMAT_KEYS)?)],
        };
        Ok(Description {
            name: name.to_owned(),
            models: root.str("models")?.unwrap_or("").to_owned(),
            description: root.str("description")?.unwrap_or("").to_owned(),
            openers,
            results: root
                .obj("tool_results")?
                .map(|o| Results::read(&o))
                .transpose()?,
        })
    }
}

impl OpenerSpec {
    /// Reads one opener, by its parts or as a program; `also` are keys
    /// allowed beside its own (the format's, in the one-opener form).
    fn read(o: &Obj<'_>, also: &[&str]) -> Result<OpenerSpec, FormatFileError> {
        let own = if o.has("program") {
            PROGRAM_KEYS
        } else {
            OPENER_KEYS
        };
        let mut allowed = also.to_vec();
        allowed.extend_from_slice(own);
        if o.has("program") {
            if let Some(k) = OPENER_KEYS
                .iter()
                .find(|k| o.has(k) && !PROGRAM_KEYS.contains(k))
            {
                return Err(o.err(
                    k,
                    "not allowed beside `program`: the program says everything after the marker",
                ));
            }
        }
        o.only(&allowed)?;
        if let Some(program) = o.get("program") {
            let steps = read_program(program, &o.at("program"))?;
            if o.flag("stream_start")? {
                // No marker: the program runs at the start of the stream.
                if o.has("open") {
                    return Err(o.err("open", "a program at the start of the stream has no marker"));
                }
                let opener = Opener::stream_start(steps).with_trust(read_trust(o)?);
                return Ok(OpenerSpec::Program(opener));
            }
            let marker = read_lit(o.get("open").unwrap_or(&Value::Null), &o.at("open"))?;
            let trust = read_trust(o)?;
            let replay = match o.get("replay") {
                None => trust == Trust::Bare,
                Some(_) => o.flag("replay")?,
            };
            let mut opener = Opener::definite("-", steps).with_trust(trust);
            opener.marker = Lit {
                case_insensitive: marker.case_insensitive || o.flag("case_insensitive")?,
                ..marker
            };
            opener.replay = replay;
            opener.line_start = o.flag("line_start")?;
            return Ok(OpenerSpec::Program(opener));
        }
        OpenerDesc::read(o).map(|d| OpenerSpec::Parts(Box::new(d)))
    }
}

/// The `trust` key.
fn read_trust(o: &Obj<'_>) -> Result<Trust, FormatFileError> {
    Ok(
        match o.choice("trust", &["definite", "tentative", "bare"])? {
            None | Some("definite") => Trust::Definite,
            Some("tentative") => Trust::Tentative,
            Some(_) => Trust::Bare,
        },
    )
}

impl OpenerDesc {
    /// Reads one opener by its parts (its keys were checked by the caller).
    fn read(o: &Obj<'_>) -> Result<OpenerDesc, FormatFileError> {
        let open = o.need_lit("open")?;
        let trust = read_trust(o)?;
        let arguments = match o.obj("arguments")? {
            Some(a) => ArgumentsDesc::read(&a)?,
            None => {
                return Err(o.err(
                    "arguments",
                    "missing; must say how the arguments are written ({\"json\": …} or {\"params\": …})",
                ))
            }
        };
        let name_at = match o.obj("name_at")? {
            Some(n) => Some(NameAt::read(&n)?),
            None => None,
        };
        let is_call = matches!(arguments, ArgumentsDesc::Call { .. });
        match (&name_at, is_call) {
            (Some(_), true) => {
                return Err(o.err(
                    "name_at",
                    "not allowed with a JSON call object: its name keys say where the name is",
                ))
            }
            (None, false) => {
                return Err(o.err(
                    "name_at",
                    "missing; arguments that are not a call object need the name before them",
                ))
            }
            _ => {}
        }
        let between = o.lit("between")?.map(str::to_owned);
        if between.is_some() && name_at.is_none() {
            return Err(o.err(
                "between",
                "only between a name (`name_at`) and the arguments; markup before a call \
                 object is a `prefix`",
            ));
        }
        let prefix = o.lit("prefix")?.map(str::to_owned);
        if trust == Trust::Bare {
            let list = matches!(arguments, ArgumentsDesc::Call { list: true, .. });
            if !is_call {
                return Err(o.err(
                    "trust",
                    "`bare` needs JSON call arguments: the marker is the call object's first byte",
                ));
            }
            if !(open == "{" || (list && open == "[")) {
                return Err(o.err(
                    "open",
                    "a `bare` marker must be the first byte of the JSON: `{` (or `[` for a list of calls)",
                ));
            }
            if prefix.is_some() {
                return Err(o.err("prefix", "not allowed with a `bare` marker"));
            }
        }
        Ok(OpenerDesc {
            open: open.to_owned(),
            case_insensitive: o.flag("case_insensitive")?,
            line_start: o.flag("line_start")?,
            trust,
            prefix,
            name_at,
            between,
            arguments,
            close: o.lit("close")?.map(str::to_owned),
            separators: o.lits("separators")?.unwrap_or_default(),
            terminators: o.lits("terminators")?.unwrap_or_default(),
        })
    }
}

impl NameAt {
    /// Reads `{"until": LIT}` or `{"before": CHARS}`.
    fn read(o: &Obj<'_>) -> Result<NameAt, FormatFileError> {
        o.only(&["until", "before"])?;
        match (o.lit("until")?, o.lit("before")?) {
            (Some(until), None) => Ok(NameAt::Until(until.to_owned())),
            (None, Some(before)) if before.is_ascii() => {
                Ok(NameAt::Before(before.as_bytes().to_vec()))
            }
            (None, Some(_)) => Err(o.err("before", "must be ASCII characters")),
            (Some(_), Some(_)) => Err(o.err("before", "give either `until` or `before`, not both")),
            (None, None) => Err(FormatFileError::new(
                o.path(),
                "must have `until` (the literal after the name) or `before` (the characters \
                 that end it)",
            )),
        }
    }
}

impl ArgumentsDesc {
    /// Reads `{"json": …}` or `{"params": {…}}`.
    fn read(o: &Obj<'_>) -> Result<ArgumentsDesc, FormatFileError> {
        if let Some(p) = o.obj("params")? {
            o.only(&["params"])?;
            return Ok(ArgumentsDesc::Params(ParamsDesc::read(&p)?));
        }
        let encoding = match o.str("json")? {
            Some(e) => e,
            None => {
                let reason = match o.first_key() {
                    Some(k) => format!("unknown encoding {k:?}; expected one of json, params"),
                    None => "empty; expected one of json, params".to_owned(),
                };
                return Err(FormatFileError::new(o.path(), reason));
            }
        };
        match encoding {
            "object" => {
                o.only(&["json", "lenient"])?;
                Ok(ArgumentsDesc::Object {
                    lenient: o.flag("lenient")?,
                })
            }
            "call" | "calls" => {
                o.only(&[
                    "json",
                    "name_keys",
                    "argument_keys",
                    "id_key",
                    "function_key",
                    "other_keys",
                    "lenient",
                ])?;
                let keys = CallKeys::read(o)?;
                Ok(ArgumentsDesc::Call {
                    keys,
                    lenient: o.flag("lenient")?,
                    list: encoding == "calls",
                })
            }
            other => Err(o.err(
                "json",
                format!("unknown JSON shape {other:?}; expected one of object, call, calls"),
            )),
        }
    }
}

impl ParamsDesc {
    /// Reads the `params` object.
    fn read(o: &Obj<'_>) -> Result<ParamsDesc, FormatFileError> {
        o.only(&[
            "open",
            "key_end",
            "value_start",
            "close",
            "end",
            "trim",
            "entities",
            "null",
        ])?;
        Ok(ParamsDesc {
            open: o.need_lit("open")?.to_owned(),
            key_end: o.need_lit("key_end")?.to_owned(),
            value_start: o.lit("value_start")?.map(str::to_owned),
            close: o.need_lit("close")?.to_owned(),
            end: o.need_lit("end")?.to_owned(),
            trim: match o.choice("trim", &["none", "newline", "all"])? {
                None | Some("none") => Trim::None,
                Some("newline") => Trim::Newline,
                Some(_) => Trim::All,
            },
            entities: o.flag("entities")?,
            null: o.flag("null")?,
        })
    }
}

/// The most steps one program of a format file may have: the built-in
/// formats' longest has a few dozen; a program is compiled and checked in
/// memory proportional to its steps, so a bound keeps a hostile file from
/// costing gigabytes.
pub const MAX_STEPS: usize = 10_000;

/// Reads a `program` array: each step by the table of steps.
fn read_program(v: &Value, at: &str) -> Result<Vec<Step>, FormatFileError> {
    let items = match v {
        Value::Array(items) if !items.is_empty() => items,
        _ => {
            return Err(FormatFileError::new(
                at,
                "must be a non-empty array of steps",
            ))
        }
    };
    if items.len() > MAX_STEPS {
        return Err(FormatFileError::new(
            at,
            format!(
                "has {} steps, more than the {MAX_STEPS} a program may have",
                items.len()
            ),
        ));
    }
    items
        .iter()
        .enumerate()
        .map(|(i, s)| Step::read(s, &child(at, &i.to_string())))
        .collect()
}

#[cfg(test)]
mod tests {
    //! Descriptions against a table: valid ones and what they read as,
    //! invalid ones and the exact error each gets (the field's JSON pointer
    //! and the reason), as `docs/format-files.md` describes them.

    use super::*;
    use crate::lang::format::{JsonStep, PyStep, Shape};

    /// What a valid description reads as.
    type Check = fn(&Description) -> bool;

    /// A row: what it tries, the description's text, and a check of what
    /// it reads as or the error it gets as (pointer, reason).
    type Row = (&'static str, String, Result<Check, (String, String)>);

    fn ok(what: &'static str, text: &str, check: Check) -> Row {
        (what, text.to_owned(), Ok(check))
    }

    fn bad(what: &'static str, text: &str, pointer: &str, reason: &str) -> Row {
        (
            what,
            text.to_owned(),
            Err((pointer.to_owned(), reason.to_owned())),
        )
    }

    /// The one opener by its parts.
    fn parts(d: &Description) -> Option<&OpenerDesc> {
        match d.openers.as_slice() {
            [(at, OpenerSpec::Parts(o))] if at.is_empty() => Some(o),
            _ => None,
        }
    }

    /// The one opener as a program.
    fn program(d: &Description) -> Option<&Opener> {
        match d.openers.as_slice() {
            [(at, OpenerSpec::Program(o))] if at.is_empty() => Some(o),
            _ => None,
        }
    }

    fn run(table: Vec<Row>) {
        for (what, text, want) in table {
            match (Description::from_json(&text), want) {
                (Ok(d), Ok(check)) => assert!(check(&d), "{what}: read as {d:?}"),
                (Err(e), Err(want)) => assert_eq!(
                    (e.pointer().to_owned(), e.reason().to_owned()),
                    want,
                    "{what}"
                ),
                (got, want) => panic!("{what}: got {got:?}, want {want:?}"),
            }
        }
    }

    /// The message of a value that is not a literal.
    const NOT_A_LIT: &str =
        "must be a literal: a non-empty string or {\"text\": …, \"case_insensitive\": true}";

    #[test]
    fn descriptions_by_their_parts() {
        run(vec![
            ok(
                "the first example of the docs",
                r#"{"name": "double-angle", "models": "my fine-tune",
                    "description": "<<call NAME>>{json}<</call>>", "open": "<<call ",
                    "name_at": {"until": ">>"}, "arguments": {"json": "object"},
                    "close": "<</call>>"}"#,
                |d| {
                    d.name == "double-angle"
                        && d.models == "my fine-tune"
                        && d.description == "<<call NAME>>{json}<</call>>"
                        && d.results.is_none()
                        && parts(d).is_some_and(|o| {
                            o.open == "<<call "
                                && !o.case_insensitive
                                && !o.line_start
                                && o.trust == Trust::Definite
                                && o.prefix.is_none()
                                && matches!(&o.name_at, Some(NameAt::Until(u)) if u == ">>")
                                && o.between.is_none()
                                && matches!(o.arguments, ArgumentsDesc::Object { lenient: false })
                                && o.close.as_deref() == Some("<</call>>")
                                && o.separators.is_empty()
                                && o.terminators.is_empty()
                        })
                },
            ),
            ok(
                "a byte-order mark before it",
                "\u{FEFF}{\"name\": \"x\", \"open\": \"<c>\", \"arguments\": {\"json\": \"call\"}}",
                |d| d.name == "x" && d.models.is_empty() && d.description.is_empty(),
            ),
            ok(
                "a call object with its own keys, case-insensitive",
                r#"{"name": "run-block", "open": "[RUN]", "case_insensitive": true,
                    "arguments": {"json": "call", "name_keys": ["tool", "module"],
                                  "argument_keys": ["args"]},
                    "close": "[/RUN]"}"#,
                |d| {
                    parts(d).is_some_and(|o| {
                        o.case_insensitive
                            && o.name_at.is_none()
                            && matches!(&o.arguments, ArgumentsDesc::Call { keys, lenient: false, list: false }
                                if *keys == CallKeys::new(&["tool", "module"], &["args"]))
                    })
                },
            ),
            ok(
                "a lenient list of calls with an id and a function key",
                r#"{"name": "x", "open": "<calls>", "line_start": true, "trust": "tentative",
                    "arguments": {"json": "calls", "id_key": "id", "function_key": "function",
                                  "other_keys": [], "lenient": true}}"#,
                |d| {
                    parts(d).is_some_and(|o| {
                        o.line_start
                            && o.trust == Trust::Tentative
                            && matches!(&o.arguments, ArgumentsDesc::Call { keys, lenient: true, list: true }
                                if *keys == CallKeys {
                                    other: Vec::new(),
                                    ..CallKeys::default().with_id("id").with_function("function")
                                })
                    })
                },
            ),
            ok(
                "a name before characters, a literal between, separators and terminators",
                r#"{"name": "x", "open": "<|python_tag|>", "prefix": "call:",
                    "name_at": {"before": " \t\r\n{"}, "between": "ARGS:",
                    "arguments": {"json": "object", "lenient": true},
                    "separators": ";", "terminators": ["<|eom_id|>", "<|eot_id|>"]}"#,
                |d| {
                    parts(d).is_some_and(|o| {
                        o.prefix.as_deref() == Some("call:")
                            && matches!(&o.name_at, Some(NameAt::Before(b)) if b == b" \t\r\n{")
                            && o.between.as_deref() == Some("ARGS:")
                            && matches!(o.arguments, ArgumentsDesc::Object { lenient: true })
                            && o.close.is_none()
                            && o.separators == [";"]
                            && o.terminators == ["<|eom_id|>", "<|eot_id|>"]
                    })
                },
            ),
            ok(
                "parameters with defaults",
                r#"{"name": "key-value-tags", "open": "<call>", "name_at": {"until": "\n"},
                    "arguments": {"params": {"open": "<arg_key>", "key_end": "</arg_key>",
                        "value_start": "<arg_value>", "close": "</arg_value>", "end": "</call>"}}}"#,
                |d| {
                    parts(d).is_some_and(|o| {
                        matches!(&o.arguments, ArgumentsDesc::Params(p)
                            if p.open == "<arg_key>"
                                && p.key_end == "</arg_key>"
                                && p.value_start.as_deref() == Some("<arg_value>")
                                && p.close == "</arg_value>"
                                && p.end == "</call>"
                                && p.trim == Trim::None
                                && !p.entities
                                && !p.null)
                    })
                },
            ),
            ok(
                "parameters trimmed, with entities and null",
                r#"{"name": "x", "open": "<tool_call>", "prefix": "<function=",
                    "name_at": {"until": ">"}, "close": "</tool_call>",
                    "arguments": {"params": {"open": "<parameter=", "key_end": ">",
                        "close": "</parameter>", "end": "</function>", "trim": "newline",
                        "entities": true, "null": true}}}"#,
                |d| {
                    parts(d).is_some_and(|o| {
                        matches!(&o.arguments, ArgumentsDesc::Params(p)
                            if p.value_start.is_none()
                                && p.trim == Trim::Newline
                                && p.entities
                                && p.null)
                    })
                },
            ),
            ok(
                "trim all",
                r#"{"name": "x", "open": "<c>", "name_at": {"until": ">"},
                    "arguments": {"params": {"open": "<p=", "key_end": ">", "close": "</p>",
                                             "end": "</c>", "trim": "all"}}}"#,
                |d| {
                    parts(d).is_some_and(
                        |o| matches!(&o.arguments, ArgumentsDesc::Params(p) if p.trim == Trim::All),
                    )
                },
            ),
            ok(
                "a bare `{` marker",
                r#"{"name": "x", "open": "{", "trust": "bare", "arguments": {"json": "call"}}"#,
                |d| parts(d).is_some_and(|o| o.trust == Trust::Bare),
            ),
            ok(
                "a bare `[` marker for a list of calls",
                r#"{"name": "x", "open": "[", "trust": "bare", "arguments": {"json": "calls"}}"#,
                |d| parts(d).is_some_and(|o| o.trust == Trust::Bare),
            ),
            ok(
                "tool results",
                r#"{"name": "x", "open": "<c>", "arguments": {"json": "call"},
                    "tool_results": {"role": "user", "each": "<r>{content}</r>",
                                     "shared": {"between": "\n"}}}"#,
                |d| {
                    d.results
                        .as_ref()
                        .is_some_and(|r| r.role == "user" && r.shared.is_some())
                },
            ),
            ok(
                "the format's own keys beside `openers`",
                r#"{"name": "x", "models": "m", "description": "d",
                    "tool_results": {"role": "tool", "each": "{content}"},
                    "openers": [{"open": "<c>", "arguments": {"json": "call"}}]}"#,
                |d| {
                    d.models == "m"
                        && d.description == "d"
                        && d.results
                            .as_ref()
                            .is_some_and(|r| r.role == "tool" && r.shared.is_none())
                        && matches!(d.openers.as_slice(), [(at, OpenerSpec::Parts(o))]
                            if at == "/openers/0" && o.open == "<c>")
                },
            ),
            ok(
                "several openers, each with its pointer",
                r#"{"name": "semicolon-calls", "openers": [
                    {"open": "<|python_tag|>",
                     "arguments": {"json": "call", "argument_keys": ["parameters", "arguments"]},
                     "separators": ";", "terminators": ["<|eom_id|>", "<|eot_id|>"]},
                    {"open": "{", "trust": "bare",
                     "arguments": {"json": "call", "argument_keys": ["parameters", "arguments"]},
                     "separators": ";"}]}"#,
                |d| match d.openers.as_slice() {
                    [(a, OpenerSpec::Parts(x)), (b, OpenerSpec::Parts(y))] => {
                        a == "/openers/0"
                            && b == "/openers/1"
                            && x.open == "<|python_tag|>"
                            && x.trust == Trust::Definite
                            && y.open == "{"
                            && y.trust == Trust::Bare
                            && y.terminators.is_empty()
                            && matches!(&y.arguments, ArgumentsDesc::Call { keys, .. }
                                if keys.args == ["parameters", "arguments"])
                    }
                    _ => false,
                },
            ),
        ]);
    }

    #[test]
    fn descriptions_as_programs() {
        let ws = |n: usize| vec!["\"ws\""; n].join(", ");
        run(vec![
            ok(
                "the py-angle example",
                r#"{"name": "py-angle", "open": "<<", "program": [
                    {"capture": "name", "until": ["("]}, {"py": "keywords"}, {"lit": ">>"},
                    "dispatch", "end"]}"#,
                |d| {
                    program(d).is_some_and(|o| {
                        *o == Opener::definite(
                            "<<",
                            vec![
                                Step::name_until("("),
                                Step::Py(PyStep::keywords()),
                                Step::lit(">>"),
                                Step::Dispatch,
                                Step::End,
                            ],
                        )
                    })
                },
            ),
            ok(
                "a bare marker is read again by default",
                r#"{"name": "x", "open": "{", "trust": "bare",
                    "program": [{"json": "call"}, "dispatch", "end"]}"#,
                |d| {
                    program(d).is_some_and(|o| {
                        o.trust == Trust::Bare
                            && o.replay
                            && o.program
                                == [
                                    Step::Json(JsonStep::new(Shape::Call, CallKeys::default())),
                                    Step::Dispatch,
                                    Step::End,
                                ]
                    })
                },
            ),
            ok(
                "a bare marker not read again, said",
                r#"{"name": "x", "open": "{", "trust": "bare", "replay": false,
                    "program": ["end"]}"#,
                |d| program(d).is_some_and(|o| o.trust == Trust::Bare && !o.replay),
            ),
            ok(
                "a definite marker read again, said",
                r#"{"name": "x", "open": "<c>", "replay": true, "program": ["end"]}"#,
                |d| program(d).is_some_and(|o| o.trust == Trust::Definite && o.replay),
            ),
            ok(
                "a case-insensitive marker by the flag, at line start",
                r#"{"name": "x", "open": "<call>", "case_insensitive": true,
                    "line_start": true, "program": ["end"]}"#,
                |d| {
                    program(d).is_some_and(|o| {
                        o.marker == Lit::ci("<call>") && o.line_start && !o.stream_start
                    })
                },
            ),
            ok(
                "a case-insensitive marker by its literal",
                r#"{"name": "x", "open": {"text": "<CALL>", "case_insensitive": true},
                    "program": ["end"]}"#,
                |d| program(d).is_some_and(|o| o.marker == Lit::ci("<CALL>")),
            ),
            ok(
                "a program at the start of the stream",
                r#"{"name": "x", "stream_start": true, "trust": "tentative",
                    "program": [{"capture": "name", "until": ["\n"]}, "end"]}"#,
                |d| {
                    program(d).is_some_and(|o| {
                        o.stream_start
                            && o.marker.bytes.is_empty()
                            && o.trust == Trust::Tentative
                            && o.program == [Step::name_until("\n"), Step::End]
                    })
                },
            ),
            ok(
                "as many steps as a program may have",
                &format!(
                    r#"{{"name": "x", "open": "<c>", "program": [{}]}}"#,
                    ws(MAX_STEPS)
                ),
                |d| program(d).is_some_and(|o| o.program.len() == MAX_STEPS),
            ),
            bad(
                "one step more",
                &format!(
                    r#"{{"name": "x", "open": "<c>", "program": [{}]}}"#,
                    ws(MAX_STEPS + 1)
                ),
                "/program",
                "has 10001 steps, more than the 10000 a program may have",
            ),
            bad(
                "no steps",
                r#"{"name": "x", "open": "<c>", "program": []}"#,
                "/program",
                "must be a non-empty array of steps",
            ),
            bad(
                "a program that is a string",
                r#"{"name": "x", "open": "<c>", "program": "end"}"#,
                "/program",
                "must be a non-empty array of steps",
            ),
            bad(
                "a bad step: its own pointer",
                r#"{"name": "x", "open": "<c>", "program": ["ws", {"lit": ""}]}"#,
                "/program/1/lit",
                NOT_A_LIT,
            ),
            bad(
                "a bad step in the second opener",
                r#"{"name": "x", "openers": [{"open": "<a>", "program": ["end"]},
                    {"open": "<b>", "program": [{"goto": ""}]}]}"#,
                "/openers/1/program/0/goto",
                "must be a non-empty string",
            ),
            bad(
                "parts beside a program",
                r#"{"name": "x", "open": "<c>", "arguments": {"json": "call"},
                    "program": ["end"]}"#,
                "/arguments",
                "not allowed beside `program`: the program says everything after the marker",
            ),
            bad(
                "an unknown key beside a program",
                r#"{"name": "x", "open": "<c>", "colour": "red", "program": ["end"]}"#,
                "/colour",
                "unknown key; expected one of name, models, description, openers, \
                 tool_results, open, case_insensitive, line_start, trust, replay, \
                 stream_start, program",
            ),
            bad(
                "a program without its marker",
                r#"{"name": "x", "program": ["end"]}"#,
                "/open",
                NOT_A_LIT,
            ),
            bad(
                "a marker at the start of the stream",
                r#"{"name": "x", "open": "<c>", "stream_start": true, "program": ["end"]}"#,
                "/open",
                "a program at the start of the stream has no marker",
            ),
            bad(
                "stream_start not a boolean",
                r#"{"name": "x", "stream_start": "yes", "program": ["end"]}"#,
                "/stream_start",
                "must be true or false, not a string",
            ),
            bad(
                "replay not a boolean",
                r#"{"name": "x", "open": "<c>", "replay": 1, "program": ["end"]}"#,
                "/replay",
                "must be true or false, not a number",
            ),
            bad(
                "stream_start without a program",
                r#"{"name": "x", "open": "<c>", "stream_start": true,
                    "arguments": {"json": "call"}}"#,
                "/stream_start",
                "unknown key; expected one of name, models, description, openers, \
                 tool_results, open, case_insensitive, line_start, trust, prefix, name_at, \
                 between, arguments, close, separators, terminators",
            ),
        ]);
    }

    #[test]
    fn invalid_descriptions_name_the_field() {
        let call = r#""arguments": {"json": "call"}"#;
        let with = |rest: &str| format!(r#"{{"name": "x", "open": "<c>", {rest}}}"#);
        run(vec![
            // The description as a whole.
            bad("an array", "[]", "", "must be a JSON object"),
            bad("a string", "\"x\"", "", "must be a JSON object"),
            bad("no name", "{}", "/name", "missing; must be a non-empty string"),
            bad(
                "an empty name",
                r#"{"name": ""}"#,
                "/name",
                "must be a non-empty string",
            ),
            bad(
                "the name `auto`",
                &format!(r#"{{"name": "auto", "open": "<c>", {call}}}"#),
                "/name",
                "`auto` is reserved for format detection",
            ),
            bad(
                "models not a string",
                &with(&format!(r#""models": 5, {call}"#)),
                "/models",
                "must be a string, not a number",
            ),
            bad(
                "tool results not an object",
                &with(&format!(r#""tool_results": "x", {call}"#)),
                "/tool_results",
                "must be an object, not a string",
            ),
            // Keys given twice, at any depth.
            bad(
                "a name given twice",
                r#"{"name": "a", "name": "b"}"#,
                "/name",
                "the key `name` is given twice in this object",
            ),
            bad(
                "a key given twice in an opener's arguments",
                r#"{"name": "x", "openers": [{"open": "<c>",
                    "arguments": {"json": "call", "json": "call"}}]}"#,
                "/openers/0/arguments/json",
                "the key `json` is given twice in this object",
            ),
            bad(
                "a key with a slash given twice: escaped in the pointer",
                r#"{"name": "x", "a/b~": 1, "a/b~": 2}"#,
                "/a~1b~0",
                "the key `a/b~` is given twice in this object",
            ),
            // Openers.
            bad(
                "an opener key beside `openers`",
                r#"{"name": "x", "open": "<c>", "openers": [{"open": "<c>",
                    "arguments": {"json": "call"}}]}"#,
                "/open",
                "not allowed beside `openers`: it belongs in each opener",
            ),
            bad(
                "a program beside `openers`",
                r#"{"name": "x", "program": ["end"], "openers": [{"open": "<c>",
                    "program": ["end"]}]}"#,
                "/program",
                "not allowed beside `openers`: it belongs in each opener",
            ),
            bad(
                "an unknown key beside `openers`",
                r#"{"name": "x", "colour": "red", "openers": [{"open": "<c>",
                    "arguments": {"json": "call"}}]}"#,
                "/colour",
                "unknown key; expected one of name, models, description, openers, tool_results",
            ),
            bad(
                "no openers",
                r#"{"name": "x", "openers": []}"#,
                "/openers",
                "must be a non-empty array of openers",
            ),
            bad(
                "openers not an array",
                r#"{"name": "x", "openers": {"open": "<c>"}}"#,
                "/openers",
                "must be a non-empty array of openers",
            ),
            bad(
                "an opener not an object",
                r#"{"name": "x", "openers": ["<c>"]}"#,
                "/openers/0",
                "must be an object, not a string",
            ),
            bad(
                "a format key inside an opener",
                r#"{"name": "x", "openers": [{"name": "y", "open": "<c>",
                    "arguments": {"json": "call"}}]}"#,
                "/openers/0/name",
                "unknown key; expected one of open, case_insensitive, line_start, trust, \
                 prefix, name_at, between, arguments, close, separators, terminators",
            ),
            bad(
                "the second opener's empty close",
                r#"{"name": "x", "openers": [
                    {"open": "<a>", "arguments": {"json": "call"}},
                    {"open": "<b>", "arguments": {"json": "call"}, "close": ""}]}"#,
                "/openers/1/close",
                "must be a non-empty string",
            ),
            bad(
                "an unknown opener key",
                &with(&format!(r#""closer": "</c>", {call}"#)),
                "/closer",
                "unknown key; expected one of name, models, description, openers, \
                 tool_results, open, case_insensitive, line_start, trust, prefix, name_at, \
                 between, arguments, close, separators, terminators",
            ),
            bad(
                "no marker",
                &format!(r#"{{"name": "x", {call}}}"#),
                "/open",
                "missing; must be a non-empty string",
            ),
            bad(
                "an empty marker",
                &format!(r#"{{"name": "x", "open": "", {call}}}"#),
                "/open",
                "must be a non-empty string",
            ),
            bad(
                "an unknown trust",
                &with(&format!(r#""trust": "maybe", {call}"#)),
                "/trust",
                "unknown value \"maybe\"; expected one of definite, tentative, bare",
            ),
            bad(
                "case_insensitive not a boolean",
                &with(&format!(r#""case_insensitive": "yes", {call}"#)),
                "/case_insensitive",
                "must be true or false, not a string",
            ),
            bad(
                "no separators",
                &with(&format!(r#""separators": [], {call}"#)),
                "/separators",
                "must be a non-empty string or a non-empty array of them",
            ),
            bad(
                "an empty terminator",
                &with(&format!(r#""terminators": [""], {call}"#)),
                "/terminators/0",
                "must be a non-empty string",
            ),
            bad(
                "an empty prefix",
                &with(&format!(r#""prefix": "", {call}"#)),
                "/prefix",
                "must be a non-empty string",
            ),
            // Arguments.
            bad(
                "no arguments",
                &with(r#""close": "</c>""#),
                "/arguments",
                "missing; must say how the arguments are written ({\"json\": …} or {\"params\": …})",
            ),
            bad(
                "arguments not an object",
                &with(r#""arguments": "json""#),
                "/arguments",
                "must be an object, not a string",
            ),
            bad(
                "an unknown encoding",
                &with(r#""arguments": {"xml2": {}}"#),
                "/arguments",
                "unknown encoding \"xml2\"; expected one of json, params",
            ),
            bad(
                "no encoding",
                &with(r#""arguments": {}"#),
                "/arguments",
                "empty; expected one of json, params",
            ),
            bad(
                "an unknown JSON shape",
                &with(r#""arguments": {"json": "xml"}"#),
                "/arguments/json",
                "unknown JSON shape \"xml\"; expected one of object, call, calls",
            ),
            bad(
                "a JSON shape not a string",
                &with(r#""arguments": {"json": 1}"#),
                "/arguments/json",
                "must be a string, not a number",
            ),
            bad(
                "call keys on an arguments object",
                &with(r#""name_at": {"until": ">"}, "arguments": {"json": "object", "name_keys": ["n"]}"#),
                "/arguments/name_keys",
                "unknown key; expected one of json, lenient",
            ),
            bad(
                "a program-only call key",
                &with(r#""arguments": {"json": "call", "keyed": true}"#),
                "/arguments/keyed",
                "unknown key; expected one of json, name_keys, argument_keys, id_key, \
                 function_key, other_keys, lenient",
            ),
            bad(
                "empty argument keys",
                &with(r#""arguments": {"json": "call", "argument_keys": []}"#),
                "/arguments/argument_keys",
                "must be a non-empty string or a non-empty array of them",
            ),
            bad(
                "lenient not a boolean",
                &with(r#""arguments": {"json": "calls", "lenient": "yes"}"#),
                "/arguments/lenient",
                "must be true or false, not a string",
            ),
            bad(
                "params beside json",
                &with(r#""name_at": {"until": ">"}, "arguments": {"params": {}, "json": "call"}"#),
                "/arguments/json",
                "unknown key; expected one of params",
            ),
            bad(
                "params not an object",
                &with(r#""name_at": {"until": ">"}, "arguments": {"params": "x"}"#),
                "/arguments/params",
                "must be an object, not a string",
            ),
            bad(
                "params without an end",
                &with(r#""name_at": {"until": ">"}, "arguments": {"params": {"open": "<p=", "key_end": ">", "close": "</p>"}}"#),
                "/arguments/params/end",
                "missing; must be a non-empty string",
            ),
            bad(
                "params with an unknown key",
                &with(r#""name_at": {"until": ">"}, "arguments": {"params": {"open": "<p=", "key_end": ">", "close": "</p>", "end": "</c>", "closer": "x"}}"#),
                "/arguments/params/closer",
                "unknown key; expected one of open, key_end, value_start, close, end, trim, \
                 entities, null",
            ),
            bad(
                "params with an unknown trim",
                &with(r#""name_at": {"until": ">"}, "arguments": {"params": {"open": "<p=", "key_end": ">", "close": "</p>", "end": "</c>", "trim": "both"}}"#),
                "/arguments/params/trim",
                "unknown value \"both\"; expected one of none, newline, all",
            ),
            bad(
                "params with an empty value start",
                &with(r#""name_at": {"until": ">"}, "arguments": {"params": {"open": "<p=", "key_end": ">", "value_start": "", "close": "</p>", "end": "</c>"}}"#),
                "/arguments/params/value_start",
                "must be a non-empty string",
            ),
            // The name.
            bad(
                "a name place with a call object",
                &with(&format!(r#""name_at": {{"until": ">"}}, {call}"#)),
                "/name_at",
                "not allowed with a JSON call object: its name keys say where the name is",
            ),
            bad(
                "no name place before an arguments object",
                &with(r#""arguments": {"json": "object"}"#),
                "/name_at",
                "missing; arguments that are not a call object need the name before them",
            ),
            bad(
                "a name place that says nothing",
                &with(r#""name_at": {}, "arguments": {"json": "object"}"#),
                "/name_at",
                "must have `until` (the literal after the name) or `before` (the characters \
                 that end it)",
            ),
            bad(
                "a name place that says both",
                &with(r#""name_at": {"until": ">", "before": " "}, "arguments": {"json": "object"}"#),
                "/name_at/before",
                "give either `until` or `before`, not both",
            ),
            bad(
                "a name before non-ASCII characters",
                &with(r#""name_at": {"before": "→"}, "arguments": {"json": "object"}"#),
                "/name_at/before",
                "must be ASCII characters",
            ),
            bad(
                "a name until nothing",
                &with(r#""name_at": {"until": ""}, "arguments": {"json": "object"}"#),
                "/name_at/until",
                "must be a non-empty string",
            ),
            bad(
                "a name place with an unknown key",
                &with(r#""name_at": {"after": ">"}, "arguments": {"json": "object"}"#),
                "/name_at/after",
                "unknown key; expected one of until, before",
            ),
            bad(
                "markup between no name and a call object",
                &with(&format!(r#""between": "ARGS:", {call}"#)),
                "/between",
                "only between a name (`name_at`) and the arguments; markup before a call \
                 object is a `prefix`",
            ),
            // Bare markers.
            bad(
                "a bare marker before an arguments object",
                r#"{"name": "x", "open": "{", "trust": "bare", "name_at": {"until": " "},
                    "arguments": {"json": "object"}}"#,
                "/trust",
                "`bare` needs JSON call arguments: the marker is the call object's first byte",
            ),
            bad(
                "a bare marker that is no JSON's first byte",
                r#"{"name": "x", "open": "<", "trust": "bare", "arguments": {"json": "call"}}"#,
                "/open",
                "a `bare` marker must be the first byte of the JSON: `{` (or `[` for a list of calls)",
            ),
            bad(
                "a bare `[` before one call object",
                r#"{"name": "x", "open": "[", "trust": "bare", "arguments": {"json": "call"}}"#,
                "/open",
                "a `bare` marker must be the first byte of the JSON: `{` (or `[` for a list of calls)",
            ),
            bad(
                "a bare marker with a prefix",
                r#"{"name": "x", "open": "{", "trust": "bare", "prefix": "x",
                    "arguments": {"json": "call"}}"#,
                "/prefix",
                "not allowed with a `bare` marker",
            ),
        ]);
    }

    #[test]
    fn text_that_is_not_json_is_refused_as_a_whole() {
        for (what, text) in [
            ("empty", ""),
            ("a word", "name"),
            ("cut short", r#"{"name": "x", "open": "#),
            ("a trailing comma", r#"{"name": "x",}"#),
            ("a byte-order mark alone", "\u{FEFF}"),
        ] {
            let e = Description::from_json(text).map(|d| d.name);
            let e = e.expect_err(what);
            assert_eq!(e.pointer(), "", "{what}");
            assert!(e.reason().starts_with("not JSON: "), "{what}: {e}");
        }
    }
}
