"""Type stubs of the extension module (the classes ``toolscan`` re-exports).

They describe the module as the Rust code in ``src/`` builds it, and
``tests/test_stubs.py`` holds them to it (``mypy.stubtest``): each class is
made with ``__new__`` (there is no ``__init__`` to call), none can be
subclassed (``@final``), the events and results are read-only. ``Event``,
``FinishReason`` and ``Tools`` are names for annotations only: they exist in
these stubs, not in the module (``toolscan.Event`` is the one to import at
run time).
"""

from typing import Any, Callable, ClassVar, Dict, List, Literal, Mapping, Optional, Sequence, Tuple, Union, final

from typing_extensions import TypeAlias

__all__ = [
    "__version__",
    "Parser",
    "Text",
    "Reasoning",
    "ToolCallStart",
    "ToolCallArgs",
    "ToolCallEnd",
    "Diagnostic",
    "Done",
    "Response",
    "ToolCall",
    "FormatInfo",
    "VllmBuilders",
    "VllmStream",
    "ChunkRewriter",
    "rewrite_body",
    "parse",
    "formats",
    "format_for_model",
    "ToolscanError",
    "UnknownFormatError",
    "OptionsError",
    "FinishedError",
]

__version__: str

#: Why an answer ended (``Done.finish_reason``, ``Response.finish_reason``).
FinishReason: TypeAlias = Literal["stop", "tool_calls", "length"]

#: The ``tools`` option: the OpenAI ``tools`` array, as JSON text or as
#: Python objects (``json.dumps`` makes them JSON text).
Tools: TypeAlias = Union[str, Sequence[Mapping[str, Any]]]

class ToolscanError(Exception):
    """The base of every error toolscan raises."""

class UnknownFormatError(ToolscanError):
    """No format of that name (``toolscan.formats()`` lists the known ones)."""

class OptionsError(ToolscanError):
    """An option's value is not one it takes, or the tools are not an OpenAI ``tools`` array."""

class FinishedError(ToolscanError):
    """The parser was fed after ``finish()``."""

@final
class Text:
    """Text of the answer: ``Text(delta)``, type ``"text"``."""

    __match_args__ = ("delta",)
    def __new__(cls, delta: str) -> "Text": ...
    @property
    def type(self) -> Literal["text"]:
        """The contract's name of this event."""
    @property
    def delta(self) -> str: ...
    def to_dict(self) -> Dict[str, Any]:
        """The JSON object ``toolscan parse --output events`` writes for this event, as a dict."""

@final
class Reasoning:
    """Reasoning (with reasoning separation on; Harmony's analysis channel always):
    ``Reasoning(delta)``, type ``"reasoning"``."""

    __match_args__ = ("delta",)
    def __new__(cls, delta: str) -> "Reasoning": ...
    @property
    def type(self) -> Literal["reasoning"]:
        """The contract's name of this event."""
    @property
    def delta(self) -> str: ...
    def to_dict(self) -> Dict[str, Any]:
        """The JSON object ``toolscan parse --output events`` writes for this event, as a dict."""

@final
class ToolCallStart:
    """A call begins: ``ToolCallStart(index, id, name)``, type ``"tool_call_start"``."""

    __match_args__ = ("index", "id", "name")
    def __new__(cls, index: int, id: str, name: str) -> "ToolCallStart": ...
    @property
    def type(self) -> Literal["tool_call_start"]:
        """The contract's name of this event."""
    @property
    def index(self) -> int: ...
    @property
    def id(self) -> str: ...
    @property
    def name(self) -> str: ...
    def to_dict(self) -> Dict[str, Any]:
        """The JSON object ``toolscan parse --output events`` writes for this event, as a dict."""

@final
class ToolCallArgs:
    """A piece of a call's arguments (JSON text): ``ToolCallArgs(index, delta)``, type
    ``"tool_call_args"``. The pieces of a call add up to its ``ToolCallEnd.arguments``."""

    __match_args__ = ("index", "delta")
    def __new__(cls, index: int, delta: str) -> "ToolCallArgs": ...
    @property
    def type(self) -> Literal["tool_call_args"]:
        """The contract's name of this event."""
    @property
    def index(self) -> int: ...
    @property
    def delta(self) -> str: ...
    def to_dict(self) -> Dict[str, Any]:
        """The JSON object ``toolscan parse --output events`` writes for this event, as a dict."""

@final
class ToolCallEnd:
    """A call is complete: ``ToolCallEnd(index, id, name, arguments)``, type ``"tool_call_end"``.
    ``arguments`` is the JSON text of an object as the model wrote it; ``parsed()`` gives it as a
    dict."""

    __match_args__ = ("index", "id", "name", "arguments")
    def __new__(cls, index: int, id: str, name: str, arguments: str) -> "ToolCallEnd": ...
    @property
    def type(self) -> Literal["tool_call_end"]:
        """The contract's name of this event."""
    @property
    def index(self) -> int: ...
    @property
    def id(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def arguments(self) -> str: ...
    def parsed(self) -> Dict[str, Any]:
        """The arguments as a dict (``json.loads(arguments)``, a new one on each call)."""
    def to_dict(self) -> Dict[str, Any]:
        """The JSON object ``toolscan parse --output events`` writes for this event, as a dict
        (the arguments parsed)."""

@final
class Diagnostic:
    """Something was not as the format says: ``Diagnostic(kind, offset, message)``, type
    ``"diagnostic"``. ``kind`` is the contract's name (``"malformed"``, ``"truncated"``,
    ``"limit"``, …), ``offset`` the byte offset in the whole input."""

    __match_args__ = ("kind", "offset", "message")
    def __new__(cls, kind: str, offset: int, message: str) -> "Diagnostic": ...
    @property
    def type(self) -> Literal["diagnostic"]:
        """The contract's name of this event."""
    @property
    def kind(self) -> str: ...
    @property
    def offset(self) -> int: ...
    @property
    def message(self) -> str: ...
    def to_dict(self) -> Dict[str, Any]:
        """The JSON object ``toolscan parse --output events`` writes for this event, as a dict."""

@final
class Done:
    """The end of the answer, always the last event: ``Done(finish_reason)``, type ``"done"``;
    ``finish_reason`` is ``"stop"``, ``"tool_calls"`` or ``"length"``."""

    __match_args__ = ("finish_reason",)
    def __new__(cls, finish_reason: str) -> "Done": ...
    @property
    def type(self) -> Literal["done"]:
        """The contract's name of this event."""
    @property
    def finish_reason(self) -> FinishReason: ...
    def to_dict(self) -> Dict[str, Any]:
        """The JSON object ``toolscan parse --output events`` writes for this event, as a dict."""

#: Any event a ``Parser`` returns (``toolscan.Event`` at run time).
Event: TypeAlias = Union[Text, Reasoning, ToolCallStart, ToolCallArgs, ToolCallEnd, Diagnostic, Done]

@final
class Parser:
    """A streaming parser for one answer.

    ``feed(chunk)`` takes the next piece of the model's output (``str``, or ``bytes``, in which
    a character may be split across chunks) and returns the events it decides, in order;
    ``finish()`` returns the last ones, ending with ``Done``. Any chunking of the same output
    gives the same events once consecutive deltas are merged.
    """

    def __new__(
        cls,
        format: Optional[str] = None,
        *,
        model: Optional[str] = None,
        tools: Optional[Tools] = None,
        reasoning: bool = False,
        starts_in_reasoning: bool = False,
        calls_in_reasoning: Optional[Literal["text", "call"]] = None,
        check_calls: Optional[Literal["off", "report", "reject"]] = None,
        complete_at_stop: bool = False,
        max_calls: Optional[int] = None,
        only_tool: Optional[str] = None,
        normalize_tool_names: bool = False,
        ids: Optional[Literal["random", "seeded", "mistral"]] = None,
        seed: Optional[int] = None,
        max_call_bytes: Optional[int] = None,
        max_depth: Optional[int] = None,
        max_holdback: Optional[int] = None,
        max_name_bytes: Optional[int] = None,
    ) -> "Parser": ...
    def feed(self, chunk: Union[str, bytes, bytearray]) -> List[Event]:
        """Feeds the next chunk (``str`` or ``bytes``); returns this chunk's events.

        Raises ``FinishedError`` after ``finish()``."""
    def finish(self, *, at_stop: bool = False) -> List[Event]:
        """Ends the answer; returns the last events, the last of which is ``Done``. With
        ``at_stop=True`` (the server stopped at a stop sequence) and the ``complete_at_stop``
        option, a call whose closing markup the stop sequence cut is completed. A second
        ``finish()`` returns ``[]``."""
    @property
    def format(self) -> str:
        """The format this parser reads (its canonical name, or ``"auto"``)."""
    @property
    def offset(self) -> int:
        """How many bytes were fed so far."""
    @property
    def finished(self) -> bool:
        """Whether ``finish()`` was called."""

@final
class ToolCall:
    """One completed call of a ``Response``."""

    # Equal when their fields are, so not hashable.
    __hash__: ClassVar[None]  # type: ignore[assignment]
    @property
    def index(self) -> int:
        """The call's index among the answer's calls (as in its events)."""
    @property
    def id(self) -> str:
        """The call id (the format's, or one minted for it)."""
    @property
    def name(self) -> str:
        """The tool's name."""
    @property
    def arguments(self) -> str:
        """The arguments: the JSON text of an object, as the model wrote it."""
    @property
    def diagnostics(self) -> List[Diagnostic]:
        """The schema check's diagnostics about this call (``check_calls``)."""
    def parsed(self) -> Dict[str, Any]:
        """The arguments as a dict (``json.loads(arguments)``)."""
    def to_dict(self) -> Dict[str, Any]:
        """``{"id", "name", "arguments"}`` (arguments parsed), plus ``"diagnostics"`` when there
        are some: a call of ``--output final``."""

@final
class Response:
    """A whole answer: its text, reasoning, completed calls, diagnostics and finish reason."""

    @property
    def text(self) -> str:
        """Every text delta, concatenated."""
    @property
    def reasoning(self) -> Optional[str]:
        """Every reasoning delta, concatenated, or None when there was none (reasoning
        separation off, or no reasoning; Harmony's analysis channel is reasoning either way)."""
    @property
    def finish_reason(self) -> FinishReason: ...
    @property
    def tool_calls(self) -> List[ToolCall]:
        """The completed calls, in order."""
    @property
    def diagnostics(self) -> List[Diagnostic]:
        """Every diagnostic, in order."""
    def to_dict(self) -> Dict[str, Any]:
        """The object ``toolscan parse --output final`` prints, as a dict."""

@final
class FormatInfo:
    """A built-in format: its name, the models that write it, and what it is."""

    __match_args__ = ("name", "models", "description")
    @property
    def name(self) -> str:
        """The format's name (what ``Parser(format=...)`` takes)."""
    @property
    def models(self) -> str:
        """The models that write it."""
    @property
    def description(self) -> str:
        """One line about the format."""

@final
class VllmBuilders:
    """vLLM's ``DeltaMessage``, ``DeltaToolCall`` and ``DeltaFunctionCall`` built without
    pydantic's validation (for ``toolscan.vllm``):
    ``VllmBuilders(DeltaMessage, DeltaToolCall, DeltaFunctionCall)``."""

    def __new__(cls, message: type, tool_call: type, function: type) -> "VllmBuilders": ...
    def message(self, content: Optional[str], tool_calls: Optional[List[Any]] = None) -> Any:
        """``DeltaMessage(content=content)``, with ``tool_calls`` if not empty."""
    def tool_call(
        self,
        index: int,
        function: Any,
        id: Optional[str] = None,
        type: Optional[str] = None,
    ) -> Any:
        """``DeltaToolCall(index=index, function=function)``, with ``id`` and ``type`` if
        ``id`` is given."""
    def function(self, name: Optional[str] = None, arguments: Optional[str] = None) -> Any:
        """``DeltaFunctionCall(name=name, arguments=arguments)``, the fields given."""

@final
class VllmStream:
    """The streaming path of one request of ``toolscan.vllm``: the OpenAI delta rules of
    ``toolscan sse`` (a call's one entry, whole, at its end; live argument deltas with
    ``stream_arguments``), as vLLM's delta objects made by ``builders`` (a ``VllmBuilders``,
    or the Python callables ``(message, tool_call, function)``)."""

    def __new__(
        cls,
        parser: Parser,
        builders: Union[
            VllmBuilders, Tuple[Callable[..., Any], Callable[..., Any], Callable[..., Any]]
        ],
        tool_parser: Any,
        on_diagnostic: Callable[[Diagnostic], object],
        stream_arguments: bool = False,
    ) -> "VllmStream": ...
    def extract_tool_calls_streaming(
        self,
        previous_text: Any,
        current_text: Any,
        delta_text: Optional[str],
        previous_token_ids: Any,
        current_token_ids: Any,
        delta_token_ids: Any,
        request: Any,
    ) -> Any:
        """vLLM's ``ToolParser.extract_tool_calls_streaming``: feeds ``delta_text`` (the other
        arguments are not read) and returns the ``DeltaMessage`` of what it decided, or None
        (also after ``finish()``)."""
    def finish(self) -> Any:
        """The end of the stream: the ``DeltaMessage`` of what the parser held back and the
        calls it could only close now, or None."""
    @property
    def finished(self) -> bool:
        """Whether ``finish()`` was called."""

def parse(
    text: Union[str, bytes],
    format: Optional[str] = None,
    *,
    model: Optional[str] = None,
    tools: Optional[Tools] = None,
    reasoning: bool = False,
    starts_in_reasoning: bool = False,
    calls_in_reasoning: Optional[Literal["text", "call"]] = None,
    check_calls: Optional[Literal["off", "report", "reject"]] = None,
    complete_at_stop: bool = False,
    max_calls: Optional[int] = None,
    only_tool: Optional[str] = None,
    normalize_tool_names: bool = False,
    ids: Optional[Literal["random", "seeded", "mistral"]] = None,
    seed: Optional[int] = None,
    max_call_bytes: Optional[int] = None,
    max_depth: Optional[int] = None,
    max_holdback: Optional[int] = None,
    max_name_bytes: Optional[int] = None,
) -> Response:
    """Parses a whole answer (``str`` or ``bytes``) into a ``Response``; takes the options
    ``Parser`` takes."""

@final
class ChunkRewriter:
    """The rewrite of one streamed ``chat.completions`` answer, chunk by chunk (what
    ``toolscan.openai.wrap`` runs): ``chunk(json)`` takes the next chunk's JSON text and returns
    what to send in its place, in order (``None``: the chunk as it came; else a chunk's JSON
    text); ``end()`` what the choices still held when the stream ended. The options are
    ``Parser``'s, plus ``complete_at_stop`` (default ``True``) and ``stream_arguments``
    (default ``False``: a call's entry goes out whole once the call ended; a call that breaks
    never produces one)."""

    def __new__(cls, format: Optional[str] = None, **options: Any) -> "ChunkRewriter": ...
    def chunk(self, data: str) -> List[Optional[str]]:
        """Rewrites the next chunk (its JSON text)."""
    def end(self) -> List[str]:
        """Ends every choice still open: what they held, as added chunks."""

def rewrite_body(data: str, format: Optional[str] = None, **options: Any) -> Optional[str]:
    """Rewrites a whole ``chat.completion`` (its JSON text): the rewritten completion's JSON
    text, or ``None`` when nothing changed. The options are ``ChunkRewriter``'s."""

def formats() -> List[FormatInfo]:
    """The built-in formats, in ``auto``'s order of precedence."""

def format_for_model(model: str) -> Optional[str]:
    """The built-in format a model writes, from its id (a Hugging Face repo id, a served model
    name: ``"Qwen/Qwen3-8B"``), or None when it is not known (then ``"auto"`` detects the format
    from the content)."""
