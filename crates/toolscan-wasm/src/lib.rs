//! The WebAssembly module of the `toolscan` npm package (`js/toolscan`):
//! an edge crate over `toolscan-core`, like the command line and the
//! Python package. It adds no parsing of its own.
//!
//! # The boundary
//!
//! Plain exports, no `wasm-bindgen`: every value that crosses is bytes in
//! one of two buffers this module owns, and every answer is JSON text (one
//! `JSON.parse` on the JavaScript side makes the events plain objects).
//!
//! - JavaScript asks for room with [`toolscan_input`] (the pointer of the
//!   input buffer, at least `len` bytes long), writes a chunk or a request
//!   there, and calls an export with the length it wrote.
//! - The export leaves its answer in the output buffer and returns a
//!   status: [`OK`] (the output is the answer: events, a response, a
//!   value) or [`FAILED`] (the output is an error object,
//!   `{"error": CODE, "message": ..., "offset"?: N}`). JavaScript reads it
//!   at [`toolscan_output`], [`toolscan_output_len`] bytes.
//!
//! So Rust never reads memory through a pointer JavaScript made up: the
//! crate has no `unsafe` code. Parsers live in a table here (their held
//! bytes stay in WebAssembly memory between chunks) and JavaScript holds
//! their handles; [`toolscan_parser_free`] frees one.
//!
//! The functions are ordinary Rust functions too, so the crate's tests
//! call them on the host exactly as JavaScript does.

mod buffers;
mod json;
mod options;
mod parsers;
pub mod requests;
mod utf8;

pub use buffers::{output, write_input};

/// The status of a call that succeeded: the output buffer holds its answer.
pub const OK: i32 = 0;
/// The status of a call that failed: the output buffer holds the error.
pub const FAILED: i32 = -1;
/// The status of a feed that decided one text delta: the output buffer
/// holds its UTF-8, bare.
pub const ONE_TEXT: i32 = 1;
/// The same for one reasoning delta.
pub const ONE_REASONING: i32 = 2;
/// The same for one piece of a call's arguments; the call's index is
/// [`toolscan_output_index`].
pub const ONE_ARGS: i32 = 3;

/// The input buffer, resized to hold `len` bytes; its address.
///
/// The address is only good until the next call of this module.
#[no_mangle]
pub extern "C" fn toolscan_input(len: u32) -> u32 {
    buffers::input(len as usize)
}

/// The address of the last answer (or error) in the output buffer.
#[no_mangle]
pub extern "C" fn toolscan_output() -> u32 {
    buffers::output_ptr()
}

/// The length in bytes of the last answer (or error).
#[no_mangle]
pub extern "C" fn toolscan_output_len() -> u32 {
    buffers::output_len()
}

/// A new parser from the options (JSON, `len` bytes of the input buffer);
/// its handle (at least 0), or [`FAILED`].
#[no_mangle]
pub extern "C" fn toolscan_parser_new(len: u32) -> i32 {
    parsers::new(len as usize)
}

/// Feeds `len` bytes of the input buffer to parser `handle`; the output
/// is the chunk's events: none, one delta bare ([`ONE_TEXT`],
/// [`ONE_REASONING`], [`ONE_ARGS`]) or a JSON array ([`OK`]).
#[no_mangle]
pub extern "C" fn toolscan_parser_feed(handle: i32, len: u32) -> i32 {
    parsers::feed(handle, len as usize)
}

/// Ends parser `handle`'s answer (`at_stop`: 1 when the server stopped at
/// a stop sequence); the output is the last events.
#[no_mangle]
pub extern "C" fn toolscan_parser_finish(handle: i32, at_stop: u32) -> i32 {
    parsers::finish(handle, at_stop != 0)
}

/// The call index of an answer of status [`ONE_ARGS`].
#[no_mangle]
pub extern "C" fn toolscan_output_index() -> u32 {
    buffers::index()
}

/// How many bytes parser `handle` was fed (`-1` for no such parser).
#[no_mangle]
pub extern "C" fn toolscan_parser_offset(handle: i32) -> f64 {
    parsers::offset(handle)
}

/// Frees parser `handle` (nothing for a handle already freed).
#[no_mangle]
pub extern "C" fn toolscan_parser_free(handle: i32) {
    parsers::free(handle)
}

/// A one-shot request (see [`requests`]): `op` names it, the input buffer
/// holds its JSON (`len` bytes), or for [`requests::PARSE`] the options
/// JSON (`split` bytes) followed by the answer's bytes.
#[no_mangle]
pub extern "C" fn toolscan_request(op: u32, len: u32, split: u32) -> i32 {
    requests::run(op, len as usize, split as usize)
}

/// How many parsers are alive (not freed): what a test reads to see that
/// nothing leaks.
#[no_mangle]
pub extern "C" fn toolscan_parsers_live() -> u32 {
    u32::try_from(parsers::live()).unwrap_or(u32::MAX)
}
