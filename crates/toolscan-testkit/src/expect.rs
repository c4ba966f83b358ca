//! What an input makes under some formats, checked in one call: the
//! completed calls, the text left and the kinds of its diagnostics, the
//! input fed under every chunk plan and API ([`chunk::events_everywhere`]:
//! the runs agree, keep the event contract and equal `parse`).

use serde_json::Value;
use toolscan_core::{DiagnosticKind, Event};

use crate::check::{calls_of, diagnostics_of, text_of};
use crate::chunk;

/// The coalesced events of `input` under `format`, ids minted from seed 0.
///
/// # Panics
///
/// If the format is unknown or the runs disagree.
pub fn run(format: &str, input: &str) -> Vec<Event> {
    chunk::events_everywhere(format, &chunk::seeded_options(), input)
}

/// The kinds of the diagnostics, in order.
pub fn kinds(events: &[Event]) -> Vec<DiagnosticKind> {
    diagnostics_of(events).into_iter().map(|(k, _)| k).collect()
}

/// A completed call as [`calls_of`] gives it.
pub fn call(name: &str, args: Value) -> (String, Value) {
    (name.to_string(), args)
}

/// `input` under each of `formats` makes exactly the calls `want`, leaves
/// `text_left` as text and reports diagnostics of the kinds `diags`.
///
/// # Panics
///
/// If any of that differs (the message names the format and the input).
pub fn expect(
    formats: &[&str],
    input: &str,
    want: &[(String, Value)],
    text_left: &str,
    diags: &[DiagnosticKind],
) {
    for format in formats {
        let ev = run(format, input);
        assert_eq!(calls_of(&ev), want, "{format}: calls of {input:?}");
        assert_eq!(text_of(&ev), text_left, "{format}: text of {input:?}");
        assert_eq!(kinds(&ev), diags, "{format}: diagnostics of {input:?}");
    }
}
