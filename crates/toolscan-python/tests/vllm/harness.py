"""Drive a vLLM tool parser the way vLLM's serving layer does, and fold what
it sends into what a client ends up with.

Two drivers:

- `serve` goes through vLLM's own chat streaming loop: the composed parser
  of `ParserManager.get_parser` (as `vllm serve --tool-call-parser NAME
  --enable-auto-tool-choice` builds it), one per request, stepped by
  vLLM's `ChatStreamProcessor` once per delta, the last step carrying the
  engine's finish reason.
- `legacy` calls the tool parser's `extract_tool_calls_streaming` with the
  previous / current / delta texts and token-id lists, as serving layers
  before vLLM's unified parser did, and then `finish_streaming()` if the
  parser has one.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest
from vllm.entrypoints.openai.chat_completion.stream_processor import ChatStreamProcessor
from vllm.parser.parser_manager import ParserManager
from vllm.tool_parsers import ToolParserManager


#: Special tokens of the formats under test: one token each, as in the models'
#: vocabularies (a delta never ends inside one).
SPECIAL_TOKENS = [
    "<tool_call>", "</tool_call>",
    "[TOOL_CALLS]", "[ARGS]", "[CALL_ID]",
    "<|python_tag|>", "<|eom_id|>", "<|eot_id|>",
    "<think>", "</think>",
    "<｜tool▁calls▁begin｜>", "<｜tool▁call▁begin｜>", "<｜tool▁sep｜>",
    "<｜tool▁call▁end｜>", "<｜tool▁calls▁end｜>",
    "<｜tool_calls_begin｜>", "<｜tool_call_begin｜>", "<｜tool_sep｜>",
    "<｜tool_call_end｜>", "<｜tool_calls_end｜>",
    "<seed:tool_call>", "</seed:tool_call>",
    "<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>",
    "<minimax:tool_call>", "</minimax:tool_call>",
    "<|tool_calls_section_begin|>", "<|tool_calls_section_end|>",
    "<|tool_call_begin|>", "<|tool_call_end|>", "<|tool_call_argument_begin|>",
    "<|tool_call|>", "<|tool_call_start|>",
    "<start_function_call>", "<end_function_call>", "<escape>",
    "<|action_start|>", "<|action_end|>", "<|plugin|>",
    "<tool_calls>", "</tool_calls>", "<function_calls>", "</function_calls>",
    "functools",
]  # fmt: skip


class Tokenizer:
    """A character-level tokenizer whose special tokens are single tokens:
    what vLLM's tool parsers ask of a tokenizer (the vocabulary, ids of the
    special tokens, decode), without a model's files."""

    def __init__(self, name_or_path: str = "test/model", specials=SPECIAL_TOKENS):
        self.name_or_path = name_or_path
        self.all_special_tokens = list(specials)
        self._vocab = {tok: i for i, tok in enumerate(specials)}
        self.all_special_ids = list(self._vocab.values())
        self._by_id = dict(enumerate(specials))

    def get_vocab(self) -> dict:
        return dict(self._vocab)

    def _id(self, piece: str) -> int:
        if piece not in self._vocab:
            self._vocab[piece] = len(self._vocab)
            self._by_id[self._vocab[piece]] = piece
        return self._vocab[piece]

    def tokenize(self, text: str) -> list[str]:
        out, i = [], 0
        while i < len(text):
            special = next((s for s in self.all_special_tokens if text.startswith(s, i)), None)
            piece = special or text[i]
            out.append(piece)
            i += len(piece)
        return out

    def encode(self, text: str, add_special_tokens: bool = False) -> list[int]:
        return [self._id(p) for p in self.tokenize(text)]

    def decode(self, ids, skip_special_tokens: bool = False) -> str:
        return "".join(self._by_id[i] for i in ids)

    def convert_ids_to_tokens(self, ids):
        return [self._by_id[i] for i in ids]

    def convert_tokens_to_ids(self, tokens):
        if isinstance(tokens, str):
            return self._vocab.get(tokens)
        return [self._vocab.get(t) for t in tokens]


WEATHER_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Current weather in a city.",
            "parameters": {
                "type": "object",
                "properties": {
                    "city": {"type": "string"},
                    "days": {"type": "integer"},
                    "unit": {"type": "string", "enum": ["c", "f"]},
                },
                "required": ["city"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "write_file",
            "parameters": {
                "type": "object",
                "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
            },
        },
    },
]


def request(tools=WEATHER_TOOLS, tool_choice="auto", **kw) -> ChatCompletionRequest:
    return ChatCompletionRequest(
        model="test/model",
        messages=[{"role": "user", "content": "hi"}],
        tools=tools,
        tool_choice=tool_choice,
        stream=True,
        **kw,
    )


def split(text: str, size, tokenizer: Tokenizer | None = None) -> list[str]:
    """`text` in deltas of about `size` characters (0: the whole text at
    once; a list: sizes in turn), never inside a special token."""
    sizes = size if isinstance(size, list) else [size]
    if sizes == [0] or not text:
        return [text]
    pieces = (tokenizer or Tokenizer()).tokenize(text)
    out, cur, k = [], "", 0
    for piece in pieces:
        cur += piece
        if len(cur) >= sizes[k % len(sizes)]:
            out.append(cur)
            cur, k = "", k + 1
    if cur:
        out.append(cur)
    return out


@dataclass
class Folded:
    """What a client assembles from the deltas of one choice."""

    content: str = ""
    calls: list[dict] = field(default_factory=list)
    finish_reason: str | None = None
    messages: int = 0

    def call_summary(self) -> list[tuple[str, object]]:
        return [(c["name"], json.loads(c["arguments"])) for c in self.calls]


def fold(messages, finish_reason=None) -> Folded:
    """Assemble deltas as a client does, checking vLLM's shape on the way: a
    call's first entry carries its new index, its id, type "function" and
    its name; later entries of that index carry only argument text."""
    out = Folded(finish_reason=finish_reason)
    by_index: dict[int, dict] = {}
    for m in messages:
        if m is None:
            continue
        out.messages += 1
        if m.content:
            out.content += m.content
        for tc in m.tool_calls or []:
            fn = tc.function
            if tc.id is not None:
                assert tc.index not in by_index, f"second start of call {tc.index}"
                assert tc.type == "function"
                assert fn is not None and fn.name, "a call starts with its name"
                call = {"index": tc.index, "id": tc.id, "name": fn.name, "arguments": ""}
                by_index[tc.index] = call
                out.calls.append(call)
            else:
                assert tc.index in by_index, f"arguments of call {tc.index} before its start"
                assert fn is None or not fn.name, "the name is sent once"
            if fn is not None and fn.arguments:
                by_index[tc.index]["arguments"] += fn.arguments
    return out


def serve(name: str, deltas: list[str], req=None, tokenizer=None, finish_reason="stop") -> Folded:
    """Stream `deltas` through vLLM's chat streaming loop with tool parser `name`."""
    req = req if req is not None else request()
    tokenizer = tokenizer if tokenizer is not None else Tokenizer()
    parser_cls = ParserManager.get_parser(tool_parser_name=name, enable_auto_tools=True)
    parser = parser_cls(tokenizer, req.tools)
    processor = ChatStreamProcessor(req, parser, enable_auto_tools=True, parser_cls=parser_cls)
    messages, reason = [], None
    for i, delta in enumerate(deltas):
        last = i == len(deltas) - 1
        step = processor.step(
            delta, tokenizer.encode(delta), finish_reason if last else None, [1, 2, 3]
        )
        messages.append(step.delta)
        if last:
            reason = step.finish_reason
    return fold(messages, reason)


def deltas_through(tool_parser, deltas: list[str], req, tokenizer) -> list:
    """One call of ``extract_tool_calls_streaming`` per delta, with the
    previous / current texts and token ids, as vLLM's serving layer makes
    them; the messages returned."""
    previous, previous_ids, messages = "", [], []
    for delta in deltas:
        ids = tokenizer.encode(delta)
        current, current_ids = previous + delta, previous_ids + ids
        messages.append(
            tool_parser.extract_tool_calls_streaming(
                previous, current, delta, previous_ids, current_ids, ids, req
            )
        )
        previous, previous_ids = current, current_ids
    return messages


def legacy(name: str, deltas: list[str], req=None, tokenizer=None) -> Folded:
    """Call the tool parser itself with the accumulated texts, one call per delta."""
    req = req if req is not None else request()
    tokenizer = tokenizer if tokenizer is not None else Tokenizer()
    tool_parser = ToolParserManager.get_tool_parser(name)(tokenizer, req.tools)
    messages = deltas_through(tool_parser, deltas, req, tokenizer)
    finish = getattr(tool_parser, "finish_streaming", None)
    if finish is not None:
        messages.append(finish())
    return fold(messages)


def whole(name: str, text: str, req=None, tokenizer=None):
    """The non-streaming path: the tool parser's `extract_tool_calls`."""
    req = req if req is not None else request()
    tokenizer = tokenizer if tokenizer is not None else Tokenizer()
    tool_parser = ToolParserManager.get_tool_parser(name)(tokenizer, req.tools)
    return tool_parser.extract_tool_calls(text, req)
