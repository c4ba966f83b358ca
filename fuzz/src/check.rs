//! The contract checks of one run, and of a chunked run against the whole
//! input's.

use toolscan_core::Event;
use toolscan_testkit::check::{check_events, offsets_within, same_coalesced, Tally};

use crate::formats::TextRule;

/// What is known of the run being checked.
pub struct Run<'a> {
    /// The model output.
    pub input: &'a [u8],
    /// The input decoded as the parser must decode text (invalid UTF-8 as
    /// U+FFFD).
    pub lossy: &'a str,
    /// Reasoning separation was on.
    pub reasoning: bool,
    /// What the text may be compared with.
    pub rule: TextRule,
}

/// The invariants one run must satisfy on its own (contract §2):
///
/// - the event contract (`check_events`: one `done`, last, agreeing with
///   the calls and a truncation; calls ordinal, not interleaved, deltas
///   exactly their arguments, an object; no empty delta);
/// - diagnostic offsets within the input; no `reasoning` event without
///   reasoning separation;
/// - nothing lost: without reasoning separation, for a format that drops
///   nothing but calls ([`TextRule::Exact`]), and with no completed call,
///   the text is the input; for every format that does not decode its text
///   from JSON, the text and reasoning, in order, are a subsequence of the
///   input (nothing invented, nothing reordered).
pub fn one_run(events: &[Event], run: &Run<'_>) -> Tally {
    let tally = check_events(events).unwrap_or_else(|e| panic!("{e}"));
    offsets_within(events, run.input.len()).unwrap_or_else(|e| panic!("{e}"));
    if !run.reasoning {
        assert!(
            !events.iter().any(|e| matches!(e, Event::Reasoning { .. })),
            "reasoning event with reasoning separation off"
        );
    }
    if run.rule == TextRule::Exact && !run.reasoning && tally.completed == 0 {
        let mut want = run.lossy;
        for e in events {
            if let Event::Text { delta } = e {
                match want.strip_prefix(delta.as_str()) {
                    Some(rest) => want = rest,
                    None => panic!(
                        "nothing lost: the text is not the input; at {:?} came {delta:?}",
                        &want[..want.len().min(80)]
                    ),
                }
            }
        }
        assert!(
            want.is_empty(),
            "nothing lost: the text ended before the input: {:?} is missing",
            &want[..want.len().min(80)]
        );
    }
    if run.rule != TextRule::Decoded {
        let mut rest = run.lossy.chars();
        for e in events {
            if let Event::Text { delta } | Event::Reasoning { delta } = e {
                for c in delta.chars() {
                    assert!(
                        rest.any(|d| d == c),
                        "text {delta:?} is not in the input, in order (nothing may be invented)"
                    );
                }
            }
        }
    }
    tally
}

/// Chunking invariance: a chunked run's coalesced events are the whole
/// input's.
pub fn same_events(chunked: &[Event], whole: &[Event], what: &dyn std::fmt::Display) {
    if let Err(e) = same_coalesced(chunked, whole) {
        panic!("chunking changed the events ({what}): {e}");
    }
}
