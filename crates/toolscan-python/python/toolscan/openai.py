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

The rewrite is the one ``toolscan sse`` and the proxy make on SSE streams
(the same code: the native module's ``ChunkRewriter``; this module only
turns chunk objects into JSON and back): each choice (by its ``index``)
has its own parser fed its ``delta.content``. Text stays ``content``;
reasoning (``reasoning=True``) goes to ``reasoning_content``; a call
becomes one ``delta.tool_calls`` entry ``{index, id, type: "function",
function: {name, arguments}}`` with all its arguments, in the chunk where
the call's end is confirmed; a call that breaks (malformed, cut by the
token limit) never produces an entry, its markup is ``content``. With
``stream_arguments=True`` a call's first entry comes when it starts and
``{index, function: {arguments}}`` entries as its arguments stream (a call
that then breaks has sent entries whose arguments are not JSON, and its
markup follows as ``content``). The upstream's own ``tool_calls`` are
passed on (renumbered only if a text call took their index);
``finish_reason`` becomes ``"tool_calls"`` when a call completed (an
upstream ``"length"`` is kept), in a chunk of its own after the calls' last
entries (the ``openai`` stream helpers finish a call's arguments when a
later chunk comes). Text held back (a possible marker) is
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
sequence cut) and ``stream_arguments`` (default ``False``, above). With
``check_calls="reject"`` a call is sent only once it completed and passed
the check, whatever ``stream_arguments`` says.
"""

from __future__ import annotations

import inspect
import json
from typing import (
    Any,
    AsyncGenerator,
    AsyncIterable,
    Dict,
    Generator,
    Iterable,
    List,
    Optional,
    TypeVar,
    Union,
    overload,
)

from ._native import ChunkRewriter, rewrite_body

__all__ = ["wrap", "wrap_async", "wrap_response"]

T = TypeVar("T")


def _as_json(obj: Any) -> Optional[str]:
    """The JSON text of a chunk or completion (a pydantic model or a dict);
    ``None`` for anything else, which is passed on as it came."""
    if isinstance(obj, dict):
        return json.dumps(obj, ensure_ascii=False)
    dump = getattr(obj, "model_dump_json", None)
    if dump is not None:
        text: str = dump(by_alias=True, exclude_unset=True)
        return text
    return None


def _like(template: Any, text: str) -> Any:
    """The JSON text ``text`` as an object of the same kind as ``template``."""
    if isinstance(template, dict):
        return json.loads(text)
    return type(template).model_validate_json(text)


class _Rewriter:
    """One streamed answer's rewrite: the native chunk rewrite, and the
    last chunk object (the kind of object the chunks it adds are made)."""

    def __init__(self, format: Optional[str], options: Dict[str, Any]) -> None:
        # Raises OptionsError / UnknownFormatError now, not at the first chunk.
        self.native = ChunkRewriter(format, **options)
        self.template: Any = None

    def chunk(self, obj: Any) -> List[Any]:
        text = _as_json(obj)
        if text is None:
            return [obj]
        self.template = obj
        return [obj if out is None else _like(obj, out) for out in self.native.chunk(text)]

    def end(self) -> List[Any]:
        """Ends every open choice; what they still held, in one chunk."""
        if self.template is None:
            return []
        return [_like(self.template, out) for out in self.native.end()]


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
    (default ``True``) and ``stream_arguments`` (default ``False``). Bad
    options raise at once (``OptionsError``, ``UnknownFormatError``).
    """
    rewriter = _Rewriter(format, options)
    if hasattr(stream, "__aiter__") and not hasattr(stream, "__iter__"):
        return _iterate_async(stream, rewriter)
    return _iterate(stream, rewriter)  # type: ignore[arg-type]


def wrap_async(stream: AsyncIterable[T], format: Optional[str] = "auto", **options: Any) -> AsyncGenerator[T, None]:
    """``wrap`` for an async iterable of chunks (``AsyncStream``)."""
    return _iterate_async(stream, _Rewriter(format, options))


def wrap_response(completion: T, format: Optional[str] = "auto", **options: Any) -> T:
    """Rewrites a whole ``ChatCompletion`` (or dict): each choice's
    ``message.content`` is parsed; its calls become ``message.tool_calls``
    (after any the server sent), the content the remaining text (``None``
    if that is empty and there are calls), reasoning
    ``message.reasoning_content``, and ``finish_reason`` ``"tool_calls"``
    when calls were found (a ``"length"`` is kept). A completion without
    text calls is returned as it came (the same object).
    """
    text = _as_json(completion)
    # Raises OptionsError / UnknownFormatError even for a completion that
    # is passed on.
    out = rewrite_body(text if text is not None else "{}", format, **options)
    if text is None or out is None:
        return completion
    rewritten: T = _like(completion, out)
    return rewritten
