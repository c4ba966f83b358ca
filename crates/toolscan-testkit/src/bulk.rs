//! Large inputs made of one unit repeated, for the linear-cost checks: a
//! format's own calls (from its conformance cases), its markers alone, and
//! bytes that open a tentative block and fail at once (`{`, `[`).
//!
//! The same units serve the `linear` benchmark (time per byte at 1, 4 and
//! 16 MiB, in one chunk and in 64 KiB chunks) and the test that one big
//! chunk gives the events of many small ones.

use toolscan_core::{Options, Registry};

use crate::corpus::{self, Case};

/// One repeated unit of input and what it stands for.
#[derive(Clone, Debug)]
pub struct Unit {
    /// The format it runs under (`auto` included).
    pub format: String,
    /// What the unit is, for a report: `calls`, `marker <…>`, `byte {`.
    pub shape: String,
    /// The bytes repeated.
    pub bytes: Vec<u8>,
    /// The options to parse with (a case's tools, ids from a seed).
    pub options: Options,
}

impl Unit {
    /// `self.bytes` repeated until the result is at least `len` bytes.
    pub fn repeated(&self, len: usize) -> Vec<u8> {
        let mut out = Vec::with_capacity(len + self.bytes.len());
        while out.len() < len && !self.bytes.is_empty() {
            out.extend_from_slice(&self.bytes);
        }
        out
    }
}

/// The first conformance case of `format` that expects a call and has no
/// `auto` twist (its own format, not an `auto` case).
fn call_case<'a>(cases: &'a [Case], format: &str) -> Option<&'a Case> {
    cases.iter().find(|c| {
        c.format == format
            && c.expect["tool_calls"]
                .as_array()
                .is_some_and(|calls| !calls.is_empty())
    })
}

/// Every built-in format's units, and `auto`'s (the calls of every family):
/// the format's first call case followed by a newline, each of its markers
/// alone, and `{` and `[` alone.
pub fn units() -> Vec<Unit> {
    let cases = corpus::load_corpus(&corpus::corpus_dir());
    let reg = Registry::builtin();
    let mut out = Vec::new();
    for f in reg.formats() {
        let name = f.name().to_string();
        if let Some(case) = call_case(&cases, &name) {
            let mut bytes = case.input.clone().into_bytes();
            bytes.push(b'\n');
            out.push(Unit {
                format: name.clone(),
                shape: format!("calls ({})", case.id),
                bytes,
                options: corpus::options_for(case),
            });
        }
        for m in f.markers() {
            if m.is_empty() || m.starts_with('(') {
                continue;
            }
            let m = m.trim_start_matches('^').to_string();
            out.push(Unit {
                format: name.clone(),
                shape: format!("marker {m}"),
                bytes: m.into_bytes(),
                options: crate::chunk::seeded_options(),
            });
        }
        for b in ["{", "["] {
            out.push(Unit {
                format: name.clone(),
                shape: format!("byte {b}"),
                bytes: b.as_bytes().to_vec(),
                options: crate::chunk::seeded_options(),
            });
        }
    }
    // `auto` over every family's calls, one after another.
    let mut all = Vec::new();
    for f in reg.formats() {
        if let Some(case) = call_case(&cases, f.name()) {
            if case.tools.is_none() {
                all.extend_from_slice(case.input.as_bytes());
                all.push(b'\n');
            }
        }
    }
    out.push(Unit {
        format: "auto".into(),
        shape: "calls (every family)".into(),
        bytes: all,
        options: crate::chunk::seeded_options(),
    });
    for b in ["{", "[", "<tool_call>", "[TOOL_CALLS]"] {
        out.push(Unit {
            format: "auto".into(),
            shape: format!("marker {b}"),
            bytes: b.as_bytes().to_vec(),
            options: crate::chunk::seeded_options(),
        });
    }
    out
}
