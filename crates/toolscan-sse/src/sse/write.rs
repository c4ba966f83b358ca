//! An SSE event written straight into the output buffer: `event`,
//! `data`, `id`, `retry`, in that order, a data line per line of the data,
//! line ends as LF, a blank line after (the bytes `sse_stream`'s encoder
//! makes, which the tests check).

use std::fmt::Write as _;

use bytes::BytesMut;

use super::fields::Fields;

/// Why an event cannot be written: its field would hold a line end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Unwritable {
    /// The `event` holds a CR or LF.
    Event,
    /// The `id` holds a CR, LF or NUL.
    Id,
}

/// Appends the event of `sse`'s fields to `out`; an event that cannot be
/// written leaves `out` as it was.
pub(crate) fn write(out: &mut BytesMut, sse: &Fields<'_>) -> Result<(), Unwritable> {
    if sse.event.is_some_and(|e| e.contains(['\r', '\n'])) {
        return Err(Unwritable::Event);
    }
    if sse.id.is_some_and(|i| i.contains(['\r', '\n', '\0'])) {
        return Err(Unwritable::Id);
    }
    let fields = sse.event.map_or(0, |e| e.len() + 8)
        + sse.data.as_ref().map_or(0, |d| d.len() + 7)
        + sse.id.map_or(0, |i| i.len() + 5)
        + sse.retry.map_or(0, |_| 28);
    out.reserve(fields + 1);
    if let Some(event) = sse.event {
        line(out, b"event: ", event.as_bytes());
    }
    if let Some(data) = &sse.data {
        data_lines(out, data.as_bytes());
    }
    if let Some(id) = sse.id {
        line(out, b"id: ", id.as_bytes());
    }
    if let Some(retry) = sse.retry {
        // (Writing to a `BytesMut` does not fail.)
        let _ = writeln!(out, "retry: {retry}");
    }
    out.extend_from_slice(b"\n");
    Ok(())
}

/// Appends an event of `data` alone.
pub(crate) fn data(out: &mut BytesMut, data: &str) {
    out.reserve(data.len() + 8);
    data_lines(out, data.as_bytes());
    out.extend_from_slice(b"\n");
}

fn line(out: &mut BytesMut, prefix: &[u8], value: &[u8]) {
    out.extend_from_slice(prefix);
    out.extend_from_slice(value);
    out.extend_from_slice(b"\n");
}

/// A `data:` line for each line of `data` (CRLF, CR and LF each end one;
/// an empty last line is kept).
fn data_lines(out: &mut BytesMut, mut data: &[u8]) {
    while let Some(at) = memchr::memchr2(b'\r', b'\n', data) {
        line(out, b"data: ", &data[..at]);
        let end = if data[at..].starts_with(b"\r\n") {
            at + 2
        } else {
            at + 1
        };
        data = &data[end..];
    }
    line(out, b"data: ", data);
}

#[cfg(test)]
mod tests {
    use super::*;
    use sse_stream::Sse;
    use std::borrow::Cow;

    /// Every field alone and together, data of every line ending: the
    /// bytes `sse_stream`'s encoder makes, or its refusal.
    #[test]
    fn writes_what_sse_streams_encoder_writes() {
        let datas = [
            None,
            Some(""),
            Some("{\"a\":1}"),
            Some("a\nb"),
            Some("a\r\nb"),
            Some("a\rb"),
            Some("a\r\r\nb\n"),
            Some("\n"),
            Some("\r"),
            Some("\r\n\r\n"),
            Some("é\n\u{1f600}"),
        ];
        let events = [None, Some(""), Some("message"), Some("a\nb"), Some("a\rb")];
        let ids = [None, Some(""), Some("7"), Some("a\0b"), Some("a\nb")];
        let retries = [None, Some(0), Some(u64::MAX)];
        let mut cases = 0;
        for data in datas {
            for event in events {
                for id in ids {
                    for retry in retries {
                        let sse = Sse {
                            event: event.map(str::to_owned),
                            data: data.map(str::to_owned),
                            id: id.map(str::to_owned),
                            retry,
                        };
                        let fields = Fields {
                            event,
                            data: data.map(Cow::Borrowed),
                            id,
                            retry,
                        };
                        let mut out = BytesMut::from(&b"before"[..]);
                        let ours = write(&mut out, &fields);
                        match sse.clone().encode() {
                            Ok(theirs) => {
                                assert_eq!(ours, Ok(()), "{sse:?}");
                                assert_eq!(&out[6..], &theirs[..], "{sse:?}");
                            }
                            Err(_) => {
                                assert!(ours.is_err(), "{sse:?}");
                                assert_eq!(&out[..], b"before", "{sse:?}");
                            }
                        }
                        cases += 1;
                    }
                }
            }
        }
        assert_eq!(cases, 11 * 5 * 5 * 3);
    }
}
