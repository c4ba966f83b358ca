//! Arguments given as a JSON string (`"arguments": "{\"city\": …}"`),
//! decoded incrementally as the string streams.

/// Decodes the content of a JSON string incrementally (for arguments given
/// as a JSON string): escapes, and `\uXXXX` surrogate pairs as one
/// character; a lone surrogate becomes U+FFFD.
#[derive(Debug, Default)]
pub(crate) struct Unescaper {
    opened: bool,
    pub(crate) done: bool,
    backslash: bool,
    hex: Option<(u8, u32)>,
    high: Option<u32>,
}

impl Unescaper {
    /// No escape is half read: everything pushed so far is in the output.
    pub(crate) fn is_clean(&self) -> bool {
        !self.backslash && self.hex.is_none() && self.high.is_none()
    }

    pub(crate) fn push(&mut self, bytes: &[u8], out: &mut Vec<u8>) {
        for &b in bytes {
            if self.done {
                return;
            }
            if let Some((n, v)) = self.hex {
                let d = (b as char).to_digit(16).unwrap_or(0);
                let v = v * 16 + d;
                if n == 3 {
                    self.hex = None;
                    self.unit(v, out);
                } else {
                    self.hex = Some((n + 1, v));
                }
                continue;
            }
            if self.backslash {
                self.backslash = false;
                if b == b'u' {
                    self.hex = Some((0, 0));
                    continue;
                }
                self.flush_high(out);
                out.push(match b {
                    b'n' => b'\n',
                    b't' => b'\t',
                    b'r' => b'\r',
                    b'b' => 0x08,
                    b'f' => 0x0c,
                    other => other,
                });
                continue;
            }
            match b {
                b'\\' => self.backslash = true,
                b'"' if !self.opened => self.opened = true,
                b'"' => {
                    self.flush_high(out);
                    self.done = true;
                }
                _ => {
                    self.flush_high(out);
                    out.push(b);
                }
            }
        }
    }

    fn unit(&mut self, v: u32, out: &mut Vec<u8>) {
        if let Some(h) = self.high.take() {
            if (0xDC00..0xE000).contains(&v) {
                let c = 0x10000 + ((h - 0xD800) << 10) + (v - 0xDC00);
                push_char(c, out);
                return;
            }
            push_char(0xFFFD, out);
        }
        if (0xD800..0xDC00).contains(&v) {
            self.high = Some(v);
        } else {
            push_char(v, out);
        }
    }

    fn flush_high(&mut self, out: &mut Vec<u8>) {
        if self.high.take().is_some() {
            push_char(0xFFFD, out);
        }
    }
}

fn push_char(c: u32, out: &mut Vec<u8>) {
    let ch = char::from_u32(c).unwrap_or('\u{FFFD}');
    let mut buf = [0u8; 4];
    out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unescape(s: &str, chunk: usize) -> String {
        let mut u = Unescaper::default();
        let mut out = Vec::new();
        for piece in s.as_bytes().chunks(chunk) {
            u.push(piece, &mut out);
        }
        assert!(u.done);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn unescapes_across_chunks() {
        let s = r#""{\"city\": \"Z\u00fcrich \ud83d\ude00\"}\n\t\\""#;
        for chunk in 1..=s.len() {
            assert_eq!(unescape(s, chunk), "{\"city\": \"Zürich 😀\"}\n\t\\");
        }
        assert_eq!(unescape(r#""\ud83d x""#, 1), "\u{FFFD} x");
        assert_eq!(unescape(r#""\ude00""#, 1), "\u{FFFD}");
    }

    #[test]
    fn clean_only_between_escapes() {
        let mut u = Unescaper::default();
        let mut out = Vec::new();
        let mut clean = Vec::new();
        for &b in br#""a\n\u00e9\ud83d\ude00""# {
            u.push(&[b], &mut out);
            clean.push(u.is_clean());
        }
        // after `"`, `a`, `\n`, `\u00e9`, the whole pair, the closing quote
        let at: Vec<usize> = (0..clean.len()).filter(|&i| clean[i]).collect();
        assert_eq!(at, [0, 1, 3, 9, 21, 22]);
    }
}
