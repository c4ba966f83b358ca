//! Our vector code against the crates that do the same, on the same bytes,
//! in one run: what decides whether hand-written intrinsics stay.
//!
//! Run with `cargo bench -p toolscan-core --bench simd` (add
//! `-- --warm-up-time 1 --measurement-time 3` for a quick pass, about four
//! minutes). The crate's private modules `cpu` and `simd` are compiled
//! into this benchmark from their source files (`#[path]`), so it times
//! exactly the library's code without making any of it public.
//!
//! The input is the 1 MiB of prose of the root's `benches/throughput.rs`
//! (words in several scripts, some `<` and `[`, no tool-call marker), cut
//! at character boundaries into pieces of about 4 to 64 bytes
//! (token-sized: what a model's stream feeds), a few hundred bytes to a
//! few KiB (in between) or 64 KiB (whole bodies). Every benchmark goes
//! through all the pieces and reports the throughput of the whole MiB, so
//! rows of one group compare directly.
//!
//! Groups:
//!
//! - `utf8/{std,simdutf8}/{size}`: whether each piece is UTF-8, by
//!   `std::str::from_utf8` and `simdutf8::basic::from_utf8` (what
//!   `feed_with` uses). An AVX-512 check of our own ran here too until it
//!   was measured out (BENCHMARKS.md, "Hand-written SIMD against the
//!   crates").
//! - `search/{passes,teddy,ours_avx2,ours_avx512,ours_avx512_nofilter}/{size}`:
//!   every position of `auto`'s five rare bytes (`<`, `[`, a backtick, `L`,
//!   `0xA6`) in each piece: by `memchr` passes (the portable fallback), by
//!   `aho_corasick::packed::Searcher` over the five as single-byte
//!   patterns (Teddy), and by `simd.rs`'s windows (AVX2; AVX-512 with the
//!   set as `auto` builds it, where an `L` counts only after `O` and
//!   `0xA6` only after `0x9C`, and without that filter). Before timing, the
//!   number of hits each finds is printed (the filter's may be fewer:
//!   hits the parser then does not look at).
//! - `auto_prose/{level}/{bytes,str}/{4B,64KiB}`: the same prose through
//!   an `auto` parser (`feed_with` and `feed_str_with`) at the level
//!   `TOOLSCAN_SIMD` leaves in force: the end-to-end figure. Run the bench
//!   once per level (`TOOLSCAN_SIMD=avx2 cargo bench … -- auto_prose`) to
//!   set them side by side.

// The library's own files, with the tests left out (`cfg(test)` is off
// here) and what only the library calls unused; in a `scan` module as in
// the library, so that their paths (`crate::scan::cpu`) hold. (The
// module's `path` is the directory its files are taken from.)
#[path = "../src/scan"]
mod scan {
    #[allow(dead_code, unsafe_code)]
    #[path = "cpu.rs"]
    pub(crate) mod cpu;
    #[allow(dead_code, unsafe_code)]
    #[path = "simd.rs"]
    pub(crate) mod simd;
}

use std::hint::black_box;

use aho_corasick::packed;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use toolscan_core::{sink, EventRef, Parser, Sink};
use toolscan_testkit::prose::pieces;

use scan::cpu::Level;
use scan::{cpu, simd};

/// About 1 MiB of prose (the text of `benches/throughput.rs` at the
/// root): paragraphs of sentences with punctuation, non-ASCII words and
/// some `<` and `[`, no tool-call marker.
fn prose() -> String {
    toolscan_testkit::prose::prose(1 << 20)
}

const SIZES: [(&str, usize); 7] = [
    ("4B", 4),
    ("16B", 16),
    ("32B", 32),
    ("64B", 64),
    ("256B", 256),
    ("4KiB", 4 << 10),
    ("64KiB", 64 << 10),
];

fn utf8(c: &mut Criterion) {
    let text = prose();
    let mut group = c.benchmark_group("utf8");
    group.throughput(Throughput::Bytes(text.len() as u64));
    for (label, size) in SIZES {
        let ps = pieces(&text, size);
        let ps: Vec<&[u8]> = ps.iter().map(|p| p.as_bytes()).collect();
        let run = |f: &dyn Fn(&[u8]) -> bool| ps.iter().filter(|p| f(black_box(p))).count();
        group.bench_function(BenchmarkId::new("std", label), |b| {
            b.iter(|| run(&|p| std::str::from_utf8(p).is_ok()))
        });
        group.bench_function(BenchmarkId::new("simdutf8", label), |b| {
            b.iter(|| run(&|p| simdutf8::basic::from_utf8(p).is_ok()))
        });
    }
    group.finish();
}

/// The sum of the positions of every hit in `hay`, window by window, each
/// bit walked as the parser walks them.
fn window_hits(level: Level, hay: &[u8], set: &simd::ByteSet8) -> (usize, usize) {
    let (mut n, mut sum) = (0, 0);
    let mut at = 0;
    while at < hay.len() {
        let Some(w) = simd::window_at(level, hay, at, set) else {
            break;
        };
        let mut m = w.bits;
        while m != 0 {
            n += 1;
            sum += w.start + m.trailing_zeros() as usize;
            m &= m - 1;
        }
        at = w.start + w.len;
    }
    (n, sum)
}

fn teddy_hits(s: &packed::Searcher, hay: &[u8]) -> (usize, usize) {
    s.find_iter(hay)
        .fold((0, 0), |(n, sum), m| (n + 1, sum + m.start()))
}

fn search(c: &mut Criterion) {
    let text = prose();
    let rare = [b'<', b'[', b'`', b'L', 0xA6];
    let plain = simd::ByteSet8::new(&rare).expect("five bytes");
    let filtered = plain.clone().after(b'L', b"O").after(0xA6, &[0x9C]);
    let teddy = packed::Config::new()
        .builder()
        .extend(rare.iter().map(|b| [*b]))
        .build()
        .expect("Teddy on this CPU");
    eprintln!("Teddy's minimum haystack: {} bytes", teddy.minimum_len());
    let levels = Level::all();
    let mut group = c.benchmark_group("search");
    group.throughput(Throughput::Bytes(text.len() as u64));
    for (label, size) in SIZES {
        let ps = pieces(&text, size);
        let ps: Vec<&[u8]> = ps.iter().map(|p| p.as_bytes()).collect();
        let run = |f: &dyn Fn(&[u8]) -> (usize, usize)| {
            ps.iter()
                .map(|p| f(black_box(p)))
                .fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1))
        };
        let all = run(&|p| teddy_hits(&teddy, p));
        eprintln!("{label}: {} hits, unfiltered", all.0);
        group.bench_function(BenchmarkId::new("teddy", label), |b| {
            b.iter(|| run(&|p| teddy_hits(&teddy, p)))
        });
        for &l in &levels {
            let sets: &[(&str, &simd::ByteSet8)] = match l {
                Level::Avx512(_) => &[("", &filtered), ("_nofilter", &plain)],
                _ => &[("", &plain)],
            };
            for &(suffix, set) in sets {
                let name = match l {
                    Level::Portable => "passes".to_string(),
                    _ => format!("ours_{}{suffix}", l.name()),
                };
                let got = run(&|p| window_hits(l, p, set));
                if suffix.is_empty() && !matches!(l, Level::Avx512(_)) {
                    assert_eq!(got, all, "{name} {label}");
                } else {
                    eprintln!("{label}: {} hits, {name}", got.0);
                }
                group.bench_function(BenchmarkId::new(name, label), |b| {
                    b.iter(|| run(&|p| window_hits(l, p, set)))
                });
            }
        }
    }
    group.finish();
}

/// How a piece reaches the parser.
type Feed = dyn Fn(&mut Parser, &str, &mut dyn Sink);

/// Feeds `pieces` to a fresh `auto` parser, each by `feed`, and finishes
/// it; returns the bytes of text.
fn through_auto(pieces: &[&str], feed: &Feed) -> usize {
    let mut p = Parser::for_format("auto").expect("auto");
    let mut n = 0usize;
    let mut s = sink::from_fn(|e: EventRef<'_>| {
        if let EventRef::Text(t) = e {
            n += t.len();
        }
    });
    for piece in pieces {
        feed(&mut p, piece, &mut s);
    }
    p.finish_with(&mut s);
    n
}

fn bytes(p: &mut Parser, piece: &str, s: &mut dyn Sink) {
    p.feed_with(piece.as_bytes(), s)
}

fn str(p: &mut Parser, piece: &str, s: &mut dyn Sink) {
    p.feed_str_with(piece, s)
}

fn auto_prose(c: &mut Criterion) {
    let text = prose();
    let mut group = c.benchmark_group("auto_prose");
    group.throughput(Throughput::Bytes(text.len() as u64));
    let level = cpu::level().name();
    for (label, size) in [("4B", 4), ("64KiB", 64 << 10)] {
        let ps = pieces(&text, size);
        let apis: [(&str, &Feed); 2] = [("bytes", &bytes), ("str", &str)];
        for (api, feed) in apis {
            assert_eq!(
                through_auto(&ps, feed),
                text.len(),
                "the prose comes back as text"
            );
            group.bench_function(format!("{level}/{api}/{label}"), |b| {
                b.iter(|| through_auto(&ps, feed))
            });
        }
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20);
    targets = utf8, search, auto_prose
}
criterion_main!(benches);
