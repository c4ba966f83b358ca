//! The fields of one SSE block ([`Blocks`](super::blocks::Blocks)), read
//! as the WHATWG `EventSource` reads them: `data` lines joined with `\n`,
//! the last `event`, the last `id` without a NUL, the last `retry` of
//! digits only; comments and unknown fields skipped; one space after the
//! colon dropped. The fields borrow the block: the data of a single
//! `data` line is a slice of it (serde_json's `Reference::Borrowed`), only
//! data of several lines is copied (joined).

use std::borrow::Cow;

use memchr::{memchr, memchr2};

/// A field's value is not UTF-8.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct NotUtf8;

/// `bytes` as text, checked with vector instructions.
fn text(bytes: &[u8]) -> Result<&str, NotUtf8> {
    simdutf8::basic::from_utf8(bytes).map_err(|_| NotUtf8)
}

/// One event's fields, borrowed from its block.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Fields<'a> {
    /// The `data` lines, joined with `\n`; `None` without one (an empty
    /// `data` line is `Some("")`).
    pub(crate) data: Option<Cow<'a, str>>,
    /// The last `event`.
    pub(crate) event: Option<&'a str>,
    /// The last `id` that holds no NUL.
    pub(crate) id: Option<&'a str>,
    /// The last `retry` that is a number.
    pub(crate) retry: Option<u64>,
}

/// The fields of `block` (a whole block: its lines and the blank line
/// that ends it); `None` when it holds none (blank lines, comments,
/// unknown fields), which is no event. An error when a field's value is
/// not UTF-8.
pub(crate) fn fields(block: &[u8]) -> Result<Option<Fields<'_>>, NotUtf8> {
    let mut fields = Fields::default();
    let mut any = false;
    let mut rest = block;
    while let Some((line, after)) = next_line(rest) {
        rest = after;
        if line.is_empty() {
            break;
        }
        let (name, value) = match memchr(b':', line) {
            Some(colon) => {
                let value = &line[colon + 1..];
                (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &b""[..]),
        };
        match name {
            b"data" => {
                let value = text(value)?;
                fields.data = Some(match fields.data.take() {
                    None => Cow::Borrowed(value),
                    Some(before) => {
                        let mut joined = before.into_owned();
                        joined.push('\n');
                        joined.push_str(value);
                        Cow::Owned(joined)
                    }
                });
            }
            b"event" => fields.event = Some(text(value)?),
            b"id" if !value.contains(&0) => fields.id = Some(text(value)?),
            b"retry" => {
                let value = text(value)?;
                if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit()) {
                    continue;
                }
                match value.parse() {
                    Ok(retry) => fields.retry = Some(retry),
                    Err(_) => continue,
                }
            }
            _ => continue,
        }
        any = true;
    }
    Ok(any.then_some(fields))
}

/// The first line of `bytes` without its line end, and what follows the
/// line end; `None` for no bytes.
fn next_line(bytes: &[u8]) -> Option<(&[u8], &[u8])> {
    if bytes.is_empty() {
        return None;
    }
    Some(match memchr2(b'\n', b'\r', bytes) {
        None => (bytes, &[]),
        Some(at) if bytes[at..].starts_with(b"\r\n") => (&bytes[..at], &bytes[at + 2..]),
        Some(at) => (&bytes[..at], &bytes[at + 1..]),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(d: &str) -> Fields<'_> {
        Fields {
            data: Some(Cow::Borrowed(d)),
            ..Fields::default()
        }
    }

    /// Blocks and their fields.
    #[test]
    fn a_table_of_blocks_and_their_fields() {
        let table: &[(&[u8], Option<Fields>)] = &[
            (b"\n", None),
            (b": ping\n\n", None),
            (b"unknown: x\n\n", None),
            (b"data: a\n\n", Some(data("a"))),
            (b"data:a\n\n", Some(data("a"))),
            (b"data:  a\n\n", Some(data(" a"))),
            (b"data\n\n", Some(data(""))),
            (b"data:\n\n", Some(data(""))),
            (b"data: a\r\ndata: b\rdata: c\n\n", Some(data("a\nb\nc"))),
            (b"data: a\n: note\ndata: b\n\n", Some(data("a\nb"))),
            (
                b"data: {\"a\":\"b: c\"}\n\n",
                Some(data("{\"a\":\"b: c\"}")),
            ),
            (
                b"event: one\nevent: two\nid: 1\nid: a\0b\nretry: 70\nretry: x\ndata: d\n\n",
                Some(Fields {
                    data: Some(Cow::Borrowed("d")),
                    event: Some("two"),
                    id: Some("1"),
                    retry: Some(70),
                }),
            ),
            (
                b"id\n\n",
                Some(Fields {
                    id: Some(""),
                    ..Fields::default()
                }),
            ),
            (b"id: a\0b\n\n", None),
            (b"retry: 99999999999999999999999\n\n", None),
            (b"retry: -1\n\n", None),
            (b"retry:\n\n", None),
        ];
        for (block, want) in table {
            assert_eq!(
                fields(block).ok(),
                Some(want.clone()),
                "{:?}",
                String::from_utf8_lossy(block)
            );
        }
    }

    /// One data line is borrowed from the block; more are joined.
    #[test]
    fn one_data_line_is_borrowed() {
        let one = fields(b"data: a\n\n").ok().flatten().and_then(|f| f.data);
        assert!(matches!(one, Some(Cow::Borrowed("a"))));
        let two = fields(b"data: a\ndata: b\n\n")
            .ok()
            .flatten()
            .and_then(|f| f.data);
        assert!(matches!(two, Some(Cow::Owned(s)) if s == "a\nb"));
    }

    /// A field's value that is not UTF-8 is an error; an unknown field's
    /// or a comment's is not read.
    #[test]
    fn values_not_utf8() {
        for bad in [
            &b"data: \xff\n\n"[..],
            b"event: \xff\n\n",
            b"id: \xff\n\n",
            b"retry: \xff\n\n",
        ] {
            assert!(fields(bad).is_err(), "{:?}", String::from_utf8_lossy(bad));
        }
        assert_eq!(fields(b": \xff\nother: \xff\n\n"), Ok(None));
    }
}
