//! Where a byte is in the stream: an [`Offset`], counted from the stream's
//! first byte. The pending buffer, the chunks fed, the readers and call
//! assembly all speak of bytes by offset; turning one into an index of a
//! buffer, or a distance, goes through the few operations here, so no
//! conversion is written twice and none can panic on what a model writes.

/// An absolute offset in the stream: the number of bytes before it. It
/// leaves the crate as a `u64` ([`Offset::get`]: a diagnostic's offset,
/// `Parser::offset`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(transparent)]
pub(crate) struct Offset(u64);

impl Offset {
    /// The stream's first byte.
    pub(crate) const START: Offset = Offset(0);

    /// The offset `n` bytes into the stream (the crate's offsets all count
    /// on from [`START`](Self::START): only tests make one from a number).
    #[cfg(test)]
    pub(crate) const fn new(n: u64) -> Offset {
        Offset(n)
    }

    /// The number of bytes before it, as the public API reports offsets.
    #[inline]
    pub(crate) const fn get(self) -> u64 {
        self.0
    }

    /// The offset `n` bytes on: a byte of the stream, or its end (`n` is a
    /// count of bytes read, never a limit).
    #[inline]
    #[must_use]
    pub(crate) const fn after(self, n: usize) -> Offset {
        // (`usize` is never wider than 64 bits on the targets Rust has.)
        Offset(self.0 + n as u64)
    }

    /// The offset `n` bytes back, where the caller knows a byte it read
    /// (a literal's start, what a reader holds): never before the stream.
    #[inline]
    #[must_use]
    pub(crate) const fn before(self, n: usize) -> Offset {
        Offset(self.0 - n as u64)
    }

    /// The number of bytes from `earlier` to here; 0 if `earlier` is not
    /// earlier.
    #[inline]
    pub(crate) fn since(self, earlier: Offset) -> usize {
        // (A distance past `usize::MAX` cannot be held anywhere: clamped.)
        usize::try_from(self.0.saturating_sub(earlier.0)).unwrap_or(usize::MAX)
    }

    /// The index of this offset in bytes that begin at offset `start` and
    /// reach it (a chunk that holds it, the pending bytes up to `pos`):
    /// exact, for the paths every byte takes; where the caller cannot know
    /// that, [`index_in`](Self::index_in).
    #[inline]
    pub(crate) fn index_from(self, start: Offset) -> usize {
        debug_assert!(start <= self, "{self:?} is before {start:?}");
        // (Such an index is below the length of a buffer in memory.)
        (self.0 - start.0) as usize
    }

    /// The index of this offset in `len` bytes that begin at offset
    /// `start`, kept within them: 0 before them, `len` after them.
    #[inline]
    pub(crate) fn index_in(self, start: Offset, len: usize) -> usize {
        self.since(start).min(len)
    }
}

#[cfg(test)]
mod tests {
    use super::Offset;

    #[test]
    fn distances_and_indexes_are_clamped_never_wrapped() {
        let (a, b) = (Offset::new(10), Offset::new(14));
        assert_eq!(a.after(4), b);
        assert_eq!(b.before(4), a);
        assert_eq!(b.index_from(a), 4);
        assert_eq!(b.since(a), 4);
        assert_eq!(a.since(b), 0);
        assert_eq!(b.index_in(a, 8), 4);
        assert_eq!(b.index_in(a, 3), 3);
        assert_eq!(a.index_in(b, 8), 0);
        assert_eq!(Offset::new(u64::MAX).since(Offset::new(0)), usize::MAX);
    }
}
