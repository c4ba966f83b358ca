//! `POST /v1/responses` served over a Chat Completions upstream: the
//! request translated into a chat request, the chat answer (already
//! rewritten: text calls are `tool_calls`, reasoning is separated) into a
//! Responses object or event stream. Pure functions and state machines,
//! no HTTP: the router calls them.
//!
//! - [`request::translate`]: the Responses request → the chat request
//!   (and what the response repeats, [`echo::Echo`]);
//! - [`answer::from_chat`]: a whole `chat.completion` → a `response`;
//! - [`events::EventStream`]: streamed chunks → Responses events,
//!   [`sse::write`] writes one as SSE;
//! - [`store::ResponseStore`]: the last N responses, for
//!   `previous_response_id` (this process only: not shared between
//!   replicas), [`keep`] keeps one;
//! - [`passthrough::Passthrough`] and [`passthrough::rewrite_whole`]: an
//!   upstream that serves `/v1/responses` itself, the text calls in its
//!   message items rewritten ([`request::parse_view`] gives the chat-shaped
//!   `tools`, `tool_choice`, `parallel_tool_calls` that decide how its
//!   answer is read).
//!
//! # The request
//!
//! | Responses request | Chat Completions request |
//! |---|---|
//! | `instructions` | a `system` message, first; it and the `system`/`developer` items right after it are one message (templates such as Qwen3.5's take a system message only first) |
//! | `input` as a string | one `user` message |
//! | `message` item (or `{role, content}`), roles `user`, `assistant`, `system` | a message of that role |
//! | role `developer` | `system` (the role chat templates know) |
//! | content `input_text` / `output_text` / `refusal` | `text` parts; one text part, or an assistant's text, is a string |
//! | content `input_image` with `image_url` | an `image_url` part (`detail` kept) |
//! | content `input_file` with `file_data` or `file_id` | a `file` part |
//! | content `input_audio` | an `input_audio` part |
//! | `function_call` items (`call_id`, `name`, `arguments`) | `tool_calls` of an assistant message: consecutive calls, and calls right after an assistant message, are one message |
//! | `function_call_output` (`call_id`, `output`: a string or text parts) | a `tool` message, `tool_call_id` = `call_id` |
//! | `reasoning` items | left out (chat templates drop earlier turns' reasoning) |
//! | `tools`: `{type: "function", name, description, parameters, strict}` | `{type: "function", function: {name, description, parameters, strict}}` |
//! | `tool_choice`: `auto`, `none`, `required` | the same |
//! | `tool_choice`: `{type: "function", name}` | `{type: "function", function: {name}}` |
//! | `tool_choice`: `{type: "allowed_tools", mode, tools}` | only those `tools` sent, `tool_choice` = `mode` |
//! | `parallel_tool_calls`, `temperature`, `top_p`, `user`, `service_tier` | the same |
//! | `max_output_tokens` | `max_tokens` (what every chat server takes) |
//! | `top_logprobs` | `logprobs: true`, `top_logprobs` |
//! | `text.format`: `json_schema` (`name`, `schema`, `description`, `strict`) / `json_object` / `text` | `response_format` `{type: "json_schema", json_schema: {…}}` / `{type: "json_object"}` / none |
//! | `text.verbosity` | `verbosity` |
//! | `reasoning.effort` | `reasoning_effort` |
//! | `stream: true` | `stream: true`, `stream_options: {include_usage: true}` (for `usage`) |
//! | `item_reference` items | the kept items they name (refused when no store is kept, or the item is not in it) |
//! | `previous_response_id` | the kept conversation's items (every earlier turn's input and output), before `input`; refused when no store is kept, or the id is not in it |
//! | `stop`, `seed`, `frequency_penalty`, `presence_penalty`, `logit_bias`, `top_k`, `min_p`, `repetition_penalty`, `chat_template_kwargs`… (not Responses fields, sent by clients to local servers) | passed on |
//! | `metadata`, `store`, `include`, `truncation`, `prompt_cache_key`, `safety_identifier` | not sent (the response repeats them); `store: false`: the response is not kept |
//!
//! Refused with a [`error::RequestError`] (a `400`): a tool of any type
//! but `function` (`web_search`, `file_search`, `computer_use_preview`,
//! `code_interpreter`, `image_generation`, `mcp`, `custom`…), named in the
//! message; a `tool_choice` naming one; input items of other types (the
//! calls and outputs of built-in tools…); content
//! parts the chat request cannot carry (an image by `file_id`);
//! `conversation`, `prompt` and `background: true`, which need state on
//! the server.
//!
//! Since the chat request carries `tools`, `tool_choice` and
//! `parallel_tool_calls` in chat shape, the rules of the chat route apply
//! to it as they are: the answer is parsed for calls only when tools are
//! offered and `tool_choice` is not `none`; `parallel_tool_calls: false`
//! lets one call through; a named function only its own calls.
//!
//! # The answer
//!
//! | Chat Completions answer | Responses output |
//! |---|---|
//! | `reasoning_content` (or `reasoning`) | a `reasoning` item: `content: [{type: "reasoning_text", text}]`, `summary: []` |
//! | `content` (and `refusal`) | a `message` item, `role: "assistant"`, one `output_text` part (`annotations: []`) (and a `refusal` part) |
//! | each `tool_calls` entry | a `function_call` item: `id` `fc_…`, `call_id` = the entry's `id`, `name`, `arguments`, `status: "completed"` |
//! | `finish_reason: "length"` | `status: "incomplete"`, `incomplete_details.reason: "max_output_tokens"` (`content_filter`: reason `content_filter`); otherwise `completed` |
//! | `usage`: `prompt_tokens`, `completion_tokens`, `total_tokens`, `prompt_tokens_details.cached_tokens`, `completion_tokens_details.reasoning_tokens` | `usage`: `input_tokens`, `output_tokens`, `total_tokens`, `input_tokens_details.cached_tokens`, `output_tokens_details.reasoning_tokens`; every count 0 when the upstream sent no usage (the AI SDK refuses a response without `usage`) |
//!
//! The response has a fresh `id` (`resp_…`), `object: "response"`,
//! `created_at`, the request's `model` (the upstream's when the request
//! named none), and repeats the request's `instructions`, `tools` (each
//! function tool with `description`, `parameters`, `strict`, `null` when
//! not given), `tool_choice` (`auto` by default), `parallel_tool_calls`
//! (`true` by default), `temperature`, `top_p`, `max_output_tokens`,
//! `metadata` (`{}`), `text` (`{format: {type: "text"}}`), `reasoning`,
//! `truncation` (`disabled`), `user`, `previous_response_id`. The
//! client's `output_text` is the client's own convenience: not sent.
//!
//! # The events
//!
//! A streamed answer is [`events::EventStream`]'s to translate, chunk by
//! chunk, each event with the next `sequence_number` from 0:
//!
//! | Chat chunk | Responses events |
//! |---|---|
//! | the first chunk | `response.created`, `response.in_progress` (`status: "in_progress"`, no output) |
//! | `delta.reasoning_content` (or `delta.reasoning`) | a `reasoning` item: `response.output_item.added`, `response.content_part.added` (`reasoning_text`), then `response.reasoning_text.delta` per piece |
//! | `delta.content` | a `message` item: `response.output_item.added`, `response.content_part.added` (`output_text`), then `response.output_text.delta` per piece |
//! | a `delta.tool_calls` entry with an `id` | a `function_call` item: `response.output_item.added` (`arguments: ""`), `response.function_call_arguments.delta` with the entry's arguments; when they are a whole JSON object (the rewrite's default: one entry a call, at its end), its done events at once |
//! | an entry without `id` (live arguments) | `response.function_call_arguments.delta` of the open call |
//! | anything of another kind, a `finish_reason`, the end | closes the open item: `response.reasoning_text.done` / `response.output_text.done` + `response.content_part.done`, or `response.function_call_arguments.done`; then `response.output_item.done` |
//! | `usage` (the usage chunk) | the final response's `usage` (zeros without one) |
//! | the end (`[DONE]`, end of body) | `response.completed`, or `response.incomplete` after `finish_reason: "length"`, with every output item |
//! | an error object, or a failed upstream | `response.failed` (`error.code: "server_error"`, the message) |
//!
//! Every event names its item's `output_index`, and `item_id` and
//! `content_index` where the grammar has them; an item's id is the same
//! in its added and done events and in the final response, as OpenAI's
//! stream helper checks.
//!
//! # Passthrough
//!
//! An upstream that serves `/v1/responses` (vLLM, LM Studio) gets the
//! request as it came; its events are passed on except those of its
//! `message` items, whose `output_text` deltas go through the chat rewrite
//! (as the `content` of chat chunks) and come out as the events of the
//! items the text holds: `message` for the text, `function_call` for each
//! call the model wrote as text, `reasoning` for reasoning markup. Other
//! items (the upstream's own reasoning and function calls, built-in tools'
//! items) keep their events; every `output_index` and `sequence_number`
//! is renumbered to its place in what is sent, and the final response's
//! `output` lists the items sent. A whole response object is rewritten
//! item by item the same way; a message without calls is kept as it came.

pub(crate) mod answer;
pub(crate) mod echo;
pub(crate) mod error;
pub(crate) mod event;
pub(crate) mod events;
pub(crate) mod ids;
pub(crate) mod items;
pub(crate) mod passthrough;
pub(crate) mod request;
pub(crate) mod sse;
pub(crate) mod store;
mod usage;
pub(crate) mod writer;

#[cfg(test)]
mod flow_tests;

pub(crate) use events::EventStream;
pub(crate) use ids::Ids;
pub(crate) use passthrough::Passthrough;
pub(crate) use request::{parse_view, translate, Translated};
pub(crate) use store::ResponseStore;
#[cfg(test)]
use {answer::from_chat, echo::Echo, event::Event};

/// Keeps a finished response in `store` for later `previous_response_id`s:
/// its request's conversation (`translated.history`, `translated.input`)
/// and its `output` items.
pub(crate) fn keep(
    store: &ResponseStore,
    id: &str,
    translated: &Translated,
    output: &[serde_json::Value],
) {
    if !translated.keep {
        // The request said `store: false`.
        return;
    }
    let mut items = translated.input.clone();
    items.extend(output.iter().cloned());
    store.put(id.to_owned(), translated.history.clone(), items);
}
