//! SSE, sans-IO: the byte stream cut into blocks ([`blocks`]), a block's
//! fields ([`fields`]), an event written ([`write`]). The rewrite passes
//! a block it leaves unchanged on as the bytes that came, and writes only
//! the events it changes or adds.

pub(crate) mod blocks;
pub(crate) mod fields;
pub(crate) mod write;

#[cfg(test)]
mod tests;
