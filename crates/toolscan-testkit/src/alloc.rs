//! A global allocator that counts, per thread (tests run on several
//! threads at once): allocations, live bytes, and the peak of live bytes.
//! A test binary installs it once:
//!
//! ```ignore
//! #[global_allocator]
//! static ALLOC: toolscan_testkit::alloc::Counting = toolscan_testkit::alloc::Counting;
//! ```
//!
//! then reads [`mark`] and [`since`] around the code it measures.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// The counting allocator: the system allocator, with per-thread counts.
#[derive(Clone, Copy, Debug, Default)]
pub struct Counting;

thread_local! {
    /// (allocations, live bytes, peak live bytes) of this thread.
    static STATS: Cell<(u64, i64, i64)> = const { Cell::new((0, 0, 0)) };
}

fn note(allocs: u64, delta: i64) {
    // `try_with`: the thread may be tearing its locals down.
    let _ = STATS.try_with(|s| {
        let (n, live, peak) = s.get();
        let live = live + delta;
        s.set((n + allocs, live, peak.max(live)));
    });
}

// SAFETY: every method forwards to the system allocator unchanged; the
// bookkeeping touches only a const-initialised thread-local `Cell`, which
// neither allocates nor has a destructor.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note(1, layout.size() as i64);
        // SAFETY: the caller's contract for `alloc`, passed on unchanged.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        note(0, -(layout.size() as i64));
        // SAFETY: `ptr` came from this allocator, that is from `System`.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note(1, layout.size() as i64);
        // SAFETY: the caller's contract for `alloc_zeroed`, passed on.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note(1, new_size as i64 - layout.size() as i64);
        // SAFETY: `ptr` came from `System`; the caller's contract holds.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

/// A point to measure from: (allocations, live bytes) of this thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mark(u64, i64);

impl Mark {
    /// Bytes live on this thread at the mark.
    pub fn live(self) -> i64 {
        self.1
    }
}

/// Resets this thread's peak to what is live now, and marks the point.
pub fn mark() -> Mark {
    let (n, live, _) = STATS.with(|s| s.get());
    STATS.with(|s| s.set((n, live, live)));
    Mark(n, live)
}

/// Allocations (and reallocations) of this thread since `from`, and the
/// peak of live bytes above what was live then.
pub fn since(from: Mark) -> (u64, i64) {
    let (n, _, peak) = STATS.with(|s| s.get());
    (n - from.0, peak - from.1)
}

/// Allocations (and reallocations) this thread made so far.
pub fn allocations() -> u64 {
    STATS.with(|s| s.get().0)
}
