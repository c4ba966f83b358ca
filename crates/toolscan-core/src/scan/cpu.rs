//! Which vector instructions the byte search of `simd.rs` uses (and
//! whether the UTF-8 check is `simdutf8`'s): the best the CPU has, or less
//! when the environment variable `TOOLSCAN_SIMD` asks for it.
//!
//! A vector path may run only on a CPU that has its instructions. That
//! proof is a value: [`Avx2`] and [`Avx512`] are tokens with a private
//! field, made only by their checked constructors (which ask the CPU with
//! `is_x86_feature_detected!`), and the vector functions take one by
//! value. Calling them without having checked does not compile; their
//! `unsafe` blocks rest on the token alone, not on what a caller did
//! before (the pattern of `memchr`'s `arch::x86_64` modules).
//!
//! [`level`] decides once, the first time a search asks, and keeps the
//! decision — tokens included — in a `OnceLock`.
//!
//! `TOOLSCAN_SIMD=portable` runs the code without vector instructions of
//! our own (`memchr`'s searches and std's UTF-8 check), `avx2` the AVX2
//! search (and `simdutf8`), `avx512` (or unset) the best there is. A level
//! the CPU lacks is never used: the variable only lowers it. So tests and
//! benchmarks of the fallbacks run on any machine that has the faster
//! paths (CI runs the core's tests under each). `memchr`, `simdutf8` and
//! `aho-corasick` pick their own instructions whatever this says.

use std::sync::OnceLock;

/// Proof that the CPU has AVX2: only [`Avx2::new`] makes one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Avx2(());

impl Avx2 {
    /// The token, if the CPU has AVX2.
    #[inline]
    pub(crate) fn new() -> Option<Avx2> {
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx2") {
                return Some(Avx2(()));
            }
        }
        None
    }
}

/// Proof that the CPU has AVX-512 BW (and so AVX-512 F): only
/// [`Avx512::new`] makes one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Avx512(());

impl Avx512 {
    /// The token, if the CPU has AVX-512 BW.
    #[inline]
    pub(crate) fn new() -> Option<Avx512> {
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx512bw") {
                return Some(Avx512(()));
            }
        }
        None
    }
}

/// The instructions a search may use, with the proof that the CPU has
/// them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Level {
    /// No vector instructions of our own.
    Portable,
    /// AVX2.
    Avx2(Avx2),
    /// AVX-512 BW.
    Avx512(Avx512),
}

impl Level {
    /// The best level the CPU has, up to `cap`.
    fn best(cap: Cap) -> Level {
        if cap >= Cap::Avx512 {
            if let Some(t) = Avx512::new() {
                return Level::Avx512(t);
            }
        }
        if cap >= Cap::Avx2 {
            if let Some(t) = Avx2::new() {
                return Level::Avx2(t);
            }
        }
        Level::Portable
    }

    /// Every level the CPU has, lowest first (for tests and benchmarks
    /// that run each implementation side by side).
    #[allow(dead_code)]
    pub(crate) fn all() -> Vec<Level> {
        let mut v = vec![Level::Portable];
        v.extend(Avx2::new().map(Level::Avx2));
        v.extend(Avx512::new().map(Level::Avx512));
        v
    }

    /// A short name (`portable`, `avx2`, `avx512`).
    #[allow(dead_code)]
    pub(crate) fn name(self) -> &'static str {
        match self {
            Level::Portable => "portable",
            Level::Avx2(_) => "avx2",
            Level::Avx512(_) => "avx512",
        }
    }
}

/// The most `TOOLSCAN_SIMD` allows, in increasing order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Cap {
    Portable,
    Avx2,
    Avx512,
}

/// The most `TOOLSCAN_SIMD` allows (an unknown value allows everything).
fn cap(asked: Option<&str>) -> Cap {
    match asked.map(str::trim) {
        Some(s) if s.eq_ignore_ascii_case("portable") || s.eq_ignore_ascii_case("none") => {
            Cap::Portable
        }
        Some(s) if s.eq_ignore_ascii_case("avx2") => Cap::Avx2,
        _ => Cap::Avx512,
    }
}

/// The level in force: the best the CPU has, capped by `TOOLSCAN_SIMD`,
/// decided on the first call.
#[inline]
pub(crate) fn level() -> Level {
    static LEVEL: OnceLock<Level> = OnceLock::new();
    *LEVEL.get_or_init(|| Level::best(cap(std::env::var("TOOLSCAN_SIMD").ok().as_deref())))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rank(l: Level) -> u8 {
        match l {
            Level::Portable => 0,
            Level::Avx2(_) => 1,
            Level::Avx512(_) => 2,
        }
    }

    #[test]
    fn the_variable_only_lowers_the_level() {
        assert_eq!(cap(Some("portable")), Cap::Portable);
        assert_eq!(cap(Some(" AVX2 ")), Cap::Avx2);
        assert_eq!(cap(Some("avx512")), Cap::Avx512);
        assert_eq!(cap(Some("sse9")), Cap::Avx512);
        assert_eq!(cap(None), Cap::Avx512);
        assert_eq!(Level::best(Cap::Portable), Level::Portable);
        assert!(rank(Level::best(Cap::Avx2)) <= 1);
        assert!(rank(level()) <= rank(Level::best(Cap::Avx512)));
        // Every level made is one the CPU has, and `all` lists each once.
        let all = Level::all();
        assert_eq!(all[0], Level::Portable);
        assert!(all.windows(2).all(|w| rank(w[0]) < rank(w[1])));
        assert!(all.contains(&level()));
    }

    #[test]
    fn the_level_in_force_is_the_one_asked_for() {
        // CI runs this crate's tests with each value of the variable.
        let want = Level::best(cap(std::env::var("TOOLSCAN_SIMD").ok().as_deref()));
        assert_eq!(level(), want);
    }
}
