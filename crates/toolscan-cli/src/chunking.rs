//! Chunk plans: how `toolscan parse` cuts its input into the pieces it feeds
//! the parser (`--chunk N`, `--chunk random:SEED`, or as read).
//!
//! The [`Chunker`] works as a stream: blocks arrive as they are read, pieces
//! of the planned sizes leave, and at most one piece is buffered, so memory
//! does not grow with the input. Whatever the plan, the pieces cover the
//! input exactly once, in order.

use std::fmt;
use std::num::NonZeroUsize;
use std::str::FromStr;

/// The largest piece `--chunk random:SEED` feeds.
pub const MAX_RANDOM_PIECE: u64 = 64;

/// How the input is cut into pieces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChunkPlan {
    /// Feed each block as it was read (no `--chunk`).
    AsRead,
    /// Pieces of exactly N bytes (the last may be shorter).
    Fixed(NonZeroUsize),
    /// Pieces of pseudo-random sizes in `1..=64`, reproducible from a seed.
    Random(u64),
}

impl fmt::Display for ChunkPlan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ChunkPlan::AsRead => f.write_str("as-read"),
            ChunkPlan::Fixed(n) => write!(f, "{n}"),
            ChunkPlan::Random(seed) => write!(f, "random:{seed}"),
        }
    }
}

impl FromStr for ChunkPlan {
    type Err = String;

    /// Parses `N` (N ≥ 1) or `random:SEED` (SEED a `u64`).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if let Some(seed) = s.strip_prefix("random:") {
            return seed
                .parse::<u64>()
                .map(ChunkPlan::Random)
                .map_err(|_| format!("seed `{seed}` is not an unsigned 64-bit integer"));
        }
        match s.parse::<usize>() {
            Ok(n) => NonZeroUsize::new(n)
                .map(ChunkPlan::Fixed)
                .ok_or_else(|| "chunk size must be at least 1".to_owned()),
            Err(_) => Err("expected a chunk size N ≥ 1 or `random:SEED`".to_owned()),
        }
    }
}

/// SplitMix64 (Steele, Lea & Flood): a tiny deterministic generator, plenty
/// for chunk sizes.
#[derive(Clone, Debug)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    /// A generator seeded with `seed`.
    pub fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }

    /// The next 64 pseudo-random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// The sequence of piece sizes of a plan (`None`: as read).
#[derive(Clone, Debug)]
enum Sizes {
    AsRead,
    Fixed(usize),
    Random(SplitMix64),
}

impl Sizes {
    /// The size of the next piece; always ≥ 1.
    fn next_size(&mut self) -> usize {
        match self {
            Sizes::AsRead => usize::MAX,
            Sizes::Fixed(n) => *n,
            // The value is in 1..=64, which fits any usize.
            Sizes::Random(rng) => (1 + rng.next_u64() % MAX_RANDOM_PIECE) as usize,
        }
    }
}

/// Cuts a stream of blocks into the pieces of a [`ChunkPlan`].
#[derive(Clone, Debug)]
pub struct Chunker {
    sizes: Sizes,
    /// Size of the piece being assembled.
    want: usize,
    /// The start of that piece, when a block ended inside it.
    pending: Vec<u8>,
}

impl Chunker {
    /// A chunker for `plan`.
    pub fn new(plan: ChunkPlan) -> Self {
        let mut sizes = match plan {
            ChunkPlan::AsRead => Sizes::AsRead,
            ChunkPlan::Fixed(n) => Sizes::Fixed(n.get()),
            ChunkPlan::Random(seed) => Sizes::Random(SplitMix64::new(seed)),
        };
        let want = sizes.next_size();
        Chunker {
            sizes,
            want,
            pending: Vec::new(),
        }
    }

    /// Takes the next block of input and passes every piece it completes to
    /// `sink`, in order. Stops at the first error of `sink`.
    pub fn push<E>(
        &mut self,
        mut data: &[u8],
        sink: &mut impl FnMut(&[u8]) -> Result<(), E>,
    ) -> Result<(), E> {
        if matches!(self.sizes, Sizes::AsRead) {
            return if data.is_empty() { Ok(()) } else { sink(data) };
        }
        while !data.is_empty() {
            let missing = self.want - self.pending.len();
            if data.len() < missing {
                self.pending.extend_from_slice(data);
                break;
            }
            let (head, rest) = data.split_at(missing);
            data = rest;
            if self.pending.is_empty() {
                sink(head)?;
            } else {
                self.pending.extend_from_slice(head);
                let piece = std::mem::take(&mut self.pending);
                sink(&piece)?;
                // Keep the allocation for the next piece.
                self.pending = piece;
                self.pending.clear();
            }
            self.want = self.sizes.next_size();
        }
        Ok(())
    }

    /// The input ended: passes the last, possibly short, piece to `sink`.
    pub fn finish<E>(&mut self, sink: &mut impl FnMut(&[u8]) -> Result<(), E>) -> Result<(), E> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let piece = std::mem::take(&mut self.pending);
        sink(&piece)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::convert::Infallible;

    /// Runs `input`, delivered in blocks of the given sizes (cycled), through
    /// a chunker; returns the pieces.
    fn pieces(plan: ChunkPlan, input: &[u8], blocks: &[usize]) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        let mut sink = |p: &[u8]| -> Result<(), Infallible> {
            out.push(p.to_vec());
            Ok(())
        };
        let mut c = Chunker::new(plan);
        let mut rest = input;
        let mut i = 0;
        while !rest.is_empty() {
            let n = blocks[i % blocks.len()].min(rest.len());
            let (block, r) = rest.split_at(n);
            c.push(block, &mut sink).unwrap();
            rest = r;
            i += 1;
        }
        c.finish(&mut sink).unwrap();
        out
    }

    fn plans() -> Vec<ChunkPlan> {
        let mut plans = vec![ChunkPlan::AsRead];
        for n in [1, 2, 3, 7, 64, 1000, usize::MAX] {
            plans.push(ChunkPlan::Fixed(NonZeroUsize::new(n).unwrap()));
        }
        for seed in [0, 7, 42, u64::MAX] {
            plans.push(ChunkPlan::Random(seed));
        }
        plans
    }

    #[test]
    fn every_plan_covers_the_input_exactly_once_in_order() {
        let input: Vec<u8> = (0..5000u32).map(|i| (i % 251) as u8).collect();
        for plan in plans() {
            for blocks in [&[1][..], &[3, 5], &[64], &[8192], &[0, 13, 1, 100]] {
                for len in [0, 1, 2, 63, 64, 65, 999, input.len()] {
                    let input = &input[..len];
                    let got = pieces(plan, input, blocks);
                    assert!(got.iter().all(|p| !p.is_empty()), "{plan} {blocks:?}");
                    assert_eq!(got.concat(), input, "{plan} {blocks:?} {len}");
                }
            }
        }
    }

    #[test]
    fn fixed_pieces_have_the_planned_size() {
        let input = [b'x'; 100];
        let plan = ChunkPlan::Fixed(NonZeroUsize::new(7).unwrap());
        for blocks in [&[1][..], &[5, 9], &[100]] {
            let got = pieces(plan, &input, blocks);
            let sizes: Vec<usize> = got.iter().map(Vec::len).collect();
            let mut want = vec![7; 14];
            want.push(2);
            assert_eq!(sizes, want, "{blocks:?}");
        }
    }

    #[test]
    fn random_pieces_are_reproducible_and_in_range() {
        let input = [b'y'; 4000];
        let a = pieces(ChunkPlan::Random(7), &input, &[1]);
        let b = pieces(ChunkPlan::Random(7), &input, &[8192]);
        let c = pieces(ChunkPlan::Random(8), &input, &[8192]);
        let sizes = |p: &[Vec<u8>]| p.iter().map(Vec::len).collect::<Vec<_>>();
        assert_eq!(sizes(&a), sizes(&b), "independent of how the input is read");
        assert_ne!(sizes(&b), sizes(&c), "depends on the seed");
        let s = sizes(&b);
        assert!(s[..s.len() - 1].iter().all(|&n| (1..=64).contains(&n)));
        assert!(s.iter().any(|&n| n > 1) && s.iter().any(|&n| n < 64));
    }

    #[test]
    fn as_read_passes_blocks_through() {
        let got = pieces(ChunkPlan::AsRead, b"abcdefgh", &[3]);
        assert_eq!(got, vec![b"abc".to_vec(), b"def".to_vec(), b"gh".to_vec()]);
    }

    #[test]
    fn parses_plans() {
        assert_eq!(
            "3".parse::<ChunkPlan>(),
            Ok(ChunkPlan::Fixed(NonZeroUsize::new(3).unwrap()))
        );
        assert_eq!("random:7".parse::<ChunkPlan>(), Ok(ChunkPlan::Random(7)));
        for bad in [
            "0",
            "-1",
            "",
            "x",
            "random:",
            "random:-1",
            "random:1.5",
            "3 ",
        ] {
            assert!(bad.parse::<ChunkPlan>().is_err(), "{bad:?}");
        }
    }

    #[test]
    fn splitmix_known_values() {
        // Reference outputs of SplitMix64 seeded with 0.
        let mut r = SplitMix64::new(0);
        assert_eq!(r.next_u64(), 0xE220_A839_7B1D_CDAF);
        assert_eq!(r.next_u64(), 0x6E78_9E6A_A1B9_65F4);
    }
}
