//! Writing raw text as the content of a JSON string.
//!
//! The input may be a piece of a longer text that ends (or starts) inside a
//! multi-byte UTF-8 character: bytes from `0x80` up are copied unchanged, so
//! escaping the pieces one after another gives exactly the escaping of the
//! whole text.

/// For each byte, what follows the backslash when it must be escaped, or 0
/// when it is copied as is. `u` stands for the six-byte `\u00XX` form.
static ESCAPE: [u8; 256] = escape_table();

/// The bytes [`ESCAPE`] escapes, as a 256-bit set (bit `b` of word
/// `b / 64`).
pub(crate) const ESCAPED: [u64; 4] = {
    let table = escape_table();
    let mut set = [0u64; 4];
    let mut b = 0;
    while b < 256 {
        if table[b] != 0 {
            set[b / 64] |= 1 << (b % 64);
        }
        b += 1;
    }
    set
};

/// Lowercase hexadecimal digits, for the `\u00XX` form.
const HEX: &[u8; 16] = b"0123456789abcdef";

/// Builds [`ESCAPE`]: every control character below `0x20` gets the short
/// form if JSON has one and `\u00XX` otherwise; `"` and `\` get a backslash;
/// everything else (DEL and all non-ASCII bytes included) is copied.
const fn escape_table() -> [u8; 256] {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 0x20 {
        t[i] = b'u';
        i += 1;
    }
    t[0x08] = b'b';
    t[0x09] = b't';
    t[0x0a] = b'n';
    t[0x0c] = b'f';
    t[0x0d] = b'r';
    t[b'"' as usize] = b'"';
    t[b'\\' as usize] = b'\\';
    t
}

/// Appends `raw` to `out` escaped as the content of a JSON string, without
/// the surrounding quotes.
///
/// `"` and `\` get a backslash; newline, carriage return, tab, backspace and
/// form feed take their short escapes (`\n`, `\r`, `\t`, `\b`, `\f`); other
/// bytes below `0x20` become `\u00XX` with lowercase hex digits. DEL and
/// every byte from `0x80` up are copied unchanged, so `raw` may start or end
/// in the middle of a UTF-8 character. Runs of bytes that need no escape are
/// copied in one go.
pub(crate) fn push_json_str_content(raw: &[u8], out: &mut Vec<u8>) {
    out.reserve(raw.len());
    if raw.len() <= 16 {
        // A token's bytes, one by one: calls to `memcpy` cost more.
        for &b in raw {
            match ESCAPE[usize::from(b)] {
                0 => out.push(b),
                e => push_escape(b, e, out),
            }
        }
        return;
    }
    let mut start = 0;
    for i in escapes(raw) {
        let b = raw[i];
        out.extend_from_slice(&raw[start..i]);
        push_escape(b, ESCAPE[usize::from(b)], out);
        start = i + 1;
    }
    out.extend_from_slice(&raw[start..]);
}

/// Writes `raw` escaped as [`push_json_str_content`] does into `out` from
/// `at`, where the caller made room for it (its exact length, see
/// [`json_str_content_len`], and eight bytes more); returns where it ends,
/// or `None` if the room ran out (then what `out` holds from `at` on is
/// unspecified).
///
/// For a long text with many escapes (source code in a parameter, written
/// once when its call completes): eight bytes are stored at a time whether
/// or not they all belong to the text, and the next store starts after the
/// last byte that does — no call to `memcpy` for each short run between
/// two escapes.
pub(crate) fn write_json_str_content(raw: &[u8], out: &mut [u8], at: usize) -> Option<usize> {
    let (mut i, mut o) = (0, at);
    while let (Some(word), Some(dst)) = (raw.get(i..i + 8), out.get_mut(o..o + 8)) {
        dst.copy_from_slice(word);
        let mask = escape_mask(u64::from_le_bytes(word.try_into().unwrap_or_default()));
        if mask == 0 {
            i += 8;
            o += 8;
            continue;
        }
        let k = mask.trailing_zeros() as usize / 8;
        i += k;
        o += k;
        let b = raw[i];
        o = write_escape(b, ESCAPE[usize::from(b)], out, o)?;
        i += 1;
    }
    for &b in raw.get(i..).unwrap_or_default() {
        o = write_escape(b, ESCAPE[usize::from(b)], out, o)?;
    }
    Some(o)
}

/// Each byte as [`push_json_str_content`] writes it, in the low bytes
/// (little-endian), with its length (1, 2 or 6) in the top byte.
static FORMS: [u64; 256] = {
    let table = escape_table();
    let mut forms = [0u64; 256];
    let mut b = 0;
    while b < 256 {
        let form: [u8; 8] = match table[b] {
            0 => [b as u8, 0, 0, 0, 0, 0, 0, 1],
            b'u' => [b'\\', b'u', b'0', b'0', HEX[b >> 4], HEX[b & 0x0f], 0, 6],
            e => [b'\\', e, 0, 0, 0, 0, 0, 2],
        };
        forms[b] = u64::from_le_bytes(form);
        b += 1;
    }
    forms
};

/// Writes byte `b` escaped as [`push_json_str_content`] does at `out[o]`;
/// returns where it ends, or `None` if the room ran out: eight bytes are
/// stored whatever the length (the bytes after the form are left
/// unspecified). For a token's bytes, too few for the word-at-a-time
/// stores of [`write_json_str_content`]: one store and no branch on the
/// byte, which a chunk of source code would mispredict.
#[inline]
pub(crate) fn write_json_str_byte(b: u8, out: &mut [u8], o: usize) -> Option<usize> {
    let form = FORMS[usize::from(b)];
    out.get_mut(o..o + 8)?.copy_from_slice(&form.to_le_bytes());
    Some(o + (form >> 56) as usize)
}

/// Writes byte `b` at `out[o]`, escaped if `e` (its entry in [`ESCAPE`])
/// is not 0; returns where it ends.
fn write_escape(b: u8, e: u8, out: &mut [u8], o: usize) -> Option<usize> {
    // Each length its own store: a slice of a length known only at run
    // time costs a call to `memcpy`.
    match e {
        0 => {
            *out.get_mut(o)? = b;
            Some(o + 1)
        }
        b'u' => {
            let hex = [HEX[usize::from(b >> 4)], HEX[usize::from(b & 0x0f)]];
            let six = [b'\\', b'u', b'0', b'0', hex[0], hex[1]];
            out.get_mut(o..o + 6)?.copy_from_slice(&six);
            Some(o + 6)
        }
        _ => {
            out.get_mut(o..o + 2)?.copy_from_slice(&[b'\\', e]);
            Some(o + 2)
        }
    }
}

/// How many bytes [`push_json_str_content`] appends for `raw`.
pub(crate) fn json_str_content_len(raw: &[u8]) -> usize {
    raw.len()
        + escapes(raw)
            .map(|i| match ESCAPE[usize::from(raw[i])] {
                b'u' => 5,
                _ => 1,
            })
            .sum::<usize>()
}

/// The positions of the bytes of `raw` that need an escape, in order:
/// eight bytes at a time up to the next one.
fn escapes(raw: &[u8]) -> impl Iterator<Item = usize> + '_ {
    let mut i = 0;
    std::iter::from_fn(move || {
        while i < raw.len() {
            if let Some(word) = raw.get(i..i + 8) {
                let mask = escape_mask(u64::from_le_bytes(word.try_into().unwrap_or_default()));
                if mask == 0 {
                    i += 8;
                    continue;
                }
                i += mask.trailing_zeros() as usize / 8;
            }
            let at = i;
            i += 1;
            if ESCAPE[usize::from(raw[at])] != 0 {
                return Some(at);
            }
        }
        None
    })
}

/// The eight bytes of `word` (little-endian) that need an escape — below
/// `0x20`, a `"` or a `\` — as their high bits: 0 if none does. Only the
/// lowest bit set is exact (the "has a zero byte" and "has a byte less
/// than" bit tricks: a borrow may flag a byte above a true one), which is
/// all the caller uses.
#[inline]
fn escape_mask(word: u64) -> u64 {
    const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
    const HIGH: u64 = u64::from_ne_bytes([0x80; 8]);
    let below = |w: u64, n: u64| w.wrapping_sub(ONES * n) & !w & HIGH;
    below(word, 0x20) | below(word ^ (ONES * 0x22), 1) | below(word ^ (ONES * 0x5c), 1)
}

/// The escape of byte `b` (`e`: its entry in [`ESCAPE`], not 0).
fn push_escape(b: u8, e: u8, out: &mut Vec<u8>) {
    if e == b'u' {
        out.extend_from_slice(&[
            b'\\',
            b'u',
            b'0',
            b'0',
            HEX[usize::from(b >> 4)],
            HEX[usize::from(b & 0x0f)],
        ]);
    } else {
        // Two pushes: a slice this short costs a call to `memcpy`.
        out.push(b'\\');
        out.push(e);
    }
}

/// `raw` if [`push_json_str_content`] would append it unchanged (no byte
/// of it needs an escape).
#[inline]
pub(crate) fn as_json_str_content(raw: &[u8]) -> Option<&[u8]> {
    raw.iter()
        .all(|&b| ESCAPE[usize::from(b)] == 0)
        .then_some(raw)
}

/// Appends `raw` to `out` as a whole JSON string: a quote, the escaped
/// content (see [`push_json_str_content`]) and a closing quote.
pub(crate) fn push_json_str(raw: &[u8], out: &mut Vec<u8>) {
    out.reserve(raw.len() + 2);
    out.push(b'"');
    push_json_str_content(raw, out);
    out.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The escaped content of `raw` as text.
    fn content(raw: &[u8]) -> String {
        let mut out = Vec::new();
        push_json_str_content(raw, &mut out);
        String::from_utf8(out).expect("escaping keeps UTF-8 valid")
    }

    #[test]
    fn table() {
        let cases: &[(&str, &str)] = &[
            ("", ""),
            ("Paris", "Paris"),
            ("say \"hi\"", r#"say \"hi\""#),
            (r"C:\dir\file", r"C:\\dir\\file"),
            ("a\nb\r\nc\td", r"a\nb\r\nc\td"),
            ("\u{8}\u{c}", r"\b\f"),
            ("\u{0}\u{1}\u{1f}", r"\u0000\u0001\u001f"),
            ("\u{1b}[0m", r"\u001b[0m"),
            ("\u{b}", r"\u000b"),
            ("\u{7f}", "\u{7f}"),
            ("/ < > & '", "/ < > & '"),
            ("é 雪 ☃ 😀", "é 雪 ☃ 😀"),
            ("\u{2028}\u{2029}", "\u{2028}\u{2029}"),
            ("\"\\\"", r#"\"\\\""#),
        ];
        for &(raw, want) in cases {
            assert_eq!(content(raw.as_bytes()), want, "input {raw:?}");
            assert_eq!(json_str_content_len(raw.as_bytes()), want.len(), "{raw:?}");
            let mut quoted = Vec::new();
            push_json_str(raw.as_bytes(), &mut quoted);
            assert_eq!(quoted, format!("\"{want}\"").into_bytes());
        }
    }

    #[test]
    fn appends_without_touching_what_is_there() {
        let mut out = b"{\"k\":".to_vec();
        push_json_str(b"v\n", &mut out);
        assert_eq!(out, br#"{"k":"v\n""#);
    }

    #[test]
    fn bytes_from_0x80_are_copied_even_when_split() {
        let snow = "☃".as_bytes();
        let mut out = Vec::new();
        push_json_str_content(&snow[..1], &mut out);
        assert_eq!(out, &snow[..1]);
        push_json_str_content(&snow[1..], &mut out);
        assert_eq!(out, snow);
        // Not even invalid UTF-8 is touched.
        out.clear();
        push_json_str_content(&[0xff, b'"', 0xc0], &mut out);
        assert_eq!(out, [0xff, b'\\', b'"', 0xc0]);
    }

    /// A small deterministic generator (xorshift64).
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }

        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
    }

    /// A random string drawn mostly from characters that need care.
    fn random_string(rng: &mut Rng) -> String {
        const POOL: &[char] = &[
            'a',
            'Z',
            '0',
            ' ',
            '"',
            '\\',
            '/',
            '\n',
            '\r',
            '\t',
            '\u{0}',
            '\u{8}',
            '\u{c}',
            '\u{1f}',
            '\u{7f}',
            '\u{80}',
            'é',
            'ÿ',
            '\u{2028}',
            '雪',
            '☃',
            '\u{fffd}',
            '😀',
            '\u{10ffff}',
            '&',
            '<',
        ];
        let len = rng.below(24);
        (0..len).map(|_| POOL[rng.below(POOL.len())]).collect()
    }

    #[test]
    fn random_strings_round_trip_through_serde_json() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for _ in 0..2000 {
            let s = random_string(&mut rng);
            let raw = s.as_bytes();
            let mut whole = Vec::new();
            push_json_str(raw, &mut whole);
            let back: String = serde_json::from_slice(&whole).expect("valid JSON string");
            assert_eq!(back, s);
            assert_eq!(json_str_content_len(raw), whole.len() - 2, "{s:?}");
            // The slice writer, with exactly its room (and the slack), and
            // with too little.
            let len = whole.len() - 2;
            let mut room = vec![0u8; 3 + len + 8];
            assert_eq!(write_json_str_content(raw, &mut room, 3), Some(3 + len));
            assert_eq!(room[3..3 + len], whole[1..whole.len() - 1], "{s:?}");
            if len > 0 {
                let mut short = vec![0u8; len - 1];
                assert_eq!(write_json_str_content(raw, &mut short, 0), None, "{s:?}");
            }
            for cut in 0..=raw.len() {
                let mut pieces = vec![b'"'];
                push_json_str_content(&raw[..cut], &mut pieces);
                push_json_str_content(&raw[cut..], &mut pieces);
                pieces.push(b'"');
                assert_eq!(pieces, whole, "{s:?} cut at {cut}");
            }
        }
    }

    /// The lane of the first byte of `word` that needs an escape, as the
    /// table says.
    fn first_by_table(word: [u8; 8]) -> Option<u32> {
        (0..8).find(|&l| ESCAPE[usize::from(word[l as usize])] != 0)
    }

    #[test]
    fn the_eight_byte_skip_finds_the_first_byte_that_needs_an_escape() {
        let lane = |word: [u8; 8]| {
            let m = escape_mask(u64::from_le_bytes(word));
            (m != 0).then(|| m.trailing_zeros() / 8)
        };
        // Each byte value in each lane, among fillers that need none
        // (ASCII, and high bytes the tricks must not take for low ones).
        for filler in [b'a', 0x7f, 0x80, 0xff, b'!', b'#', b'[', b']'] {
            for b in 0..=0xffu8 {
                for l in 0..8 {
                    let mut word = [filler; 8];
                    word[l] = b;
                    assert_eq!(lane(word), first_by_table(word), "{word:?}");
                }
            }
        }
        // Two bytes: the first one decides, whatever comes after it.
        for a in 0..=0xffu8 {
            for b in 0..=0xffu8 {
                for (i, j) in [(0, 1), (2, 5), (6, 7), (0, 7)] {
                    let mut word = [b'a'; 8];
                    word[i] = a;
                    word[j] = b;
                    assert_eq!(lane(word), first_by_table(word), "{word:?}");
                }
            }
        }
    }

    #[test]
    fn every_byte_value() {
        for b in 0..=0x7fu8 {
            let mut quoted = Vec::new();
            push_json_str(&[b], &mut quoted);
            let back: String = serde_json::from_slice(&quoted).expect("valid JSON string");
            assert_eq!(back.as_bytes(), [b]);
        }
    }

    /// The one-store form of each byte is what the escaper writes, and the
    /// bytes before it stay.
    #[test]
    fn every_byte_in_one_store() {
        for b in 0..=u8::MAX {
            let mut want = b"ab".to_vec();
            push_json_str_content(&[b], &mut want);
            let mut out = *b"ab--------";
            let end = write_json_str_byte(b, &mut out, 2).expect("room");
            assert_eq!(out[..end], want[..], "{b:#04x}");
            assert_eq!(
                write_json_str_byte(b, &mut out, 3),
                None,
                "{b:#04x}: no room"
            );
        }
    }
}
