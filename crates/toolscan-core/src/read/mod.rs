//! The readers: small resumable parsers, each fed bytes as they come and
//! saying how far it got — the steps' byte parsers (literals, words, one
//! of several literals), the JSON scanner, raw parameter values, Python
//! arguments and literals, the typing of raw values by their schema, and
//! what XML values need (entities). They know nothing of blocks or of the
//! parser above them.

pub(crate) mod escape;
pub(crate) mod json;
pub(crate) mod python;
pub(crate) mod reason;
pub(crate) mod src;
pub(crate) mod steps;
pub(crate) mod typing;
pub(crate) mod value;
pub(crate) mod word;
pub(crate) mod xml;
