//! The parsers JavaScript holds, by handle: a table of slots, a freed
//! slot reused by the next parser.

use std::cell::RefCell;

use toolscan_core::sink::WholeCalls;
use toolscan_core::{Event, Parser, Sink};

use crate::buffers::{answer, answer_with, with_input};
use crate::json::{write_events, Failure};
use crate::options;
use crate::utf8::{Refusal, Strict};
use crate::FAILED;

/// One parser and what the boundary keeps for it.
struct Slot {
    parser: Parser,
    /// `Some` with `invalidUtf8: "throw"`: the check of the bytes.
    strict: Option<Strict>,
    /// `finish` was called: `feed` is refused, `finish` answers nothing.
    finished: bool,
    /// `Some` with `wholeCalls`: where a call's events wait for its end.
    whole: Option<WholeCalls>,
}

thread_local! {
    /// Slot `i` is the parser of handle `i`; `None` once freed.
    static SLOTS: RefCell<Vec<Option<Slot>>> = const { RefCell::new(Vec::new()) };
    /// The events of the current call, reused (consecutive deltas of one
    /// kind are merged as the core's `Vec<Event>` sink merges them).
    static EVENTS: RefCell<Vec<Event>> = const { RefCell::new(Vec::new()) };
}

/// A new parser from the options in the input buffer (`len` bytes); its
/// handle, or [`FAILED`](crate::FAILED) with the error in the output buffer.
pub(crate) fn new(len: usize) -> i32 {
    let config = match with_input(len, options::read) {
        Ok(c) => c,
        Err(f) => return answer(|out| f.write(out)),
    };
    // The format's canonical name is the answer (JavaScript shows it).
    let name = config.name;
    let slot = Slot {
        parser: Parser::new(config.grammar, config.options),
        strict: config.strict_utf8.then(Strict::default),
        finished: false,
        whole: config.whole_calls.then(WholeCalls::new),
    };
    SLOTS.with_borrow_mut(|slots| {
        let handle = match slots.iter().position(Option::is_none) {
            Some(free) => {
                slots[free] = Some(slot);
                free
            }
            None => {
                slots.push(Some(slot));
                slots.len() - 1
            }
        };
        match i32::try_from(handle) {
            Ok(h) => {
                answer(|out| {
                    out.extend_from_slice(name.as_bytes());
                    true
                });
                h
            }
            Err(_) => {
                slots[handle] = None;
                answer(|out| Failure::Options("too many parsers".into()).write(out))
            }
        }
    })
}

/// Runs `f` on the parser of `handle` and the emptied event list, then
/// writes the events (or the error) as the answer.
fn with_slot(
    handle: i32,
    f: impl FnOnce(&mut Slot, &mut Vec<Event>) -> Result<(), Failure>,
) -> i32 {
    SLOTS.with_borrow_mut(|slots| {
        let slot = usize::try_from(handle)
            .ok()
            .and_then(|h| slots.get_mut(h))
            .and_then(Option::as_mut);
        let Some(slot) = slot else {
            return answer(|out| Failure::Freed.write(out));
        };
        EVENTS.with_borrow_mut(|events| {
            events.clear();
            let result = f(slot, events);
            answer_with(|out| match result {
                Ok(()) => write_events(out, events),
                Err(f) => {
                    f.write(out);
                    FAILED
                }
            })
        })
    })
}

/// Feeds `len` bytes of the input buffer to the parser of `handle`.
pub(crate) fn feed(handle: i32, len: usize) -> i32 {
    with_slot(handle, |slot, events| {
        if slot.finished {
            return Err(Failure::Finished);
        }
        with_input(len, |chunk| {
            if let Some(strict) = &mut slot.strict {
                let at = slot.parser.offset();
                strict.check(chunk).map_err(|r| {
                    Failure::InvalidUtf8(match r {
                        Refusal::At(k) => at + k as u64,
                        Refusal::Pending(back) => at.saturating_sub(back as u64),
                    })
                })?;
            }
            match &mut slot.whole {
                Some(whole) => slot.parser.feed_with(chunk, &mut whole.sink(events)),
                None => slot.parser.feed_with(chunk, &mut *events),
            }
            Ok(())
        })
    })
}

/// Ends the answer of the parser of `handle`; a second call answers no
/// events.
pub(crate) fn finish(handle: i32, at_stop: bool) -> i32 {
    with_slot(handle, |slot, events| {
        if slot.finished {
            return Ok(());
        }
        slot.finished = true;
        if let Some(left) = slot.strict.as_ref().map(Strict::unfinished) {
            if left > 0 {
                return Err(Failure::InvalidUtf8(
                    slot.parser.offset().saturating_sub(left as u64),
                ));
            }
        }
        let mut whole = slot.whole.as_mut().map(|w| w.sink(&mut *events));
        let sink: &mut dyn Sink = match &mut whole {
            Some(w) => w,
            None => &mut *events,
        };
        if at_stop {
            slot.parser.finish_at_stop_with(sink);
        } else {
            slot.parser.finish_with(sink);
        }
        Ok(())
    })
}

/// Bytes fed to the parser of `handle`; -1 for no such parser.
pub(crate) fn offset(handle: i32) -> f64 {
    SLOTS.with_borrow(|slots| {
        usize::try_from(handle)
            .ok()
            .and_then(|h| slots.get(h))
            .and_then(Option::as_ref)
            .map_or(-1.0, |s| s.parser.offset() as f64)
    })
}

/// Frees the parser of `handle`.
pub(crate) fn free(handle: i32) {
    SLOTS.with_borrow_mut(|slots| {
        if let Some(slot) = usize::try_from(handle).ok().and_then(|h| slots.get_mut(h)) {
            *slot = None;
        }
        // Trailing free slots go, so that a page that made many parsers
        // once does not keep their table.
        while matches!(slots.last(), Some(None)) {
            slots.pop();
        }
    })
}

/// The number of live parsers (for the tests: nothing leaks).
pub(crate) fn live() -> usize {
    SLOTS.with_borrow(|slots| slots.iter().filter(|s| s.is_some()).count())
}
