"""toolscan as a vLLM tool-call parser.

Load it into ``vllm serve`` and pick a format::

    vllm serve Qwen/Qwen3-8B --enable-auto-tool-choice \\
        --tool-parser-plugin toolscan.vllm --tool-call-parser toolscan-hermes

``--tool-parser-plugin`` takes the module name (``toolscan.vllm``) or the path
of this file. The parser names are ``toolscan-<format>`` for every name in
``toolscan.formats()``, and ``toolscan``, which takes the format from the
model (``toolscan.format_for_model`` of the tokenizer's model id, else of the
request's model name) and detects it from the output when neither is a
known one.

Each request gets one toolscan ``Parser``, created on its first delta with the
request's ``tools``. The parser reads only ``delta_text``: its cost per delta
does not grow with the answer, where vLLM's own parsers re-parse the whole
``current_text`` on every delta. It answers with vLLM's own ``DeltaMessage``
and ``DeltaToolCall`` objects, as vLLM's parsers do: for each call, one entry
with its ``index``, ``id``, ``type="function"`` and name, then entries with
argument deltas; text as ``content``; ``None`` when a delta brings nothing to
send (text that may still turn out to be a marker is held back).

The streaming path is native code (``toolscan._native.VllmStream``): from a
request's first delta on, vLLM's call goes straight to it, and vLLM's delta
objects are built in Rust, without pydantic's validation, as
``model_construct`` would leave them. They are checked against validated
objects at import; should a later vLLM or pydantic differ, the plugin streams
through its Python path instead (the same answers, slower).

The parser declares ``engine_based_streaming``, so vLLM calls its
``finish_streaming()`` when the stream ends: text held back at the end (an
unfinished ``<tool_c``, a call cut off by the token limit, which comes back as
text) is sent then rather than lost. The same flag makes vLLM hand the parser
each delta without accumulating the whole answer for it.

Where it differs from vLLM's own parsers (deliberately):

- Text after or between calls is kept as ``content``; vLLM's Hermes parser,
  among others, drops everything after the first ``<tool_call>``.
- A block that starts like a call but turns out malformed, or a call cut off
  by the end of the stream, comes back as ``content`` (its bytes, verbatim).
  Its name and the arguments already streamed cannot be taken back: a client
  sees a call entry that never completes, then the text.
- Ids are the model's own where the format carries them (Mistral, Kimi),
  otherwise ``call_`` and 24 alphanumerics.
- Reasoning is left to vLLM's ``--reasoning-parser``; without one,
  ``<think>`` blocks are content and a call written inside one is not
  dispatched.
"""

from __future__ import annotations

import sys

if __name__ == "vllm":
    # vLLM imports a plugin given by path under the file's base name, which for
    # this file is "vllm": it would shadow vLLM itself in `sys.modules`, and
    # every vLLM module imported later would fail. Put vLLM back and carry on
    # under this module's own name.
    import importlib

    _this = sys.modules.pop("vllm")
    importlib.import_module("vllm")
    __name__ = "toolscan.vllm"  # noqa: A001 - the classes below take it as __module__
    sys.modules.setdefault(__name__, _this)

import json
import re
from collections.abc import Sequence
from typing import Any, Callable, ClassVar, Tuple, cast

from vllm.entrypoints.generate.base.protocol import (
    DeltaFunctionCall,
    DeltaMessage,
    DeltaToolCall,
    ExtractedToolCallInformation,
    FunctionCall,
    ToolCall,
)
from vllm.logger import init_logger
from vllm.tool_parsers.abstract_tool_parser import ToolParser, ToolParserManager

import toolscan
from toolscan import Text as _Text
from toolscan import _native
from toolscan import ToolCallArgs as _Args

__all__ = ["ToolscanToolParser", "PARSERS", "register"]

logger = init_logger(__name__)


def _tools_json(tools: Any) -> str | None:
    """The OpenAI chat ``tools`` array, as JSON text (which toolscan reads
    faster than a list of dicts), from a request's tools."""
    if not tools:
        return None
    out = []
    for tool in tools:
        if hasattr(tool, "model_dump"):
            tool = tool.model_dump(mode="json", exclude_none=True)
        if not isinstance(tool, dict) or tool.get("type", "function") != "function":
            continue
        if "function" not in tool and "name" in tool:
            # The Responses API's flat FunctionTool.
            tool = {
                "type": "function",
                "function": {
                    k: tool[k] for k in ("name", "description", "parameters", "strict") if k in tool
                },
            }
        out.append(tool)
    return json.dumps(out, ensure_ascii=False) if out else None


class ToolscanToolParser(ToolParser):
    """A vLLM ``ToolParser`` over one toolscan ``Parser`` per request.

    ``format`` is the toolscan format of the registered name; ``None`` (the
    ``toolscan`` name) takes it from the model id, or detects it.
    """

    format: ClassVar[str | None] = None
    # vLLM then calls `finish_streaming()` at the end of the stream and passes
    # each delta without accumulating the answer (see the module docs).
    engine_based_streaming = True

    def __init__(self, tokenizer: Any, tools: list[Any] | None = None):
        super().__init__(tokenizer, tools)
        self._parser: toolscan.Parser | None = None
        # The native streaming path of this request (see `_native_stream`).
        self._stream: Any = None
        self._finished = False
        self._passthrough = False
        # The argument deltas sent, per call: joined into
        # `streamed_args_for_tool` when the call ends (or the stream does),
        # not on every delta, which would copy a growing string each time.
        self._args_sent: list[list[str]] = []
        #: The toolscan diagnostics of this request (also logged at debug level).
        self.diagnostics: list[toolscan.Diagnostic] = []

    # -- options ---------------------------------------------------------------

    def _model_format(self, request: Any) -> str:
        """The format of the served model: from the tokenizer's model id,
        else the request's model name (a `--served-model-name` alias may
        name it where a local path does not); `auto` when neither is known."""
        for name in (
            getattr(self.model_tokenizer, "name_or_path", None),
            getattr(request, "model", None),
        ):
            if isinstance(name, str) and name:
                fmt = toolscan.format_for_model(name)
                if fmt is not None:
                    return fmt
        return "auto"

    def _options(self, request: Any) -> dict[str, Any]:
        fmt = self.format if self.format is not None else self._model_format(request)
        options: dict[str, Any] = {"format": fmt}
        tools = _tools_json(self.tools or getattr(request, "tools", None))
        if tools:
            options["tools"] = tools
        return options

    def _native_stream(self, parser: toolscan.Parser) -> Any:
        """The native streaming path over `parser` (`toolscan._native.VllmStream`),
        bound as this instance's `extract_tool_calls_streaming` so that vLLM's
        calls go straight to it; None where the native builders did not pass
        the import-time check (`_native_builders`), and the Python path runs."""
        builders = _NATIVE
        if builders is None:
            return None
        stream = _native.VllmStream(parser, builders, self, self._diagnostic)
        self.extract_tool_calls_streaming = stream.extract_tool_calls_streaming  # type: ignore[method-assign]
        return stream

    def _new_parser(self, request: Any) -> toolscan.Parser:
        options = self._options(request)
        try:
            return toolscan.Parser(**options)
        except toolscan.OptionsError as e:
            # A tools array toolscan cannot read: parse without it.
            logger.warning("toolscan: ignoring the request's tools (%s)", e)
            options.pop("tools", None)
            return toolscan.Parser(**options)

    # -- vLLM's interface --------------------------------------------------------

    def adjust_request(self, request: Any) -> Any:
        request = super().adjust_request(request)
        if request.tools and request.tool_choice != "none":
            # The markers of many formats are special tokens; the parser must
            # see them in the text.
            request.skip_special_tokens = False
        return request

    def extract_tool_calls(self, model_output: str, request: Any) -> ExtractedToolCallInformation:
        if getattr(request, "tool_choice", None) == "none":
            return ExtractedToolCallInformation(
                tools_called=False, tool_calls=[], content=model_output
            )
        options = self._options(request)
        try:
            response = toolscan.parse(model_output, **options)
        except toolscan.OptionsError as e:
            logger.warning("toolscan: ignoring the request's tools (%s)", e)
            options.pop("tools", None)
            response = toolscan.parse(model_output, **options)
        for diagnostic in response.diagnostics:
            self._diagnostic(diagnostic)
        tool_calls = [
            ToolCall(
                id=call.id,
                type="function",
                function=FunctionCall(name=call.name, arguments=call.arguments),
            )
            for call in response.tool_calls
        ]
        return ExtractedToolCallInformation(
            tools_called=bool(tool_calls),
            tool_calls=tool_calls,
            content=response.text or None,
        )

    def extract_tool_calls_streaming(
        self,
        previous_text: str,
        current_text: str,
        delta_text: str,
        previous_token_ids: Sequence[int],
        current_token_ids: Sequence[int],
        delta_token_ids: Sequence[int],
        request: Any,
    ) -> DeltaMessage | None:
        parser = self._parser
        if parser is None:
            if self._finished:
                return None
            if self._passthrough or getattr(request, "tool_choice", None) == "none":
                # No tools wanted: the text as it comes.
                self._passthrough = True
                return _Message(delta_text) if delta_text else None
            parser = self._parser = self._new_parser(request)
            self._stream = self._native_stream(parser)
        if self._stream is not None:
            # The native path (vLLM calls it directly after this first delta).
            return self._stream.extract_tool_calls_streaming(
                previous_text,
                current_text,
                delta_text,
                previous_token_ids,
                current_token_ids,
                delta_token_ids,
                request,
            )
        if not delta_text:
            return None
        events = parser.feed(delta_text)
        if len(events) == 1:
            # The common deltas, a piece of text or of a call's arguments
            # (told apart by class: cheaper than reading `type`).
            # `Any`: mypy does not follow `kind is _Text` to the event's class.
            event: Any = events[0]
            kind = type(event)
            if kind is _Text:
                return _TextMessage(event.delta)
            if kind is _Args and event.index < len(self._args_sent):
                index, delta = event.index, event.delta
                self._args_sent[index].append(delta)
                return _ArgsMessage(index, delta)
        return self._message(events)

    def finish_streaming(self) -> DeltaMessage | None:
        """The end of the stream: what the parser held back, and the calls it
        could only close now."""
        parser = self._parser
        if parser is None:
            return None
        self._parser, self._finished = None, True
        if self._stream is not None:
            return self._stream.finish()
        message = self._message(parser.finish())
        for index, pieces in enumerate(self._args_sent):
            if pieces and not self.streamed_args_for_tool[index]:
                # A call that never ended: what was sent of it.
                self.streamed_args_for_tool[index] = "".join(pieces)
                self.prev_tool_call_arr[index]["arguments"] = self.streamed_args_for_tool[index]
        return message

    # -- events to vLLM's deltas ------------------------------------------------

    def _diagnostic(self, diagnostic: toolscan.Diagnostic) -> None:
        self.diagnostics.append(diagnostic)
        logger.debug(
            "toolscan: %s at byte %d: %s",
            diagnostic.kind,
            diagnostic.offset,
            diagnostic.message,
        )

    def _slot(self, index: int) -> None:
        while len(self.prev_tool_call_arr) <= index:
            self.prev_tool_call_arr.append({})
            self.streamed_args_for_tool.append("")
        while len(self._args_sent) <= index:
            self._args_sent.append([])

    def _message(self, events: list[Any]) -> DeltaMessage | None:
        # The events are told apart by their `type` (read once each), which
        # mypy does not follow to their classes: `Any`.
        # vLLM's delta objects come from the builders below (see
        # `_fast_builders`).
        if not events:
            return None
        if len(events) == 1 and events[0].type == "text":
            return _Message(events[0].delta)
        content: list[str] = []
        calls: list[DeltaToolCall] = []
        # The entry the next argument delta of that index is appended to: one
        # entry per run of deltas, as vLLM's parsers send them.
        args_entry: DeltaToolCall | None = None
        for event in events:
            kind = event.type
            if kind == "tool_call_args":
                index = event.index
                self._slot(index)
                self._args_sent[index].append(event.delta)
                if args_entry is not None and args_entry.index == index:
                    function = args_entry.function
                    function.arguments = (function.arguments or "") + event.delta
                else:
                    args_entry = _ToolCall(index, _Function(arguments=event.delta))
                    calls.append(args_entry)
                continue
            args_entry = None
            if kind == "text":
                content.append(event.delta)
            elif kind == "tool_call_start":
                index = event.index
                self._slot(index)
                self.prev_tool_call_arr[index] = {"name": event.name, "arguments": ""}
                self.current_tool_id = index
                self.current_tool_name_sent = True
                calls.append(
                    _ToolCall(index, _Function(name=event.name), id=event.id, type="function")
                )
            elif kind == "tool_call_end":
                index = event.index
                self._slot(index)
                streamed = "".join(self._args_sent[index])
                if event.arguments != streamed and event.arguments.startswith(streamed):
                    # The contract says the deltas add up to the arguments;
                    # should they fall short, send the rest.
                    rest = event.arguments[len(streamed) :]
                    self._args_sent[index].append(rest)
                    calls.append(_ToolCall(index, _Function(arguments=rest)))
                    streamed = event.arguments
                self.streamed_args_for_tool[index] = streamed
                self.prev_tool_call_arr[index] = {
                    "name": event.name,
                    "arguments": event.arguments,
                }
            elif kind == "diagnostic":
                self._diagnostic(event)
            # "reasoning" is not asked for (vLLM's reasoning parser does that);
            # "done" carries nothing vLLM reads.
        text = "".join(content)
        if not text and not calls:
            return None
        return _Message(text or None, calls)


#: Builders of vLLM's delta objects: `message(content, tool_calls=None)`,
#: `tool_call(index, function, id=None, type=None)`,
#: `function(name=None, arguments=None)`, `text_message(content)`,
#: `args_message(index, arguments)`.
_Builders = Tuple[
    Callable[..., Any],
    Callable[..., Any],
    Callable[..., Any],
    Callable[[str], Any],
    Callable[[int, str], Any],
]


def _validated_builders() -> _Builders:
    def message(content: str | None, tool_calls: list[Any] | None = None) -> DeltaMessage:
        if tool_calls:
            return DeltaMessage(content=content, tool_calls=tool_calls)
        return DeltaMessage(content=content)

    def tool_call(
        index: int, function: Any, id: str | None = None, type: str | None = None
    ) -> DeltaToolCall:
        if id is None:
            return DeltaToolCall(index=index, function=function)
        return DeltaToolCall(index=index, id=id, type=type, function=function)

    def function(name: str | None = None, arguments: str | None = None) -> DeltaFunctionCall:
        if arguments is None:
            return DeltaFunctionCall(name=name)
        return DeltaFunctionCall(arguments=arguments)

    def text_message(content: str) -> DeltaMessage:
        return message(content)

    def args_message(index: int, arguments: str) -> DeltaMessage:
        return message(None, [tool_call(index, function(arguments=arguments))])

    return message, tool_call, function, text_message, args_message


def _fast_builders() -> _Builders:
    """Builders of vLLM's delta objects that skip pydantic's validation (the
    values are of the declared types by construction). Validation, with
    vLLM's hook for extra fields, costs more than parsing the delta does;
    pydantic's `model_construct` more still. These set what
    `model_construct` sets, and are checked against validated objects
    (`_builders`); should a later pydantic or vLLM differ, the validated
    constructors are used instead."""
    from pydantic import BaseModel

    slots = BaseModel.__dict__
    set_fields = slots["__pydantic_fields_set__"].__set__
    set_extra = slots["__pydantic_extra__"].__set__
    set_private = slots["__pydantic_private__"].__set__
    new, set_dict = object.__new__, object.__setattr__

    # `{}` for a model that allows extra fields, as pydantic sets it.
    m_extra, c_extra, f_extra = (
        cls.model_config.get("extra") == "allow"
        for cls in (DeltaMessage, DeltaToolCall, DeltaFunctionCall)
    )

    def message(content: str | None, tool_calls: list[Any] | None = None) -> DeltaMessage:
        m = new(DeltaMessage)
        set_dict(
            m,
            "__dict__",
            {"role": None, "content": content, "reasoning": None, "tool_calls": tool_calls or []},
        )
        set_fields(m, {"content", "tool_calls"} if tool_calls else {"content"})
        set_extra(m, {} if m_extra else None)
        set_private(m, None)
        return m

    def tool_call(
        index: int, function: Any, id: str | None = None, type: str | None = None
    ) -> DeltaToolCall:
        c = new(DeltaToolCall)
        set_dict(c, "__dict__", {"id": id, "type": type, "index": index, "function": function})
        set_fields(c, {"index", "function"} if id is None else {"index", "function", "id", "type"})
        set_extra(c, {} if c_extra else None)
        set_private(c, None)
        return c

    def function(name: str | None = None, arguments: str | None = None) -> DeltaFunctionCall:
        f = new(DeltaFunctionCall)
        set_dict(f, "__dict__", {"name": name, "arguments": arguments})
        set_fields(f, {"name"} if arguments is None else {"arguments"})
        set_extra(f, {} if f_extra else None)
        set_private(f, None)
        return f

    def text_message(content: str) -> DeltaMessage:
        m = new(DeltaMessage)
        set_dict(
            m, "__dict__", {"role": None, "content": content, "reasoning": None, "tool_calls": []}
        )
        set_fields(m, {"content"})
        set_extra(m, {} if m_extra else None)
        set_private(m, None)
        return m

    def args_message(index: int, arguments: str) -> DeltaMessage:
        # message(None, [tool_call(index, function(arguments=...))]) in one go:
        # the most frequent delta of a call.
        f = new(DeltaFunctionCall)
        set_dict(f, "__dict__", {"name": None, "arguments": arguments})
        set_fields(f, {"arguments"})
        set_extra(f, {} if f_extra else None)
        set_private(f, None)
        c = new(DeltaToolCall)
        set_dict(c, "__dict__", {"id": None, "type": None, "index": index, "function": f})
        set_fields(c, {"index", "function"})
        set_extra(c, {} if c_extra else None)
        set_private(c, None)
        m = new(DeltaMessage)
        set_dict(
            m, "__dict__", {"role": None, "content": None, "reasoning": None, "tool_calls": [c]}
        )
        set_fields(m, {"content", "tool_calls"})
        set_extra(m, {} if m_extra else None)
        set_private(m, None)
        return m

    return message, tool_call, function, text_message, args_message


def _samples(
    message: Callable[..., Any],
    tool_call: Callable[..., Any],
    function: Callable[..., Any],
    text_message: Callable[[str], Any],
    args_message: Callable[[int, str], Any],
) -> list[Any]:
    return [
        text_message("t"),
        args_message(2, '"x'),
        message("text"),
        message(
            None,
            [
                tool_call(0, function(name="f"), id="call_1", type="function"),
                tool_call(0, function(arguments="{")),
            ],
        ),
        message("a", [tool_call(1, function(arguments="}"))]),
    ]


def _same_objects(built: _Builders, checked: _Builders) -> bool:
    """Whether builders `built` give the objects of validated `checked` on
    the samples: equal, serialised alike, with the same fields set, down to
    the nested objects."""
    fields = all(
        set(cls.model_fields) == names
        for cls, names in (
            (DeltaMessage, {"role", "content", "reasoning", "tool_calls"}),
            (DeltaToolCall, {"id", "type", "index", "function"}),
            (DeltaFunctionCall, {"name", "arguments"}),
        )
    )
    a_samples, b_samples = _samples(*built), _samples(*checked)
    return fields and len(a_samples) == len(b_samples) and all(
        type(a) is type(b)
        and a == b
        and a.model_dump_json() == b.model_dump_json()
        and a.model_fields_set == b.model_fields_set
        and a.__pydantic_extra__ == b.__pydantic_extra__
        and a.__pydantic_private__ == b.__pydantic_private__
        and [c.model_fields_set for c in a.tool_calls] == [c.model_fields_set for c in b.tool_calls]
        and [c.function.model_fields_set for c in a.tool_calls]
        == [c.function.model_fields_set for c in b.tool_calls]
        for a, b in zip(a_samples, b_samples)
    )


def _builders() -> _Builders:
    checked = _validated_builders()
    try:
        fast = _fast_builders()
        if _same_objects(fast, checked):
            return fast
    except Exception:  # pydantic's internals differ: validate instead
        pass
    return checked


_Message, _ToolCall, _Function, _TextMessage, _ArgsMessage = _builders()


def _native_builders() -> _native.VllmBuilders | None:
    """vLLM's delta objects built in Rust (`toolscan._native.VllmBuilders`,
    the same construction as `_fast_builders`), for the native streaming
    path; checked as `_builders` checks the Python ones. None, and the
    Python path, where they differ from validated objects."""
    try:
        native = _native.VllmBuilders(DeltaMessage, DeltaToolCall, DeltaFunctionCall)
        built: _Builders = (
            native.message,
            native.tool_call,
            native.function,
            native.text_message,
            native.args_message,
        )
        if _same_objects(built, _validated_builders()):
            return native
    except Exception:  # pydantic's internals differ: the Python path
        pass
    return None


#: The native builders, or None (then every request takes the Python path).
_NATIVE = _native_builders()


def _class_name(fmt: str | None) -> str:
    if fmt is None:
        return "ToolscanAutoToolParser"
    return "Toolscan_" + re.sub(r"\W", "_", fmt) + "_ToolParser"


#: The registered parser classes, by ``--tool-call-parser`` name.
PARSERS: dict[str, type[ToolscanToolParser]] = {}


def register() -> dict[str, type[ToolscanToolParser]]:
    """Register ``toolscan`` and ``toolscan-<format>`` for every toolscan
    format with vLLM's ``ToolParserManager`` (done on import)."""
    for fmt in [None, *(info.name for info in toolscan.formats())]:
        name = "toolscan" if fmt is None else f"toolscan-{fmt}"
        if fmt is None:
            cls = ToolscanToolParser
        else:
            cls = cast(
                "type[ToolscanToolParser]",
                type(
                    _class_name(fmt),
                    (ToolscanToolParser,),
                    {
                        "format": fmt,
                        "__module__": __name__,
                        "__doc__": f"toolscan's `{fmt}` format.",
                    },
                ),
            )
        PARSERS[name] = cls
        ToolParserManager.register_module(name=name, module=cls)
    return PARSERS


register()
