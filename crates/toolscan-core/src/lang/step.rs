//! The steps of a block's program, one row each in one table: the kind's
//! name in a format file, what it carries, and the op it compiles to.
//! From the table come the [`Step`] enum, the kind names an error lists
//! ([`WORDS`], [`KINDS`]), reading a step from its JSON and writing it
//! back ([`Step::read`], [`Step::write`]) and compiling it
//! ([`Step::compile`]). A payload's own JSON form is its
//! [`Payload`] implementation (`payload.rs`).
//!
//! # Adding a step
//!
//! Three files:
//!
//! 1. A row here: a word (`Ws = "ws" => Op::Ws;`) for a step that carries
//!    nothing, else `Variant(Payload) = "kind", |payload, cx| op;` — an
//!    existing payload (a literal, a label, a list of jumps, a flag…) needs
//!    nothing more; a new one implements [`Payload`] beside the row. If it
//!    compiles to a new op, add the variant to [`Op`] below (and to
//!    [`Op::targets_mut`] if it jumps).
//! 2. A step that reads bytes: its reader file in `engine/block/` (and
//!    `end.rs` only if the end of the stream may complete it). A step
//!    that reads nothing: its arm in `engine/block/marks.rs`.
//! 3. A step that reads bytes: its arm in `engine/block/mod.rs`'s `read`.
//!    A step that reads nothing: its place in `engine/block/end.rs`'s list
//!    of steps that run at the end of the stream as with bytes.
//!
//! Its line in `docs/format-files.md` goes with it (a test checks every
//! kind is there).

use std::collections::HashMap;

use serde_json::{Map, Value};

use crate::error::FormatFileError;
use crate::lang::format_file::fields::{Obj, Payload};
use crate::lang::hint::Hint;
use crate::lang::op::{CaptureOp, CloseOp, ThenOp, ThenOpt, ValueOp};
use crate::lang::payload::{
    ByteSet, CallKeys, Capture, Close, Container, ElementEnd, Field, JsonStep, Label, Lit, PyStep,
    PyStrings, Shape, ValueStep,
};

/// The table's shape: `words` are steps written as a bare string (they
/// carry nothing), `objects` steps written as an object whose kind key
/// holds the payload.
macro_rules! steps {
    (
        words {
            $( $(#[$wdoc:meta])* $word:ident = $wname:literal => $wop:expr; )*
        }
        objects {
            $( $(#[$odoc:meta])* $var:ident($ty:ty) = $kind:literal,
               |$x:pat_param, $cx:pat_param| $op:expr; )*
        }
    ) => {
        /// One step of a block's program. Steps run in order; jumps name a
        /// [`Label`].
        ///
        /// A block's bytes are held until its fate is known: the bytes of a
        /// completed call (with the markup around it and between calls) are
        /// its span and are dropped; a block that ends without a completed
        /// call, or fails, gives its bytes back as text.
        #[derive(Clone, Debug, PartialEq, Eq, Hash)]
        pub(crate) enum Step {
            $( $(#[$wdoc])* $word, )*
            $( $(#[$odoc])* $var($ty), )*
        }

        /// Steps written as a bare string.
        pub(crate) const WORDS: &[&str] = &[$($wname),*];

        /// Kind keys of steps written as an object.
        pub(crate) const KINDS: &[&str] = &[$($kind),*];

        /// The keys an object step of `kind` may hold besides its kind.
        fn modifiers(kind: &str) -> &'static [&'static str] {
            $( if kind == $kind {
                return <$ty as Payload>::MODIFIERS;
            } )*
            &[]
        }

        impl Step {
            /// The step a bare string names.
            fn word(word: &str) -> Option<Step> {
                match word {
                    $( $wname => Some(Step::$word), )*
                    _ => None,
                }
            }

            /// The step of kind `kind` (one of [`KINDS`]) from its object.
            fn object(kind: &str, o: &Obj<'_>) -> Result<Option<Step>, FormatFileError> {
                $( if kind == $kind {
                    let mut allowed = vec![$kind];
                    allowed.extend_from_slice(<$ty as Payload>::MODIFIERS);
                    o.only(&allowed)?;
                    return Ok(Some(Step::$var(<$ty as Payload>::read(o, kind)?)));
                } )*
                Ok(None)
            }

            /// The step as a format file writes it; `at` is its JSON
            /// pointer, for errors.
            pub(crate) fn write(&self, at: &str) -> Result<Value, FormatFileError> {
                match self {
                    $( Step::$word => Ok(Value::String($wname.into())), )*
                    $( Step::$var(payload) => {
                        let mut m = Map::new();
                        payload.write($kind, &mut m, at)?;
                        Ok(Value::Object(m))
                    } )*
                }
            }

            /// The op this step compiles to (`None` for a label, which
            /// only names a place); errors name the problem for
            /// [`Error::InvalidFormat`](crate::Error::InvalidFormat).
            pub(crate) fn compile(&self, cx: &mut Cx<'_>) -> Result<Option<Op>, String> {
                Ok(match self {
                    $( Step::$word => Some($wop), )*
                    $( Step::$var($x) => {
                        let $cx = &mut *cx;
                        $op
                    } )*
                })
            }
        }
    };
}

steps! {
    words {
        /// Optional ASCII whitespace.
        Ws = "ws" => Op::Ws;
        /// Optional spaces and tabs: whitespace that does not end a line.
        Blank = "blank" => Op::Blank;
        /// An optional info word after a code fence (` ```json `).
        Word = "word" => Op::Word;
        /// The current call is complete: emit `tool_call_end` now.
        Dispatch = "dispatch" => Op::Dispatch;
        /// Makes the block *definite* from here on (see the opener's
        /// `Trust`): the markup read so far
        /// is dedicated tool-call markup even though the opener was
        /// tentative (`<tool_call>` inside a code fence), so a failure is
        /// reported.
        Definite = "definite" => Op::Definite;
        /// Closes the innermost object or list that [`Step::Open`] opened;
        /// the block fails if none is open.
        CloseOpen = "close_open" => Op::CloseOpen;
        /// The bytes the block read so far are framing markup — a message
        /// header, a recipient line — that is neither text nor part of a
        /// call: they are dropped. (Reading a call after it, its span
        /// starts here.)
        Frame = "frame" => Op::Frame;
        /// The block is over; back to text.
        End = "end" => Op::End;
    }
    objects {
        /// Names the place of the next step (reads nothing).
        Label(Label) = "label", |_, _| None;
        /// A rendering hint for the next step (reads nothing, compiles to
        /// nothing): which whitespace, branch or spelling the renderer
        /// writes where the program allows several (see [`Hint`]).
        Render(Hint) = "render", |_, _| None;
        /// Jump.
        Goto(Label) = "goto", |l, cx| Some(Op::Goto(cx.target(l)?));
        /// A required literal.
        Lit(Lit) = "lit", |l, cx| Some(Op::Lit(cx.lit(l)?));
        /// An optional literal, taken when the next byte is its first byte.
        OptLit(Lit) = "opt_lit", |l, cx| Some(Op::OptLit(cx.lit(l)?));
        /// A closing literal that the end of the stream may stand for: at
        /// `finish`, a block waiting here completes normally (a code fence
        /// the model never closed).
        LitOrEof(Lit) = "lit_or_end", |l, cx| Some(Op::LitOrEof(cx.lit(l)?));
        /// A name, id or discarded word.
        Capture(Capture) = "capture", |c, cx| Some(Op::Capture(cx.capture(c)?));
        /// A JSON value.
        Json(JsonStep) = "json", |j, _| Some(Op::Json(j.clone()));
        /// The current call is complete, and ended before the literal a
        /// [`Step::OneOf`] just read: that literal opens the next call
        /// (`<function=` right after a parameter, its call's
        /// `</function>` missing), so its bytes are the next call's
        /// first, not this call's. Emits `tool_call_end` now, as
        /// [`Step::Dispatch`]; the next call is read from here on.
        DispatchBefore(Lit) = "dispatch_before", |l, cx| {
            Some(Op::DispatchBefore(cx.lit(l)?.bytes.len()))
        };
        /// A raw parameter value, after its key was captured
        /// ([`Field::Key`]).
        Value(ValueStep) = "value", |v, cx| Some(Op::Value(cx.value(v)?));
        /// The parameter whose key was captured last holds an object of
        /// parameters, or a list of values — after a
        /// [`ValueStep::nest`] literal.
        Open(Container) = "container", |c, _| Some(Op::Open(*c == Container::List));
        /// Branch on the next byte: the first set that holds it wins; no
        /// match fails the block. At the end of the stream, a
        /// [`ByteSet::End`] branch is taken (without one, the call is
        /// truncated).
        Fork(Vec<(ByteSet, Label)>) = "fork", |alts, cx| Some(Op::Fork(cx.fork(alts)?));
        /// After a call: optional whitespace, then one of these literals
        /// (jump to its label) — or anything else, which ends the block
        /// and is scanned as text again.
        Then(Vec<(Lit, Label)>) = "then", |opts, cx| Some(Op::Then(ThenOp {
            opts: cx.jumps(opts)?,
            seek: false,
        }));
        /// One of these literals (no whitespace before it), jumping to its
        /// label; anything else fails the block. The first literal to be
        /// complete wins, so none should be a prefix of another.
        OneOf(Vec<(Lit, Label)>) = "one_of", |opts, cx| {
            if opts.is_empty() {
                return Err("`OneOf` without a literal".into());
            }
            Some(Op::OneOf(cx.jumps(opts)?))
        };
        /// Sets the block's recovery point: from here on, a call that fails
        /// does not end the block. The failure is reported as usual, the
        /// failed call's bytes are given back as text, and the block reads
        /// on — as text, released as it comes, holding back only what may
        /// begin one of these literals — up to the first of these
        /// literals, then goes on at its label. A literal whose label
        /// begins a call (anything but a [`Step::Then`] or [`Step::End`])
        /// is the next call's first bytes; any other literal ends the
        /// failed call and is text too.
        ///
        /// So a group of calls survives one bad call: DeepSeek's
        /// `<｜tool▁calls▁begin｜>` section recovers at the next
        /// `<｜tool▁call▁begin｜>`, and its closing markers still belong to
        /// the calls that completed. Until the block completes a call,
        /// everything it read is text, as without recovery. Compiles to a
        /// seek appended after the program's own steps.
        Recover(Vec<(Lit, Label)>) = "recover", |opts, cx| {
            if opts.is_empty() {
                return Err("`Recover` without a literal".into());
            }
            let seek = Op::Then(ThenOp {
                opts: cx.jumps(opts)?,
                seek: true,
            });
            Some(Op::Recover(cx.seek(seek)))
        };
        /// Sets the block's recovery point for a list of calls read call
        /// by call (`[f(a=1), g(b=2)]`): from here on, once the block holds
        /// a call (or is definite), a call that fails does not end the
        /// block. The failure is reported as usual; the rest of the failed
        /// element is read over exactly — brackets counted and strings
        /// followed from where the call failed — up to the first of its
        /// ending bytes (`,`, `]`) outside any bracket or string.
        /// Everything from the end of the call before it (or from the
        /// block's start) to there is text, released as it comes, and the
        /// block goes on at the label, which reads that byte.
        ///
        /// Unlike [`Step::Recover`], this is no search for text: a
        /// separator inside a string or a nested list does not end the
        /// element.
        RecoverElement(ElementEnd) = "recover_element", |e, cx| {
            if e.ends.is_empty() {
                return Err("`RecoverElement` without an ending byte".into());
            }
            if e.ends.iter().any(|b| b"'\"\\([{".contains(b)) {
                return Err("`RecoverElement` ends at a quote or an opening bracket".into());
            }
            let skip = Op::Skip(e.ends.clone(), cx.target(&e.to)?);
            Some(Op::Recover(cx.seek(skip)))
        };
        /// From here on, text is reasoning (`true`) or not (`false`). This
        /// is the format's own marking of its reasoning, not a guess from
        /// markers any model may write, so it holds whether or not
        /// reasoning separation ([`Options::reasoning`](crate::Options::reasoning),
        /// which is about reasoning markers such as `<think>`) is on.
        /// (Harmony's `analysis` channel is reasoning up to the message's
        /// end, as vLLM reads it.)
        Reasoning(bool) = "reasoning", |on, _| Some(Op::Reasoning(*on));
        /// The next [`Step::Value`] is the arguments' one parameter: the
        /// called tool's only string property in the tools schema, else
        /// this key. (Raw code sent to a `python` tool is its `code`
        /// argument.)
        StringParam(String) = "string_param", |key, _| Some(Op::StringParam(key.clone()));
        /// The arguments of a call in Python-like notation (see
        /// [`PyStep`]).
        Py(PyStep) = "py", |p, cx| {
            if let PyStrings::Delimited(d) = &p.strings {
                cx.lit(d)?;
            }
            Some(Op::Py(p.clone()))
        };
    }
}

impl Step {
    /// One step of a format file's `program`, at JSON pointer `at`: a
    /// string (a step that carries nothing) or an object with one kind
    /// key. An unknown kind is an error naming the step and listing the
    /// kinds this build knows.
    pub(crate) fn read(v: &Value, at: &str) -> Result<Step, FormatFileError> {
        if let Value::String(word) = v {
            return Step::word(word).ok_or_else(|| {
                FormatFileError::new(
                    at,
                    format!(
                        "unknown step {word:?}; expected one of {}, or an object with one of {}",
                        WORDS.join(", "),
                        KINDS.join(", ")
                    ),
                )
            });
        }
        let o = Obj::new(v, at.to_owned())?;
        // The kind keys present, less those that are another present
        // kind's modifiers (`recover` beside `value`, `goto` beside
        // `recover_element`).
        let present: Vec<&str> = KINDS.iter().copied().filter(|k| o.has(k)).collect();
        let kinds: Vec<&str> = present
            .iter()
            .copied()
            .filter(|k| !present.iter().any(|other| modifiers(other).contains(k)))
            .collect();
        let unknown = |reason: String| Err(FormatFileError::new(at, reason));
        match kinds.as_slice() {
            [kind] => match Step::object(kind, &o)? {
                Some(step) => Ok(step),
                None => unknown(format!("unknown step kind {kind:?}")),
            },
            [] => unknown(match o.first_key() {
                Some(k) => format!(
                    "unknown step kind {k:?}; expected one of {}",
                    KINDS.join(", ")
                ),
                None => format!("empty step; expected one of {}", KINDS.join(", ")),
            }),
            [a, b, ..] => Err(o.err(b, format!("a step has one kind; this one is already `{a}`"))),
        }
    }

    /// A required literal.
    pub(crate) fn lit(s: &str) -> Step {
        Step::Lit(Lit::new(s))
    }

    /// The tool name, up to (and including) a delimiter literal.
    pub(crate) fn name_until(delim: &str) -> Step {
        Step::Capture(Capture::until(Field::Name, vec![(Lit::new(delim), None)]))
    }

    /// A parameter's name, up to (and including) a delimiter literal.
    pub(crate) fn key_until(delim: &str) -> Step {
        Step::Capture(Capture::until(Field::Key, vec![(Lit::new(delim), None)]))
    }

    /// A label before the next step.
    pub(crate) fn label(name: impl Into<Label>) -> Step {
        Step::Label(name.into())
    }

    /// A jump to a label.
    pub(crate) fn goto(name: impl Into<Label>) -> Step {
        Step::Goto(name.into())
    }

    /// The arguments object (strict JSON).
    pub(crate) fn args() -> Step {
        Step::Json(JsonStep::new(Shape::Args, CallKeys::default()))
    }
}

/// One compiled step. Every jump target is an index into the same program
/// (checked when the program is compiled).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Op {
    Ws,
    Blank,
    Lit(Lit),
    OptLit(Lit),
    LitOrEof(Lit),
    Word,
    Capture(CaptureOp),
    Json(JsonStep),
    Value(ValueOp),
    Py(PyStep),
    Open(bool),
    StringParam(String),
    CloseOpen,
    Dispatch,
    /// Dispatches the call, whose bytes end this many bytes before the
    /// current byte (a literal just read, the next call's first bytes).
    DispatchBefore(usize),
    Fork(Vec<(ByteSet, usize)>),
    Then(ThenOp),
    OneOf(Vec<ThenOpt>),
    Definite,
    Frame,
    Reasoning(bool),
    /// Arms recovery: a failure continues at this op, a seeking
    /// [`ThenOp`] (appended after the program's own steps).
    Recover(usize),
    /// Reads over a failed list element up to one of these bytes at its
    /// own level, then goes on at the target (appended after the program's
    /// own steps, like a seek; reached only by a failure).
    Skip(Vec<u8>, usize),
    Goto(usize),
    End,
    /// The block really began this many bytes after its marker: give them
    /// back as text (made by the grammar when it cuts a marker that holds
    /// another; never written in a format).
    Unhold(usize),
}

impl Op {
    /// Every jump target of the op.
    pub(crate) fn targets_mut(&mut self) -> Vec<&mut usize> {
        match self {
            Op::Capture(c) => c
                .delims
                .iter_mut()
                .map(|(_, j)| j)
                .chain(c.keywords.iter_mut().map(|(_, j)| j))
                .collect(),
            Op::Fork(alts) => alts.iter_mut().map(|(_, j)| j).collect(),
            Op::Then(t) => t.opts.iter_mut().map(|o| &mut o.to).collect(),
            Op::OneOf(opts) => opts.iter_mut().map(|o| &mut o.to).collect(),
            Op::Value(v) => v
                .recover
                .iter_mut()
                .chain(v.at_end.iter_mut())
                .chain(v.nest.iter_mut())
                .chain(v.after.iter_mut())
                .map(|o| &mut o.to)
                .collect(),
            Op::Recover(j) | Op::Goto(j) | Op::Skip(_, j) => vec![j],
            _ => Vec::new(),
        }
    }

    /// Shifts every jump by `by` (the program is appended after others).
    pub(crate) fn shifted(mut self, by: usize) -> Op {
        for t in self.targets_mut() {
            *t += by;
        }
        self
    }
}

/// What compiling a step may look up: where each label is, which op is
/// being made, and the recovery seeks made so far (appended after the
/// program's own ops).
pub(crate) struct Cx<'a> {
    labels: HashMap<&'a Label, usize>,
    /// How many ops the program's own steps make.
    ops: usize,
    /// The index of the op being made.
    pub(crate) pc: usize,
    /// Recovery seeks, appended after the program's own ops.
    pub(crate) seeks: Vec<Op>,
}

impl<'a> Cx<'a> {
    /// The labels of `steps` resolved: each names the op of the next step.
    pub(crate) fn new(steps: &'a [Step]) -> Result<Cx<'a>, String> {
        let mut labels = HashMap::new();
        let mut ops = 0;
        for s in steps {
            match s {
                Step::Label(l) => {
                    if labels.insert(l, ops).is_some() {
                        return Err(format!("label `{}` is defined twice", l.as_str()));
                    }
                }
                Step::Render(_) => {}
                _ => ops += 1,
            }
        }
        if ops == 0 {
            return Err("the program has no step".into());
        }
        Ok(Cx {
            labels,
            ops,
            pc: 0,
            seeks: Vec::new(),
        })
    }

    /// How many ops the program's own steps make.
    pub(crate) fn ops(&self) -> usize {
        self.ops
    }

    /// The op a label names.
    fn target(&self, l: &Label) -> Result<usize, String> {
        match self.labels.get(l) {
            Some(&i) if i < self.ops => Ok(i),
            Some(_) => Err(format!("label `{}` is after the last step", l.as_str())),
            None => Err(format!("jump to undefined label `{}`", l.as_str())),
        }
    }

    /// A literal, which must not be empty.
    fn lit(&self, l: &Lit) -> Result<Lit, String> {
        if l.bytes.is_empty() {
            Err("empty literal in a program".to_string())
        } else {
            Ok(l.clone())
        }
    }

    /// Literals and their labels resolved (whether each begins a call is
    /// worked out once the whole program is compiled).
    fn jumps(&self, opts: &[(Lit, Label)]) -> Result<Vec<ThenOpt>, String> {
        opts.iter()
            .map(|(lit, l)| {
                Ok(ThenOpt {
                    lit: self.lit(lit)?,
                    to: self.target(l)?,
                    begins_call: false,
                })
            })
            .collect()
    }

    /// Appends a recovery seek; its index.
    fn seek(&mut self, op: Op) -> usize {
        self.seeks.push(op);
        self.ops + self.seeks.len() - 1
    }

    fn fork(&self, alts: &[(ByteSet, Label)]) -> Result<Vec<(ByteSet, usize)>, String> {
        alts.iter()
            .map(|(set, l)| Ok((set.clone(), self.target(l)?)))
            .collect()
    }

    fn capture(&self, c: &Capture) -> Result<CaptureOp, String> {
        let mut delims = Vec::new();
        let mut delim_bytes = [false; 256];
        for (lit, to) in &c.delims {
            let to = match to {
                Some(l) => self.target(l)?,
                None => self.pc + 1,
            };
            for &b in &self.lit(lit)?.bytes {
                delim_bytes[usize::from(b.to_ascii_lowercase())] = true;
                delim_bytes[usize::from(b.to_ascii_uppercase())] = true;
            }
            delims.push((lit.clone(), to));
        }
        Ok(CaptureOp {
            field: c.field,
            stop: c.stop.clone(),
            delims,
            delim_bytes,
            at_end: c.at_end,
            keywords: c
                .keywords
                .iter()
                .map(|(w, l)| Ok((w.clone(), self.target(l)?)))
                .collect::<Result<_, String>>()?,
        })
    }

    fn value(&self, v: &ValueStep) -> Result<ValueOp, String> {
        Ok(ValueOp {
            close: match &v.close {
                Close::Lit(l) => CloseOp::Lit(self.lit(l)?),
                Close::KeyTag => CloseOp::KeyTag,
                Close::Space => CloseOp::Space,
                Close::Balanced => CloseOp::Balanced,
            },
            recover: self.jumps(&v.recover)?,
            at_end: self.jumps(&v.recover_at_end)?,
            nest: self.jumps(&v.nest)?,
            follow: Vec::new(),
            next_block: Vec::new(),
            markup: Vec::new(),
            after: Vec::new(),
            after_ws: false,
            guard: match &v.guard {
                Some((a, b)) => Some((self.lit(a)?, self.lit(b)?)),
                None => None,
            },
            trim: v.trim,
            entities: v.entities,
            or_end: v.or_end,
            null: v.null,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every kind in the table, written out.
    fn every_kind() -> impl Iterator<Item = &'static str> {
        WORDS.iter().chain(KINDS).copied()
    }

    #[test]
    fn every_kind_in_the_table_is_documented_in_the_format_files_page() {
        let page = include_str!("../../../../docs/format-files.md");
        for kind in every_kind() {
            let written = [format!("\"{kind}\""), format!("{{\"{kind}\":")];
            assert!(
                written.iter().any(|w| page.contains(w.as_str())),
                "docs/format-files.md does not show the step `{kind}`"
            );
        }
    }

    #[test]
    fn an_unknown_kind_names_the_step_and_lists_the_known_kinds() {
        let word = Step::read(&Value::from("jump"), "/program/3").unwrap_err();
        assert_eq!(word.pointer(), "/program/3");
        let object = Step::read(&serde_json::json!({"litt": "x"}), "/program/4").unwrap_err();
        assert_eq!(object.pointer(), "/program/4");
        assert!(word.to_string().contains("unknown step \"jump\""));
        assert!(object.to_string().contains("unknown step kind \"litt\""));
        for kind in every_kind() {
            assert!(word.to_string().contains(kind), "{kind} not listed: {word}");
        }
        for kind in KINDS {
            assert!(
                object.to_string().contains(kind),
                "{kind} not listed: {object}"
            );
        }
    }

    #[test]
    fn a_modifier_key_beside_its_kind_is_no_second_kind() {
        let value = serde_json::json!({"value": "</v>", "recover": [{"lit": "<k>", "goto": "k"}]});
        assert!(matches!(Step::read(&value, ""), Ok(Step::Value(_))));
        let element = serde_json::json!({"recover_element": ",]", "goto": "sep"});
        assert_eq!(
            Step::read(&element, "").unwrap(),
            Step::RecoverElement(ElementEnd::new(b",]", "sep"))
        );
        let two = serde_json::json!({"lit": "x", "goto": "y"});
        assert_eq!(Step::read(&two, "/p").unwrap_err().pointer(), "/p/lit");
    }

    #[test]
    fn every_kind_reads_back_what_it_writes() {
        use serde_json::json;
        let steps = [
            json!("ws"),
            json!("blank"),
            json!("word"),
            json!("dispatch"),
            json!("definite"),
            json!("close_open"),
            json!("frame"),
            json!("end"),
            json!({"label": "a"}),
            json!({"render": {"write": "\n", "prefer": "a", "item_sep": ",", "key_sep": ":", "indent": 4, "ascii": true, "sort_keys": true, "quote": "\"", "types": "bool"}}),
            json!({"goto": "a"}),
            json!({"lit": "<a>"}),
            json!({"opt_lit": {"text": "<a>", "case_insensitive": true}}),
            json!({"lit_or_end": "```"}),
            json!({"dispatch_before": "<f="}),
            json!({"capture": "key", "until": ["=", {"lit": ">", "goto": "a"}], "before": " ", "at_end": true, "keywords": [{"lit": "all", "goto": "a"}]}),
            json!({"json": "call", "name_keys": ["tool"], "id_key": "id", "lenient": true}),
            json!({"value": {"special": "key_tag"}, "recover": [{"lit": "<p>", "goto": "a"}], "guard": ["[[", "]]"], "trim": "newline", "entities": true, "null": true}),
            json!({"container": "list"}),
            json!({"fork": [{"on": {"bytes": "{["}, "goto": "a"}, {"on": "end", "goto": "a"}]}),
            json!({"then": [{"lit": ";", "goto": "a"}]}),
            json!({"one_of": [{"lit": ";", "goto": "a"}]}),
            json!({"recover": [{"lit": ";", "goto": "a"}]}),
            json!({"recover_element": ",]", "goto": "a"}),
            json!({"reasoning": true}),
            json!({"string_param": "code"}),
            json!({"py": "bare_keys", "strings": "<escape>", "python_literals": false, "json_literals": true}),
        ];
        let mut seen = Vec::new();
        for v in steps {
            let step = Step::read(&v, "").unwrap_or_else(|e| panic!("{v}: {e}"));
            let back = step.write("").expect("writes");
            assert_eq!(Step::read(&back, "").expect("reads back"), step, "{v}");
            seen.push(match &back {
                Value::String(w) => w.clone(),
                Value::Object(m) => {
                    let present: Vec<&str> = KINDS
                        .iter()
                        .copied()
                        .filter(|k| m.contains_key(*k))
                        .collect();
                    let kind = present
                        .iter()
                        .find(|k| !present.iter().any(|o| modifiers(o).contains(k)))
                        .expect("a kind");
                    kind.to_string()
                }
                _ => String::new(),
            });
        }
        for kind in every_kind() {
            assert!(seen.iter().any(|s| s == kind), "{kind} is not tried");
        }
    }
}
