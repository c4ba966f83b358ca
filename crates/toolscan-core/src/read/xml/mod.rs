//! Helpers for formats that write argument values as raw text inside
//! XML-like tags (`<parameter=city>Paris</parameter>`,
//! `<arg_value>…</arg_value>`): the parser builds the JSON arguments object
//! itself, so it needs to decode entities and give each raw value the JSON
//! type its tool schema declares. (Escaping text into JSON strings, which
//! the Python reader needs too, is `read/escape.rs`.)

pub(crate) mod coerce;
pub(crate) mod entities;
