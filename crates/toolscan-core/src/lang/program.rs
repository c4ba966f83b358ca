//! A block's program as the parser runs it: the steps of a format with
//! labels resolved to step indices, checked once when the grammar is
//! compiled. What each step compiles to is its row in the table of steps
//! (`step.rs`); this file runs the table over a program and works out what
//! needs the whole program (which continuations begin a call, what may
//! follow an unclosed value, the bytes a body may begin with).

pub(crate) use crate::lang::op::{CaptureOp, CloseOp, ThenOp, ThenOpt, ValueOp};
pub(crate) use crate::lang::step::Op;

use crate::lang::payload::{ByteSet, Lit, Shape};
use crate::lang::step::{Cx, Step};

/// Resolves a program's labels. Errors name the problem for
/// [`Error::InvalidFormat`](crate::Error::InvalidFormat).
pub(crate) fn compile(steps: &[Step]) -> Result<Vec<Op>, String> {
    let mut cx = Cx::new(steps)?;
    let mut ops = Vec::with_capacity(cx.ops());
    for s in steps {
        cx.pc = ops.len();
        if let Some(op) = s.compile(&mut cx)? {
            ops.push(op);
        }
    }
    ops.append(&mut cx.seeks);
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

/// Sets each value's [`ValueOp::after`] and [`ValueOp::after_ws`]: the
/// literals of the `one_of` or `then` the program reads right after the
/// value (through jumps and whitespace), with their targets. A value whose
/// closer may be followed by anything else (a fork, a capture, another
/// value) gets none: its closer counts wherever it is met.
pub(crate) fn link_after(ops: &mut [Op]) {
    for pc in 0..ops.len() {
        let Op::Value(v) = &ops[pc] else {
            continue;
        };
        if !matches!(v.close, CloseOp::Lit(_) | CloseOp::KeyTag) {
            continue;
        }
        let (mut at, mut ws) = (pc + 1, false);
        let mut after = Vec::new();
        // (Bounded: a loop of jumps gives nothing.)
        for _ in 0..ops.len() {
            match ops.get(at) {
                Some(Op::Goto(to)) => at = *to,
                Some(Op::Ws) => {
                    ws = true;
                    at += 1;
                }
                Some(Op::OneOf(opts)) | Some(Op::Then(ThenOp { opts, seek: false })) => {
                    after = opts.clone();
                    break;
                }
                _ => break,
            }
        }
        if let Op::Value(v) = &mut ops[pc] {
            v.after_ws = ws && !after.is_empty();
            v.after = after;
        }
    }
}

/// Sets each value's [`ValueOp::markup`] from `lits`, the literals of the
/// whole format (its markers, its programs' literals) and the reasoning
/// markers: those that begin as the value's closer does and that the
/// value does not already seek. Only values that may end unclosed (with
/// `recover` or `at_end` literals) get any.
pub(crate) fn link_markup(ops: &mut [Op], lits: &[Lit]) {
    for op in ops.iter_mut() {
        let Op::Value(v) = op else {
            continue;
        };
        if v.recover.is_empty() && v.at_end.is_empty() {
            continue;
        }
        let first = match &v.close {
            CloseOp::Lit(c) => c.bytes.first().copied(),
            CloseOp::KeyTag => Some(b'<'),
            CloseOp::Space | CloseOp::Balanced => None,
        };
        let Some(first) = first else {
            continue;
        };
        let sought = |l: &Lit| {
            v.recover
                .iter()
                .chain(&v.at_end)
                .chain(&v.nest)
                .chain(&v.follow)
                .chain(&v.next_block)
                .chain(&v.markup)
                .any(|o| o.lit.bytes.eq_ignore_ascii_case(&l.bytes))
                || matches!(&v.close, CloseOp::Lit(c) if c.bytes.eq_ignore_ascii_case(&l.bytes))
                || v.guard
                    .as_ref()
                    .is_some_and(|(a, b)| a.bytes == l.bytes || b.bytes == l.bytes)
        };
        let mut markup = Vec::new();
        for l in lits {
            if l.bytes.len() >= 2
                && l.matches_at(0, first)
                && !sought(l)
                && !markup.iter().any(|o: &ThenOpt| o.lit.bytes == l.bytes)
            {
                markup.push(ThenOpt {
                    lit: l.clone(),
                    to: 0,
                    begins_call: false,
                });
            }
        }
        v.markup = markup;
    }
}

/// Every literal of `ops` (for [`link_markup`]): the literals read, the
/// literals of choices and seeks, the delimiters of captures, a value's
/// closer, recovery literals and guards.
pub(crate) fn literals_of(ops: &[Op], out: &mut Vec<Lit>) {
    let mut push = |l: &Lit| {
        if !out.contains(l) {
            out.push(l.clone());
        }
    };
    for op in ops {
        match op {
            Op::Lit(l) | Op::OptLit(l) | Op::LitOrEof(l) => push(l),
            Op::Then(t) => t.opts.iter().for_each(|o| push(&o.lit)),
            Op::OneOf(opts) => opts.iter().for_each(|o| push(&o.lit)),
            Op::Capture(c) => c.delims.iter().for_each(|(l, _)| push(l)),
            Op::Value(v) => {
                if let CloseOp::Lit(c) = &v.close {
                    push(c);
                }
                v.recover
                    .iter()
                    .chain(&v.at_end)
                    .chain(&v.nest)
                    .for_each(|o| push(&o.lit));
                if let Some((a, b)) = &v.guard {
                    push(a);
                    push(b);
                }
            }
            _ => {}
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
            Op::Dispatch | Op::DispatchBefore(_) => dispatched = true,
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
            // Before the dispatch: a literal that dispatches the call
            // before it opens the next call (`<function=` after
            // `</function>`); the walk goes on along the first other
            // choice, the call's own closing markup.
            Op::OneOf(opts) if !dispatched => {
                let before = |o: &ThenOpt| matches!(ops.get(o.to), Some(Op::DispatchBefore(_)));
                opts.iter()
                    .filter(|o| before(o))
                    .for_each(|o| push(out, &o.lit));
                match opts.iter().find(|o| !before(o)) {
                    Some(o) => {
                        pc = o.to;
                        continue;
                    }
                    None => return false,
                }
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
