"""Early dispatch: run each tool the moment its call closes, while the model
is still streaming the rest of its answer.

::

    import toolscan.dispatch

    def get_weather(city: str) -> dict:
        ...

    stream = client.chat.completions.create(model=..., messages=messages,
                                            tools=tools, stream=True)
    turn = toolscan.dispatch.run(stream, {"get_weather": get_weather})
    messages += turn.messages()      # the assistant message, then a ``tool`` message per call

- ``run(stream, handlers, **options)`` reads the stream to its end and
  returns an ``Outcome``: the answer's ``text`` (and ``reasoning``), its
  ``calls`` and each call's ``CallResult``, in call order;
  ``await arun(stream, handlers, **options)`` is the same under asyncio.
- ``Dispatcher(handlers, **options)`` holds the handlers and options for
  many answers: ``.run(stream)``, ``await .arun(stream)``, and
  ``.events(stream)`` / ``.aevents(stream)``, which yield the answer as it
  comes: toolscan's events (``Text``, ``ToolCallEnd``, ``Done``…) and each
  ``CallResult`` as soon as it, and every result before it, is ready.

**The stream** is an ``openai`` chat-completions stream
(``client.chat.completions.create(..., stream=True)``: a ``Stream`` or an
``AsyncStream`` of ``ChatCompletionChunk``; dicts of the same shape do as
well), or any iterable or async iterable of text chunks (``str`` or
``bytes``: a model's raw output). Text is fed to a ``toolscan.Parser``
(``format``, ``model``, ``tools`` and the other options are the Parser's;
with an ``openai`` stream, the ``model`` and ``tools`` the request sent are
used when the options do not name them), and a call is dispatched in the
chunk where the parser sees its end. A chunk's own ``delta.tool_calls``
(a server that parses calls itself) are assembled too; such a call is
dispatched when a later chunk shows it is complete: an entry of another
call (a new ``index``), a ``finish_reason``, or the end of the stream. Only
the choice of index 0 is read; ``delta.reasoning_content`` (or
``delta.reasoning``) is the outcome's ``reasoning``.

**The handlers** are a mapping from tool name to callable, plain or
``async``. A handler is called with the call's arguments as keyword
arguments (``get_weather(city="Paris")``), or with the ``Call`` itself
when ``pass_call=True``. Its return value is the call's result (the
``tool`` message's content is a ``str`` result as it is, anything else as
JSON). Whatever it raises (an ``Exception``) is the call's result too
(``CallResult.error``, the exception itself; the message's content is
``"Error: <type>: <message>"``), and the other calls go on; so is a tool
name that no handler has (``UnknownToolError``), and arguments that are
not a JSON object (``ArgumentsError``, native calls only: toolscan's own
calls always have an object).

**Where handlers run.** Plain handlers run in a
``concurrent.futures.ThreadPoolExecutor`` (``max_concurrent`` threads; or
the ``executor`` you give). Under ``arun``/``aevents``, ``async`` handlers
run as tasks on the running loop (at most ``max_concurrent`` at a time);
under ``run``/``events``, an ``async`` handler runs with ``asyncio.run``
in a thread of the pool. ``CallResult.started`` and ``.finished`` are
``time.perf_counter()`` readings, ``Outcome.stream_ended`` the one when the
stream ended: ``stream_ended - started`` is the head start a call got.

**Cancellation.** When the dispatch stops before its end (the stream
raises, the task running ``arun`` is cancelled, ``KeyboardInterrupt``, or
the generator of ``events``/``aevents`` is closed: ``break`` out of a
``for`` loop over ``events`` closes it once it is dropped; close the async
one with ``await gen.aclose()`` or ``contextlib.aclosing``), the handlers
not started yet never start, running ``async`` handlers are cancelled and
awaited, and running plain handlers, which a thread cannot be made to
leave, are waited for; then the stream is closed (which releases an
``openai`` stream's HTTP response) and the exception goes on. No handler
runs after the call returns.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
import json
import time
import uuid
from collections import deque
from dataclasses import dataclass, field
from typing import (
    Any,
    AsyncGenerator,
    AsyncIterable,
    Awaitable,
    Callable,
    Deque,
    Dict,
    Generator,
    Iterable,
    List,
    Mapping,
    Optional,
    Tuple,
    Union,
)

from . import Event
from ._native import Diagnostic, Done, Parser, Reasoning, Text, ToolCallEnd, ToolCallStart

__all__ = [
    "ArgumentsError",
    "Call",
    "CallResult",
    "Dispatcher",
    "Handler",
    "Outcome",
    "Source",
    "UnknownToolError",
    "arun",
    "run",
]

#: A tool's handler: called with the call's arguments as keyword arguments
#: (or with the ``Call``, ``pass_call=True``); plain or ``async``.
Handler = Callable[..., Any]

#: What ``run`` reads: text chunks (``str``/``bytes``) or chat-completion
#: chunks (``ChatCompletionChunk`` objects or dicts), sync or async.
Source = Union[Iterable[Any], AsyncIterable[Any]]


class UnknownToolError(LookupError):
    """The result of a call whose tool name no handler has."""


class ArgumentsError(ValueError):
    """The result of a native call whose arguments are not a JSON object."""


@dataclass(frozen=True)
class Call:
    """A complete tool call of the answer."""

    #: Its place among the answer's calls (0, 1, …), in the order they closed
    #: (the parser's index when every call is a text call).
    index: int
    #: The call id (the format's, the server's, or one minted for it): the
    #: ``tool_call_id`` of its ``tool`` message.
    id: str
    #: The tool's name.
    name: str
    #: The arguments: JSON text, as the model (or the server) wrote it.
    arguments: str
    #: ``True`` for a call the server sent in ``delta.tool_calls``, ``False``
    #: for one toolscan read from the text.
    native: bool = False
    #: The diagnostics the parser gave while the call was open (with
    #: ``check_calls="report"``, what the schema check found).
    diagnostics: Tuple[Diagnostic, ...] = ()

    def parsed(self) -> Any:
        """The arguments parsed (``json.loads``, a new object on each call)."""
        return json.loads(self.arguments)

    def to_openai(self) -> Dict[str, Any]:
        """The call as an entry of an assistant message's ``tool_calls``."""
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.arguments},
        }


@dataclass
class CallResult:
    """What a call's handler gave: ``value``, or the ``error`` it raised."""

    call: Call
    #: What the handler returned (``None`` when it raised).
    value: Any = None
    #: What the handler raised (an ``UnknownToolError`` when no handler has
    #: the call's name, an ``ArgumentsError`` for arguments that are not an
    #: object), or ``None``.
    error: Optional[BaseException] = None
    #: ``time.perf_counter()`` when the handler started (``None``: it never
    #: ran: unknown tool, bad arguments).
    started: Optional[float] = None
    #: ``time.perf_counter()`` when it returned or raised.
    finished: Optional[float] = None

    @property
    def ok(self) -> bool:
        """Whether the handler returned (did not raise)."""
        return self.error is None

    @property
    def content(self) -> str:
        """The ``tool`` message's content: a ``str`` value as it is, another
        value as JSON (``str()`` for what JSON cannot hold), an error as
        ``"Error: <type>: <message>"``."""
        if self.error is not None:
            return f"Error: {type(self.error).__name__}: {self.error}"
        if isinstance(self.value, str):
            return self.value
        return json.dumps(self.value, ensure_ascii=False, default=str)

    def to_message(self) -> Dict[str, Any]:
        """The ``tool`` message that answers the call."""
        return {"role": "tool", "tool_call_id": self.call.id, "content": self.content}


@dataclass
class Outcome:
    """A whole answer with its calls' results, in call order."""

    #: The answer's text (every ``Text`` delta), calls left out.
    text: str
    #: Its reasoning, or ``None`` when there was none.
    reasoning: Optional[str]
    #: Each call's result, in call order (``results[i].call is calls[i]``).
    results: List[CallResult]
    #: ``"stop"``, ``"tool_calls"`` or ``"length"``.
    finish_reason: str
    #: The parser's diagnostics (a block that failed to parse, a limit…).
    diagnostics: List[Diagnostic] = field(default_factory=list)
    #: ``time.perf_counter()`` when the stream ended (its last chunk read).
    stream_ended: float = 0.0

    @property
    def calls(self) -> List[Call]:
        """The complete calls, in order."""
        return [r.call for r in self.results]

    def assistant_message(self) -> Dict[str, Any]:
        """The answer as the assistant message of the next request:
        ``content`` the text (``None`` when empty and there are calls),
        ``tool_calls`` the calls (left out when there are none)."""
        message: Dict[str, Any] = {
            "role": "assistant",
            "content": self.text if self.text or not self.results else None,
        }
        if self.results:
            message["tool_calls"] = [r.call.to_openai() for r in self.results]
        return message

    def tool_messages(self) -> List[Dict[str, Any]]:
        """A ``tool`` message per call, in call order."""
        return [r.to_message() for r in self.results]

    def messages(self) -> List[Dict[str, Any]]:
        """The assistant message, then the ``tool`` messages: what to add to
        the conversation before the next request."""
        return [self.assistant_message(), *self.tool_messages()]


def _get(obj: Any, name: str) -> Any:
    """A field of a chunk part: a dict's key or an object's attribute."""
    if isinstance(obj, dict):
        return obj.get(name)
    return getattr(obj, name, None)


def _request_of(stream: Any) -> Dict[str, Any]:
    """The JSON body of the request an ``openai`` stream answers, or ``{}``."""
    try:
        body = json.loads(stream.response.request.content)
    except Exception:  # not an openai stream, or no JSON body
        return {}
    return body if isinstance(body, dict) else {}


@dataclass
class _NativeCall:
    """A call of ``delta.tool_calls`` being assembled."""

    id: Optional[str] = None
    name: str = ""
    arguments: List[str] = field(default_factory=list)


class _Reader:
    """One answer, chunk by chunk: what each chunk decides (events) and the
    calls that closed in it. Sans-IO: the drivers feed it and run the calls."""

    def __init__(self, stream: Any, format: Optional[str], options: Dict[str, Any]) -> None:
        options = dict(options)
        if format is None or format == "auto":
            request = _request_of(stream)
            if options.get("model") is None and isinstance(request.get("model"), str):
                options["model"] = request["model"]
            if options.get("tools") is None and request.get("tools"):
                options["tools"] = request["tools"]
        elif options.get("tools") is None:
            tools = _request_of(stream).get("tools")
            if tools:
                options["tools"] = tools
        # Raises OptionsError / UnknownFormatError now.
        self.parser = Parser(format, **options)
        self.seq = 0
        self.finish_reason: Optional[str] = None
        self.native: Dict[int, _NativeCall] = {}
        # The diagnostics since the open text call's start, while one is open.
        self.open_notes: Optional[List[Diagnostic]] = None

    def _call(self, id: str, name: str, arguments: str, native: bool, notes: Tuple[Diagnostic, ...] = ()) -> Call:
        call = Call(self.seq, id, name, arguments, native, notes)
        self.seq += 1
        return call

    def _parsed(self, events: List[Event], out: List[Tuple[Event, Optional[Call]]]) -> None:
        for event in events:
            if isinstance(event, Done):
                continue  # the drivers' own ``Done`` ends the answer
            if isinstance(event, ToolCallStart):
                self.open_notes = []
            elif isinstance(event, Diagnostic) and self.open_notes is not None:
                self.open_notes.append(event)
            if isinstance(event, ToolCallEnd):
                notes = tuple(self.open_notes or ())
                self.open_notes = None
                out.append((event, self._call(event.id, event.name, event.arguments, False, notes)))
            else:
                out.append((event, None))

    def _close_native(self, out: List[Tuple[Event, Optional[Call]]], keep: Optional[int] = None) -> None:
        for index in sorted(self.native):
            if index == keep:
                continue
            open_call = self.native.pop(index)
            arguments = "".join(open_call.arguments)
            call = self._call(open_call.id or f"call_{uuid.uuid4().hex[:24]}", open_call.name, arguments, True)
            out.append((ToolCallEnd(call.index, call.id, call.name, arguments), call))

    def feed(self, item: Any) -> List[Tuple[Event, Optional[Call]]]:
        """The events of the next item (a text chunk or a chat chunk), each
        ``ToolCallEnd`` with its ``Call``."""
        out: List[Tuple[Event, Optional[Call]]] = []
        if isinstance(item, (str, bytes, bytearray)):
            self._parsed(self.parser.feed(item), out)
            return out
        choices = _get(item, "choices")
        if choices is None and not isinstance(item, dict):
            raise TypeError(
                f"{type(item).__name__} is neither a text chunk (str, bytes) nor a chat completion "
                "chunk (an object or dict with choices)"
            )
        for choice in choices or []:
            if (_get(choice, "index") or 0) != 0:
                continue
            delta = _get(choice, "delta")
            if delta is not None:
                reasoning = _get(delta, "reasoning_content") or _get(delta, "reasoning")
                if isinstance(reasoning, str) and reasoning:
                    out.append((Reasoning(reasoning), None))
                content = _get(delta, "content")
                if isinstance(content, str) and content:
                    self._parsed(self.parser.feed(content), out)
                for entry in _get(delta, "tool_calls") or []:
                    index = _get(entry, "index") or 0
                    # An entry of another call: the open ones are complete.
                    self._close_native(out, keep=index)
                    open_call = self.native.setdefault(index, _NativeCall())
                    if _get(entry, "id"):
                        open_call.id = _get(entry, "id")
                    function = _get(entry, "function")
                    if function is not None:
                        open_call.name += _get(function, "name") or ""
                        open_call.arguments.append(_get(function, "arguments") or "")
            finish = _get(choice, "finish_reason")
            if finish:
                self.finish_reason = str(finish)
                self._close_native(out)
        return out

    def end(self) -> List[Tuple[Event, Optional[Call]]]:
        """What the stream's end decides; the last is ``Done``."""
        out: List[Tuple[Event, Optional[Call]]] = []
        self._close_native(out)
        at_stop = self.finish_reason == "stop"
        finished = self.parser.finish(at_stop=at_stop)
        parser_reason = next((e.finish_reason for e in finished if isinstance(e, Done)), "stop")
        self._parsed(finished, out)
        if self.seq:
            reason = "length" if "length" in (self.finish_reason, parser_reason) else "tool_calls"
        elif self.finish_reason in ("length", "tool_calls"):
            reason = self.finish_reason
        else:
            reason = parser_reason
        out.append((Done(reason), None))
        return out


def _handler_error(call: Call, handlers: Mapping[str, Handler]) -> Optional[BaseException]:
    """Why ``call`` cannot be handed to a handler, or ``None``."""
    if call.name not in handlers:
        known = ", ".join(sorted(handlers)) or "none"
        return UnknownToolError(f"no tool named {call.name!r} (the tools: {known})")
    return None


def _arguments(call: Call) -> Dict[str, Any]:
    try:
        args = call.parsed()
    except ValueError as e:
        raise ArgumentsError(f"the arguments are not JSON: {e}") from None
    if not isinstance(args, dict):
        raise ArgumentsError("the arguments are not a JSON object")
    return args


def _is_async(handler: Handler) -> bool:
    return inspect.iscoroutinefunction(handler) or inspect.iscoroutinefunction(
        getattr(handler, "__call__", None)
    )


async def _await(awaitable: Awaitable[Any]) -> Any:
    return await awaitable


def _invoke(handler: Handler, call: Call, pass_call: bool) -> Any:
    if pass_call:
        return handler(call)
    return handler(**_arguments(call))


def _in_thread(handler: Handler, call: Call, pass_call: bool, loop_awaits: bool) -> CallResult:
    """Runs a handler in a pool thread. An awaitable it returns is run here
    (``asyncio.run``), or left to the loop (``loop_awaits``)."""
    result = CallResult(call, started=time.perf_counter())
    try:
        value = _invoke(handler, call, pass_call)
        if inspect.isawaitable(value):
            if loop_awaits:
                result.value = value
                return result
            value = asyncio.run(_await(value))
        result.value = value
    except Exception as e:
        result.error = e
    result.finished = time.perf_counter()
    return result


def _done_future(result: CallResult) -> "concurrent.futures.Future[CallResult]":
    future: concurrent.futures.Future[CallResult] = concurrent.futures.Future()
    future.set_result(result)
    return future


def _close_sync(stream: Any) -> None:
    close = getattr(stream, "close", None)
    if callable(close):
        close()


async def _close_async(stream: Any) -> None:
    close = getattr(stream, "aclose", None) or getattr(stream, "close", None)
    if callable(close):
        closing = close()
        if inspect.isawaitable(closing):
            await closing


def _outcome(items: Iterable[Union[Event, CallResult]], ended: List[float]) -> Outcome:
    """Folds the items of ``events`` into an ``Outcome``; ``ended`` gets the
    time ``Done`` came."""
    text: List[str] = []
    reasoning: List[str] = []
    results: List[CallResult] = []
    diagnostics: List[Diagnostic] = []
    finish_reason = "stop"
    for item in items:
        if isinstance(item, CallResult):
            results.append(item)
        elif isinstance(item, Text):
            text.append(item.delta)
        elif isinstance(item, Reasoning):
            reasoning.append(item.delta)
        elif isinstance(item, Diagnostic):
            diagnostics.append(item)
        elif isinstance(item, Done):
            finish_reason = item.finish_reason
            ended.append(time.perf_counter())
    return Outcome(
        text="".join(text),
        reasoning="".join(reasoning) if reasoning else None,
        results=results,
        finish_reason=finish_reason,
        diagnostics=diagnostics,
        stream_ended=ended[0] if ended else time.perf_counter(),
    )


class Dispatcher:
    """Handlers by tool name, and the options of the dispatch; see the
    module's documentation.

    ``format`` and ``options`` are ``toolscan.Parser``'s (``model``,
    ``tools``, ``reasoning``, ``check_calls``, limits, ``ids``/``seed``…;
    ``complete_at_stop`` defaults to ``True``, as in ``toolscan.openai``:
    a call whose closing markup a stop sequence cut is completed when the
    server says ``finish_reason: "stop"``). ``pass_call``: handlers get the
    ``Call`` rather than keyword arguments. ``max_concurrent``: how many
    handlers run at once (``None``: the thread pool's default size, and no
    bound on ``async`` handlers). ``executor``: the pool plain handlers run
    in (it is not shut down, and its own size bounds the plain handlers; by
    default each dispatch makes its own). Bad options raise at once
    (``OptionsError``, ``UnknownFormatError``, ``ValueError``).
    """

    def __init__(
        self,
        handlers: Mapping[str, Handler],
        format: Optional[str] = None,
        *,
        pass_call: bool = False,
        max_concurrent: Optional[int] = None,
        executor: Optional[concurrent.futures.Executor] = None,
        **options: Any,
    ) -> None:
        if max_concurrent is not None and max_concurrent < 1:
            raise ValueError("max_concurrent must be at least 1 (or None)")
        self.handlers: Dict[str, Handler] = dict(handlers)
        self.format = format
        self.pass_call = pass_call
        self.max_concurrent = max_concurrent
        self.executor = executor
        options.setdefault("complete_at_stop", True)
        self.options = options
        Parser(format, **options)  # checks the options now

    def _reader(self, stream: Any) -> _Reader:
        return _Reader(stream, self.format, self.options)

    def _pool(self) -> Tuple[concurrent.futures.Executor, bool]:
        if self.executor is not None:
            return self.executor, False
        pool = concurrent.futures.ThreadPoolExecutor(
            max_workers=self.max_concurrent, thread_name_prefix="toolscan-dispatch"
        )
        return pool, True

    # The sync dispatch.

    def events(self, stream: Iterable[Any]) -> Generator[Union[Event, CallResult], None, None]:
        """Reads ``stream`` (an iterable of text or chat chunks) and yields
        the answer as it comes: toolscan's events, as each chunk decides
        them (a native call as its ``ToolCallEnd``; ``Done`` last among the
        events, when the stream has ended), and each call's ``CallResult``
        in call order, as soon as it and every result before it are ready
        (between chunks, then after ``Done`` as each handler finishes). Each
        handler is started when its call's ``ToolCallEnd`` is read, before
        the event is yielded. Closing the generator cancels the dispatch
        (module documentation)."""
        if hasattr(stream, "__aiter__") and not hasattr(stream, "__iter__"):
            raise TypeError("an async iterable: use aevents() or arun()")
        reader = self._reader(stream)
        pool, own_pool = self._pool()
        futures: Deque[concurrent.futures.Future[CallResult]] = deque()
        complete = False
        try:
            for item in stream:
                for event, call in reader.feed(item):
                    if call is not None:
                        futures.append(self._submit(pool, call))
                    yield event
                while futures and futures[0].done():
                    yield futures.popleft().result()
            for event, call in reader.end():
                if call is not None:
                    futures.append(self._submit(pool, call))
                yield event
            while futures:
                # Waited for before it leaves the queue: an interrupt here
                # still finds it in the finally.
                result = futures[0].result()
                futures.popleft()
                yield result
            complete = True
        finally:
            if not complete:
                for future in futures:
                    future.cancel()
                concurrent.futures.wait(futures)
            if own_pool:
                pool.shutdown(wait=True)
            _close_sync(stream)

    def _submit(self, pool: concurrent.futures.Executor, call: Call) -> "concurrent.futures.Future[CallResult]":
        error = _handler_error(call, self.handlers)
        if error is not None:
            return _done_future(CallResult(call, error=error))
        return pool.submit(_in_thread, self.handlers[call.name], call, self.pass_call, False)

    def run(self, stream: Iterable[Any]) -> Outcome:
        """Reads ``stream`` to its end, running each call's handler as soon
        as the call closes; the answer with every call's result."""
        ended: List[float] = []
        gen = self.events(stream)
        try:
            return _outcome(gen, ended)
        finally:
            gen.close()

    # The asyncio dispatch.

    async def aevents(self, stream: Source) -> AsyncGenerator[Union[Event, CallResult], None]:
        """``events`` under asyncio: ``stream`` is an async iterable (an
        ``AsyncStream``) or an iterable (read on the loop: each item blocks
        it while it comes). ``async`` handlers run as tasks of the loop,
        plain ones in threads. Close it with ``await gen.aclose()`` (or
        ``contextlib.aclosing``) when you leave it early: that cancels the
        dispatch (module documentation)."""
        reader = self._reader(stream)
        pool, own_pool = self._pool()
        limit = asyncio.Semaphore(self.max_concurrent) if self.max_concurrent else None
        pending: Deque[asyncio.Future[CallResult]] = deque()
        threads: List[concurrent.futures.Future[CallResult]] = []
        complete = False

        def start(call: Call) -> None:
            error = _handler_error(call, self.handlers)
            if error is not None:
                done: asyncio.Future[CallResult] = asyncio.get_running_loop().create_future()
                done.set_result(CallResult(call, error=error))
                pending.append(done)
            elif _is_async(self.handlers[call.name]):
                pending.append(asyncio.ensure_future(self._run_async(call, limit)))
            else:
                thread = pool.submit(_in_thread, self.handlers[call.name], call, self.pass_call, True)
                threads.append(thread)
                pending.append(asyncio.ensure_future(self._finish_thread(thread)))

        try:
            if hasattr(stream, "__aiter__"):
                async for item in stream:
                    for event, call in reader.feed(item):
                        if call is not None:
                            start(call)
                        yield event
                    while pending and pending[0].done():
                        yield pending.popleft().result()
            else:
                for item in stream:
                    for event, call in reader.feed(item):
                        if call is not None:
                            start(call)
                        yield event
                    while pending and pending[0].done():
                        yield pending.popleft().result()
                    await asyncio.sleep(0)  # let the handlers run
            for event, call in reader.end():
                if call is not None:
                    start(call)
                yield event
            while pending:
                result = await pending[0]
                pending.popleft()
                yield result
            complete = True
        finally:
            if not complete:
                for thread in threads:
                    thread.cancel()
                for task in pending:
                    task.cancel()
                # The cancelled tasks, and the threads that were running.
                if pending:
                    await asyncio.wait(list(pending))
                running = [asyncio.wrap_future(t) for t in threads if not t.done()]
                if running:
                    await asyncio.wait(running)
            if own_pool:
                pool.shutdown(wait=False)
            await _close_async(stream)

    async def _run_async(self, call: Call, limit: Optional[asyncio.Semaphore]) -> CallResult:
        if limit is not None:
            async with limit:
                return await self._run_async(call, None)
        result = CallResult(call, started=time.perf_counter())
        try:
            result.value = await _invoke(self.handlers[call.name], call, self.pass_call)
        except Exception as e:
            result.error = e
        result.finished = time.perf_counter()
        return result

    @staticmethod
    async def _finish_thread(thread: "concurrent.futures.Future[CallResult]") -> CallResult:
        # A thread's future is awaited here (not cancelled with the task:
        # a running thread cannot stop; ``aevents`` waits for it).
        result = await asyncio.shield(asyncio.wrap_future(thread))
        if inspect.isawaitable(result.value):  # a plain callable that returned an awaitable
            try:
                result.value = await result.value
            except Exception as e:
                result.value, result.error = None, e
            result.finished = time.perf_counter()
        return result

    async def arun(self, stream: Source) -> Outcome:
        """``run`` under asyncio (see ``aevents``)."""
        ended: List[float] = []
        gen = self.aevents(stream)
        try:
            items: List[Union[Event, CallResult]] = []
            async for item in gen:
                if isinstance(item, Done):
                    ended.append(time.perf_counter())
                items.append(item)
            return _outcome(items, ended)
        finally:
            await gen.aclose()


def run(
    stream: Iterable[Any],
    handlers: Mapping[str, Handler],
    format: Optional[str] = None,
    **options: Any,
) -> Outcome:
    """``Dispatcher(handlers, format, **options).run(stream)``."""
    return Dispatcher(handlers, format, **options).run(stream)


async def arun(
    stream: Source,
    handlers: Mapping[str, Handler],
    format: Optional[str] = None,
    **options: Any,
) -> Outcome:
    """``await Dispatcher(handlers, format, **options).arun(stream)``."""
    return await Dispatcher(handlers, format, **options).arun(stream)
