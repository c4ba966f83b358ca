//! Formats described in JSON: a format's markers, where the tool name is,
//! how the arguments are written and what separates or ends calls — the
//! things a format says — or, in the program form, the steps that read
//! them. This is how a format is written outside the crate: a description
//! compiles to a [`Format`] running on the same machinery as the built-in
//! ones; a description of a built-in format compiles to that format's very
//! program (`examples/formats/` holds several, and a test proves each one
//! equal to its built-in).
//!
//! [`Format::from_json`] reads a description, [`Format::to_json`] writes
//! one;
//! [`Registry::register_json`](crate::Registry::register_json) and
//! [`Registry::register_file`](crate::Registry::register_file) read and
//! register one; `toolscan parse --format-file FILE` uses one.
//!
//! ```
//! use toolscan_core::{parse, Format, Options, Registry};
//!
//! // <<call get_weather>>{"city": "Paris"}<</call>>
//! let mut reg = Registry::builtin();
//! reg.register_json(r#"{
//!     "name": "double-angle",
//!     "models": "my fine-tune",
//!     "description": "<<call NAME>>{json}<</call>>",
//!     "open": "<<call ",
//!     "name_at": {"until": ">>"},
//!     "arguments": {"json": "object"},
//!     "close": "<</call>>"
//! }"#).unwrap();
//! let g = reg.grammar("double-angle").unwrap();
//! let r = parse(g, Options::default(), b"ok <<call get_weather>>{\"city\": \"Paris\"}<</call>>");
//! assert_eq!(r.text, "ok ");
//! assert_eq!(r.tool_calls[0].name, "get_weather");
//! assert_eq!(r.tool_calls[0].arguments.as_str(), r#"{"city": "Paris"}"#);
//!
//! // A mistake names the field and says why.
//! let e = Format::from_json(r#"{"name": "x", "open": "<c>", "arguments": {"xml2": {}}}"#)
//!     .unwrap_err();
//! assert_eq!(e.to_string(), r#"/arguments: unknown encoding "xml2"; expected one of json, params"#);
//! ```
//!
//! # The schema
//!
//! A description is a JSON object. Unknown keys are errors (a misspelt key
//! would otherwise be silently ignored), and so is a key given twice in
//! one object; a byte-order mark before the object is ignored. Every "literal" below is a
//! non-empty string matched byte for byte; lists are never empty (leave
//! an optional one out).
//!
//! | key | value | default |
//! |---|---|---|
//! | `name` | the format's name (`--format NAME`): new, not `auto` | required |
//! | `models` | who writes it | `""` |
//! | `description` | one line on what it looks like | `""` |
//! | `openers` | an array of opener objects (below), for a format with several markers | — |
//! | `tool_results` | how the answers to its calls are written back: `{"role": ROLE, "each": TEXT, "shared": {"before", "between", "after"}}`, `TEXT` holding `{content}` or `{content_json}` and optionally `{name}`, `{id}`, `{index}` (see `Format::render_tool_results`) | none |
//!
//! Without `openers`, the opener's keys sit at the top level beside `name`:
//! a format with one marker is one flat object.
//!
//! ## An opener
//!
//! A call reads, in this order: `open`, `prefix`, the name (`name_at`),
//! `between`, the arguments, `close`; then `separators` (another call) or
//! `terminators` (the end). Whitespace is allowed before each part, except
//! right after a `bare` marker (it is the JSON's first byte).
//!
//! | key | value | default |
//! |---|---|---|
//! | `open` | the literal that opens a block | required |
//! | `case_insensitive` | `open` and `close` match ASCII letters in either case | `false` |
//! | `line_start` | `open` only counts at the start of a line | `false` |
//! | `trust` | `definite`: dedicated tool-call markup, a block that fails to parse is reported; `tentative`: markup that often wraps other things, a call only once one shows; `bare`: `open` is `{` (or `[`), the first byte of a JSON call, left out of `auto` | `definite` |
//! | `prefix` | a literal before each call's name (`<function=`) | none |
//! | `name_at` | where the tool name is: `{"until": LITERAL}` (the name ends with it, and it is consumed) or `{"before": CHARACTERS}` (the name ends before any of these ASCII characters, e.g. `" \t\r\n{"`). Required unless the arguments are a JSON call object, and not allowed then | — |
//! | `between` | a literal between the name and the arguments (`ARGUMENTS:`) | none |
//! | `arguments` | how the arguments are written (below) | required |
//! | `close` | the literal that ends each call | none: the call ends with its arguments |
//! | `separators` | literals (a string or an array) that, after a call, mean another call follows | none |
//! | `terminators` | literals that, after the last call, belong to the calls and end the block | none |
//!
//! After a call with `separators` or `terminators`, anything else ends the
//! block and is text again.
//!
//! ## Arguments
//!
//! - `{"json": "object"}`: the arguments object itself, its name given
//!   before it by `name_at`.
//! - `{"json": "call", "name_keys": [...], "argument_keys": [...], "id_key":
//!   KEY, "function_key": KEY, "other_keys": [...]}`: one JSON object
//!   holding the name (under the first of `name_keys` present; default
//!   `["name"]`), the arguments (an object, a JSON string holding one, or
//!   `null`; under `argument_keys`, default `["arguments", "parameters"]`),
//!   optionally the call id (`id_key`) or a nested `{"name", "arguments"}`
//!   object (`function_key`, like OpenAI's `function`). `other_keys`
//!   (default `["type"]`) are keys a call may carry besides; in a tentative
//!   block any other key means "not a call".
//! - `{"json": "calls", …}`: the same keys, for an array of call objects
//!   (a single object is accepted too); each call completes as soon as its
//!   object closes.
//! - Either JSON form takes `"lenient": true`: single quotes, raw control
//!   characters in strings, Python `True`/`False`/`None` and trailing
//!   commas are accepted (and normalised).
//! - `{"params": {…}}`: each argument between tags, its value raw text
//!   typed by the tools schema (see `docs/formats.md`):
//!
//! | key of `params` | value | default |
//! |---|---|---|
//! | `open` | the literal before a parameter's key (`<parameter=`) | required |
//! | `key_end` | the literal after the key (`>`) | required |
//! | `value_start` | a literal between the key and the value (`<arg_value>`) | none |
//! | `close` | the literal after a value (`</parameter>`) | required |
//! | `end` | the literal after the last parameter: the call's closing tag (`</function>`) | required |
//! | `trim` | which whitespace around a value is markup: `none`, `newline` (one newline each side), `all` | `none` |
//! | `entities` | the values are XML text: `&lt;`, `&amp;`, `&#233;`… are decoded | `false` |
//! | `null` | the text `null` is JSON null, whatever type the schema declares | `false` |
//!
//! A value whose closing tag is missing ends at the next parameter's
//! `open`; at the end of the stream, at the parameters' `end` or the
//! call's `close`.
//!
//! ## Errors
//!
//! [`FormatFileError`] names the field as a JSON pointer
//! (`/openers/1/arguments/params/close`) and says why: a missing or
//! mistyped field, an unknown key or value, fields that do not go together
//! (`name_at` with a call object, `bare` with a marker other than `{`),
//! and markers that cannot live together in one grammar (one inside
//! another).
//!
//! # The program form
//!
//! The parts above are what most formats differ by; the program that reads
//! them — where whitespace may go, how a missing closing tag is recovered,
//! how calls repeat — is generated as the built-in formats write theirs
//! (see `compile.rs`). A format that needs more (a fork between two
//! bodies, recovery points, nested parameters, attributes) gives an
//! opener's program itself, step by step: `"program": [...]` beside `open`,
//! `case_insensitive`, `line_start`, `trust`, `replay` (whether the
//! marker's bytes are read again as the body's first; default: when `trust`
//! is `bare`) and `stream_start` (no marker: the program runs where the
//! stream starts). The built-in formats are written in the same steps.
//! A step is a string (a step that carries nothing) or an object whose
//! kind key holds what it carries, with modifiers beside it; jumps name
//! labels:
//!
//! | step | what it reads |
//! |---|---|
//! | `"ws"`, `"blank"` | optional whitespace; optional spaces and tabs |
//! | `{"lit": LIT}`, `{"opt_lit": LIT}`, `{"lit_or_end": LIT}` | a literal: required; optional; or the end of the stream |
//! | `"word"` | an optional info word after a code fence |
//! | `{"capture": "name"\|"id"\|"named_id"\|"discard"\|"ordinal"\|"key"\|"type", "until": [LIT \| {"lit": LIT, "goto": L}], "before": CHARS, "at_end": true, "keywords": JUMPS}` | a word, up to a delimiter literal or before a stop character |
//! | `{"json": "args"\|"call"\|"call_list"\|"root", …call keys, "text_key": K, "keyed": true, "no_call_names": [...], "lenient": true}` | a JSON value: the arguments, a call object, a list of them, or any of these in an envelope |
//! | `{"value": LIT \| {"special": "key_tag"\|"space"\|"balanced"}, "recover": JUMPS, "recover_at_end": JUMPS, "nest": JUMPS, "guard": [LIT, LIT], "trim": T, "entities": true, "or_end": true, "null": true}` | a raw parameter value up to its closer |
//! | `{"py": "keywords"\|"bare_keys", "strings": "quoted"\|LIT, "python_literals": B, "json_literals": B}` | Python-like call arguments, written as JSON |
//! | `{"container": "object"\|"list"}`, `"close_open"` | nothing: the parameter holds parameters or a list; that container ends |
//! | `{"string_param": KEY}` | nothing: the next value is the tool's one string parameter |
//! | `"dispatch"` | nothing: the call is complete |
//! | `"frame"`, `{"reasoning": B}`, `"definite"` | nothing: what was read is framing; text is reasoning or not; the block is definite |
//! | `{"fork": [{"on": "any"\|"end"\|{"bytes": CHARS}\|{"any_but": CHARS}, "goto": L}]}` | nothing: a branch on the next byte |
//! | `{"then": JUMPS}`, `{"one_of": JUMPS}` | after a call, one of the literals or the block's end; one of the literals |
//! | `{"recover": JUMPS}`, `{"recover_element": CHARS, "goto": L}` | nothing: a failed call does not end the block (a seek for a literal; a failed list element read over) |
//! | `{"label": L}`, `{"goto": L}`, `"end"` | a place, a jump, the end of the block |
//!
//! A literal (LIT) is a non-empty string, or `{"text": …,
//! "case_insensitive": true}`; JUMPS is an array of `{"lit": LIT, "goto":
//! L}`. [`Format::to_json`] writes any format in this form (`toolscan
//! formats --describe NAME`), so a built-in format can be copied out,
//! changed and loaded; every built-in reads back identical.
//!
//! A section of calls that survives one bad call, and arguments in
//! Python's keyword notation:
//!
//! ```
//! use toolscan_core::{parse, Options, Registry};
//!
//! let mut reg = Registry::builtin();
//! reg.register_json(r#"{
//!     "name": "calls",
//!     "open": "<calls>",
//!     "program": [
//!         {"lit": "<call>"},
//!         {"recover": [{"lit": "</call>", "goto": "next"}, {"lit": "<call>", "goto": "call"},
//!                      {"lit": "</calls>", "goto": "end"}]},
//!         {"label": "call"},
//!         {"capture": "name", "until": [" "]},
//!         {"json": "args"},
//!         {"lit": "</call>"},
//!         "dispatch",
//!         {"label": "next"},
//!         {"then": [{"lit": "<call>", "goto": "call"}, {"lit": "</calls>", "goto": "end"}]},
//!         {"label": "end"},
//!         "end"
//!     ]
//! }"#).unwrap();
//! let r = parse(reg.grammar("calls").unwrap(), Options::default(),
//!               b"<calls><call>a {oops}</call><call>b {}</call></calls>");
//! assert_eq!(r.text, "<calls><call>a {oops}</call>"); // the bad call, reported
//! assert_eq!(r.diagnostics.len(), 1);
//! assert_eq!((r.tool_calls[0].name.as_str(), r.tool_calls[0].arguments.as_str()), ("b", "{}"));
//!
//! reg.register_json(r#"{
//!     "name": "py-angle",
//!     "open": "<<",
//!     "program": [{"capture": "name", "until": ["("]}, {"py": "keywords"}, {"lit": ">>"},
//!                 "dispatch", "end"]
//! }"#).unwrap();
//! let r = parse(reg.grammar("py-angle").unwrap(), Options::default(),
//!               b"<<get_weather(city='Paris', days=[1, 2])>>");
//! assert_eq!(r.tool_calls[0].arguments.as_str(), r#"{"city":"Paris","days":[1,2]}"#);
//! ```

mod compile;
mod description;
pub(crate) mod fields;
pub(crate) mod payloads;
mod write;

pub use crate::error::FormatFileError;

use crate::error::Error;
use crate::lang::format::Format;
use crate::lang::grammar::Grammar;

pub use description::MAX_STEPS;
use description::{Description, OpenerSpec};

impl Format {
    /// The format a JSON description gives (see [`format_file`](crate::lang::format_file)
    /// for the schema). Its markers are checked as a grammar would check
    /// them; whether its name is new is for
    /// [`Registry::register_json`](crate::Registry::register_json) to say.
    ///
    /// ```
    /// use toolscan_core::Format;
    /// let f = Format::from_json(r#"{
    ///     "name": "bracket",
    ///     "open": "[CALL]",
    ///     "arguments": {"json": "call", "name_keys": ["tool"], "argument_keys": ["args"]},
    ///     "close": "[/CALL]"
    /// }"#).unwrap();
    /// assert_eq!((f.name(), f.markers()), ("bracket", vec!["[CALL]".to_string()]));
    /// ```
    pub fn from_json(text: &str) -> Result<Format, FormatFileError> {
        let d = Description::from_json(text)?;
        let reason = |e: Error| match e {
            Error::InvalidFormat { reason, .. } => reason,
            other => other.to_string(),
        };
        // Each opener on its own first, so that an error names it: a
        // program's labels and jumps, or a marker.
        // (No automaton is built for this: one opener's checks cost no more
        // than its program and marker.)
        for (at, spec) in &d.openers {
            let alone = Format::new(&d.name, "", "").opener(compile::compile_opener(spec));
            if let Err(e) = Grammar::check_alone(&alone) {
                let field = match spec {
                    OpenerSpec::Program(_) => "program",
                    OpenerSpec::Parts(_) => "open",
                };
                return Err(FormatFileError::new(format!("{at}/{field}"), reason(e)));
            }
        }
        // Then together: markers that clash.
        let format = compile::format(&d);
        match Grammar::new(&d.name, &[&format]) {
            Ok(_) => Ok(format),
            Err(e) => Err(FormatFileError::new("/openers", reason(e))),
        }
    }
}
