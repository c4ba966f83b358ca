//! Feeding a parser an input in the chunks, and through the API, that a
//! chunking byte picks.
//!
//! A chunking byte of 0 feeds the input at once through `feed_into`. Any
//! other value seeds random chunk sizes (`toolscan_testkit::rng::Rng`)
//! from 1 up to a maximum picked by its low three bits ([`MAX_CHUNK`]);
//! bits 3–4 pick the API ([`Api`]). Sizes are drawn as the input is fed,
//! so a plan costs no allocation.

use toolscan_core::{Event, Parser};
use toolscan_testkit::rng::Rng;

/// The largest chunk, by the low three bits of the chunking byte.
pub const MAX_CHUNK: [usize; 8] = [1, 2, 3, 4, 7, 16, 64, 1024];

/// How the chunks reach the parser.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Api {
    /// `feed` per chunk (a `Vec` each), then `finish`.
    Feed,
    /// `feed_into` and `finish_into` one `Vec`.
    FeedInto,
    /// The sink API (`feed_with`, `finish_with`) into a `Vec`.
    Sink,
    /// `feed_str_with`, each cut moved forward to a character boundary
    /// (UTF-8 input only; other input goes through `feed_into`).
    Str,
}

/// The chunk sizes of a chunking byte: `None` is the whole input.
pub struct Sizes {
    rng: Option<(Rng, usize)>,
}

impl Sizes {
    /// The sizes and the API a chunking byte picks.
    pub fn new(chunking: u8) -> (Sizes, Api) {
        if chunking == 0 {
            return (Sizes { rng: None }, Api::FeedInto);
        }
        let max = MAX_CHUNK[usize::from(chunking & 7)];
        let api = [Api::Feed, Api::FeedInto, Api::Sink, Api::Str][usize::from(chunking >> 3) & 3];
        let rng = Rng::new(u64::from(chunking));
        (
            Sizes {
                rng: Some((rng, max)),
            },
            api,
        )
    }

    /// The size of the next chunk, `left` bytes remaining (at least 1).
    pub fn next(&mut self, left: usize) -> usize {
        match &mut self.rng {
            None => left,
            Some((rng, max)) => (1 + rng.below(*max)).min(left),
        }
    }
}

/// Feeds `input` to `parser` in the chunks of `chunking`, then finishes
/// (with `finish_at_stop` when `at_stop`); every event. Checks that a
/// finished parser stays finished: more input and another finish give
/// nothing.
pub fn run(mut parser: Parser, input: &[u8], chunking: u8, at_stop: bool) -> Vec<Event> {
    let (mut sizes, mut api) = Sizes::new(chunking);
    let text = match api {
        Api::Str => std::str::from_utf8(input).ok(),
        _ => None,
    };
    if api == Api::Str && text.is_none() {
        api = Api::FeedInto;
    }
    let mut out = Vec::new();
    let mut at = 0;
    while at < input.len() {
        let mut to = at + sizes.next(input.len() - at);
        match api {
            Api::Feed => out.extend(parser.feed(&input[at..to])),
            Api::FeedInto => parser.feed_into(&input[at..to], &mut out),
            Api::Sink => parser.feed_with(&input[at..to], &mut out),
            Api::Str => {
                let s = text.unwrap_or_default();
                while !s.is_char_boundary(to) {
                    to += 1;
                }
                parser.feed_str_with(&s[at..to], &mut out);
            }
        }
        at = to;
    }
    match (at_stop, api) {
        (true, _) => parser.finish_at_stop_with(&mut out),
        (false, Api::Feed) => out.extend(parser.finish()),
        (false, Api::FeedInto) => parser.finish_into(&mut out),
        (false, _) => parser.finish_with(&mut out),
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
