//! The compiled forms of step payloads that hold jumps: labels resolved to
//! step indices (built by the table of steps, `step.rs`,
//! when a program is compiled).

use crate::lang::payload::{Field, Lit, Trim};

/// A `then` step, or the seek a `recover` step compiles to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ThenOp {
    pub opts: Vec<ThenOpt>,
    /// The recovery seek: bytes before a literal are text and the search
    /// goes on (a `Then` ends the block at the first other byte). Reached
    /// only by a failure, never by a jump of the program.
    pub seek: bool,
}

/// A [`ValueStep`](crate::lang::payload::ValueStep) with its labels resolved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ValueOp {
    /// What ends the value.
    pub close: CloseOp,
    /// Markup that ends an unclosed value where it begins.
    pub recover: Vec<ThenOpt>,
    /// Markup that may end an unclosed value, decided at the end of the
    /// stream.
    pub at_end: Vec<ThenOpt>,
    /// Markup that makes a value a container, before any of its text.
    pub nest: Vec<ThenOpt>,
    /// What the program reads right after the call that an `at_end`
    /// literal closes, in the same block: the next call's markup (the
    /// literals of the `Then` after its dispatch that begin a call). Met
    /// after an `at_end` literal, it shows that literal was the call's
    /// closer: an unclosed value ends there at once (set by
    /// `link_follow` in `program.rs`). The group's end is left out: a value may quote
    /// it before its own closer.
    pub follow: Vec<ThenOpt>,
    /// The block's own marker, where the block may end after that call
    /// (the next call is a block of its own): met after an `at_end`
    /// literal and followed by a `recover` literal (the next call's
    /// parameter), it shows that literal was the call's closer.
    pub next_block: Vec<ThenOpt>,
    /// The rest of the format's markup and the reasoning markers (the
    /// literals of its programs and its markers that begin as the closer
    /// does, but for those sought above): met inside a value, it is noted,
    /// and a value that holds any never ends unclosed — nothing but its
    /// closing tag ends it (set by `link_markup` in `program.rs`; only for
    /// values that may end unclosed).
    pub markup: Vec<ThenOpt>,
    /// What the program reads right after the value's closer (through
    /// jumps and whitespace, `after_ws`): the literals of the `one_of` or
    /// `then` there, with their targets. The closer counts only where one
    /// of them follows it; otherwise it is part of the value (set by
    /// `link_after` in `program.rs`; empty: the closer counts where it is).
    pub after: Vec<ThenOpt>,
    /// Whitespace may come between the closer and `after`.
    pub after_ws: bool,
    pub guard: Option<(Lit, Lit)>,
    pub trim: Trim,
    pub entities: bool,
    /// The end of the stream ends the value.
    pub or_end: bool,
    /// The text `null` is JSON null whatever the declared type.
    pub null: bool,
}

/// What ends a raw value (see [`Close`](crate::lang::payload::Close)).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum CloseOp {
    /// This literal.
    Lit(Lit),
    /// `</KEY>`, made when the value begins.
    KeyTag,
    /// Whitespace (not consumed) or the end of the stream.
    Space,
    /// The bracket that closes the first one.
    Balanced,
}

/// A [`Capture`](crate::lang::payload::Capture) with its delimiters' targets resolved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct CaptureOp {
    pub field: Field,
    pub stop: Vec<u8>,
    /// Delimiter literals and the step each one continues with.
    pub delims: Vec<(Lit, usize)>,
    /// Any byte of a delimiter, either case: such bytes may be in the word
    /// while a delimiter may be forming.
    pub delim_bytes: [bool; 256],
    /// The end of the stream ends the word.
    pub at_end: bool,
    /// Words that are markup, and the step each one continues with.
    pub keywords: Vec<(String, usize)>,
}

/// One continuation of a `then` (or `one_of`, or a recovery seek).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ThenOpt {
    pub lit: Lit,
    pub to: usize,
    /// A separator (not a closer): the next call begins after it.
    pub begins_call: bool,
}
