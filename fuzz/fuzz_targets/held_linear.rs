//! Calls inside reasoning, repeated: a unit of model output is repeated
//! `k` times after an unclosed `<think>` (or in a stream that starts in
//! reasoning), fed in one chunk and in 7-byte chunks. One chunk used to
//! search the rest of the chunk for a reasoning closer once per held
//! call (the square of the input); so this checks, with a count and no
//! clock, that the closer search reads each byte a bounded number of
//! times (`toolscan_core::work::closer_search_bytes`), and that both
//! runs give the same events. (libFuzzer's `-timeout` catches any other
//! slowness.)
//!
//! Input layout:
//!
//! | byte | meaning |
//! |---|---|
//! | 0 | the format, as in `feed_chunks` (`auto` included) |
//! | 1 | options, as in `feed_chunks` (`toolscan_fuzz::flag`); without `STARTS_IN_REASONING` the input begins with `<think>` |
//! | 2 | `k`: the unit is repeated `1 + k % 64` times (64 repeats of a unit of up to 253 bytes make a square search read a thousand times the bound) |
//! | 3.. | the unit |
#![no_main]

use libfuzzer_sys::{fuzz_target, Corpus};
use toolscan_core::{work, Parser};
use toolscan_fuzz::check::same_events;
use toolscan_fuzz::{chunks, flag, formats, known, options, seed};

fuzz_target!(init: seed::init(seeds), |data: &[u8]| -> Corpus {
    if known::run(|| check(data)) {
        Corpus::Keep
    } else {
        Corpus::Reject
    }
});

/// Bytes the closer search may read per input byte (a block's search
/// reads the bytes up to the next closer once, plus a closer's length at
/// its start), and a constant for short inputs.
const PER_BYTE: u64 = 64;
const SLACK: u64 = 4096;

fn check(data: &[u8]) {
    let [format, flags, k, unit @ ..] = data else {
        return;
    };
    if unit.is_empty() {
        return;
    }
    let entry = formats::pick(*format);
    let flags = *flags & !flag::AT_STOP;
    let mut input = Vec::new();
    if flags & flag::STARTS_IN_REASONING == 0 {
        input.extend_from_slice(b"<think>");
    }
    let repeats = 1 + usize::from(*k % 64);
    for _ in 0..repeats {
        input.extend_from_slice(unit);
    }
    let options = options(flags);
    let parser = || Parser::new(entry.grammar.clone(), options.clone());
    let before = work::closer_search_bytes();
    let whole = chunks::run(parser(), &input, 0, false);
    let searched = work::closer_search_bytes() - before;
    // Chunking byte 4: sizes from 1 to 7 bytes, through `feed`.
    let small = chunks::run(parser(), &input, 4, false);
    same_events(
        &small,
        &whole,
        &format_args!("format {}, {repeats} repeats", entry.name),
    );
    let bound = PER_BYTE * input.len() as u64 + SLACK;
    assert!(
        searched <= bound,
        "format {}: the closer search read {searched} bytes for {} bytes of input",
        entry.name,
        input.len()
    );
}

/// Each format's rendered calls as the unit, repeated 64 times, after
/// `<think>` and starting in reasoning.
fn seeds(_: &seed::Repo) -> seed::Seeds {
    let mut s = seed::Seeds {
        words: seed::format_words(false),
        ..Default::default()
    };
    for f in toolscan_core::Registry::builtin().formats() {
        let i = formats::index_of(f.name());
        for unit in seed::rendered(f) {
            for flags in [0, flag::STARTS_IN_REASONING | flag::REASONING, flag::TOOLS] {
                let mut v = vec![i as u8, flags, 63];
                v.extend_from_slice(&unit);
                s.inputs.push(v);
            }
        }
    }
    s
}
