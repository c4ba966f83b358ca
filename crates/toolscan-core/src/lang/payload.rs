//! What the steps of a program carry — literals, labels, captures, JSON
//! shapes and keys, raw values, Python dialects, byte sets. Each
//! payload's JSON form in a format file is in `format_file/payloads.rs`,
//! the rendering hints in `hint.rs`; the steps themselves, one row each,
//! are the table in `step.rs`.

use std::borrow::Cow;

/// The name of a place in a program: `Step::Label` puts it before the
/// next step, jumps (`Step::Goto`, `Step::Fork`, `Step::Then`, a
/// [`Capture`] delimiter) name it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Label(Cow<'static, str>);

impl Label {
    /// The label's name.
    pub(crate) fn as_str(&self) -> &str {
        &self.0
    }
}

impl From<&'static str> for Label {
    fn from(s: &'static str) -> Label {
        Label(Cow::Borrowed(s))
    }
}

impl From<String> for Label {
    fn from(s: String) -> Label {
        Label(Cow::Owned(s))
    }
}

/// A literal byte string, optionally ASCII-case-insensitive.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Lit {
    /// The bytes.
    pub bytes: Vec<u8>,
    /// Whether ASCII letters match in either case.
    pub case_insensitive: bool,
}

impl Lit {
    /// A case-sensitive literal.
    pub(crate) fn new(s: &str) -> Lit {
        Lit {
            bytes: s.as_bytes().to_vec(),
            case_insensitive: false,
        }
    }

    /// An ASCII-case-insensitive literal.
    pub(crate) fn ci(s: &str) -> Lit {
        Lit {
            bytes: s.as_bytes().to_vec(),
            case_insensitive: true,
        }
    }

    /// Whether byte `b` matches the literal's byte at `i`.
    #[inline]
    pub(crate) fn matches_at(&self, i: usize, b: u8) -> bool {
        let want = self.bytes[i];
        want == b || (self.case_insensitive && want.eq_ignore_ascii_case(&b))
    }

    /// Whether `hay` ends with this literal.
    pub(crate) fn is_suffix_of(&self, hay: &[u8]) -> bool {
        let n = self.bytes.len();
        hay.len() >= n && (0..n).all(|i| self.matches_at(i, hay[hay.len() - n + i]))
    }

    /// The literal as display text.
    pub(crate) fn display(&self) -> String {
        String::from_utf8_lossy(&self.bytes)
            .replace('\n', "\\n")
            .to_string()
    }

    /// The literal as a message names it: as [`display`](Self::display),
    /// cut after [`SHOWN_CHARS`] characters (with `…` and its length in
    /// bytes), so that a message about a huge literal stays a line.
    pub(crate) fn shown(&self) -> String {
        shown(&self.bytes)
    }
}

/// How many characters of a literal a message shows.
pub(crate) const SHOWN_CHARS: usize = 64;

/// Bytes as a message names them: lossy UTF-8, newlines as `\n`, cut
/// after [`SHOWN_CHARS`] characters (then `…` and the length in bytes).
pub(crate) fn shown(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    match text.char_indices().nth(SHOWN_CHARS) {
        None => text.replace('\n', "\\n"),
        Some((cut, _)) => format!(
            "{}… ({} bytes)",
            text[..cut].replace('\n', "\\n"),
            bytes.len()
        ),
    }
}

/// What a captured word is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Field {
    /// The tool name.
    Name,
    /// The call id carried by the format (e.g. Mistral's `[CALL_ID]`).
    Id,
    /// A word to check and drop (e.g. DeepSeek's `function` type).
    Discard,
    /// The call's place among the turn's calls (Kimi K3's `index="1"`):
    /// read and dropped like [`Field::Discard`], written as the call's
    /// number, counted from 1.
    Ordinal,
    /// A parameter's name, in a body of parameters (`<parameter=city>`):
    /// the arguments object gets this key, and the parameter's type is
    /// looked up in the tools schema.
    Key,
    /// A parameter's own statement of its type, which takes precedence
    /// over the schema: `true` or `string` (the value is a string), `false`
    /// (the value is JSON), or a JSON type name (`number`, `boolean`,
    /// `null`, `object`, `array`).
    Type,
    /// A call id that holds the tool name, `NAMESPACE.NAME:INDEX` (Kimi's
    /// `functions.get_weather:0`): the whole word is the call's id, and the
    /// name is what lies between the last `.` before the last `:` and that
    /// `:` (without a `.`, everything before the `:`). A word without a
    /// `:` followed by digits is not such an id: the block fails.
    NamedId,
}

/// A run of name-like bytes, ended by a delimiter (consumed) or a stop byte
/// (left for the next step). Surrounding whitespace is trimmed; whitespace or
/// markup inside the word fails the block.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Capture {
    /// What the word is.
    pub field: Field,
    /// Bytes that end the word and are left for the next step.
    pub stop: Vec<u8>,
    /// Literals that end the word and are consumed; each may jump to a
    /// label (`None`: the next step).
    pub delims: Vec<(Lit, Option<Label>)>,
    /// The end of the stream ends the word too, as a stop byte would (a
    /// call that runs to the end of its line, or of the stream).
    pub at_end: bool,
    /// Words that are markup, not a value of `field`: when the captured
    /// word is one of these, it sets nothing and the program goes on at
    /// its label (Functionary's `all` recipient, which introduces text
    /// rather than a call).
    pub keywords: Vec<(String, Label)>,
}

impl Capture {
    /// A word of kind `field` ended by one of `delims` (consumed, then on
    /// to the label or the next step).
    pub(crate) fn until(field: Field, delims: Vec<(Lit, Option<Label>)>) -> Capture {
        Capture {
            field,
            stop: Vec::new(),
            delims,
            at_end: false,
            keywords: Vec::new(),
        }
    }

    /// A word of kind `field` ended by any byte of `stop` (left for the
    /// next step).
    pub(crate) fn before(field: Field, stop: &[u8]) -> Capture {
        Capture {
            field,
            stop: stop.to_vec(),
            delims: Vec::new(),
            at_end: false,
            keywords: Vec::new(),
        }
    }

    /// Lets the end of the stream end the word (see [`Capture::at_end`]).
    pub(crate) fn or_end(mut self) -> Capture {
        self.at_end = true;
        self
    }

    /// Adds a word that is markup (see [`Capture::keywords`]).
    pub(crate) fn keyword(mut self, word: &str, label: impl Into<Label>) -> Capture {
        self.keywords.push((word.to_string(), label.into()));
        self
    }
}

/// What JSON value a `Step::Json` expects.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Shape {
    /// The arguments object itself (the name came from markup).
    Args,
    /// One call object holding name and arguments (see [`CallKeys`]).
    Call,
    /// An array of call objects (a single call object is accepted too); each
    /// call is dispatched as soon as its object closes.
    CallList,
    /// A call object, an array of them, or an envelope
    /// `{"tool_calls": [...]}` / `{"tool_call": {...}}`.
    Root,
}

/// Which keys of a call object hold what.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct CallKeys {
    /// Keys of the tool name, e.g. `name`.
    pub name: Vec<String>,
    /// Keys of the arguments (an object, a JSON string holding one, or
    /// `null`), e.g. `arguments`, `parameters`.
    pub args: Vec<String>,
    /// Key of an in-text call id, e.g. `id`.
    pub id: Option<String>,
    /// Key of a nested `{"name", "arguments"}` object (OpenAI's `function`).
    pub function: Option<String>,
    /// Other keys a call object may carry (e.g. `type`). In a tentative
    /// block, a key that is none of these means "not a call".
    pub other: Vec<String>,
    /// Key of a top-level object whose string value is the model's text,
    /// not a call (llama.cpp's generic envelope `{"response": "…"}`; only
    /// read by [`Shape::Root`]). The string's content, decoded as it
    /// streams, is emitted as text; the JSON around it is framing and is
    /// dropped.
    pub text: Option<String>,
    /// A call object is `{NAME: ARGUMENTS}`: its one key is the tool name
    /// and its value the arguments (Apertus). `name` and `args` are not
    /// used then; a second key fails the call.
    pub keyed: bool,
    /// Tool names that mean "no tool" (Cohere's `directly-answer`): such a
    /// call object is the model saying it answers directly — framing,
    /// neither a call nor text.
    pub no_call: Vec<String>,
}

impl Default for CallKeys {
    fn default() -> Self {
        CallKeys::new(&["name"], &["arguments", "parameters"])
    }
}

impl CallKeys {
    /// Name keys and argument keys; no id.
    pub(crate) fn new(name: &[&str], args: &[&str]) -> CallKeys {
        CallKeys {
            name: name.iter().map(|s| s.to_string()).collect(),
            args: args.iter().map(|s| s.to_string()).collect(),
            id: None,
            function: None,
            other: vec!["type".into()],
            text: None,
            keyed: false,
            no_call: Vec::new(),
        }
    }

    /// Adds a tool name that means "no tool" (see [`CallKeys::no_call`]).
    pub(crate) fn with_no_call(mut self, name: &str) -> CallKeys {
        self.no_call.push(name.into());
        self
    }

    /// Call objects of the form `{NAME: ARGUMENTS}` (see
    /// [`CallKeys::keyed`]).
    pub(crate) fn keyed() -> CallKeys {
        CallKeys {
            keyed: true,
            other: Vec::new(),
            ..CallKeys::new(&[], &[])
        }
    }

    /// Adds an in-text id key.
    pub(crate) fn with_id(mut self, key: &str) -> CallKeys {
        self.id = Some(key.into());
        self
    }

    /// Adds a nested function-object key.
    pub(crate) fn with_function(mut self, key: &str) -> CallKeys {
        self.function = Some(key.into());
        self
    }

    /// Adds the key of a top-level text envelope (see [`CallKeys::text`]).
    pub(crate) fn with_text(mut self, key: &str) -> CallKeys {
        self.text = Some(key.into());
        self
    }
}

/// A JSON value inside a block.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct JsonStep {
    /// What the value is.
    pub shape: Shape,
    /// Keys of call objects.
    pub keys: CallKeys,
    /// Accept (and normalise) single quotes, raw control characters in
    /// strings, Python `True`/`False`/`None` and trailing commas.
    pub lenient: bool,
}

impl JsonStep {
    /// A value of `shape` whose call objects have `keys`.
    pub(crate) fn new(shape: Shape, keys: CallKeys) -> JsonStep {
        JsonStep {
            shape,
            keys,
            lenient: false,
        }
    }

    /// Accepts (and normalises) what models write when told to write JSON
    /// by hand.
    pub(crate) fn lenient(mut self) -> JsonStep {
        self.lenient = true;
        self
    }
}

/// Which whitespace around a raw parameter value is markup, not value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Trim {
    /// None: every byte between the tags is the value.
    None,
    /// One newline right after the opening tag and one right before the
    /// closing tag (what Qwen3-Coder's template writes around a value).
    Newline,
    /// All leading and trailing whitespace.
    All,
}

/// What ends a raw parameter value.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Close {
    /// This literal (`</parameter>`).
    Lit(Lit),
    /// A closing tag named after the parameter: `</KEY>` (generic XML
    /// children such as `<query>…</query>`).
    KeyTag,
    /// ASCII whitespace, left for the next step, or the end of the stream:
    /// the value is one word (`path /tmp/x.txt`). An empty word fails the
    /// block.
    Space,
    /// The bracket that closes the value's first one: the value is a JSON
    /// object or array (`meta {"tags": ["x"]}`), and brackets inside its
    /// strings do not count. The value must begin with `{` or `[`.
    Balanced,
}

/// A raw parameter value (XML-style arguments): the text up to its closer,
/// typed by the parameter's own type attribute, else by the tools schema,
/// else by the untyped rule (JSON if the text is a JSON value, a string
/// otherwise). A string value streams out as a JSON string while it
/// arrives; other values are converted when they end.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct ValueStep {
    /// What ends the value (consumed); the program goes on with the next
    /// step.
    pub close: Close,
    /// Markup that ends a value whose closer is missing, where it begins
    /// (the next parameter's opening tag): the value ends before it, a
    /// diagnostic says so, and the program goes on at the label, the
    /// literal consumed.
    pub recover: Vec<(Lit, Label)>,
    /// Markup that may end a value whose closer is missing (the call's own
    /// closer), but may as well be part of the value: the value reads on.
    /// If the stream ends before the value's closer, the value ends at the
    /// first such literal (with a diagnostic) and what follows it is read
    /// again from the label. So it does as soon as the next call's markup
    /// follows such a literal: what the program reads after the dispatch
    /// the label leads to (a `Then`'s literals), or the opener's marker
    /// followed by a `recover` literal (the next call's parameter).
    pub recover_at_end: Vec<(Lit, Label)>,
    /// Markup that, before any text of the value (whitespace aside), makes
    /// the value a container — nested parameters (`<arg name=`), a list of
    /// items (`<item>`) — and goes on at the label, the literal consumed;
    /// after text it is part of the value.
    pub nest: Vec<(Lit, Label)>,
    /// Raw-content guards (`__START_CONTENT__`, `__END_CONTENT__`): a value
    /// that begins (whitespace aside) with the first is everything up to
    /// the second, markup and closing tags included, verbatim; then the
    /// value's closer follows.
    pub guard: Option<(Lit, Lit)>,
    /// Whitespace that is markup.
    pub trim: Trim,
    /// The value is XML text: `&lt;`, `&amp;`, `&#233;`… are decoded.
    pub entities: bool,
    /// The end of the stream ends the value too, a closer it may have
    /// begun included (raw code that runs to the end of the completion).
    pub or_end: bool,
    /// The text `null` is JSON null, whatever type the value is declared
    /// (a template that writes a string verbatim writes `None` as `null`).
    pub null: bool,
}

impl ValueStep {
    /// A value closed by `close`, with no recovery, nothing trimmed and no
    /// entities.
    pub(crate) fn until(close: &str) -> ValueStep {
        ValueStep::closed_by(Close::Lit(Lit::new(close)))
    }

    /// A value that `close` ends, with no recovery, nothing trimmed and no
    /// entities.
    pub(crate) fn closed_by(close: Close) -> ValueStep {
        ValueStep {
            close,
            recover: Vec::new(),
            recover_at_end: Vec::new(),
            nest: Vec::new(),
            guard: None,
            trim: Trim::None,
            entities: false,
            or_end: false,
            null: false,
        }
    }

    /// Adds markup that makes the value a container (see
    /// [`ValueStep::nest`]).
    pub(crate) fn nest(mut self, lit: &str, label: impl Into<Label>) -> ValueStep {
        self.nest.push((Lit::new(lit), label.into()));
        self
    }

    /// Sets raw-content guards (see [`ValueStep::guard`]).
    pub(crate) fn guard(mut self, open: &str, close: &str) -> ValueStep {
        self.guard = Some((Lit::new(open), Lit::new(close)));
        self
    }

    /// Sets the whitespace that is markup.
    pub(crate) fn trim(mut self, trim: Trim) -> ValueStep {
        self.trim = trim;
        self
    }

    /// Decodes XML entities.
    pub(crate) fn entities(mut self) -> ValueStep {
        self.entities = true;
        self
    }

    /// Reads the text `null` as JSON null whatever the declared type (see
    /// [`ValueStep::null`]).
    pub(crate) fn null(mut self) -> ValueStep {
        self.null = true;
        self
    }

    /// Lets the end of the stream end the value (see [`ValueStep::or_end`]).
    pub(crate) fn or_end(mut self) -> ValueStep {
        self.or_end = true;
        self
    }

    /// Adds markup that ends an unclosed value (see [`ValueStep::recover`]).
    pub(crate) fn recover(mut self, lit: &str, label: impl Into<Label>) -> ValueStep {
        self.recover.push((Lit::new(lit), label.into()));
        self
    }

    /// Adds markup that may end an unclosed value at the end of the stream
    /// (see [`ValueStep::recover_at_end`]).
    pub(crate) fn recover_at_end(mut self, lit: &str, label: impl Into<Label>) -> ValueStep {
        self.recover_at_end.push((Lit::new(lit), label.into()));
        self
    }
}

/// How the arguments of a call in Python-like notation are keyed, and what
/// closes them (see [`PyStep`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum PyArgs {
    /// Python keyword arguments, `name=value, …`, up to the `)` that
    /// closes the call. Names are identifiers; a positional argument fails
    /// the call. Dictionary keys are literals (`{'k': 1}`: strings, or
    /// numbers, which become their text), and parentheses make tuples.
    Keywords,
    /// Bare keys, `key:value, …`, up to the `}` that closes the call, and
    /// in nested objects too: a key is the text before its `:` (spaces
    /// inside it are kept, around it trimmed).
    BareKeys,
}

/// How strings are written in Python-like notation (see [`PyStep`]).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum PyStrings {
    /// Python string literals: `'…'`, `"…"`, `'''…'''`, `"""…"""`, with
    /// Python's escapes, and the `r` (raw) and `u` prefixes.
    Quoted,
    /// Verbatim text between two copies of a delimiter
    /// (`<escape>…<escape>`): nothing inside is escaped.
    Delimited(Lit),
}

/// The arguments of a call written in Python-like notation, read after the
/// bracket that opens them (`(` or `{`, usually the delimiter of the name
/// before it) up to and including the one that closes them. They become a
/// JSON object: strings, numbers, the literals the step allows, lists,
/// tuples (as arrays) and dictionaries (as objects). A name that is not a
/// literal — a variable, a nested call `f(x=g(1))` — fails the call.
///
/// The arguments text is written as the notation is read: each key as
/// soon as it ends, string values while they arrive, other values when
/// they end, so every argument delta is a prefix of the final arguments.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct PyStep {
    /// How arguments (and dictionary keys) are written, and what closes
    /// the arguments.
    pub args: PyArgs,
    /// How strings are written.
    pub strings: PyStrings,
    /// `True`, `False` and `None` are literals.
    pub python_literals: bool,
    /// `true`, `false` and `null` are literals.
    pub json_literals: bool,
}

impl PyStep {
    /// Python keyword arguments with Python literals (`True`, `None`).
    pub(crate) fn keywords() -> PyStep {
        PyStep {
            args: PyArgs::Keywords,
            strings: PyStrings::Quoted,
            python_literals: true,
            json_literals: false,
        }
    }

    /// Bare keys, strings between two copies of `delimiter`, and JSON's
    /// literals (`true`, `null`).
    pub(crate) fn bare_keys(delimiter: &str) -> PyStep {
        PyStep {
            args: PyArgs::BareKeys,
            strings: PyStrings::Delimited(Lit::new(delimiter)),
            python_literals: false,
            json_literals: true,
        }
    }

    /// Allows JSON's literals `true`, `false` and `null` too.
    pub(crate) fn json_literals(mut self) -> PyStep {
        self.json_literals = true;
        self
    }
}

/// A set of bytes for `Step::Fork`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum ByteSet {
    /// These bytes.
    Bytes(Vec<u8>),
    /// Any byte.
    Any,
    /// Any byte but these.
    AnyBut(Vec<u8>),
    /// No byte: the end of the stream. A fork waiting for a byte when the
    /// stream ends takes this branch (a call that runs to the end of its
    /// line may end with the stream).
    End,
}

impl ByteSet {
    pub(crate) fn contains(&self, b: u8) -> bool {
        match self {
            ByteSet::Bytes(v) => v.contains(&b),
            ByteSet::Any => true,
            ByteSet::AnyBut(v) => !v.contains(&b),
            ByteSet::End => false,
        }
    }
}

/// What a `Step::Open` (`{"container": …}`) opens: the
/// parameter just read holds parameters, or a list of values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Container {
    /// An object of parameters (`<arg name=…>` inside `<arg>`).
    Object,
    /// A list of values (`<item>`).
    List,
}

/// Where reading over a failed list element stops, and where the program
/// goes on (see `Step::RecoverElement`, `{"recover_element": …}`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct ElementEnd {
    /// Bytes that end an element at the list's own level (`,`, `]`).
    pub ends: Vec<u8>,
    /// The step that reads that byte.
    pub to: Label,
}

impl ElementEnd {
    /// An element ends at any of `ends`; the program goes on at `to`.
    pub(crate) fn new(ends: &[u8], to: impl Into<Label>) -> ElementEnd {
        ElementEnd {
            ends: ends.to_vec(),
            to: to.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    //! Each unit of the file against a table of inputs and outcomes: the
    //! literal helpers, byte sets, and every payload's JSON form as a
    //! program step reads it (through `Step::read`, the path a format file
    //! takes, so each step's allowed keys are checked too) and writes it.

    use super::*;
    use crate::error::FormatFileError;
    use crate::lang::format_file::payloads::*;
    use crate::lang::hint::{Hint, PyValues, Style, TypeWords};
    use crate::lang::step::Step;
    use serde_json::{json, Value};

    /// The message of a value that is not a literal.
    const NOT_A_LIT: &str =
        "must be a literal: a non-empty string or {\"text\": …, \"case_insensitive\": true}";

    /// A row of a table: what it tries, the input, and the outcome (an
    /// error as its pointer and reason).
    type Row<I, T> = (&'static str, I, Result<T, (String, String)>);

    /// A list of jumps.
    type Jumps = Vec<(Lit, Label)>;

    /// An error as (pointer, reason).
    fn err(pointer: &str, reason: &str) -> Result<Step, (String, String)> {
        Err((pointer.to_owned(), reason.to_owned()))
    }

    fn parts(e: FormatFileError) -> (String, String) {
        (e.pointer().to_owned(), e.reason().to_owned())
    }

    #[test]
    fn literals_match_as_suffixes() {
        let table: Vec<(&str, Lit, &[u8], bool)> = vec![
            ("exact", Lit::new("</a>"), b"</a>", true),
            ("end of longer text", Lit::new("</a>"), b"text</a>", true),
            (
                "text shorter than the literal",
                Lit::new("</a>"),
                b"a>",
                false,
            ),
            ("empty text", Lit::new("x"), b"", false),
            (
                "in the middle, not at the end",
                Lit::new("ab"),
                b"abc",
                false,
            ),
            ("other case, case-sensitive", Lit::new("END"), b"end", false),
            (
                "other case, case-insensitive",
                Lit::ci("END"),
                b"xEnD",
                true,
            ),
            // Only ASCII letters fold: `[` and `{` differ by the same bit.
            (
                "ci does not fold punctuation",
                Lit::ci("[a]"),
                b"{A}",
                false,
            ),
            (
                "ci does not fold non-ASCII",
                Lit::ci("É"),
                "é".as_bytes(),
                false,
            ),
            ("multi-byte literal", Lit::new("→"), "a→".as_bytes(), true),
            (
                "half a multi-byte literal",
                Lit::new("→"),
                &"→".as_bytes()[..2],
                false,
            ),
        ];
        for (what, lit, hay, want) in table {
            assert_eq!(lit.is_suffix_of(hay), want, "{what}");
        }
    }

    #[test]
    fn literals_match_byte_by_byte() {
        let table: Vec<(&str, Lit, usize, u8, bool)> = vec![
            ("same byte", Lit::new("ab"), 1, b'b', true),
            ("other byte", Lit::new("ab"), 1, b'a', false),
            ("other case, sensitive", Lit::new("ab"), 0, b'A', false),
            ("other case, insensitive", Lit::ci("ab"), 0, b'A', true),
            ("digit is no letter", Lit::ci("1"), 0, b'1' ^ 0x20, false),
        ];
        for (what, lit, i, b, want) in table {
            assert_eq!(lit.matches_at(i, b), want, "{what}");
        }
    }

    #[test]
    fn messages_show_bytes_on_one_line_and_cut() {
        let x64 = "x".repeat(64);
        let table: Vec<(&str, Vec<u8>, String)> = vec![
            ("empty", b"".to_vec(), String::new()),
            ("short", b"<tool_call>".to_vec(), "<tool_call>".into()),
            ("newline escaped", b"a\nb".to_vec(), "a\\nb".into()),
            (
                "64 characters: whole",
                x64.clone().into_bytes(),
                x64.clone(),
            ),
            (
                "65 characters: cut, with the length in bytes",
                "x".repeat(65).into_bytes(),
                format!("{x64}… (65 bytes)"),
            ),
            (
                "counted in characters, measured in bytes",
                "é".repeat(65).into_bytes(),
                format!("{}… (130 bytes)", "é".repeat(64)),
            ),
            (
                "newlines in the part shown",
                "\n".repeat(70).into_bytes(),
                format!("{}… (70 bytes)", "\\n".repeat(64)),
            ),
            (
                "not UTF-8: replaced",
                b"a\xffb".to_vec(),
                "a\u{FFFD}b".into(),
            ),
        ];
        for (what, bytes, want) in table {
            assert_eq!(shown(&bytes), want, "shown: {what}");
            let lit = Lit {
                bytes,
                case_insensitive: false,
            };
            assert_eq!(lit.shown(), want, "Lit::shown: {what}");
        }
        // `display` escapes newlines too, but never cuts.
        let long = Lit::new(&format!("{}\n", "y".repeat(100)));
        assert_eq!(long.display(), format!("{}\\n", "y".repeat(100)));
    }

    #[test]
    fn byte_sets_contain() {
        let table: Vec<(&str, ByteSet, u8, bool)> = vec![
            ("listed", ByteSet::Bytes(b"{[".to_vec()), b'[', true),
            ("not listed", ByteSet::Bytes(b"{[".to_vec()), b'(', false),
            ("empty list", ByteSet::Bytes(Vec::new()), b'{', false),
            ("any", ByteSet::Any, 0xff, true),
            (
                "any but, other",
                ByteSet::AnyBut(b"\n".to_vec()),
                b'a',
                true,
            ),
            (
                "any but, excluded",
                ByteSet::AnyBut(b"\n".to_vec()),
                b'\n',
                false,
            ),
            ("end holds no byte", ByteSet::End, 0, false),
        ];
        for (what, set, b, want) in table {
            assert_eq!(set.contains(b), want, "{what}");
        }
    }

    #[test]
    fn literals_read_from_json() {
        let table: Vec<Row<Value, Lit>> = vec![
            ("string", json!("</a>"), Ok(Lit::new("</a>"))),
            ("unicode", json!("→"), Ok(Lit::new("→"))),
            ("object", json!({"text": "END"}), Ok(Lit::new("END"))),
            (
                "object, case-insensitive",
                json!({"text": "END", "case_insensitive": true}),
                Ok(Lit::ci("END")),
            ),
            (
                "object, case-sensitive said",
                json!({"text": "END", "case_insensitive": false}),
                Ok(Lit::new("END")),
            ),
            (
                "empty string",
                json!(""),
                Err(("/p".into(), NOT_A_LIT.into())),
            ),
            ("number", json!(5), Err(("/p".into(), NOT_A_LIT.into()))),
            ("null", Value::Null, Err(("/p".into(), NOT_A_LIT.into()))),
            ("array", json!(["a"]), Err(("/p".into(), NOT_A_LIT.into()))),
            (
                "object without text",
                json!({}),
                Err((
                    "/p/text".into(),
                    "missing; must be a non-empty string".into(),
                )),
            ),
            (
                "object with empty text",
                json!({"text": ""}),
                Err(("/p/text".into(), "must be a non-empty string".into())),
            ),
            (
                "object with an unknown key",
                json!({"text": "a", "ci": true}),
                Err((
                    "/p/ci".into(),
                    "unknown key; expected one of text, case_insensitive".into(),
                )),
            ),
            (
                "flag not a boolean",
                json!({"text": "a", "case_insensitive": "yes"}),
                Err((
                    "/p/case_insensitive".into(),
                    "must be true or false, not a string".into(),
                )),
            ),
        ];
        for (what, v, want) in table {
            assert_eq!(read_lit(&v, "/p").map_err(parts), want, "{what}");
        }
    }

    #[test]
    fn literals_written_to_json() {
        let not_utf8 = Lit {
            bytes: vec![b'a', 0xff],
            case_insensitive: false,
        };
        let table: Vec<Row<Lit, Value>> = vec![
            ("plain", Lit::new("</a>"), Ok(json!("</a>"))),
            (
                "case-insensitive",
                Lit::ci("END"),
                Ok(json!({"text": "END", "case_insensitive": true})),
            ),
            (
                "not UTF-8",
                not_utf8,
                Err(("/at".into(), "not UTF-8 text: JSON cannot hold it".into())),
            ),
        ];
        for (what, lit, want) in table {
            assert_eq!(write_lit(&lit, "/at").map_err(parts), want, "{what}");
        }
    }

    #[test]
    fn jumps_read_from_json() {
        let not_array = "must be a non-empty array of {\"lit\": …, \"goto\": …}";
        let jump = |l: Lit, to: &'static str| (l, Label::from(to));
        let table: Vec<Row<Option<Value>, Jumps>> = vec![
            (
                "one",
                Some(json!([{"lit": "<a>", "goto": "a"}])),
                Ok(vec![jump(Lit::new("<a>"), "a")]),
            ),
            (
                "two, one case-insensitive",
                Some(json!([
                    {"lit": {"text": "X", "case_insensitive": true}, "goto": "x"},
                    {"lit": "y", "goto": "y"}
                ])),
                Ok(vec![jump(Lit::ci("X"), "x"), jump(Lit::new("y"), "y")]),
            ),
            ("absent", None, Err(("/p".into(), not_array.into()))),
            (
                "empty",
                Some(json!([])),
                Err(("/p".into(), not_array.into())),
            ),
            (
                "an object, not an array",
                Some(json!({"lit": "a", "goto": "b"})),
                Err(("/p".into(), not_array.into())),
            ),
            (
                "an item not an object",
                Some(json!(["a"])),
                Err(("/p/0".into(), "must be an object, not a string".into())),
            ),
            (
                "no goto",
                Some(json!([{"lit": "a", "goto": "a"}, {"lit": "b"}])),
                Err((
                    "/p/1/goto".into(),
                    "missing; must be a non-empty string".into(),
                )),
            ),
            (
                "no lit",
                Some(json!([{"goto": "a"}])),
                Err(("/p/0/lit".into(), NOT_A_LIT.into())),
            ),
            (
                "an unknown key",
                Some(json!([{"lit": "a", "goto": "b", "to": "c"}])),
                Err((
                    "/p/0/to".into(),
                    "unknown key; expected one of lit, goto".into(),
                )),
            ),
        ];
        for (what, v, want) in table {
            assert_eq!(read_jumps(v.as_ref(), "/p").map_err(parts), want, "{what}");
        }
    }

    /// Each payload's JSON form, read as a program step at `/program/0`.
    #[test]
    fn payloads_read_from_their_step() {
        let at = "/program/0";
        let jumps = |list: &[(&str, &'static str)]| -> Vec<(Lit, Label)> {
            list.iter()
                .map(|(l, to)| (Lit::new(l), Label::from(*to)))
                .collect()
        };
        let no_capture_end = "a capture needs `until` (literals that end the word) or \
                              `before` (characters that do)";
        let table: Vec<Row<Value, Step>> = vec![
            // Labels, literals, lists of jumps, flags, strings, containers.
            ("label", json!({"label": "x"}), Ok(Step::label("x"))),
            (
                "empty label",
                json!({"label": ""}),
                err("/program/0/label", "must be a non-empty string"),
            ),
            (
                "literal, case-insensitive",
                json!({"lit": {"text": "<A>", "case_insensitive": true}}),
                Ok(Step::Lit(Lit::ci("<A>"))),
            ),
            ("empty literal", json!({"lit": ""}), err("/program/0/lit", NOT_A_LIT)),
            (
                "then",
                json!({"then": [{"lit": ",", "goto": "next"}]}),
                Ok(Step::Then(jumps(&[(",", "next")]))),
            ),
            (
                "then without jumps",
                json!({"then": []}),
                err(
                    "/program/0/then",
                    "must be a non-empty array of {\"lit\": …, \"goto\": …}",
                ),
            ),
            ("reasoning", json!({"reasoning": true}), Ok(Step::Reasoning(true))),
            (
                "reasoning not a boolean",
                json!({"reasoning": "on"}),
                err("/program/0/reasoning", "must be true or false, not a string"),
            ),
            (
                "string parameter",
                json!({"string_param": "code"}),
                Ok(Step::StringParam("code".into())),
            ),
            ("list", json!({"container": "list"}), Ok(Step::Open(Container::List))),
            (
                "object",
                json!({"container": "object"}),
                Ok(Step::Open(Container::Object)),
            ),
            (
                "unknown container",
                json!({"container": "map"}),
                err(
                    "/program/0/container",
                    "unknown value \"map\"; expected one of object, list",
                ),
            ),
            // Element ends.
            (
                "element end",
                json!({"recover_element": ",]", "goto": "next"}),
                Ok(Step::RecoverElement(ElementEnd::new(b",]", "next"))),
            ),
            (
                "element end without goto",
                json!({"recover_element": ",]"}),
                err("/program/0/goto", "missing; must be a non-empty string"),
            ),
            (
                "element end without bytes",
                json!({"recover_element": "", "goto": "next"}),
                err("/program/0/recover_element", "must be a non-empty string"),
            ),
            // Forks.
            (
                "fork on each kind of set",
                json!({"fork": [
                    {"on": "any", "goto": "a"},
                    {"on": "end", "goto": "b"},
                    {"on": {"bytes": "{["}, "goto": "c"},
                    {"on": {"any_but": "\n"}, "goto": "d"}
                ]}),
                Ok(Step::Fork(vec![
                    (ByteSet::Any, Label::from("a")),
                    (ByteSet::End, Label::from("b")),
                    (ByteSet::Bytes(b"{[".to_vec()), Label::from("c")),
                    (ByteSet::AnyBut(b"\n".to_vec()), Label::from("d")),
                ])),
            ),
            (
                "fork without branches",
                json!({"fork": []}),
                err(
                    "/program/0/fork",
                    "must be a non-empty array of {\"on\": …, \"goto\": …}",
                ),
            ),
            (
                "fork on an unknown word",
                json!({"fork": [{"on": "some", "goto": "a"}]}),
                err(
                    "/program/0/fork/0/on",
                    "must be \"any\", \"end\", {\"bytes\": …} or {\"any_but\": …}",
                ),
            ),
            (
                "fork on both bytes and any_but",
                json!({"fork": [{"on": {"bytes": "a", "any_but": "b"}, "goto": "a"}]}),
                err("/program/0/fork/0/on", "must have one of `bytes`, `any_but`"),
            ),
            (
                "fork on an empty set",
                json!({"fork": [{"on": {}, "goto": "a"}]}),
                err("/program/0/fork/0/on", "must have one of `bytes`, `any_but`"),
            ),
            (
                "fork on a misspelt set",
                json!({"fork": [{"on": {"bites": "a"}, "goto": "a"}]}),
                err(
                    "/program/0/fork/0/on/bites",
                    "unknown key; expected one of bytes, any_but",
                ),
            ),
            (
                "fork branch without goto",
                json!({"fork": [{"on": "any"}]}),
                err("/program/0/fork/0/goto", "missing; must be a non-empty string"),
            ),
            // Captures.
            (
                "name until a literal",
                json!({"capture": "name", "until": [">"]}),
                Ok(Step::name_until(">")),
            ),
            (
                "key before characters",
                json!({"capture": "key", "before": " ="}),
                Ok(Step::Capture(Capture::before(Field::Key, b" ="))),
            ),
            (
                "id until a jump, or the end",
                json!({"capture": "id", "until": [{"lit": "]", "goto": "args"}], "at_end": true}),
                Ok(Step::Capture(
                    Capture::until(Field::Id, vec![(Lit::new("]"), Some(Label::from("args")))])
                        .or_end(),
                )),
            ),
            (
                "an ordinal",
                json!({"capture": "ordinal", "until": ["\""]}),
                Ok(Step::Capture(Capture {
                    field: Field::Ordinal,
                    stop: Vec::new(),
                    delims: vec![(Lit::new("\""), None)],
                    at_end: false,
                    keywords: Vec::new(),
                })),
            ),
            (
                "named id, until and before",
                json!({"capture": "named_id", "until": [":"], "before": "\n"}),
                Ok(Step::Capture(Capture {
                    field: Field::NamedId,
                    stop: b"\n".to_vec(),
                    delims: vec![(Lit::new(":"), None)],
                    at_end: false,
                    keywords: Vec::new(),
                })),
            ),
            (
                "discard and type",
                json!({"capture": "discard", "until": [{"lit": "x", "goto": "t"}, "y"]}),
                Ok(Step::Capture(Capture::until(
                    Field::Discard,
                    vec![(Lit::new("x"), Some(Label::from("t"))), (Lit::new("y"), None)],
                ))),
            ),
            (
                "type",
                json!({"capture": "type", "before": "\""}),
                Ok(Step::Capture(Capture::before(Field::Type, b"\""))),
            ),
            (
                "keyword",
                json!({"capture": "name", "before": "\n", "keywords": [{"lit": "all", "goto": "text"}]}),
                Ok(Step::Capture(
                    Capture::before(Field::Name, b"\n").keyword("all", "text"),
                )),
            ),
            (
                "capture without an end",
                json!({"capture": "name"}),
                err("/program/0", no_capture_end),
            ),
            (
                "capture before no character",
                json!({"capture": "name", "before": ""}),
                err("/program/0", no_capture_end),
            ),
            (
                "capture until nothing",
                json!({"capture": "name", "until": []}),
                err(
                    "/program/0/until",
                    "must be a non-empty array of literals or {\"lit\", \"goto\"}",
                ),
            ),
            (
                "capture until a number",
                json!({"capture": "name", "until": [5]}),
                err("/program/0/until/0", NOT_A_LIT),
            ),
            (
                "capture jump to an empty label",
                json!({"capture": "name", "until": [{"lit": ">", "goto": ""}]}),
                err("/program/0/until/0/goto", "must be a non-empty string"),
            ),
            (
                "unknown field",
                json!({"capture": "title", "until": [">"]}),
                err(
                    "/program/0/capture",
                    "unknown value \"title\"; expected one of name, id, discard, ordinal, key, type, named_id",
                ),
            ),
            (
                "field not a string",
                json!({"capture": 3, "until": [">"]}),
                err("/program/0/capture", "must be a string, not a number"),
            ),
            (
                "capture with an unknown key",
                json!({"capture": "name", "until": [">"], "stop": ">"}),
                err(
                    "/program/0/stop",
                    "unknown key; expected one of capture, until, before, at_end, keywords",
                ),
            ),
            (
                "a keyword that would ignore case",
                json!({"capture": "name", "before": "\n", "keywords": [
                    {"lit": {"text": "ALL", "case_insensitive": true}, "goto": "t"}
                ]}),
                err(
                    "/program/0/keywords/0/lit",
                    "a keyword is matched exactly: `case_insensitive` is not allowed here",
                ),
            ),
            // JSON steps and their call keys.
            ("arguments", json!({"json": "args"}), Ok(Step::args())),
            (
                "lenient call",
                json!({"json": "call", "lenient": true}),
                Ok(Step::Json(
                    JsonStep::new(Shape::Call, CallKeys::default()).lenient(),
                )),
            ),
            (
                "call list with own keys, a string as a list of one",
                json!({"json": "call_list", "name_keys": "tool", "argument_keys": ["args", "input"]}),
                Ok(Step::Json(JsonStep::new(
                    Shape::CallList,
                    CallKeys::new(&["tool"], &["args", "input"]),
                ))),
            ),
            (
                "root with id, function and text keys",
                json!({"json": "root", "id_key": "id", "function_key": "function", "text_key": "response"}),
                Ok(Step::Json(JsonStep::new(
                    Shape::Root,
                    CallKeys::default()
                        .with_id("id")
                        .with_function("function")
                        .with_text("response"),
                ))),
            ),
            (
                "keyed: no other keys",
                json!({"json": "call", "keyed": true}),
                Ok(Step::Json(JsonStep::new(Shape::Call, CallKeys::keyed()))),
            ),
            (
                "keyed with other keys",
                json!({"json": "call", "keyed": true, "other_keys": ["type"]}),
                Ok(Step::Json(JsonStep::new(
                    Shape::Call,
                    CallKeys {
                        other: vec!["type".into()],
                        ..CallKeys::keyed()
                    },
                ))),
            ),
            (
                "no-call name",
                json!({"json": "call", "no_call_names": ["directly-answer"]}),
                Ok(Step::Json(JsonStep::new(
                    Shape::Call,
                    CallKeys::default().with_no_call("directly-answer"),
                ))),
            ),
            (
                "other keys: none at all",
                json!({"json": "call", "other_keys": []}),
                Ok(Step::Json(JsonStep::new(
                    Shape::Call,
                    CallKeys {
                        other: Vec::new(),
                        ..CallKeys::default()
                    },
                ))),
            ),
            (
                "other keys: two",
                json!({"json": "call", "other_keys": ["type", "index"]}),
                Ok(Step::Json(JsonStep::new(
                    Shape::Call,
                    CallKeys {
                        other: vec!["type".into(), "index".into()],
                        ..CallKeys::default()
                    },
                ))),
            ),
            (
                "other keys: empty string",
                json!({"json": "call", "other_keys": ""}),
                err(
                    "/program/0/other_keys",
                    "must be a non-empty string or a non-empty array of them",
                ),
            ),
            (
                "name keys: none",
                json!({"json": "call", "name_keys": []}),
                err(
                    "/program/0/name_keys",
                    "must be a non-empty string or a non-empty array of them",
                ),
            ),
            (
                "name keys: an empty one",
                json!({"json": "call", "name_keys": ["name", ""]}),
                err("/program/0/name_keys/1", "must be a non-empty string"),
            ),
            (
                "unknown shape",
                json!({"json": "object"}),
                err(
                    "/program/0/json",
                    "unknown value \"object\"; expected one of args, call, call_list, root",
                ),
            ),
            (
                "shape not a string",
                json!({"json": true}),
                err("/program/0/json", "must be a string, not a boolean"),
            ),
            (
                "lenient not a boolean",
                json!({"json": "call", "lenient": "yes"}),
                err("/program/0/lenient", "must be true or false, not a string"),
            ),
            // Raw values.
            (
                "value until a literal",
                json!({"value": "</parameter>"}),
                Ok(Step::Value(ValueStep::until("</parameter>"))),
            ),
            (
                "value until a case-insensitive literal",
                json!({"value": {"text": "</V>", "case_insensitive": true}}),
                Ok(Step::Value(ValueStep::closed_by(Close::Lit(Lit::ci("</V>"))))),
            ),
            (
                "value until the key's tag",
                json!({"value": {"special": "key_tag"}}),
                Ok(Step::Value(ValueStep::closed_by(Close::KeyTag))),
            ),
            (
                "value until a space",
                json!({"value": {"special": "space"}}),
                Ok(Step::Value(ValueStep::closed_by(Close::Space))),
            ),
            (
                "value until its bracket",
                json!({"value": {"special": "balanced"}}),
                Ok(Step::Value(ValueStep::closed_by(Close::Balanced))),
            ),
            (
                "every modifier",
                json!({
                    "value": "</p>",
                    "recover": [{"lit": "<p=", "goto": "key"}],
                    "recover_at_end": [{"lit": "</f>", "goto": "end"}],
                    "nest": [{"lit": "<item>", "goto": "list"}],
                    "guard": ["<<", ">>"],
                    "trim": "newline",
                    "entities": true,
                    "or_end": true,
                    "null": true
                }),
                Ok(Step::Value(
                    ValueStep::until("</p>")
                        .recover("<p=", "key")
                        .recover_at_end("</f>", "end")
                        .nest("<item>", "list")
                        .guard("<<", ">>")
                        .trim(Trim::Newline)
                        .entities()
                        .or_end()
                        .null(),
                )),
            ),
            (
                "trim all",
                json!({"value": "</p>", "trim": "all"}),
                Ok(Step::Value(ValueStep::until("</p>").trim(Trim::All))),
            ),
            (
                "trim none said",
                json!({"value": "</p>", "trim": "none"}),
                Ok(Step::Value(ValueStep::until("</p>"))),
            ),
            (
                "unknown trim",
                json!({"value": "</p>", "trim": "some"}),
                err(
                    "/program/0/trim",
                    "unknown value \"some\"; expected one of none, newline, all",
                ),
            ),
            (
                "unknown special closer",
                json!({"value": {"special": "nope"}}),
                err(
                    "/program/0/value/special",
                    "unknown value \"nope\"; expected one of key_tag, space, balanced",
                ),
            ),
            (
                "special closer with another key",
                json!({"value": {"special": "space", "x": 1}}),
                err("/program/0/value/x", "unknown key; expected one of special"),
            ),
            ("empty closer", json!({"value": ""}), err("/program/0/value", NOT_A_LIT)),
            (
                "guard of one literal",
                json!({"value": "</p>", "guard": ["<<"]}),
                err("/program/0/guard", "must be [opening literal, closing literal]"),
            ),
            (
                "guard not an array",
                json!({"value": "</p>", "guard": "<<"}),
                err("/program/0/guard", "must be [opening literal, closing literal]"),
            ),
            (
                "guard with an empty closer",
                json!({"value": "</p>", "guard": ["<<", ""]}),
                err("/program/0/guard/1", NOT_A_LIT),
            ),
            (
                "recover nothing",
                json!({"value": "</p>", "recover": []}),
                err(
                    "/program/0/recover",
                    "must be a non-empty array of {\"lit\": …, \"goto\": …}",
                ),
            ),
            (
                "entities not a boolean",
                json!({"value": "</p>", "entities": 1}),
                err("/program/0/entities", "must be true or false, not a number"),
            ),
            // Python-like arguments.
            ("keywords", json!({"py": "keywords"}), Ok(Step::Py(PyStep::keywords()))),
            (
                "bare keys: `\"` strings by default",
                json!({"py": "bare_keys"}),
                Ok(Step::Py(PyStep::bare_keys("\""))),
            ),
            (
                "bare keys with a delimiter",
                json!({"py": "bare_keys", "strings": "<escape>"}),
                Ok(Step::Py(PyStep::bare_keys("<escape>"))),
            ),
            (
                "keywords with JSON literals",
                json!({"py": "keywords", "strings": "quoted", "json_literals": true}),
                Ok(Step::Py(PyStep::keywords().json_literals())),
            ),
            (
                "keywords without Python literals",
                json!({"py": "keywords", "python_literals": false}),
                Ok(Step::Py(PyStep {
                    python_literals: false,
                    ..PyStep::keywords()
                })),
            ),
            (
                "bare keys, quoted, Python literals only",
                json!({"py": "bare_keys", "strings": "quoted", "python_literals": true, "json_literals": false}),
                Ok(Step::Py(PyStep {
                    args: PyArgs::BareKeys,
                    strings: PyStrings::Quoted,
                    python_literals: true,
                    json_literals: false,
                })),
            ),
            (
                "unknown Python form",
                json!({"py": "positional"}),
                err(
                    "/program/0/py",
                    "unknown value \"positional\"; expected one of keywords, bare_keys",
                ),
            ),
            (
                "empty string delimiter",
                json!({"py": "keywords", "strings": ""}),
                err("/program/0/strings", NOT_A_LIT),
            ),
            (
                "string delimiter a number",
                json!({"py": "keywords", "strings": 7}),
                err("/program/0/strings", NOT_A_LIT),
            ),
            // Rendering hints.
            ("no hint", json!({"render": {}}), Ok(Step::Render(Hint::default()))),
            (
                "write",
                json!({"render": {"write": "\n"}}),
                Ok(Step::Render(Hint::write("\n"))),
            ),
            (
                "write nothing",
                json!({"render": {"write": ""}}),
                Ok(Step::Render(Hint::write(""))),
            ),
            (
                "prefer",
                json!({"render": {"prefer": "b"}}),
                Ok(Step::Render(Hint::prefer("b"))),
            ),
            (
                "prefer no label",
                json!({"render": {"prefer": ""}}),
                err("/program/0/render/prefer", "must be a non-empty string"),
            ),
            (
                "every style key",
                json!({"render": {
                    "item_sep": ",", "key_sep": ":", "indent": 255, "ascii": true,
                    "sort_keys": true, "quote": "\"", "types": "bool", "python": "scalars",
                    "lines": 4, "ordinal": "tool_call_id", "json_values": true
                }}),
                Ok(Step::Render(Hint::style(Style {
                    item_sep: ",".into(),
                    key_sep: ":".into(),
                    indent: Some(255),
                    ascii: true,
                    sort_keys: true,
                    quote: '"',
                    types: TypeWords::Bool,
                    python: PyValues::Scalars,
                    lines: Some(4),
                    ordinal: Some("tool_call_id".into()),
                    json_values: true,
                }))),
            ),
            (
                "indent too deep",
                json!({"render": {"indent": 256}}),
                err(
                    "/program/0/render/indent",
                    "must be a number of spaces up to 255",
                ),
            ),
            (
                "indent negative",
                json!({"render": {"indent": -1}}),
                err(
                    "/program/0/render/indent",
                    "must be a number of spaces up to 255",
                ),
            ),
            (
                "indent a string",
                json!({"render": {"indent": "2"}}),
                err(
                    "/program/0/render/indent",
                    "must be a number of spaces up to 255",
                ),
            ),
            (
                "unknown quote",
                json!({"render": {"quote": "`"}}),
                err(
                    "/program/0/render/quote",
                    "unknown value \"`\"; expected one of ', \"",
                ),
            ),
            (
                "unknown hint",
                json!({"render": {"colour": "red"}}),
                err(
                    "/program/0/render/colour",
                    "unknown key; expected one of write, sep, prefer, item_sep, key_sep, indent, \
                     ascii, sort_keys, quote, types, python, lines, ordinal, json_values, frame, \
                     text_sep, lead, tail",
                ),
            ),
            (
                "hints not an object",
                json!({"render": "x"}),
                err("/program/0/render", "must be an object, not a string"),
            ),
        ];
        for (what, v, want) in table {
            assert_eq!(Step::read(&v, at).map_err(parts), want, "{what}: {v}");
        }
    }

    /// What a step's payload writes: its kind, then only the modifiers that
    /// differ from their defaults; or why it cannot be written.
    #[test]
    fn payloads_written_to_their_step() {
        let not_utf8 = || Lit {
            bytes: vec![0xfe],
            case_insensitive: false,
        };
        let table: Vec<Row<Step, Value>> = vec![
            ("label", Step::label("x"), Ok(json!({"label": "x"}))),
            ("arguments", Step::args(), Ok(json!({"json": "args"}))),
            (
                "keyed call: only `keyed`",
                Step::Json(JsonStep::new(Shape::Call, CallKeys::keyed())),
                Ok(json!({"json": "call", "keyed": true})),
            ),
            (
                "call keys that differ",
                Step::Json(
                    JsonStep::new(
                        Shape::Root,
                        CallKeys {
                            other: Vec::new(),
                            ..CallKeys::new(&["tool"], &["arguments", "parameters"])
                                .with_id("id")
                                .with_no_call("none")
                        },
                    )
                    .lenient(),
                ),
                Ok(json!({
                    "json": "root", "lenient": true, "name_keys": ["tool"], "id_key": "id",
                    "other_keys": [], "no_call_names": ["none"]
                })),
            ),
            (
                "value with defaults",
                Step::Value(ValueStep::until("</p>")),
                Ok(json!({"value": "</p>"})),
            ),
            (
                "value closed by a space, trimmed",
                Step::Value(ValueStep::closed_by(Close::Space).trim(Trim::All).null()),
                Ok(json!({"value": {"special": "space"}, "trim": "all", "null": true})),
            ),
            (
                "python: every key written",
                Step::Py(PyStep::keywords()),
                Ok(json!({
                    "py": "keywords", "strings": "quoted",
                    "python_literals": true, "json_literals": false
                })),
            ),
            (
                "default hint",
                Step::Render(Hint::default()),
                Ok(json!({"render": {}})),
            ),
            (
                "a double quote",
                Step::Render(Hint::style(Style {
                    quote: '"',
                    ..Style::default()
                })),
                Ok(json!({"render": {"quote": "\""}})),
            ),
            (
                "calls a line, with their place",
                Step::Render(Hint::style(Style {
                    lines: Some(4),
                    ordinal: Some("tool_call_id".into()),
                    ..Style::default()
                })),
                Ok(json!({"render": {"lines": 4, "ordinal": "tool_call_id"}})),
            ),
            (
                "capture with every part",
                Step::Capture(
                    Capture {
                        stop: b" ".to_vec(),
                        ..Capture::until(
                            Field::Key,
                            vec![
                                (Lit::new("="), None),
                                (Lit::new(">"), Some(Label::from("a"))),
                            ],
                        )
                    }
                    .or_end()
                    .keyword("all", "t"),
                ),
                Ok(json!({
                    "capture": "key", "until": ["=", {"lit": ">", "goto": "a"}],
                    "before": " ", "at_end": true, "keywords": [{"lit": "all", "goto": "t"}]
                })),
            ),
            (
                "then without jumps",
                Step::Then(Vec::new()),
                Err((
                    "/p".into(),
                    "an empty list of literals cannot be described".into(),
                )),
            ),
            (
                "fork without branches",
                Step::Fork(Vec::new()),
                Err((
                    "/p".into(),
                    "a fork without branches cannot be described".into(),
                )),
            ),
            (
                "literal not UTF-8",
                Step::Lit(not_utf8()),
                Err(("/p".into(), "not UTF-8 text: JSON cannot hold it".into())),
            ),
            (
                "jump literal not UTF-8: its item named",
                Step::Then(vec![
                    (Lit::new(","), Label::from("a")),
                    (not_utf8(), Label::from("b")),
                ]),
                Err(("/p/1".into(), "not UTF-8 text: JSON cannot hold it".into())),
            ),
            (
                "fork bytes not UTF-8",
                Step::Fork(vec![(ByteSet::Bytes(vec![0xff]), Label::from("a"))]),
                Err(("/p".into(), "not UTF-8 text: JSON cannot hold it".into())),
            ),
        ];
        for (what, step, want) in table {
            assert_eq!(step.write("/p").map_err(parts), want, "{what}");
        }
    }
}
