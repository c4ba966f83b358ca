//! The prefilter of a marker search: each marker's rarest byte, and the
//! vectorised search that jumps from one to the next ([`RareBytes`]).

use crate::scan::pattern::Pattern;
use crate::scan::simd::Window;

/// Where to look for the next byte that may be in a marker.
///
/// Every marker has one *rare* byte (markup punctuation rather than letters
/// or spaces), at some offset; a marker cannot end before its rare byte
/// shows, so the scanner jumps from rare byte to rare byte and steps the
/// automaton only from `offset` bytes before each.
#[derive(Clone, Debug)]
pub(crate) struct RareBytes {
    /// Invariant: `back[b]` is `Some(k)` iff `b` is the rare byte of some
    /// marker, `k` the largest offset at which it is one (both cases for a
    /// case-insensitive marker).
    back: Box<[Option<u8>; 256]>,
    /// The largest offset of a rare byte in its marker: a marker prefix
    /// without its rare byte is at most this long.
    pub(crate) max_back: usize,
    /// Invariant: `begins_at[b]` holds `true` iff some marker holds byte
    /// `b` at its offset 0 (as written; either case if case-insensitive).
    begins_at: Box<[bool; 256]>,
    /// Invariant: `within[b]` lists `(j, pattern)` for every `j > 0` at
    /// which `pattern` holds byte `b` at or before its own rare byte: the
    /// markers that may cover a rare byte `b` while beginning before it.
    within: Vec<Vec<(usize, usize)>>,
    search: Search,
}

/// The vectorised search over the rare bytes.
#[derive(Clone, Debug)]
enum Search {
    One(u8),
    Two(u8, u8),
    Three(u8, u8, u8),
    /// Four to eight (what `auto` needs): in one pass (`simd::find`).
    Many(crate::scan::simd::ByteSet8),
    /// More than eight: the table, byte by byte.
    Table,
}

/// How many markers hold each byte (in upper case if `any_ci`): of
/// equally rare bytes, one that other markers hold too keeps the set (and
/// the searches) small.
fn shared_counts(patterns: &[Pattern], any_ci: bool) -> [usize; 256] {
    let mut shared = [0usize; 256];
    for p in patterns {
        let mut seen = [false; 256];
        for &b in &p.bytes {
            let b = if any_ci { b.to_ascii_uppercase() } else { b };
            if !std::mem::replace(&mut seen[usize::from(b)], true) {
                shared[usize::from(b)] += 1;
            }
        }
    }
    shared
}

impl Search {
    /// The search for the rare `bytes` (different from each other, rarest
    /// first); `before[b]`: the bytes the markers hold right before `b`,
    /// `None` if one of them begins with it.
    fn new(bytes: &[u8], before: &[Option<Vec<u8>>]) -> Search {
        match *bytes {
            [a] => Search::One(a),
            [a, b] => Search::Two(a, b),
            [a, b, c] => Search::Three(a, b, c),
            // Where the vectorised search can tell, a rare byte counts
            // only after the byte its markers hold before it (the `L` of
            // `TOOL` after an `O`): capitals and other rare bytes in
            // prose are mostly not.
            _ => crate::scan::simd::ByteSet8::new(bytes).map_or(Search::Table, |set| {
                Search::Many(
                    bytes
                        .iter()
                        .fold(set, |set, &b| match before.get(usize::from(b)) {
                            Some(Some(list)) => set.after(b, list),
                            _ => set,
                        }),
                )
            }),
        }
    }
}

/// Haystacks shorter than this are searched with the table (a call into a
/// vectorised search costs more than it saves).
pub(crate) const SHORT: usize = 24;

impl RareBytes {
    pub(crate) fn new(patterns: &[Pattern], any_ci: bool) -> RareBytes {
        let mut back: Box<[Option<u8>; 256]> = Box::new([None; 256]);
        let mut bytes: Vec<u8> = Vec::new();
        let shared = shared_counts(patterns, any_ci);
        let mut begins_at = Box::new([false; 256]);
        let mut within: Vec<Vec<(usize, usize)>> = vec![Vec::new(); 256];
        // The bytes that come right before each rare byte in the markers
        // it is the rare byte of; `None` once one marker begins with it.
        let mut before: Vec<Option<Vec<u8>>> = vec![Some(Vec::new()); 256];
        for (pid, p) in patterns.iter().enumerate() {
            // The rarest byte; the most shared, then the earliest, of
            // equally rare ones.
            let (k, &b) = p
                .bytes
                .iter()
                .enumerate()
                .max_by_key(|&(k, &b)| {
                    let key = if any_ci { b.to_ascii_uppercase() } else { b };
                    let r = rarity(b, p.bytes.get(k + 1).copied());
                    (r, shared[usize::from(key)], std::cmp::Reverse(k))
                })
                .unwrap_or((0, &0));
            for (j, &c) in p.bytes.iter().enumerate().take(k + 1) {
                let cases = if p.case_insensitive {
                    [c.to_ascii_lowercase(), c.to_ascii_uppercase()]
                } else {
                    [c, c]
                };
                for (n, c) in cases.into_iter().enumerate() {
                    if n == 1 && c == cases[0] {
                        break;
                    }
                    if j == 0 {
                        begins_at[usize::from(c)] = true;
                    } else {
                        within[usize::from(c)].push((j, pid));
                    }
                }
            }
            let k = u8::try_from(k).unwrap_or(u8::MAX);
            // A case-sensitive marker holds its rare byte as written, even
            // when the automaton ignores case for the sake of another one.
            let cases = if p.case_insensitive {
                [b.to_ascii_lowercase(), b.to_ascii_uppercase()]
            } else {
                [b, b]
            };
            let prev = match k {
                0 => None,
                _ => p.bytes.get(usize::from(k) - 1).copied(),
            };
            for c in cases {
                match (&mut before[usize::from(c)], prev) {
                    (Some(list), Some(a)) => {
                        if p.case_insensitive {
                            list.extend([a.to_ascii_lowercase(), a.to_ascii_uppercase()]);
                        } else {
                            list.push(a);
                        }
                    }
                    (slot, _) => *slot = None,
                }
                let slot = &mut back[usize::from(c)];
                *slot = Some(slot.map_or(k, |x| x.max(k)));
                if !bytes.contains(&c) {
                    bytes.push(c);
                }
            }
        }
        bytes.sort_by_key(|&b| std::cmp::Reverse(rarity(b, None)));
        let search = Search::new(&bytes, &before);
        let max_back = back
            .iter()
            .flatten()
            .map(|&k| usize::from(k))
            .max()
            .unwrap_or(0);
        RareBytes {
            back,
            max_back,
            begins_at,
            within,
            search,
        }
    }

    /// Where a marker that covers the rare byte at `hay[p]` may begin, the
    /// automaton being at its start state at `i` (so no marker begins
    /// before `i` and covers it): the earliest `s` in `i..=p` such that
    /// some marker holds `hay[s..=p]` as its first bytes, up to its own
    /// rare byte. `None`: no marker covers `p`. Stepping the automaton from
    /// there (rather than from the farthest a rare byte may sit in its
    /// marker) costs a comparison, not an automaton step per byte.
    #[inline]
    pub(crate) fn start_before(
        &self,
        hay: &[u8],
        i: usize,
        p: usize,
        patterns: &[Pattern],
        pairs: &[[u64; 4]; 256],
    ) -> Option<usize> {
        let b = usize::from(hay[p]);
        let mut s = (self.begins_at[b] && may_begin(pairs, hay, p)).then_some(p);
        for &(j, pid) in &self.within[b] {
            let Some(from) = p.checked_sub(j) else {
                continue;
            };
            if from < i || s.is_some_and(|s| s <= from) {
                continue;
            }
            // (Short slices: compared in place, not by a call to memcmp.)
            let (pat, got) = (&patterns[pid].bytes[..j], &hay[from..p]);
            let same = if patterns[pid].case_insensitive {
                pat.iter().zip(got).all(|(a, b)| a.eq_ignore_ascii_case(b))
            } else {
                pat.iter().zip(got).all(|(a, b)| a == b)
            };
            if same {
                s = Some(from);
            }
        }
        s
    }

    /// The next position at or after `i` in `hay` holding a rare byte,
    /// taken from `w` — the hits the last search found, a window of up to
    /// 64 bytes — before searching again. `w` starts empty for each `hay`.
    #[inline]
    pub(crate) fn next(&self, hay: &[u8], i: usize, w: &mut Window) -> Option<usize> {
        loop {
            if i < w.start + w.len {
                // (`i - w.start` < `w.len` ≤ 64.)
                let bits = w.bits & (!0u64 << i.saturating_sub(w.start));
                if bits != 0 {
                    return Some(w.start + bits.trailing_zeros() as usize);
                }
            }
            let from = i.max(w.start + w.len);
            if from >= hay.len() {
                return None;
            }
            if self.back[usize::from(hay[from])].is_some() {
                // Hits one after another (`[[[[`): a look at the byte costs
                // less than a search (a call to `memchr` a byte was five
                // times the automaton's cost, measured).
                *w = Window {
                    start: from,
                    bits: 1,
                    len: 1,
                };
                return Some(from);
            }
            *w = match &self.search {
                Search::Many(set) if hay.len() - from >= SHORT => {
                    crate::scan::simd::window(hay, from, set)?
                }
                _ => {
                    let p = self.find(hay, from)?;
                    Window {
                        start: p,
                        bits: 1,
                        len: 1,
                    }
                }
            };
        }
    }

    /// The first position at or after `i` in `hay` holding a rare byte.
    #[inline]
    pub(crate) fn find(&self, hay: &[u8], i: usize) -> Option<usize> {
        let hay = &hay[i..];
        let table = |h: &[u8]| h.iter().position(|&b| self.back[usize::from(b)].is_some());
        if hay.len() < SHORT {
            return table(hay).map(|k| i + k);
        }
        let k = match &self.search {
            Search::One(a) => memchr::memchr(*a, hay),
            Search::Two(a, b) => memchr::memchr2(*a, *b, hay),
            Search::Three(a, b, c) => memchr::memchr3(*a, *b, *c, hay),
            Search::Many(set) => crate::scan::simd::find(hay, set),
            Search::Table => table(hay),
        };
        k.map(|k| i + k)
    }
}

/// How rare a byte is in model output, prose and code (higher: rarer):
/// markup brackets are rare; uppercase letters that seldom start a word or
/// a sentence (`L`, not `O` of "Of", "On", "One"), less so; letters,
/// digits, spaces, `:` and `_` (frequent in code and lists) are common.
///
/// Of a non-ASCII character (`next`: the byte after `b` in the marker),
/// the last byte is the rarest: the bytes before it name a block of
/// characters that a whole script or symbol set shares (`✦` is
/// `E2 9C A6`; `✅`, `✨` and `✔` are `E2 9C …` too).
fn rarity(b: u8, next: Option<u8>) -> u8 {
    if b >= 0x80 && next.is_some_and(|n| n & 0xC0 == 0x80) {
        return 2;
    }
    match b {
        b' ' | b'\n' | b'e' | b't' | b'a' | b'o' | b'i' | b'n' | b's' | b'r' => 0,
        b'a'..=b'z' | b'.' | b',' => 1,
        b'J' | b'K' | b'L' | b'Q' | b'U' | b'V' | b'X' | b'Y' | b'Z' => 3,
        b'A'..=b'Z' | b'0'..=b'9' | b':' | b'_' | b'"' | b'\'' => 2,
        b'(' | b')' | b'-' | b'=' | b'/' | b'\t' | b'\r' => 2,
        _ if b >= 0x80 => 3,
        _ => 4,
    }
}

/// Whether a marker may begin at `hay[i]` as far as its first two bytes
/// tell (`pairs`: the marker set's table of first byte pairs); at the end of `hay`, it may.
#[inline]
pub(crate) fn may_begin(pairs: &[[u64; 4]; 256], hay: &[u8], i: usize) -> bool {
    match hay.get(i + 1) {
        Some(&b) => pairs[usize::from(hay[i])][usize::from(b >> 6)] & (1 << (b & 63)) != 0,
        None => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rare_byte_search_finds_the_first_of_many() {
        let pats: Vec<Pattern> = ["<a>", "[b]", "`c`", "TOOL:", "TOOL_CALL", "{x}"]
            .iter()
            .map(|p| Pattern {
                bytes: p.as_bytes().to_vec(),
                case_insensitive: false,
                line_start: false,
            })
            .collect();
        let f = RareBytes::new(&pats, false);
        // `TOOL:` and `TOOL_CALL` share one rare byte, the `L` of `TOOL`
        assert_eq!(f.back[usize::from(b'L')], Some(3));
        assert_eq!(f.back[usize::from(b':')], None);
        assert_eq!(f.back[usize::from(b'_')], None);
        assert_eq!(f.back[usize::from(b'T')], None);
        let mut hay = vec![b'x'; 100];
        assert_eq!(f.find(&hay, 0), None);
        // (The `L` after the `O` it follows in both markers.)
        hay[89] = b'O';
        for (at, b) in [(90, b'L'), (60, b'{'), (50, b'['), (40, b'<'), (30, b'`')] {
            hay[at] = b;
            assert_eq!(f.find(&hay, 0), Some(at), "{}", b as char);
            assert_eq!(f.find(&hay[at - 5..at + 3], 0), Some(5));
        }
        // successive finds
        let mut got = Vec::new();
        let mut i = 0;
        while let Some(k) = f.find(&hay, i) {
            got.push(k);
            i = k + 1;
        }
        assert_eq!(got, [30, 40, 50, 60, 90]);
    }
}
