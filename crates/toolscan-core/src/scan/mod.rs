//! The leaves: finding bytes. Marker automata and where a marker may
//! begin (`marker.rs`), the markers as written (`pattern.rs`), the rare
//! bytes a search jumps between (`rare.rs`), the one-pass search for four to eight rare bytes
//! (`simd.rs`), the CPU's vector instructions as tokens (`cpu.rs`), and
//! cutting bytes into text on character boundaries (`utf8.rs`). They know
//! nothing of formats, blocks or calls.

pub(crate) mod cpu;
pub(crate) mod marker;
pub(crate) mod pattern;
pub(crate) mod rare;
pub(crate) mod simd;
pub(crate) mod utf8;
