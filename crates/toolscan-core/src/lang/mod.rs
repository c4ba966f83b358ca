//! The format language: a [`Format`](format::Format) is openers (a marker
//! and a program of steps); the steps are one table (`step.rs`: each
//! kind's name in a format file, what it carries (`payload.rs`), what it
//! compiles to (`op.rs`)); programs are compiled with their labels
//! resolved; a [`Grammar`](grammar::Grammar) is the openers of one or more
//! formats with their markers merged; format files are the language's one
//! public form. A format may also say how its tool results are written
//! (`results.rs`).

pub(crate) mod format;
pub mod format_file;
pub(crate) mod grammar;
pub(crate) mod hint;
pub(crate) mod op;
pub(crate) mod payload;
pub(crate) mod program;
pub(crate) mod results;
pub(crate) mod step;
