//! How a format is declared: markers that open a block, and a small program
//! of steps that says what the block holds — where the name is, how the
//! arguments are encoded, what ends the call.
//!
//! Every built-in format is such a declaration over the same machinery, and
//! so is a user's. Jumps name their target with a [`Label`]: labels are
//! resolved when the grammar is compiled, so inserting a step never
//! retargets a jump.
//!
//! ```
//! use toolscan_core::format::{CallKeys, Format, Opener, Step};
//! use toolscan_core::{Options, Parser, Registry};
//!
//! // <<call get_weather>>{"city": "Paris"}<</call>>
//! let fmt = Format::new("double-angle", "custom", "<<call NAME>>{json}<</call>>")
//!     .opener(Opener::definite("<<call ", vec![
//!         Step::name_until(">>"),
//!         Step::Ws,
//!         Step::args(),
//!         Step::Ws,
//!         Step::lit("<</call>>"),
//!         Step::Dispatch,
//!         Step::End,
//!     ]));
//! let mut reg = Registry::builtin();
//! reg.register(fmt).unwrap();
//! let mut p = Parser::new(reg.grammar("double-angle").unwrap(), Options::default());
//! let mut events = p.feed(b"ok <<call get_weather>>{\"city\": \"Paris\"}<</call>>");
//! events.extend(p.finish());
//! assert!(events.iter().any(|e| matches!(e,
//!     toolscan_core::Event::ToolCallEnd { name, .. } if name == "get_weather")));
//! ```

use std::borrow::Cow;

/// The name of a place in a program: [`Step::Label`] puts it before the
/// next step, jumps ([`Step::Goto`], [`Step::Fork`], [`Step::Then`], a
/// [`Capture`] delimiter) name it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Label(Cow<'static, str>);

impl Label {
    /// The label's name.
    pub fn as_str(&self) -> &str {
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
#[non_exhaustive]
pub struct Lit {
    /// The bytes.
    pub bytes: Vec<u8>,
    /// Whether ASCII letters match in either case.
    pub case_insensitive: bool,
}

impl Lit {
    /// A case-sensitive literal.
    pub fn new(s: &str) -> Lit {
        Lit {
            bytes: s.as_bytes().to_vec(),
            case_insensitive: false,
        }
    }

    /// An ASCII-case-insensitive literal.
    pub fn ci(s: &str) -> Lit {
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
    pub fn display(&self) -> String {
        String::from_utf8_lossy(&self.bytes)
            .replace('\n', "\\n")
            .to_string()
    }
}

/// What a captured word is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Field {
    /// The tool name.
    Name,
    /// The call id carried by the format (e.g. Mistral's `[CALL_ID]`).
    Id,
    /// A word to check and drop (e.g. DeepSeek's `function` type).
    Discard,
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
#[non_exhaustive]
pub struct Capture {
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
    pub fn until(field: Field, delims: Vec<(Lit, Option<Label>)>) -> Capture {
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
    pub fn before(field: Field, stop: &[u8]) -> Capture {
        Capture {
            field,
            stop: stop.to_vec(),
            delims: Vec::new(),
            at_end: false,
            keywords: Vec::new(),
        }
    }

    /// Lets the end of the stream end the word (see [`Capture::at_end`]).
    pub fn or_end(mut self) -> Capture {
        self.at_end = true;
        self
    }

    /// Adds a word that is markup (see [`Capture::keywords`]).
    pub fn keyword(mut self, word: &str, label: impl Into<Label>) -> Capture {
        self.keywords.push((word.to_string(), label.into()));
        self
    }
}

/// What JSON value a [`Step::Json`] expects.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Shape {
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
#[non_exhaustive]
pub struct CallKeys {
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
    pub fn new(name: &[&str], args: &[&str]) -> CallKeys {
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
    pub fn with_no_call(mut self, name: &str) -> CallKeys {
        self.no_call.push(name.into());
        self
    }

    /// Call objects of the form `{NAME: ARGUMENTS}` (see
    /// [`CallKeys::keyed`]).
    pub fn keyed() -> CallKeys {
        CallKeys {
            keyed: true,
            other: Vec::new(),
            ..CallKeys::new(&[], &[])
        }
    }

    /// Adds an in-text id key.
    pub fn with_id(mut self, key: &str) -> CallKeys {
        self.id = Some(key.into());
        self
    }

    /// Adds a nested function-object key.
    pub fn with_function(mut self, key: &str) -> CallKeys {
        self.function = Some(key.into());
        self
    }

    /// Adds the key of a top-level text envelope (see [`CallKeys::text`]).
    pub fn with_text(mut self, key: &str) -> CallKeys {
        self.text = Some(key.into());
        self
    }
}

/// A JSON value inside a block.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct JsonStep {
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
    pub fn new(shape: Shape, keys: CallKeys) -> JsonStep {
        JsonStep {
            shape,
            keys,
            lenient: false,
        }
    }

    /// Accepts (and normalises) what models write when told to write JSON
    /// by hand.
    pub fn lenient(mut self) -> JsonStep {
        self.lenient = true;
        self
    }
}

/// Which whitespace around a raw parameter value is markup, not value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Trim {
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
#[non_exhaustive]
pub enum Close {
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
#[non_exhaustive]
pub struct ValueStep {
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
    pub fn until(close: &str) -> ValueStep {
        ValueStep::closed_by(Close::Lit(Lit::new(close)))
    }

    /// A value that `close` ends, with no recovery, nothing trimmed and no
    /// entities.
    pub fn closed_by(close: Close) -> ValueStep {
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
    pub fn nest(mut self, lit: &str, label: impl Into<Label>) -> ValueStep {
        self.nest.push((Lit::new(lit), label.into()));
        self
    }

    /// Sets raw-content guards (see [`ValueStep::guard`]).
    pub fn guard(mut self, open: &str, close: &str) -> ValueStep {
        self.guard = Some((Lit::new(open), Lit::new(close)));
        self
    }

    /// Sets the whitespace that is markup.
    pub fn trim(mut self, trim: Trim) -> ValueStep {
        self.trim = trim;
        self
    }

    /// Decodes XML entities.
    pub fn entities(mut self) -> ValueStep {
        self.entities = true;
        self
    }

    /// Reads the text `null` as JSON null whatever the declared type (see
    /// [`ValueStep::null`]).
    pub fn null(mut self) -> ValueStep {
        self.null = true;
        self
    }

    /// Lets the end of the stream end the value (see [`ValueStep::or_end`]).
    pub fn or_end(mut self) -> ValueStep {
        self.or_end = true;
        self
    }

    /// Adds markup that ends an unclosed value (see [`ValueStep::recover`]).
    pub fn recover(mut self, lit: &str, label: impl Into<Label>) -> ValueStep {
        self.recover.push((Lit::new(lit), label.into()));
        self
    }

    /// Adds markup that may end an unclosed value at the end of the stream
    /// (see [`ValueStep::recover_at_end`]).
    pub fn recover_at_end(mut self, lit: &str, label: impl Into<Label>) -> ValueStep {
        self.recover_at_end.push((Lit::new(lit), label.into()));
        self
    }
}

/// How the arguments of a call in Python-like notation are keyed, and what
/// closes them (see [`PyStep`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum PyArgs {
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
#[non_exhaustive]
pub enum PyStrings {
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
///
/// ```
/// use toolscan_core::format::{Format, Opener, PyStep, Step};
/// use toolscan_core::{Event, Options, Parser, Registry};
///
/// // <<get_weather(city='Paris', days=[1, 2])>>
/// let fmt = Format::new("py-angle", "custom", "<<NAME(k=v, …)>>")
///     .opener(Opener::definite("<<", vec![
///         Step::name_until("("),
///         Step::Py(PyStep::keywords()),
///         Step::lit(">>"),
///         Step::Dispatch,
///         Step::End,
///     ]));
/// let mut reg = Registry::builtin();
/// reg.register(fmt).unwrap();
/// let mut p = Parser::new(reg.grammar("py-angle").unwrap(), Options::default());
/// let mut ev = p.feed(b"<<get_weather(city='Paris', days=[1, 2])>>");
/// ev.extend(p.finish());
/// assert!(ev.iter().any(|e| matches!(e,
///     Event::ToolCallEnd { arguments, .. }
///         if arguments.to_string() == r#"{"city":"Paris","days":[1,2]}"#)));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct PyStep {
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
    pub fn keywords() -> PyStep {
        PyStep {
            args: PyArgs::Keywords,
            strings: PyStrings::Quoted,
            python_literals: true,
            json_literals: false,
        }
    }

    /// Bare keys, strings between two copies of `delimiter`, and JSON's
    /// literals (`true`, `null`).
    pub fn bare_keys(delimiter: &str) -> PyStep {
        PyStep {
            args: PyArgs::BareKeys,
            strings: PyStrings::Delimited(Lit::new(delimiter)),
            python_literals: false,
            json_literals: true,
        }
    }

    /// Allows JSON's literals `true`, `false` and `null` too.
    pub fn json_literals(mut self) -> PyStep {
        self.json_literals = true;
        self
    }
}

/// A set of bytes for [`Step::Fork`].
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ByteSet {
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

/// One step of a block's program. Steps run in order; jumps name a
/// [`Label`].
///
/// A block's bytes are held until its fate is known: the bytes of a
/// completed call (with the markup around it and between calls) are its
/// span and are dropped; a block that ends without a completed call, or
/// fails, gives its bytes back as text.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Step {
    /// Names the place of the next step (reads nothing).
    Label(Label),
    /// Optional ASCII whitespace.
    Ws,
    /// Optional spaces and tabs: whitespace that does not end a line.
    Blank,
    /// A required literal.
    Lit(Lit),
    /// An optional literal, taken when the next byte is its first byte.
    OptLit(Lit),
    /// A closing literal that the end of the stream may stand for: at
    /// `finish`, a block waiting here completes normally (a code fence the
    /// model never closed).
    LitOrEof(Lit),
    /// An optional info word after a code fence (` ```json `).
    Word,
    /// A name, id or discarded word.
    Capture(Capture),
    /// A JSON value.
    Json(JsonStep),
    /// A raw parameter value, after its key was captured
    /// ([`Field::Key`]).
    Value(ValueStep),
    /// The arguments of a call in Python-like notation (see [`PyStep`]).
    Py(PyStep),
    /// The parameter whose key was captured last holds an object of
    /// parameters (`true`: a list of values) — after a [`ValueStep::nest`]
    /// literal.
    Open(bool),
    /// The next [`Step::Value`] is the arguments' one parameter: the
    /// called tool's only string property in the tools schema, else this
    /// key. (Raw code sent to a `python` tool is its `code` argument.)
    StringParam(String),
    /// Closes the innermost object or list that [`Step::Open`] opened; the
    /// block fails if none is open.
    CloseOpen,
    /// The current call is complete: emit `tool_call_end` now.
    Dispatch,
    /// Branch on the next byte: the first set that holds it wins; no match
    /// fails the block. At the end of the stream, a [`ByteSet::End`]
    /// branch is taken (without one, the call is truncated).
    Fork(Vec<(ByteSet, Label)>),
    /// After a call: optional whitespace, then one of these literals (jump to
    /// its label) — or anything else, which ends the block and is scanned as
    /// text again.
    Then(Vec<(Lit, Label)>),
    /// One of these literals (no whitespace before it), jumping to its
    /// label; anything else fails the block. The first literal to be
    /// complete wins, so none should be a prefix of another.
    OneOf(Vec<(Lit, Label)>),
    /// The bytes the block read so far are framing markup — a message
    /// header, a recipient line — that is neither text nor part of a call:
    /// they are dropped. (Reading a call after it, its span starts here.)
    Frame,
    /// From here on, text is reasoning (`true`) or not (`false`), when
    /// reasoning separation is on; without it, nothing changes. (Harmony's
    /// `analysis` channel is reasoning up to the message's end.)
    Reasoning(bool),
    /// Makes the block *definite* from here on (see [`Trust`]): the markup
    /// read so far is dedicated tool-call markup even though the opener was
    /// tentative (`<tool_call>` inside a code fence), so a failure is
    /// reported.
    Definite,
    /// Sets the block's recovery point: from here on, a call that fails
    /// does not end the block. The failure is reported as usual, the failed
    /// call's bytes are given back as text, and the block reads on — as
    /// text, released as it comes, holding back only what may begin one of
    /// these literals — up to the first of these literals, then goes on at
    /// its label. A literal whose label begins a call (anything but a
    /// [`Step::Then`] or [`Step::End`]) is the next call's first bytes; any
    /// other literal ends the failed call and is text too.
    ///
    /// So a group of calls survives one bad call: DeepSeek's
    /// `<｜tool▁calls▁begin｜>` section recovers at the next
    /// `<｜tool▁call▁begin｜>`, and its closing markers still belong to the
    /// calls that completed. Until the block completes a call, everything
    /// it read is text, as without recovery.
    ///
    /// ```
    /// use toolscan_core::format::{Format, Label, Lit, Opener, Step};
    /// use toolscan_core::{Event, Options, Parser, Registry};
    ///
    /// // <calls><call>NAME {json}</call>…</calls>
    /// let fmt = Format::new("calls", "custom", "<calls><call>NAME {json}</call>…</calls>")
    ///     .opener(Opener::definite("<calls>", vec![
    ///         Step::lit("<call>"),
    ///         Step::Recover(vec![
    ///             (Lit::new("</call>"), Label::from("next")), // the bad call's end
    ///             (Lit::new("<call>"), Label::from("call")),  // the next call
    ///             (Lit::new("</calls>"), Label::from("end")),
    ///         ]),
    ///         Step::label("call"),
    ///         Step::name_until(" "),
    ///         Step::args(),
    ///         Step::lit("</call>"),
    ///         Step::Dispatch,
    ///         Step::label("next"),
    ///         Step::Then(vec![
    ///             (Lit::new("<call>"), Label::from("call")),
    ///             (Lit::new("</calls>"), Label::from("end")),
    ///         ]),
    ///         Step::label("end"),
    ///         Step::End,
    ///     ]));
    /// let mut reg = Registry::builtin();
    /// reg.register(fmt).unwrap();
    /// let mut p = Parser::new(reg.grammar("calls").unwrap(), Options::default());
    /// let mut ev = p.feed(b"<calls><call>a {oops}</call><call>b {}</call></calls>");
    /// ev.extend(p.finish());
    /// let text: String = ev.iter().filter_map(|e| match e {
    ///     Event::Text { delta } => Some(delta.as_str()),
    ///     _ => None,
    /// }).collect();
    /// assert_eq!(text, "<calls><call>a {oops}</call>"); // the bad call, with a diagnostic
    /// assert!(ev.iter().any(|e| matches!(e, Event::ToolCallEnd { name, .. } if name == "b")));
    /// ```
    Recover(Vec<(Lit, Label)>),
    /// Sets the block's recovery point for a list of calls read call by
    /// call (`[f(a=1), g(b=2)]`): from here on, once the block holds a call
    /// (or is definite), a call that fails does not end the block. The
    /// failure is reported as usual; the rest of the failed element is read
    /// over exactly — brackets counted and strings followed from where the
    /// call failed — up to the first of these bytes (`,`, `]`) outside any
    /// bracket or string. Everything from the end of the call before it
    /// (or from the block's start) to there is text, released as it comes,
    /// and the block goes on at the label, which reads that byte.
    ///
    /// Unlike [`Step::Recover`], this is no search for text: a separator
    /// inside a string or a nested list does not end the element.
    RecoverElement(Vec<u8>, Label),
    /// Jump.
    Goto(Label),
    /// The block is over; back to text.
    End,
}

impl Step {
    /// A required literal.
    pub fn lit(s: &str) -> Step {
        Step::Lit(Lit::new(s))
    }

    /// The tool name, up to (and including) a delimiter literal.
    pub fn name_until(delim: &str) -> Step {
        Step::Capture(Capture::until(Field::Name, vec![(Lit::new(delim), None)]))
    }

    /// A parameter's name, up to (and including) a delimiter literal.
    pub fn key_until(delim: &str) -> Step {
        Step::Capture(Capture::until(Field::Key, vec![(Lit::new(delim), None)]))
    }

    /// A label before the next step.
    pub fn label(name: impl Into<Label>) -> Step {
        Step::Label(name.into())
    }

    /// A jump to a label.
    pub fn goto(name: impl Into<Label>) -> Step {
        Step::Goto(name.into())
    }

    /// The arguments object (strict JSON).
    pub fn args() -> Step {
        Step::Json(JsonStep {
            shape: Shape::Args,
            keys: CallKeys::default(),
            lenient: false,
        })
    }

    /// A call object with these keys (strict JSON).
    pub fn call(keys: CallKeys) -> Step {
        Step::Json(JsonStep {
            shape: Shape::Call,
            keys,
            lenient: false,
        })
    }
}

/// How much an opening marker says.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Trust {
    /// Dedicated tool-call markup: a block that fails to parse is reported.
    Definite,
    /// Markup that often wraps other things (a code fence, `<response>`):
    /// until a call is recognised in it, a failed block is silently text.
    Tentative,
    /// Like tentative, and so common (a bare `{`) that `auto` leaves it out.
    Bare,
}

/// A marker that opens a block, and the block's program.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Opener {
    /// The marker.
    pub marker: Lit,
    /// The marker only counts at the start of a line (or of the stream).
    pub line_start: bool,
    /// There is no marker: the program runs at the start of the stream
    /// (a completion that begins inside the format's markup, such as
    /// Functionary's first recipient line). `marker` is empty then. A
    /// grammar has at most one; `auto` leaves it out.
    pub stream_start: bool,
    /// How much the marker says.
    pub trust: Trust,
    /// The marker's bytes are also the start of the body (a bare `{`), so
    /// the program reads them again.
    pub replay: bool,
    /// The program.
    pub program: Vec<Step>,
}

impl Opener {
    /// A definite marker.
    pub fn definite(marker: &str, program: Vec<Step>) -> Opener {
        Opener {
            marker: Lit::new(marker),
            line_start: false,
            stream_start: false,
            trust: Trust::Definite,
            replay: false,
            program,
        }
    }

    /// A tentative marker.
    pub fn tentative(marker: &str, program: Vec<Step>) -> Opener {
        Opener {
            trust: Trust::Tentative,
            ..Opener::definite(marker, program)
        }
    }

    /// A bare marker whose bytes start the body (`{`, `[`).
    pub fn bare(marker: &str, program: Vec<Step>) -> Opener {
        Opener {
            trust: Trust::Bare,
            replay: true,
            ..Opener::definite(marker, program)
        }
    }

    /// A program that runs at the start of the stream, before any byte
    /// (see [`Opener::stream_start`]); tentative: until a call shows, what
    /// it read is text, silently.
    pub fn stream_start(program: Vec<Step>) -> Opener {
        Opener {
            stream_start: true,
            trust: Trust::Tentative,
            ..Opener::definite("", program)
        }
    }

    /// Makes the marker ASCII-case-insensitive.
    pub fn case_insensitive(mut self) -> Opener {
        self.marker.case_insensitive = true;
        self
    }

    /// Sets the trust (a definite marker may be weakened to tentative).
    pub fn with_trust(mut self, trust: Trust) -> Opener {
        self.trust = trust;
        self
    }

    /// Anchors the marker at the start of a line.
    pub fn at_line_start(mut self) -> Opener {
        self.line_start = true;
        self
    }
}

/// A named format: its openers and where it comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Format {
    pub(crate) name: String,
    pub(crate) models: String,
    pub(crate) description: String,
    pub(crate) openers: Vec<Opener>,
}

impl Format {
    /// A format with no openers yet: its name, who writes it, one line on
    /// what it looks like.
    pub fn new(name: &str, models: &str, description: &str) -> Format {
        Format {
            name: name.into(),
            models: models.into(),
            description: description.into(),
            openers: Vec::new(),
        }
    }

    /// Adds an opener.
    pub fn opener(mut self, opener: Opener) -> Format {
        self.openers.push(opener);
        self
    }

    /// The format's name (`--format NAME`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Who writes it: model families or tools (e.g. `Qwen2.5, Qwen3`).
    pub fn models(&self) -> &str {
        &self.models
    }

    /// One line on what it looks like.
    pub fn description(&self) -> &str {
        &self.description
    }

    /// The opening markers, as display text (`^` before a marker that
    /// counts only at a line start; `(stream start)` for a program that
    /// runs where the stream starts).
    pub fn markers(&self) -> Vec<String> {
        let mut v: Vec<String> = Vec::new();
        for o in &self.openers {
            if o.stream_start {
                // No marker: the program runs where the stream starts.
                if !v.iter().any(|m| m == "(stream start)") {
                    v.push("(stream start)".into());
                }
                continue;
            }
            let mut m = o.marker.display();
            if o.line_start {
                m = format!("^{m}");
            }
            if !v.contains(&m) {
                v.push(m);
            }
        }
        v
    }

    /// The openers.
    pub fn openers(&self) -> &[Opener] {
        &self.openers
    }
}
