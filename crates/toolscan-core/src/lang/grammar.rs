//! Compiling formats into a [`Grammar`]: openers with the same marker are
//! merged into one program that forks on the first byte of the body, markers
//! are validated, and the marker automata are built once.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use aho_corasick::{AhoCorasick, MatchKind};

use crate::error::Error;
use crate::lang::format::{ByteSet, Format, Lit, Opener, Trust};
use crate::lang::program::{self, first_set, CaptureOp, Op};
use crate::scan::marker::{MarkerSet, Pattern};

/// Reasoning block markers (used with reasoning separation on), every
/// family's: Qwen, DeepSeek R1, GLM, MiniMax, Kimi K2 (`<think>`), Mistral
/// (`[THINK]`), Seed-OSS, Cohere Command R7B / A, Gemma 4's thought
/// channel, Kimi K3. (Harmony's `analysis` channel is reasoning by its
/// format's own program.)
const THINK: [(&str, &str); 6] = [
    ("<think>", "</think>"),
    ("[THINK]", "[/THINK]"),
    ("<seed:think>", "</seed:think>"),
    ("<|START_THINKING|>", "<|END_THINKING|>"),
    ("<|channel>thought", "<channel|>"),
    ("<|open|>think<|sep|>", "<|close|>think<|sep|>"),
];

/// The reasoning markers every grammar reads with reasoning separation on,
/// as (opening, closing) pairs: `<think>`, `[THINK]`, Seed-OSS, Cohere,
/// Gemma 4's thought channel, Kimi K3. (Harmony's `analysis` channel is
/// reasoning by its format's program.)
///
/// ```
/// assert!(toolscan_core::reasoning_markers().contains(&("<think>", "</think>")));
/// ```
pub fn reasoning_markers() -> &'static [(&'static str, &'static str)] {
    &THINK
}

/// What a marker of a text-mode automaton means.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PatKind {
    Opener(usize),
    ThinkOpen,
    ThinkClose,
}

/// The automaton of one text mode.
#[derive(Clone, Debug)]
pub(crate) struct TextSet {
    pub set: MarkerSet,
    pub kinds: Vec<PatKind>,
}

/// An opener after merging.
#[derive(Clone, Debug)]
pub(crate) struct Compiled {
    pub trust: Trust,
    pub replay: bool,
    pub program: Vec<Op>,
    /// For a bare marker that starts a JSON value (`{`, `[`): the bytes
    /// that may follow it (see [`crate::read::json::second_bytes`]). Any other
    /// byte fails the block at once, silently, so the marker scan takes
    /// the marker for text (`MarkerSet::set_follow`). `None`: no such
    /// knowledge, open the block.
    pub follow: Option<[u64; 4]>,
}

/// A compiled set of formats, shared (`Arc`) by every parser that uses it.
///
/// Get one from [`Registry::grammar`](crate::Registry::grammar).
#[derive(Debug)]
pub struct Grammar {
    name: String,
    pub(crate) openers: Vec<Compiled>,
    /// The longest marker whose opener has a [`Compiled::follow`] set (0:
    /// none has).
    pub(crate) follow_len: usize,
    /// The marker sets of text, one for each [`Watch`] (its index).
    sets: [TextSet; 3],
    /// The reasoning closers of `sets[2]` alone: sought inside a call held
    /// in a reasoning block (the block may close inside a quoted call).
    pub(crate) closers: Option<MarkerSet>,
    /// The program that runs at the start of the stream, if a format has
    /// one (an index into `openers`, with no marker in `sets`).
    pub(crate) start: Option<usize>,
}

/// What text is watched for: which of a grammar's marker sets is live.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Watch {
    /// Openers only (reasoning is not tracked).
    Openers = 0,
    /// Openers and the markers that open reasoning (outside it).
    ThinkOpens = 1,
    /// Openers and the markers that close reasoning (inside it).
    ThinkCloses = 2,
}

impl Grammar {
    /// The marker set of text while `watch` is live.
    pub(crate) fn text_set(&self, watch: Watch) -> &TextSet {
        &self.sets[watch as usize]
    }

    /// Every marker set of text.
    pub(crate) fn text_sets(&self) -> impl Iterator<Item = &TextSet> {
        self.sets.iter()
    }

    /// Compiles the openers of `formats` (in precedence order) into one
    /// grammar named `name`: the openers grouped by marker and each group
    /// merged into one program, the markers cut where one holds another
    /// and checked, then the text automata built.
    pub fn new(name: &str, formats: &[&Format]) -> Result<Grammar, Error> {
        let invalid = |reason: String| invalid(name, reason);
        let Grouped {
            groups,
            owners,
            start,
        } = group_openers(name, formats)?;
        let mut openers = Vec::new();
        let mut patterns = Vec::new();
        for (marker, line_start, list) in groups {
            openers.push(merge(&list).map_err(invalid)?);
            patterns.push(Pattern {
                bytes: marker.bytes.clone(),
                case_insensitive: marker.case_insensitive,
                line_start,
            });
        }
        if patterns.is_empty() && start.is_none() {
            return Err(invalid("no opening marker".into()));
        }
        let start = start.map(|c| {
            openers.push(c);
            openers.len() - 1
        });
        // (The markers as written, for messages: splitting cuts some.)
        let written: Vec<Vec<u8>> = patterns.iter().map(|p| p.bytes.clone()).collect();
        split_outer_markers(&mut patterns, &mut openers);
        check_substrings(&patterns, &written, &owners).map_err(invalid)?;
        set_follow_bytes(&mut openers, &patterns);
        let sets = text_sets(name, &patterns, &openers)?;
        let closers = closers_of(&sets[2]).map_err(invalid)?;
        let follow_len = openers
            .iter()
            .zip(&patterns)
            .filter(|(o, _)| o.follow.is_some())
            .map(|(_, p)| p.bytes.len())
            .max()
            .unwrap_or(0);
        Ok(Grammar {
            name: name.to_string(),
            follow_len,
            openers,
            sets,
            closers,
            start,
        })
    }

    /// Checks what a grammar of `format` alone would refuse in one of its
    /// openers — its program, its marker — without building automata.
    pub(crate) fn check_alone(format: &Format) -> Result<(), Error> {
        for o in &format.openers {
            check_opener(o)
                .and_then(|_| match o.marker.bytes.len() {
                    0..=256 => Ok(()),
                    // (Cut short, a marker that long is shown with its
                    // length.)
                    _ => Err(format!(
                        "marker `{}` is longer than 256 bytes",
                        o.marker.shown()
                    )),
                })
                .map_err(|reason| Error::InvalidFormat {
                    format: format.name.clone(),
                    reason,
                })?;
        }
        Ok(())
    }

    /// The grammar's name: a format name, or `auto`.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Wraps it for sharing.
    pub fn shared(self) -> Arc<Grammar> {
        Arc::new(self)
    }
}

/// An opener and its compiled program, before openers sharing a marker are
/// merged.
type Merged = (Opener, Vec<Op>);

/// A grammar's error: its format (or `auto`) and why.
fn invalid(name: &str, reason: String) -> Error {
    Error::InvalidFormat {
        format: name.to_string(),
        reason,
    }
}

/// The openers of a grammar before merging: the ones with a marker grouped
/// by it (in precedence order), and the program at the start of the stream.
struct Grouped {
    /// Each marker, whether it counts at a line start only, and its
    /// openers (programs that differ).
    groups: Vec<(Lit, bool, Vec<Merged>)>,
    /// The format of each group's first opener (for messages).
    owners: Vec<String>,
    start: Option<Compiled>,
}

/// Compiles every opener's program and groups the openers by marker
/// (ASCII case folded, and line start): openers that share a marker are
/// merged into one program later.
fn group_openers(name: &str, formats: &[&Format]) -> Result<Grouped, Error> {
    let mut groups: Vec<(Lit, bool, Vec<Merged>)> = Vec::new();
    // Where each marker's group is (by its lowercase bytes and line-start
    // flag): one lookup per opener, not a walk of the groups.
    let mut group_of: HashMap<(Vec<u8>, bool), usize> = HashMap::new();
    let mut start: Option<Compiled> = None;
    let mut owners = Vec::new();
    for f in formats {
        let compiled = f
            .openers
            .iter()
            .map(|o| check_opener(o).map_err(|r| invalid(&f.name, r)))
            .collect::<Result<Vec<_>, _>>()?;
        let markup = format_markup(f, &compiled);
        for (o, mut ops) in f.openers.iter().zip(compiled) {
            program::link_markup(&mut ops, &markup);
            if o.stream_start {
                if start.is_some() {
                    return Err(invalid(
                        name,
                        "two programs run at the start of the stream".into(),
                    ));
                }
                start = Some(Compiled {
                    trust: o.trust,
                    replay: false,
                    program: ops,
                    follow: None,
                });
                continue;
            }
            let key = (o.marker.bytes.to_ascii_lowercase(), o.line_start);
            match group_of.get(&key).map(|&g| &mut groups[g]) {
                Some((m, _, list)) => {
                    m.case_insensitive |= o.marker.case_insensitive;
                    if m.bytes != o.marker.bytes && !m.case_insensitive {
                        return Err(invalid(
                            name,
                            format!(
                                "markers `{}` and `{}` differ only in case",
                                m.shown(),
                                o.marker.shown()
                            ),
                        ));
                    }
                    if !list
                        .iter()
                        .any(|(x, xops)| *xops == ops && x.replay == o.replay)
                    {
                        list.push((o.clone(), ops));
                    }
                }
                None => {
                    group_of.insert(key, groups.len());
                    groups.push((o.marker.clone(), o.line_start, vec![(o.clone(), ops)]));
                    owners.push(f.name.clone());
                }
            }
        }
    }
    Ok(Grouped {
        groups,
        owners,
        start,
    })
}

/// For each bare marker that starts a JSON value, the bytes that may
/// follow it ([`Compiled::follow`]).
fn set_follow_bytes(openers: &mut [Compiled], patterns: &[Pattern]) {
    for (o, p) in openers.iter_mut().zip(patterns) {
        // (Only where a failed block is silent: a definite one's
        // diagnostic must not depend on where the chunk ends.)
        let silent = o.trust != Trust::Definite;
        if let (true, true, false, Some(Op::Json(j))) =
            (silent, o.replay, p.case_insensitive, o.program.first())
        {
            o.follow = crate::read::json::second_bytes(&p.bytes, j.lenient);
        }
    }
}

/// The marker sets of text, one for each [`Watch`]: the openers alone,
/// with the reasoning openers, with the reasoning closers.
fn text_sets(
    name: &str,
    patterns: &[Pattern],
    openers: &[Compiled],
) -> Result<[TextSet; 3], Error> {
    let build = |extra: &[(&str, PatKind)]| -> Result<TextSet, Error> {
        let mut pats = patterns.to_vec();
        let mut kinds: Vec<PatKind> = (0..pats.len()).map(PatKind::Opener).collect();
        for &(m, kind) in extra {
            let p = Pattern {
                bytes: m.as_bytes().to_vec(),
                case_insensitive: false,
                line_start: false,
            };
            // A reasoning marker that clashes with an opener is left out.
            if !pats.iter().any(|q| clash(&p, q) || clash(q, &p)) {
                pats.push(p);
                kinds.push(kind);
            }
        }
        let mut set = MarkerSet::new(pats).map_err(|r| invalid(name, r))?;
        for (k, o) in openers.iter().enumerate().take(patterns.len()) {
            if let Some(f) = o.follow {
                set.set_follow(k, f);
            }
        }
        Ok(TextSet { set, kinds })
    };
    let opens: Vec<(&str, PatKind)> = THINK
        .iter()
        .map(|&(o, _)| (o, PatKind::ThinkOpen))
        .collect();
    let closes: Vec<(&str, PatKind)> = THINK
        .iter()
        .map(|&(_, c)| (c, PatKind::ThinkClose))
        .collect();
    Ok([build(&[])?, build(&opens)?, build(&closes)?])
}

/// The reasoning closers of the set that watches for them, alone (`None`
/// when it holds none).
fn closers_of(closes: &TextSet) -> Result<Option<MarkerSet>, String> {
    let closers: Vec<Pattern> = closes
        .kinds
        .iter()
        .enumerate()
        .filter(|(_, k)| **k == PatKind::ThinkClose)
        .map(|(i, _)| closes.set.pattern(i).clone())
        .collect();
    if closers.is_empty() {
        Ok(None)
    } else {
        MarkerSet::new(closers).map(Some)
    }
}

/// The markup of format `f`, whose openers compiled to `compiled`: its
/// markers, every literal of its programs, and the reasoning markers
/// (see [`program::link_markup`]).
fn format_markup(f: &Format, compiled: &[Vec<Op>]) -> Vec<Lit> {
    let mut lits: Vec<Lit> = Vec::new();
    for o in &f.openers {
        if !o.marker.bytes.is_empty() && !lits.contains(&o.marker) {
            lits.push(o.marker.clone());
        }
    }
    for ops in compiled {
        program::literals_of(ops, &mut lits);
    }
    for (open, close) in THINK {
        for m in [open, close] {
            let l = Lit::new(m);
            if !lits.contains(&l) {
                lits.push(l);
            }
        }
    }
    lits
}

/// Checks an opener's marker and compiles its program.
fn check_opener(o: &Opener) -> Result<Vec<Op>, String> {
    if o.marker.bytes.is_empty() != o.stream_start {
        return Err(if o.stream_start {
            "a program at the start of the stream has no marker".into()
        } else {
            "empty marker".into()
        });
    }
    let mut ops =
        program::compile(&o.program).map_err(|e| format!("marker `{}`: {e}", o.marker.shown()))?;
    program::check_targets(&mut ops)?;
    program::link_follow(&mut ops, &o.marker);
    program::link_after(&mut ops);
    Ok(ops)
}

/// Merges openers that share a marker into one program: optional
/// whitespace, then a fork on the first byte of each program's body.
fn merge(list: &[Merged]) -> Result<Compiled, String> {
    let (first, first_ops) = &list[0];
    if list.len() == 1 {
        return Ok(Compiled {
            trust: first.trust,
            replay: first.replay,
            program: first_ops.clone(),
            follow: None,
        });
    }
    if list.iter().any(|(o, _)| o.replay != first.replay) {
        return Err(format!(
            "marker `{}` both starts a body and does not",
            first.marker.shown()
        ));
    }
    let program = fork_bodies(list.iter().map(|(_, ops)| ops.clone()).collect());
    let trust = if list.iter().any(|(o, _)| o.trust == Trust::Definite) {
        Trust::Definite
    } else if list.iter().any(|(o, _)| o.trust == Trust::Tentative) {
        Trust::Tentative
    } else {
        Trust::Bare
    };
    Ok(Compiled {
        trust,
        replay: first.replay,
        program,
        follow: None,
    })
}

/// One program for several bodies that follow the same marker: optional
/// whitespace, then a fork on the body's first byte. Bodies that begin
/// with the same name capture (`<function=NAME>` followed by a JSON
/// object in one format, by parameters in another) share it: the capture
/// comes first, and the fork is on the byte after the name.
fn fork_bodies(bodies: Vec<Vec<Op>>) -> Vec<Op> {
    let mut groups: Vec<Vec<Vec<Op>>> = Vec::new();
    for body in bodies {
        match groups
            .iter_mut()
            .find(|g| shared_capture(&g[0]).is_some_and(|c| Some(c) == shared_capture(&body)))
        {
            Some(g) => g.push(body),
            None => groups.push(vec![body]),
        }
    }
    let mut bodies: Vec<Vec<Op>> = groups
        .into_iter()
        .map(|mut g| {
            if g.len() == 1 {
                return g.pop().unwrap_or_default();
            }
            // The capture, then the rest of each body (its jumps one step
            // back: none of them goes to the capture).
            let head = g[0][0].clone();
            let rests = g
                .into_iter()
                .map(|b| {
                    b.into_iter()
                        .skip(1)
                        .map(|mut op| {
                            op.targets_mut().into_iter().for_each(|t| *t -= 1);
                            op
                        })
                        .collect()
                })
                .collect();
            let mut merged = vec![head];
            merged.extend(fork_bodies(rests).into_iter().map(|op| op.shifted(1)));
            merged
        })
        .collect();
    if bodies.len() == 1 {
        return bodies.pop().unwrap_or_default();
    }
    let mut alts: Vec<(ByteSet, usize)> = Vec::new();
    let mut program = vec![Op::Ws, Op::Fork(Vec::new())];
    for ops in &bodies {
        let offset = program.len();
        alts.push((first_set(ops), offset));
        program.extend(ops.iter().map(|op| op.clone().shifted(offset)));
    }
    // Specific first bytes before "anything": a name-first body is the
    // fallback of a JSON-first one.
    alts.sort_by_key(|(set, _)| matches!(set, ByteSet::Any));
    program[1] = Op::Fork(alts);
    program
}

/// The capture a body begins with, if bodies that begin with it can share
/// it: every delimiter goes on with the next step, there are no keywords,
/// and no step of the body jumps back to it.
fn shared_capture(body: &[Op]) -> Option<&CaptureOp> {
    let Some(Op::Capture(c)) = body.first() else {
        return None;
    };
    let plain = c.keywords.is_empty() && c.delims.iter().all(|&(_, to)| to == 1);
    let no_return = body
        .iter()
        .skip(1)
        .all(|op| op.clone().targets_mut().into_iter().all(|t| *t != 0));
    (plain && no_return).then_some(c)
}

/// A marker inside another one, not at its end (`TOOL_CALL` in
/// `[TOOL_CALLS]`), would be reported first by the automaton, which reports
/// the first marker to end. The outer marker is cut where the inner one ends
/// (`[TOOL_CALL`) — markers that end at the same byte are told apart, the
/// longer first — and its program first reads the rest of it (`S]`); if
/// something else follows, its first bytes (`[`) are text after all and the
/// inner marker's program runs.
///
/// The pairs are found with one automaton over the markers (each marker
/// searched for every other that occurs in it), so a grammar of thousands
/// of markers compiles in time linear in their bytes and in the pairs, not
/// in the square of their number; they are then taken in the order
/// (outer, inner) and checked again against the markers as cut so far (a
/// cut marker is sought again in the markers after it).
fn split_outer_markers(patterns: &mut [Pattern], openers: &mut [Compiled]) {
    let mut todo: BTreeSet<(usize, usize)> = inside_pairs(patterns)
        .into_iter()
        .map(|(inner, outer, _)| (outer, inner))
        .collect();
    while let Some((q, p)) = todo.pop_first() {
        {
            let (inner, outer) = (&patterns[p], &patterns[q]);
            if p == q
                || inner.bytes.len() >= outer.bytes.len()
                || inner.case_insensitive
                || outer.case_insensitive
                || openers[q].replay
                || openers[p].replay
            {
                continue;
            }
            let Some(at) = outer
                .bytes
                .windows(inner.bytes.len())
                .position(|w| w == inner.bytes.as_slice())
            else {
                continue;
            };
            let cut = at + inner.bytes.len();
            if cut == outer.bytes.len() {
                continue; // a suffix: the automaton tells them apart
            }
            if at == 0 {
                // A prefix: cut there, the outer marker would be the inner
                // one; `check_substrings` says which holds which.
                continue;
            }
            let rest = outer.bytes[cut..].to_vec();
            let inner_program = if inner.line_start {
                // The inner marker would not be at a line start.
                vec![Op::Fork(Vec::new())]
            } else {
                openers[p].program.clone()
            };
            let outer_program = std::mem::take(&mut openers[q].program);
            let longer = 1;
            let mut program = vec![Op::Lit(Lit {
                bytes: rest.clone(),
                case_insensitive: false,
            })];
            program.extend(outer_program.into_iter().map(|op| op.shifted(longer + 1)));
            let fallback = program.len() + 1;
            program.push(Op::Unhold(at));
            program.extend(inner_program.into_iter().map(|op| op.shifted(fallback + 1)));
            let mut full = vec![Op::Fork(vec![
                (ByteSet::Bytes(vec![rest[0]]), longer),
                (ByteSet::Any, fallback),
            ])];
            full.extend(program);
            openers[q].program = full;
            patterns[q].bytes.truncate(cut);
            let cut_marker = &patterns[q].bytes;
            for (q2, outer) in patterns.iter().enumerate().skip(q + 1) {
                if outer
                    .bytes
                    .windows(cut_marker.len())
                    .any(|w| w == cut_marker.as_slice())
                {
                    todo.insert((q2, q));
                }
            }
        }
    }
}

/// No marker may occur inside another except as its suffix: the automaton
/// reports the first marker to end, so the longer one would never be seen.
/// (Of two case-sensitive markers that end at the same byte, it reports the
/// longer.)
///
/// `written` are the markers as the formats wrote them, which the message
/// names (a marker split above is cut short in `patterns`), with the
/// format each is of (`owners`).
fn check_substrings(
    patterns: &[Pattern],
    written: &[Vec<u8>],
    owners: &[String],
) -> Result<(), String> {
    let first = inside_pairs(patterns)
        .into_iter()
        .filter(|&(i, j, at)| i != j && clash_at(&patterns[i], &patterns[j], at))
        .map(|(i, j, _)| (i, j))
        .min();
    match first {
        None => Ok(()),
        Some((i, j)) => {
            let written = |k: usize| written.get(k).unwrap_or(&patterns[k].bytes);
            // (Two markers cut to the same bytes: the shorter as written is
            // the one inside the other.)
            let (i, j) = if written(i).len() > written(j).len() {
                (j, i)
            } else {
                (i, j)
            };
            // Their formats, when they are two (a format file's marker
            // that clashes with a built-in one under `auto`).
            let two = owners.get(i) != owners.get(j);
            let name = |k: usize| {
                let m = crate::lang::payload::shown(written(k));
                match owners.get(k).filter(|_| two) {
                    Some(f) => format!("`{m}` (format `{f}`)"),
                    None => format!("`{m}`"),
                }
            };
            Err(format!(
                "marker {} occurs inside marker {}: the shorter is found first, so the \
                 longer would never open a block (a marker may hold another only at its end)",
                name(i),
                name(j)
            ))
        }
    }
}

/// Every occurrence of a marker inside another (or the same one), ASCII
/// case ignored: (inner, outer, where it begins in the outer).
fn inside_pairs(patterns: &[Pattern]) -> Vec<(usize, usize, usize)> {
    let Ok(ac) = AhoCorasick::builder()
        .match_kind(MatchKind::Standard)
        .ascii_case_insensitive(true)
        .build(patterns.iter().map(|p| &p.bytes))
    else {
        // (Only past the automaton's size limits; compare pairwise.)
        return pairwise(patterns);
    };
    let mut pairs = Vec::new();
    for (j, outer) in patterns.iter().enumerate() {
        for m in ac.find_overlapping_iter(&outer.bytes) {
            pairs.push((m.pattern().as_usize(), j, m.start()));
        }
    }
    pairs
}

fn pairwise(patterns: &[Pattern]) -> Vec<(usize, usize, usize)> {
    let mut pairs = Vec::new();
    for (i, a) in patterns.iter().enumerate() {
        for (j, b) in patterns.iter().enumerate() {
            if a.bytes.is_empty() || a.bytes.len() > b.bytes.len() {
                continue;
            }
            for (k, w) in b.bytes.windows(a.bytes.len()).enumerate() {
                if w.eq_ignore_ascii_case(&a.bytes) {
                    pairs.push((i, j, k));
                }
            }
        }
    }
    pairs
}

/// Marker `a`, found (ASCII case ignored) at `at` in marker `b`, is one the
/// automaton would report instead of `b`: anywhere if either ignores case,
/// else as written and not as `b`'s suffix.
fn clash_at(a: &Pattern, b: &Pattern, at: usize) -> bool {
    let n = a.bytes.len();
    if n > b.bytes.len() {
        return false;
    }
    if a.case_insensitive || b.case_insensitive {
        return true;
    }
    let suffix = at + n == b.bytes.len() && n < b.bytes.len();
    b.bytes[at..at + n] == a.bytes[..] && !suffix
}

/// Whether marker `a` occurs inside marker `b` as [`check_substrings`]
/// refuses it.
fn clash(a: &Pattern, b: &Pattern) -> bool {
    let n = a.bytes.len();
    n <= b.bytes.len()
        && b.bytes
            .windows(n)
            .enumerate()
            .any(|(k, w)| w.eq_ignore_ascii_case(&a.bytes) && clash_at(a, b, k))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lang::format::{CallKeys, JsonStep, Shape, Step};
    use crate::lang::program::Op;

    /// A call object with the usual keys.
    fn call() -> Step {
        Step::Json(JsonStep::new(Shape::Call, CallKeys::default()))
    }

    #[test]
    fn substring_markers_are_rejected() {
        let f = Format::new("x", "", "")
            .opener(Opener::bare("[", vec![call(), Step::End]))
            .opener(Opener::definite("[TOOL_CALLS]", vec![Step::End]));
        let e = Grammar::new("x", &[&f]).unwrap_err();
        assert!(e.to_string().contains("occurs inside"), "{e}");
    }

    #[test]
    fn shared_markers_fork_on_the_body() {
        let a = Format::new("a", "", "").opener(Opener::definite(
            "<m>",
            vec![Step::name_until(">"), Step::End],
        ));
        let b = Format::new("b", "", "").opener(Opener::definite("<m>", vec![call(), Step::End]));
        let g = Grammar::new("ab", &[&a, &b]).unwrap();
        assert_eq!(g.openers.len(), 1);
        match &g.openers[0].program[1] {
            Op::Fork(alts) => {
                assert_eq!(alts[0].0, ByteSet::Bytes(vec![b'{']));
                assert_eq!(alts[1].0, ByteSet::Any);
            }
            s => panic!("{s:?}"),
        }
        // identical programs are not duplicated
        let g = Grammar::new("aa", &[&a, &a]).unwrap();
        assert_eq!(g.openers[0].program.len(), 2);
    }

    #[test]
    fn the_automaton_finds_the_pairs_a_pairwise_comparison_finds() {
        let mut pats: Vec<Pattern> = crate::Registry::builtin()
            .formats()
            .iter()
            .flat_map(|f| f.openers.iter())
            .filter(|o| !o.marker.bytes.is_empty())
            .map(|o| Pattern {
                bytes: o.marker.bytes.clone(),
                case_insensitive: o.marker.case_insensitive,
                line_start: o.line_start,
            })
            .collect();
        pats.extend(["<a>", "x<A>y", "aa", "aaa", "<a>"].map(|m| Pattern {
            bytes: m.as_bytes().to_vec(),
            case_insensitive: false,
            line_start: false,
        }));
        let sorted = |mut v: Vec<(usize, usize, usize)>| {
            v.sort_unstable();
            v
        };
        assert_eq!(sorted(inside_pairs(&pats)), sorted(pairwise(&pats)));
    }

    #[test]
    fn bodies_after_the_same_name_capture_share_it() {
        let json = Format::new("j", "", "").opener(Opener::definite(
            "<f=",
            vec![Step::name_until(">"), call(), Step::End],
        ));
        let tags = Format::new("t", "", "").opener(Opener::definite(
            "<f=",
            vec![
                Step::name_until(">"),
                Step::label("again"),
                Step::Lit(Lit::new("<p>")),
                Step::goto("again"),
            ],
        ));
        let g = Grammar::new("jt", &[&json, &tags]).unwrap();
        let p = &g.openers[0].program;
        // The capture, then a fork on the byte after the name; the loop of
        // the second body still jumps to its own step.
        assert!(matches!(&p[0], Op::Capture(c) if c.delims[0].1 == 1));
        match &p[2] {
            Op::Fork(alts) => {
                assert_eq!(alts[0], (ByteSet::Bytes(vec![b'{']), 3));
                assert_eq!(alts[1], (ByteSet::Bytes(vec![b'<']), 5));
            }
            s => panic!("{s:?}"),
        }
        assert_eq!(p[6], Op::Goto(5));
    }

    #[test]
    fn bad_jumps_are_rejected() {
        let f =
            Format::new("x", "", "").opener(Opener::definite("<x>", vec![Step::goto("nowhere")]));
        assert!(Grammar::new("x", &[&f]).is_err());
        // a capture's "next step" must exist
        let f =
            Format::new("x", "", "").opener(Opener::definite("<x>", vec![Step::name_until(">")]));
        assert!(Grammar::new("x", &[&f]).is_err());
    }
}
