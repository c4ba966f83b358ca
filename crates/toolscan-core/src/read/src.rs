//! Where the bytes a block holds are: a view of the pending buffer by
//! absolute offset, so that a reader (or a call's arguments) can refer to
//! bytes already held rather than copy them.

/// Where the pending bytes of the block are, for arguments that are a span
/// of them.
#[derive(Clone, Copy, Debug)]
pub(crate) struct HeldBytes<'a> {
    /// The pending buffer.
    pub buf: &'a [u8],
    /// Absolute offset of `buf[0]`.
    pub start: u64,
}

impl<'a> HeldBytes<'a> {
    pub(crate) fn span(&self, at: u64, len: usize) -> &'a [u8] {
        let from = (at.saturating_sub(self.start) as usize).min(self.buf.len());
        let to = (from + len).min(self.buf.len());
        &self.buf[from..to]
    }
}
