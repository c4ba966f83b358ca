//! Linear cost at any chunk size (contract invariant 4), for every format.
//!
//! Run with `cargo bench --bench linear` (optionally followed by `-- TEXT…`
//! to run only the units whose format and shape, as printed, contain every
//! `TEXT`).
//!
//! Each unit of `toolscan_testkit::bulk::units()` — a format's own calls
//! (its first conformance case with a call), each of its markers alone,
//! `{` and `[` alone; and under `auto` the calls of every family and the
//! common markers — is repeated to 1, 4 and 16 MiB and parsed through the
//! sink API on bytes, once as one chunk and once in 64 KiB chunks. The
//! best of at least three runs is kept. Printed per unit:
//!
//! - `ns/B` at 16 MiB in one chunk;
//! - `16M/1M`: time per byte at 16 MiB over time per byte at 1 MiB, in one
//!   chunk (1.0 is linear; a quadratic cost gives 16);
//! - `one/64K`: time for 16 MiB in one chunk over the same in 64 KiB
//!   chunks (1.0: the chunking does not change the cost).
//!
//! Rows where either ratio passes 2 are marked `!`, and a summary line
//! gives the largest ratios. Absolute times on a shared machine are noise;
//! the ratios are measured side by side in one process.

use std::hint::black_box;
use std::time::{Duration, Instant};

use toolscan::{sink, EventRef, Parser, Registry};
use toolscan_testkit::bulk::{units, Unit};

const MIB: usize = 1 << 20;
const SIZES: [usize; 3] = [MIB, 4 * MIB, 16 * MIB];
const CHUNK: usize = 64 * 1024;

/// Parses `input` in chunks of `chunk` bytes (`None`: one chunk); returns
/// the time taken.
fn run(unit: &Unit, input: &[u8], chunk: Option<usize>) -> Duration {
    let g = Registry::builtin()
        .grammar(&unit.format)
        .expect("a built-in format");
    let mut p = Parser::new(g, unit.options.clone());
    let mut n = 0usize;
    let mut s = sink::from_fn(|e: EventRef<'_>| {
        n += matches!(e, EventRef::ToolCallEnd { .. }) as usize;
    });
    let start = Instant::now();
    match chunk {
        None => p.feed_with(input, &mut s),
        Some(c) => input.chunks(c).for_each(|piece| p.feed_with(piece, &mut s)),
    }
    p.finish_with(&mut s);
    let t = start.elapsed();
    black_box(n);
    t
}

/// The best of at least three runs and of as many as fit in 200 ms (a
/// unit that runs at the speed of `memchr` takes a fraction of a
/// millisecond for 1 MiB: one run would be noise).
fn best(unit: &Unit, input: &[u8], chunk: Option<usize>) -> Duration {
    let start = Instant::now();
    let mut best = Duration::MAX;
    let mut runs = 0;
    while runs < 3 || (start.elapsed() < Duration::from_millis(200) && runs < 100) {
        best = best.min(run(unit, input, chunk));
        runs += 1;
    }
    best
}

fn main() {
    // `cargo bench` passes `--bench`; anything else is a filter.
    let filter: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let all = units();
    let chosen: Vec<&Unit> = all
        .iter()
        .filter(|u| {
            let name = format!("{} {}", u.format, u.shape);
            filter.iter().all(|f| name.contains(f.as_str()))
        })
        .collect();
    println!(
        "{:<18} {:<44} {:>8} {:>8} {:>8}",
        "format", "unit", "ns/B", "16M/1M", "one/64K"
    );
    let (mut worst_size, mut worst_chunk) = (0f64, 0f64);
    for u in chosen {
        let per_byte: Vec<f64> = SIZES
            .iter()
            .map(|&len| {
                let input = u.repeated(len);
                best(u, &input, None).as_secs_f64() / input.len() as f64
            })
            .collect();
        let big = u.repeated(SIZES[2]);
        let chunked = best(u, &big, Some(CHUNK)).as_secs_f64() / big.len() as f64;
        let by_size = per_byte[2] / per_byte[0];
        let by_chunk = per_byte[2] / chunked;
        worst_size = worst_size.max(by_size);
        worst_chunk = worst_chunk.max(by_chunk);
        let flag = if by_size > 2.0 || by_chunk > 2.0 {
            "!"
        } else {
            ""
        };
        let shape: String = u.shape.chars().take(44).collect();
        println!(
            "{:<18} {:<44} {:>8.2} {:>8.2} {:>8.2} {flag}",
            u.format,
            shape,
            per_byte[2] * 1e9,
            by_size,
            by_chunk
        );
    }
    println!("largest 16M/1M: {worst_size:.2}; largest one/64K: {worst_chunk:.2}");
}
