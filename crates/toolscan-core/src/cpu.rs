//! Which vector instructions the byte searches and the UTF-8 check use:
//! the best the CPU has, or less when the environment variable
//! `TOOLSCAN_SIMD` asks for it.
//!
//! `TOOLSCAN_SIMD=portable` runs the code without vector instructions of
//! our own (`memchr`'s searches and std's UTF-8 check), `avx2` the AVX2
//! paths (and `simdutf8`), `avx512` (or unset) the best there is. A level
//! the CPU lacks is never used: the variable only lowers it. It is read
//! once, the first time a search needs it, so tests and benchmarks of the
//! fallbacks run on any machine that has the faster paths (CI runs the
//! core's tests under each). `memchr` picks its own instructions whatever
//! this says.

use std::sync::atomic::{AtomicU8, Ordering};

/// The instruction sets a search may use, in increasing order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Level {
    /// No vector instructions of our own.
    Portable = 1,
    /// AVX2.
    Avx2 = 2,
    /// AVX-512 BW (the UTF-8 check also asks for VBMI, see
    /// `validate::from_utf8`).
    Avx512 = 3,
}

/// The level in force, `0` until first asked. Every value stored is a
/// `Level` the CPU has (see [`allowed`]): the vector paths' safety rests
/// on it.
static LEVEL: AtomicU8 = AtomicU8::new(0);

/// The level in force (detected, and capped by `TOOLSCAN_SIMD`, once).
#[inline]
pub(crate) fn level() -> Level {
    match LEVEL.load(Ordering::Relaxed) {
        1 => Level::Portable,
        2 => Level::Avx2,
        3 => Level::Avx512,
        _ => init(),
    }
}

#[cold]
fn init() -> Level {
    let asked = std::env::var("TOOLSCAN_SIMD").ok();
    let l = allowed(detected().min(cap(asked.as_deref())));
    LEVEL.store(l as u8, Ordering::Relaxed);
    l
}

/// `l`, or less if the CPU lacks it: every level returned is one the CPU
/// has (a CPU with AVX-512 but no AVX2, asked for AVX2, gets `Portable`).
fn allowed(l: Level) -> Level {
    #[cfg(target_arch = "x86_64")]
    {
        if l == Level::Avx512 && std::arch::is_x86_feature_detected!("avx512bw") {
            return l;
        }
        if l >= Level::Avx2 && std::arch::is_x86_feature_detected!("avx2") {
            return Level::Avx2;
        }
    }
    let _ = l;
    Level::Portable
}

/// The most `TOOLSCAN_SIMD` allows (an unknown value allows everything).
fn cap(asked: Option<&str>) -> Level {
    match asked.map(str::trim) {
        Some(s) if s.eq_ignore_ascii_case("portable") || s.eq_ignore_ascii_case("none") => {
            Level::Portable
        }
        Some(s) if s.eq_ignore_ascii_case("avx2") => Level::Avx2,
        _ => Level::Avx512,
    }
}

/// The best level the CPU has.
fn detected() -> Level {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512bw") {
            return Level::Avx512;
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            return Level::Avx2;
        }
    }
    Level::Portable
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_variable_only_lowers_the_level() {
        assert_eq!(cap(Some("portable")), Level::Portable);
        assert_eq!(cap(Some(" AVX2 ")), Level::Avx2);
        assert_eq!(cap(Some("avx512")), Level::Avx512);
        assert_eq!(cap(Some("sse9")), Level::Avx512);
        assert_eq!(cap(None), Level::Avx512);
        assert!(level() <= detected());
    }

    #[test]
    fn the_level_in_force_is_the_one_asked_for() {
        // CI runs this crate's tests with each value of the variable.
        let want = allowed(detected().min(cap(std::env::var("TOOLSCAN_SIMD").ok().as_deref())));
        assert_eq!(level(), want);
    }
}
