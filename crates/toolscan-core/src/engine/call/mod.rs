//! Assembling calls, one job per file:
//!
//! - [`calls`]: the call being assembled (name, id, arguments) and the
//!   `tool_call_start` / `tool_call_args` / `tool_call_end` events;
//! - [`json`]: the JSON [`Visitor`](crate::read::json::Visitor) that maps call objects
//!   (`{"name", "arguments"}`, lists, envelopes) onto calls;
//! - [`args`]: how far a call's arguments are, whatever their notation;
//! - [`param`]: the parameter being read and the containers around it;
//! - [`params`]: the arguments object of parameter-style bodies, built as
//!   the parameters arrive;
//! - [`unescape`]: arguments given as a JSON string, decoded as they stream;
//! - [`check`]: the schema check of a completed call (`Options::check_calls`);
//!
//! What a tool name, an id or a parameter's name may hold is the readers'
//! (`read/word.rs`).

pub(crate) mod args;
pub(crate) mod calls;
pub(crate) mod check;
pub(crate) mod json;
pub(crate) mod param;
pub(crate) mod params;
pub(crate) mod unescape;
