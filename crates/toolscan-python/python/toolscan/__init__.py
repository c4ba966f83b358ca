"""toolscan: streaming extraction of tool calls from LLM output.

Feed the model's output as it arrives; get text deltas, argument deltas and
completed calls as soon as each is decided::

    import toolscan

    p = toolscan.Parser("hermes")
    for chunk in ['Checking.<tool_call>{"name": "get_weather", ',
                  '"arguments": {"city": "Paris"}}</tool_call>']:
        for event in p.feed(chunk):
            print(event)
    print(p.finish())

``toolscan.parse(text, format=...)`` does a whole answer at once,
``toolscan.formats()`` lists the formats, ``toolscan.format_for_model(id)``
names the one a model writes. ``toolscan.openai`` rewrites the ``openai``
client's chat-completions streams; ``toolscan.dispatch`` runs each tool the
moment its call closes, while the stream goes on.
"""

from typing import Union

from ._native import (
    Diagnostic,
    Done,
    FinishedError,
    FormatInfo,
    OptionsError,
    Parser,
    Reasoning,
    Response,
    Text,
    ToolCall,
    ToolCallArgs,
    ToolCallEnd,
    ToolCallStart,
    ToolscanError,
    UnknownFormatError,
    __version__,
    format_for_model,
    formats,
    parse,
)

#: Any event a ``Parser`` returns.
Event = Union[Text, Reasoning, ToolCallStart, ToolCallArgs, ToolCallEnd, Diagnostic, Done]

__all__ = [
    "Diagnostic",
    "Done",
    "Event",
    "FinishedError",
    "FormatInfo",
    "OptionsError",
    "Parser",
    "Reasoning",
    "Response",
    "Text",
    "ToolCall",
    "ToolCallArgs",
    "ToolCallEnd",
    "ToolCallStart",
    "ToolscanError",
    "UnknownFormatError",
    "__version__",
    "format_for_model",
    "formats",
    "parse",
]
