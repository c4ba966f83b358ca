//! `invalidUtf8: "throw"`: bytes are checked before the parser sees them,
//! across chunk boundaries (a character may be split between chunks), so
//! that a chunk holding bytes that are not UTF-8 is refused whole and the
//! parser is left as it was.

/// The bytes of a character begun at the end of the last chunk accepted.
#[derive(Debug, Default, Clone)]
pub(crate) struct Strict {
    /// The character's first bytes (fewer than it needs; empty when the
    /// last chunk ended on a character boundary).
    pending: Vec<u8>,
}

/// How many bytes a character starting with `lead` takes (1 for a byte no
/// character starts with: `from_utf8` then rejects it).
fn width(lead: u8) -> usize {
    match lead {
        0xC0..=0xDF => 2,
        0xE0..=0xEF => 3,
        0xF0..=0xF7 => 4,
        _ => 1,
    }
}

impl Strict {
    /// Checks `chunk`, which follows the bytes accepted so far; on success
    /// remembers the character it leaves unfinished. On a refusal nothing
    /// changes: the caller feeds nothing of the chunk.
    pub(crate) fn check(&mut self, chunk: &[u8]) -> Result<(), Refusal> {
        let mut rest = chunk;
        let mut pending = self.pending.clone();
        if let Some(&lead) = pending.first() {
            let need = width(lead) - pending.len();
            let take = need.min(rest.len());
            pending.extend_from_slice(&rest[..take]);
            rest = &rest[take..];
            if take < need {
                // Still unfinished, but what there is must be a good start.
                return match std::str::from_utf8(&pending) {
                    Err(e) if e.error_len().is_some() => Err(Refusal::Pending(self.pending.len())),
                    _ => {
                        self.pending = pending;
                        Ok(())
                    }
                };
            }
            if std::str::from_utf8(&pending).is_err() {
                return Err(Refusal::Pending(self.pending.len()));
            }
            pending.clear();
        }
        let done = chunk.len() - rest.len();
        match std::str::from_utf8(rest) {
            Ok(_) => {}
            Err(e) if e.error_len().is_none() => {
                pending.extend_from_slice(&rest[e.valid_up_to()..]);
            }
            Err(e) => return Err(Refusal::At(done + e.valid_up_to())),
        }
        self.pending = pending;
        Ok(())
    }

    /// At the end of the answer: whether a character is left unfinished
    /// (how many of its bytes there are).
    pub(crate) fn unfinished(&self) -> usize {
        self.pending.len()
    }
}

/// Where the bytes that are not UTF-8 start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// In the chunk, this many bytes from its start.
    At(usize),
    /// In the character the last chunk left unfinished, which began this
    /// many bytes before the chunk.
    Pending(usize),
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds the chunks in turn; the first refusal, with the chunk's index.
    fn run(chunks: &[&[u8]]) -> Result<usize, (usize, Refusal)> {
        let mut s = Strict::default();
        for (i, c) in chunks.iter().enumerate() {
            s.check(c).map_err(|r| (i, r))?;
        }
        Ok(s.unfinished())
    }

    #[test]
    fn characters_split_anywhere_are_accepted() {
        let text = "aé€𝄞b".as_bytes();
        for cut in 0..=text.len() {
            for cut2 in cut..=text.len() {
                let chunks = [&text[..cut], &text[cut..cut2], &text[cut2..]];
                assert_eq!(run(&chunks), Ok(0), "cuts {cut} {cut2}");
            }
        }
        assert_eq!(run(&[b"a\xE2\x82"]), Ok(2));
    }

    #[test]
    fn bad_bytes_are_placed_in_the_chunk_or_in_the_character_before_it() {
        assert_eq!(run(&[b"ab\xFFc"]), Err((0, Refusal::At(2))));
        assert_eq!(run(&[b"ok", b"x\xC3("]), Err((1, Refusal::At(1))));
        // A lead byte, then a chunk that does not continue it.
        assert_eq!(run(&[b"a\xC3", b"(b"]), Err((1, Refusal::Pending(1))));
        assert_eq!(
            run(&[b"a\xF0\x9D", b"\x84("]),
            Err((1, Refusal::Pending(2)))
        );
        // A continuation byte no character began.
        assert_eq!(run(&[b"\x80"]), Err((0, Refusal::At(0))));
        // An encoded surrogate.
        assert_eq!(run(&[b"\xED", b"\xA0\x80"]), Err((1, Refusal::Pending(1))));
    }

    #[test]
    fn a_refused_chunk_leaves_the_state_as_it_was() {
        let mut s = Strict::default();
        s.check(b"a\xE2").expect("a start");
        assert!(s.check(b"(").is_err());
        s.check(b"\x82\xAC").expect("the character goes on");
        assert_eq!(s.unfinished(), 0);
    }
}
