//! Minting call ids for formats that carry none.
//!
//! Ids are a pure function of a per-parser seed and the call's index, so they
//! do not depend on how the input was chunked: two runs with the same seed
//! give the same ids.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};

/// How a parser mints the id of a call whose format carries none.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum IdMint {
    /// OpenAI style, `call_` + 24 alphanumerics, from a random per-parser
    /// seed (the default).
    #[default]
    Random,
    /// OpenAI style, `call_` + 24 alphanumerics, from a fixed seed:
    /// reproducible output (the command line uses this).
    Seeded(u64),
    /// Mistral style: exactly 9 alphanumerics (Mistral templates reject any
    /// other form), from a fixed seed.
    Mistral(u64),
}

const ALNUM: &[u8; 62] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/// SplitMix64: a tiny, well-distributed generator; plenty for ids.
fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Where the ids of one parser come from: the [`IdMint`] it was given,
/// resolved (its seed drawn once).
#[derive(Clone, Debug)]
pub(crate) struct IdSource {
    seed: u64,
    prefix: &'static str,
    len: usize,
}

impl IdSource {
    pub(crate) fn new(mint: &IdMint) -> IdSource {
        match *mint {
            IdMint::Random => {
                let mut h = RandomState::new().build_hasher();
                h.write_u64(0x746f_6f6c_7363_616e);
                IdSource {
                    seed: h.finish(),
                    prefix: "call_",
                    len: 24,
                }
            }
            IdMint::Seeded(seed) => IdSource {
                seed,
                prefix: "call_",
                len: 24,
            },
            IdMint::Mistral(seed) => IdSource {
                seed,
                prefix: "",
                len: 9,
            },
        }
    }

    /// The id of call `index` (and `attempt`, to step around an id the text
    /// already used).
    pub(crate) fn mint(&self, index: usize, attempt: u32) -> String {
        let mut state = self.seed ^ ((index as u64) << 20) ^ u64::from(attempt);
        let mut id = String::with_capacity(self.prefix.len() + self.len);
        id.push_str(self.prefix);
        while id.len() < self.prefix.len() + self.len {
            let mut r = splitmix(&mut state);
            for _ in 0..8 {
                if id.len() == self.prefix.len() + self.len {
                    break;
                }
                id.push(ALNUM[(r % 62) as usize] as char);
                r /= 62;
            }
        }
        id
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn openai_shape() {
        let m = IdSource::new(&IdMint::Seeded(7));
        let id = m.mint(0, 0);
        assert!(id.starts_with("call_"));
        assert_eq!(id.len(), 29);
        assert!(id[5..].bytes().all(|b| b.is_ascii_alphanumeric()));
        assert_eq!(id, IdSource::new(&IdMint::Seeded(7)).mint(0, 0));
        assert_ne!(id, m.mint(1, 0));
        assert_ne!(id, m.mint(0, 1));
    }

    #[test]
    fn mistral_shape() {
        let id = IdSource::new(&IdMint::Mistral(1)).mint(3, 0);
        assert_eq!(id.len(), 9);
        assert!(id.bytes().all(|b| b.is_ascii_alphanumeric()));
    }

    #[test]
    fn random_seeds_differ() {
        let a = IdSource::new(&IdMint::Random).mint(0, 0);
        let b = IdSource::new(&IdMint::Random).mint(0, 0);
        assert_ne!(a, b);
    }
}
