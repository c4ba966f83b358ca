//! Decoding XML/HTML character references in text that arrives in pieces.
//!
//! Recognised: the five named references `&amp;`, `&lt;`, `&gt;`, `&quot;`
//! and `&apos;` (case-sensitive), and numeric references `&#NNN;` (decimal)
//! and `&#xHH;` / `&#XHH;` (hexadecimal) naming a Unicode scalar value.
//! Anything else, an unknown name, a surrogate or an out-of-range code point
//! included, is copied as written.

/// Longest reference name, the bytes between `&` and `;`, that can still be
/// decoded: `#x0010FFFF` is ten bytes. A run of name bytes longer than this
/// is never a reference, so at most this many bytes plus the `&` are ever
/// held back.
const MAX_NAME: usize = 10;

/// Decodes the references in `input`, appending the result to `out`, and
/// returns how many bytes of `input` were consumed.
///
/// With `at_end` set, `input` is the last of the text: everything is
/// consumed. Otherwise decoding stops before a trailing `&` that could still
/// begin a reference once more bytes arrive (it is followed by at most
/// [`MAX_NAME`] bytes, all ASCII letters, digits or `#`, and no `;` yet); the
/// caller keeps `input[consumed..]` and passes it again in front of the next
/// piece. Decoding the pieces this way gives exactly the bytes of decoding
/// the whole text at once.
///
/// Bytes other than references are copied unchanged, so a piece may end in
/// the middle of a UTF-8 character.
pub(crate) fn decode_prefix(input: &[u8], at_end: bool, out: &mut Vec<u8>) -> usize {
    out.reserve(input.len());
    let mut copied = 0;
    let mut from = 0;
    while let Some(off) = memchr::memchr(b'&', input.get(from..).unwrap_or_default()) {
        let amp = from + off;
        let rest = input.get(amp + 1..).unwrap_or_default();
        match reference(rest) {
            Reference::Decoded { len, ch } => {
                out.extend_from_slice(&input[copied..amp]);
                let mut buf = [0u8; 4];
                out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                copied = amp + 1 + len;
                from = copied;
            }
            Reference::Incomplete if !at_end => {
                out.extend_from_slice(&input[copied..amp]);
                return amp;
            }
            Reference::Incomplete | Reference::Verbatim => from = amp + 1,
        }
    }
    out.extend_from_slice(&input[copied..]);
    input.len()
}

/// What follows an `&`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Reference {
    /// A reference to `ch` whose name and `;` take `len` bytes after the `&`
    /// (`len` is at least 2 and at most `MAX_NAME + 1`).
    Decoded {
        /// Bytes of the name plus the `;`.
        len: usize,
        /// The character it stands for.
        ch: char,
    },
    /// The bytes end before a `;` or a byte that rules a reference out, and
    /// there are at most [`MAX_NAME`] of them: more bytes decide.
    Incomplete,
    /// Not a reference: the `&` is plain text.
    Verbatim,
}

/// Reads the reference, if any, at the start of `rest` (the bytes after an
/// `&`).
fn reference(rest: &[u8]) -> Reference {
    let name_len = rest
        .iter()
        .take(MAX_NAME + 1)
        .position(|&b| !(b.is_ascii_alphanumeric() || b == b'#'));
    let Some(name_len) = name_len else {
        return if rest.len() <= MAX_NAME {
            Reference::Incomplete
        } else {
            Reference::Verbatim
        };
    };
    if rest.get(name_len) != Some(&b';') {
        return Reference::Verbatim;
    }
    match rest.get(..name_len).and_then(decode_name) {
        Some(ch) => Reference::Decoded {
            len: name_len + 1,
            ch,
        },
        None => Reference::Verbatim,
    }
}

/// The character a reference name (without `&` and `;`) stands for.
fn decode_name(name: &[u8]) -> Option<char> {
    match name {
        b"amp" => Some('&'),
        b"lt" => Some('<'),
        b"gt" => Some('>'),
        b"quot" => Some('"'),
        b"apos" => Some('\''),
        [b'#', b'x' | b'X', hex @ ..] => number(hex, 16),
        [b'#', dec @ ..] => number(dec, 10),
        _ => None,
    }
}

/// The scalar value written with `digits` (at least one) in `radix`.
fn number(digits: &[u8], radix: u32) -> Option<char> {
    if digits.is_empty() {
        return None;
    }
    let mut value: u32 = 0;
    for &d in digits {
        let d = char::from(d).to_digit(radix)?;
        value = value.checked_mul(radix)?.checked_add(d)?;
    }
    char::from_u32(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Decodes the whole text at once.
    fn one_shot(input: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        assert_eq!(decode_prefix(input, true, &mut out), input.len());
        out
    }

    /// Decodes `input` fed in the given pieces, holding back what each call
    /// leaves unconsumed.
    fn in_pieces(pieces: &[&[u8]]) -> Vec<u8> {
        let mut out = Vec::new();
        let mut pending = Vec::new();
        for (i, piece) in pieces.iter().enumerate() {
            pending.extend_from_slice(piece);
            let at_end = i + 1 == pieces.len();
            let used = decode_prefix(&pending, at_end, &mut out);
            assert!(used <= pending.len());
            assert!(pending.len() - used <= MAX_NAME + 1, "held back too much");
            pending.drain(..used);
        }
        assert!(pending.is_empty());
        out
    }

    #[test]
    fn table() {
        let cases: &[(&str, &str)] = &[
            ("", ""),
            ("plain text", "plain text"),
            ("a &amp; b", "a & b"),
            ("&lt;tag&gt;", "<tag>"),
            ("&quot;q&quot; &apos;a&apos;", "\"q\" 'a'"),
            ("&amp;lt;", "&lt;"),
            ("&#65;&#x42;&#X43;&#x6a;", "ABCj"),
            ("&#0065;", "A"),
            ("&#9731; &#x2603;", "☃ ☃"),
            ("&#x1F600;", "😀"),
            ("&#x10FFFF;", "\u{10ffff}"),
            ("&#x0010FFFF;", "\u{10ffff}"),
            ("&#0;", "\u{0}"),
            // Not scalar values: kept as written.
            ("&#xD800;", "&#xD800;"),
            ("&#x110000;", "&#x110000;"),
            ("&#99999999999;", "&#99999999999;"),
            ("&#xFFFFFFFFF;", "&#xFFFFFFFFF;"),
            // Malformed or unknown: kept as written.
            ("&#;", "&#;"),
            ("&#x;", "&#x;"),
            ("&#12a;", "&#12a;"),
            ("&#xG1;", "&#xG1;"),
            ("&nbsp;", "&nbsp;"),
            ("&AMP;", "&AMP;"),
            ("&;", "&;"),
            ("& amp;", "& amp;"),
            ("&amp", "&amp"),
            ("a && b", "a && b"),
            ("&&amp;", "&&"),
            ("&abcdefghijk;", "&abcdefghijk;"),
            ("x &", "x &"),
            ("&#x26;lt;", "&lt;"),
            ("é&amp;雪", "é&雪"),
        ];
        for &(input, want) in cases {
            assert_eq!(
                String::from_utf8(one_shot(input.as_bytes())).unwrap(),
                want,
                "input {input:?}"
            );
        }
    }

    #[test]
    fn holds_back_what_may_still_become_a_reference() {
        let cases: &[(&str, usize, &str)] = &[
            ("a &am", 2, "a "),
            ("a &", 2, "a "),
            ("&#x26", 0, ""),
            ("x&#", 1, "x"),
            ("&amp;&q", 5, "&"),
            ("&abcdefghij", 0, ""),
            // Eleven name bytes without `;`: never a reference.
            ("&abcdefghijk", 12, "&abcdefghijk"),
            // A byte that cannot be in a name decides at once.
            ("&am p", 5, "&am p"),
            ("&am;", 4, "&am;"),
        ];
        for &(input, used, want) in cases {
            let mut out = Vec::new();
            assert_eq!(
                decode_prefix(input.as_bytes(), false, &mut out),
                used,
                "{input:?}"
            );
            assert_eq!(out, want.as_bytes(), "{input:?}");
        }
    }

    #[test]
    fn pieces_decode_like_the_whole() {
        let inputs: &[&str] = &[
            "a &amp; b &lt;c&gt; &quot;d&quot;",
            "&#9731;&#x1F600;&#x0010FFFF;&#xD800;",
            "&&&amp;&am&ampx;&#;&#x;",
            "&abcdefghij;&abcdefghijk;&abcdefghij",
            "tail &amp",
            "tail &",
            "é&lt;雪&gt;😀",
            "if a &lt; b &amp;&amp; c &gt; d { return &apos;x&apos;; }",
        ];
        for input in inputs {
            let input = input.as_bytes();
            let whole = one_shot(input);
            assert_eq!(in_pieces(&[input]), whole);
            for cut in 0..=input.len() {
                assert_eq!(
                    in_pieces(&[&input[..cut], &input[cut..]]),
                    whole,
                    "{:?} cut at {cut}",
                    String::from_utf8_lossy(input)
                );
                // The same, with the text's end announced by an empty piece.
                assert_eq!(in_pieces(&[&input[..cut], &input[cut..], b""]), whole);
            }
            let bytes: Vec<&[u8]> = input.chunks(1).collect();
            assert_eq!(in_pieces(&bytes), whole);
            let threes: Vec<&[u8]> = input.chunks(3).collect();
            assert_eq!(in_pieces(&threes), whole);
        }
    }

    #[test]
    fn random_pieces_decode_like_the_whole() {
        const TOKENS: &[&str] = &[
            "&", "amp", "lt", ";", "#", "x", "X", "41", "2603", "d800", "0010FFFF", "é", "a", " ",
            "&amp;", "&#",
        ];
        let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = move |n: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n as u64) as usize
        };
        for _ in 0..5_000 {
            let len = next(12);
            let text: String = (0..len).map(|_| TOKENS[next(TOKENS.len())]).collect();
            let input = text.as_bytes();
            let whole = one_shot(input);
            let mut pieces = Vec::new();
            let mut rest = input;
            while !rest.is_empty() {
                let (piece, tail) = rest.split_at(1 + next(rest.len()));
                pieces.push(piece);
                rest = tail;
            }
            assert_eq!(in_pieces(&pieces), whole, "{text:?} in {pieces:?}");
        }
    }

    #[test]
    fn appends_after_existing_output() {
        let mut out = b"x".to_vec();
        assert_eq!(decode_prefix(b"&gt;", true, &mut out), 4);
        assert_eq!(out, b"x>");
    }
}
