//! The two buffers the boundary passes bytes through (see the crate's
//! docs): JavaScript writes into the input buffer, reads the output
//! buffer. Both are reused from call to call, so a steady stream of
//! chunks allocates nothing here once they have grown.

use std::cell::{Cell, RefCell};

use crate::{FAILED, OK};

thread_local! {
    /// What JavaScript wrote for the current call. Its length is the most
    /// any [`input`] asked for; bytes past what a call was told it may
    /// read are left from earlier calls and never read.
    static INPUT: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
    /// The last call's answer or error, whole.
    static OUTPUT: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
    /// The call index of the last answer when it is one argument delta
    /// ([`crate::ONE_ARGS`]).
    static INDEX: Cell<u32> = const { Cell::new(0) };
}

/// Makes the input buffer at least `len` bytes long; its address.
pub(crate) fn input(len: usize) -> u32 {
    INPUT.with_borrow_mut(|b| {
        if b.len() < len {
            b.resize(len, 0);
        }
        // A wasm32 address (the host's tests use `write_input`).
        b.as_mut_ptr() as usize as u32
    })
}

/// Runs `read` on the first `len` bytes of the input buffer (fewer if it
/// was never that long).
pub(crate) fn with_input<R>(len: usize, read: impl FnOnce(&[u8]) -> R) -> R {
    INPUT.with_borrow(|b| read(&b[..len.min(b.len())]))
}

/// Writes `bytes` into the input buffer as JavaScript does; their length
/// (for the crate's tests, which run on the host).
pub fn write_input(bytes: &[u8]) -> u32 {
    input(bytes.len());
    INPUT.with_borrow_mut(|b| b[..bytes.len()].copy_from_slice(bytes));
    bytes.len() as u32
}

/// Runs `write` on the emptied output buffer: [`OK`] when it says it wrote
/// an answer, [`FAILED`] when it wrote an error.
pub(crate) fn answer(write: impl FnOnce(&mut Vec<u8>) -> bool) -> i32 {
    OUTPUT.with_borrow_mut(|out| {
        out.clear();
        if write(out) {
            OK
        } else {
            FAILED
        }
    })
}

/// Runs `write` on the emptied output buffer; the status it returns.
pub(crate) fn answer_with(write: impl FnOnce(&mut Vec<u8>) -> i32) -> i32 {
    OUTPUT.with_borrow_mut(|out| {
        out.clear();
        write(out)
    })
}

pub(crate) fn set_index(index: u32) {
    INDEX.set(index);
}

pub(crate) fn index() -> u32 {
    INDEX.get()
}

pub(crate) fn output_ptr() -> u32 {
    OUTPUT.with_borrow(|b| b.as_ptr() as usize as u32)
}

pub(crate) fn output_len() -> u32 {
    OUTPUT.with_borrow(|b| u32::try_from(b.len()).unwrap_or(u32::MAX))
}

/// The last answer or error as text (for the crate's tests).
pub fn output() -> String {
    OUTPUT.with_borrow(|b| String::from_utf8_lossy(b).into_owned())
}
