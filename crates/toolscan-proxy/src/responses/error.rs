//! Why a Responses request cannot be served over a Chat Completions
//! upstream: each kind names what was refused, for a `400` the client can
//! act on.

use std::fmt;

/// A Responses request the translation refuses (answered with `400` and an
/// OpenAI error object: [`message`](ToString::to_string),
/// [`param`](RequestError::param), [`code`](RequestError::code)).
///
/// Not `Copy`: the names it reports (a tool's or an item's `type`) are the
/// client's own strings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum RequestError {
    /// The body is not a JSON object.
    NotAnObject,
    /// Neither `input` nor `previous_response_id`: nothing to answer.
    NoInput,
    /// A field has the wrong JSON type.
    BadField {
        /// Its path (`input[2].content`).
        param: String,
        /// What it must be.
        expected: &'static str,
    },
    /// A tool the upstream cannot run: a built-in one (`web_search`,
    /// `file_search`, `computer_use_preview`, `code_interpreter`,
    /// `image_generation`, `mcp`…) or any other type but `function`.
    BuiltinTool {
        /// Its position in `tools`.
        index: usize,
        /// Its `type`.
        kind: String,
    },
    /// A `tool_choice` naming a tool that is not a function.
    BuiltinToolChoice {
        /// Its `type`.
        kind: String,
    },
    /// An input item that has no Chat Completions counterpart (the
    /// output of a built-in tool, an `item_reference`, an unknown type).
    UnsupportedItem {
        /// Its position in `input`.
        index: usize,
        /// Its `type`.
        kind: String,
    },
    /// A message's role that Chat Completions has no counterpart for.
    UnsupportedRole {
        /// Its position in `input`.
        index: usize,
        /// Its `role`.
        role: String,
    },
    /// A content part that cannot be written as Chat Completions content
    /// (an image given by `file_id`, an unknown part type).
    UnsupportedContent {
        /// Its path (`input[0].content[1]`).
        param: String,
        /// Its `type`.
        kind: String,
    },
    /// A request field whose feature needs state on the server
    /// (`background`, `conversation`, `prompt`).
    UnsupportedField {
        /// The field.
        field: &'static str,
    },
    /// An `item_reference` input item while no responses are kept.
    ItemReferenceNoStore {
        /// Its position in `input`.
        index: usize,
    },
    /// An `item_reference` naming an item that is not (or no longer) kept.
    UnknownItemReference {
        /// Its position in `input`.
        index: usize,
        /// The id it names.
        id: String,
    },
    /// `previous_response_id` while no responses are kept
    /// (`--responses-store` is 0).
    NoStore,
    /// `previous_response_id` names a response that is not (or no longer)
    /// kept.
    UnknownPrevious {
        /// The id asked for.
        id: String,
    },
}

impl RequestError {
    /// The request parameter at fault, as OpenAI's error object names it.
    pub(crate) fn param(&self) -> Option<String> {
        match self {
            RequestError::NotAnObject => None,
            RequestError::NoInput => Some("input".into()),
            RequestError::BadField { param, .. }
            | RequestError::UnsupportedContent { param, .. } => Some(param.clone()),
            RequestError::BuiltinTool { index, .. } => Some(format!("tools[{index}].type")),
            RequestError::BuiltinToolChoice { .. } => Some("tool_choice".into()),
            RequestError::UnsupportedItem { index, .. } => Some(format!("input[{index}].type")),
            RequestError::ItemReferenceNoStore { index }
            | RequestError::UnknownItemReference { index, .. } => {
                Some(format!("input[{index}].id"))
            }
            RequestError::UnsupportedRole { index, .. } => Some(format!("input[{index}].role")),
            RequestError::UnsupportedField { field } => Some((*field).into()),
            RequestError::NoStore | RequestError::UnknownPrevious { .. } => {
                Some("previous_response_id".into())
            }
        }
    }

    /// The OpenAI error object of a `400` for it:
    /// `{"error": {"message", "type": "invalid_request_error", "param", "code"}}`.
    pub(crate) fn body(&self) -> serde_json::Value {
        serde_json::json!({"error": {"message": self.to_string(), "type": "invalid_request_error",
            "param": self.param(), "code": self.code()}})
    }

    /// A short machine-readable code for the error object's `code`.
    pub(crate) fn code(&self) -> &'static str {
        match self {
            RequestError::NotAnObject | RequestError::BadField { .. } => "invalid_value",
            RequestError::NoInput => "missing_required_parameter",
            RequestError::BuiltinTool { .. } | RequestError::BuiltinToolChoice { .. } => {
                "unsupported_tool"
            }
            RequestError::UnsupportedItem { .. }
            | RequestError::UnsupportedRole { .. }
            | RequestError::UnsupportedContent { .. }
            | RequestError::UnsupportedField { .. } => "unsupported_value",
            RequestError::NoStore | RequestError::UnknownPrevious { .. } => {
                "previous_response_not_found"
            }
            RequestError::ItemReferenceNoStore { .. }
            | RequestError::UnknownItemReference { .. } => "item_not_found",
        }
    }
}

impl fmt::Display for RequestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const OVER: &str = "this proxy serves the Responses API over a Chat Completions upstream";
        match self {
            RequestError::NotAnObject => f.write_str("the request body must be a JSON object"),
            RequestError::NoInput => {
                f.write_str("`input` is required (or `previous_response_id` with a kept response)")
            }
            RequestError::BadField { param, expected } => {
                write!(f, "`{param}` must be {expected}")
            }
            RequestError::BuiltinTool { index, kind } => write!(
                f,
                "tools[{index}] has type `{kind}`: {OVER}, which runs only `function` tools \
                 (built-in tools such as web_search, file_search, computer_use, \
                 code_interpreter, image_generation and mcp are not available)"
            ),
            RequestError::BuiltinToolChoice { kind } => write!(
                f,
                "tool_choice has type `{kind}`: {OVER}, which runs only `function` tools"
            ),
            RequestError::UnsupportedItem { index, kind } => write!(
                f,
                "input[{index}] has type `{kind}`: {OVER}, which takes `message`, \
                 `function_call`, `function_call_output` and `reasoning` items"
            ),
            RequestError::UnsupportedRole { index, role } => write!(
                f,
                "input[{index}] has role `{role}`: a message's role is one of user, \
                 assistant, system, developer"
            ),
            RequestError::UnsupportedContent { param, kind } => write!(
                f,
                "{param} is a `{kind}` part, which {OVER} cannot pass on (text, images by URL, \
                 files by data or id, and audio are)"
            ),
            RequestError::UnsupportedField { field } => write!(
                f,
                "`{field}` needs state kept by the server: {OVER}, which keeps none"
            ),
            RequestError::NoStore => write!(
                f,
                "previous_response_id: {OVER} and keeps no responses (start it with \
                 --responses-store N to keep the last N); send the whole conversation in \
                 `input` instead"
            ),
            RequestError::ItemReferenceNoStore { index } => write!(
                f,
                "input[{index}] is an item_reference: {OVER} and keeps no responses (start it \
                 with --responses-store N to keep the last N), so the client must send items \
                 whole (the AI SDK does with providerOptions.openai.store = false)"
            ),
            RequestError::UnknownItemReference { index, id } => write!(
                f,
                "input[{index}] refers to item `{id}`, which is not kept (never seen, expired, \
                 or evicted); send the item whole instead"
            ),
            RequestError::UnknownPrevious { id } => write!(
                f,
                "previous_response_id `{id}` is not kept (never seen, expired, or evicted); \
                 send the whole conversation in `input` instead"
            ),
        }
    }
}

impl std::error::Error for RequestError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_builtin_tool_is_named_with_its_place() {
        let e = RequestError::BuiltinTool {
            index: 1,
            kind: "web_search".into(),
        };
        assert!(
            e.to_string().contains("tools[1] has type `web_search`"),
            "{e}"
        );
        assert_eq!(e.param().as_deref(), Some("tools[1].type"));
        assert_eq!(e.code(), "unsupported_tool");
        let body = e.body();
        assert_eq!(body["error"]["type"], "invalid_request_error");
        assert_eq!(body["error"]["param"], "tools[1].type");
        assert_eq!(body["error"]["message"], e.to_string());
    }

    #[test]
    fn previous_response_without_a_store_says_how_to_keep_them() {
        let e = RequestError::NoStore;
        assert!(e.to_string().contains("--responses-store"), "{e}");
        assert_eq!(e.param().as_deref(), Some("previous_response_id"));
    }
}
