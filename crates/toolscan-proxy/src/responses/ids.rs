//! Ids of the objects a translated answer creates: `resp_…` for a
//! response, `msg_…`, `rs_…`, `fc_…` for its output items. Random (drawn
//! from the standard library's per-process random hasher keys), so ids of
//! different responses never repeat across turns or restarts.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};

/// How many hex digits follow an id's prefix (OpenAI's ids carry 48 to
/// 50).
const DIGITS: usize = 48;

/// A counter mixed into every id, so two ids minted from the same hasher
/// keys still differ.
static COUNTER: AtomicU64 = AtomicU64::new(0);

/// A fresh id: `prefix` (`resp`, `msg`, `rs`, `fc`), `_`, 48 hex digits.
pub(crate) fn mint(prefix: &str) -> String {
    let mut id = String::with_capacity(prefix.len() + 1 + DIGITS);
    id.push_str(prefix);
    id.push('_');
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let mut block = 0u64;
    while id.len() < prefix.len() + 1 + DIGITS {
        let mut h = RandomState::new().build_hasher();
        h.write_u64(n);
        h.write_u64(block);
        let word = h.finish();
        for shift in (0..16).rev() {
            if id.len() == prefix.len() + 1 + DIGITS {
                break;
            }
            let digit = ((word >> (shift * 4)) & 0xf) as u32;
            id.push(char::from_digit(digit, 16).unwrap_or('0'));
        }
        block += 1;
    }
    id
}

/// The ids of one response's objects.
#[derive(Clone, Debug)]
pub(crate) struct Ids {
    /// The response's id.
    pub(crate) response: String,
    /// Seconds since the Unix epoch at which it was created.
    pub(crate) created_at: u64,
}

impl Ids {
    /// A new response's id, created now.
    pub(crate) fn new() -> Ids {
        let created_at = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        Ids {
            response: mint("resp"),
            created_at,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_have_their_prefix_and_never_repeat() {
        let a = mint("fc");
        let b = mint("fc");
        assert!(a.starts_with("fc_") && a.len() == 3 + DIGITS, "{a}");
        assert!(a[3..].bytes().all(|c| c.is_ascii_hexdigit()), "{a}");
        assert_ne!(a, b);
    }
}
