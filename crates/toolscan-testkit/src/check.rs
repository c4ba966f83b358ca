//! The event contract (the guarantees of docs/formats.md), checked on one event
//! sequence.
//!
//! Every check returns `Result<_, String>`: the error says what is wrong
//! and where. Plain tests `unwrap` it; proptest callers map it to a
//! `TestCaseError` (`.map_err(TestCaseError::fail)`); the fuzz target
//! panics with it.

use std::ops::Range;

use toolscan_core::{coalesce, DiagnosticKind, Event, FinishReason};

/// What [`check_events`] counted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    /// Calls started (`tool_call_start`).
    pub started: usize,
    /// Calls completed (`tool_call_end`).
    pub completed: usize,
    /// Started calls given up by a `malformed`, `limit` or `truncated`
    /// diagnostic (their bytes came back as text).
    pub abandoned: usize,
}

/// The call being streamed.
struct Open {
    index: usize,
    id: String,
    name: String,
    /// The argument deltas so far, concatenated.
    args: String,
}

/// Checks the structural rules of the contract on the events of one whole
/// run (`finish` included) and counts the calls:
///
/// - `done` is the last event and comes once; its `finish_reason` is
///   `length` exactly when there is a `truncated` diagnostic, else
///   `tool_calls` exactly when a call completed, else `stop`;
/// - `text`, `reasoning` and `tool_call_args` deltas are not empty;
/// - `tool_call_start` indices are the ordinals 0, 1, 2, …; ids are unique;
///   ids and names are not empty;
/// - calls do not interleave: after a call's start come only its argument
///   deltas and the diagnostics of the schema check
///   ([`DiagnosticKind::is_schema`]), then its `tool_call_end` (with the
///   start's id and name) or a `malformed`, `limit`, `truncated`,
///   `not_allowed` (a call the schema check rejects) or `unclosed` (a value
///   with no closing tag that holds markup) diagnostic that abandons it;
///   no text, reasoning or other diagnostic inside a call,
///   and no call left open at `done`;
/// - the concatenated argument deltas of a call are exactly its
///   `arguments` text, which parses to a JSON object.
pub fn check_events(events: &[Event]) -> Result<Tally, String> {
    let finish_reason = match events.last() {
        Some(Event::Done { finish_reason }) => *finish_reason,
        other => return Err(format!("the last event is not done: {other:?}")),
    };
    let mut tally = Tally::default();
    let mut ids: Vec<&str> = Vec::new();
    let mut open: Option<Open> = None;
    let mut truncated = false;
    for (k, e) in events.iter().enumerate() {
        let at = |msg: String| format!("event {k} ({e:?}): {msg}");
        match e {
            Event::Text { delta } | Event::Reasoning { delta } => {
                if delta.is_empty() {
                    return Err(at("empty delta".into()));
                }
                if let Some(o) = &open {
                    return Err(at(format!("inside call {}", o.index)));
                }
            }
            Event::ToolCallStart { index, id, name } => {
                if let Some(o) = &open {
                    return Err(at(format!("call {} has not ended", o.index)));
                }
                if *index != tally.started {
                    return Err(at(format!("index is not the ordinal {}", tally.started)));
                }
                if id.is_empty() || name.is_empty() {
                    return Err(at("empty id or name".into()));
                }
                if ids.contains(&id.as_str()) {
                    return Err(at("the id is used twice".into()));
                }
                ids.push(id);
                tally.started += 1;
                open = Some(Open {
                    index: *index,
                    id: id.clone(),
                    name: name.clone(),
                    args: String::new(),
                });
            }
            Event::ToolCallArgs { index, delta } => {
                let Some(o) = open.as_mut().filter(|o| o.index == *index) else {
                    return Err(at("not inside this call".into()));
                };
                if delta.is_empty() {
                    return Err(at("empty delta".into()));
                }
                o.args.push_str(delta);
            }
            Event::ToolCallEnd {
                index,
                id,
                name,
                arguments,
            } => {
                let Some(o) = open.take().filter(|o| o.index == *index) else {
                    return Err(at("not inside this call".into()));
                };
                if (id, name) != (&o.id, &o.name) {
                    return Err(at(format!(
                        "the start said id {:?}, name {:?}",
                        o.id, o.name
                    )));
                }
                if o.args != arguments.as_str() {
                    return Err(at(format!("the argument deltas were {:?}", o.args)));
                }
                // Valid JSON, an object (numbers beyond `f64`, like
                // `1e400`, are valid JSON that only some types can hold).
                serde_json::from_str::<&serde_json::value::RawValue>(arguments.as_str())
                    .map_err(|err| at(format!("the arguments are not JSON: {err}")))?;
                if !arguments.as_str().trim_start().starts_with('{') {
                    return Err(at("the arguments are not a JSON object".into()));
                }
                tally.completed += 1;
            }
            Event::Diagnostic(d) => {
                truncated |= d.kind == DiagnosticKind::Truncated;
                if let Some(o) = &open {
                    match d.kind {
                        DiagnosticKind::Malformed
                        | DiagnosticKind::Limit
                        | DiagnosticKind::Truncated
                        | DiagnosticKind::NotAllowed
                        | DiagnosticKind::Unclosed => {
                            open = None;
                            tally.abandoned += 1;
                        }
                        k if k.is_schema() => {}
                        _ => return Err(at(format!("inside call {}", o.index))),
                    }
                }
            }
            Event::Done { .. } => {
                if k + 1 != events.len() {
                    return Err(at("done before the end".into()));
                }
                if let Some(o) = &open {
                    return Err(at(format!("call {} neither ended nor abandoned", o.index)));
                }
            }
            other => return Err(at(format!("an event the checker does not know: {other:?}"))),
        }
    }
    let want = if truncated {
        FinishReason::Length
    } else if tally.completed > 0 {
        FinishReason::ToolCalls
    } else {
        FinishReason::Stop
    };
    if finish_reason != want {
        return Err(format!(
            "finish_reason {finish_reason:?}, want {want:?} ({} calls completed, truncated: {truncated})",
            tally.completed
        ));
    }
    Ok(tally)
}

/// Nothing lost (contract invariant 2): the text deltas, concatenated, are
/// exactly the input outside `spans` (the raw spans of the completed
/// calls), bytes that are not UTF-8 as U+FFFD (`String::from_utf8_lossy`).
/// Holds with reasoning separation off, for formats that drop no framing
/// (`harmony`, `functionary-v3.2`, `kimi-k3`, `command-r7b`, the
/// `directly-answer` object of `command-r` and `json`'s `{"response":
/// …}` envelope drop theirs: see the formats page's guarantees); with no
/// completed call `spans` is empty and the text is the whole input.
pub fn nothing_lost(events: &[Event], input: &[u8], spans: &[Range<usize>]) -> Result<(), String> {
    let mut outside = Vec::with_capacity(input.len());
    let mut from = 0;
    for s in spans {
        if s.start < from || s.end > input.len() || s.start > s.end {
            return Err(format!("spans {spans:?} are not in order within the input"));
        }
        outside.extend_from_slice(&input[from..s.start]);
        from = s.end;
    }
    outside.extend_from_slice(&input[from..]);
    let want = String::from_utf8_lossy(&outside);
    let got = text_of(events);
    if got != want {
        return Err(format!(
            "the text is not the input outside the calls:\n   got: {got:?}\n  want: {want:?}"
        ));
    }
    Ok(())
}

/// Every diagnostic's offset lies within an input of `len` bytes.
pub fn offsets_within(events: &[Event], len: usize) -> Result<(), String> {
    for e in events {
        if let Event::Diagnostic(d) = e {
            if d.offset > len as u64 {
                return Err(format!("diagnostic past the input ({len} bytes): {d:?}"));
            }
        }
    }
    Ok(())
}

/// Two runs give the same events once consecutive deltas are merged
/// (the form chunking invariance is stated in); the error shows the first
/// event that differs.
pub fn same_coalesced(got: &[Event], want: &[Event]) -> Result<(), String> {
    let got = coalesce(got.iter().cloned());
    let want = coalesce(want.iter().cloned());
    if got == want {
        return Ok(());
    }
    let k = got
        .iter()
        .zip(&want)
        .position(|(a, b)| a != b)
        .unwrap_or(got.len().min(want.len()));
    Err(format!(
        "coalesced events differ at {k} ({} vs {} events):\n   got: {:?}\n  want: {:?}",
        got.len(),
        want.len(),
        got.get(k),
        want.get(k)
    ))
}

/// The text deltas, concatenated.
pub fn text_of(events: &[Event]) -> String {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Text { delta } => Some(delta.as_str()),
            _ => None,
        })
        .collect()
}

/// The completed calls, in order: (name, arguments as a JSON value).
///
/// # Panics
///
/// If a call's arguments do not parse (the contract says they always do).
pub fn calls_of(events: &[Event]) -> Vec<(String, serde_json::Value)> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::ToolCallEnd {
                name, arguments, ..
            } => Some((
                name.clone(),
                serde_json::Value::Object(arguments.parse().expect("arguments parse")),
            )),
            _ => None,
        })
        .collect()
}

/// The names of the completed calls, in order.
pub fn names_of(events: &[Event]) -> Vec<&str> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::ToolCallEnd { name, .. } => Some(name.as_str()),
            _ => None,
        })
        .collect()
}

/// The diagnostics' kinds and offsets, in order.
pub fn diagnostics_of(events: &[Event]) -> Vec<(toolscan_core::DiagnosticKind, u64)> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Diagnostic(d) => Some((d.kind, d.offset)),
            _ => None,
        })
        .collect()
}

/// The argument deltas of every call, concatenated.
pub fn args_of(events: &[Event]) -> String {
    events
        .iter()
        .filter_map(|e| match e {
            Event::ToolCallArgs { delta, .. } => Some(delta.as_str()),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolscan_core::{Arguments, Diagnostic};

    fn start(index: usize, id: &str) -> Event {
        Event::ToolCallStart {
            index,
            id: id.into(),
            name: "f".into(),
        }
    }

    fn args(index: usize, delta: &str) -> Event {
        Event::ToolCallArgs {
            index,
            delta: delta.into(),
        }
    }

    fn end(index: usize, id: &str, json: &str) -> Event {
        Event::ToolCallEnd {
            index,
            id: id.into(),
            name: "f".into(),
            arguments: Arguments::new(json).unwrap(),
        }
    }

    fn text(s: &str) -> Event {
        Event::Text { delta: s.into() }
    }

    fn diag(kind: DiagnosticKind) -> Event {
        Event::Diagnostic(Diagnostic::new(kind, 0, ""))
    }

    fn done(finish_reason: FinishReason) -> Event {
        Event::Done { finish_reason }
    }

    #[test]
    fn a_well_formed_sequence_passes() {
        let ev = [
            text("a"),
            start(0, "x"),
            args(0, "{\"a\""),
            args(0, ": 1}"),
            end(0, "x", "{\"a\": 1}"),
            start(1, "y"),
            args(1, "{"),
            diag(DiagnosticKind::Truncated),
            text("b"),
            done(FinishReason::Length),
        ];
        let t = check_events(&ev).unwrap();
        assert_eq!(
            t,
            Tally {
                started: 2,
                completed: 1,
                abandoned: 1
            }
        );
    }

    #[test]
    fn each_broken_rule_is_reported() {
        use FinishReason::*;
        let bad: Vec<(&str, Vec<Event>)> = vec![
            ("no done", vec![text("a")]),
            ("done twice", vec![done(Stop), done(Stop)]),
            ("empty text", vec![text(""), done(Stop)]),
            (
                "index not ordinal",
                vec![start(1, "x"), end(1, "x", "{}"), done(ToolCalls)],
            ),
            (
                "id twice",
                vec![
                    start(0, "x"),
                    end(0, "x", "{}"),
                    start(1, "x"),
                    end(1, "x", "{}"),
                    done(ToolCalls),
                ],
            ),
            ("args unstarted", vec![args(0, "{}"), done(Stop)]),
            (
                "empty args",
                vec![
                    start(0, "x"),
                    args(0, ""),
                    end(0, "x", "{}"),
                    done(ToolCalls),
                ],
            ),
            (
                "deltas differ",
                vec![
                    start(0, "x"),
                    args(0, "{ }"),
                    end(0, "x", "{}"),
                    done(ToolCalls),
                ],
            ),
            (
                "end id differs",
                vec![start(0, "x"), end(0, "y", "{}"), done(ToolCalls)],
            ),
            (
                "text in call",
                vec![start(0, "x"), text("a"), end(0, "x", "{}"), done(ToolCalls)],
            ),
            (
                "interleaved",
                vec![start(0, "x"), start(1, "y"), done(Stop)],
            ),
            ("left open", vec![start(0, "x"), done(Stop)]),
            (
                "utf8 diagnostic in call",
                vec![start(0, "x"), diag(DiagnosticKind::InvalidUtf8), done(Stop)],
            ),
            (
                "stop with a call",
                vec![start(0, "x"), end(0, "x", "{}"), done(Stop)],
            ),
            ("tool_calls without", vec![done(ToolCalls)]),
            ("length without truncation", vec![done(Length)]),
            (
                "truncation but stop",
                vec![diag(DiagnosticKind::Truncated), done(Stop)],
            ),
        ];
        for (what, ev) in bad {
            assert!(check_events(&ev).is_err(), "{what}: {ev:?}");
        }
    }

    #[test]
    fn nothing_lost_compares_the_text_outside_the_spans() {
        let ev = [text("ab"), text("\u{FFFD}e"), done(FinishReason::Stop)];
        let input = b"abXY\xffVe";
        assert_eq!(nothing_lost(&ev, input, &[2..4, 5..6]), Ok(()));
        assert!(nothing_lost(&ev, input, &[2..3, 5..6]).is_err());
        assert!(
            nothing_lost(&ev, input, &[5..6, 2..4]).is_err(),
            "out of order"
        );
        assert_eq!(nothing_lost(&ev, b"ab\xffe", &[]), Ok(()));
    }

    #[test]
    fn same_coalesced_merges_deltas_only() {
        let a = [text("a"), text("b"), done(FinishReason::Stop)];
        let b = [text("ab"), done(FinishReason::Stop)];
        let c = [text("ab"), done(FinishReason::Length)];
        assert!(same_coalesced(&a, &b).is_ok());
        assert!(same_coalesced(&a, &c).is_err());
        assert!(same_coalesced(&a, &b[1..]).is_err());
    }
}
