//! Feeds arbitrary bytes, in arbitrary chunks, to a parser of an arbitrary
//! format, and checks the contract invariants that hold for every input.
//!
//! Input layout:
//!
//! - byte 0 picks the format and the reasoning options: `b0 % (3 * n)`
//!   where `n` is the number of built-in formats plus `auto`; the index
//!   modulo `n` names the format (`auto` last), the quotient is 0 (plain),
//!   1 (reasoning separation) or 2 (reasoning separation, starting inside a
//!   reasoning block);
//! - byte 1 picks the chunking and the API: 0 feeds the rest at once; any
//!   other value seeds random chunk sizes between 1 and a maximum picked by
//!   its low three bits (`toolscan_testkit::chunk::Plan::random`: splits
//!   fall inside markers and inside UTF-8 characters); bits 3–4 pick the
//!   parser API the chunks go through (`feed`, `feed_into`, the sink API,
//!   `feed_str_with` — the last for UTF-8 input only, else `feed_into`);
//! - the rest is the model output.
//!
//! Checked (contract §2), with the workspace's test kit:
//!
//! - no panic (invariant 6), for the chunked run and the whole-input run;
//!   a finished parser stays finished;
//! - the event contract on both runs (`check::check_events`): one `done`,
//!   last, whose `finish_reason` agrees with the calls and a truncation;
//!   per call `tool_call_start` once with indices 0, 1, 2, … and unique
//!   ids, then its argument deltas, then `tool_call_end` (same id and name,
//!   deltas exactly its arguments, an object) or a diagnostic that abandons
//!   it; no text inside a call; no empty delta;
//! - no `reasoning` event with reasoning separation off; diagnostic offsets
//!   lie within the input;
//! - nothing lost (invariant 2): with reasoning separation off and no
//!   completed call, the text is the input (invalid UTF-8 as U+FFFD);
//! - chunking invariance (invariant 1): the coalesced events of the chunked
//!   run equal those of the whole-input run (both with `IdMint::Seeded(0)`);
//! - streaming equals non-streaming (invariant 7): `parse` gives the
//!   `Response` of the whole-input run's events.
#![no_main]

use libfuzzer_sys::fuzz_target;
use toolscan_core::{parse, Event, IdMint, Options, Parser, Registry, Response};
use toolscan_testkit::check::{check_events, nothing_lost, offsets_within, same_coalesced};
use toolscan_testkit::chunk::{self, Api, Plan};

/// The largest chunk, by the low three bits of the chunking byte.
const MAX_CHUNK: [usize; 8] = [1, 2, 3, 4, 7, 16, 64, 1024];

/// The invariants one run must satisfy on its own.
fn check(events: &[Event], input: &[u8], reasoning: bool) {
    let tally = check_events(events).unwrap_or_else(|e| panic!("{e}"));
    offsets_within(events, input.len()).unwrap_or_else(|e| panic!("{e}"));
    if !reasoning {
        assert!(
            !events.iter().any(|e| matches!(e, Event::Reasoning { .. })),
            "reasoning event with reasoning separation off"
        );
        if tally.completed == 0 {
            nothing_lost(events, input, &[]).unwrap_or_else(|e| panic!("{e}"));
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let [sel, seed, input @ ..] = data else {
        return;
    };
    let registry = Registry::builtin();
    let mut names: Vec<&str> = registry.formats().iter().map(|f| f.name()).collect();
    names.push("auto");
    let n = names.len();
    let pick = usize::from(*sel) % (3 * n);
    let name = names[pick % n];
    let reasoning = pick >= n;
    let starts_in_reasoning = pick >= 2 * n;
    let grammar = registry.grammar(name).expect("built-in grammar compiles");
    let options = || {
        Options::default()
            .with_ids(IdMint::Seeded(0))
            .with_reasoning(reasoning)
            .with_starts_in_reasoning(starts_in_reasoning)
    };
    let parser = || Parser::new(grammar.clone(), options());

    let plan = match *seed {
        0 => Plan::whole(input.len()),
        s => Plan::random(input.len(), u64::from(s), MAX_CHUNK[usize::from(s & 7)]),
    };
    let api = match Api::ALL[usize::from(seed >> 3) & 3] {
        Api::Str if std::str::from_utf8(input).is_err() => Api::FeedInto,
        api => api,
    };
    let chunked = chunk::feed(parser(), api, input, &plan);
    let whole = chunk::feed(parser(), Api::FeedInto, input, &Plan::whole(input.len()));
    check(&chunked, input, reasoning);
    check(&whole, input, reasoning);

    if let Err(e) = same_coalesced(&chunked, &whole) {
        panic!("chunking changed the events (format {name}, {plan}, {api:?}): {e}");
    }
    assert_eq!(
        parse(grammar, options(), input),
        Response::from_events(&whole),
        "parse differs from the streamed events"
    );
});
