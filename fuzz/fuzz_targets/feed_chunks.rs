//! Feeds arbitrary bytes, in arbitrary chunks, to a parser of any built-in
//! format (or `auto`) with any options, and checks the contract's
//! invariants that hold for every input.
//!
//! Input layout:
//!
//! | byte | meaning |
//! |---|---|
//! | 0 | the format: an index into the built-in formats, then `auto` (`toolscan_fuzz::formats::builtin`), modulo their number |
//! | 1 | options (`toolscan_fuzz::flag`): reasoning separation, starting inside reasoning, the tools list, `complete_at_stop` with `finish_at_stop`, small limits, calls inside reasoning are calls, one call at most, only one tool |
//! | 2 | chunking (`toolscan_fuzz::chunks`): 0 = at once; else seeded random chunk sizes up to 1…1024 bytes (low three bits) through `feed`, `feed_into`, the sink API or `feed_str_with` (bits 3–4) |
//! | 3.. | the model output |
//!
//! Checked (contract §2), for the chunked run and a whole-input run:
//! no panic; the event contract; nothing lost (as far as the format's
//! framing allows, `toolscan_fuzz::check::one_run`); chunking invariance
//! (coalesced events equal, ids minted from one seed); `parse` returns the
//! `Response` of the streamed events.
#![no_main]

use libfuzzer_sys::{fuzz_target, Corpus};
use toolscan_core::{parse, Parser, Response};
use toolscan_fuzz::check::{one_run, same_events, Run};
use toolscan_fuzz::{chunks, flag, formats, known, options, seed};

fuzz_target!(init: seed::init(seeds), |data: &[u8]| -> Corpus {
    if known::run(|| check(data)) {
        Corpus::Keep
    } else {
        Corpus::Reject
    }
});

fn check(data: &[u8]) {
    let [format, flags, chunking, input @ ..] = data else {
        return;
    };
    let entry = formats::pick(*format);
    let at_stop = flags & flag::AT_STOP != 0;
    let parser = || Parser::new(entry.grammar.clone(), options(*flags));

    let whole = chunks::run(parser(), input, 0, at_stop);
    let chunked = match chunking {
        0 => whole.clone(),
        _ => chunks::run(parser(), input, *chunking, at_stop),
    };
    let lossy = String::from_utf8_lossy(input);
    let run = Run {
        input,
        lossy: &lossy,
        reasoning: flags & flag::REASONING != 0,
        rule: entry.rule,
    };
    one_run(&chunked, &run);
    one_run(&whole, &run);
    same_events(
        &chunked,
        &whole,
        &format_args!("format {}, chunking {chunking}", entry.name),
    );
    if !at_stop {
        assert_eq!(
            parse(entry.grammar.clone(), options(*flags), input),
            Response::from_events(&whole),
            "parse differs from the streamed events"
        );
    }
}

/// Each conformance case (under its format, `auto` for formats this build
/// lacks; with the tools list when it has tools) whole, in small chunks,
/// with reasoning separation and with small limits; and the example
/// outputs under `auto`; and responses rendered in every format.
fn seeds(repo: &seed::Repo) -> seed::Seeds {
    let mut s = seed::Seeds {
        words: seed::format_words(false),
        ..Default::default()
    };
    let mut add = |format: usize, flags: u8, chunking: u8, input: &[u8]| {
        let mut v = vec![format as u8, flags, chunking];
        v.extend_from_slice(input);
        s.inputs.push(v);
    };
    for case in &repo.cases {
        let f = formats::index_of(&case.format);
        let base = if case.tools.is_some() { flag::TOOLS } else { 0 };
        let input = case.input.as_bytes();
        add(f, base, 0, input);
        add(f, base, 1, input);
        add(f, base | flag::REASONING, 3 | 2 << 3, input);
        add(f, base | flag::CALLS_IN_REASONING, 2 | 1 << 3, input);
        add(
            f,
            base | flag::SMALL_LIMITS | flag::AT_STOP,
            5 | 3 << 3,
            input,
        );
    }
    for (_, text) in repo.files("examples/data", ".txt") {
        add(formats::index_of("auto"), 0, 4, &text);
    }
    // Calls of every format as its renderer writes them, whole and in
    // small chunks.
    for f in toolscan_core::Registry::builtin().formats() {
        let k = formats::index_of(f.name());
        for input in seed::rendered(f) {
            add(k, flag::TOOLS, 0, &input);
            add(k, flag::TOOLS, 2 | 1 << 3, &input);
        }
    }
    s
}
