//! Counts of what the rewrite found, for logs and metrics.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use toolscan_core::DiagnosticKind;

/// What a rewrite (or several: it is shared through an `Arc`) found: the
/// text tool calls completed and the diagnostics by kind. Counting is a
/// relaxed atomic add per call or diagnostic, never per byte.
///
/// ```
/// use std::sync::Arc;
/// use toolscan_core::{DiagnosticKind, Registry};
/// use toolscan_sse::{rewrite_body, Config, Tally};
///
/// let tally = Arc::new(Tally::default());
/// let config = Config::new(Registry::builtin().grammar("hermes").unwrap())
///     .with_tally(Arc::clone(&tally));
/// let body = br#"{"choices":[{"index":0,"message":{"content":"<tool_call>{\"name\": \"f\", \"arguments\": {}}</tool_call>"},"finish_reason":"stop"}]}"#;
/// rewrite_body(body, &config).unwrap();
/// assert_eq!(tally.calls(), 1);
/// assert_eq!(tally.diagnostics(DiagnosticKind::Malformed), 0);
/// ```
#[derive(Debug, Default)]
pub struct Tally {
    calls: AtomicU64,
    /// By the kind's place in [`DiagnosticKind::ALL`].
    diagnostics: [AtomicU64; DiagnosticKind::ALL.len()],
    /// When the rewrite first produced text, reasoning or a call, and
    /// when each call was complete (in call order).
    marks: Mutex<Marks>,
}

#[derive(Debug, Default)]
struct Marks {
    first_token: Option<Instant>,
    ready: Vec<Instant>,
}

impl Tally {
    /// Text tool calls completed.
    pub fn calls(&self) -> u64 {
        self.calls.load(Ordering::Relaxed)
    }

    /// Diagnostics of `kind`.
    pub fn diagnostics(&self, kind: DiagnosticKind) -> u64 {
        slot(kind).map_or(0, |i| self.diagnostics[i].load(Ordering::Relaxed))
    }

    /// Every kind with its count, zeros included.
    pub fn by_kind(&self) -> impl Iterator<Item = (DiagnosticKind, u64)> + '_ {
        DiagnosticKind::ALL
            .iter()
            .zip(&self.diagnostics)
            .map(|(&k, n)| (k, n.load(Ordering::Relaxed)))
    }

    /// All diagnostics.
    pub fn all_diagnostics(&self) -> u64 {
        self.by_kind().map(|(_, n)| n).sum()
    }

    /// When the rewrite first produced text, reasoning or a call (the
    /// first token a client reads).
    pub fn first_token(&self) -> Option<Instant> {
        self.marks.lock().ok().and_then(|m| m.first_token)
    }

    /// When each text call was complete — its entry ready to send, the
    /// tool ready to start —, in call order.
    pub fn ready(&self) -> Vec<Instant> {
        self.marks
            .lock()
            .map(|m| m.ready.clone())
            .unwrap_or_default()
    }

    /// A call completed now.
    pub(crate) fn call(&self) {
        self.calls.fetch_add(1, Ordering::Relaxed);
        let now = Instant::now();
        if let Ok(mut m) = self.marks.lock() {
            m.first_token.get_or_insert(now);
            m.ready.push(now);
        }
    }

    /// Text or reasoning was produced now (only the first time is kept;
    /// a caller checks [`Tally::first_token`] first to skip the lock).
    pub(crate) fn token(&self) {
        if let Ok(mut m) = self.marks.lock() {
            m.first_token.get_or_insert_with(Instant::now);
        }
    }

    pub(crate) fn diagnostic(&self, kind: DiagnosticKind) {
        if let Some(i) = slot(kind) {
            self.diagnostics[i].fetch_add(1, Ordering::Relaxed);
        }
    }
}

fn slot(kind: DiagnosticKind) -> Option<usize> {
    DiagnosticKind::ALL.iter().position(|&k| k == kind)
}
