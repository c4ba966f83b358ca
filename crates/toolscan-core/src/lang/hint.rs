//! Rendering hints (`{"render": {…}}` steps): what the renderer writes
//! where a program admits several spellings, how values are spelled, and
//! how a turn with calls is framed. A parser never sees them.

use serde_json::{Map, Value};

use crate::error::FormatFileError;
use crate::lang::format_file::fields::{Obj, Payload};
use crate::lang::payload::Label;

/// How a type attribute ([`Field::Type`](crate::lang::payload::Field::Type)) is written when rendering.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub(crate) enum TypeWords {
    /// A JSON type name: `string`, `number`, `boolean`, `null`, `object`,
    /// `array`.
    #[default]
    Names,
    /// `true` for a string, `false` for any other value (DeepSeek's
    /// `string="…"`).
    Bool,
}

/// How values are spelled when rendering: JSON's separators, indentation
/// and escapes, and Python's quotes.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Style {
    /// Between two items of an array or members of an object (`", "`).
    pub item_sep: String,
    /// Between a key and its value (`": "`).
    pub key_sep: String,
    /// Indentation per level; items then go on lines of their own (as
    /// Python's `json.dumps(indent=…)`).
    pub indent: Option<u8>,
    /// Characters outside ASCII written as `\uXXXX`.
    pub ascii: bool,
    /// Object members written sorted by key.
    pub sort_keys: bool,
    /// The quote of Python strings (`'` or `"`).
    pub quote: char,
    /// How a type attribute is written.
    pub types: TypeWords,
    /// Where a raw parameter value that is not a string is written as
    /// Python prints it (templates that print values with `|string`).
    pub python: PyValues,
    /// A list of calls written one call a line, each line indented by
    /// this many spaces, the brackets on lines of their own and each call
    /// flat (Command R7B's `[\n    {…},\n    {…}\n]`); `indent` then
    /// applies inside a call.
    pub lines: Option<u8>,
    /// A key each call object begins with, its value the call's place in
    /// the turn counted from 0, as a string (Command R7B's
    /// `"tool_call_id": "0"`). Read back, it is one of the call's other
    /// keys.
    pub ordinal: Option<String>,
    /// A Python call's arguments that are not strings written as JSON
    /// (`true`, `null`, `{"a": [1]}`; Olmo 3's template writes them with
    /// `tojson`), for a format whose reader takes JSON's literals.
    pub json_values: bool,
}

/// Which raw parameter values are written as Python prints them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub(crate) enum PyValues {
    /// None: every value is JSON.
    #[default]
    Json,
    /// `True`, `False` and `None`; lists and objects stay JSON.
    Scalars,
    /// Every value: `True`, `None`, `{'a': [1, 'x']}`.
    All,
}

impl Default for Style {
    fn default() -> Self {
        Style {
            item_sep: ", ".into(),
            key_sep: ": ".into(),
            indent: None,
            ascii: false,
            sort_keys: false,
            quote: '\'',
            types: TypeWords::Names,
            python: PyValues::Json,
            lines: None,
            ordinal: None,
            json_values: false,
        }
    }
}

/// A rendering hint (`{"render": {…}}`): what the renderer writes at the
/// next step where the program allows several spellings. It reads nothing
/// and compiles to nothing; a parser never sees it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub(crate) struct Hint {
    /// What the next step writes: the whitespace of a `ws` or `blank`, the
    /// info word of a `word`, a fixed word for a `capture` (a discarded
    /// word, or a name a later capture replaces), the literal a `then`
    /// writes after the last call (none: the block just ends), `""` for an
    /// `opt_lit` left out, and for an `end` what separates the block from
    /// the next one.
    pub write: Option<String>,
    /// What the next `then` writes when another call follows: the literal
    /// that goes on to it, after any whitespace the hint begins with
    /// (`""`: the block ends there and the next call opens a block of its
    /// own). None: the first of its literals.
    pub sep: Option<String>,
    /// The branch of the next `fork`, `one_of`, `then` or `capture` tried
    /// first.
    pub prefer: Option<Label>,
    /// How the next `json`, `py` or `value` step spells values, and the
    /// next type `capture` its type.
    pub style: Style,
    /// How the turn around the calls is framed, as the chat templates
    /// write it. Read from a hint that is the first step of an opener's
    /// program (the first such hint of the format counts).
    pub frame: Frame,
}

/// What a format's templates write around a turn with calls: before the
/// text, between the text and the first call, and after the last call.
/// All of it reads back as text.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub(crate) struct Frame {
    /// Before the turn's text (an empty `<think></think>`).
    pub before: Option<String>,
    /// Between the text and the first call, when there is text.
    pub text_sep: Option<String>,
    /// Before the first call, when there is no text.
    pub lead: Option<String>,
    /// After the last call.
    pub tail: Option<String>,
}

impl Frame {
    /// Whether the frame writes anything.
    pub(crate) fn is_set(&self) -> bool {
        self.before.is_some()
            || self.text_sep.is_some()
            || self.lead.is_some()
            || self.tail.is_some()
    }
}

impl Hint {
    /// A hint that the next step writes `s`.
    pub(crate) fn write(s: &str) -> Hint {
        Hint {
            write: Some(s.into()),
            ..Hint::default()
        }
    }

    /// A hint of what the next `then` writes between two calls (see
    /// [`Hint::sep`]).
    pub(crate) fn sep(s: &str) -> Hint {
        Hint {
            sep: Some(s.into()),
            ..Hint::default()
        }
    }

    /// A hint that the next choice tries `label` first.
    pub(crate) fn prefer(label: &'static str) -> Hint {
        Hint {
            prefer: Some(Label::from(label)),
            ..Hint::default()
        }
    }

    /// A hint of the spelling of values.
    pub(crate) fn style(style: Style) -> Hint {
        Hint {
            style,
            ..Hint::default()
        }
    }

    /// A hint of how the turn is framed.
    pub(crate) fn frame(frame: Frame) -> Hint {
        Hint {
            frame,
            ..Hint::default()
        }
    }

    /// Whether the hint says nothing but the frame (a step that then
    /// leaves the next step as it is).
    pub(crate) fn frame_only(&self) -> bool {
        self.frame.is_set()
            && self.write.is_none()
            && self.sep.is_none()
            && self.prefer.is_none()
            && self.style == Style::default()
    }
}

/// `{"render": {"write": TEXT, "sep": TEXT, "prefer": LABEL, "item_sep": ", ",
/// "key_sep": ": ", "indent": N, "ascii": BOOL, "sort_keys": BOOL,
/// "quote": "'" | "\"", "types": "names" | "bool",
/// "python": "json" | "scalars" | "all", "lines": N, "ordinal": KEY,
/// "json_values": BOOL,
/// "frame": TEXT,
/// "text_sep": TEXT, "lead": TEXT, "tail": TEXT}}`.
impl Payload for Hint {
    fn read(o: &Obj<'_>, kind: &str) -> Result<Hint, FormatFileError> {
        let Some(h) = o.obj(kind)? else {
            return Err(o.err(kind, "must be an object of rendering hints"));
        };
        h.only(&[
            "write",
            "sep",
            "prefer",
            "item_sep",
            "key_sep",
            "indent",
            "ascii",
            "sort_keys",
            "quote",
            "types",
            "python",
            "lines",
            "ordinal",
            "json_values",
            "frame",
            "text_sep",
            "lead",
            "tail",
        ])?;
        let d = Style::default();
        let spaces = |key: &str| match h.get(key) {
            None => Ok(None),
            Some(v) => match v.as_u64().and_then(|n| u8::try_from(n).ok()) {
                Some(n) => Ok(Some(n)),
                None => Err(h.err(key, "must be a number of spaces up to 255")),
            },
        };
        let indent = spaces("indent")?;
        let lines = spaces("lines")?;
        let quote = match h.choice("quote", &["'", "\""])? {
            Some("\"") => '"',
            _ => '\'',
        };
        let types = match h.choice("types", &["names", "bool"])? {
            Some("bool") => TypeWords::Bool,
            _ => TypeWords::Names,
        };
        let python = match h.choice("python", &["json", "scalars", "all"])? {
            Some("scalars") => PyValues::Scalars,
            Some("all") => PyValues::All,
            _ => PyValues::Json,
        };
        Ok(Hint {
            write: h.str("write")?.map(str::to_owned),
            sep: h.str("sep")?.map(str::to_owned),
            prefer: h.lit("prefer")?.map(|l| Label::from(l.to_owned())),
            style: Style {
                item_sep: h.str("item_sep")?.map_or(d.item_sep, str::to_owned),
                key_sep: h.str("key_sep")?.map_or(d.key_sep, str::to_owned),
                indent,
                ascii: h.flag("ascii")?,
                sort_keys: h.flag("sort_keys")?,
                quote,
                types,
                python,
                lines,
                ordinal: h.str("ordinal")?.map(str::to_owned),
                json_values: h.flag("json_values")?,
            },
            frame: Frame {
                before: h.str("frame")?.map(str::to_owned),
                text_sep: h.str("text_sep")?.map(str::to_owned),
                lead: h.str("lead")?.map(str::to_owned),
                tail: h.str("tail")?.map(str::to_owned),
            },
        })
    }
    fn write(
        &self,
        kind: &str,
        m: &mut Map<String, Value>,
        _: &str,
    ) -> Result<(), FormatFileError> {
        let d = Style::default();
        let s = &self.style;
        let mut h = Map::new();
        if let Some(w) = &self.write {
            h.insert("write".into(), w.clone().into());
        }
        if let Some(w) = &self.sep {
            h.insert("sep".into(), w.clone().into());
        }
        if let Some(p) = &self.prefer {
            h.insert("prefer".into(), p.as_str().into());
        }
        if s.item_sep != d.item_sep {
            h.insert("item_sep".into(), s.item_sep.clone().into());
        }
        if s.key_sep != d.key_sep {
            h.insert("key_sep".into(), s.key_sep.clone().into());
        }
        if let Some(n) = s.indent {
            h.insert("indent".into(), n.into());
        }
        if let Some(n) = s.lines {
            h.insert("lines".into(), n.into());
        }
        if let Some(k) = &s.ordinal {
            h.insert("ordinal".into(), k.clone().into());
        }
        for (key, on) in [
            ("ascii", s.ascii),
            ("sort_keys", s.sort_keys),
            ("json_values", s.json_values),
        ] {
            if on {
                h.insert(key.into(), true.into());
            }
        }
        if s.quote != d.quote {
            h.insert("quote".into(), s.quote.to_string().into());
        }
        if s.types == TypeWords::Bool {
            h.insert("types".into(), "bool".into());
        }
        match s.python {
            PyValues::Json => {}
            PyValues::Scalars => {
                h.insert("python".into(), "scalars".into());
            }
            PyValues::All => {
                h.insert("python".into(), "all".into());
            }
        }
        let f = &self.frame;
        for (key, v) in [
            ("frame", &f.before),
            ("text_sep", &f.text_sep),
            ("lead", &f.lead),
            ("tail", &f.tail),
        ] {
            if let Some(v) = v {
                h.insert(key.into(), v.clone().into());
            }
        }
        m.insert(kind.into(), Value::Object(h));
        Ok(())
    }
}
