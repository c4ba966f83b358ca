//! The real chat templates: render each model's own Jinja template (from
//! `../shared/templates`, never copied here) for a conversation with tool
//! calls, cut out the assistant turn the model would have generated, and
//! check that the parser gives back the calls and the text — parsed with
//! the request's tools schema (which types the raw values of
//! parameter-style formats), whole and in 1-byte chunks.
//!
//! Which templates: the rows of `SOURCES.md` whose `format` is in
//! [`IN_SCOPE`] and known to `Registry::builtin()`, plus
//! [`EXTRA_TEMPLATES`]. Without `../shared` (a fresh clone) the test says
//! so and passes.
//!
//! Conversations: the weather calls ([`CALLS`]: strings, a nested object),
//! and the typed calls ([`TYPED_CALLS`], with their own tools: a
//! multi-line string with quotes, `<`, `&`, a backslash, markup-like text
//! and unicode; integer, number, booleans, null, nested arrays and
//! objects; a call without arguments), each with and without content,
//! system message, tool results, and arguments as a dict or a JSON string.
//!
//! Rendering mimics transformers' `apply_chat_template`: `trim_blocks`,
//! `lstrip_blocks`, loop controls, Python string/dict methods (pycompat),
//! a `tojson` that is Python's `json.dumps` (with `ensure_ascii`, `indent`,
//! `separators`, `sort_keys`), `raise_exception`, `strftime_now` (a fixed
//! date), `None`/`True`/`False` printed the Python way, a `string` filter
//! that is Python's `str` (`True`, `None`, `{'a': [1, 'x']}`: templates
//! that write non-string values with `|string` write Python reprs),
//! `from_json`, `bos_token` and `eos_token`; Jinja2's `indent` (which keeps
//! a trailing newline, minijinja's drops it); lists inside `namespace(...)`
//! that take `append` and `pop` (Kimi K2); FireFunction v2's `functions`
//! and `datetime` variables, as llama.cpp passes them
//! ([`FUNCTIONS_AND_DATETIME`]). Object parameters of the tools carry
//! `"additionalProperties": {}` (Command R+'s `json_to_python_type` reads
//! it, and raises without it, in Jinja2 too). (Checked once against
//! Python's Jinja2 set up the same way: every turn below is byte for byte
//! what Jinja2 renders, except the `None` content noted at the end; of the
//! JSON-family templates added later, Command R+ was checked so.)
//!
//! Cutting the assistant turn (the method is printed per template):
//! * `prefix`: the conversation up to the user message rendered with
//!   `add_generation_prompt=True` (P) is a prefix of the whole conversation
//!   (F); the turn is the rest of F. Most templates.
//! * `history`: F does not start with P, but with P0 (the same messages
//!   without the generation prompt): the generation prompt pre-fills
//!   something the history rendering does not have (DeepSeek-R1-Distill and
//!   QwQ pre-fill `<think>\n`). The part of the generation prompt that F
//!   repeats is dropped; the turn is what F has after it (no reasoning). A
//!   generation prompt ending with whitespace that history writes otherwise
//!   (Granite-20B: `\nASSISTANT: ` vs `\nASSISTANT:\n`) counts as
//!   repeated, with the history's whitespace ([`history_head`]).
//! * `user-anchor`: neither (Mistral Nemo / the vLLM Mistral parallel
//!   template merge the system prompt into the *last* user message, which
//!   is no longer last once the assistant answered): P and F are aligned
//!   after the last occurrence of the user's text; what F has after the part
//!   both share is the turn. Where F writes the generation prompt right
//!   after a part both share, the turn follows it (Command R+ renders an
//!   instruction after the last message: P ends with it and the generation
//!   prompt, F has the assistant turn before it).
//!
//! The turn is then cut at the first end-of-turn token ([`END_OF_TURN`];
//! [`END_OF_TURN_UNLESS`]: `<|end|>` ends an Apriel turn but separates
//! Harmony's messages) or start of the next message ([`NEXT_MESSAGE`];
//! R1-Distill renders no end after a single call), or just after a stop
//! token that belongs to the last call ([`END_OF_TURN_KEPT`]: Apertus'
//! `<|tools_suffix|>` and Harmony's `<|call|>`, after which these templates
//! write the tool results into the same turn); a turn of several messages
//! each closed by the same token loses only the last one
//! ([`END_OF_LAST_MESSAGE`]: GigaChat 3's `<|message_sep|>`). An empty
//! `<think>\n\n</think>\n\n` (Qwen3 renders one into the last assistant
//! turn) is removed. After a generation prompt that closes an empty think
//! block (`<think></think>`, DeepSeek V3.2/V4 with thinking off), the bare
//! `</think>` history writes in its place is removed. A turn that then
//! still writes a reasoning marker the engine knows ([`toolscan::reasoning_markers`]:
//! `<think>`, Cohere's `<|START_THINKING|>`, Kimi K3's
//! `<|close|>think<|sep|>`…) is parsed with reasoning separation on, and as
//! starting inside the reasoning block when the generation prompt ends with
//! an opening marker (Qwen3.5, Step-3.5, Nemotron 3, GLM-4.7, Kimi K3): the
//! reasoning must be empty — or, for a template in
//! [`CONTENT_AS_REASONING`] (gpt-oss writes the content of a tool-call
//! message into the `analysis` channel), the content, with no text.
//!
//! A conversation is skipped for a template (counted and printed by
//! reason) when the template raises for it (e.g. Llama 3.x with two calls,
//! DeepSeek/Functionary templates that concatenate `arguments` as a string
//! when given a dict, templates that test or split a `null` content:
//! Qwen3, QwQ, Bielik, vLLM deepseekr1, Ministral 3, Devstral),
//! or drops the calls (R1-Distill renders calls only when content is
//! `null`; GigaChat 3 and gpt-oss render only the first) or the assistant
//! text (Hermes 2 Pro, Llama 3.x, Mistral Nemo/Small 3.x, Granite, xLAM,
//! MiniMax-M1, Command R7B), writes a `null` content as `None` (Command
//! R+), or writes calls after the end of the turn (Nemotron Nano v2 writes
//! a last assistant message's content and calls as two turns; R1-Distill
//! ends the turn after the second call); see
//! [`skip_reason`]. A render in [`KNOWN_GAPS`] (an engine bug, with its
//! reason) is skipped and printed. `auto` is not run (see [`auto_sees`])
//! where the calls open with a bare `{` (Llama 3.x JSON without
//! `<|python_tag|>`, xLAM's bare list), where the turn starts inside the
//! format's markup, read by its start-of-stream program (Functionary v3.2's
//! first recipient line), or where `auto` gives the marker to another
//! format ([`AUTO_READS_OTHERWISE`]: Granite-20B's `<function_call>`
//! without a close is hermes' wrapper) — each by design.
//!
//! Per template (cut / what differs from the model's own output):
//! * Qwen2.5, MiMo-VL, Qwen3, Bielik, Hermes 2 Pro, Granite 4.0/4.1, Reka
//!   Edge: `prefix`; Qwen3 renders an empty think block into the last
//!   assistant turn (removed); Reka's turn starts with a space (`assistant:`
//!   prompt vs `assistant: ` history) and its `tojson(ensure_ascii=True)`
//!   writes `\u00fc`; Reka puts no newline between two calls.
//! * QwQ-32B, DeepSeek-R1-Distill-Qwen: `history` (the `<think>\n` pre-fill
//!   is not in history). R1-Distill writes no `<｜tool▁calls▁end｜>` after a
//!   single call (cut at the next message).
//! * Mistral Nemo, vLLM mistral_parallel: `user-anchor` when there is a
//!   system message (Nemo) / always (parallel); the others `prefix`.
//! * DeepSeek V3.1, vLLM deepseekr1, Functionary v3.1, Llama 3.1/3.2, vLLM
//!   llama3.1_json / llama4_json, Mistral Small 3.2, Ministral 3, Devstral,
//!   vLLM mistral3: `prefix`.
//! * Qwen3-Coder and vLLM's copy (`prefix`): values between newlines,
//!   scalars with `|string` (`True`, `None`: typed by the schema),
//!   containers with `tojson`. Qwen3.5 (`prefix`), Nemotron 3 Nano
//!   (`history`), Step-3.5-Flash (`prefix`): the same body after the
//!   reasoning block the prompt opened (`\n</think>\n\n`,
//!   `</think>`, `\n</think>\n`); Step-3.5 writes no newline between text
//!   and calls or between calls.
//! * Seed-OSS (`prefix`): values without newlines, every non-string value
//!   with `|string` (Python reprs: `{'fresh': True}`, `['a', 'it\'s "x"']`).
//! * GLM-4.6 (`prefix`, an empty `<think></think>` of its own) and
//!   GLM-4.7-Flash (`history`, starts in reasoning): containers and scalars
//!   with `tojson`; raise for string arguments.
//! * MiniMax-M2 (`history`: the `<think>\n` pre-fill is not in history).
//! * Kimi K3 (`prefix`, cut at `<|close|>message<|sep|>`): the turn starts
//!   by closing the prompt's `<|open|>think<|sep|>` and wraps the content in
//!   `<|open|>response<|sep|>`…`<|close|>response<|sep|>` (framing: dropped); string arguments are written as a JSON block,
//!   `<|open|>json type="object"<|sep|>{…}<|close|>json<|sep|>`.
//! * DeepSeek V3.2 (`history`), V4 and V4-Flash (`prefix`): DSML with
//!   `string="true|false"`; string arguments go through `from_json`.
//! * Gemma 4 (`history`, cut at `<|tool_response>`, where the model
//!   stops), FunctionGemma, vLLM's Llama 4 pythonic and Olmo 3 templates
//!   (`prefix`): Python-like notations; each writes some values in a way
//!   no reader can decode exactly (no escaping, Python's `None`, every
//!   value as text), so only the conversations it renders faithfully are
//!   checked ([`lossy_render`]). vLLM's Gemma 3 pythonic template writes no
//!   comma between keyword arguments: none is.
//! * JSON model families: vLLM granite (`prefix`, `<|tool_call|>[…]`
//!   indented by 4) and granite_20b_fc (`history`, `<function_call> {…}`
//!   per call, cut at `<|endoftext|>`); FireFunction v2 (`phi4-mini`,
//!   `prefix`: ` functools[…]`, string arguments only); vLLM internlm2
//!   (`prefix`); vLLM hunyuan_a13b (cut at `<|eos|>`), Apriel 1.5
//!   (`prefix`, cut at `<|end|>`; with tool results its calls carry an
//!   `"id"`) and 1.6 (`history`) as `jamba`; MiniMax-M1 (cut at
//!   `<end_of_sentence>`); Command R+ (`user-anchor`, see [`KNOWN_GAPS`])
//!   and R7B (`prefix`, an empty `<|START_THINKING|><|END_THINKING|>`
//!   before the action, cut at `<|END_OF_TURN_TOKEN|>`); vLLM
//!   xlam_llama/xlam_qwen (`prefix`, a bare list); Apertus (`prefix`, up to
//!   `<|tools_suffix|>`); Nemotron Nano v2 (`history`, cut at
//!   `<SPECIAL_12>`); GigaChat 3 (`prefix`, content and call as two
//!   messages, `<|message_sep|>\n\nfunction call<|role_sep|>\n{…}`) and 3.1
//!   (`<|function_call|>{…}`).
//! * Framed formats: gpt-oss (`harmony`, `prefix`, up to `<|call|>`; see
//!   [`KNOWN_GAPS`] for the turn without content); Kimi K2, K2-Instruct and
//!   K2-Thinking (`kimi-k2`, `prefix`; K2-Thinking writes an empty
//!   `<think></think>` first); Functionary v3.2 (`prefix`, the turn starts
//!   with its recipient line, `all\n` or the first call's name).
//!
//! Known differences from Python Jinja2: minijinja iterates `None` as an
//! empty sequence (and `None is iterable` is true), so vLLM's llama4_json
//! template renders a `null` content as nothing where Jinja2 raises, and
//! the GLM templates' `visible_text(None)` renders nothing where Jinja2
//! writes `None` into the turn.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;
use std::sync::{Arc, Mutex};

use minijinja::value::{Enumerator, Kwargs, Object, ObjectRepr, Value, ValueKind};
use minijinja::{AutoEscape, Environment, Error, ErrorKind, State};
use serde_json::Value as Json;
use toolscan::{Format, Options, Registry, Response, Tools};
use toolscan_testkit::check::check_events;
use toolscan_testkit::chunk::{self, seeded_options, Api, Plan};
use toolscan_testkit::corpus::{check_expect, normalize_ws, Outcome};

/// Where the shared templates live (beside the repository).
const TEMPLATES_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/templates");

/// Where the templates are: `TOOLSCAN_TEMPLATES` if it is set (a checkout
/// whose `../shared` is elsewhere), [`TEMPLATES_DIR`] otherwise.
fn templates_dir() -> std::path::PathBuf {
    std::env::var_os("TOOLSCAN_TEMPLATES")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| Path::new(TEMPLATES_DIR).to_path_buf())
}

/// The formats whose templates are rendered (when this build implements
/// them).
const IN_SCOPE: &[&str] = &[
    "hermes",
    "deepseek-v3",
    "deepseek-v3.1",
    "function-tag",
    "llama3-json",
    "mistral",
    "mistral-v11",
    // Parameter-style (XML) formats. Templates of these formats: Qwen3-Coder
    // and its vLLM copy, Qwen3.5, Step-3.5-Flash (the Qwen3-Coder body
    // after `<think>`), Nemotron 3 Nano (`qwen3-coder`); Seed-OSS
    // (`seed-oss`); GLM-4.6 (`glm45`); GLM-4.7-Flash (`glm47`); MiniMax-M2
    // (`minimax-m2`); Kimi K3 (`kimi-k3`); DeepSeek V3.2, V4, V4-Flash
    // (`deepseek-v3.2`). No template in ../shared renders `claude-xml`,
    // `step3` (Step-3 proper; Step-3.5 writes qwen3-coder), `xml-tool`,
    // `autobyteus-xml` or `use-tag`; vLLM's tool_chat_template_glm4 renders
    // no assistant tool calls at all, and vLLM's olmo3 writes Python calls
    // inside `<function_calls>` (`olmo3`, not `claude-xml`).
    "qwen3-coder",
    "seed-oss",
    "glm45",
    "glm47",
    "minimax-m2",
    "kimi-k3",
    "deepseek-v3.2",
    // JSON model families and framed formats. Templates: vLLM granite and
    // granite_20b_fc (`granite`); FireFunction v2 (`phi4-mini`); vLLM
    // internlm2 (`internlm`); vLLM hunyuan_a13b, Apriel 1.5/1.6 (`jamba`);
    // MiniMax-M1 (`minimax-m1`); Command R+ (`command-r`); Command R7B
    // (`command-r7b`); vLLM xlam_llama/xlam_qwen (`xlam`); Apertus;
    // Nemotron Nano v2 (`nemotron`); GigaChat 3/3.1 (`gigachat3`);
    // Functionary v3.2; gpt-oss (`harmony`); Kimi K2, K2-Instruct,
    // K2-Thinking (`kimi-k2`).
    "granite",
    "phi4-mini",
    "internlm",
    "jamba",
    "minimax-m1",
    "command-r",
    "command-r7b",
    "xlam",
    "apertus",
    "nemotron",
    "gigachat3",
    "functionary-v3.2",
    "harmony",
    "kimi-k2",
    // Python-like notations: Gemma 4, FunctionGemma, vLLM's Gemma 3 and
    // Llama 4 pythonic templates, Olmo 3. (LFM2's templates render no
    // assistant calls; vLLM's Llama 3.2 pythonic and ToolACE templates
    // write strings unquoted, which no reader can decode.)
    "gemma4",
    "functiongemma",
    "pythonic",
    "olmo3",
];

/// Templates SOURCES.md leaves out (`—`) although they render a format in
/// scope (as duplicates, or for a reason this harness handles): rendered
/// anyway, as this format. Not here: byte-identical copies
/// (Hermes-3-Llama-3.1 tool_use, Llama-3.3-70B, vLLM's minimax_m1, which
/// would add nothing); vLLM's phi4_mini (writes the calls as a bare
/// `{…},{…}` with Python's `True`, without `functools[`: not `phi4-mini`);
/// vLLM's deepseekv31 (renders template indentation inside the history's
/// assistant header, `      <｜Assistant｜></think>          `, so the
/// generation prompt cannot be found in it; the official V3.1 template is
/// rendered); templates of formats not built (pythonic: llama3.2_pythonic,
/// toolace) or with no format (Solar Open); templates that render no
/// assistant tool calls (SmolLM3, LFM2/2.5, Granite 3.3, R1-Distill-Llama,
/// vLLM glm4); llama.cpp's deepseek-r1 (a construct only minja accepts).
const EXTRA_TEMPLATES: &[(&str, &str)] = &[
    // vLLM's copy of the Qwen3-Coder template: other prompt wording, the
    // same assistant turns.
    ("tool_chat_template_qwen3coder.jinja", "qwen3-coder"),
    // vLLM's copies of Hermes 2 Pro, Llama 3.1 JSON and the Mistral
    // parallel template (other prompt wording, the same turns).
    ("tool_chat_template_hermes.jinja", "hermes"),
    ("tool_chat_template_llama3.2_json.jinja", "llama3-json"),
    ("tool_chat_template_mistral.jinja", "mistral"),
    // Apriel 1.6 writes Apriel 1.5's `<tool_calls>[…]</tool_calls>`; its
    // generation prompt opens the reasoning, which history does not write
    // (cut by `history`, as QwQ).
    ("Apriel-1.6-15b-Thinker-fixed.jinja", "jamba"),
    // vLLM's DeepSeek V3 example: template indentation (runs of spaces)
    // around the calls, which is whitespace to the parser.
    ("tool_chat_template_deepseekv3.jinja", "deepseek-v3"),
];

/// Templates whose turns hold format framing the parser gives back as text
/// although the contract calls it framing: their calls and diagnostics are
/// checked, their text only for the assistant's content (printed once).
const KNOWN_TEXT_GAPS: &[(&str, &str)] = &[];

/// Templates that write the assistant's content next to tool calls as
/// reasoning: their turns are parsed with reasoning separation on, and the
/// content must come back as reasoning, not text.
const CONTENT_AS_REASONING: &[(&str, &str)] = &[(
    "openai-gpt-oss-120b.jinja",
    "gpt-oss's template writes a tool-call message's content into the `analysis` channel",
)];

/// Renders the engine does not parse yet although it should: template
/// file, conversation id or a part of one (`args=string`: every
/// conversation with string arguments), and what the engine gets wrong.
/// Skipped and printed with the reason. An empty part: every conversation.
const KNOWN_GAPS: &[(&str, &str, &str)] = &[];

/// Tokens that end an assistant turn.
const END_OF_TURN: &[&str] = &[
    "<|im_end|>",
    "<|eot_id|>",
    "<|eom_id|>",
    "<|eot|>",
    "<|eom|>",
    "</s>",
    "<｜end▁of▁sentence｜>",
    "<|end_of_text|>",
    "<sep>",
    "<seed:eos>",
    "[e~[",
    "<|close|>message<|sep|>",
    "<|end_of_msg|>",
    "<turn|>",
    "<end_of_turn>",
    "<|tool_response>",
    // Cohere, MiniMax-M1, Nemotron Nano v2, Granite-20B-FunctionCalling,
    // Hunyuan-A13B.
    "<|END_OF_TURN_TOKEN|>",
    "<end_of_sentence>",
    "<SPECIAL_12>",
    "<|endoftext|>",
    "<|eos|>",
];

/// End-of-turn tokens that are markup inside a turn of some formats: the
/// token, and the formats it does not end a turn of. Apriel and Phi-4 end a
/// turn with `<|end|>`; Harmony ends each *message* with it, and a turn
/// holds several (`<|channel|>analysis<|message|>…<|end|><|start|>assistant
/// to=functions.NAME…`).
const END_OF_TURN_UNLESS: &[(&str, &[&str])] = &[("<|end|>", &["harmony"])];

/// Stop tokens that belong to the turn's last call: the model's completion
/// ends *after* them, and they are kept (each format reads its own; the
/// template writes tool results after them inside the same turn). Apertus
/// writes `<|tools_prefix|>[calls]<|tools_suffix|>[results]`; Harmony's
/// call message ends with `<|call|>`, and the tool's answer follows.
const END_OF_TURN_KEPT: &[&str] = &["<|tools_suffix|>", "<|call|>"];

/// Tokens that end *every* message of a turn, so that a turn of several
/// messages holds them inside: the turn ends at the last one (removed, as
/// the serving stack strips the stop token). GigaChat 3 writes the content
/// and the call as two messages, each closed by `<|message_sep|>`:
/// `Let me check.<|message_sep|>\n\nfunction call<|role_sep|>\n{…}<|message_sep|>\n\n`.
const END_OF_LAST_MESSAGE: &[&str] = &["<|message_sep|>"];

/// Tokens that start the next message (for templates that render no end of
/// the assistant turn).
const NEXT_MESSAGE: &[&str] = &[
    "<｜tool▁outputs▁begin｜>",
    "<｜tool▁output▁begin｜>",
    "<｜User｜>",
    "<|im_start|>",
    "<|start_header_id|>",
    "<|header_start|>",
    "<|start_of_role|>",
    "[INST]",
    "[TOOL_RESULTS]",
    "<seed:bos>",
    "]~b]",
    "<|user|>",
    "<|observation|>",
    "<|open|>message",
    "<|turn>",
    "<start_of_turn>",
    "<|START_OF_TURN_TOKEN|>",
    // A tool's answer in GigaChat 3.
    "function result<|role_sep|>",
];

const EMPTY_THINK: &str = "<think>\n\n</think>\n\n";

const SYSTEM: &str = "You are a helpful assistant.";
const USER: &str = "What's the weather in Zürich and Paris?";
const TEXT: &str = "Let me check.";

/// A call of a conversation: id (9 alphanumerics, as Mistral templates
/// demand), name, arguments (as Python's `json.dumps(...,
/// ensure_ascii=False)` writes them: also the string form).
type Call = (&'static str, &'static str, &'static str);

/// The weather conversation's calls.
const CALLS: &[Call] = &[
    (
        "abcDEF123",
        "get_weather",
        r#"{"city": "Zürich", "unit": "celsius"}"#,
    ),
    (
        "xyzXYZ789",
        "search",
        r#"{"query": "weather in \"Paris\" (météo)", "filters": {"lang": "fr", "max": 3, "fresh": true, "sites": ["meteo.fr", "bbc.com"]}}"#,
    ),
];

/// Tool results of the weather calls, one per call.
const RESULTS: &[&str] = &[
    r#"{"temperature": 18, "unit": "celsius"}"#,
    "Paris: sunny, 21 °C",
];

/// The typed conversation's calls: a multi-line string value with quotes,
/// `<`, `&`, markup-like text and unicode; every JSON type (integer,
/// number, booleans, null, nested arrays and objects, a string in a list
/// that Python's repr writes with an escaped `'`); a call without
/// arguments. (No value begins or ends with a newline: `seed-oss` takes one
/// newline at each end as markup, which its template does not write.)
const TYPED_CALLS: &[Call] = &[
    (
        "fileAB123",
        "write_file",
        r#"{"path": "notes/日本語 ü 😀.txt", "content": "line 1: \"quoted\" & 'single' \\ back\n<b>bold</b> if a < b && b > c:\n    indented\tand tabbed", "append": false}"#,
    ),
    (
        "confXY456",
        "configure",
        r#"{"retries": 3, "ratio": 0.5, "enabled": true, "label": null, "tags": ["a", "it's \"x\""], "limits": {"cpu": 2, "nested": {"deep": [1, {"x": null}], "name": "Zürich"}}}"#,
    ),
    ("timeQR789", "get_time", "{}"),
];

/// Tool results of the typed calls, one per call.
const TYPED_RESULTS: &[&str] = &["ok: 97 bytes written", r#"{"applied": true}"#, "00:00"];

const TOOLS: &str = r#"[
  {"type": "function", "function": {
    "name": "get_weather",
    "description": "Get the current weather in a city.",
    "parameters": {"type": "object", "properties": {
      "city": {"type": "string", "description": "The city name."},
      "unit": {"type": "string", "description": "celsius or fahrenheit", "enum": ["celsius", "fahrenheit"]}
    }, "required": ["city"]}}},
  {"type": "function", "function": {
    "name": "search",
    "description": "Search the web.",
    "parameters": {"type": "object", "properties": {
      "query": {"type": "string", "description": "The search query."},
      "filters": {"type": "object", "description": "Optional filters.", "additionalProperties": {}}
    }, "required": ["query"]}}}
]"#;

/// The tools of the typed conversations (a nullable parameter is a type
/// union: Hermes 2 Pro's `json_to_python_type` recurses on it, in Jinja2
/// too, so those renders are skipped).
const TYPED_TOOLS: &str = r#"[
  {"type": "function", "function": {
    "name": "write_file",
    "description": "Write a text file.",
    "parameters": {"type": "object", "properties": {
      "path": {"type": "string", "description": "Where."},
      "content": {"type": "string", "description": "What."},
      "append": {"type": "boolean", "description": "Append instead of overwriting."}
    }, "required": ["path", "content"]}}},
  {"type": "function", "function": {
    "name": "configure",
    "description": "Change settings.",
    "parameters": {"type": "object", "properties": {
      "retries": {"type": "integer", "description": "How often to retry."},
      "ratio": {"type": "number", "description": "A ratio."},
      "enabled": {"type": "boolean", "description": "On or off."},
      "label": {"type": ["string", "null"], "description": "A label, or null."},
      "tags": {"type": "array", "items": {"type": "string"}, "description": "Tags."},
      "limits": {"type": "object", "description": "Nested limits.", "additionalProperties": {}}
    }, "required": ["retries"]}}},
  {"type": "function", "function": {
    "name": "get_time",
    "description": "The current time.",
    "parameters": {"type": "object", "properties": {}, "required": []}}}
]"#;

/// Which calls a conversation makes.
#[derive(Clone, Copy, Debug, PartialEq)]
enum CallSet {
    /// [`CALLS`]: strings and one nested object.
    Weather,
    /// [`TYPED_CALLS`]: every JSON type, awkward strings, no arguments.
    Typed,
}

impl CallSet {
    fn calls(self) -> &'static [Call] {
        match self {
            CallSet::Weather => CALLS,
            CallSet::Typed => TYPED_CALLS,
        }
    }

    /// The request's `tools` (JSON text).
    fn tools(self) -> &'static str {
        match self {
            CallSet::Weather => TOOLS,
            CallSet::Typed => TYPED_TOOLS,
        }
    }

    fn results(self) -> &'static [&'static str] {
        match self {
            CallSet::Weather => RESULTS,
            CallSet::Typed => TYPED_RESULTS,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Content {
    /// `"content": null`
    Null,
    /// `"content": ""`
    Empty,
    /// `"content": "Let me check."`
    Text,
}

/// One conversation: system?, user, assistant with calls, tool results?
#[derive(Clone, Copy, Debug)]
struct Conv {
    set: CallSet,
    calls: usize,
    content: Content,
    args_string: bool,
    tool_result: bool,
    system: bool,
}

impl Conv {
    /// The weather conversations with one or two calls; the typed ones
    /// with one or all three.
    fn all() -> Vec<Conv> {
        let mut v = Vec::new();
        for (set, counts) in [(CallSet::Weather, [1, 2]), (CallSet::Typed, [1, 3])] {
            for calls in counts {
                for content in [Content::Null, Content::Empty, Content::Text] {
                    for args_string in [false, true] {
                        for tool_result in [false, true] {
                            for system in [false, true] {
                                v.push(Conv {
                                    set,
                                    calls,
                                    content,
                                    args_string,
                                    tool_result,
                                    system,
                                });
                            }
                        }
                    }
                }
            }
        }
        v
    }

    fn id(&self) -> String {
        let content = match self.content {
            Content::Null => "null",
            Content::Empty => "empty",
            Content::Text => "text",
        };
        let args = if self.args_string { "string" } else { "dict" };
        let mut s = format!("calls={} content={content} args={args}", self.calls);
        if self.set == CallSet::Typed {
            s.insert_str(0, "typed ");
        }
        if self.tool_result {
            s.push_str(" +tool");
        }
        if self.system {
            s.push_str(" +system");
        }
        s
    }

    fn text(&self) -> &'static str {
        match self.content {
            Content::Text => TEXT,
            _ => "",
        }
    }

    fn calls(&self) -> &'static [Call] {
        &self.set.calls()[..self.calls]
    }

    /// The messages up to the user's (the prompt of the turn).
    fn prompt(&self) -> Vec<Value> {
        let mut m = Vec::new();
        if self.system {
            m.push(obj(vec![
                ("role", "system".into()),
                ("content", SYSTEM.into()),
            ]));
        }
        m.push(obj(vec![("role", "user".into()), ("content", USER.into())]));
        m
    }

    /// All messages.
    fn messages(&self) -> Vec<Value> {
        let mut m = self.prompt();
        let calls: Vec<Value> = self
            .calls()
            .iter()
            .map(|(id, name, args)| {
                let arguments = if self.args_string {
                    Value::from(*args)
                } else {
                    serde_json::from_str::<Value>(args).expect("arguments are JSON")
                };
                obj(vec![
                    ("id", (*id).into()),
                    ("type", "function".into()),
                    (
                        "function",
                        obj(vec![("name", (*name).into()), ("arguments", arguments)]),
                    ),
                ])
            })
            .collect();
        let content = match self.content {
            Content::Null => Value::from(()),
            Content::Empty => Value::from(""),
            Content::Text => Value::from(TEXT),
        };
        m.push(obj(vec![
            ("role", "assistant".into()),
            ("content", content),
            ("tool_calls", Value::from(calls)),
        ]));
        if self.tool_result {
            for ((id, name, _), result) in self.calls().iter().zip(self.set.results()) {
                m.push(obj(vec![
                    ("role", "tool".into()),
                    ("tool_call_id", (*id).into()),
                    ("name", (*name).into()),
                    ("content", (*result).into()),
                ]));
            }
        }
        m
    }

    /// The calls the parser must give back: (name, arguments).
    fn expected(&self) -> Vec<(String, Json)> {
        self.calls()
            .iter()
            .map(|(_, name, args)| (name.to_string(), serde_json::from_str(args).unwrap()))
            .collect()
    }
}

/// An ordered map (minijinja's `preserve_order` keeps insertion order, as
/// Python dicts do).
fn obj(pairs: Vec<(&str, Value)>) -> Value {
    pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
}

// ---------------------------------------------------------------------------
// A transformers-like Jinja environment.

/// Python's `json.dumps(value, ensure_ascii, indent, separators, sort_keys)`
/// (transformers' `tojson`).
struct Dumps {
    ensure_ascii: bool,
    indent: Option<String>,
    item_sep: String,
    key_sep: String,
    sort_keys: bool,
}

impl Dumps {
    fn string(&self, s: &str, out: &mut String) {
        out.push('"');
        for c in s.chars() {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\t' => out.push_str("\\t"),
                '\u{8}' => out.push_str("\\b"),
                '\u{c}' => out.push_str("\\f"),
                c if (c as u32) < 0x20 => {
                    let _ = write!(out, "\\u{:04x}", c as u32);
                }
                c if self.ensure_ascii && !(' '..='~').contains(&c) => {
                    let mut buf = [0u16; 2];
                    for unit in c.encode_utf16(&mut buf) {
                        let _ = write!(out, "\\u{unit:04x}");
                    }
                }
                c => out.push(c),
            }
        }
        out.push('"');
    }

    fn newline(&self, level: usize, out: &mut String) {
        if let Some(ind) = &self.indent {
            out.push('\n');
            for _ in 0..level {
                out.push_str(ind);
            }
        }
    }

    fn key(&self, k: &Value) -> Result<String, Error> {
        Ok(match k.kind() {
            ValueKind::String => k.as_str().unwrap_or_default().to_string(),
            ValueKind::None => "null".into(),
            ValueKind::Bool => if k.is_true() { "true" } else { "false" }.into(),
            ValueKind::Number => k.to_string(),
            _ => {
                return Err(Error::new(
                    ErrorKind::InvalidOperation,
                    format!(
                        "keys must be str, int, float, bool or None, not {}",
                        k.kind()
                    ),
                ))
            }
        })
    }

    fn value(&self, v: &Value, level: usize, out: &mut String) -> Result<(), Error> {
        match v.kind() {
            ValueKind::None => out.push_str("null"),
            ValueKind::Bool => out.push_str(if v.is_true() { "true" } else { "false" }),
            ValueKind::Number => {
                let s = v.to_string();
                out.push_str(match s.as_str() {
                    "inf" => "Infinity",
                    "-inf" => "-Infinity",
                    "NaN" | "nan" => "NaN",
                    s => s,
                });
            }
            ValueKind::String => self.string(v.as_str().unwrap_or_default(), out),
            ValueKind::Seq => {
                let items: Vec<Value> = v.try_iter()?.collect();
                if items.is_empty() {
                    out.push_str("[]");
                    return Ok(());
                }
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(&self.item_sep);
                    }
                    self.newline(level + 1, out);
                    self.value(item, level + 1, out)?;
                }
                self.newline(level, out);
                out.push(']');
            }
            ValueKind::Map => {
                let mut entries = Vec::new();
                for k in v.try_iter()? {
                    let val = v.get_item(&k)?;
                    entries.push((self.key(&k)?, val));
                }
                if self.sort_keys {
                    entries.sort_by(|a, b| a.0.cmp(&b.0));
                }
                if entries.is_empty() {
                    out.push_str("{}");
                    return Ok(());
                }
                out.push('{');
                for (i, (k, val)) in entries.iter().enumerate() {
                    if i > 0 {
                        out.push_str(&self.item_sep);
                    }
                    self.newline(level + 1, out);
                    self.string(k, out);
                    out.push_str(&self.key_sep);
                    self.value(val, level + 1, out)?;
                }
                self.newline(level, out);
                out.push('}');
            }
            kind => {
                return Err(Error::new(
                    ErrorKind::InvalidOperation,
                    format!("Object of type {kind} is not JSON serializable"),
                ))
            }
        }
        Ok(())
    }
}

/// `value | tojson(ensure_ascii=False, indent=None, separators=None,
/// sort_keys=False)`, as transformers defines it.
fn tojson(value: &Value, kwargs: Kwargs) -> Result<Value, Error> {
    let ensure_ascii: Option<bool> = kwargs.get("ensure_ascii")?;
    let indent: Option<Value> = kwargs.get("indent")?;
    let separators: Option<Value> = kwargs.get("separators")?;
    let sort_keys: Option<bool> = kwargs.get("sort_keys")?;
    kwargs.assert_all_used()?;
    let indent = match indent {
        Some(v) if v.kind() == ValueKind::Number => {
            let n = i64::try_from(v)?.max(0) as usize;
            Some(" ".repeat(n))
        }
        Some(v) if v.kind() == ValueKind::String => Some(v.as_str().unwrap().to_string()),
        _ => None,
    };
    let (item_sep, key_sep) = match separators {
        Some(v) if !v.is_none() => {
            let parts: Vec<Value> = v.try_iter()?.collect();
            let s = |i: usize| {
                parts
                    .get(i)
                    .and_then(|p| p.as_str())
                    .map(str::to_string)
                    .ok_or_else(|| Error::new(ErrorKind::InvalidOperation, "bad separators"))
            };
            (s(0)?, s(1)?)
        }
        _ if indent.is_some() => (",".to_string(), ": ".to_string()),
        _ => (", ".to_string(), ": ".to_string()),
    };
    let d = Dumps {
        ensure_ascii: ensure_ascii.unwrap_or(false),
        indent,
        item_sep,
        key_sep,
        sort_keys: sort_keys.unwrap_or(false),
    };
    let mut out = String::new();
    d.value(value, 0, &mut out)?;
    Ok(Value::from_safe_string(out))
}

/// Python's `repr` of a string: single quotes unless the string holds a
/// `'` and no `"`; backslashes, the quote and control characters escaped.
fn py_repr_str(s: &str, out: &mut String) {
    let q = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    out.push(q);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == q => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push(q);
}

/// Python's `str(value)` (what Jinja2's `string` filter gives): a string as
/// is; `None`, `True`, `False`; containers as their `repr` (`{'a': True}`).
fn py_str(v: &Value, top: bool, out: &mut String) -> Result<(), Error> {
    match v.kind() {
        ValueKind::Undefined if top => {}
        ValueKind::None | ValueKind::Undefined => out.push_str("None"),
        ValueKind::Bool => out.push_str(if v.is_true() { "True" } else { "False" }),
        ValueKind::String if top => out.push_str(v.as_str().unwrap_or_default()),
        ValueKind::String => py_repr_str(v.as_str().unwrap_or_default(), out),
        ValueKind::Seq => {
            out.push('[');
            for (i, item) in v.try_iter()?.enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                py_str(&item, false, out)?;
            }
            out.push(']');
        }
        ValueKind::Map => {
            out.push('{');
            for (i, k) in v.try_iter()?.enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                py_str(&k, false, out)?;
                out.push_str(": ");
                py_str(&v.get_item(&k)?, false, out)?;
            }
            out.push('}');
        }
        _ => {
            let _ = write!(out, "{v}");
        }
    }
    Ok(())
}

/// Jinja2's `string` filter: Python's `str` (minijinja's own prints
/// `true`, `none` and JSON-like containers).
fn string_filter(v: &Value) -> Result<Value, Error> {
    if v.kind() == ValueKind::String {
        return Ok(v.clone());
    }
    let mut out = String::new();
    py_str(v, true, &mut out)?;
    Ok(Value::from(out))
}

/// Jinja2's `indent(width=4, first=False, blank=False)`: a trailing newline
/// is kept (`'{\n'|indent(4, first=true)` is `    {\n`; minijinja's drops
/// it, which joins Command R+'s call lines).
fn indent(s: String, width: Option<Value>, kwargs: Kwargs) -> Result<Value, Error> {
    let width = match width {
        Some(w) => Some(w),
        None => kwargs.get::<Option<Value>>("width")?,
    };
    let first = kwargs.get::<Option<bool>>("first")?.unwrap_or(false);
    let blank = kwargs.get::<Option<bool>>("blank")?.unwrap_or(false);
    kwargs.assert_all_used()?;
    let indention = match width {
        Some(w) if w.kind() == ValueKind::String => w.as_str().unwrap_or_default().to_string(),
        Some(w) => " ".repeat(usize::try_from(w)?),
        None => "    ".to_string(),
    };
    let s = s + "\n";
    let lines: Vec<&str> = s.lines().collect();
    let mut rv = if blank {
        lines.join(&format!("\n{indention}"))
    } else {
        let mut rv = lines.first().copied().unwrap_or_default().to_string();
        if lines.len() > 1 {
            let rest: Vec<String> = lines[1..]
                .iter()
                .map(|l| {
                    if l.is_empty() {
                        String::new()
                    } else {
                        format!("{indention}{l}")
                    }
                })
                .collect();
            rv.push('\n');
            rv.push_str(&rest.join("\n"));
        }
        rv
    };
    if first {
        rv.insert_str(0, &indention);
    }
    Ok(Value::from(rv))
}

/// `from_json` (vLLM's and llama.cpp's extension): parses JSON text.
fn from_json(s: String) -> Result<Value, Error> {
    serde_json::from_str::<Json>(&s)
        .map(Value::from_serialize)
        .map_err(|e| Error::new(ErrorKind::InvalidOperation, format!("from_json: {e}")))
}

fn raise_exception(msg: String) -> Result<Value, Error> {
    Err(Error::new(ErrorKind::InvalidOperation, msg))
}

/// `strftime_now(format)` at a fixed moment (2024-07-26 00:00:00), for
/// reproducible renders.
fn strftime_now(format: String) -> String {
    let mut out = String::new();
    let mut chars = format.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('d') => out.push_str("26"),
            Some('b') => out.push_str("Jul"),
            Some('B') => out.push_str("July"),
            Some('m') => out.push_str("07"),
            Some('Y') => out.push_str("2024"),
            Some('y') => out.push_str("24"),
            Some('a') => out.push_str("Fri"),
            Some('A') => out.push_str("Friday"),
            Some('H' | 'M' | 'S') => out.push_str("00"),
            Some('%') => out.push('%'),
            Some(other) => {
                out.push('%');
                out.push(other);
            }
            None => out.push('%'),
        }
    }
    out
}

/// A Python list kept in a `namespace(...)`: `append` and `pop` change it
/// in place, as Kimi K2's templates need (`ns.ids.append(id)`, later
/// `ns.ids.pop(0)`); minijinja's own lists cannot be changed.
#[derive(Debug, Default)]
struct PyList(Mutex<Vec<Value>>);

impl PyList {
    fn items(&self) -> Vec<Value> {
        self.0.lock().map(|v| v.clone()).unwrap_or_default()
    }
}

impl Object for PyList {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Seq
    }

    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        let items = self.items();
        let i = key.as_i64()?;
        let i = if i < 0 { items.len() as i64 + i } else { i };
        items.get(usize::try_from(i).ok()?).cloned()
    }

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        Enumerator::Values(self.items())
    }

    fn call_method(
        self: &Arc<Self>,
        _state: &State<'_, '_>,
        method: &str,
        args: &[Value],
    ) -> Result<Value, Error> {
        let mut items = self
            .0
            .lock()
            .map_err(|_| Error::new(ErrorKind::InvalidOperation, "list poisoned"))?;
        match (method, args) {
            ("append", [v]) => {
                items.push(v.clone());
                Ok(Value::from(()))
            }
            ("pop", [] | [_]) => {
                let len = items.len() as i64;
                let i = args.first().and_then(Value::as_i64).unwrap_or(-1);
                let i = if i < 0 { len + i } else { i };
                if i < 0 || i >= len {
                    return Err(Error::new(
                        ErrorKind::InvalidOperation,
                        "pop index out of range",
                    ));
                }
                Ok(items.remove(i as usize))
            }
            _ => Err(Error::from(ErrorKind::UnknownMethod)),
        }
    }
}

/// `namespace(...)` whose list values are [`PyList`]s.
fn namespace(defaults: Option<Value>) -> Result<Value, Error> {
    let Some(defaults) = defaults else {
        return minijinja::functions::namespace(None);
    };
    let Some(pairs) = defaults.as_object().and_then(|o| o.try_iter_pairs()) else {
        return minijinja::functions::namespace(Some(defaults));
    };
    let pairs: Vec<(Value, Value)> = pairs
        .map(|(k, v)| {
            if v.kind() == ValueKind::Seq {
                let list = PyList(Mutex::new(
                    v.try_iter().map(|i| i.collect()).unwrap_or_default(),
                ));
                (k, Value::from_object(list))
            } else {
                (k, v)
            }
        })
        .collect();
    minijinja::functions::namespace(Some(Value::from_iter(pairs)))
}

fn environment() -> Environment<'static> {
    let mut env = Environment::new();
    env.set_trim_blocks(true);
    env.set_lstrip_blocks(true);
    env.set_keep_trailing_newline(false);
    env.set_auto_escape_callback(|_| AutoEscape::None);
    env.set_unknown_method_callback(minijinja_contrib::pycompat::unknown_method_callback);
    env.add_filter("tojson", tojson);
    env.add_filter("string", string_filter);
    env.add_filter("from_json", from_json);
    env.add_filter("fromjson", from_json);
    env.add_filter("indent", indent);
    env.add_function("raise_exception", raise_exception);
    env.add_function("strftime_now", strftime_now);
    env.add_function("namespace", namespace);
    // Jinja2 prints None, True and False the Python way.
    env.set_formatter(|out, state, value| match value.kind() {
        ValueKind::None => out.write_str("None").map_err(Error::from),
        ValueKind::Bool => out
            .write_str(if value.is_true() { "True" } else { "False" })
            .map_err(Error::from),
        _ => minijinja::escape_formatter(out, state, value),
    });
    env
}

/// Templates that read `functions` (the tools as JSON text) and `datetime`
/// besides the messages and tools, as llama.cpp renders them (FireFunction
/// v2: `tools.dump(2)`, `%b %d %Y %H:%M:%S GMT` at the fixed date).
const FUNCTIONS_AND_DATETIME: &[&str] = &["fireworks-ai-llama-3-firefunction-v2.jinja"];

/// `bos_token` / `eos_token` of a template's model family.
fn special_tokens(source: &str) -> (&'static str, &'static str) {
    if source.contains("<｜") {
        ("<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>")
    } else if source.contains("<|start_header_id|>") || source.contains("<|header_start|>") {
        ("<|begin_of_text|>", "<|eot_id|>")
    } else if source.contains("<|im_start|>") {
        ("", "<|im_end|>")
    } else {
        ("<s>", "</s>")
    }
}

fn render(
    env: &Environment,
    template: &str,
    tokens: (&str, &str),
    tools: &str,
    messages: Vec<Value>,
    add_generation_prompt: bool,
) -> Result<String, Error> {
    let tools_json: Json = serde_json::from_str(tools).expect("tools are JSON");
    let tools: Value = serde_json::from_str(tools).expect("tools are JSON");
    let ctx = minijinja::context! {
        messages => Value::from(messages),
        tools => tools,
        add_generation_prompt => add_generation_prompt,
        bos_token => tokens.0,
        eos_token => tokens.1,
    };
    let ctx = if FUNCTIONS_AND_DATETIME.contains(&template) {
        let functions = serde_json::to_string_pretty(&tools_json).expect("tools print");
        minijinja::context! {
            functions => functions,
            datetime => "Jul 26 2024 00:00:00 GMT",
            ..ctx
        }
    } else {
        ctx
    };
    env.get_template(template)?.render(ctx)
}

// ---------------------------------------------------------------------------
// Cutting the assistant turn.

/// The longest head of `prompt` that `rest` starts with and that ends at a
/// token boundary (after `>`, `]`, a newline, or at the end of `prompt`):
/// `<|im_start|>assistant\n` of `<|im_start|>assistant\n<think>\n` when
/// `rest` is `<|im_start|>assistant\n<tool_call>…`, not `…\n<t`.
fn shared_head(rest: &str, prompt: &str) -> usize {
    let ends = prompt
        .char_indices()
        .filter(|(_, c)| matches!(c, '>' | ']' | '\n'))
        .map(|(i, c)| i + c.len_utf8())
        .chain([prompt.len()]);
    ends.filter(|&i| rest.starts_with(&prompt[..i]))
        .max()
        .unwrap_or(0)
}

/// An assistant turn cut out of a render.
struct Turn {
    /// What the model would have written.
    text: String,
    /// What the render has after the turn.
    after: String,
    /// How it was found.
    method: &'static str,
    /// The turn writes reasoning markup ([`toolscan::reasoning_markers`]): it is
    /// parsed with reasoning separation on.
    reasoning: bool,
    /// The generation prompt opened the reasoning block (it ends with an
    /// opening marker, `<think>`): the model starts inside it.
    starts_in_reasoning: bool,
}

/// The assistant turn of `full` (in `format`), given the prompt rendered
/// with (`p`) and without (`p0`) the generation prompt.
fn cut_turn(format: &str, p: &str, p0: &str, full: &str) -> Result<Turn, String> {
    let gen = p.strip_prefix(p0).unwrap_or("");
    let (rest, method) = if let Some(rest) = full.strip_prefix(p) {
        (rest, "prefix")
    } else if let Some(rest) = full.strip_prefix(p0) {
        (&rest[history_head(rest, gen)..], "history")
    } else {
        let (Some(a), Some(b)) = (p.rfind(USER), full.rfind(USER)) else {
            return Err("the user message is not found in the renders".into());
        };
        let (pt, ft) = (&p[a + USER.len()..], &full[b + USER.len()..]);
        // The history writes the turn where the prompt has something else
        // (Command R+ renders an instruction after the last message): the
        // turn follows the generation prompt, if F writes it after a part
        // it shares with P.
        let after_gen = (!gen.is_empty())
            .then(|| ft.find(gen))
            .flatten()
            .filter(|&i| pt.starts_with(&ft[..i]));
        match after_gen {
            Some(i) => (&ft[i + gen.len()..], "user-anchor"),
            None => (&ft[shared_head(ft, pt)..], "user-anchor"),
        }
    };
    let ends = END_OF_TURN
        .iter()
        .chain(NEXT_MESSAGE)
        .chain(
            END_OF_TURN_UNLESS
                .iter()
                .filter(|(_, formats)| !formats.contains(&format))
                .map(|(t, _)| t),
        )
        .filter_map(|t| rest.find(t));
    let kept = END_OF_TURN_KEPT
        .iter()
        .filter_map(|t| rest.find(t).map(|i| i + t.len()));
    let end = ends.chain(kept).min().unwrap_or(rest.len());
    let mut turn = &rest[..end];
    for t in END_OF_LAST_MESSAGE {
        if let Some(i) = turn.rfind(t) {
            if turn[i + t.len()..].trim().is_empty() {
                turn = &turn[..i];
            }
        }
    }
    turn = turn.strip_prefix(EMPTY_THINK).unwrap_or(turn);
    turn = turn.strip_suffix(EMPTY_THINK).unwrap_or(turn);
    let gen = gen.trim_end();
    if gen.ends_with("<think></think>") {
        // Thinking off: the prompt's `<think></think>` is written as a bare
        // `</think>` in history (DeepSeek V3.2/V4), which the model does
        // not write after that prompt.
        turn = turn.strip_prefix("</think>").unwrap_or(turn);
    }
    // A turn that writes a reasoning marker the engine knows is parsed with
    // reasoning separation on (Cohere R7B writes an empty
    // `<|START_THINKING|><|END_THINKING|>` before its calls), and as
    // starting inside the reasoning block when the generation prompt ends
    // with an opening one.
    let reasoning = toolscan::reasoning_markers()
        .iter()
        .any(|(open, close)| turn.contains(open) || turn.contains(close));
    let starts_in_reasoning = reasoning
        && toolscan::reasoning_markers()
            .iter()
            .any(|(open, _)| gen.ends_with(open));
    let after = rest[turn.len()..].to_string();
    Ok(Turn {
        text: turn.to_string(),
        after,
        method,
        reasoning,
        starts_in_reasoning,
    })
}

/// How much of the history's `rest` the generation prompt `gen` stands
/// for: its [`shared_head`], or, when `gen` ends with whitespace the
/// history writes otherwise (Granite-20B's prompt `\nASSISTANT: ` against
/// the history's `\nASSISTANT:\n`), `gen` without that whitespace and the
/// whitespace that follows it in `rest`.
fn history_head(rest: &str, gen: &str) -> usize {
    let head = shared_head(rest, gen);
    let bare = gen.trim_end();
    if bare.len() < gen.len() && bare.len() > head && rest.starts_with(bare) {
        let after = &rest[bare.len()..];
        return rest.len() - after.trim_start().len();
    }
    head
}

/// Why a rendered turn is not a test of the parser (the template, not the
/// model, is odd), if it is not.
fn skip_reason(conv: &Conv, turn: &Turn) -> Option<String> {
    for (_, name, _) in conv.calls() {
        if turn.after.contains(name) && !turn.text.contains(name) {
            // Nemotron Nano v2 renders a last assistant message with
            // content as two turns, the content's and the calls';
            // R1-Distill writes `<｜tool▁calls▁end｜><｜end▁of▁sentence｜>`
            // after the second call and goes on with the third.
            return Some(format!(
                "the template writes the call {name} after the end of the turn"
            ));
        }
        if !turn.text.contains(name) {
            return Some(format!(
                "the template does not render the call {name} of this message"
            ));
        }
    }
    if conv.content == Content::Null && turn.text.trim_start().starts_with("None") {
        // Command R+: `message.content|trim` (Jinja2 too).
        return Some("the template writes a null content as `None`".into());
    }
    if conv.content == Content::Text && !turn.text.contains(TEXT) {
        return Some("the template drops the assistant content next to tool calls".into());
    }
    None
}

/// Templates that write some values in a way no reader can decode exactly
/// (the notation they use has no escaping, or they print Python reprs
/// where a literal must be): why a conversation is left out for them.
fn lossy_render(file: &str, conv: &Conv) -> Option<&'static str> {
    let plain_strings = conv.set == CallSet::Weather && conv.calls == 1;
    match file {
        f if f.starts_with("google-gemma-4") && conv.args_string => {
            Some("Gemma 4's template writes string arguments as `{{json}}`")
        }
        f if f.starts_with("google-gemma-4") && conv.set == CallSet::Typed => {
            Some("Gemma 4's template writes null as Python's `None`")
        }
        "tool_chat_template_functiongemma.jinja" | "tool_chat_template_llama4_pythonic.jinja"
            if !plain_strings =>
        {
            Some("the template writes every value as unescaped text: only plain string values are exact")
        }
        "tool_chat_template_llama4_pythonic.jinja" if conv.args_string => {
            Some("the Llama 4 pythonic template iterates arguments given as a string by character")
        }
        "tool_chat_template_gemma3_pythonic.jinja" => {
            Some("the template writes no comma between keyword arguments")
        }
        "tool_chat_template_olmo3.jinja" if conv.set == CallSet::Typed => {
            Some("Olmo 3's template writes strings in single quotes without escaping them")
        }
        _ => None,
    }
}

// ---------------------------------------------------------------------------
// Parsing and checking.

/// The options a turn is parsed with: seeded ids, the tools schema, and
/// reasoning separation where the turn writes reasoning markup.
fn options(turn: &Turn, tools: &str) -> Options {
    let tools = Tools::from_json_str(tools).expect("tools parse");
    seeded_options()
        .with_tools(tools)
        .with_reasoning(turn.reasoning)
        .with_starts_in_reasoning(turn.starts_in_reasoning)
}

/// Parses a turn whole with the one-shot `parse`, or fed in 1-byte chunks
/// (the events checked against the event contract).
fn parse(format: &str, turn: &Turn, tools: &str, one_byte: bool) -> Result<Response, String> {
    let input = turn.text.as_bytes();
    if !one_byte {
        let g = Registry::builtin().grammar(format).expect("format exists");
        return Ok(toolscan::parse(g, options(turn, tools), input));
    }
    let p = chunk::parser(format, options(turn, tools));
    let events = chunk::feed(p, Api::FeedInto, input, &Plan::fixed(input.len(), 1));
    check_events(&events)?;
    Ok(Response::from_events(&events))
}

/// The calls and the text of the conversation's turn, no reasoning but
/// whitespace, and no diagnostics. For a template in [`KNOWN_TEXT_GAPS`]
/// the text need only hold the assistant's content; for one in
/// [`CONTENT_AS_REASONING`] the content is the reasoning, and the text is
/// empty.
fn check(r: &Response, conv: &Conv, text_gap: bool, as_reasoning: bool) -> Result<(), String> {
    let calls: Vec<Json> = conv
        .expected()
        .into_iter()
        .map(|(name, arguments)| serde_json::json!({"name": name, "arguments": arguments}))
        .collect();
    let (content, want_reasoning) = if as_reasoning {
        ("", conv.text())
    } else {
        (conv.text(), "")
    };
    let text = if text_gap {
        if !r.text.contains(content) {
            return Err(format!("text {:?} lacks {:?}", r.text, content));
        }
        normalize_ws(&r.text)
    } else {
        normalize_ws(content)
    };
    let reasoning = r.reasoning.as_deref().unwrap_or("");
    if reasoning.trim() != want_reasoning {
        return Err(format!("reasoning {reasoning:?}, want {want_reasoning:?}"));
    }
    let expect = serde_json::json!({
        "text": text,
        "tool_calls": calls,
        "diagnostics": 0,
    });
    check_expect(&expect, &Outcome::from_response(r))
        .map_err(|e| format!("{e}; diagnostics: {:?}", r.diagnostics))
}

/// Markers that `auto` gives to another format than the one a template
/// writes them in, by design (docs/formats.md): (format, marker, why).
const AUTO_READS_OTHERWISE: &[(&str, &str, &str)] = &[(
    "granite",
    "<function_call>",
    "Granite-20B's `<function_call> {…}` has no `</function_call>`: under auto it is hermes' \
     wrapper, which needs one",
)];

/// Whether `auto` is expected to see the calls of this turn, or why not:
/// it leaves out bare openers (a plain `{`) and programs at the start of
/// the stream, so a turn needs one of the format's other markers, and must
/// not start inside the format's markup.
fn auto_sees(format: &str, turn: &str) -> Result<(), String> {
    let reg = Registry::builtin();
    let Some(f) = reg.get(format) else {
        return Err(format!("format {format} is not built"));
    };
    let openers = Opener::all_of(f);
    let has = |o: &Opener| {
        let m = o.marker.as_bytes();
        turn.as_bytes().windows(m.len()).any(|w| {
            if o.case_insensitive {
                w.eq_ignore_ascii_case(m)
            } else {
                w == m
            }
        })
    };
    let marked = |o: &&Opener| o.trust != "bare" && !o.stream_start;
    if openers.iter().any(|o| o.stream_start) {
        let starts_marked = openers
            .iter()
            .filter(marked)
            .any(|o| turn.trim_start().starts_with(&o.marker));
        if !starts_marked {
            return Err(format!(
                "the turn starts inside {format}'s markup (read by the format's start-of-stream \
                 program), which auto leaves out"
            ));
        }
    }
    for (fmt, marker, why) in AUTO_READS_OTHERWISE {
        if *fmt == format && turn.contains(marker) {
            return Err(why.to_string());
        }
    }
    if openers.iter().filter(marked).any(has) {
        Ok(())
    } else {
        Err("the calls open with a bare `{`, which auto leaves out".into())
    }
}

/// What `auto_sees` needs of an opener, read from the format's
/// description (`Format::to_json`).
struct Opener {
    marker: String,
    case_insensitive: bool,
    trust: String,
    stream_start: bool,
}

impl Opener {
    fn all_of(f: &toolscan::Format) -> Vec<Opener> {
        let text = f.to_json().expect("a built-in format is described");
        let v: Json = serde_json::from_str(&text).expect("JSON");
        let openers = v["openers"].as_array().cloned().unwrap_or_default();
        openers
            .iter()
            .map(|o| {
                let open = &o["open"];
                Opener {
                    marker: open
                        .as_str()
                        .or_else(|| open["text"].as_str())
                        .unwrap_or("")
                        .to_string(),
                    case_insensitive: open["case_insensitive"].as_bool().unwrap_or(false),
                    trust: o["trust"].as_str().unwrap_or("definite").to_string(),
                    stream_start: o["stream_start"].as_bool().unwrap_or(false),
                }
            })
            .collect()
    }
}

/// The templates and their formats (SOURCES.md's table and
/// [`EXTRA_TEMPLATES`]), or `None` with a message naming what is `skipped`
/// when the templates are not beside the repository.
fn template_rows(skipped: &str) -> Option<Vec<(String, String)>> {
    let dir = templates_dir();
    let Ok(sources_md) = std::fs::read_to_string(dir.join("SOURCES.md")) else {
        eprintln!(
            "templates: {} not found (no ../shared beside the repository): {skipped}",
            dir.display()
        );
        return None;
    };
    let mut rows = sources(&sources_md);
    for (file, format) in EXTRA_TEMPLATES {
        if !rows.iter().any(|(f, _)| f == file) {
            rows.push((file.to_string(), format.to_string()));
        }
    }
    Some(rows)
}

/// The rows whose format is in scope and built in, each with its format
/// and the special tokens of its template, which is added to `env`; rows
/// whose template cannot be used are left out (the first template test
/// reports those).
fn usable_templates<'r>(
    rows: Vec<(String, String)>,
    reg: &'r Registry,
    env: &mut Environment<'static>,
) -> Vec<(String, String, &'r Format, (&'static str, &'static str))> {
    let mut out = Vec::new();
    for (file, format) in rows {
        if !IN_SCOPE.contains(&format.as_str()) {
            continue;
        }
        let Some(f) = reg.get(&format) else { continue };
        let Ok(tokens) = load_template(env, &file) else {
            continue;
        };
        out.push((file, format, f, tokens));
    }
    out
}

/// Adds the template `file` to `env` under its file name; its special
/// tokens (see [`special_tokens`]), or why it cannot be used.
fn load_template(
    env: &mut Environment<'static>,
    file: &str,
) -> Result<(&'static str, &'static str), String> {
    let source = std::fs::read_to_string(templates_dir().join(file))
        .map_err(|e| format!("{file}: listed in SOURCES.md but unreadable: {e}"))?;
    let tokens = special_tokens(&source);
    env.add_template_owned(file.to_owned(), source)
        .map_err(|e| format!("{file}: does not compile: {e:#}"))?;
    Ok(tokens)
}

/// `file` and `format` of each row of SOURCES.md (`—` rows left out).
fn sources(text: &str) -> Vec<(String, String)> {
    let mut rows = Vec::new();
    for line in text.lines() {
        if !line.starts_with('|') {
            continue;
        }
        // Split on `|` not escaped as `\|`.
        let mut cells = Vec::new();
        let mut cell = String::new();
        let mut prev = ' ';
        for c in line.chars() {
            if c == '|' && prev != '\\' {
                cells.push(cell.trim().to_string());
                cell.clear();
            } else {
                cell.push(c);
            }
            prev = c;
        }
        // cells[0] is the empty text before the first `|`.
        if cells.len() < 6 || !cells[1].ends_with(".jinja") {
            continue;
        }
        let format = cells[5].trim_matches('`').trim().to_string();
        if format == "—" || format.is_empty() {
            continue;
        }
        rows.push((cells[1].clone(), format));
    }
    rows
}

#[derive(Default)]
struct Tally {
    format: String,
    methods: BTreeMap<&'static str, usize>,
    checked: usize,
    distinct: std::collections::BTreeSet<String>,
    skipped: BTreeMap<String, usize>,
    /// How checked turns were checked differently.
    notes: BTreeMap<String, usize>,
}

/// How a turn was read as to reasoning, for the printed list of turns.
fn reasoning_note(turn: &Turn) -> &'static str {
    match (turn.reasoning, turn.starts_in_reasoning) {
        (false, _) => "",
        (true, false) => ", reasoning",
        (true, true) => ", starts in reasoning",
    }
}

/// What [`templates_render_turns_the_parser_recovers`] checked, per
/// template, and the formats this build lacks.
fn print_tallies(tallies: &BTreeMap<String, Tally>, not_built: &BTreeMap<String, usize>) {
    eprintln!("templates rendered ({}):", templates_dir().display());
    for (file, t) in tallies {
        let methods: Vec<String> = t.methods.iter().map(|(m, n)| format!("{m} {n}")).collect();
        eprintln!(
            "  {file} [{}]: {} conversations checked ({} distinct turns; cut by {})",
            t.format,
            t.checked,
            t.distinct.len(),
            if methods.is_empty() {
                "-".to_string()
            } else {
                methods.join(", ")
            }
        );
        for (why, n) in &t.skipped {
            eprintln!("      skipped {n}: {why}");
        }
        for (what, n) in &t.notes {
            eprintln!("      note {n}: {what}");
        }
    }
    for (format, n) in not_built {
        eprintln!("  format {format} not in this build: {n} template(s) skipped");
    }
}

#[test]
fn templates_render_turns_the_parser_recovers() {
    let Some(rows) = template_rows("template tests skipped") else {
        return;
    };
    let print_all = std::env::var_os("TOOLSCAN_TEMPLATES_PRINT").is_some();
    let reg = Registry::builtin();
    let mut env = environment();
    let mut failures: Vec<String> = Vec::new();
    let mut tallies: BTreeMap<String, Tally> = BTreeMap::new();
    let mut not_built: BTreeMap<String, usize> = BTreeMap::new();

    for (file, format) in rows {
        if !IN_SCOPE.contains(&format.as_str()) {
            continue;
        }
        if reg.get(&format).is_none() {
            *not_built.entry(format).or_default() += 1;
            continue;
        }
        let tokens = match load_template(&mut env, &file) {
            Ok(tokens) => tokens,
            Err(e) => {
                failures.push(e);
                continue;
            }
        };
        let tally = tallies.entry(file.clone()).or_default();
        tally.format = format.clone();

        for conv in Conv::all() {
            let cid = conv.id();
            let tools = conv.set.tools();
            let rendered = (|| -> Result<(String, String, String), Error> {
                Ok((
                    render(&env, &file, tokens, tools, conv.prompt(), true)?,
                    render(&env, &file, tokens, tools, conv.prompt(), false)?,
                    render(&env, &file, tokens, tools, conv.messages(), false)?,
                ))
            })();
            let (p, p0, full) = match rendered {
                Ok(r) => r,
                Err(e) => {
                    let msg = e.detail().unwrap_or("").to_string();
                    let msg = if msg.is_empty() { e.to_string() } else { msg };
                    *tally
                        .skipped
                        .entry(format!("the template raises: {msg}"))
                        .or_default() += 1;
                    continue;
                }
            };
            let mut turn = match cut_turn(&format, &p, &p0, &full) {
                Ok(t) => t,
                Err(e) => {
                    failures.push(format!("{file} [{cid}]: cannot cut the turn: {e}"));
                    continue;
                }
            };
            let method = turn.method;
            if let Some(why) = skip_reason(&conv, &turn) {
                *tally.skipped.entry(why).or_default() += 1;
                continue;
            }
            if let Some(why) = lossy_render(&file, &conv) {
                *tally.skipped.entry(why.into()).or_default() += 1;
                continue;
            }
            if let Some((_, _, why)) = KNOWN_GAPS
                .iter()
                .find(|(f, c, _)| *f == file && cid.contains(c))
            {
                eprintln!("known gap, skipped: {file} [{cid}]: {:?}", turn.text);
                *tally
                    .skipped
                    .entry(format!("known engine gap (KNOWN_GAPS): {why}"))
                    .or_default() += 1;
                continue;
            }
            *tally.methods.entry(method).or_default() += 1;
            tally.checked += 1;
            tally.distinct.insert(turn.text.clone());
            if print_all {
                eprintln!(
                    "{file} [{cid}] ({method}{}): {:?}",
                    reasoning_note(&turn),
                    turn.text
                );
            }
            let as_reasoning = CONTENT_AS_REASONING.iter().find(|(f, _)| *f == file);
            if let Some((_, why)) = as_reasoning {
                turn.reasoning = true;
                *tally
                    .notes
                    .entry(format!(
                        "content checked as reasoning (CONTENT_AS_REASONING): {why}"
                    ))
                    .or_default() += 1;
            }
            let text_gap = KNOWN_TEXT_GAPS.iter().find(|(f, _)| *f == file);
            if let Some((_, why)) = text_gap {
                *tally
                    .skipped
                    .entry(format!("text not compared (KNOWN_TEXT_GAPS): {why}"))
                    .or_default() += 1;
            }
            let mut grammars = vec![format.as_str()];
            match auto_sees(&format, &turn.text) {
                Ok(()) => grammars.push("auto"),
                Err(why) => {
                    *tally
                        .skipped
                        .entry(format!("auto not run (format only): {why}"))
                        .or_default() += 1;
                }
            }
            for g in grammars {
                for one_byte in [false, true] {
                    let checked = parse(g, &turn, tools, one_byte)
                        .and_then(|r| check(&r, &conv, text_gap.is_some(), as_reasoning.is_some()));
                    if let Err(e) = checked {
                        let chunks = if one_byte { "1-byte chunks" } else { "whole" };
                        failures.push(format!(
                            "{file} [{cid}] format {g}, {chunks} (turn cut by {method}):\n  \
                             turn: {:?}\n  {e}",
                            turn.text
                        ));
                    }
                }
            }
        }
    }

    print_tallies(&tallies, &not_built);
    assert!(
        tallies.values().any(|t| t.checked > 0) || tallies.is_empty() && !not_built.is_empty(),
        "no template turn was checked"
    );
    assert!(
        failures.is_empty(),
        "{} template checks failed:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

// ---------------------------------------------------------------------------
// Rendering against the templates, byte for byte.

/// Templates whose every checked turn `Format::render` reproduces byte for
/// byte (from the conversation's content and calls, with the render
/// options of [`template_options`] for those it names): they must keep
/// matching.
const RENDERS_BYTE_FOR_BYTE: &[&str] = &[
    "CohereForAI-c4ai-command-r-plus-tool_use.jinja",
    "Apertus-8B-Instruct.jinja",
    "Bielik-11B-v3.0-Instruct.jinja",
    "ByteDance-Seed-OSS.jinja",
    "GLM-4.6.jinja",
    "GLM-4.7-Flash.jinja",
    "GigaChat3-10B-A1.8B.jinja",
    "Kimi-K2-Instruct.jinja",
    "Kimi-K2-Thinking.jinja",
    "MiMo-VL.jinja",
    "MiniMax-M1.jinja",
    "MiniMax-M2.jinja",
    "Mistral-Small-3.2-24B-Instruct-2506.jinja",
    "NVIDIA-Nemotron-3-Nano-30B-A3B-BF16.jinja",
    "NousResearch-Hermes-2-Pro-Llama-3-8B-tool_use.jinja",
    "Qwen-QwQ-32B.jinja",
    "Qwen-Qwen2.5-7B-Instruct.jinja",
    "Qwen-Qwen3-0.6B.jinja",
    "Qwen3-Coder.jinja",
    "Qwen3.5-4B.jinja",
    "deepseek-ai-DeepSeek-V3.2.jinja",
    "ibm-granite-granite-4.0.jinja",
    "ibm-granite-granite-4.1.jinja",
    "meta-llama-Llama-3.1-8B-Instruct.jinja",
    "meta-llama-Llama-3.2-3B-Instruct.jinja",
    "mistralai-Mistral-Nemo-Instruct-2407.jinja",
    "moonshotai-Kimi-K2.jinja",
    "tool_chat_template_functiongemma.jinja",
    "tool_chat_template_granite.jinja",
    "tool_chat_template_hermes.jinja",
    "tool_chat_template_hunyuan_a13b.jinja",
    "tool_chat_template_internlm2_tool.jinja",
    "tool_chat_template_llama3.1_json.jinja",
    "tool_chat_template_llama3.2_json.jinja",
    "tool_chat_template_qwen3coder.jinja",
    "tool_chat_template_xlam_llama.jinja",
    "tool_chat_template_xlam_qwen.jinja",
];

/// Templates that frame a call turn otherwise than most templates of
/// their format, and the render options that say how.
fn template_options(file: &str) -> Option<toolscan::render::RenderOptions> {
    let o =
        |before: &str, text_sep: &str, lead: &str, tail: &str| toolscan::render::RenderOptions {
            before: Some(before.into()),
            text_sep: Some(text_sep.into()),
            lead: Some(lead.into()),
            tail: Some(tail.into()),
        };
    Some(match file {
        "Kimi-K2-Thinking.jinja" => o("<think></think>", "", "", ""),
        "Bielik-11B-v3.0-Instruct.jinja" => o("", "\n", "\n", ""),
        "NVIDIA-Nemotron-3-Nano-30B-A3B-BF16.jinja" => o("</think>", "\n", "\n", "\n"),
        "Qwen3.5-4B.jinja" => o("\n</think>\n\n", "\n\n", "", ""),
        "stepfun-ai-Step-3.5-Flash.jinja" => o("\n</think>\n", "", "", ""),
        // Llama 3's templates end the call without Llama 4's newline.
        "meta-llama-Llama-3.1-8B-Instruct.jinja"
        | "meta-llama-Llama-3.2-3B-Instruct.jinja"
        | "tool_chat_template_llama3.1_json.jinja"
        | "tool_chat_template_llama3.2_json.jinja" => o("", "", "", ""),
        _ => return None,
    })
}

/// Renders each checked conversation's assistant message — the content and
/// the calls the template was given, with the conversation's tools — with
/// `Format::render`, once per format, and compares it with the turn each
/// template of that format writes. Prints, per template, how many of its
/// turns the rendering equals byte for byte (and the first difference);
/// then, per format and overall, how many renderings equal the turn of
/// *some* template of the format for the same conversation (templates of
/// one format disagree, so no rendering can equal all of them), and how
/// many of the templates' turns the rendering equals.
#[test]
fn rendering_reproduces_the_templates_turns() {
    let Some(rows) = template_rows("rendering not compared") else {
        return;
    };
    let reg = Registry::builtin();
    let mut env = environment();
    // (template, format) -> (matched, compared, first difference)
    let mut tally: BTreeMap<(String, String), (usize, usize, Option<String>)> = BTreeMap::new();
    // (format, conversation) -> (the rendering, or why it was refused;
    // the templates' turns)
    type Group = (Result<String, String>, Vec<String>);
    let mut groups: BTreeMap<(String, String), Group> = BTreeMap::new();
    for (file, format, f, tokens) in usable_templates(rows, &reg, &mut env) {
        for conv in Conv::all() {
            let tools_text = conv.set.tools();
            let rendered = (|| -> Result<(String, String, String), Error> {
                Ok((
                    render(&env, &file, tokens, tools_text, conv.prompt(), true)?,
                    render(&env, &file, tokens, tools_text, conv.prompt(), false)?,
                    render(&env, &file, tokens, tools_text, conv.messages(), false)?,
                ))
            })();
            let Ok((p, p0, full)) = rendered else {
                continue;
            };
            let Ok(turn) = cut_turn(&format, &p, &p0, &full) else {
                continue;
            };
            // A template handed arguments as a JSON string writes that
            // string (`"arguments": "{\"city\": …}"`), which no model
            // writes for an object: those turns are not compared.
            if conv.args_string
                || skip_reason(&conv, &turn).is_some()
                || lossy_render(&file, &conv).is_some()
                || KNOWN_GAPS
                    .iter()
                    .any(|(f, c, _)| *f == file && conv.id().contains(c))
            {
                continue;
            }
            let tools = Tools::from_json_str(tools_text).expect("tools");
            let calls: Vec<toolscan::Call> = conv
                .calls()
                .iter()
                .map(|(id, name, args)| toolscan::Call {
                    name: name.to_string(),
                    arguments: toolscan::Arguments::new(args.to_string()).expect("JSON"),
                    id: Some(id.to_string()),
                })
                .collect();
            let group = groups
                .entry((format.clone(), conv.id()))
                .or_insert_with(|| {
                    let out = f
                        .render(conv.text(), &calls, Some(&tools))
                        .map_err(|e| e.to_string());
                    (out, Vec::new())
                });
            group.1.push(turn.text.clone());
            // A template whose framing is not the format's default is
            // compared with the rendering under its render options.
            let own = template_options(&file).map(|o| {
                f.render_with(conv.text(), &calls, Some(&tools), &o)
                    .map_err(|e| e.to_string())
            });
            let own = own.as_ref().unwrap_or(&group.0);
            if std::env::var_os("TOOLSCAN_RENDER_DUMP").is_some() {
                eprintln!(
                    "DUMP {file} [{format}] [{}]\n  template {:?}\n  ours     {:?}",
                    conv.id(),
                    turn.text,
                    group.0
                );
            }
            let entry = tally.entry((file.clone(), format.clone())).or_default();
            entry.1 += 1;
            match own {
                Ok(out) if *out == turn.text => entry.0 += 1,
                Ok(out) => {
                    entry.2.get_or_insert_with(|| {
                        format!("[{}] {}", conv.id(), first_difference(&turn.text, out))
                    });
                }
                Err(e) => {
                    entry.2.get_or_insert_with(|| {
                        format!(
                            "[{}] refused: {e}\n        template {:?}",
                            conv.id(),
                            turn.text
                        )
                    });
                }
            }
        }
    }
    let mut failures = Vec::new();
    eprintln!("rendering compared with each template's turns (byte for byte):");
    for ((file, format), (matched, compared, diff)) in &tally {
        eprintln!("  {file} [{format}]: {matched}/{compared}");
        if let Some(d) = diff {
            eprintln!("      first difference {d}");
        }
        if RENDERS_BYTE_FOR_BYTE.contains(&file.as_str()) && matched != compared {
            failures.push(format!(
                "{file}: {matched}/{compared} match; {}",
                diff.as_deref().unwrap_or("")
            ));
        }
    }
    // format -> (renderings equal to some template's turn, renderings,
    // templates' turns equal to the rendering, templates' turns)
    let mut per_format: BTreeMap<&str, [usize; 4]> = BTreeMap::new();
    for ((format, _), (out, turns)) in &groups {
        let e = per_format.entry(format).or_default();
        let equal = turns
            .iter()
            .filter(|t| out.as_ref().is_ok_and(|o| o == *t))
            .count();
        e[0] += usize::from(equal > 0);
        e[1] += 1;
        e[2] += equal;
        e[3] += turns.len();
    }
    let share = |a: usize, b: usize| 100.0 * a as f64 / b.max(1) as f64;
    eprintln!("per format: renderings equal to some template's turn; templates' turns equal:");
    let mut all = [0usize; 4];
    for (format, e) in &per_format {
        eprintln!(
            "  {format}: {}/{} ({:.0} %); {}/{} ({:.0} %)",
            e[0],
            e[1],
            share(e[0], e[1]),
            e[2],
            e[3],
            share(e[2], e[3])
        );
        for (a, b) in all.iter_mut().zip(e) {
            *a += b;
        }
    }
    eprintln!(
        "overall: {}/{} ({:.1} %) renderings equal to some template's turn; {}/{} ({:.1} %) templates' turns",
        all[0],
        all[1],
        share(all[0], all[1]),
        all[2],
        all[3],
        share(all[2], all[3])
    );
    let (own, turns) = tally
        .values()
        .fold((0, 0), |(a, b), (m, c, _)| (a + m, b + c));
    eprintln!(
        "each template's own turns (with its render options): {own}/{turns} ({:.1} %)",
        share(own, turns)
    );
    assert!(
        failures.is_empty(),
        "renders that no longer match:\n{}",
        failures.join("\n")
    );
}

// ---------------------------------------------------------------------------
// Tool results against the templates, byte for byte.

/// Templates whose tool turns `Format::render_tool_results` reproduces
/// byte for byte in every conversation compared: they must keep matching.
/// The others differ for reasons of the template (printed with the first
/// difference): a turn of the results' own that no plain message opens
/// (GLM's `<|observation|>`, MiniMax-M2's `]~b]tool`, Hermes 2 Pro's
/// `<|im_start|>tool`, DeepSeek's outputs right after the assistant's
/// turn, Kimi K2's `<|im_system|>tool`: the same text in a `user` turn);
/// templates of one format that disagree (Granite 4 and Reka against
/// Qwen's newlines, Bielik's `<|function_output|>`, DeepSeek V3.2's
/// `<function_results>` against V4's `<tool_result>`, Devstral's
/// `[TOOL_RESULTS]` without the id, vLLM's Mistral templates' space);
/// Mistral's templates refuse a user message after a call turn (they
/// check that user and assistant alternate, leaving calls out); Kimi K2's
/// later templates write `functions.NAME:INDEX` for the id, whatever the
/// call's id was; Step-3.5 renders the previous assistant turn otherwise
/// when a user message follows it.
const RESULTS_BYTE_FOR_BYTE: &[&str] = &[
    "MiMo-VL.jinja",
    "MiniMax-M1.jinja",
    "NVIDIA-Nemotron-3-Nano-30B-A3B-BF16.jinja",
    "Qwen-QwQ-32B.jinja",
    "Qwen-Qwen2.5-7B-Instruct.jinja",
    "Qwen-Qwen3-0.6B.jinja",
    "Qwen3-Coder.jinja",
    "Qwen3.5-4B.jinja",
    "deepseek-ai-DeepSeek-V4-Flash-0731.jinja",
    "meetkai-functionary-medium-v3.1.jinja",
    "meta-llama-Llama-3.1-8B-Instruct.jinja",
    "meta-llama-Llama-3.2-3B-Instruct.jinja",
    "tool_chat_template_granite.jinja",
    "tool_chat_template_llama3.1_json.jinja",
    "tool_chat_template_llama3.2_json.jinja",
    "tool_chat_template_llama4_json.jinja",
    "tool_chat_template_llama4_pythonic.jinja",
    "tool_chat_template_qwen3coder.jinja",
    "tool_chat_template_xlam_llama.jinja",
];

/// How a template's tool turn compares with the format's tool results.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum ResultsMatch {
    /// The template given the format's messages (its role, its text)
    /// writes exactly what it writes for the `tool` messages.
    Exact,
    /// Each message's text is in the template's tool turn as written, but
    /// the template frames it otherwise than a message of that role.
    TextOnly,
    /// The text differs.
    Differs,
    /// The format says nothing of tool results.
    NoNotation,
}

/// Per template: conversations by how they compare, and the first
/// difference.
type ResultsTally = (BTreeMap<ResultsMatch, usize>, Option<String>);

/// The first place `a` and `b` differ, with some bytes either side.
fn first_difference(a: &str, b: &str) -> String {
    let at = a
        .char_indices()
        .zip(b.chars())
        .find(|((_, x), y)| x != y)
        .map(|((i, _), _)| i)
        .unwrap_or(a.len().min(b.len()));
    let from = a[..at]
        .char_indices()
        .rev()
        .nth(40)
        .map(|(i, _)| i)
        .unwrap_or(0);
    let end = |s: &str| {
        s[at.min(s.len())..]
            .char_indices()
            .nth(80)
            .map(|(i, _)| at + i)
            .unwrap_or(s.len())
    };
    format!(
        "template {:?}\n        ours     {:?}",
        &a[from..end(a)],
        &b[from.min(b.len())..end(b)]
    )
}

/// Renders each conversation with tool results twice: as the template
/// writes the `tool` messages, and with those messages replaced by what
/// `Format::render_tool_results` gives (messages of its role holding its
/// text). The two must be the same bytes, from the tool turn to the end
/// (the generation prompt after it included). Prints per template and per
/// format how many conversations match exactly, how many hold the text but
/// frame it otherwise (a role no plain message can take), and the first
/// difference.
#[test]
fn tool_results_render_as_the_templates_write_them() {
    let Some(rows) = template_rows("tool results not compared") else {
        return;
    };
    let reg = Registry::builtin();
    let mut env = environment();
    // (template, format) -> (counts by kind, first difference)
    let mut tally: BTreeMap<(String, String), ResultsTally> = BTreeMap::new();
    for (file, format, f, tokens) in usable_templates(rows, &reg, &mut env) {
        for conv in Conv::all() {
            // (Arguments as a string too: the results do not depend on
            // them, and some templates render only those.)
            if !conv.tool_result {
                continue;
            }
            let tools_text = conv.set.tools();
            let Ok(full) = render(&env, &file, tokens, tools_text, conv.messages(), true) else {
                continue;
            };
            let entry = tally.entry((file.clone(), format.clone())).or_default();
            let results: Vec<toolscan::ToolResult> = conv
                .calls()
                .iter()
                .zip(conv.set.results())
                .map(|((id, name, _), content)| {
                    toolscan::ToolResult::new(*name, *content).with_id(*id)
                })
                .collect();
            let ours = match f.render_tool_results(&results) {
                Ok(r) => r,
                Err(_) => {
                    *entry.0.entry(ResultsMatch::NoNotation).or_default() += 1;
                    continue;
                }
            };
            let mut messages = conv.messages();
            messages.truncate(messages.len() - results.len());
            for m in &ours.messages {
                messages.push(obj(vec![
                    ("role", ours.role.as_str().into()),
                    ("content", m.as_str().into()),
                ]));
            }
            let kind = match render(&env, &file, tokens, tools_text, messages, true) {
                Ok(subst) if subst == full => ResultsMatch::Exact,
                other => {
                    let text_only = ours.messages.iter().all(|m| full.contains(m.as_str()));
                    if entry.1.is_none() {
                        entry.1 = Some(match &other {
                            Ok(subst) => {
                                format!("[{}] {}", conv.id(), first_difference(&full, subst))
                            }
                            Err(e) => format!("[{}] the template raises for ours: {e}", conv.id()),
                        });
                    }
                    if text_only {
                        ResultsMatch::TextOnly
                    } else {
                        ResultsMatch::Differs
                    }
                }
            };
            *entry.0.entry(kind).or_default() += 1;
        }
    }
    let mut per_format: BTreeMap<&str, BTreeMap<ResultsMatch, usize>> = BTreeMap::new();
    let mut failures = Vec::new();
    let show = |counts: &BTreeMap<ResultsMatch, usize>| {
        let total: usize = counts.values().sum();
        let n = |k| counts.get(&k).copied().unwrap_or(0);
        if n(ResultsMatch::NoNotation) == total {
            return format!("no notation ({total})");
        }
        format!(
            "exact {}/{total}, text only {}, differs {}",
            n(ResultsMatch::Exact),
            n(ResultsMatch::TextOnly),
            n(ResultsMatch::Differs)
        )
    };
    eprintln!("tool results compared with the templates' tool turns (byte for byte):");
    for ((file, format), (counts, diff)) in &tally {
        let e = per_format.entry(format).or_default();
        for (k, n) in counts {
            *e.entry(*k).or_default() += n;
        }
        eprintln!("  {file} [{format}]: {}", show(counts));
        if let Some(d) = diff {
            eprintln!("      first difference {d}");
        }
        let total: usize = counts.values().sum();
        if RESULTS_BYTE_FOR_BYTE.contains(&file.as_str())
            && counts.get(&ResultsMatch::Exact).copied().unwrap_or(0) != total
        {
            failures.push(format!(
                "{file}: {}; {}",
                show(counts),
                diff.as_deref().unwrap_or("")
            ));
        }
    }
    eprintln!("per format:");
    for (format, counts) in &per_format {
        eprintln!("  {format}: {}", show(counts));
    }
    assert!(
        failures.is_empty(),
        "tool results that no longer match:\n{}",
        failures.join("\n")
    );
}
