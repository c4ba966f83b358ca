//! The engine: the [`Parser`](parser::Parser) (text, markers, holds), the
//! block runner (a block's program fed to the readers), the pending buffer
//! (bytes held until their fate is known) and call assembly (the calls
//! and their events).

pub(crate) mod block;
pub(crate) mod call;
mod fast;
mod hold;
pub(crate) mod parser;
pub(crate) mod pending;
mod text;
