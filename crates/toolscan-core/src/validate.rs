//! Whether a long chunk of bytes is UTF-8: the one check `feed_with` makes
//! of every chunk it is given.
//!
//! `simdutf8` (AVX2) checks the prose of the benchmarks at about 13.6 GB/s
//! on an AVX-512 machine, twice the time `memchr2` takes to read the same
//! bytes, so the check was two thirds of `feed_with` on 64 KiB chunks.
//! Where the CPU has AVX-512 (BW and VBMI), the same algorithm runs on 64
//! bytes a vector: the *lookup* algorithm of Keiser and Lemire ("Validating
//! UTF-8 In Less Than One Instruction Per Byte", 2021), which simdjson and
//! `simdutf8` use too. Each byte is classified by three 16-entry tables —
//! the high and the low nibble of the byte before it, its own high nibble —
//! whose entries are bit sets of the errors a pair of bytes may make (a
//! lead byte followed by no continuation, a stray continuation, overlong
//! forms, surrogates, code points past U+10FFFF); a pair is wrong when the
//! three share a bit. The third and fourth bytes of long sequences are
//! checked against the bytes two and three back.

/// `bytes` as text if they are UTF-8 (ending on a whole character), else
/// `None` (the caller finds out where the error is).
#[inline]
pub(crate) fn from_utf8(bytes: &[u8]) -> Option<&str> {
    from_utf8_at(crate::cpu::level(), bytes)
}

/// [`from_utf8`] with the instructions of `level`.
#[inline]
pub(crate) fn from_utf8_at(level: crate::cpu::Level, bytes: &[u8]) -> Option<&str> {
    match level {
        #[cfg(target_arch = "x86_64")]
        crate::cpu::Level::Avx512(t) => avx512::from_utf8(t, bytes),
        crate::cpu::Level::Portable => std::str::from_utf8(bytes).ok(),
        _ => simdutf8::basic::from_utf8(bytes).ok(),
    }
}

#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
mod avx512 {
    use crate::cpu::Avx512;
    use std::arch::x86_64::{
        __m512i, _mm512_and_si512, _mm512_broadcast_i32x4, _mm512_loadu_si512,
        _mm512_maskz_loadu_epi8, _mm512_or_si512, _mm512_permutex2var_epi8, _mm512_set1_epi8,
        _mm512_setzero_si512, _mm512_shuffle_epi8, _mm512_srli_epi16, _mm512_subs_epu8,
        _mm512_test_epi8_mask, _mm512_xor_si512, _mm_loadu_si128,
    };

    // The errors a pair of bytes (the one before, this one) may make; see
    // the module's documentation.
    /// A lead byte or ASCII, then a lead byte or ASCII, where a
    /// continuation was due.
    const TOO_SHORT: u8 = 1 << 0;
    /// ASCII, then a continuation.
    const TOO_LONG: u8 = 1 << 1;
    /// `E0`, then `80..=9F`.
    const OVERLONG_3: u8 = 1 << 2;
    /// `F4`, then `90..=BF`; `F5..=FF`, then `90..=BF`.
    const TOO_LARGE: u8 = 1 << 3;
    /// `ED`, then `A0..=BF`.
    const SURROGATE: u8 = 1 << 4;
    /// `C0` or `C1`, then a continuation.
    const OVERLONG_2: u8 = 1 << 5;
    /// `F5..=FF`, then `80..=8F`.
    const TOO_LARGE_1000: u8 = 1 << 6;
    /// `F0`, then `80..=8F`.
    const OVERLONG_4: u8 = 1 << 6;
    /// A continuation, then a continuation (an error unless two or three
    /// bytes back there is a lead byte that wants it: see `must_continue`).
    const TWO_CONTS: u8 = 1 << 7;
    /// The errors that depend only on the high nibble of the byte before.
    const CARRY: u8 = TOO_SHORT | TOO_LONG | TWO_CONTS;

    /// By the high nibble of the byte before.
    const BYTE_1_HIGH: [u8; 16] = [
        TOO_LONG,
        TOO_LONG,
        TOO_LONG,
        TOO_LONG,
        TOO_LONG,
        TOO_LONG,
        TOO_LONG,
        TOO_LONG,
        TWO_CONTS,
        TWO_CONTS,
        TWO_CONTS,
        TWO_CONTS,
        TOO_SHORT | OVERLONG_2,
        TOO_SHORT,
        TOO_SHORT | OVERLONG_3 | SURROGATE,
        TOO_SHORT | TOO_LARGE | TOO_LARGE_1000 | OVERLONG_4,
    ];
    /// By the low nibble of the byte before.
    const BYTE_1_LOW: [u8; 16] = [
        CARRY | OVERLONG_3 | OVERLONG_2 | OVERLONG_4,
        CARRY | OVERLONG_2,
        CARRY,
        CARRY,
        CARRY | TOO_LARGE,
        CARRY | TOO_LARGE | TOO_LARGE_1000,
        CARRY | TOO_LARGE | TOO_LARGE_1000,
        CARRY | TOO_LARGE | TOO_LARGE_1000,
        CARRY | TOO_LARGE | TOO_LARGE_1000,
        CARRY | TOO_LARGE | TOO_LARGE_1000,
        CARRY | TOO_LARGE | TOO_LARGE_1000,
        CARRY | TOO_LARGE | TOO_LARGE_1000,
        CARRY | TOO_LARGE | TOO_LARGE_1000,
        CARRY | TOO_LARGE | TOO_LARGE_1000 | SURROGATE,
        CARRY | TOO_LARGE | TOO_LARGE_1000,
        CARRY | TOO_LARGE | TOO_LARGE_1000,
    ];
    /// By the high nibble of the byte itself.
    const BYTE_2_HIGH: [u8; 16] = [
        TOO_SHORT,
        TOO_SHORT,
        TOO_SHORT,
        TOO_SHORT,
        TOO_SHORT,
        TOO_SHORT,
        TOO_SHORT,
        TOO_SHORT,
        TOO_LONG | OVERLONG_2 | TWO_CONTS | OVERLONG_3 | TOO_LARGE_1000 | OVERLONG_4,
        TOO_LONG | OVERLONG_2 | TWO_CONTS | OVERLONG_3 | TOO_LARGE,
        TOO_LONG | OVERLONG_2 | TWO_CONTS | SURROGATE | TOO_LARGE,
        TOO_LONG | OVERLONG_2 | TWO_CONTS | SURROGATE | TOO_LARGE,
        TOO_SHORT,
        TOO_SHORT,
        TOO_SHORT,
        TOO_SHORT,
    ];

    /// See [`super::from_utf8`].
    #[inline]
    pub(super) fn from_utf8(_cpu: Avx512, bytes: &[u8]) -> Option<&str> {
        // SAFETY: an `Avx512` token exists only on a CPU that has AVX-512
        // BW and VBMI (`Avx512::new` is its only constructor and asks the
        // CPU), all `valid` requires of its caller.
        if unsafe { valid(bytes) } {
            // SAFETY: `valid` returned true: `bytes` is UTF-8 (tested
            // against `std::str::from_utf8` on every sequence of up to
            // three bytes and on random text, below).
            Some(unsafe { std::str::from_utf8_unchecked(bytes) })
        } else {
            None
        }
    }

    /// Whether `bytes` is UTF-8, ending on a whole character.
    ///
    /// # Safety
    ///
    /// The CPU must have AVX-512 BW and VBMI (an [`Avx512`] token proves
    /// it).
    #[target_feature(enable = "avx512bw,avx512vbmi")]
    unsafe fn valid(bytes: &[u8]) -> bool {
        let table = |t: &[u8; 16]| {
            // SAFETY: the table is 16 bytes, the size of the load.
            _mm512_broadcast_i32x4(unsafe { _mm_loadu_si128(t.as_ptr().cast()) })
        };
        let (b1_high, b1_low, b2_high) =
            (table(&BYTE_1_HIGH), table(&BYTE_1_LOW), table(&BYTE_2_HIGH));
        let nibble = _mm512_set1_epi8(0x0F);
        // `shift[n]`: lane `i` takes byte `i - n` of this block, or, for
        // `i < n`, byte `64 + i - n` of the block before (index + 64).
        let shift = |n: usize| {
            let mut idx = [0u8; 64];
            for (i, x) in idx.iter_mut().enumerate() {
                // (At most 127: `n` ≥ 1.)
                *x = (if i >= n { i - n } else { 128 + i - n }) as u8;
            }
            // SAFETY: `idx` is 64 bytes, the size of the load.
            unsafe { _mm512_loadu_si512(idx.as_ptr().cast()) }
        };
        let (shift1, shift2, shift3) = (shift(1), shift(2), shift(3));
        // The bytes before the first block count as ASCII (the caller's
        // chunk starts on a character).
        let mut error = _mm512_setzero_si512();
        // Lanes that would be an error if the input ended after this block:
        // a lead byte whose continuations are still due.
        let mut incomplete = _mm512_setzero_si512();
        // (With ASCII bytes beyond the end of the input in the last block,
        // an unfinished sequence there is `TOO_SHORT`.)
        let max = {
            let mut m = [0xFFu8; 64];
            m[61] = 0xF0 - 1;
            m[62] = 0xE0 - 1;
            m[63] = 0xC0 - 1;
            // SAFETY: `m` is 64 bytes, the size of the load.
            unsafe { _mm512_loadu_si512(m.as_ptr().cast()) }
        };
        let high = |x: __m512i| _mm512_and_si512(_mm512_srli_epi16(x, 4), nibble);
        // One block: its errors and what it leaves unfinished.
        // (No shortcut for a block of ASCII: in prose, whether the next
        // block is one is a coin toss, and the mispredicted branch stalled
        // the loads behind it; without it the loop runs at the speed of
        // memory.)
        let mut block = |input: __m512i, prev: __m512i| {
            let prev1 = _mm512_permutex2var_epi8(input, shift1, prev);
            let special = _mm512_and_si512(
                _mm512_and_si512(
                    _mm512_shuffle_epi8(b1_high, high(prev1)),
                    _mm512_shuffle_epi8(b1_low, _mm512_and_si512(prev1, nibble)),
                ),
                _mm512_shuffle_epi8(b2_high, high(input)),
            );
            // A continuation that a lead byte two or three back wants: its
            // `TWO_CONTS` is no error; one that none wants is.
            let prev2 = _mm512_permutex2var_epi8(input, shift2, prev);
            let prev3 = _mm512_permutex2var_epi8(input, shift3, prev);
            let third = _mm512_subs_epu8(prev2, _mm512_set1_epi8((0xE0u8 - 0x80) as i8));
            let fourth = _mm512_subs_epu8(prev3, _mm512_set1_epi8((0xF0u8 - 0x80) as i8));
            let must_continue = _mm512_and_si512(
                _mm512_or_si512(third, fourth),
                _mm512_set1_epi8(0x80u8 as i8),
            );
            error = _mm512_or_si512(error, _mm512_xor_si512(must_continue, special));
            incomplete = _mm512_subs_epu8(input, max);
        };
        // The bytes up to the first multiple of 64 in memory come first,
        // as the last lanes of a block whose first lanes are zero (ASCII
        // before the start): the loads after it then never straddle two
        // cache lines, which halved the speed.
        let head = ((bytes.as_ptr() as usize).wrapping_neg() % 64).min(bytes.len());
        let mut prev = _mm512_setzero_si512();
        if head > 0 {
            let mut buf = [0u8; 64];
            buf[64 - head..].copy_from_slice(&bytes[..head]);
            // SAFETY: `buf` is 64 bytes, the size of the load.
            let input = unsafe { _mm512_loadu_si512(buf.as_ptr().cast()) };
            block(input, prev);
            prev = input;
        }
        let mut at = head;
        while at + 64 <= bytes.len() {
            // SAFETY: `at + 64 <= bytes.len()`: the load reads inside
            // `bytes`.
            let input = unsafe { _mm512_loadu_si512(bytes.as_ptr().add(at).cast()) };
            block(input, prev);
            prev = input;
            at += 64;
        }
        if at < bytes.len() {
            let keep = u64::MAX >> (64 - (bytes.len() - at));
            // SAFETY: the masked load reads only the lanes whose bit is set
            // in `keep`, the bytes `at..`, inside `bytes`; the others are
            // zero (ASCII after the end: a sequence left unfinished there
            // is `TOO_SHORT`).
            let input = unsafe { _mm512_maskz_loadu_epi8(keep, bytes.as_ptr().add(at).cast()) };
            block(input, prev);
        }
        error = _mm512_or_si512(error, incomplete);
        _mm512_test_epi8_mask(error, error) == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The validators this CPU can run, each against std's.
    fn agrees(bytes: &[u8]) {
        let want = std::str::from_utf8(bytes).is_ok();
        assert_eq!(from_utf8(bytes).is_some(), want, "{bytes:02x?}");
        for level in crate::cpu::Level::all() {
            let got = from_utf8_at(level, bytes).is_some();
            assert_eq!(got, want, "{}: {bytes:02x?}", level.name());
        }
    }

    #[test]
    #[cfg_attr(
        miri,
        ignore = "exhaustive: hours under Miri, which runs only the fallback validator"
    )]
    fn every_sequence_of_up_to_three_bytes_at_every_place() {
        let mut all = Vec::new();
        for a in 0..=255u8 {
            all.push(vec![a]);
            for b in 0..=255u8 {
                all.push(vec![a, b]);
            }
        }
        // Three bytes: every lead byte with every pair of continuations
        // and a few others (all 2^24 would take long in a debug build).
        let some = [
            0x00, 0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC2, 0xDF,
        ];
        for a in 0..=255u8 {
            for &b in &some {
                for &c in &some {
                    all.push(vec![a, b, c]);
                }
            }
            for b in 0x80..=0xBFu8 {
                all.push(vec![a, b, 0x80]);
                all.push(vec![a, b, 0xBF]);
            }
        }
        // Four-byte sequences around U+10000 and U+10FFFF.
        for a in [0xF0u8, 0xF4, 0xF5] {
            for b in [0x80u8, 0x8F, 0x90, 0xBF] {
                all.push(vec![a, b, 0x80, 0x80]);
                all.push(vec![a, b, 0x80]);
            }
        }
        for s in &all {
            // Alone, in the middle of a vector, across the boundary of two
            // vectors, at the very end, after a block of ASCII.
            agrees(s);
            for pad in [30, 62, 63, 64, 125, 126, 127] {
                let mut v = vec![b'a'; pad];
                v.extend_from_slice(s);
                agrees(&v);
                v.extend_from_slice(&[b'z'; 70]);
                agrees(&v);
            }
        }
    }

    /// The check starts on a 64-byte boundary in memory after a partial
    /// first block: every place of the slice in memory, every length.
    #[test]
    #[cfg_attr(
        miri,
        ignore = "exhaustive: hours under Miri, which runs only the fallback validator"
    )]
    fn every_alignment_and_length() {
        let text = "ab é 東京 😀 ü z".repeat(12);
        let bytes = text.as_bytes();
        for off in 0..64 {
            for end in (off..bytes.len()).step_by(7) {
                agrees(&bytes[off..end]);
            }
        }
        let mut damaged = bytes.to_vec();
        for k in [0, 1, 63, 64, 65, 127, 128, 200] {
            damaged[k] = 0xC0;
            for off in 0..64 {
                agrees(&damaged[off..]);
                if off <= k + 1 {
                    agrees(&damaged[off..k + 1]);
                }
            }
            damaged[k] = bytes[k];
        }
    }

    #[test]
    #[cfg_attr(
        miri,
        ignore = "exhaustive: hours under Miri, which runs only the fallback validator"
    )]
    fn random_text_and_damaged_text() {
        let pieces: [&str; 8] = ["a", "é", "東京", "😀", " ", "ü", "\u{10FFFF}", "\u{FFFD}"];
        let mut seed = 0x1234_5678_u64;
        let mut next = |n: usize| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) as usize % n
        };
        for _ in 0..3000 {
            let mut s = String::new();
            for _ in 0..next(400) {
                s.push_str(pieces[next(pieces.len())]);
            }
            let mut b = s.into_bytes();
            agrees(&b);
            if !b.is_empty() {
                // One byte changed, or the end cut inside a character.
                let k = next(b.len());
                b[k] = next(256) as u8;
                agrees(&b);
                b.truncate(next(b.len()) + 1);
                agrees(&b);
            }
        }
    }
}
