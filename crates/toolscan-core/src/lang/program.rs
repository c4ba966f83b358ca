//! A block's program as the parser runs it: the steps of a format with
//! labels resolved to step indices, checked once when the grammar is
//! compiled.

use std::collections::HashMap;

use crate::lang::format::{
    ByteSet, Capture, Close, Field, JsonStep, Label, Lit, PyStep, PyStrings, Shape, Step, Trim,
};

/// One compiled step. Every jump target is an index into the same program
/// (checked by [`compile`]).
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

/// A [`Step::Then`], or the seek a [`Step::Recover`] compiles to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ThenOp {
    pub opts: Vec<ThenOpt>,
    /// The recovery seek: bytes before a literal are text and the search
    /// goes on (a `Then` ends the block at the first other byte). Reached
    /// only by a failure, never by a jump of the program.
    pub seek: bool,
}

/// A [`ValueStep`](crate::lang::format::ValueStep) with its labels resolved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ValueOp {
    /// What ends the value.
    pub close: CloseOp,
    /// Markup that ends an unclosed value where it begins.
    pub recover: Vec<ThenOpt>,
    /// Markup that may end an unclosed value, decided at the end of the
    /// stream.
    pub at_end: Vec<ThenOpt>,
    /// Markup that makes a value a container, before any of its text.
    pub nest: Vec<ThenOpt>,
    /// What the program reads right after the call that an `at_end`
    /// literal closes, in the same block: the next call's markup (the
    /// literals of the `Then` after its dispatch that begin a call). Met
    /// after an `at_end` literal, it shows that literal was the call's
    /// closer: an unclosed value ends there at once (set by
    /// [`link_follow`]). The group's end is left out: a value may quote
    /// it before its own closer.
    pub follow: Vec<ThenOpt>,
    /// The block's own marker, where the block may end after that call
    /// (the next call is a block of its own): met after an `at_end`
    /// literal and followed by a `recover` literal (the next call's
    /// parameter), it shows that literal was the call's closer.
    pub next_block: Vec<ThenOpt>,
    pub guard: Option<(Lit, Lit)>,
    pub trim: Trim,
    pub entities: bool,
    /// The end of the stream ends the value.
    pub or_end: bool,
    /// The text `null` is JSON null whatever the declared type.
    pub null: bool,
}

/// What ends a raw value (see [`Close`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum CloseOp {
    /// This literal.
    Lit(Lit),
    /// `</KEY>`, made when the value begins.
    KeyTag,
    /// Whitespace (not consumed) or the end of the stream.
    Space,
    /// The bracket that closes the first one.
    Balanced,
}

/// A [`Capture`] with its delimiters' targets resolved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct CaptureOp {
    pub field: Field,
    pub stop: Vec<u8>,
    /// Delimiter literals and the step each one continues with.
    pub delims: Vec<(Lit, usize)>,
    /// Any byte of a delimiter, either case: such bytes may be in the word
    /// while a delimiter may be forming.
    pub delim_bytes: [bool; 256],
    /// The end of the stream ends the word.
    pub at_end: bool,
    /// Words that are markup, and the step each one continues with.
    pub keywords: Vec<(String, usize)>,
}

/// One continuation of a [`Step::Then`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ThenOpt {
    pub lit: Lit,
    pub to: usize,
    /// A separator (not a closer): the next call begins after it.
    pub begins_call: bool,
}

impl Op {
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

/// Resolves a program's labels. Errors name the problem for
/// [`Error::InvalidFormat`](crate::Error::InvalidFormat).
pub(crate) fn compile(steps: &[Step]) -> Result<Vec<Op>, String> {
    let mut at: HashMap<&Label, usize> = HashMap::new();
    let mut n = 0;
    for s in steps {
        match s {
            Step::Label(l) => {
                if at.insert(l, n).is_some() {
                    return Err(format!("label `{}` is defined twice", l.as_str()));
                }
            }
            _ => n += 1,
        }
    }
    if n == 0 {
        return Err("the program has no step".into());
    }
    let target = |l: &Label| -> Result<usize, String> {
        match at.get(l) {
            Some(&i) if i < n => Ok(i),
            Some(_) => Err(format!("label `{}` is after the last step", l.as_str())),
            None => Err(format!("jump to undefined label `{}`", l.as_str())),
        }
    };
    let nonempty = |l: &Lit| {
        if l.bytes.is_empty() {
            Err("empty literal in a program".to_string())
        } else {
            Ok(l.clone())
        }
    };
    let options = |opts: &[(Lit, Label)]| -> Result<Vec<ThenOpt>, String> {
        opts.iter()
            .map(|(lit, l)| {
                Ok(ThenOpt {
                    lit: nonempty(lit)?,
                    to: target(l)?,
                    begins_call: false,
                })
            })
            .collect()
    };
    let mut ops = Vec::with_capacity(n);
    // Recovery seeks, appended after the program's own steps.
    let mut seeks: Vec<Op> = Vec::new();
    for s in steps {
        let pc = ops.len();
        let op = match s {
            Step::Label(_) => continue,
            Step::Ws => Op::Ws,
            Step::Blank => Op::Blank,
            Step::Lit(l) => Op::Lit(nonempty(l)?),
            Step::OptLit(l) => Op::OptLit(nonempty(l)?),
            Step::LitOrEof(l) => Op::LitOrEof(nonempty(l)?),
            Step::Word => Op::Word,
            Step::Capture(c) => Op::Capture(capture(c, pc, &target, &nonempty)?),
            Step::Json(j) => Op::Json(j.clone()),
            Step::Value(v) => Op::Value(ValueOp {
                close: match &v.close {
                    Close::Lit(l) => CloseOp::Lit(nonempty(l)?),
                    Close::KeyTag => CloseOp::KeyTag,
                    Close::Space => CloseOp::Space,
                    Close::Balanced => CloseOp::Balanced,
                },
                recover: options(&v.recover)?,
                at_end: options(&v.recover_at_end)?,
                nest: options(&v.nest)?,
                follow: Vec::new(),
                next_block: Vec::new(),
                guard: match &v.guard {
                    Some((a, b)) => Some((nonempty(a)?, nonempty(b)?)),
                    None => None,
                },
                trim: v.trim,
                entities: v.entities,
                or_end: v.or_end,
                null: v.null,
            }),
            Step::Py(p) => {
                if let PyStrings::Delimited(d) = &p.strings {
                    nonempty(d)?;
                }
                Op::Py(p.clone())
            }
            Step::Open(array) => Op::Open(*array),
            Step::StringParam(key) => Op::StringParam(key.clone()),
            Step::CloseOpen => Op::CloseOpen,
            Step::Dispatch => Op::Dispatch,
            Step::Fork(alts) => Op::Fork(
                alts.iter()
                    .map(|(set, l)| Ok((set.clone(), target(l)?)))
                    .collect::<Result<_, String>>()?,
            ),
            Step::Then(opts) => Op::Then(ThenOp {
                opts: options(opts)?,
                seek: false,
            }),
            Step::OneOf(opts) => {
                if opts.is_empty() {
                    return Err("`OneOf` without a literal".into());
                }
                Op::OneOf(options(opts)?)
            }
            Step::Definite => Op::Definite,
            Step::Frame => Op::Frame,
            Step::Reasoning(on) => Op::Reasoning(*on),
            Step::Recover(opts) => {
                if opts.is_empty() {
                    return Err("`Recover` without a literal".into());
                }
                seeks.push(Op::Then(ThenOp {
                    opts: options(opts)?,
                    seek: true,
                }));
                Op::Recover(n + seeks.len() - 1)
            }
            Step::RecoverElement(ends, l) => {
                if ends.is_empty() {
                    return Err("`RecoverElement` without an ending byte".into());
                }
                if ends.iter().any(|b| b"'\"\\([{".contains(b)) {
                    return Err("`RecoverElement` ends at a quote or an opening bracket".into());
                }
                seeks.push(Op::Skip(ends.clone(), target(l)?));
                Op::Recover(n + seeks.len() - 1)
            }
            Step::Goto(l) => Op::Goto(target(l)?),
            Step::End => Op::End,
        };
        ops.push(op);
    }
    ops.extend(seeks);
    // A continuation that leads to more steps (not to the end or another
    // `Then`) begins the next call.
    let ends: Vec<bool> = ops
        .iter()
        .map(|o| matches!(o, Op::End | Op::Then(_)))
        .collect();
    for op in &mut ops {
        if let Op::Then(ThenOp { opts, .. }) | Op::OneOf(opts) = op {
            for o in opts {
                o.begins_call = !ends[o.to];
            }
        }
    }
    Ok(ops)
}

fn capture(
    c: &Capture,
    pc: usize,
    target: &dyn Fn(&Label) -> Result<usize, String>,
    nonempty: &dyn Fn(&Lit) -> Result<Lit, String>,
) -> Result<CaptureOp, String> {
    let mut delims = Vec::new();
    let mut delim_bytes = [false; 256];
    for (lit, to) in &c.delims {
        let to = match to {
            Some(l) => target(l)?,
            None => pc + 1,
        };
        for &b in &nonempty(lit)?.bytes {
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
            .map(|(w, l)| Ok((w.clone(), target(l)?)))
            .collect::<Result<_, String>>()?,
    })
}

/// Sets each value's [`ValueOp::follow`] and [`ValueOp::next_block`]:
/// from each `at_end` literal's target, through closing markup
/// (whitespace, literals, jumps) to the call's dispatch, then what comes
/// next — the literals of a `Then` or `OneOf`, and `marker` (the block's
/// own) where the block may end there. A literal the value already seeks
/// is left out.
pub(crate) fn link_follow(ops: &mut [Op], marker: &Lit) {
    for pc in 0..ops.len() {
        let Op::Value(v) = &ops[pc] else {
            continue;
        };
        let mut follow: Vec<Lit> = Vec::new();
        let mut ends = false;
        for o in &v.at_end {
            ends |= follow_from(ops, o.to, &mut follow);
        }
        let Op::Value(v) = &mut ops[pc] else {
            continue;
        };
        let sought = |l: &Lit| {
            v.recover
                .iter()
                .chain(&v.at_end)
                .chain(&v.nest)
                .any(|o| o.lit == *l)
                || matches!(&v.close, CloseOp::Lit(c) if c == l)
        };
        let opt = |lit: Lit| ThenOpt {
            lit,
            to: 0,
            begins_call: true,
        };
        let own = |l: &Lit| l.bytes.eq_ignore_ascii_case(&marker.bytes);
        for lit in follow {
            if !sought(&lit) && !own(&lit) && !v.follow.iter().any(|o| o.lit == lit) {
                v.follow.push(opt(lit));
            }
        }
        if ends && !marker.bytes.is_empty() && !sought(marker) {
            v.next_block.push(opt(marker.clone()));
        }
    }
}

/// The literals that may follow, in the block, the call dispatched after
/// `from`; whether the block may end after it (see [`link_follow`]).
fn follow_from(ops: &[Op], from: usize, out: &mut Vec<Lit>) -> bool {
    let mut pc = from;
    let mut dispatched = false;
    let push = |out: &mut Vec<Lit>, l: &Lit| {
        if !out.contains(l) {
            out.push(l.clone());
        }
    };
    // (Bounded: a program that loops without a dispatch gives nothing.)
    for _ in 0..ops.len() {
        let Some(op) = ops.get(pc) else {
            return false;
        };
        match op {
            Op::Dispatch => dispatched = true,
            Op::Goto(to) => {
                pc = *to;
                continue;
            }
            Op::Ws
            | Op::Blank
            | Op::Frame
            | Op::Definite
            | Op::Reasoning(_)
            | Op::Recover(_)
            | Op::Unhold(_) => {}
            Op::Lit(_) | Op::OptLit(_) | Op::LitOrEof(_) if !dispatched => {}
            Op::Lit(l) | Op::OptLit(l) | Op::LitOrEof(l) => {
                push(out, l);
                return false;
            }
            // (Anything but these literals ends the block.)
            // Only the literals that begin the next call: a value may quote
            // the group's end before its own closer.
            Op::Then(t) if dispatched && !t.seek => {
                t.opts
                    .iter()
                    .filter(|o| o.begins_call)
                    .for_each(|o| push(out, &o.lit));
                return true;
            }
            Op::OneOf(opts) if dispatched => {
                opts.iter()
                    .filter(|o| o.begins_call)
                    .for_each(|o| push(out, &o.lit));
                return false;
            }
            Op::End => return dispatched,
            _ => return false,
        }
        pc += 1;
    }
    false
}

/// Checks that every jump (and a capture's "next step") stays inside.
pub(crate) fn check_targets(ops: &mut [Op]) -> Result<(), String> {
    let n = ops.len();
    for op in ops.iter_mut() {
        for t in op.targets_mut() {
            if *t >= n {
                return Err(format!("a jump past the last step ({t} of {n})"));
            }
        }
    }
    Ok(())
}

/// The bytes that may start the block's body (after optional whitespace),
/// used to merge openers that share a marker.
pub(crate) fn first_set(ops: &[Op]) -> ByteSet {
    first_at(ops, 0, 0)
}

fn first_at(ops: &[Op], pc: usize, depth: usize) -> ByteSet {
    if depth > 16 {
        return ByteSet::Any;
    }
    let lit_first = |l: &Lit| {
        let b = l.bytes[0];
        if l.case_insensitive {
            vec![b.to_ascii_lowercase(), b.to_ascii_uppercase()]
        } else {
            vec![b]
        }
    };
    match ops.get(pc) {
        Some(Op::Ws | Op::Blank | Op::Definite | Op::Recover(_) | Op::Frame | Op::Reasoning(_)) => {
            first_at(ops, pc + 1, depth + 1)
        }
        Some(Op::OneOf(opts)) => {
            ByteSet::Bytes(opts.iter().flat_map(|o| lit_first(&o.lit)).collect())
        }
        Some(Op::Lit(l)) | Some(Op::LitOrEof(l)) => ByteSet::Bytes(lit_first(l)),
        Some(Op::OptLit(l)) => match first_at(ops, pc + 1, depth + 1) {
            ByteSet::Bytes(mut v) => {
                v.extend(lit_first(l));
                ByteSet::Bytes(v)
            }
            ByteSet::End => ByteSet::Bytes(lit_first(l)),
            ByteSet::Any | ByteSet::AnyBut(_) => ByteSet::Any,
        },
        Some(Op::Json(j)) => ByteSet::Bytes(match j.shape {
            Shape::Args | Shape::Call => vec![b'{'],
            Shape::CallList | Shape::Root => vec![b'[', b'{'],
        }),
        Some(Op::Goto(t)) => first_at(ops, *t, depth + 1),
        Some(Op::Fork(alts)) => {
            let mut v = Vec::new();
            for (set, _) in alts {
                match set {
                    ByteSet::Bytes(b) => v.extend_from_slice(b),
                    ByteSet::End => {}
                    ByteSet::Any | ByteSet::AnyBut(_) => return ByteSet::Any,
                }
            }
            ByteSet::Bytes(v)
        }
        _ => ByteSet::Any,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_resolve_to_the_next_step() {
        let ops = compile(&[
            Step::label("top"),
            Step::Ws,
            Step::goto("end"),
            Step::Dispatch,
            Step::label("end"),
            Step::End,
            Step::Then(vec![(Lit::new(";"), "top".into())]),
        ])
        .unwrap();
        assert_eq!(ops[1], Op::Goto(3));
        let Op::Then(t) = &ops[4] else { panic!() };
        assert_eq!((t.opts[0].to, t.opts[0].begins_call), (0, true));
    }

    #[test]
    fn recovery_seeks_are_appended_after_the_steps() {
        let ops = compile(&[
            Step::label("call"),
            Step::Recover(vec![
                (Lit::new("<next>"), "call".into()),
                (Lit::new("</all>"), "end".into()),
            ]),
            Step::Dispatch,
            Step::label("end"),
            Step::End,
        ])
        .unwrap();
        assert_eq!(ops.len(), 4);
        assert_eq!(ops[0], Op::Recover(3));
        let Op::Then(t) = &ops[3] else {
            panic!("{ops:?}")
        };
        assert!(t.seek);
        // a literal leading to a call begins it; one leading to the end
        // does not
        assert_eq!((t.opts[0].to, t.opts[0].begins_call), (0, true));
        assert_eq!((t.opts[1].to, t.opts[1].begins_call), (2, false));
        assert!(compile(&[Step::Recover(Vec::new()), Step::End]).is_err());
        assert!(compile(&[Step::OneOf(Vec::new()), Step::End]).is_err());
    }

    #[test]
    fn a_python_step_needs_a_string_delimiter() {
        use crate::lang::format::PyStep;
        assert!(compile(&[Step::Py(PyStep::keywords()), Step::End]).is_ok());
        assert!(compile(&[Step::Py(PyStep::bare_keys("<escape>")), Step::End]).is_ok());
        assert!(compile(&[Step::Py(PyStep::bare_keys("")), Step::End])
            .unwrap_err()
            .contains("empty literal"));
    }

    #[test]
    fn label_errors() {
        assert!(compile(&[Step::goto("x"), Step::End])
            .unwrap_err()
            .contains("undefined"));
        assert!(compile(&[Step::label("x"), Step::label("x"), Step::End])
            .unwrap_err()
            .contains("twice"));
        assert!(compile(&[Step::End, Step::label("x")]).is_ok());
        assert!(compile(&[Step::goto("x"), Step::label("x")])
            .unwrap_err()
            .contains("after the last"));
        assert!(compile(&[]).is_err());
    }
}
