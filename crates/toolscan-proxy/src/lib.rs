//! An OpenAI-compatible HTTP proxy that turns the text tool calls of the
//! upstream's completions into `tool_calls` (being built for issue 7).
#![forbid(unsafe_code)]
#![warn(missing_docs)]
