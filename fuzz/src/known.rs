//! Skipping known panics, so that a run goes on looking for new findings
//! while a reported one is being fixed.
//!
//! `TOOLSCAN_FUZZ_KNOWN` lists panic locations as `FILE:LINE` (a suffix of
//! the path, e.g. `call/calls.rs:402`), separated by commas. A panic at one
//! of them is not a finding: the input is dropped (not added to the
//! corpus) and the run goes on. Any other panic aborts, as libFuzzer's
//! hook always does. Unset (the default), nothing is skipped.

use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::OnceLock;

thread_local! {
    static KNOWN_HIT: Cell<bool> = const { Cell::new(false) };
}

fn known() -> &'static [(String, u32)] {
    static KNOWN: OnceLock<Vec<(String, u32)>> = OnceLock::new();
    KNOWN.get_or_init(|| {
        let Ok(list) = std::env::var("TOOLSCAN_FUZZ_KNOWN") else {
            return Vec::new();
        };
        list.split(',')
            .filter_map(|s| {
                let (file, line) = s.trim().rsplit_once(':')?;
                Some((file.to_string(), line.parse().ok()?))
            })
            .collect()
    })
}

/// Puts a hook before libFuzzer's (which aborts): a panic at a known
/// location is only noted. Called once, from the target's `init`.
pub fn install() {
    if known().is_empty() {
        return;
    }
    eprintln!("skipping panics at {:?} (TOOLSCAN_FUZZ_KNOWN)", known());
    let abort = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let at_known = info.location().is_some_and(|l| {
            known()
                .iter()
                .any(|(f, n)| l.file().ends_with(f.as_str()) && l.line() == *n)
        });
        if at_known {
            KNOWN_HIT.with(|h| h.set(true));
        } else {
            abort(info);
        }
    }));
}

/// Runs one input's checks; `false` if it ended in a known panic.
pub fn run(f: impl FnOnce()) -> bool {
    if known().is_empty() {
        f();
        return true;
    }
    KNOWN_HIT.with(|h| h.set(false));
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(()) => true,
        Err(payload) => {
            if KNOWN_HIT.with(|h| h.get()) {
                false
            } else {
                std::panic::resume_unwind(payload)
            }
        }
    }
}
