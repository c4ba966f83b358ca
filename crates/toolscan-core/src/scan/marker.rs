//! Finding markers in a byte stream: one Aho-Corasick DFA per marker set,
//! stepped byte by byte inside a possible match and skipped over with a
//! first-byte search elsewhere.
//!
//! A stream keeps only the DFA state between chunks, so a marker split across
//! chunks is found without re-scanning. The state also says how many trailing
//! bytes may still become a marker (its depth): exactly those are held back.

use crate::scan::simd::Window;
use aho_corasick::automaton::Automaton;
use aho_corasick::dfa::DFA;
use aho_corasick::{Anchored, MatchKind, StartKind};

pub(crate) use crate::scan::pattern::{is_word, Pattern};
use crate::scan::rare::{may_begin, RareBytes, SHORT};
pub(crate) use aho_corasick::automaton::StateID;

/// [`MarkerSet::class`]: a word byte (see [`is_word`]).
const WORD: u8 = 1;
/// [`MarkerSet::class`]: the first byte of a marker.
const BEGINS: u8 = 2;

/// A compiled, immutable set of markers (shared by every stream).
#[derive(Clone, Debug)]
pub(crate) struct MarkerSet {
    /// By pattern: the bytes that may follow it, a 256-bit set, for a
    /// marker that opens a block which fails at once, silently, on any
    /// other byte (a bare `{`, see `grammar::Compiled::follow`); `None` for
    /// the others. Empty until [`MarkerSet::set_follow`].
    follow: Vec<Option<[u64; 4]>>,
    dfa: DFA,
    start: StateID,
    /// Depth of every state, indexed by `id >> depth_shift` (state ids are
    /// multiples of the automaton's stride); a state not listed has depth 0.
    depth: Vec<u8>,
    depth_shift: u32,
    patterns: Vec<Pattern>,
    rare: RareBytes,
    /// `class[b]`: [`BEGINS`] if some marker begins with it as written
    /// (either case for a case-insensitive marker), [`WORD`] iff
    /// `is_word(b)` (two bits: `first_begin` packs a byte's class in two).
    class: Box<[u8; 256]>,
    /// Invariant: bit `b` of `pairs[a]` is set iff some marker begins with
    /// the bytes `a`, `b` (either case for a case-insensitive marker), or
    /// is one byte long and is `a`.
    pairs: Box<[[u64; 4]; 256]>,
    /// `by_first[b]`: the indexes in `patterns` of the markers of two
    /// bytes or more that begin with `b` (either case for a
    /// case-insensitive marker), in order.
    by_first: Vec<Vec<usize>>,
    any_ci: bool,
}

/// [`MarkerSet::depth`] and [`MarkerSet::depth_shift`]: how many bytes
/// every state of `dfa` (started at `start`) holds back.
fn depth_table(dfa: &DFA, start: StateID, patterns: &[Pattern]) -> Result<(Vec<u8>, u32), String> {
    let mut depths: Vec<(usize, usize)> = Vec::new();
    for p in patterns {
        let mut sid = start;
        for (i, &b) in p.bytes.iter().enumerate() {
            sid = dfa.next_state(Anchored::No, sid, b);
            if i + 1 < p.bytes.len() {
                depths.push((sid.as_usize(), i + 1));
            }
        }
    }
    // A whole marker's state (reached when a match is not taken) holds
    // back its longest suffix that may begin another marker: one that
    // is a proper prefix of a marker (ASCII case ignored), looked up in
    // the set of them rather than compared with every marker.
    let prefixes: std::collections::HashSet<Vec<u8>> = patterns
        .iter()
        .flat_map(|q| (1..q.bytes.len()).map(|k| q.bytes[..k].to_ascii_lowercase()))
        .collect();
    for p in patterns {
        let mut sid = start;
        for &b in &p.bytes {
            sid = dfa.next_state(Anchored::No, sid, b);
        }
        let n = p.bytes.len();
        let longest = (1..n).find_map(|k| {
            prefixes
                .contains(&p.bytes[k..].to_ascii_lowercase())
                .then_some(n - k)
        });
        depths.push((sid.as_usize(), longest.unwrap_or(0)));
    }
    // Every state of the automaton is the end of some pattern prefix,
    // so walking the prefixes visits them all.
    let all_ids = depths.iter().fold(0usize, |a, &(id, _)| a | id);
    let depth_shift = if all_ids == 0 {
        0
    } else {
        all_ids.trailing_zeros()
    };
    let max_id = depths.iter().map(|&(id, _)| id).max().unwrap_or(0);
    let mut depth = vec![0u8; (max_id >> depth_shift) + 1];
    for (id, d) in depths {
        let slot = &mut depth[id >> depth_shift];
        *slot = (*slot).max(u8::try_from(d).map_err(|_| "marker longer than 256 bytes")?);
    }
    Ok((depth, depth_shift))
}

/// [`MarkerSet::class`] of `patterns`.
fn byte_classes(patterns: &[Pattern]) -> Box<[u8; 256]> {
    let mut class = Box::new([0u8; 256]);
    for (b, c) in (0..=255u8).zip(class.iter_mut()) {
        if is_word(b) {
            *c |= WORD;
        }
    }
    for p in patterns {
        let b = p.bytes[0];
        class[usize::from(b)] |= BEGINS;
        if p.case_insensitive {
            class[usize::from(b.to_ascii_lowercase())] |= BEGINS;
            class[usize::from(b.to_ascii_uppercase())] |= BEGINS;
        }
    }
    class
}

/// [`MarkerSet::pairs`] of `patterns`.
fn pair_table(patterns: &[Pattern]) -> Box<[[u64; 4]; 256]> {
    let mut pairs = Box::new([[0u64; 4]; 256]);
    for p in patterns {
        let variants = |b: u8| {
            if p.case_insensitive {
                [b.to_ascii_lowercase(), b.to_ascii_uppercase()]
            } else {
                [b, b]
            }
        };
        for a in variants(p.bytes[0]) {
            let row = &mut pairs[usize::from(a)];
            match p.bytes.get(1) {
                Some(&b) => {
                    for b in variants(b) {
                        row[usize::from(b >> 6)] |= 1 << (b & 63);
                    }
                }
                None => *row = [u64::MAX; 4],
            }
        }
    }
    pairs
}

/// [`MarkerSet::by_first`] of `patterns`.
fn by_first_byte(patterns: &[Pattern]) -> Vec<Vec<usize>> {
    let mut by_first = vec![Vec::new(); 256];
    for (i, p) in patterns
        .iter()
        .enumerate()
        .filter(|(_, p)| p.bytes.len() > 1)
    {
        let b = p.bytes[0];
        let mut firsts = [b, b.to_ascii_lowercase(), b.to_ascii_uppercase()];
        let n = if p.case_insensitive { 3 } else { 1 };
        firsts[..n].sort_unstable();
        let mut last = None;
        for &f in &firsts[..n] {
            if last != Some(f) {
                by_first[usize::from(f)].push(i);
                last = Some(f);
            }
        }
    }
    by_first
}

/// What scanning a slice found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Found {
    /// No marker ends in the slice; everything was consumed.
    Nothing,
    /// Marker `pattern` ends just before `end` (an index into the slice).
    Marker { pattern: usize, end: usize },
}

impl MarkerSet {
    /// Builds the DFA. Callers validate the patterns first (non-empty, no
    /// pattern a substring of another).
    pub(crate) fn new(patterns: Vec<Pattern>) -> Result<MarkerSet, String> {
        let any_ci = patterns.iter().any(|p| p.case_insensitive);
        let dfa = DFA::builder()
            .match_kind(MatchKind::Standard)
            .start_kind(StartKind::Unanchored)
            .ascii_case_insensitive(any_ci)
            .prefilter(false)
            .build(patterns.iter().map(|p| &p.bytes))
            .map_err(|e| e.to_string())?;
        let start = dfa.start_state(Anchored::No).map_err(|e| e.to_string())?;
        let (depth, depth_shift) = depth_table(&dfa, start, &patterns)?;
        let rare = RareBytes::new(&patterns, any_ci);
        Ok(MarkerSet {
            follow: Vec::new(),
            class: byte_classes(&patterns),
            pairs: pair_table(&patterns),
            by_first: by_first_byte(&patterns),
            dfa,
            start,
            depth,
            depth_shift,
            rare,
            patterns,
            any_ci,
        })
    }

    /// Whether `hay`, read from the start state, is plain text: no marker
    /// is in it, and no suffix of it may begin one. `after_word`: the byte
    /// before `hay` is a word byte (see [`Pattern::word_start`]).
    #[inline]
    pub(crate) fn is_plain(&self, hay: &[u8], after_word: bool) -> bool {
        if hay.len() < SHORT {
            // A marker in `hay`, or begun at its end, begins in it (the
            // automaton is at its start before it): at a byte that begins
            // a marker, followed by a byte that may be its second — and,
            // for a word byte, not inside a word.
            let first = self.first_begin(hay, after_word);
            return match first {
                None => true,
                // Its last byte begins a marker as written: held.
                Some(t) if t + 1 == hay.len() => false,
                Some(t) => self.plain_from(&hay[t..]),
            };
        }
        if self.rare.find(hay, 0).is_some() {
            return false;
        }
        // No marker ends in `hay` (none has its rare byte there); one may
        // begin among its last `max_back` bytes.
        let tail_from = hay.len().saturating_sub(self.rare.max_back);
        match (tail_from..hay.len())
            .find(|&t| self.class[usize::from(hay[t])] & BEGINS != 0 && self.may_begin(hay, t))
        {
            None => true,
            Some(t) => self.plain_from(&hay[t..]),
        }
    }

    /// Where a marker may begin in `hay` (shorter than [`SHORT`]): the
    /// first byte that begins a marker (a word byte only at a word start)
    /// and is followed by a byte that may be its second, or is the last.
    ///
    /// Worked out for every byte at once, without a branch per byte: under
    /// `auto` a word byte that begins a marker is common inside words (the
    /// `f` of `often`), and a branch on each was mispredicted often enough
    /// to cost a seventh of a 4-byte feed. Measured side by side on 4-byte
    /// chunks of prose (`&str`): `auto` 10.3 → 8.3 ns a chunk, `hermes`
    /// (whose branches were predicted well) 6.0 → 6.7 ns.
    #[inline]
    fn first_begin(&self, hay: &[u8], after_word: bool) -> Option<usize> {
        const _: () = assert!(2 * SHORT <= 64, "two bits per byte in a `u64`");
        const WORDS: u64 = 0x5555_5555_5555_5555;
        // Bits `2t` and `2t + 1`: the class of `hay[t]` ([`WORD`] and
        // [`BEGINS`]), so one shift and one `or` a byte.
        let mut classes = 0u64;
        for (t, &b) in hay.iter().enumerate() {
            classes |= u64::from(self.class[usize::from(b)]) << (2 * t);
        }
        let word = classes & WORDS;
        let begins = (classes >> 1) & WORDS;
        // A word byte after a word byte (or after the text before `hay`).
        let inside = word & (word << 2 | u64::from(after_word));
        // Bit `2t`: `hay[t]` begins a marker, at a word start if it is a
        // word byte.
        let mut hits = begins & !inside;
        while hits != 0 {
            let t = hits.trailing_zeros() as usize / 2;
            if self.may_begin(hay, t) {
                return Some(t);
            }
            hits &= hits - 1;
        }
        None
    }

    /// Whether `hay`, read by the automaton from its start state, holds no
    /// marker and ends back at the start state — or in a state only a
    /// marker of the wrong case could have led to (the automaton may ignore
    /// case for another marker's sake; a marker of the wrong case is never
    /// taken, so it need not be held).
    fn plain_from(&self, hay: &[u8]) -> bool {
        self.walk(hay).is_some_and(|(held, _)| held == 0)
    }

    /// Reads `hay` with the automaton from its start state: `None` if it
    /// meets a marker (accepted or not); else how many of its last bytes
    /// may begin one ([`held`](Self::held)) and the state it ends in.
    fn walk(&self, hay: &[u8]) -> Option<(usize, StateID)> {
        let mut sid = self.start;
        for &b in hay {
            sid = self.dfa.next_state(Anchored::No, sid, b);
            if self.dfa.is_special(sid) && self.dfa.is_match(sid) {
                return None;
            }
        }
        Some((self.held(sid, &[], hay), sid))
    }

    /// For a short `hay` read from the start state (as
    /// [`is_plain`](Self::is_plain)): if no marker is in it, how many of
    /// its last bytes may begin one — the rest is text — and the
    /// automaton's state after it. `None`: a marker may be in it, or it is
    /// not short; the ordinary scan decides.
    ///
    /// What the scan decides for `hay` cut where a marker may first begin
    /// ([`first_begin`](Self::first_begin)): the piece before is plain, the
    /// piece after is read from the start state.
    #[inline]
    pub(crate) fn plain_then_held(&self, hay: &[u8], after_word: bool) -> Option<(usize, StateID)> {
        if hay.len() >= SHORT {
            return None;
        }
        match self.first_begin(hay, after_word) {
            None => Some((0, self.start)),
            Some(t) => self.walk(&hay[t..]),
        }
    }

    /// How many of the last bytes fed may begin a marker, the automaton
    /// being at `sid` after them: `recent ++ hay` ends with them (`recent`:
    /// bytes fed before `hay`, as in [`MarkerSet::scan`]).
    ///
    /// The automaton's [`depth`](MarkerSet::depth), less the bytes only a
    /// marker of the wrong case may begin: when some marker ignores case
    /// the automaton does too, and its state after `t` stands for the `T`
    /// of `TOOL_CALL` as well; a marker of the wrong case is never taken,
    /// so such bytes are text at once. Every path that decides a hold-back
    /// goes through here, so the hold after the same bytes is the same
    /// whichever path the parser took (a search that reports a rare byte
    /// or one that skips it: see [`crate::scan::simd::ByteSet8::after`]).
    pub(crate) fn held(&self, sid: StateID, recent: &[u8], hay: &[u8]) -> usize {
        let d = self.depth(sid);
        // (Bytes the caller no longer has: held, as the automaton says.)
        if !self.any_ci || d == 0 || d > recent.len() + hay.len() {
            return d;
        }
        // The last `k` bytes of `recent ++ hay`.
        let suffix = |k: usize, i: usize| -> u8 {
            let at = recent.len() + hay.len() - k + i;
            match at.checked_sub(recent.len()) {
                Some(j) => hay[j],
                None => recent[at],
            }
        };
        // Without letters among them, case changes nothing. (Compared in
        // place: these are a few bytes. The longest suffix first: it is the
        // one the automaton's state stands for.)
        if !(0..d).any(|i| suffix(d, i).is_ascii_alphabetic()) {
            return d;
        }
        (1..=d)
            .rev()
            .find(|&k| {
                // Only a marker longer than `k` that begins with the
                // suffix's first byte may be held: those are listed.
                self.by_first[usize::from(suffix(k, 0))].iter().any(|&i| {
                    let Some(p) = self.patterns.get(i) else {
                        return false;
                    };
                    p.bytes.len() > k
                        && p.bytes[..k].iter().enumerate().all(|(i, a)| {
                            let b = suffix(k, i);
                            *a == b || (p.case_insensitive && a.eq_ignore_ascii_case(&b))
                        })
                })
            })
            .unwrap_or(0)
    }

    /// Whether a marker may begin at `hay[i]` as far as its first two
    /// bytes tell (one, at the end of `hay`).
    #[inline]
    fn may_begin(&self, hay: &[u8], i: usize) -> bool {
        may_begin(&self.pairs, hay, i)
    }

    /// Feeds `bytes` to the automaton from `sid` until it is back at its
    /// start: how many bytes that took. `None` if it never is, or meets a
    /// marker first (accepted or not: the caller goes the ordinary way).
    #[inline]
    pub(crate) fn back_to_start(&self, mut sid: StateID, bytes: &[u8]) -> Option<usize> {
        for (k, &b) in bytes.iter().enumerate() {
            sid = self.dfa.next_state(Anchored::No, sid, b);
            if self.dfa.is_special(sid) && self.dfa.is_match(sid) {
                return None;
            }
            if sid == self.start {
                return Some(k + 1);
            }
        }
        None
    }

    /// Whether some marker begins with a word byte.
    pub(crate) fn has_word_start(&self) -> bool {
        self.patterns.iter().any(Pattern::word_start)
    }

    /// Whether some marker counts only at a line start.
    pub(crate) fn has_line_start(&self) -> bool {
        self.patterns.iter().any(|p| p.line_start)
    }

    /// The length of the longest marker, in bytes.
    pub(crate) fn longest(&self) -> usize {
        self.patterns
            .iter()
            .map(|p| p.bytes.len())
            .max()
            .unwrap_or(0)
    }

    pub(crate) fn start(&self) -> StateID {
        self.start
    }

    /// Which bytes may follow pattern `pid` (see [`MarkerSet::follow`]).
    pub(crate) fn set_follow(&mut self, pid: usize, follow: [u64; 4]) {
        if self.follow.len() <= pid {
            self.follow.resize(pid + 1, None);
        }
        self.follow[pid] = Some(follow);
    }

    /// Pattern `pid` ends right before `next`, a byte that may not follow
    /// it: the marker is text there.
    #[inline]
    fn refused(&self, pid: usize, next: Option<&u8>) -> bool {
        match (self.follow.get(pid), next) {
            (Some(Some(f)), Some(&b)) => f[usize::from(b >> 6)] & (1 << (b & 63)) == 0,
            _ => false,
        }
    }

    pub(crate) fn pattern(&self, pid: usize) -> &Pattern {
        &self.patterns[pid]
    }

    /// How many of the bytes last fed may still be the start of a marker.
    #[inline]
    pub(crate) fn depth(&self, sid: StateID) -> usize {
        let i = sid.as_usize() >> self.depth_shift;
        self.depth.get(i).map_or(0, |&d| usize::from(d))
    }

    /// Scans `hay` from state `sid`, stopping after the first marker that
    /// is accepted.
    ///
    /// `recent` gives the bytes already fed before `hay` (at least the last
    /// `depth(sid)` of them), used to check the case of a case-sensitive
    /// marker when the DFA had to be built case-insensitive. A line-start
    /// marker, or one that begins with a word byte, is reported only if
    /// `accept(pattern, end)` says it is at the start of a line, or of a
    /// word (`end` indexes `hay`; the marker may begin in `recent`).
    ///
    /// With `follow`, a marker followed in `hay` by a byte its block
    /// refuses at once ([`MarkerSet::set_follow`]) is text: the scan goes
    /// on from the start state after it, as the failed block would have.
    pub(crate) fn scan(
        &self,
        sid: &mut StateID,
        hay: &[u8],
        recent: &[u8],
        follow: bool,
        accept: &mut dyn FnMut(usize, usize) -> bool,
    ) -> Found {
        let mut i = 0;
        let mut w = Window::default();
        'bytes: while i < hay.len() {
            if *sid == self.start {
                match self.rare.next(hay, i, &mut w) {
                    Some(p) => match self
                        .rare
                        .start_before(hay, i, p, &self.patterns, &self.pairs)
                    {
                        Some(s) => i = s,
                        None => {
                            // No marker covers this byte.
                            i = p + 1;
                            continue;
                        }
                    },
                    None => {
                        // No marker can end in `hay[i..]` (none has its
                        // rare byte there); the state at the end is that of
                        // the longest suffix that may begin one, which holds
                        // no rare byte either, so is at most `max_back` long.
                        let from = hay.len().saturating_sub(self.rare.max_back).max(i);
                        for &b in &hay[from..] {
                            *sid = self.dfa.next_state(Anchored::No, *sid, b);
                        }
                        return Found::Nothing;
                    }
                }
            }
            let next = self.dfa.next_state(Anchored::No, *sid, hay[i]);
            *sid = next;
            i += 1;
            if self.dfa.is_special(next) && self.dfa.is_match(next) {
                // Markers that end here, the longest first.
                for k in 0..self.dfa.match_len(next) {
                    let pid = self.dfa.match_pattern(next, k).as_usize();
                    let p = &self.patterns[pid];
                    let case_ok = !self.any_ci || self.case_matches(pid, &hay[..i], recent);
                    if case_ok && (!(p.line_start || p.word_start()) || accept(pid, i)) {
                        *sid = self.start;
                        if follow && self.refused(pid, hay.get(i)) {
                            continue 'bytes;
                        }
                        return Found::Marker {
                            pattern: pid,
                            end: i,
                        };
                    }
                }
                // None counts here (wrong case, not at a line start): the
                // automaton goes on from this state, so a longer marker in
                // progress is still found.
            }
        }
        Found::Nothing
    }

    fn case_matches(&self, pid: usize, upto: &[u8], recent: &[u8]) -> bool {
        let p = &self.patterns[pid];
        p.case_insensitive || ends_with(recent, upto, &p.bytes)
    }
}

/// Whether `recent ++ upto` ends with `pat` (compared in place).
fn ends_with(recent: &[u8], upto: &[u8], pat: &[u8]) -> bool {
    let n = pat.len();
    if upto.len() >= n {
        return &upto[upto.len() - n..] == pat;
    }
    let (head, tail) = pat.split_at(n - upto.len());
    tail == upto && recent.ends_with(head)
}

/// Whether the bytes end on a blank line start: `Some(true)` if only
/// spaces, tabs, carriage returns and byte-order marks follow their last
/// newline, `Some(false)` if something else does, `None` if they are all
/// blank (what came before them decides).
pub(crate) fn line_tail(bytes: &[u8]) -> Option<bool> {
    let mut j = bytes.len();
    while j > 0 {
        match bytes[j - 1] {
            b' ' | b'\t' | b'\r' => j -= 1,
            b'\n' => return Some(true),
            0xBF if j >= 3 && bytes[j - 3..j] == [0xEF, 0xBB, 0xBF] => j -= 3,
            _ => return Some(false),
        }
    }
    None
}

/// [`line_tail`] of `first ++ second`, without joining them.
pub(crate) fn line_tail2(first: &[u8], second: &[u8]) -> Option<bool> {
    let at = |j: usize| {
        if j < first.len() {
            first[j]
        } else {
            second[j - first.len()]
        }
    };
    let mut j = first.len() + second.len();
    while j > 0 {
        match at(j - 1) {
            b' ' | b'\t' | b'\r' => j -= 1,
            b'\n' => return Some(true),
            0xBF if j >= 3 && at(j - 2) == 0xBB && at(j - 3) == 0xEF => j -= 3,
            _ => return Some(false),
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(pats: &[(&str, bool)]) -> MarkerSet {
        MarkerSet::new(
            pats.iter()
                .map(|&(p, ci)| Pattern {
                    bytes: p.as_bytes().to_vec(),
                    case_insensitive: ci,
                    line_start: false,
                })
                .collect(),
        )
        .unwrap()
    }

    /// Feeds `input` split at every position and checks that the marker is
    /// found at the same place and that the hold-back is what remains
    /// undecided.
    #[test]
    fn finds_markers_across_every_split() {
        let m = set(&[("<tool_call>", false), ("<｜tool▁sep｜>", false)]);
        let input = "ab <tool_ca <tool_call> x <｜tool▁sep｜>".as_bytes();
        let whole: Vec<(usize, usize)> = {
            let mut sid = m.start();
            let mut out = vec![];
            let mut i = 0;
            while let Found::Marker { pattern, end } =
                m.scan(&mut sid, &input[i..], &[], false, &mut |_, _| true)
            {
                out.push((pattern, i + end));
                i += end;
            }
            out
        };
        assert_eq!(whole, vec![(0, 23), (1, 44)]);
        for cut in 0..input.len() {
            let mut sid = m.start();
            let mut out = vec![];
            let mut base = 0;
            for part in [&input[..cut], &input[cut..]] {
                let mut i = 0;
                while let Found::Marker { pattern, end } = m.scan(
                    &mut sid,
                    &part[i..],
                    &input[..base + i],
                    false,
                    &mut |_, _| true,
                ) {
                    out.push((pattern, base + i + end));
                    i += end;
                }
                base += part.len();
                if base == cut {
                    // everything after the hold-back is decided text
                    let d = m.depth(sid);
                    assert!(d <= cut);
                    let held = &input[cut - d..cut];
                    assert!(
                        d == 0 || m.patterns.iter().any(|p| p.bytes.starts_with(held)),
                        "held {held:?} at {cut}"
                    );
                }
            }
            assert_eq!(out, whole, "cut at {cut}");
        }
    }

    #[test]
    fn depth_is_the_possible_marker_prefix() {
        let m = set(&[("<tool_call>", false)]);
        let mut sid = m.start();
        m.scan(&mut sid, b"x <to", b"", false, &mut |_, _| true);
        assert_eq!(m.depth(sid), 3);
        m.scan(&mut sid, b"x", b"x <to", false, &mut |_, _| true);
        assert_eq!(m.depth(sid), 0);
    }

    #[test]
    fn case_insensitive_and_sensitive_in_one_set() {
        let m = set(&[("[RUN_MODULE]", true), ("<tool_call>", false)]);
        let mut sid = m.start();
        assert_eq!(
            m.scan(&mut sid, b"a [run_module]", b"", false, &mut |_, _| true),
            Found::Marker {
                pattern: 0,
                end: 14
            }
        );
        let mut sid = m.start();
        assert_eq!(
            m.scan(
                &mut sid,
                b"<TOOL_CALL> <tool_call>",
                b"",
                false,
                &mut |_, _| true
            ),
            Found::Marker {
                pattern: 1,
                end: 23
            }
        );
    }

    /// Bytes that only a marker of the wrong case may begin are not held
    /// (the automaton ignores case for another marker's sake), whichever
    /// way the parser reads them: the fast check and the scan agree. They
    /// did not (fuzz finding 9): the scan held the `t` of `Let` for
    /// `TOOL_CALL`'s sake, the fast check released it, and which one ran
    /// depended on whether the vectorised search skipped the `L` — on the
    /// text's address in memory.
    #[test]
    fn a_wrong_case_prefix_is_not_held_on_any_path() {
        let m = set(&[
            ("TOOL_CALL", false),
            ("[run_module]", true),
            ("<tool_call>", false),
            ("<|tool|>", false),
        ]);
        let hold = |recent: &[u8], hay: &[u8]| {
            let mut sid = m.start();
            // (The bytes before `hay` are fed first, as the parser had.)
            m.scan(&mut sid, recent, b"", false, &mut |_, _| true);
            assert_eq!(
                m.scan(&mut sid, hay, recent, false, &mut |_, _| true),
                Found::Nothing
            );
            m.held(sid, recent, hay)
        };
        let long = b"agggggggggggggggggggggggggggggggggggggggll\nLet";
        assert_eq!(hold(b"", long), 0);
        assert_eq!(hold(b"", b"Let"), 0);
        assert_eq!(hold(b"", b"a TOO"), 3);
        assert_eq!(hold(b"", b"a too"), 0);
        assert_eq!(hold(b"", b"a [RUN_mod"), 8);
        assert_eq!(hold(b"", b"a <|t"), 3);
        assert_eq!(hold(b"a <", b"|t"), 3);
        assert_eq!(hold(b"a T", b"O"), 2);
        assert_eq!(hold(b"a t", b"o"), 0);
        // Wherever the fast check calls text plain, the scan holds nothing.
        let alphabet = b"tToOlL_C<|[ru\n x";
        let mut seed = 11u64;
        for _ in 0..20_000 {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
            let len = SHORT + (seed >> 33) as usize % 40;
            let hay: Vec<u8> = (0..len)
                .map(|k| {
                    let r = seed.rotate_left(k as u32 * 5) ^ (k as u64 * 0x9E37_79B9);
                    alphabet[(r >> 7) as usize % alphabet.len()]
                })
                .collect();
            if m.is_plain(&hay, false) {
                assert_eq!(hold(b"", &hay), 0, "{:?}", String::from_utf8_lossy(&hay));
            }
        }
    }

    #[test]
    fn depth_of_every_prefix() {
        let m = set(&[
            ("<tool_call>", false),
            ("[TOOL_CALLS]", false),
            ("<tools>", false),
        ]);
        for p in ["<tool_call>", "[TOOL_CALLS]", "<tools>"] {
            let mut sid = m.start();
            for (i, &b) in p.as_bytes()[..p.len() - 1].iter().enumerate() {
                m.scan(&mut sid, &[b], b"", false, &mut |_, _| true);
                assert_eq!(m.depth(sid), i + 1, "{p} at {i}");
            }
        }
    }

    /// The markers the scan finds, and whether a short piece is plain,
    /// against the automaton stepped over every byte: on random text made
    /// of pieces of every marker of `auto` (prefixes, whole markers, the
    /// bytes around their rare bytes) and prose, split at random.
    #[test]
    #[cfg_attr(miri, ignore = "thousands of random splits: hours under Miri")]
    fn skipping_finds_what_stepping_every_byte_finds() {
        let g = crate::Registry::builtin().grammar("auto").unwrap();
        let mut seed = 0x5eed_u64;
        let mut next = |n: usize| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) as usize % n.max(1)
        };
        for ts in g.text_sets() {
            let m = &ts.set;
            let pats: Vec<&[u8]> = m.patterns.iter().map(|p| p.bytes.as_slice()).collect();
            let reference = |input: &[u8]| -> Vec<(usize, usize)> {
                let mut out = vec![];
                let mut sid = m.start();
                for (i, &b) in input.iter().enumerate() {
                    sid = m.dfa.next_state(Anchored::No, sid, b);
                    if m.dfa.is_special(sid) && m.dfa.is_match(sid) {
                        let pid = (0..m.dfa.match_len(sid))
                            .map(|k| m.dfa.match_pattern(sid, k).as_usize())
                            .find(|&pid| !m.any_ci || m.case_matches(pid, &input[..=i], &[]));
                        if let Some(pid) = pid {
                            out.push((pid, i + 1));
                            sid = m.start();
                        }
                    }
                }
                out
            };
            for _ in 0..300 {
                let mut input = Vec::new();
                for _ in 0..1 + next(12) {
                    let p = pats[next(pats.len())];
                    match next(5) {
                        0 => input.extend_from_slice(p),
                        1 => input.extend_from_slice(&p[..next(p.len())]),
                        2 => input.extend_from_slice(&p[next(p.len())..]),
                        3 => {
                            input.extend_from_slice(b"of functions call Action: a < b [1] x >> y ")
                        }
                        _ => input.push(b" <[>`|fLTA:"[next(11)]),
                    }
                }
                let want = reference(&input);
                let cut = next(input.len() + 1);
                let mut sid = m.start();
                let mut got = vec![];
                let mut base = 0;
                for part in [&input[..cut], &input[cut..]] {
                    let mut i = 0;
                    while let Found::Marker { pattern, end } = m.scan(
                        &mut sid,
                        &part[i..],
                        &input[..base + i],
                        false,
                        &mut |_, _| true,
                    ) {
                        got.push((pattern, base + i + end));
                        i += end;
                    }
                    base += part.len();
                }
                assert_eq!(
                    got,
                    want,
                    "{:?} cut at {cut}",
                    String::from_utf8_lossy(&input)
                );
                // A piece found plain holds no marker and leaves nothing held,
                // after a word byte or not.
                let a = next(input.len() + 1);
                let piece = &input[a..(a + next(SHORT + 8)).min(input.len())];
                for after_word in [false, true] {
                    if !m.is_plain(piece, after_word) {
                        continue;
                    }
                    let mut sid = m.start();
                    // (A marker inside a word is none.)
                    let mut at_word_start = |pid: usize, end: usize| {
                        let start = end - m.patterns[pid].bytes.len();
                        !m.patterns[pid].word_start()
                            || if start == 0 {
                                !after_word
                            } else {
                                !is_word(piece[start - 1])
                            }
                    };
                    let found = m.scan(&mut sid, piece, &[], false, &mut at_word_start);
                    assert_eq!(
                        found,
                        Found::Nothing,
                        "{:?}",
                        String::from_utf8_lossy(piece)
                    );
                    assert!(
                        sid == m.start() || m.any_ci,
                        "{:?} is plain but leaves a marker prefix",
                        String::from_utf8_lossy(piece)
                    );
                }
            }
        }
    }
}
