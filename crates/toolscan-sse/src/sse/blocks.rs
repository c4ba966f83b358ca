//! An SSE byte stream cut into its blocks: the lines of one event up to
//! and with the blank line that ends it, as they came. Sans-IO: the
//! caller [pushes](Blocks::push) the chunks it reads and takes the
//! [blocks](Blocks::next) they complete.
//!
//! A line ends at `\r\n`, `\n` or `\r`; a block at an empty line. The
//! scan looks at each input byte once ([`memchr2`] jumps to the next line
//! end; reading the fields is the block's second and last pass);
//! a block that lies in one chunk is a slice of it (no copy), one that
//! spans chunks is gathered in a buffer of its own. A byte-order mark at
//! the stream's start is dropped; an unfinished block at the end is
//! left unread (what a browser's `EventSource` does).
//!
//! A block whose blank line ends with a CR always ends with CRLF: the LF
//! that follows the CR is the block's, or, when none does (a stream of
//! CR line ends) or it is not known yet (the chunk ends at the CR), one is
//! added and a LF first in the next chunk dropped. So a block's bytes do
//! not depend on where the stream was cut, and it is sent at once (an
//! added LF is an empty line after the blank one: no event).

use bytes::{Buf, Bytes, BytesMut};
use memchr::memchr2;

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// The blocks of one SSE stream.
#[derive(Debug)]
pub(crate) struct Blocks {
    /// Input not yet scanned: the scan goes on from its first byte, in
    /// the state `at`.
    input: Bytes,
    /// The start of the block being read, from earlier chunks: scanned,
    /// no block ends in it.
    carry: BytesMut,
    /// Where the scan stands in the block being read.
    at: At,
    /// The last block ended with a `\r` at the end of the input (and got
    /// a `\n` added): a `\n` first in the next input is the rest of its
    /// line end, and dropped.
    skip_lf: bool,
    /// How much of a byte-order mark the stream has begun with (0 to 3);
    /// `None` once the first byte that is not one was seen.
    bom: Option<usize>,
}

/// The scan's place in a block.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum At {
    /// At the start of a line: a line end here ends the block.
    #[default]
    LineStart,
    /// Inside a line.
    InLine,
    /// Just after a `\r` that ended a line: a `\n` here is the rest of
    /// that line end.
    AfterCr,
}

impl Blocks {
    pub(crate) fn new() -> Blocks {
        Blocks {
            input: Bytes::new(),
            carry: BytesMut::new(),
            at: At::LineStart,
            skip_lf: false,
            bom: Some(0),
        }
    }

    /// Adds the next chunk of the stream. (The caller takes every block
    /// before it pushes again; if it did not, the unscanned input is
    /// copied in front of the chunk.)
    pub(crate) fn push(&mut self, mut chunk: Bytes) {
        if let Some(matched) = self.bom {
            chunk = self.skip_bom(matched, chunk);
        }
        if self.input.is_empty() {
            self.input = chunk;
        } else {
            let mut joined = BytesMut::with_capacity(self.input.len() + chunk.len());
            joined.extend_from_slice(&self.input);
            joined.extend_from_slice(&chunk);
            self.input = joined.freeze();
        }
    }

    /// Drops a byte-order mark at the stream's start, which may come
    /// split over chunks; `matched` of its bytes were seen before.
    fn skip_bom(&mut self, mut matched: usize, mut chunk: Bytes) -> Bytes {
        while matched < BOM.len() && chunk.first() == Some(&BOM[matched]) {
            chunk.advance(1);
            matched += 1;
        }
        if matched == BOM.len() {
            self.bom = None;
            return chunk;
        }
        if chunk.is_empty() {
            self.bom = Some(matched);
            return chunk;
        }
        self.bom = None;
        if matched == 0 {
            return chunk;
        }
        // Not a mark after all: the bytes taken for one are the stream's.
        let mut bytes = BytesMut::with_capacity(matched + chunk.len());
        bytes.extend_from_slice(&BOM[..matched]);
        bytes.extend_from_slice(&chunk);
        bytes.freeze()
    }

    /// The next whole block, blank line included; `None` when the input
    /// pushed so far ends inside one.
    pub(crate) fn next(&mut self) -> Option<Bytes> {
        if self.skip_lf && !self.input.is_empty() {
            self.skip_lf = false;
            if self.input[0] == b'\n' {
                self.input.advance(1);
            }
        }
        match self.scan() {
            Some((end, add_lf)) => {
                self.at = At::LineStart;
                if self.carry.is_empty() && !add_lf {
                    return Some(self.input.split_to(end));
                }
                self.carry.extend_from_slice(&self.input[..end]);
                self.input.advance(end);
                if add_lf {
                    self.carry.extend_from_slice(b"\n");
                }
                Some(self.carry.split().freeze())
            }
            None if self.input.is_empty() => None,
            None => {
                self.carry.extend_from_slice(&self.input);
                self.input = Bytes::new();
                None
            }
        }
    }

    /// Scans the input from the state `at`: the end of the block (just
    /// past its blank line's line end) if it is in the input, and whether
    /// that line end is a CR the block is to end with a LF after (see
    /// [`Blocks`]). Leaves `at` where the input ends otherwise.
    fn scan(&mut self) -> Option<(usize, bool)> {
        let bytes = &self.input[..];
        let mut i = 0;
        loop {
            let &byte = bytes.get(i)?;
            match (self.at, byte) {
                (At::InLine, _) => {
                    let k = memchr2(b'\n', b'\r', &bytes[i..])?;
                    i += k;
                    self.at = if bytes[i] == b'\n' {
                        At::LineStart
                    } else {
                        At::AfterCr
                    };
                    i += 1;
                }
                (At::LineStart, b'\n') => return Some((i + 1, false)),
                (At::LineStart | At::AfterCr, b'\r') => {
                    return Some(match bytes.get(i + 1) {
                        Some(b'\n') => (i + 2, false),
                        Some(_) => (i + 1, true),
                        None => {
                            self.skip_lf = true;
                            (i + 1, true)
                        }
                    });
                }
                (At::AfterCr, b'\n') => {
                    self.at = At::LineStart;
                    i += 1;
                }
                (At::LineStart | At::AfterCr, _) => self.at = At::InLine,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every block `input`, pushed in chunks of `size` bytes, completes.
    fn blocks(input: &[u8], size: usize) -> Vec<Vec<u8>> {
        let mut b = Blocks::new();
        let mut out = Vec::new();
        for chunk in input.chunks(size) {
            b.push(Bytes::copy_from_slice(chunk));
            while let Some(block) = b.next() {
                out.push(block.to_vec());
            }
        }
        out
    }

    /// Inputs and the blocks they are cut into, the same under every
    /// chunk size.
    #[test]
    fn a_table_of_inputs_and_their_blocks() {
        let table: &[(&[u8], &[&[u8]])] = &[
            (b"", &[]),
            (b"data: a", &[]),
            (b"data: a\n", &[]),
            (b"data: a\n\n", &[b"data: a\n\n"]),
            (b"data: a\n\ndata: b\n\n", &[b"data: a\n\n", b"data: b\n\n"]),
            (b"data: a\r\n\r\n", &[b"data: a\r\n\r\n"]),
            // A lone CR ends a line, and a block; the LF after it is its
            // line end's rest.
            (
                b"data: a\r\rdata: b\r\r",
                &[b"data: a\r\r\n", b"data: b\r\r\n"],
            ),
            (
                b"data: a\r\r\ndata: b\n\n",
                &[b"data: a\r\r\n", b"data: b\n\n"],
            ),
            (b"data: a\r\n\n", &[b"data: a\r\n\n"]),
            (b"data: a\n\r\n", &[b"data: a\n\r\n"]),
            (
                b"data: a\n\rdata: b\n\n",
                &[b"data: a\n\r\n", b"data: b\n\n"],
            ),
            (
                b"data: a\r\n\r\ndata: b\r\n\r\n",
                &[b"data: a\r\n\r\n", b"data: b\r\n\r\n"],
            ),
            (b"\n\ndata: a\n\n", &[b"\n", b"\n", b"data: a\n\n"]),
            (
                b"event: e\ndata: a\ndata: b\n\n",
                &[b"event: e\ndata: a\ndata: b\n\n"],
            ),
            (b": ping\n\n", &[b": ping\n\n"]),
            // The byte-order mark goes, once; not-quite-marks stay.
            (b"\xEF\xBB\xBFdata: a\n\n", &[b"data: a\n\n"]),
            (b"\xEF\xBB\xBF\n", &[b"\n"]),
            (b"\xEF\xBBdata: a\n\n", &[b"\xEF\xBBdata: a\n\n"]),
            (
                b"data: a\n\n\xEF\xBB\xBFdata: b\n\n",
                &[b"data: a\n\n", b"\xEF\xBB\xBFdata: b\n\n"],
            ),
        ];
        for &(input, want) in table {
            for size in 1..=input.len().max(1) {
                assert_eq!(
                    blocks(input, size),
                    want,
                    "{:?} in chunks of {size}",
                    String::from_utf8_lossy(input)
                );
            }
        }
    }

    /// A block inside one chunk is a slice of it, not a copy.
    #[test]
    fn a_block_in_one_chunk_is_not_copied() {
        let chunk = Bytes::from_static(b"data: a\n\ndata: b\n\n");
        let mut b = Blocks::new();
        b.push(chunk.clone());
        let first = b.next().unwrap_or_default();
        assert_eq!(first.as_ptr(), chunk.as_ptr());
        assert_eq!(b.next().unwrap_or_default().as_ptr(), chunk[9..].as_ptr());
        assert_eq!(b.next(), None);
    }

    /// An unfinished block is held until it ends, then is one block.
    #[test]
    fn an_unfinished_block_is_held() {
        let mut b = Blocks::new();
        b.push(Bytes::from_static(b"data: a\nda"));
        assert_eq!(b.next(), None);
        b.push(Bytes::from_static(b"ta: b\n\ndata"));
        assert_eq!(b.next().as_deref(), Some(&b"data: a\ndata: b\n\n"[..]));
        assert_eq!(b.next(), None);
        b.push(Bytes::from_static(b": c\n\n"));
        assert_eq!(b.next().as_deref(), Some(&b"data: c\n\n"[..]));
    }
}
