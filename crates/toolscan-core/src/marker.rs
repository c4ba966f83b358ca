//! Finding markers in a byte stream: one Aho-Corasick DFA per marker set,
//! stepped byte by byte inside a possible match and skipped over with a
//! first-byte search elsewhere.
//!
//! A stream keeps only the DFA state between chunks, so a marker split across
//! chunks is found without re-scanning. The state also says how many trailing
//! bytes may still become a marker (its depth): exactly those are held back.

use std::collections::HashMap;

use aho_corasick::automaton::Automaton;
use aho_corasick::dfa::DFA;
use aho_corasick::{Anchored, MatchKind, StartKind};

pub(crate) use aho_corasick::automaton::StateID;

/// A marker as written in a format definition.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Pattern {
    pub bytes: Vec<u8>,
    pub case_insensitive: bool,
    /// Leading bytes that anchor the marker but are not part of it (the
    /// `\n` of a line-start marker).
    pub lead: usize,
}

/// Where to look for the next byte that may start a marker.
#[derive(Clone, Debug)]
enum FirstBytes {
    One(u8),
    Two(u8, u8),
    Three(u8, u8, u8),
    Table(Box<[bool; 256]>),
}

impl FirstBytes {
    fn new(bytes: &[u8]) -> FirstBytes {
        match *bytes {
            [a] => FirstBytes::One(a),
            [a, b] => FirstBytes::Two(a, b),
            [a, b, c] => FirstBytes::Three(a, b, c),
            _ => {
                let mut t = Box::new([false; 256]);
                for &b in bytes {
                    t[usize::from(b)] = true;
                }
                FirstBytes::Table(t)
            }
        }
    }

    #[inline]
    fn find(&self, hay: &[u8]) -> Option<usize> {
        match self {
            FirstBytes::One(a) => memchr::memchr(*a, hay),
            FirstBytes::Two(a, b) => memchr::memchr2(*a, *b, hay),
            FirstBytes::Three(a, b, c) => memchr::memchr3(*a, *b, *c, hay),
            FirstBytes::Table(t) => hay.iter().position(|&b| t[usize::from(b)]),
        }
    }
}

/// A compiled, immutable set of markers (shared by every stream).
#[derive(Clone, Debug)]
pub(crate) struct MarkerSet {
    dfa: DFA,
    start: StateID,
    /// State after a virtual `\n`: where a stream starts, so that line-start
    /// markers also match at the very beginning.
    line_start: StateID,
    depth: HashMap<StateID, usize>,
    patterns: Vec<Pattern>,
    first: FirstBytes,
    any_ci: bool,
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
            .build(patterns.iter().map(|p| &p.bytes))
            .map_err(|e| e.to_string())?;
        let start = dfa.start_state(Anchored::No).map_err(|e| e.to_string())?;
        let mut depth = HashMap::new();
        depth.insert(start, 0);
        let mut first = Vec::new();
        for p in &patterns {
            let mut sid = start;
            for (i, &b) in p.bytes.iter().enumerate() {
                sid = dfa.next_state(Anchored::No, sid, b);
                if i + 1 < p.bytes.len() {
                    let d = depth.entry(sid).or_insert(0);
                    *d = (*d).max(i + 1);
                }
            }
            let b = p.bytes[0];
            for b in [b, b.to_ascii_lowercase(), b.to_ascii_uppercase()] {
                if (any_ci || b == p.bytes[0]) && !first.contains(&b) {
                    first.push(b);
                }
            }
        }
        let line_start = dfa.next_state(Anchored::No, start, b'\n');
        Ok(MarkerSet {
            dfa,
            start,
            line_start,
            depth,
            patterns,
            first: FirstBytes::new(&first),
            any_ci,
        })
    }

    pub(crate) fn start(&self) -> StateID {
        self.start
    }

    pub(crate) fn line_start(&self) -> StateID {
        self.line_start
    }

    pub(crate) fn pattern(&self, pid: usize) -> &Pattern {
        &self.patterns[pid]
    }

    /// How many of the bytes last fed may still be the start of a marker.
    pub(crate) fn depth(&self, sid: StateID) -> usize {
        self.depth.get(&sid).copied().unwrap_or(0)
    }

    /// Scans `hay` from state `sid`, stopping after the first marker.
    ///
    /// `recent` gives the bytes already fed before `hay` (at least the last
    /// `depth(sid)` of them), used only to check the case of a
    /// case-sensitive marker when the DFA had to be built case-insensitive.
    pub(crate) fn scan(&self, sid: &mut StateID, hay: &[u8], recent: &[u8]) -> Found {
        let mut i = 0;
        while i < hay.len() {
            if *sid == self.start {
                match self.first.find(&hay[i..]) {
                    Some(k) => i += k,
                    None => return Found::Nothing,
                }
            }
            let next = self.dfa.next_state(Anchored::No, *sid, hay[i]);
            *sid = next;
            i += 1;
            if self.dfa.is_special(next) && self.dfa.is_match(next) {
                let pid = self.dfa.match_pattern(next, 0).as_usize();
                *sid = self.start;
                if !self.any_ci || self.case_matches(pid, &hay[..i], recent) {
                    return Found::Marker {
                        pattern: pid,
                        end: i,
                    };
                }
                // Wrong case for a case-sensitive marker: resume as a naive
                // matcher would, one byte after where this match began.
                let len = self.patterns[pid].bytes.len();
                let tail = tail_bytes(&hay[..i], recent, len);
                for &b in &tail[1..] {
                    *sid = self.dfa.next_state(Anchored::No, *sid, b);
                }
                if self.dfa.is_match(*sid) {
                    // A second marker ends at the same byte: accept it if its
                    // case is right (it is shorter, so it lies in `tail`).
                    let pid2 = self.dfa.match_pattern(*sid, 0).as_usize();
                    *sid = self.start;
                    if self.case_matches(pid2, &hay[..i], recent) {
                        return Found::Marker {
                            pattern: pid2,
                            end: i,
                        };
                    }
                }
            }
        }
        Found::Nothing
    }

    fn case_matches(&self, pid: usize, upto: &[u8], recent: &[u8]) -> bool {
        let p = &self.patterns[pid];
        if p.case_insensitive {
            return true;
        }
        // The lead bytes (a line-start `\n`, possibly virtual) have no case.
        let body = &p.bytes[p.lead..];
        tail_bytes(upto, recent, body.len()) == body
    }
}

/// The last `len` bytes of `recent ++ upto`.
fn tail_bytes(upto: &[u8], recent: &[u8], len: usize) -> Vec<u8> {
    if upto.len() >= len {
        return upto[upto.len() - len..].to_vec();
    }
    let from_recent = (len - upto.len()).min(recent.len());
    let mut v = recent[recent.len() - from_recent..].to_vec();
    v.extend_from_slice(upto);
    v
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
                    lead: 0,
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
            while let Found::Marker { pattern, end } = m.scan(&mut sid, &input[i..], &[]) {
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
                while let Found::Marker { pattern, end } =
                    m.scan(&mut sid, &part[i..], &input[..base + i])
                {
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
        m.scan(&mut sid, b"x <to", b"");
        assert_eq!(m.depth(sid), 3);
        m.scan(&mut sid, b"x", b"x <to");
        assert_eq!(m.depth(sid), 0);
    }

    #[test]
    fn case_insensitive_and_sensitive_in_one_set() {
        let m = set(&[("[RUN_MODULE]", true), ("<tool_call>", false)]);
        let mut sid = m.start();
        assert_eq!(
            m.scan(&mut sid, b"a [run_module]", b""),
            Found::Marker {
                pattern: 0,
                end: 14
            }
        );
        let mut sid = m.start();
        assert_eq!(
            m.scan(&mut sid, b"<TOOL_CALL> <tool_call>", b""),
            Found::Marker {
                pattern: 1,
                end: 23
            }
        );
    }

    #[test]
    fn line_start_state() {
        let m = set(&[("\nTOOL:", false)]);
        let mut sid = m.line_start();
        assert_eq!(
            m.scan(&mut sid, b"TOOL:", b""),
            Found::Marker { pattern: 0, end: 5 }
        );
        let mut sid = m.start();
        assert_eq!(m.scan(&mut sid, b"TOOL: x", b""), Found::Nothing);
    }
}
