//! Finding the first of four to eight bytes in one pass.
//!
//! `memchr` searches for up to three bytes at once; `auto`'s markers need
//! five rare bytes (`<`, `[`, a backtick, the `L` of `TOOL` and a byte of
//! `✦`). Separate passes (`memchr3`, then `memchr`) made `auto` 1.7×
//! slower than `hermes` on long chunks of prose (measured in
//! `benches/peer`). One AVX2 pass tests each byte's membership with two
//! 16-entry tables, one per nibble: byte `k` of the set owns bit `k`, set
//! in the low table at its low nibble and in the high table at its high
//! nibble, so a byte is in the set exactly when the two entries share a
//! bit. That costs the same for four bytes as for eight; comparing with
//! each byte in turn cost 30% more at five bytes than at four (measured on
//! `text_only/whole`). With AVX-512BW the same test runs on 64 bytes a
//! vector (a window is then one vector's mask); without AVX2 (or off
//! x86-64) the passes are used.
//!
//! `aho-corasick`'s packed Teddy searcher runs the same nibble-table test;
//! over the same five bytes of prose it was 2.0–3.3× slower than either
//! search here from 64 bytes up, and 2.5× (AVX-512) and 1.4× (AVX2)
//! slower on 32-byte haystacks (`benches/simd.rs`, BENCHMARKS.md): it
//! reports one match a call where a window hands over up to 64, and it
//! has nothing like the AVX-512 search's `before` filter.
//!
//! The vector code runs only with a token of [`crate::scan::cpu`] in hand
//! ([`window_at`] takes a `Level`, which carries one): that is the proof,
//! checked when the token was made, that the CPU has the instructions.

/// A set of four to eight bytes, ready for [`find`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ByteSet8 {
    /// The bytes; invariant: 3 < `len` ≤ 8, no byte twice.
    bytes: [u8; 8],
    len: usize,
    /// Bit `k` is set in `lo[b & 15]` and `hi[b >> 4]` for `b = bytes[k]`.
    lo: [u8; 16],
    hi: [u8; 16],
    /// The bytes that may come before each member, the same way: bit `k`
    /// is set in `before_lo[a & 15]` and `before_hi[a >> 4]` for every byte
    /// `a` after which `bytes[k]` counts (every byte, unless
    /// [`ByteSet8::after`] said otherwise). The AVX-512 search leaves out
    /// a member whose byte before it is not one of those (the others leave
    /// out nothing; nibble tables may also let through bytes that were not
    /// listed): a filter that only ever leaves out fewer.
    before_lo: [u8; 16],
    before_hi: [u8; 16],
}

impl ByteSet8 {
    /// The set of `bytes`, if there are four to eight different ones.
    pub(crate) fn new(bytes: &[u8]) -> Option<ByteSet8> {
        if !(4..=8).contains(&bytes.len()) {
            return None;
        }
        let all = u8::MAX >> (8 - bytes.len());
        let mut set = ByteSet8 {
            bytes: [0; 8],
            len: bytes.len(),
            lo: [0; 16],
            hi: [0; 16],
            before_lo: [all; 16],
            before_hi: [all; 16],
        };
        for (k, &b) in bytes.iter().enumerate() {
            if bytes[..k].contains(&b) {
                return None;
            }
            set.bytes[k] = b;
            set.lo[usize::from(b & 15)] |= 1 << k;
            set.hi[usize::from(b >> 4)] |= 1 << k;
        }
        Some(set)
    }

    /// The set where `b` counts only right after one of `before` (and at
    /// the start of a haystack, whose byte before is unknown). A search
    /// may still report `b` elsewhere: a filter, not a promise.
    pub(crate) fn after(mut self, b: u8, before: &[u8]) -> ByteSet8 {
        let Some(k) = self.bytes().iter().position(|&x| x == b) else {
            return self;
        };
        let bit = 1u8 << k;
        for e in self.before_lo.iter_mut().chain(self.before_hi.iter_mut()) {
            *e &= !bit;
        }
        for &a in before {
            self.before_lo[usize::from(a & 15)] |= bit;
            self.before_hi[usize::from(a >> 4)] |= bit;
        }
        self
    }

    fn bytes(&self) -> &[u8] {
        &self.bytes[..self.len]
    }
}

/// The first position in `hay` holding a byte of `set` that may count
/// there (see [`ByteSet8::after`]): the first hit of the first [`window`].
#[inline]
pub(crate) fn find(hay: &[u8], set: &ByteSet8) -> Option<usize> {
    window(hay, 0, set).map(|w| w.start + w.bits.trailing_zeros() as usize)
}

/// Where [`window`] found bytes of a set.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Window {
    /// The window's first position in the haystack.
    pub start: usize,
    /// Bit `k` (`k < len`) is set only if `start + k` holds a byte of the
    /// set, and is set if that byte may count there (see
    /// [`ByteSet8::after`]).
    pub bits: u64,
    /// How many positions the window covers (at most 64): every byte of
    /// the set in `start..start + len` that may count has its bit.
    pub len: usize,
}

/// The first window at or after `from` in `hay` that holds a byte of
/// `set` (none before it does). The caller walks the bits, so hits close
/// together — a tag's `<` and `>` — cost one search.
#[inline]
pub(crate) fn window(hay: &[u8], from: usize, set: &ByteSet8) -> Option<Window> {
    window_at(crate::scan::cpu::level(), hay, from, set)
}

/// [`window`] with the instructions of `level`.
#[inline]
pub(crate) fn window_at(
    level: crate::scan::cpu::Level,
    hay: &[u8],
    from: usize,
    set: &ByteSet8,
) -> Option<Window> {
    match level {
        #[cfg(target_arch = "x86_64")]
        crate::scan::cpu::Level::Avx512(t) => avx512::window(t, hay, from, set),
        #[cfg(target_arch = "x86_64")]
        crate::scan::cpu::Level::Avx2(t) => avx2::window(t, hay, from, set),
        // (Off x86-64 no token can be made: every level is `Portable`.)
        _ => portable_window(hay, from, set),
    }
}

/// [`window`] without SIMD of our own: the first hit alone, by [`passes`].
fn portable_window(hay: &[u8], from: usize, set: &ByteSet8) -> Option<Window> {
    let p = from + passes(&hay[from..], set.bytes())?;
    Some(Window {
        start: p,
        bits: 1,
        len: 1,
    })
}

/// `memchr3` over the first three bytes, then `memchr` for each other one
/// in what the searches before it skipped.
fn passes(hay: &[u8], n: &[u8]) -> Option<usize> {
    let mut first = memchr::memchr3(n[0], n[1], n[2], hay);
    for &b in &n[3..] {
        let upto = first.unwrap_or(hay.len());
        first = memchr::memchr(b, &hay[..upto]).or(first);
    }
    first
}

#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
mod avx2 {
    use super::ByteSet8;
    use crate::scan::cpu::Avx2;
    use std::arch::x86_64::{
        __m256i, _mm256_and_si256, _mm256_cmpeq_epi8, _mm256_loadu_si256, _mm256_movemask_epi8,
        _mm256_or_si256, _mm256_set1_epi8, _mm256_setzero_si256, _mm256_shuffle_epi8,
        _mm256_srli_epi16,
    };

    /// See [`super::window`].
    #[inline]
    pub(super) fn window(
        _cpu: Avx2,
        hay: &[u8],
        from: usize,
        set: &ByteSet8,
    ) -> Option<super::Window> {
        // SAFETY: an `Avx2` token exists only on a CPU that has AVX2
        // (`Avx2::new` is its only constructor and asks the CPU), all
        // `window_avx2` requires of its caller.
        unsafe { window_avx2(hay, from, set) }
    }

    /// [`super::window`], 128 bytes a step.
    ///
    /// # Safety
    ///
    /// The CPU must have AVX2 (an [`Avx2`] token proves it).
    #[target_feature(enable = "avx2")]
    unsafe fn window_avx2(hay: &[u8], from: usize, set: &ByteSet8) -> Option<super::Window> {
        let (lo, hi) = tables(set);
        let nibble = _mm256_set1_epi8(0x0F);
        let mut at = from;
        // 128 bytes a step while nothing is found, tested as one; then
        // the window is worked out in 64-byte halves below.
        while at + 128 <= hay.len() {
            // SAFETY: `at + 128 <= hay.len()`, so the four unaligned
            // 32-byte loads, at `at`, `at + 32`, `at + 64` and `at + 96`,
            // read inside `hay`.
            let x = unsafe {
                let p = hay.as_ptr().add(at).cast::<__m256i>();
                [
                    _mm256_loadu_si256(p),
                    _mm256_loadu_si256(p.add(1)),
                    _mm256_loadu_si256(p.add(2)),
                    _mm256_loadu_si256(p.add(3)),
                ]
            };
            let m = x.map(|x| hits(x, lo, hi, nibble));
            let any = _mm256_or_si256(_mm256_or_si256(m[0], m[1]), _mm256_or_si256(m[2], m[3]));
            if mask(any) != 0 {
                let first = u64::from(mask(m[0])) | u64::from(mask(m[1])) << 32;
                if first != 0 {
                    return Some(super::Window {
                        start: at,
                        bits: first,
                        len: 64,
                    });
                }
                let second = u64::from(mask(m[2])) | u64::from(mask(m[3])) << 32;
                return Some(super::Window {
                    start: at + 64,
                    bits: second,
                    len: 64,
                });
            }
            at += 128;
        }
        while at + 64 <= hay.len() {
            // SAFETY: `at + 64 <= hay.len()`, so both unaligned 32-byte
            // loads, at `at` and `at + 32`, read inside `hay`.
            let (a, b) = unsafe {
                let p = hay.as_ptr().add(at).cast::<__m256i>();
                (_mm256_loadu_si256(p), _mm256_loadu_si256(p.add(1)))
            };
            let m = u64::from(mask(hits(a, lo, hi, nibble)))
                | u64::from(mask(hits(b, lo, hi, nibble))) << 32;
            if m != 0 {
                return Some(super::Window {
                    start: at,
                    bits: m,
                    len: 64,
                });
            }
            at += 64;
        }
        // The last bytes, fewer than 64: copied to a zeroed buffer that
        // both loads read inside, the bits past them dropped. (Looking at
        // each byte instead made haystacks of 24 to 63 bytes, which the
        // scan hands here, three times slower than `aho-corasick`'s Teddy,
        // measured in `benches/simd.rs`.)
        let rest = hay.get(at..).filter(|r| !r.is_empty())?;
        let mut buf = [0u8; 64];
        buf[..rest.len()].copy_from_slice(rest);
        // SAFETY: `buf` is 64 bytes: both unaligned 32-byte loads, at 0 and
        // 32, read inside it.
        let (a, b) = unsafe {
            let p = buf.as_ptr().cast::<__m256i>();
            (_mm256_loadu_si256(p), _mm256_loadu_si256(p.add(1)))
        };
        let m = (u64::from(mask(hits(a, lo, hi, nibble)))
            | u64::from(mask(hits(b, lo, hi, nibble))) << 32)
            & u64::MAX >> (64 - rest.len());
        (m != 0).then_some(super::Window {
            start: at,
            bits: m,
            len: rest.len(),
        })
    }

    /// Both nibble tables, in each 128-bit lane (`vpshufb` looks up within
    /// a lane).
    #[target_feature(enable = "avx2")]
    fn tables(set: &ByteSet8) -> (__m256i, __m256i) {
        let mut lo = [0u8; 32];
        let mut hi = [0u8; 32];
        for k in 0..32 {
            lo[k] = set.lo[k % 16];
            hi[k] = set.hi[k % 16];
        }
        // SAFETY: each array is 32 bytes, the size of the unaligned load.
        unsafe {
            (
                _mm256_loadu_si256(lo.as_ptr().cast()),
                _mm256_loadu_si256(hi.as_ptr().cast()),
            )
        }
    }

    /// Non-zero lanes where `x` holds a byte of the set.
    #[target_feature(enable = "avx2")]
    fn hits(x: __m256i, lo: __m256i, hi: __m256i, nibble: __m256i) -> __m256i {
        let l = _mm256_shuffle_epi8(lo, _mm256_and_si256(x, nibble));
        let h = _mm256_shuffle_epi8(hi, _mm256_and_si256(_mm256_srli_epi16(x, 4), nibble));
        _mm256_and_si256(l, h)
    }

    /// The lanes of `m` that are not zero, one bit each.
    #[target_feature(enable = "avx2")]
    fn mask(m: __m256i) -> u32 {
        !(_mm256_movemask_epi8(_mm256_cmpeq_epi8(m, _mm256_setzero_si256())) as u32)
    }
}

/// The same search 64 bytes a vector: a window is one vector's mask, and
/// the ends of the haystack are masked loads (which read nothing outside
/// it), the first up to a 64-byte boundary so that the loads after it do
/// not straddle cache lines. It also applies the set's `before` filter
/// (two more table lookups on the bytes one position back), so that the
/// `L` of a capitalised word is no hit for `TOOL`'s sake. Measured side by
/// side on 64 KiB chunks of prose under `auto`: 3.09–3.42 µs a chunk with
/// AVX2, 2.76–3.03 with this search unaligned and unfiltered, 2.72–3.00
/// aligned and filtered (`hermes`, searching with `memchr2`: 2.3–2.4 µs).
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
mod avx512 {
    use super::ByteSet8;
    use crate::scan::cpu::Avx512;
    use std::arch::x86_64::{
        __m512i, __mmask64, _mm512_and_si512, _mm512_broadcast_i32x4, _mm512_maskz_loadu_epi8,
        _mm512_set1_epi8, _mm512_shuffle_epi8, _mm512_srli_epi16, _mm512_test_epi8_mask,
        _mm_loadu_si128,
    };

    /// See [`super::window`].
    #[inline]
    pub(super) fn window(
        _cpu: Avx512,
        hay: &[u8],
        from: usize,
        set: &ByteSet8,
    ) -> Option<super::Window> {
        // SAFETY: an `Avx512` token exists only on a CPU that has AVX-512
        // BW, which implies AVX-512 F (`Avx512::new` is its only
        // constructor and asks the CPU), all `window_avx512` requires of
        // its caller.
        unsafe { window_avx512(hay, from, set) }
    }

    /// [`super::window`], 64 bytes a vector, with the `before` filter.
    ///
    /// # Safety
    ///
    /// The CPU must have AVX-512 BW (an [`Avx512`] token proves it).
    #[target_feature(enable = "avx512bw")]
    unsafe fn window_avx512(hay: &[u8], from: usize, set: &ByteSet8) -> Option<super::Window> {
        let table = |t: &[u8; 16]| {
            // SAFETY: the table is 16 bytes, the size of the unaligned load.
            _mm512_broadcast_i32x4(unsafe { _mm_loadu_si128(t.as_ptr().cast()) })
        };
        let (lo, hi) = (table(&set.lo), table(&set.hi));
        let (before_lo, before_hi) = (table(&set.before_lo), table(&set.before_hi));
        let nibble = _mm512_set1_epi8(0x0F);
        // Each lane: the bits of the members its byte is (or may come
        // after, with the `before` tables).
        let members = |x: __m512i, lo: __m512i, hi: __m512i| {
            let l = _mm512_shuffle_epi8(lo, _mm512_and_si512(x, nibble));
            let h = _mm512_shuffle_epi8(hi, _mm512_and_si512(_mm512_srli_epi16(x, 4), nibble));
            _mm512_and_si512(l, h)
        };
        // The hits among the `len` (at most 64) bytes at `at`: members of
        // the set that may come after the byte before them. (At 0 there
        // is no byte before: every member counts.)
        let hits = |at: usize, len: usize| -> __mmask64 {
            let keep = u64::MAX >> (64 - len);
            // SAFETY: `at + len <= hay.len()` (every caller's loop bound),
            // so the masked load, which reads only the bytes whose bit is
            // set in `keep`, `at..at + len`, reads inside `hay`; so does
            // the load of the bytes before them, `at - 1..at - 1 + len`,
            // made only when `at ≥ 1`.
            let (x, y) = unsafe {
                let p = hay.as_ptr().add(at);
                let x = _mm512_maskz_loadu_epi8(keep, p.cast());
                let y = if at > 0 {
                    _mm512_maskz_loadu_epi8(keep, p.sub(1).cast())
                } else {
                    _mm512_set1_epi8(-1)
                };
                (x, y)
            };
            let m = members(x, lo, hi);
            let ok = if at > 0 {
                members(y, before_lo, before_hi)
            } else {
                m
            };
            _mm512_test_epi8_mask(m, ok) & keep
        };
        let window = |start: usize, bits: u64, len: usize| super::Window { start, bits, len };
        let mut at = from;
        // Up to the next multiple of 64 in memory first: a 64-byte load
        // that straddles two cache lines costs about two.
        let head = (hay.as_ptr() as usize + at).wrapping_neg() % 64;
        if head > 0 && at < hay.len() {
            let len = head.min(hay.len() - at);
            let m = hits(at, len);
            if m != 0 {
                return Some(window(at, m, len));
            }
            at += len;
        }
        // 128 bytes a step while nothing is found.
        while at + 128 <= hay.len() {
            let (a, b) = (hits(at, 64), hits(at + 64, 64));
            if a | b != 0 {
                return Some(if a != 0 {
                    window(at, a, 64)
                } else {
                    window(at + 64, b, 64)
                });
            }
            at += 128;
        }
        while at < hay.len() {
            let len = (hay.len() - at).min(64);
            let m = hits(at, len);
            if m != 0 {
                return Some(window(at, m, len));
            }
            at += len;
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::scan::cpu::Level;

    /// Every implementation of [`window`] this CPU can run.
    fn implementations() -> Vec<(&'static str, Level)> {
        Level::all().into_iter().map(|l| (l.name(), l)).collect()
    }

    /// Every hit at or after `from`, window by window.
    fn all_hits(imp: Level, hay: &[u8], from: usize, set: &ByteSet8) -> Vec<usize> {
        let mut got = Vec::new();
        let mut at = from;
        while at < hay.len() {
            let Some(w) = window_at(imp, hay, at, set) else {
                break;
            };
            assert!(w.start >= at && w.len <= 64 && w.len > 0);
            assert!(w.len == 64 || w.bits >> w.len == 0, "bits past the window");
            let mut m = w.bits;
            while m != 0 {
                got.push(w.start + m.trailing_zeros() as usize);
                m &= m - 1;
            }
            at = w.start + w.len;
        }
        got
    }

    fn first_everywhere(n: &[u8]) {
        let set = ByteSet8::new(n).unwrap();
        for len in [0, 1, 31, 63, 64, 65, 127, 128, 129, 191, 192, 255, 256, 300] {
            let mut hay = vec![b'x'; len];
            assert_eq!(find(&hay, &set), None, "{len}");
            assert_eq!(passes(&hay, n), None, "{len}");
            for at in (0..len).rev() {
                hay[at] = n[at % n.len()];
                assert_eq!(find(&hay, &set), Some(at), "{len} at {at}");
                assert_eq!(passes(&hay, n), Some(at), "{len} at {at}");
                for (name, imp) in implementations() {
                    let first = window_at(imp, &hay, 0, &set)
                        .map(|w| w.start + w.bits.trailing_zeros() as usize);
                    assert_eq!(first, Some(at), "{name}: {len} at {at}");
                }
            }
        }
    }

    #[test]
    #[cfg_attr(
        miri,
        ignore = "exhaustive: hours under Miri; the other simd tests run there"
    )]
    fn finds_the_first_of_four_to_eight_everywhere() {
        first_everywhere(b"<[`L");
        first_everywhere(&[b'<', b'[', b'`', b'L', 0x9C]);
        first_everywhere(&[0x00, 0xFF, 0x80, 0x7F, b'|', b'{', 0x0F, 0xF0]);
    }

    /// Every window holds exactly the set's bytes at or after `from`, and
    /// no hit is skipped between windows, by every implementation.
    #[test]
    fn windows_hold_every_hit() {
        let n = [b'<', b'[', b'`', b'L', 0xA6];
        let set = ByteSet8::new(&n).unwrap();
        let mut hay: Vec<u8> = (0..300u32)
            .map(|i| b"ab cd<[`L\xa6xyz"[(i * 7 % 13) as usize])
            .collect();
        hay[299] = b'<';
        let want: Vec<usize> = (0..hay.len()).filter(|&k| n.contains(&hay[k])).collect();
        for (name, imp) in implementations() {
            for from in [0, 1, 5, 63, 64, 100, 127, 128, 236, 299, 300] {
                let want: Vec<usize> = want.iter().copied().filter(|&k| k >= from).collect();
                assert_eq!(all_hits(imp, &hay, from, &set), want, "{name} from {from}");
            }
        }
        // Sparse hits, far apart: whole empty steps are skipped.
        let mut hay = vec![b'a'; 1000];
        for k in [0, 127, 128, 255, 640, 999] {
            hay[k] = b'[';
        }
        for (name, imp) in implementations() {
            assert_eq!(
                all_hits(imp, &hay, 0, &set),
                vec![0, 127, 128, 255, 640, 999],
                "{name}"
            );
        }
    }

    /// With `after`, a member may be left out where the byte before it is
    /// not one it may follow, and only there (a haystack's first byte
    /// has no byte before it: its members all count).
    #[test]
    fn members_count_after_the_bytes_they_follow() {
        let set = ByteSet8::new(&[b'<', b'[', b'`', b'L', 0xA6])
            .unwrap()
            .after(b'L', b"O")
            .after(0xA6, &[0x9C]);
        let may_follow = |b: u8, a: u8| match b {
            b'L' => a == b'O',
            0xA6 => a == 0x9C,
            _ => true,
        };
        let alphabet = b"xO L<[`\x9c\xa6";
        let mut seed = 7u64;
        let mut left_out = 0;
        for _ in 0..400 {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
            let len = (seed >> 40) as usize % 300;
            let hay: Vec<u8> = (0..len)
                .map(|k| alphabet[((seed >> 20) as usize + k * k * 7 + k / 3) % alphabet.len()])
                .collect();
            let from = if len == 0 {
                0
            } else {
                (seed >> 50) as usize % len
            };
            let members: Vec<usize> = (from..len)
                .filter(|&q| set.bytes().contains(&hay[q]))
                .collect();
            for (name, imp) in implementations() {
                let got = all_hits(imp, &hay, from, &set);
                for q in &got {
                    assert!(members.contains(q), "{name}: {q} is no member");
                }
                for &q in &members {
                    if q == 0 || may_follow(hay[q], hay[q - 1]) {
                        assert!(got.contains(&q), "{name}: {q} left out");
                    }
                }
                if name == "avx512" {
                    left_out += members.len() - got.len();
                }
            }
        }
        // The filter filters, where there is one.
        if implementations().iter().any(|&(name, _)| name == "avx512") {
            assert!(left_out > 100, "{left_out}");
        }
    }

    /// The last bytes of a haystack (fewer than a vector) are searched
    /// in a zero-padded copy: the padding is never a hit, even when 0 is
    /// in the set, and a member in the last byte is.
    #[test]
    fn the_padding_after_the_last_bytes_is_no_hit() {
        let set = ByteSet8::new(&[0x00, b'<', b'[', b'`']).unwrap();
        for len in 1..=130 {
            let mut hay = vec![b'x'; len];
            for (name, imp) in implementations() {
                for from in [0, len / 2, len - 1] {
                    assert_eq!(
                        all_hits(imp, &hay, from, &set),
                        Vec::<usize>::new(),
                        "{name}: {len} from {from}"
                    );
                }
            }
            hay[len - 1] = 0x00;
            for (name, imp) in implementations() {
                assert_eq!(all_hits(imp, &hay, 0, &set), vec![len - 1], "{name}: {len}");
            }
        }
    }

    #[test]
    fn only_the_set_matches() {
        // Bytes that share a nibble with a member, but are not one.
        let members = [0x3C, 0x5B, 0x60, 0x4C, 0x9C];
        let set = ByteSet8::new(&members).unwrap();
        for b in 0..=255u8 {
            for len in [200, 63] {
                let hay = vec![b; len];
                let want = members.contains(&b).then_some(0);
                assert_eq!(find(&hay, &set), want, "{b:#x}");
                for (name, imp) in implementations() {
                    assert_eq!(
                        window_at(imp, &hay, 0, &set).map(|w| w.start),
                        want,
                        "{name}: {b:#x} × {len}"
                    );
                }
            }
        }
        assert!(ByteSet8::new(b"abc").is_none());
        assert!(ByteSet8::new(b"abcdefghi").is_none());
        assert!(ByteSet8::new(b"abca").is_none());
    }
}
