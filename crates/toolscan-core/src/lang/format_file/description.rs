//! A format description read from JSON and checked field by field, before
//! it is compiled into openers and programs.

use serde_json::Value;

use super::fields::Obj;
use crate::error::{child, FormatFileError};
use crate::lang::format::{CallKeys, Lit, Opener, Step, Trim, Trust};
use crate::lang::payload::read_lit;
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

/// Reads a `program` array: each step by the table of steps.
/// The most steps one program of a format file may have: the built-in
/// formats' longest has a few dozen; a program is compiled and checked in
/// memory proportional to its steps, so a bound keeps a hostile file from
/// costing gigabytes.
pub const MAX_STEPS: usize = 10_000;

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
