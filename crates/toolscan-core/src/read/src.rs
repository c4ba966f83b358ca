//! Where the bytes a block holds are: a view of the pending buffer by
//! absolute offset, so that a reader (or a call's arguments) can refer to
//! bytes already held rather than copy them.

use crate::offset::Offset;

/// Where the pending bytes of the block are, for arguments that are a span
/// of them.
#[derive(Clone, Copy, Debug)]
pub(crate) struct HeldBytes<'a> {
    /// The pending buffer.
    pub buf: &'a [u8],
    /// Absolute offset of `buf[0]`.
    pub start: Offset,
}

impl<'a> HeldBytes<'a> {
    /// The `len` bytes from offset `at` on, as far as they are held (from
    /// the first byte held if `at` is before it).
    #[inline]
    pub(crate) fn span(&self, at: Offset, len: usize) -> &'a [u8] {
        let from = at.index_in(self.start, self.buf.len());
        let rest = &self.buf[from..];
        &rest[..len.min(rest.len())]
    }

    /// The bytes from offset `from` to offset `to` (none if `to` is not
    /// later), as [`span`](Self::span) finds them.
    #[inline]
    pub(crate) fn between(&self, from: Offset, to: Offset) -> &'a [u8] {
        self.span(from, to.since(from))
    }
}
