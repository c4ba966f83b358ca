//! The catalogue: the built-in formats (the shorthands they are written
//! with, the families, the list), their aliases, and the [`Registry`]
//! that names them and compiles grammars.
//!
//! [`Registry`]: registry::Registry

pub mod aliases;
pub(crate) mod formats;
pub(crate) mod register;
pub(crate) mod registry;
pub(crate) mod shorthand;
