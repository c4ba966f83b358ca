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

The deltas follow the OpenAI delta rules of ``toolscan sse``, the proxy and
``toolscan.openai`` (the same native code, ``toolscan._native.VllmStream``):
a call's one entry, with its id, name and all its arguments, goes out in the
delta that completes it — still long before the stream ends —, and a block
that fails never produces one. Set ``TOOLSCAN_STREAM_ARGUMENTS=1`` in
``vllm serve``'s environment for live argument deltas (a call's first entry
at its start, then its arguments as they come, as vLLM's own parsers send
them), for UIs that show them; a call that then breaks has sent an entry
whose arguments are not JSON, and its text follows as content.

From a request's first delta on, vLLM's call goes straight to the native
stream, and vLLM's delta objects are built in Rust, without pydantic's
validation, as ``model_construct`` would leave them. They are checked
against validated objects at import; should a later vLLM or pydantic differ,
the same stream builds them with the Python builders of this module instead
(the same answers, slower).

Where it differs from vLLM's own parsers (deliberately):

- Text after or between calls is kept as ``content``; vLLM's Hermes parser,
  among others, drops everything after the first ``<tool_call>``.
- A block that starts like a call but turns out malformed, or a call cut off
  by the end of the stream, comes back as ``content`` (its bytes, verbatim),
  with no call entry (unless arguments stream live, above).
- A call's arguments arrive in one entry at its end, not token by token
  (unless arguments stream live).
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
import os
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
from toolscan import _native

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
    #: Live argument deltas (``TOOLSCAN_STREAM_ARGUMENTS=1``); otherwise a
    #: call's one entry goes out whole at its end (see the module docs).
    stream_arguments: ClassVar[bool] = os.environ.get("TOOLSCAN_STREAM_ARGUMENTS", "") not in (
        "",
        "0",
        "false",
    )
    # vLLM then calls `finish_streaming()` at the end of the stream and passes
    # each delta without accumulating the answer (see the module docs).
    engine_based_streaming = True

    def __init__(self, tokenizer: Any, tools: list[Any] | None = None):
        super().__init__(tokenizer, tools)
        self._parser: toolscan.Parser | None = None
        # The streaming path of this request (see `_stream_for`).
        self._stream: Any = None
        self._finished = False
        self._passthrough = False
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

    def _stream_for(self, parser: toolscan.Parser) -> Any:
        """The streaming path over `parser` (`toolscan._native.VllmStream`),
        bound as this instance's `extract_tool_calls_streaming` so that vLLM's
        calls go straight to it. Its objects come from the native builders,
        or from the Python ones where those did not pass the import-time
        check (`_native_builders`)."""
        builders = _NATIVE if _NATIVE is not None else (_Message, _ToolCall, _Function)
        stream = _native.VllmStream(
            parser, builders, self, self._diagnostic, self.stream_arguments
        )
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
            self._stream = self._stream_for(parser)
        # vLLM calls the stream directly after this first delta.
        return self._stream.extract_tool_calls_streaming(
            previous_text,
            current_text,
            delta_text,
            previous_token_ids,
            current_token_ids,
            delta_token_ids,
            request,
        )

    def finish_streaming(self) -> DeltaMessage | None:
        """The end of the stream: what the parser held back, and the calls it
        could only close now."""
        parser = self._parser
        if parser is None:
            return None
        self._parser, self._finished = None, True
        return self._stream.finish()

    # -- diagnostics -------------------------------------------------------------

    def _diagnostic(self, diagnostic: toolscan.Diagnostic) -> None:
        self.diagnostics.append(diagnostic)
        logger.debug(
            "toolscan: %s at byte %d: %s",
            diagnostic.kind,
            diagnostic.offset,
            diagnostic.message,
        )


#: Builders of vLLM's delta objects: `message(content, tool_calls=None)`,
#: `tool_call(index, function, id=None, type=None)`,
#: `function(name=None, arguments=None)` (what `VllmStream` takes).
_Builders = Tuple[Callable[..., Any], Callable[..., Any], Callable[..., Any]]


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
        if name is None:
            return DeltaFunctionCall(arguments=arguments)
        return DeltaFunctionCall(name=name, arguments=arguments)

    return message, tool_call, function


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
        set_fields(f, {k for k, v in (("name", name), ("arguments", arguments)) if v is not None})
        set_extra(f, {} if f_extra else None)
        set_private(f, None)
        return f

    return message, tool_call, function


def _samples(
    message: Callable[..., Any],
    tool_call: Callable[..., Any],
    function: Callable[..., Any],
) -> list[Any]:
    return [
        message("t"),
        message(None, [tool_call(2, function(arguments='"x'))]),
        message(
            None,
            [
                tool_call(0, function(name="f"), id="call_1", type="function"),
                tool_call(0, function(arguments="{")),
            ],
        ),
        message("a", [tool_call(1, function(arguments="}"))]),
        message(None, [tool_call(3, function(name="g", arguments="{}"), id="c", type="function")]),
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


_Message, _ToolCall, _Function = _builders()


def _native_builders() -> _native.VllmBuilders | None:
    """vLLM's delta objects built in Rust (`toolscan._native.VllmBuilders`,
    the same construction as `_fast_builders`), for the native streaming
    path; checked as `_builders` checks the Python ones. None, and the
    Python path, where they differ from validated objects."""
    try:
        native = _native.VllmBuilders(DeltaMessage, DeltaToolCall, DeltaFunctionCall)
        built: _Builders = (native.message, native.tool_call, native.function)
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
