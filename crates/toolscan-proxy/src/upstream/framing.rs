//! How an HTTP/1.1 answer's body is delimited (RFC 9112 §6.3), and its
//! bytes taken out of what was read: sans-IO, a [`Framing`] is given the
//! bytes read so far and says how far it got ([`Decoded`]).
//!
//! Data is handed on as it is in the read buffer (`split_to`, no copy):
//! a chunked SSE event is one chunk, so an event read is an event passed
//! on.

use axum::http::header::{self, HeaderMap};
use bytes::{Buf, Bytes, BytesMut};

/// The most a chunk-size line or the trailers may take: past it, the body
/// is refused.
const MAX_LINE: usize = 64 * 1024;

/// How the body is delimited, and how far through it the reader is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Framing {
    /// `Content-Length` (or no body at all: 0): this many bytes are left.
    Length(u64),
    /// `Transfer-Encoding: chunked`, at this point of its grammar.
    Chunked(Chunk),
    /// Delimited by the upstream closing the connection: every byte until
    /// then is the body.
    Close,
}

/// Where a chunked body's reader is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Chunk {
    /// At a chunk-size line.
    Size,
    /// In a chunk's data: this many bytes are left.
    Data(u64),
    /// After a chunk's data: its CRLF is next.
    DataEnd,
    /// After the last (0-size) chunk: trailer lines, then a blank line.
    Trailers,
    /// The body is over.
    Done,
}

/// What [`Framing::decode`] made of the bytes read so far.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Decoded {
    /// Body bytes, taken from the front of the buffer.
    Data(Bytes),
    /// The buffer holds no complete piece: read more.
    More,
    /// The body is over; what is left in the buffer is not the body's.
    End,
    /// The bytes are not a body of this framing.
    Invalid(&'static str),
}

impl Framing {
    /// The next piece of the body from `buf` (its front consumed); `eof`:
    /// nothing more will be read.
    pub(crate) fn decode(&mut self, buf: &mut BytesMut, eof: bool) -> Decoded {
        match self {
            Framing::Length(0) => Decoded::End,
            Framing::Length(_) if buf.is_empty() && eof => {
                Decoded::Invalid("the upstream closed the connection before the answer's end")
            }
            Framing::Length(_) if buf.is_empty() => Decoded::More,
            Framing::Length(left) => {
                let n = (*left).min(buf.len() as u64);
                *left -= n;
                // `n` is at most `buf.len()`: it fits a usize.
                Decoded::Data(buf.split_to(n as usize).freeze())
            }
            Framing::Close if !buf.is_empty() => Decoded::Data(buf.split().freeze()),
            Framing::Close if eof => Decoded::End,
            Framing::Close => Decoded::More,
            Framing::Chunked(chunk) => {
                let decoded = chunked(chunk, buf);
                if eof && matches!(decoded, Decoded::More) {
                    return Decoded::Invalid(
                        "the upstream closed the connection before the answer's end",
                    );
                }
                decoded
            }
        }
    }
}

/// How the answer to a request is delimited (RFC 9112 §6.3), and whether
/// its connection may carry another request after it: `head_request`, it
/// answers a `HEAD`; `minor`, its `HTTP/1.x` version.
pub(crate) fn of_answer(
    head_request: bool,
    status: u16,
    minor: u8,
    headers: &HeaderMap,
) -> Result<(Framing, bool), &'static str> {
    let connection = |token: &str| {
        headers
            .get_all(header::CONNECTION)
            .iter()
            .flat_map(|v| v.as_bytes().split(|&b| b == b','))
            .any(|t| t.trim_ascii().eq_ignore_ascii_case(token.as_bytes()))
    };
    let mut keep_alive = if minor == 0 {
        connection("keep-alive")
    } else {
        !connection("close")
    };
    if head_request || status == 204 || status == 304 || (100..200).contains(&status) {
        return Ok((Framing::Length(0), keep_alive));
    }
    let codings = headers.get_all(header::TRANSFER_ENCODING);
    if codings.iter().next().is_some() {
        // The last coding says how the body ends; a length beside it is
        // not to be trusted, and neither is the connection after it.
        let last = codings
            .iter()
            .flat_map(|v| v.as_bytes().split(|&b| b == b','))
            .map(<[u8]>::trim_ascii)
            .rfind(|t| !t.is_empty());
        let chunked = last.is_some_and(|t| t.eq_ignore_ascii_case(b"chunked"));
        keep_alive &= chunked && !headers.contains_key(header::CONTENT_LENGTH);
        let framing = if chunked {
            Framing::Chunked(Chunk::Size)
        } else {
            Framing::Close
        };
        return Ok((framing, keep_alive));
    }
    let mut length = None;
    for value in headers.get_all(header::CONTENT_LENGTH) {
        for part in value.as_bytes().split(|&b| b == b',') {
            let part = part.trim_ascii();
            let n = std::str::from_utf8(part)
                .ok()
                .filter(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
                .and_then(|p| p.parse::<u64>().ok())
                .ok_or("an invalid Content-Length")?;
            if length.is_some_and(|l| l != n) {
                return Err("Content-Length values that differ");
            }
            length = Some(n);
        }
    }
    Ok(match length {
        Some(n) => (Framing::Length(n), keep_alive),
        None => (Framing::Close, false),
    })
}

/// One step of a chunked body: data, the end, or more to read.
fn chunked(chunk: &mut Chunk, buf: &mut BytesMut) -> Decoded {
    loop {
        match *chunk {
            Chunk::Size if buf.is_empty() => return Decoded::More,
            Chunk::Size => match plain_size(buf).map_or_else(
                || httparse::parse_chunk_size(buf),
                |read| Ok(httparse::Status::Complete(read)),
            ) {
                Ok(httparse::Status::Complete((used, size))) => {
                    buf.advance(used);
                    *chunk = if size == 0 {
                        Chunk::Trailers
                    } else {
                        Chunk::Data(size)
                    };
                }
                Ok(httparse::Status::Partial) if buf.len() > MAX_LINE => {
                    return Decoded::Invalid("a chunk-size line longer than 64 KiB")
                }
                Ok(httparse::Status::Partial) => return Decoded::More,
                Err(_) => return Decoded::Invalid("an invalid chunk size"),
            },
            Chunk::Data(left) => {
                if buf.is_empty() {
                    return Decoded::More;
                }
                let n = left.min(buf.len() as u64);
                // `n` is at most `buf.len()`: it fits a usize.
                let data = buf.split_to(n as usize).freeze();
                *chunk = if n < left {
                    Chunk::Data(left - n)
                } else if buf.starts_with(b"\r\n") {
                    // The CRLF after the data came with it, as it mostly
                    // does: taken now, not on the next call.
                    buf.advance(2);
                    Chunk::Size
                } else {
                    Chunk::DataEnd
                };
                return Decoded::Data(data);
            }
            Chunk::DataEnd => {
                if buf.len() < 2 {
                    return Decoded::More;
                }
                if &buf[..2] != b"\r\n" {
                    return Decoded::Invalid("a chunk's data does not end in CRLF");
                }
                buf.advance(2);
                *chunk = Chunk::Size;
            }
            Chunk::Trailers => {
                let mut headers = [httparse::EMPTY_HEADER; 64];
                match httparse::parse_headers(buf, &mut headers) {
                    Ok(httparse::Status::Complete((used, _))) => {
                        buf.advance(used);
                        *chunk = Chunk::Done;
                    }
                    Ok(httparse::Status::Partial) if buf.len() > MAX_LINE => {
                        return Decoded::Invalid("trailers longer than 64 KiB")
                    }
                    Ok(httparse::Status::Partial) => return Decoded::More,
                    Err(_) => return Decoded::Invalid("invalid trailers"),
                }
            }
            Chunk::Done => return Decoded::End,
        }
    }
}

/// A chunk-size line of hex digits and CRLF alone, as servers write it:
/// how long it is and the size it says (`None` for anything else, which
/// `httparse` reads: extensions, whitespace, an incomplete line, an error).
fn plain_size(buf: &[u8]) -> Option<(usize, u64)> {
    let mut size: u64 = 0;
    // At most 16 digits: a u64.
    for (i, &b) in buf.iter().enumerate().take(17) {
        let digit = match b {
            b'0'..=b'9' => b - b'0',
            b'a'..=b'f' => b - b'a' + 10,
            b'A'..=b'F' => b - b'A' + 10,
            b'\r' if i > 0 && buf.get(i + 1) == Some(&b'\n') => return Some((i + 2, size)),
            _ => return None,
        };
        size = (size << 4) | u64::from(digit);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Everything `framing` makes of `input` fed in pieces of `step`
    /// bytes, then the end of the connection: the data joined, and how it
    /// ended (`Ok(the bytes after the body)` at the body's end,
    /// `Err(why)`).
    fn run(mut framing: Framing, input: &[u8], step: usize) -> (Vec<u8>, Result<Vec<u8>, String>) {
        let mut buf = BytesMut::new();
        let mut data = Vec::new();
        let mut fed = 0;
        loop {
            let eof = fed == input.len();
            match framing.decode(&mut buf, eof) {
                Decoded::Data(d) => data.extend_from_slice(&d),
                Decoded::End => {
                    // What is not the body: read, and not read yet.
                    let mut rest = buf.to_vec();
                    rest.extend_from_slice(&input[fed..]);
                    return (data, Ok(rest));
                }
                Decoded::Invalid(why) => return (data, Err(why.to_owned())),
                Decoded::More => {
                    assert!(!eof, "More at the end of the input");
                    let next = (fed + step).min(input.len());
                    buf.extend_from_slice(&input[fed..next]);
                    fed = next;
                }
            }
        }
    }

    #[test]
    fn each_framing_reads_its_body_under_any_cut() {
        let chunked = || Framing::Chunked(Chunk::Size);
        /// The framing, its input, the body, how it ends.
        type Case = (
            Framing,
            &'static [u8],
            &'static [u8],
            Result<&'static [u8], &'static str>,
        );
        let table: &[Case] = &[
            (Framing::Length(0), b"", b"", Ok(b"")),
            (Framing::Length(5), b"hello", b"hello", Ok(b"")),
            (Framing::Length(5), b"helloNEXT", b"hello", Ok(b"NEXT")),
            (
                Framing::Length(5),
                b"hel",
                b"hel",
                Err("the upstream closed the connection before the answer's end"),
            ),
            (Framing::Close, b"all of it", b"all of it", Ok(b"")),
            (Framing::Close, b"", b"", Ok(b"")),
            (chunked(), b"0\r\n\r\n", b"", Ok(b"")),
            (
                chunked(),
                b"5\r\nhello\r\n1;ext=1\r\n!\r\n0\r\n\r\nNEXT",
                b"hello!",
                Ok(b"NEXT"),
            ),
            (
                chunked(),
                b"A\r\n0123456789\r\n0\r\nX-Trailer: 1\r\n\r\n",
                b"0123456789",
                Ok(b""),
            ),
            (
                chunked(),
                b"5\r\nhello\r\n",
                b"hello",
                Err("the upstream closed the connection before the answer's end"),
            ),
            (
                chunked(),
                b"5\r\nhelloXY",
                b"hello",
                Err("a chunk's data does not end in CRLF"),
            ),
            (chunked(), b"zz\r\n", b"", Err("an invalid chunk size")),
            (
                chunked(),
                b"ffffffffffffffffff\r\n",
                b"",
                Err("an invalid chunk size"),
            ),
        ];
        for (framing, input, body, end) in table {
            for step in 1..=input.len().max(1) {
                let (data, got) = run(framing.clone(), input, step);
                let input = String::from_utf8_lossy(input);
                assert_eq!(data, *body, "{framing:?} {input:?} in steps of {step}");
                let want = end.map(<[u8]>::to_vec).map_err(str::to_owned);
                assert_eq!(got, want, "{framing:?} {input:?} in steps of {step}");
            }
        }
    }

    #[test]
    fn a_plain_chunk_size_line_reads_as_httparse_reads_it() {
        let lines: &[&[u8]] = &[
            b"0\r\n",
            b"1a\r\nxx",
            b"FFFF\r\n",
            b"ffffffffffffffff\r\n",
            b"10000000000000000\r\n",
            b"1;ext\r\n",
            b"1 \r\n",
            b"\r\n",
            b"1\r",
            b"1\rx",
            b"12",
            b"g\r\n",
        ];
        for line in lines {
            let plain = plain_size(line);
            let httparse = match httparse::parse_chunk_size(line) {
                Ok(httparse::Status::Complete(read)) => Some(read),
                _ => None,
            };
            // Where it reads a line, it reads it as httparse does; the rest
            // (`None`) is httparse's to read.
            if plain.is_some() {
                assert_eq!(plain, httparse, "{:?}", String::from_utf8_lossy(line));
            }
        }
        let taken: Vec<bool> = lines.iter().map(|l| plain_size(l).is_some()).collect();
        assert_eq!(
            taken,
            [true, true, true, true, false, false, false, false, false, false, false, false]
        );
        assert_eq!(plain_size(b"1a\r\nxx"), Some((4, 26)));
    }

    #[test]
    fn a_chunk_size_line_without_end_is_bounded() {
        let mut framing = Framing::Chunked(Chunk::Size);
        let mut buf = BytesMut::from(&[b'1'; MAX_LINE + 1][..]);
        assert_eq!(
            framing.decode(&mut buf, false),
            Decoded::Invalid("an invalid chunk size")
        );
        let mut framing = Framing::Chunked(Chunk::Size);
        let mut buf = BytesMut::from(&b"1;"[..]);
        buf.extend_from_slice(&[b'x'; MAX_LINE]);
        assert_eq!(
            framing.decode(&mut buf, false),
            Decoded::Invalid("a chunk-size line longer than 64 KiB")
        );
    }

    #[test]
    fn the_framing_and_reuse_of_an_answer_come_from_its_head() {
        let chunked = Framing::Chunked(Chunk::Size);
        /// HEAD?, the status, the minor version, the headers, what it is.
        type Case = (
            bool,
            u16,
            u8,
            &'static [(&'static str, &'static str)],
            Result<(Framing, bool), &'static str>,
        );
        let table: &[Case] = &[
            (
                false,
                200,
                1,
                &[("content-length", "12")],
                Ok((Framing::Length(12), true)),
            ),
            (
                false,
                200,
                1,
                &[("content-length", "12, 12")],
                Ok((Framing::Length(12), true)),
            ),
            (
                false,
                200,
                1,
                &[("content-length", "12"), ("content-length", "13")],
                Err("Content-Length values that differ"),
            ),
            (
                false,
                200,
                1,
                &[("content-length", "+12")],
                Err("an invalid Content-Length"),
            ),
            (
                false,
                200,
                1,
                &[("content-length", "")],
                Err("an invalid Content-Length"),
            ),
            (
                false,
                200,
                1,
                &[("transfer-encoding", "chunked")],
                Ok((chunked.clone(), true)),
            ),
            (
                false,
                200,
                1,
                &[("transfer-encoding", "gzip, Chunked")],
                Ok((chunked.clone(), true)),
            ),
            (
                false,
                200,
                1,
                &[("transfer-encoding", "chunked"), ("content-length", "5")],
                Ok((chunked.clone(), false)),
            ),
            (
                false,
                200,
                1,
                &[("transfer-encoding", "chunked, gzip")],
                Ok((Framing::Close, false)),
            ),
            (false, 200, 1, &[], Ok((Framing::Close, false))),
            (
                false,
                200,
                1,
                &[("content-length", "3"), ("connection", "keep-alive, Close")],
                Ok((Framing::Length(3), false)),
            ),
            (
                false,
                200,
                0,
                &[("content-length", "3")],
                Ok((Framing::Length(3), false)),
            ),
            (
                false,
                200,
                0,
                &[("content-length", "3"), ("connection", "Keep-Alive")],
                Ok((Framing::Length(3), true)),
            ),
            (
                true,
                200,
                1,
                &[("content-length", "99")],
                Ok((Framing::Length(0), true)),
            ),
            (false, 204, 1, &[], Ok((Framing::Length(0), true))),
            (
                false,
                304,
                1,
                &[("transfer-encoding", "chunked")],
                Ok((Framing::Length(0), true)),
            ),
        ];
        for (head, status, minor, headers, want) in table {
            let mut map = HeaderMap::new();
            for (name, value) in *headers {
                map.append(
                    header::HeaderName::from_static(name),
                    header::HeaderValue::from_static(value),
                );
            }
            let got = of_answer(*head, *status, *minor, &map);
            assert_eq!(got, *want, "HEAD {head}, {status}, 1.{minor}, {headers:?}");
        }
    }
}
