//! Cutting byte buffers into UTF-8 text without splitting a character.

/// How many bytes a character whose first byte is `lead` has (1 for a
/// byte that begins none: ASCII, a continuation or an invalid byte).
#[inline]
pub(crate) fn char_len(lead: u8) -> usize {
    match lead {
        0xC0..=0xDF => 2,
        0xE0..=0xEF => 3,
        0xF0..=0xF7 => 4,
        _ => 1,
    }
}

/// Length of the longest prefix of `buf` that does not end inside a
/// (possibly valid) multi-byte UTF-8 sequence.
///
/// Bytes after the cut are held back until the rest of the character
/// arrives. Cutting only there makes lossy decoding compositional:
/// `lossy(a) + lossy(b) == lossy(a + b)` whenever `a` was cut this way, which
/// is what makes text deltas independent of how the input was chunked.
pub(crate) fn complete_prefix_len(buf: &[u8]) -> usize {
    let n = buf.len();
    for back in 1..=n.min(3) {
        let b = buf[n - back];
        if b & 0xC0 == 0x80 {
            continue; // continuation byte: look further back for the lead
        }
        let need = char_len(b);
        return if need > back { n - back } else { n };
    }
    n
}

/// The bytes as text if they are UTF-8. Short all-ASCII input, the common
/// token-sized chunk, skips the general validator (which costs about 75
/// instructions for a 4-byte chunk, a fifth of the whole feed, measured with
/// callgrind on `toolscan parse --chunk 4`).
#[inline]
#[allow(unsafe_code)]
pub(crate) fn as_text(bytes: &[u8]) -> Option<&str> {
    if bytes.len() <= 16 && bytes.iter().fold(0u8, |a, &b| a | b) < 0x80 {
        // SAFETY: every byte is below 0x80, and any sequence of ASCII bytes
        // is valid UTF-8.
        return Some(unsafe { std::str::from_utf8_unchecked(bytes) });
    }
    std::str::from_utf8(bytes).ok()
}

/// `bytes` as text if they are UTF-8 (ending on a whole character), else
/// `None` (the caller finds out where the error is): the one check
/// `feed_with` makes of a chunk of 64 bytes or more.
///
/// `simdutf8` (AVX2 at best), or std's validator under
/// `TOOLSCAN_SIMD=portable`. An AVX-512 version of the same algorithm of
/// our own was 1.4–1.6× faster than `simdutf8` on 64 KiB chunks alone,
/// an eighth off `auto` end to end, and twice as slow on 64-byte ones; the
/// stream adapters feed text, which needs no check at all, so it was
/// removed (`benches/simd.rs`, BENCHMARKS.md).
#[inline]
pub(crate) fn check(bytes: &[u8]) -> Option<&str> {
    match crate::scan::cpu::level() {
        crate::scan::cpu::Level::Portable => std::str::from_utf8(bytes).ok(),
        _ => simdutf8::basic::from_utf8(bytes).ok(),
    }
}

/// Decodes bytes as UTF-8, replacing invalid sequences with U+FFFD.
#[cfg(test)]
pub(crate) fn lossy(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn as_text_agrees_with_the_validator() {
        let samples: [&[u8]; 6] = [
            b"",
            b"abcd",
            b"0123456789abcdef",
            "aé".as_bytes(),
            &[b'a', 0xC3],
            &[0x80, b'a'],
        ];
        for s in samples {
            assert_eq!(as_text(s), std::str::from_utf8(s).ok(), "{s:?}");
        }
    }

    /// `check` agrees with std's validator on text cut anywhere, damaged,
    /// or cut inside a character, at every place in memory.
    #[test]
    #[cfg_attr(
        miri,
        ignore = "simdutf8 0.1.5 offsets its prefetch pointer past the end of long inputs (an out-of-bounds `add`, fixed upstream, not released), which Miri reports"
    )]
    fn check_agrees_with_the_validator() {
        let pieces: [&str; 8] = ["a", "é", "東京", "😀", " ", "ü", "\u{10FFFF}", "\u{FFFD}"];
        let mut seed = 0x1234_5678_u64;
        let mut next = |n: usize| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) as usize % n
        };
        let agrees = |b: &[u8]| assert_eq!(check(b), std::str::from_utf8(b).ok(), "{b:02x?}");
        for _ in 0..300 {
            let mut s = String::new();
            for _ in 0..next(200) {
                s.push_str(pieces[next(pieces.len())]);
            }
            let mut b = s.into_bytes();
            for off in [0, 1, 31] {
                agrees(b.get(off..).unwrap_or_default());
            }
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

    #[test]
    fn holds_incomplete_tails() {
        let s = "aé😀".as_bytes(); // 61 | C3 A9 | F0 9F 98 80
        assert_eq!(complete_prefix_len(&s[..1]), 1);
        assert_eq!(complete_prefix_len(&s[..2]), 1);
        assert_eq!(complete_prefix_len(&s[..3]), 3);
        assert_eq!(complete_prefix_len(&s[..4]), 3);
        assert_eq!(complete_prefix_len(&s[..5]), 3);
        assert_eq!(complete_prefix_len(&s[..6]), 3);
        assert_eq!(complete_prefix_len(s), 7);
        assert_eq!(complete_prefix_len(b""), 0);
        // stray continuation bytes and invalid leads are not held
        assert_eq!(complete_prefix_len(&[0x80, 0x80, 0x80, 0x80]), 4);
        assert_eq!(complete_prefix_len(&[b'a', 0xFF]), 2);
    }

    #[test]
    fn lossy_is_compositional_at_cuts() {
        let inputs: [&[u8]; 4] = [
            "Zürich 東京 😀".as_bytes(),
            &[0xE2, 0x41, 0xF0, 0x9F, 0x98, b'x', 0xC3],
            &[0xED, 0xA0, 0x80, 0xF4, 0x90],
            &[0xC0, 0x80, 0xFF, 0xE0, 0x80, 0x80],
        ];
        for input in inputs {
            let whole = lossy(input);
            for split in 0..=input.len() {
                let cut = complete_prefix_len(&input[..split]);
                let joined = lossy(&input[..cut]) + &lossy(&input[cut..]);
                assert_eq!(joined, whole, "split at {split} of {input:?}");
            }
        }
    }
}
