//! The format language: a [`Format`](format::Format) is openers (a marker
//! and a program of steps); programs are compiled with their labels
//! resolved; a [`Grammar`](grammar::Grammar) is the openers of one or more
//! formats with their markers merged; format files are the same data as
//! JSON.

pub mod format;
pub mod format_file;
pub(crate) mod grammar;
pub(crate) mod program;
