//! Finding the first of four bytes in one pass.
//!
//! `memchr` searches for up to three bytes at once; `auto`'s markers need
//! four rare bytes (`<`, `[`, a backtick and the `L` of `TOOL`). Two passes
//! (`memchr3`, then `memchr`) made `auto` 1.7× slower than `hermes` on
//! long chunks of prose (measured in `benches/peer`); one AVX2 pass over
//! four bytes runs at about the speed of `memchr2`. Without AVX2 (or off
//! x86-64) the two-pass search is used.

/// The first position in `hay` holding one of the four bytes.
#[inline]
pub(crate) fn find4(hay: &[u8], n: [u8; 4]) -> Option<usize> {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx2") {
            return avx2::find4(hay, n);
        }
    }
    two_passes(hay, n)
}

/// `memchr3` over the first three bytes, then `memchr` for the fourth in
/// what the first search skipped.
fn two_passes(hay: &[u8], n: [u8; 4]) -> Option<usize> {
    let first = memchr::memchr3(n[0], n[1], n[2], hay);
    let upto = first.unwrap_or(hay.len());
    memchr::memchr(n[3], &hay[..upto]).or(first)
}

#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
mod avx2 {
    use std::arch::x86_64::{
        __m256i, _mm256_cmpeq_epi8, _mm256_loadu_si256, _mm256_movemask_epi8, _mm256_or_si256,
        _mm256_set1_epi8,
    };

    /// See [`super::find4`]. Callers check that the CPU has AVX2.
    #[inline]
    pub(super) fn find4(hay: &[u8], n: [u8; 4]) -> Option<usize> {
        // SAFETY: the only caller, `super::find4`, has just checked with
        // `is_x86_feature_detected!("avx2")` that the CPU has AVX2, which is
        // all `find4_avx2` requires of its caller.
        unsafe { find4_avx2(hay, n) }
    }

    /// The bytes of `x` equal to one of `v`'s (0xFF lanes).
    #[target_feature(enable = "avx2")]
    fn eq4(x: __m256i, v: &[__m256i; 4]) -> __m256i {
        let a = _mm256_or_si256(_mm256_cmpeq_epi8(x, v[0]), _mm256_cmpeq_epi8(x, v[1]));
        let b = _mm256_or_si256(_mm256_cmpeq_epi8(x, v[2]), _mm256_cmpeq_epi8(x, v[3]));
        _mm256_or_si256(a, b)
    }

    #[target_feature(enable = "avx2")]
    unsafe fn find4_avx2(hay: &[u8], n: [u8; 4]) -> Option<usize> {
        let v = n.map(|b| _mm256_set1_epi8(b as i8));
        // 128 bytes a step, tested as one: the exact place is worked out
        // only in the step that has a hit.
        let mut blocks = hay.chunks_exact(128);
        let mut at = 0;
        for block in &mut blocks {
            // SAFETY: `block` is 128 bytes long, so the four unaligned
            // 32-byte loads, at offsets 0, 32, 64 and 96, read inside it.
            let x = unsafe {
                let p = block.as_ptr().cast::<__m256i>();
                [
                    _mm256_loadu_si256(p),
                    _mm256_loadu_si256(p.add(1)),
                    _mm256_loadu_si256(p.add(2)),
                    _mm256_loadu_si256(p.add(3)),
                ]
            };
            let m = x.map(|x| eq4(x, &v));
            let any = _mm256_or_si256(_mm256_or_si256(m[0], m[1]), _mm256_or_si256(m[2], m[3]));
            if _mm256_movemask_epi8(any) != 0 {
                for (k, m) in m.iter().enumerate() {
                    let mask = _mm256_movemask_epi8(*m) as u32;
                    if mask != 0 {
                        return Some(at + 32 * k + mask.trailing_zeros() as usize);
                    }
                }
            }
            at += 128;
        }
        blocks
            .remainder()
            .iter()
            .position(|b| n.contains(b))
            .map(|k| at + k)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_first_of_four_everywhere() {
        let n = *b"<[`L";
        for len in [0, 1, 31, 63, 64, 65, 127, 128, 129, 255, 256, 300] {
            let mut hay = vec![b'x'; len];
            assert_eq!(find4(&hay, n), None, "{len}");
            assert_eq!(two_passes(&hay, n), None, "{len}");
            for at in (0..len).rev() {
                hay[at] = n[at % 4];
                assert_eq!(find4(&hay, n), Some(at), "{len} at {at}");
                assert_eq!(two_passes(&hay, n), Some(at), "{len} at {at}");
            }
        }
    }
}
