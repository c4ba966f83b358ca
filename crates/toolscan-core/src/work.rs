//! Counts of work the parser does where a chunking could make it grow
//! with the square of the input, for the tests that it does not (a
//! count, never a time). Per thread: tests run on several at once. Only
//! paths off the hot ones count (calls held inside reasoning).

use std::cell::Cell;

thread_local! {
    static CLOSER_SEARCH: Cell<u64> = const { Cell::new(0) };
}

/// Bytes read, on this thread, by the search for a reasoning closer in
/// held calls (`Hold`, in `engine/parser.rs`), since the thread began.
pub fn closer_search_bytes() -> u64 {
    CLOSER_SEARCH.with(Cell::get)
}

pub(crate) fn count_closer_search(n: usize) {
    CLOSER_SEARCH.with(|c| c.set(c.get().saturating_add(n as u64)));
}
