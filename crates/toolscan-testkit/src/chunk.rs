//! Chunk plans, and feeding a [`Parser`] an input cut by one.
//!
//! A [`Plan`] is a named list of piece sizes: the whole input at once,
//! fixed sizes, seeded random sizes or explicit cut offsets. [`feed`] runs a
//! parser over an input cut by a plan through one of the parser's APIs
//! ([`Api`]); [`feed_every_api`] runs all of them and checks they agree.
//!
//! ```
//! use toolscan_testkit::chunk::{self, Api, Plan};
//! let input = "Hi <tool_call>{\"name\": \"f\", \"arguments\": {}}</tool_call>";
//! let plan = Plan::fixed(input.len(), 3);
//! let events = chunk::feed(chunk::seeded("hermes"), Api::Sink, input.as_bytes(), &plan);
//! toolscan_testkit::check::check_events(&events).unwrap();
//! ```

use std::fmt;

use toolscan_core::{Event, IdMint, Options, Parser, Registry};

use crate::check::same_coalesced;
use crate::rng::Rng;

/// The fixed piece sizes of [`standard`]: 1 byte, and sizes that put cuts
/// at every offset modulo small primes (inside markers and characters).
pub const FIXED_SIZES: [usize; 6] = [1, 2, 3, 5, 7, 16];

/// The seeds of the random plans of [`standard`].
pub const RANDOM_SEEDS: [u64; 5] = [1, 2, 3, 42, 1234];

/// The largest piece of the random plans of [`standard`].
pub const RANDOM_MAX: usize = 17;

/// A way to cut an input of a given length into pieces: their sizes, in
/// order (an empty piece is allowed: feeding it does nothing).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    /// What the plan is, for messages (`whole`, `size 3`, `random seed 42`,
    /// `cuts at [4, 9]`).
    pub name: String,
    sizes: Vec<usize>,
}

impl Plan {
    /// The input in one piece.
    pub fn whole(len: usize) -> Plan {
        Plan {
            name: "whole".into(),
            sizes: vec![len],
        }
    }

    /// Pieces of `n` bytes (the last one shorter).
    ///
    /// # Panics
    ///
    /// If `n` is 0.
    pub fn fixed(len: usize, n: usize) -> Plan {
        assert!(n > 0, "pieces of 0 bytes");
        let mut sizes = vec![n; len / n];
        if !len.is_multiple_of(n) {
            sizes.push(len % n);
        }
        Plan {
            name: format!("size {n}"),
            sizes,
        }
    }

    /// Pieces of random sizes in `1..=max`, drawn from an [`Rng`] seeded
    /// with `seed` (the last one cut to what is left).
    ///
    /// # Panics
    ///
    /// If `max` is 0.
    pub fn random(len: usize, seed: u64, max: usize) -> Plan {
        let mut rng = Rng::new(seed);
        let mut sizes = Vec::new();
        let mut left = len;
        while left > 0 {
            let n = (1 + rng.below(max)).min(left);
            sizes.push(n);
            left -= n;
        }
        Plan {
            name: format!("random seed {seed}"),
            sizes,
        }
    }

    /// The input cut at the given offsets, in any order; an offset past
    /// `len` counts as `len`, and a repeated offset gives an empty piece.
    pub fn cuts(len: usize, offsets: &[usize]) -> Plan {
        let mut at: Vec<usize> = offsets.iter().map(|&o| o.min(len)).collect();
        at.sort_unstable();
        let mut sizes = Vec::with_capacity(at.len() + 1);
        let mut prev = 0;
        for c in at.iter().copied().chain([len]) {
            sizes.push(c - prev);
            prev = c;
        }
        Plan {
            name: format!("cuts at {at:?}"),
            sizes,
        }
    }

    /// The piece sizes.
    pub fn sizes(&self) -> &[usize] {
        &self.sizes
    }

    /// The length of the input the plan cuts.
    pub fn len(&self) -> usize {
        self.sizes.iter().sum()
    }

    /// Whether the plan cuts an empty input.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The pieces of `input`.
    ///
    /// # Panics
    ///
    /// If the plan is for another length.
    pub fn pieces<'a>(&self, input: &'a [u8]) -> Vec<&'a [u8]> {
        self.assert_len(input.len());
        let mut at = 0;
        self.sizes
            .iter()
            .map(|&n| {
                at += n;
                &input[at - n..at]
            })
            .collect()
    }

    /// The pieces of a text, each cut moved forward to the next character
    /// boundary (what [`Parser::feed_str_with`] can be given).
    ///
    /// # Panics
    ///
    /// If the plan is for another length.
    pub fn str_pieces<'a>(&self, input: &'a str) -> Vec<&'a str> {
        self.assert_len(input.len());
        let mut out = Vec::with_capacity(self.sizes.len());
        let (mut from, mut at) = (0, 0);
        for &n in &self.sizes {
            at += n;
            let mut to = at.max(from);
            while !input.is_char_boundary(to) {
                to += 1;
            }
            out.push(&input[from..to]);
            from = to;
        }
        out
    }

    fn assert_len(&self, len: usize) {
        assert_eq!(
            self.len(),
            len,
            "plan {} is for {} bytes, the input has {len}",
            self.name,
            self.len()
        );
    }
}

impl fmt::Display for Plan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)
    }
}

/// The plans every corpus case runs under: whole, the [`FIXED_SIZES`], and
/// random sizes up to [`RANDOM_MAX`] for each of the [`RANDOM_SEEDS`] —
/// splitting UTF-8 characters and multi-byte markers.
pub fn standard(len: usize) -> Vec<Plan> {
    let mut plans = vec![Plan::whole(len)];
    plans.extend(FIXED_SIZES.iter().map(|&n| Plan::fixed(len, n)));
    plans.extend(
        RANDOM_SEEDS
            .iter()
            .map(|&seed| Plan::random(len, seed, RANDOM_MAX)),
    );
    plans
}

/// How events are taken from a parser.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Api {
    /// [`Parser::feed`] per piece, the returned `Vec`s concatenated (a
    /// delta is not merged with the previous piece's), then
    /// [`Parser::finish`].
    Feed,
    /// [`Parser::feed_into`] and [`Parser::finish_into`] one `Vec`.
    FeedInto,
    /// The sink API: [`Parser::feed_with`] and [`Parser::finish_with`] into
    /// a `Vec<Event>` sink.
    Sink,
    /// [`Parser::feed_str_with`] into a `Vec<Event>` sink, the pieces moved
    /// to character boundaries ([`Plan::str_pieces`]); for UTF-8 input
    /// only.
    Str,
}

impl Api {
    /// Every API.
    pub const ALL: [Api; 4] = [Api::Feed, Api::FeedInto, Api::Sink, Api::Str];

    /// The APIs that can be given `input`: all of them for UTF-8, all but
    /// [`Api::Str`] otherwise.
    pub fn for_input(input: &[u8]) -> &'static [Api] {
        if std::str::from_utf8(input).is_ok() {
            &Api::ALL
        } else {
            &Api::ALL[..3]
        }
    }
}

/// Options for tests: call ids minted from seed 0, so that two parsers
/// given the same input give equal events.
pub fn seeded_options() -> Options {
    Options::new().with_ids(IdMint::Seeded(0))
}

/// A parser for a built-in format (or `auto`) with `options`.
///
/// # Panics
///
/// If the registry has no such format.
pub fn parser(format: &str, options: Options) -> Parser {
    let g = Registry::builtin()
        .grammar(format)
        .unwrap_or_else(|e| panic!("format {format}: {e}"));
    Parser::new(g, options)
}

/// A parser for a built-in format with [`seeded_options`].
pub fn seeded(format: &str) -> Parser {
    parser(format, seeded_options())
}

/// Feeds `input`, cut by `plan`, to `parser` through `api` and finishes it;
/// returns every event.
///
/// Also checks that a finished parser stays finished: feeding and finishing
/// it again gives nothing.
///
/// # Panics
///
/// If `plan` is for another length, if `api` is [`Api::Str`] and `input`
/// is not UTF-8, or if the finished parser emits anything more.
pub fn feed(mut parser: Parser, api: Api, input: &[u8], plan: &Plan) -> Vec<Event> {
    let mut out = Vec::new();
    match api {
        Api::Feed => {
            for piece in plan.pieces(input) {
                out.extend(parser.feed(piece));
            }
            out.extend(parser.finish());
        }
        Api::FeedInto => {
            for piece in plan.pieces(input) {
                parser.feed_into(piece, &mut out);
            }
            parser.finish_into(&mut out);
        }
        Api::Sink => {
            for piece in plan.pieces(input) {
                parser.feed_with(piece, &mut out);
            }
            parser.finish_with(&mut out);
        }
        Api::Str => {
            let text = std::str::from_utf8(input).expect("Api::Str needs UTF-8 input");
            for piece in plan.str_pieces(text) {
                parser.feed_str_with(piece, &mut out);
            }
            parser.finish_with(&mut out);
        }
    }
    let mut after = parser.feed(b"<tool_call>{\"name\": \"f\"");
    parser.feed_str_with("[TOOL_CALLS]", &mut after);
    parser.finish_with(&mut after);
    assert!(
        after.is_empty() && parser.is_finished(),
        "{api:?}: events after finish: {after:?}"
    );
    out
}

/// Feeds `input` cut by `plan` through every API that can take it
/// ([`Api::for_input`]), each to a fresh parser from `make`, and checks that
/// they agree: [`Api::FeedInto`] and [`Api::Sink`] give the same events,
/// the others the same events once coalesced. Returns the events of
/// [`Api::FeedInto`].
pub fn feed_every_api(
    make: impl Fn() -> Parser,
    input: &[u8],
    plan: &Plan,
) -> Result<Vec<Event>, String> {
    let reference = feed(make(), Api::FeedInto, input, plan);
    for &api in Api::for_input(input) {
        let events = feed(make(), api, input, plan);
        match api {
            Api::FeedInto => {}
            Api::Sink => {
                if events != reference {
                    return Err(format!(
                        "[{plan}] the sink API gives other events than feed_into:\n   sink: {events:?}\n   feed_into: {reference:?}"
                    ));
                }
            }
            Api::Feed | Api::Str => same_coalesced(&events, &reference)
                .map_err(|e| format!("[{plan}] {api:?} differs from FeedInto: {e}"))?,
        }
    }
    Ok(reference)
}

/// Feeds `input` under every [`standard`] plan through every API (see
/// [`feed_every_api`]), checks the event contract
/// ([`check_events`](crate::check::check_events)) on each run and that
/// every plan gives the same coalesced events; returns them.
pub fn invariant(make: impl Fn() -> Parser, input: &[u8]) -> Result<Vec<Event>, String> {
    let mut reference: Option<Vec<Event>> = None;
    for plan in standard(input.len()) {
        let events = feed_every_api(&make, input, &plan)?;
        crate::check::check_events(&events).map_err(|e| format!("[{plan}] {e}"))?;
        let merged = toolscan_core::coalesce(events);
        match &reference {
            None => reference = Some(merged),
            Some(r) => {
                if &merged != r {
                    return Err(format!(
                        "[{plan}] other coalesced events than whole input:\n   got: {merged:?}\n  want: {r:?}"
                    ));
                }
            }
        }
    }
    Ok(reference.unwrap_or_default())
}

/// The coalesced events of `input` under built-in `format` with `options`:
/// the same under every [`standard`] plan and every API ([`invariant`]),
/// and what the one-shot `parse` gives.
///
/// # Panics
///
/// If the format is unknown, or the runs disagree (the message names the
/// format, the plan and the input).
pub fn events_everywhere(format: &str, options: &Options, input: &str) -> Vec<Event> {
    let events = invariant(|| parser(format, options.clone()), input.as_bytes())
        .unwrap_or_else(|e| panic!("{format}: {e}\ninput: {input:?}"));
    let g = Registry::builtin().grammar(format).expect("format");
    assert_eq!(
        toolscan_core::parse(g, options.clone(), input.as_bytes()),
        toolscan_core::Response::from_events(&events),
        "{format}: parse differs from the streamed events\ninput: {input:?}"
    );
    events
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plans_cover_the_input() {
        for len in [0, 1, 5, 16, 17, 100] {
            for plan in standard(len)
                .into_iter()
                .chain([Plan::cuts(len, &[3, 1, 3, 200])])
            {
                assert_eq!(plan.len(), len, "{plan}");
            }
        }
        assert_eq!(Plan::fixed(7, 3).sizes(), [3, 3, 1]);
        assert_eq!(Plan::cuts(5, &[4, 1, 4]).sizes(), [1, 3, 0, 1]);
        assert_eq!(Plan::whole(0).sizes(), [0]);
        let r = Plan::random(1000, 9, 4);
        assert!(r.sizes().iter().all(|&n| (1..=4).contains(&n)));
        assert_eq!(r, Plan::random(1000, 9, 4), "a seed gives one plan");
        assert_ne!(r.sizes(), Plan::random(1000, 10, 4).sizes());
    }

    #[test]
    fn pieces_follow_the_plan_and_str_pieces_move_to_char_boundaries() {
        let s = "aé😀b";
        let plan = Plan::fixed(s.len(), 1);
        assert_eq!(plan.pieces(s.as_bytes()).concat(), s.as_bytes());
        assert_eq!(plan.str_pieces(s), ["a", "é", "", "😀", "", "", "", "b"]);
        assert_eq!(Plan::cuts(s.len(), &[2]).str_pieces(s), ["aé", "😀b"]);
    }

    #[test]
    fn every_api_gives_the_same_events() {
        let input =
            "Hi 東京 <tool_call>{\"name\": \"f\", \"arguments\": {\"a\": \"é\"}}</tool_call> bye";
        for plan in standard(input.len()) {
            let events = feed_every_api(|| seeded("hermes"), input.as_bytes(), &plan).unwrap();
            crate::check::check_events(&events).unwrap();
        }
    }
}
