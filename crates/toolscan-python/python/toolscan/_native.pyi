"""Type stubs of the extension module (the classes ``toolscan`` re-exports)."""

from typing import Any, Callable, ClassVar, Dict, List, Literal, Mapping, Optional, Sequence, Tuple, Union

__version__: str

FinishReason = Literal["stop", "tool_calls", "length"]

class ToolscanError(Exception):
    """The base of every error toolscan raises."""

class UnknownFormatError(ToolscanError):
    """No format of that name (``toolscan.formats()`` lists the known ones)."""

class OptionsError(ToolscanError):
    """An option's value is not one it takes, or the tools are not an OpenAI ``tools`` array."""

class FinishedError(ToolscanError):
    """The parser was fed after ``finish()``."""

class Text:
    """Text of the answer."""

    __match_args__: ClassVar[Tuple[str]] = ("delta",)
    type: Literal["text"]
    delta: str
    def __init__(self, delta: str) -> None: ...
    def to_dict(self) -> Dict[str, Any]: ...

class Reasoning:
    """Reasoning (with reasoning separation on)."""

    __match_args__: ClassVar[Tuple[str]] = ("delta",)
    type: Literal["reasoning"]
    delta: str
    def __init__(self, delta: str) -> None: ...
    def to_dict(self) -> Dict[str, Any]: ...

class ToolCallStart:
    """A call begins: its index, id and name."""

    __match_args__: ClassVar[Tuple[str, str, str]] = ("index", "id", "name")
    type: Literal["tool_call_start"]
    index: int
    id: str
    name: str
    def __init__(self, index: int, id: str, name: str) -> None: ...
    def to_dict(self) -> Dict[str, Any]: ...

class ToolCallArgs:
    """A piece of a call's arguments (JSON text)."""

    __match_args__: ClassVar[Tuple[str, str]] = ("index", "delta")
    type: Literal["tool_call_args"]
    index: int
    delta: str
    def __init__(self, index: int, delta: str) -> None: ...
    def to_dict(self) -> Dict[str, Any]: ...

class ToolCallEnd:
    """A call is complete; ``arguments`` is the JSON text of an object."""

    __match_args__: ClassVar[Tuple[str, str, str, str]] = ("index", "id", "name", "arguments")
    type: Literal["tool_call_end"]
    index: int
    id: str
    name: str
    arguments: str
    def __init__(self, index: int, id: str, name: str, arguments: str) -> None: ...
    def parsed(self) -> Dict[str, Any]:
        """The arguments as a dict (``json.loads(arguments)``)."""
    def to_dict(self) -> Dict[str, Any]: ...

class Diagnostic:
    """Something was not as the format says, at a byte offset of the input."""

    __match_args__: ClassVar[Tuple[str, str, str]] = ("kind", "offset", "message")
    type: Literal["diagnostic"]
    kind: str
    offset: int
    message: str
    def __init__(self, kind: str, offset: int, message: str) -> None: ...
    def to_dict(self) -> Dict[str, Any]: ...

class Done:
    """The end of the answer, always the last event."""

    __match_args__: ClassVar[Tuple[str]] = ("finish_reason",)
    type: Literal["done"]
    finish_reason: FinishReason
    def __init__(self, finish_reason: str) -> None: ...
    def to_dict(self) -> Dict[str, Any]: ...

Event = Union[Text, Reasoning, ToolCallStart, ToolCallArgs, ToolCallEnd, Diagnostic, Done]

Tools = Union[str, Sequence[Mapping[str, Any]]]

class Parser:
    """A streaming parser for one answer."""

    def __init__(
        self,
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
        ids: Optional[Literal["random", "seeded", "mistral"]] = None,
        seed: Optional[int] = None,
        max_call_bytes: Optional[int] = None,
        max_depth: Optional[int] = None,
        max_holdback: Optional[int] = None,
        max_name_bytes: Optional[int] = None,
    ) -> None: ...
    def feed(self, chunk: Union[str, bytes, bytearray]) -> List[Event]:
        """Feeds the next chunk; returns this chunk's events."""
    def finish(self, *, at_stop: bool = False) -> List[Event]:
        """Ends the answer; returns the last events, ending with ``Done``."""
    @property
    def format(self) -> str: ...
    @property
    def offset(self) -> int: ...
    @property
    def finished(self) -> bool: ...

class ToolCall:
    """One completed call of a ``Response``."""

    index: int
    id: str
    name: str
    arguments: str
    @property
    def diagnostics(self) -> List[Diagnostic]: ...
    def parsed(self) -> Dict[str, Any]: ...
    def to_dict(self) -> Dict[str, Any]: ...

class Response:
    """A whole answer."""

    text: str
    reasoning: Optional[str]
    finish_reason: FinishReason
    @property
    def tool_calls(self) -> List[ToolCall]: ...
    @property
    def diagnostics(self) -> List[Diagnostic]: ...
    def to_dict(self) -> Dict[str, Any]: ...

class FormatInfo:
    """A built-in format."""

    __match_args__: ClassVar[Tuple[str, str, str]] = ("name", "models", "description")
    name: str
    models: str
    description: str

class VllmBuilders:
    """vLLM's ``DeltaMessage``, ``DeltaToolCall`` and ``DeltaFunctionCall``
    built without pydantic's validation (for ``toolscan.vllm``)."""

    def __init__(self, message: type, tool_call: type, function: type) -> None: ...
    def message(self, content: Optional[str], tool_calls: Optional[List[Any]] = None) -> Any: ...
    def tool_call(
        self,
        index: int,
        function: Any,
        id: Optional[str] = None,
        type: Optional[str] = None,
    ) -> Any: ...
    def function(self, name: Optional[str] = None, arguments: Optional[str] = None) -> Any: ...
    def text_message(self, content: str) -> Any: ...
    def args_message(self, index: int, arguments: str) -> Any: ...

class VllmStream:
    """The native streaming path of one request of ``toolscan.vllm``."""

    def __init__(
        self,
        parser: Parser,
        builders: VllmBuilders,
        tool_parser: Any,
        on_diagnostic: Callable[[Diagnostic], Any],
    ) -> None: ...
    def extract_tool_calls_streaming(
        self,
        previous_text: str,
        current_text: str,
        delta_text: str,
        previous_token_ids: Any,
        current_token_ids: Any,
        delta_token_ids: Any,
        request: Any,
    ) -> Any: ...
    def finish(self) -> Any: ...
    @property
    def finished(self) -> bool: ...

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
    ids: Optional[Literal["random", "seeded", "mistral"]] = None,
    seed: Optional[int] = None,
    max_call_bytes: Optional[int] = None,
    max_depth: Optional[int] = None,
    max_holdback: Optional[int] = None,
    max_name_bytes: Optional[int] = None,
) -> Response:
    """Parses a whole answer."""

def formats() -> List[FormatInfo]:
    """The built-in formats, in ``auto``'s order of precedence."""

def format_for_model(model: str) -> Optional[str]:
    """The built-in format a model writes, or None."""
