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
//! - byte 1 seeds the chunking: 0 feeds the rest at once, any other value
//!   drives a small generator of chunk sizes between 1 and a maximum picked
//!   by its low three bits (so splits fall inside markers and inside UTF-8
//!   characters);
//! - the rest is the model output.
//!
//! Checked (contract §2):
//!
//! - no panic (invariant 6), for the chunked run and the whole-input run;
//! - exactly one `done`, and it is the last event;
//! - `text` and `reasoning` deltas are `String`s, so valid UTF-8 by
//!   construction; on valid UTF-8 input with reasoning separation off and no
//!   completed call, the text is the input, byte for byte (invariant 2);
//! - per call: `tool_call_start` once, first, with indices 0, 1, 2, … in
//!   order and unique ids; `tool_call_end` at most once, with the start's id
//!   and name; the concatenated `tool_call_args` deltas of a completed call
//!   parse to exactly its `arguments` object;
//! - `finish_reason` agrees with the calls: `stop` only without completed
//!   calls, `tool_calls` only with some, `length` only with a truncation
//!   diagnostic; diagnostic offsets lie within the input;
//! - chunking invariance (invariant 1): the coalesced events of the chunked
//!   run equal those of the whole-input run (both with `IdMint::Seeded(0)`);
//! - streaming equals non-streaming (invariant 7): `parse` gives the
//!   `Response` of the whole-input run's events.
#![no_main]

use std::collections::HashSet;
use std::sync::Arc;

use libfuzzer_sys::fuzz_target;
use toolscan_core::{
    coalesce, parse, DiagnosticKind, Event, FinishReason, Grammar, IdMint, Options, Parser,
    Registry, Response,
};

/// Chunk sizes from a one-byte seed: deterministic, varied.
struct Chunks<'a> {
    rest: &'a [u8],
    state: u64,
    max: usize,
}

impl<'a> Chunks<'a> {
    fn new(input: &'a [u8], seed: u8) -> Chunks<'a> {
        let max = if seed == 0 {
            usize::MAX
        } else {
            [1, 2, 3, 4, 7, 16, 64, 1024][usize::from(seed & 7)]
        };
        Chunks {
            rest: input,
            state: u64::from(seed),
            max,
        }
    }
}

impl<'a> Iterator for Chunks<'a> {
    type Item = &'a [u8];

    fn next(&mut self) -> Option<&'a [u8]> {
        if self.rest.is_empty() {
            return None;
        }
        let n = if self.max == usize::MAX {
            self.rest.len()
        } else {
            // SplitMix64.
            self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^= z >> 31;
            1 + (z % self.max as u64) as usize
        };
        let (piece, rest) = self.rest.split_at(n.min(self.rest.len()));
        self.rest = rest;
        Some(piece)
    }
}

fn run<'a>(
    grammar: &Arc<Grammar>,
    options: Options,
    chunks: impl Iterator<Item = &'a [u8]>,
) -> Vec<Event> {
    let mut p = Parser::new(Arc::clone(grammar), options);
    let mut out = Vec::new();
    for piece in chunks {
        p.feed_into(piece, &mut out);
    }
    p.finish_into(&mut out);
    // After `finish`, feeding and finishing again do nothing.
    let len = out.len();
    p.feed_into(b"<tool_call>", &mut out);
    p.finish_into(&mut out);
    assert_eq!(out.len(), len, "events after finish");
    out
}

/// The invariants one event sequence must satisfy on its own.
fn check(events: &[Event], input: &[u8], reasoning: bool) {
    // `done` exactly once, last.
    let dones = events
        .iter()
        .filter(|e| matches!(e, Event::Done { .. }))
        .count();
    assert_eq!(dones, 1, "one done event");
    let Some(Event::Done { finish_reason }) = events.last() else {
        panic!("done is not last: {:?}", events.last());
    };

    let mut text = String::new();
    let mut started: Vec<(String, String)> = Vec::new(); // (id, name) per index
    let mut args: Vec<String> = Vec::new();
    let mut ended: Vec<bool> = Vec::new();
    let mut ids = HashSet::new();
    let mut completed = 0usize;
    let mut truncated = false;
    for e in events {
        match e {
            // Strings: valid UTF-8 by construction.
            Event::Text { delta } => text.push_str(delta),
            Event::Reasoning { delta } => {
                assert!(reasoning, "reasoning event with reasoning separation off");
                let _: &str = delta;
            }
            Event::ToolCallStart { index, id, name } => {
                assert_eq!(*index, started.len(), "start indices in order, once each");
                assert!(ids.insert(id.clone()), "duplicate call id {id}");
                started.push((id.clone(), name.clone()));
                args.push(String::new());
                ended.push(false);
            }
            Event::ToolCallArgs { index, delta } => {
                assert!(*index < started.len(), "args before start");
                assert!(!ended[*index], "args after end");
                args[*index].push_str(delta);
            }
            Event::ToolCallEnd {
                index,
                id,
                name,
                arguments,
            } => {
                assert!(*index < started.len(), "end before start");
                assert!(!ended[*index], "end twice");
                ended[*index] = true;
                assert_eq!((id, name), (&started[*index].0, &started[*index].1));
                let streamed: serde_json::Value = serde_json::from_str(&args[*index])
                    .unwrap_or_else(|e| {
                        panic!(
                            "args deltas of call {index} are not JSON ({e}): {:?}",
                            args[*index]
                        )
                    });
                assert_eq!(
                    streamed,
                    serde_json::Value::Object(arguments.clone()),
                    "args deltas of call {index} differ from its arguments"
                );
                completed += 1;
            }
            Event::Diagnostic(d) => {
                assert!(
                    d.offset <= input.len() as u64,
                    "diagnostic offset {} past the input ({} bytes)",
                    d.offset,
                    input.len()
                );
                truncated |= d.kind == DiagnosticKind::Truncated;
            }
            _ => {}
        }
    }

    match finish_reason {
        FinishReason::Stop => assert_eq!(completed, 0, "stop with completed calls"),
        FinishReason::ToolCalls => assert!(completed > 0, "tool_calls without a call"),
        FinishReason::Length => assert!(truncated, "length without a truncation diagnostic"),
    }

    // Nothing lost: without completed calls and without reasoning
    // separation, every byte comes back as text.
    if completed == 0 && !reasoning {
        if let Ok(s) = std::str::from_utf8(input) {
            assert_eq!(text, s, "text differs from the input with no call");
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
        let mut o = Options::default()
            .with_ids(IdMint::Seeded(0))
            .with_reasoning(reasoning);
        o.starts_in_reasoning = starts_in_reasoning;
        o
    };

    let chunked = run(&grammar, options(), Chunks::new(input, *seed));
    let whole = run(&grammar, options(), std::iter::once(input));
    check(&chunked, input, reasoning);
    check(&whole, input, reasoning);

    let response = Response::from_events(&whole);
    assert_eq!(
        coalesce(chunked),
        coalesce(whole),
        "chunking changed the events (format {name}, seed {seed})"
    );
    assert_eq!(
        parse(grammar, options(), input),
        response,
        "parse differs from the streamed events"
    );
});
