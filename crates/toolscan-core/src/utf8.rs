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
