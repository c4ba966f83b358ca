"""Text tool calls of an ``openai`` chat-completions answer as ``tool_calls``.

A server that sends a model's output as plain text (its tool calls written
in the model's own markup inside ``delta.content``) is read the way a
server with a tool parser would send it::

    from openai import OpenAI
    import toolscan.openai

    client = OpenAI(base_url="http://localhost:8000/v1", api_key="-")
    stream = client.chat.completions.create(model=..., messages=..., stream=True)
    for chunk in toolscan.openai.wrap(stream, format="hermes"):
        ...  # chunk.choices[0].delta.content: text only; .tool_calls: the calls

- ``wrap(stream)`` takes an iterator of ``ChatCompletionChunk`` objects (or
  of dicts of the same shape) and yields chunks of the same kind; given an
  async iterator (``AsyncStream``) it returns an async iterator
  (``wrap_async`` is that one explicitly);
- ``wrap_response(completion)`` rewrites a whole ``ChatCompletion`` (or
  dict).

The rewrite is the one ``toolscan sse`` makes on SSE streams: each choice
(by its ``index``) has its own parser fed its ``delta.content``. Text
stays ``content``; reasoning (``reasoning=True``) goes to
``reasoning_content``; a call becomes ``delta.tool_calls`` entries, first
``{index, id, type: "function", function: {name, arguments}}`` then
``{index, function: {arguments}}``, one entry per call per chunk; the
upstream's own ``tool_calls`` are passed on (renumbered only if a text call
took their index); ``finish_reason`` becomes ``"tool_calls"`` when a call
completed (an upstream ``"length"`` is kept), in a chunk of its own after
the calls' last entries (the ``openai`` stream helpers finish a call's
arguments when a later chunk comes). Text held back (a possible marker) is
sent in the chunk that releases it; a chunk left with nothing is not sent;
what a choice still holds when the stream ends without a ``finish_reason``
(or at the usage chunk) comes in one extra chunk. A chunk the rewrite does
not change is yielded as it came (the same object).

The wrapped stream is closed when the wrapper ends: at the end of the
stream, or early, when the wrapper is closed (``close()``, ``aclose()``
for the async one, or a ``for`` loop left with ``break`` once the wrapper
is dropped) — so the HTTP response of an ``openai`` stream is released as
soon as its consumer stops reading.

The options are ``toolscan.Parser``'s (``tools``, ``reasoning``,
``model``, ``check_calls``, limits, ``ids``/``seed``…), plus
``complete_at_stop`` (default ``True``: a choice the server ended with
``finish_reason: "stop"`` completes a call whose closing markup a stop
sequence cut). With ``check_calls="reject"`` a call's entries are sent only
once it completed and passed the check.
"""

from __future__ import annotations

import copy
import inspect
from typing import (
    Any,
    AsyncGenerator,
    AsyncIterable,
    Dict,
    Generator,
    Iterable,
    List,
    Optional,
    Set,
    TypeVar,
    Union,
    overload,
)

from ._native import Diagnostic, Parser, Reasoning, Text, ToolCallArgs, ToolCallEnd, ToolCallStart

__all__ = ["wrap", "wrap_async", "wrap_response"]

T = TypeVar("T")

#: Top-level fields of a chunk that are the same in every chunk of an
#: answer (or carry no content): a chunk with nothing else is not sent.
_ENVELOPE = ("id", "object", "created", "model", "system_fingerprint", "service_tier", "obfuscation")
#: The diagnostics of the schema check (they do not end a held call).
_SCHEMA_KINDS = frozenset({"unknown_tool", "missing_parameter", "wrong_type", "not_in_enum"})
_SHIFT = 0x9E3779B97F4A7C15
_MASK = (1 << 64) - 1


class _Config:
    """The format and parser options; a parser per choice."""

    def __init__(self, format: Optional[str], options: Dict[str, Any]) -> None:
        options = dict(options)
        self.complete_at_stop = bool(options.pop("complete_at_stop", True))
        self.format = format
        self.options = options
        self.reject = options.get("check_calls") == "reject"
        # Raises OptionsError / UnknownFormatError now, not at the first chunk.
        self.parser(0)

    def parser(self, index: int) -> Parser:
        options = dict(self.options)
        ids = options.get("ids")
        if ids in ("seeded", "mistral") or (ids is None and options.get("seed") is not None):
            # Choices never share an id; choice 0 keeps the seed as given.
            seed = options.get("seed") or 0
            options["seed"] = (seed + index * _SHIFT) & _MASK
        return Parser(self.format, complete_at_stop=self.complete_at_stop, **options)


class _Indices:
    """The output indices of a choice's calls, native and from text."""

    def __init__(self) -> None:
        self._text: Dict[int, int] = {}
        self._native: Dict[int, int] = {}
        self._used: Set[int] = set()
        self._next = 0

    def text(self, index: int) -> int:
        i = self._text.get(index)
        if i is None:
            i = self._take_next()
            self._text[index] = i
        return i

    def native(self, index: int) -> int:
        i = self._native.get(index)
        if i is not None:
            return i
        if index in self._used:
            out = self._take_next()
        else:
            self._used.add(index)
            self._next = max(self._next, index + 1)
            out = index
        self._native[index] = out
        return out

    def _take_next(self) -> int:
        i = self._next
        self._used.add(i)
        self._next = i + 1
        return i


class _Pieces:
    """What one feed (or finish) of a choice produced: the pieces of a delta."""

    __slots__ = ("text", "reasoning", "entries", "calls", "done")

    def __init__(self) -> None:
        self.text = ""
        self.reasoning = ""
        self.entries: List[Dict[str, Any]] = []
        self.calls: List[ToolCallEnd] = []
        self.done: Optional[str] = None

    def has_calls_or_reasoning(self) -> bool:
        return bool(self.entries) or bool(self.reasoning)


class _Choice:
    """One choice: its parser, its calls' indices, what it completed."""

    def __init__(self, config: _Config, index: int) -> None:
        self.parser = config.parser(index)
        self.indices = _Indices()
        self.completed = 0
        self.finished = False
        self.holding = config.reject
        self.held: Optional[List[Any]] = None

    def feed(self, content: str, pieces: _Pieces) -> None:
        for e in self.parser.feed(content):
            self._event(e, pieces)

    def finish(self, upstream: Optional[str], pieces: _Pieces) -> None:
        self.finished = True
        for e in self.parser.finish(at_stop=upstream == "stop"):
            self._event(e, pieces)

    def _event(self, e: Any, p: _Pieces) -> None:
        if self.holding:
            # A call's entries wait for its end; anything but its schema
            # diagnostics before then means it failed: they are dropped.
            if isinstance(e, ToolCallStart):
                self.held = [e.index, e.id, e.name, ""]
                return
            if isinstance(e, ToolCallArgs):
                if self.held is not None and self.held[0] == e.index:
                    self.held[3] += e.delta
                    return
            elif isinstance(e, ToolCallEnd):
                held, self.held = self.held, None
                if held is not None and held[0] == e.index:
                    p.entries.append(_start(self.indices.text(held[0]), held[1], held[2], held[3]))
            elif isinstance(e, Diagnostic) and e.kind in _SCHEMA_KINDS:
                pass
            else:
                self.held = None
        if isinstance(e, Text):
            p.text += e.delta
        elif isinstance(e, ToolCallArgs):
            index = self.indices.text(e.index)
            if p.entries and p.entries[-1]["index"] == index:
                p.entries[-1]["function"]["arguments"] += e.delta
            else:
                p.entries.append({"index": index, "function": {"arguments": e.delta}})
        elif isinstance(e, ToolCallStart):
            p.entries.append(_start(self.indices.text(e.index), e.id, e.name, ""))
        elif isinstance(e, ToolCallEnd):
            self.completed += 1
            p.calls.append(e)
        elif isinstance(e, Reasoning):
            p.reasoning += e.delta
        elif e.type == "done":
            p.done = e.finish_reason


def _start(index: int, id: str, name: str, arguments: str) -> Dict[str, Any]:
    return {"index": index, "id": id, "type": "function", "function": {"name": name, "arguments": arguments}}


def _finish_reason(upstream: str, completed: int) -> str:
    """``"length"`` is kept; else ``"tool_calls"`` when a call completed."""
    return "tool_calls" if upstream != "length" and completed > 0 else upstream


def _as_dict(obj: Any) -> Optional[Dict[str, Any]]:
    """A fresh dict of a chunk or completion (a pydantic model or a dict)."""
    if isinstance(obj, dict):
        return copy.deepcopy(obj)
    dump = getattr(obj, "model_dump", None)
    if dump is not None:
        d: Dict[str, Any] = dump(by_alias=True, exclude_unset=True)
        return d
    return None


def _like(template: Any, d: Dict[str, Any]) -> Any:
    """``d`` as an object of the same kind as ``template``."""
    if isinstance(template, dict):
        return d
    return type(template).model_validate(d)


def _apply(choice: Dict[str, Any], original: Optional[str], pieces: _Pieces) -> bool:
    """Writes the pieces into the choice's delta; whether it changed."""
    text_changed = original != pieces.text if original is not None else bool(pieces.text)
    if not text_changed and not pieces.has_calls_or_reasoning():
        return False
    delta = choice.get("delta")
    if not isinstance(delta, dict):
        delta = choice["delta"] = {}
    if original is not None or pieces.text:
        delta["content"] = pieces.text
    if pieces.reasoning:
        before = delta.get("reasoning_content")
        delta["reasoning_content"] = (before if isinstance(before, str) else "") + pieces.reasoning
    if pieces.entries:
        calls = delta.get("tool_calls")
        if isinstance(calls, list):
            calls.extend(pieces.entries)
        else:
            delta["tool_calls"] = pieces.entries
    return True


def _rewrite_choice(state: _Choice, choice: Dict[str, Any]) -> bool:
    """One choice of a chunk: its content, native call indices, finish reason."""
    if state.finished:
        return False
    pieces = _Pieces()
    changed = False
    original = None
    delta = choice.get("delta")
    if isinstance(delta, dict):
        content = delta.get("content")
        if isinstance(content, str):
            state.feed(content, pieces)
            original = content
        calls = delta.get("tool_calls")
        if isinstance(calls, list):
            for call in calls:
                if isinstance(call, dict) and isinstance(call.get("index"), int):
                    upstream = call["index"]
                    index = state.indices.native(upstream)
                    if index != upstream:
                        call["index"] = index
                        changed = True
    upstream_reason = choice.get("finish_reason")
    if isinstance(upstream_reason, str):
        state.finish(upstream_reason, pieces)
        reason = _finish_reason(upstream_reason, state.completed)
        if reason != upstream_reason:
            choice["finish_reason"] = reason
            changed = True
    return _apply(choice, original, pieces) or changed


def _choice_is_empty(choice: Any) -> bool:
    if not isinstance(choice, dict):
        return False
    for k, v in choice.items():
        if k == "index":
            continue
        if k == "delta":
            if v is None:
                continue
            if not isinstance(v, dict):
                return False
            for x in v.values():
                if x is None or (isinstance(x, (str, list)) and not x):
                    continue
                return False
        elif v is not None:
            return False
    return True


def _carries_nothing(chunk: Dict[str, Any]) -> bool:
    for k, v in chunk.items():
        if k == "choices":
            if not isinstance(v, list) or not v or not all(_choice_is_empty(c) for c in v):
                return False
        elif k not in _ENVELOPE and v is not None:
            return False
    return True


def _split_finish(chunk: Dict[str, Any]) -> Optional[Dict[str, Any]]:
    """Moves the ``finish_reason`` of each choice that carries calls into a
    chunk of its own, to send after this one."""
    ends = []
    for choice in chunk.get("choices") or []:
        if not isinstance(choice, dict):
            continue
        delta = choice.get("delta")
        has_calls = isinstance(delta, dict) and bool(delta.get("tool_calls"))
        reason = choice.get("finish_reason")
        if has_calls and reason is not None:
            choice["finish_reason"] = None
            ends.append({"index": choice.get("index", 0), "delta": {}, "finish_reason": reason})
    if not ends:
        return None
    end = {k: v for k, v in chunk.items() if k in _ENVELOPE}
    end["choices"] = ends
    return end


class _Rewriter:
    """The state of one streamed answer's rewrite."""

    def __init__(self, config: _Config) -> None:
        self.config = config
        self.choices: Dict[int, _Choice] = {}
        self.envelope: Dict[str, Any] = {}
        self.template: Any = None

    def chunk(self, obj: Any) -> List[Any]:
        d = _as_dict(obj)
        if d is None:
            return [obj]
        choices = d.get("choices")
        if not isinstance(choices, list):
            return [obj]
        if not choices:
            # The usage chunk (`stream_options.include_usage`): every choice
            # has ended.
            out = self.end() if d.get("usage") is not None else []
            out.append(obj)
            return out
        self.template = obj
        self.envelope = {k: (None if k == "choices" else v) for k, v in d.items() if k != "usage"}
        changed = False
        for pos, choice in enumerate(choices):
            if not isinstance(choice, dict):
                continue
            index = choice.get("index")
            if not isinstance(index, int):
                index = pos
            state = self.choices.get(index)
            if state is None:
                state = self.choices[index] = _Choice(self.config, index)
            changed = _rewrite_choice(state, choice) or changed
        if not changed:
            return [obj]
        if _carries_nothing(d):
            return []
        end = _split_finish(d)
        out = [_like(obj, d)]
        if end is not None:
            out.append(_like(obj, end))
        return out

    def end(self) -> List[Any]:
        """Ends every open choice; what they still held, in one chunk."""
        choices = []
        for index in sorted(self.choices):
            state = self.choices[index]
            if state.finished:
                continue
            pieces = _Pieces()
            state.finish(None, pieces)
            choice: Dict[str, Any] = {"index": index, "delta": {}}
            reason = "tool_calls" if pieces.done == "tool_calls" else None
            changed = _apply(choice, None, pieces) or reason is not None
            choice["finish_reason"] = reason
            if changed:
                choices.append(choice)
        if not choices or self.template is None:
            return []
        chunk = dict(self.envelope)
        chunk["choices"] = choices
        end = _split_finish(chunk)
        out = [_like(self.template, chunk)]
        if end is not None:
            out.append(_like(self.template, end))
        return out


def _iterate(stream: Iterable[T], rewriter: _Rewriter) -> Generator[T, None, None]:
    try:
        for chunk in stream:
            yield from rewriter.chunk(chunk)
        yield from rewriter.end()
    finally:
        # Closed early (the consumer broke off, or called ``close()``) or
        # not: the upstream's response is released now, not when the
        # garbage collector finds it.
        close = getattr(stream, "close", None)
        if callable(close):
            close()


async def _iterate_async(stream: AsyncIterable[T], rewriter: _Rewriter) -> AsyncGenerator[T, None]:
    try:
        async for chunk in stream:
            for out in rewriter.chunk(chunk):
                yield out
        for out in rewriter.end():
            yield out
    finally:
        # ``AsyncStream.close`` and an async generator's ``aclose`` are
        # coroutines.
        close = getattr(stream, "aclose", None) or getattr(stream, "close", None)
        if callable(close):
            closing = close()
            if inspect.isawaitable(closing):
                await closing


@overload
def wrap(stream: AsyncIterable[T], format: Optional[str] = "auto", **options: Any) -> AsyncGenerator[T, None]: ...
@overload
def wrap(stream: Iterable[T], format: Optional[str] = "auto", **options: Any) -> Generator[T, None, None]: ...
def wrap(
    stream: Union[Iterable[T], AsyncIterable[T]], format: Optional[str] = "auto", **options: Any
) -> Union[Generator[T, None, None], AsyncGenerator[T, None]]:
    """Rewrites a chat-completions stream (``ChatCompletionChunk`` objects or
    dicts): text tool calls become ``delta.tool_calls``.

    An async iterable (``AsyncStream``) gives an async iterator, as
    ``wrap_async``. ``format`` and ``options`` are ``toolscan.Parser``'s
    (``format`` a format name or ``"auto"``), plus ``complete_at_stop``
    (default ``True``). Bad options raise at once (``OptionsError``,
    ``UnknownFormatError``).
    """
    config = _Config(format, options)
    if hasattr(stream, "__aiter__") and not hasattr(stream, "__iter__"):
        return _iterate_async(stream, _Rewriter(config))
    return _iterate(stream, _Rewriter(config))  # type: ignore[arg-type]


def wrap_async(stream: AsyncIterable[T], format: Optional[str] = "auto", **options: Any) -> AsyncGenerator[T, None]:
    """``wrap`` for an async iterable of chunks (``AsyncStream``)."""
    return _iterate_async(stream, _Rewriter(_Config(format, options)))


def wrap_response(completion: T, format: Optional[str] = "auto", **options: Any) -> T:
    """Rewrites a whole ``ChatCompletion`` (or dict): each choice's
    ``message.content`` is parsed; its calls become ``message.tool_calls``
    (after any the server sent), the content the remaining text (``None``
    if that is empty and there are calls), reasoning
    ``message.reasoning_content``, and ``finish_reason`` ``"tool_calls"``
    when calls were found (a ``"length"`` is kept). A completion without
    text calls is returned as it came (the same object).
    """
    config = _Config(format, options)
    d = _as_dict(completion)
    if d is None or not isinstance(d.get("choices"), list):
        return completion
    changed = False
    for pos, choice in enumerate(d["choices"]):
        if isinstance(choice, dict):
            changed = _rewrite_message(choice, pos, config) or changed
    return _like(completion, d) if changed else completion


def _rewrite_message(choice: Dict[str, Any], pos: int, config: _Config) -> bool:
    index = choice.get("index")
    if not isinstance(index, int):
        index = pos
    upstream = choice.get("finish_reason")
    upstream = upstream if isinstance(upstream, str) else None
    message = choice.get("message")
    if not isinstance(message, dict) or not isinstance(message.get("content"), str):
        return False
    content = message["content"]
    state = _Choice(config, index)
    pieces = _Pieces()
    state.feed(content, pieces)
    state.finish(upstream, pieces)
    if not pieces.calls and not pieces.reasoning and pieces.text == content:
        return False
    message["content"] = None if not pieces.text and pieces.calls else pieces.text
    if pieces.reasoning:
        before = message.get("reasoning_content")
        message["reasoning_content"] = (before if isinstance(before, str) else "") + pieces.reasoning
    if pieces.calls:
        calls = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in pieces.calls
        ]
        native = message.get("tool_calls")
        if isinstance(native, list):
            native.extend(calls)
        else:
            message["tool_calls"] = calls
        choice["finish_reason"] = _finish_reason(upstream, state.completed) if upstream is not None else "tool_calls"
    return True
