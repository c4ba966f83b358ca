//! What formats that write argument values as raw text inside XML-like
//! tags (`<parameter=city>Paris</parameter>`, `<arg_value>…</arg_value>`)
//! need beyond the other readers: decoding XML character references. (The
//! JSON type each raw value gets from its schema is `read/typing.rs`, used
//! by every parameter format; escaping text into JSON strings is
//! `read/escape.rs`.)

pub(crate) mod entities;
