"""A typed use of toolscan's public API.

``tests/test_stubs.py`` checks it with ``mypy --strict`` (the package's
``[tool.mypy]`` settings), which holds the stubs to what users write, and
runs it, which holds this use to what the package does. The lines marked
``# type: ignore[...]`` in ``_misuse`` are mistakes the stubs must reject:
should they stop being errors, mypy reports the comment as unused.
"""

from __future__ import annotations

import asyncio
from typing import Any, AsyncIterator, Dict, Generator, Iterator, List, Literal, Optional

from openai.types.chat import ChatCompletionChunk
from typing_extensions import assert_never, assert_type

import toolscan
import toolscan.dispatch
import toolscan.openai

#: Hermes's markup (a JSON object between `<tool_call>` tags), split mid-call.
CHUNKS = [
    'Checking.<tool_call>{"name": "get_weather", ',
    '"arguments": {"city": "Paris"}}</tool_call>',
]
ANSWER = "".join(CHUNKS)

TOOLS: List[Dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]


def stream_events() -> List[str]:
    """Feeds the chunks; names what each event is, through a match over every event class."""
    parser = toolscan.Parser("hermes", tools=TOOLS, check_calls="report", ids="seeded", seed=7)
    events: List[toolscan.Event] = []
    for chunk in CHUNKS:
        events.extend(parser.feed(chunk.encode()))
    events.extend(parser.finish())
    assert_type(parser.finished, bool)
    assert_type(parser.offset, int)

    seen: List[str] = []
    for event in events:
        match event:
            case toolscan.Text(delta):
                assert_type(delta, str)
                seen.append("text")
            case toolscan.Reasoning(delta):
                seen.append("reasoning")
            case toolscan.ToolCallStart(index, id, name):
                assert_type(index, int)
                seen.append(f"start {name}")
            case toolscan.ToolCallArgs(index, delta):
                seen.append("args")
            case toolscan.ToolCallEnd(index, id, name, arguments):
                assert_type(arguments, str)
                assert event.parsed() == {"city": "Paris"}
                seen.append(f"end {name}")
            case toolscan.Diagnostic(kind, offset, message):
                assert_type(offset, int)
                seen.append(f"diagnostic {kind}")
            case toolscan.Done(finish_reason):
                assert_type(finish_reason, Literal["stop", "tool_calls", "length"])
                seen.append(f"done {finish_reason}")
            case _:
                assert_never(event)
    return seen


def whole_answer() -> Optional[str]:
    """Parses the answer at once; the format named from the model id."""
    fmt = toolscan.format_for_model("NousResearch/Hermes-3-Llama-3.1-8B")
    response = toolscan.parse(ANSWER, format=fmt or "auto")
    assert_type(response.reasoning, Optional[str])
    assert response.text == "Checking."
    assert response.finish_reason == "tool_calls"
    for call in response.tool_calls:
        assert_type(call, toolscan.ToolCall)
        assert (call.index, call.name, call.parsed()) == (0, "get_weather", {"city": "Paris"})
        assert call.to_dict()["arguments"] == {"city": "Paris"}
    names = [info.name for info in toolscan.formats()]
    assert "hermes" in names
    return fmt


def _chunk(content: Optional[str], finish_reason: Optional[str] = None) -> ChatCompletionChunk:
    return ChatCompletionChunk.model_validate(
        {
            "id": "c1",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": "m",
            "choices": [
                {"index": 0, "delta": {"content": content}, "finish_reason": finish_reason}
            ],
        }
    )


def _upstream() -> Iterator[ChatCompletionChunk]:
    for piece in CHUNKS:
        yield _chunk(piece)
    yield _chunk(None, "stop")


async def _upstream_async() -> AsyncIterator[ChatCompletionChunk]:
    for chunk in _upstream():
        yield chunk


def openai_stream() -> List[str]:
    """`toolscan.openai.wrap` over an iterator of the openai client's chunks: the same kind out."""
    wrapped = toolscan.openai.wrap(_upstream(), format="hermes")
    assert_type(wrapped, Generator[ChatCompletionChunk, None, None])
    names: List[str] = []
    for chunk in wrapped:
        for choice in chunk.choices:
            for call in choice.delta.tool_calls or []:
                if call.function is not None and call.function.name is not None:
                    names.append(call.function.name)
    return names


def openai_stream_async() -> List[str]:
    """The same over an async iterator (an `AsyncStream`)."""

    async def run() -> List[str]:
        out: List[str] = []
        async for chunk in toolscan.openai.wrap(_upstream_async(), format="hermes"):
            assert_type(chunk, ChatCompletionChunk)
            out.extend(c.finish_reason or "" for c in chunk.choices)
        return out

    return asyncio.run(run())


def dispatch_calls() -> List[Dict[str, Any]]:
    """`toolscan.dispatch` over text chunks (sync) and chunk objects (asyncio): each call's result."""

    def get_weather(city: str) -> Dict[str, Any]:
        return {"city": city, "celsius": 21}

    async def get_weather_async(city: str) -> str:
        return city

    outcome = toolscan.dispatch.run(CHUNKS, {"get_weather": get_weather}, "hermes")
    assert_type(outcome, toolscan.dispatch.Outcome)
    for result in outcome.results:
        assert_type(result.error, Optional[BaseException])
        assert result.ok and result.call.parsed() == {"city": "Paris"}
    dispatcher = toolscan.dispatch.Dispatcher({"get_weather": get_weather_async}, "hermes", max_concurrent=2)
    later = asyncio.run(dispatcher.arun(_upstream_async()))
    assert [r.value for r in later.results] == ["Paris"]
    for item in dispatcher.events(_upstream()):
        if isinstance(item, toolscan.dispatch.CallResult):
            assert_type(item.call, toolscan.dispatch.Call)
    return outcome.messages()


def _misuse(parser: toolscan.Parser, text: toolscan.Text) -> None:
    """Not called: each line is an error the stubs must report."""
    toolscan.Parser("hermes", resoning=True)  # type: ignore[call-arg]
    toolscan.Parser("hermes", check_calls="strict")  # type: ignore[arg-type]
    parser.feed(42)  # type: ignore[arg-type]
    parser.finish(True)  # type: ignore[call-arg]
    text.delta = "changed"  # type: ignore[misc]
    toolscan.parse(bytearray(b"x"))  # type: ignore[arg-type]
    toolscan.dispatch.run(CHUNKS, [len])  # type: ignore[arg-type]
    toolscan.dispatch.Dispatcher({"get_weather": len}).run(CHUNKS).text = None  # type: ignore[assignment]

    class Mine(toolscan.Parser):  # type: ignore[misc]
        """The classes cannot be subclassed (a `TypeError` at run time)."""


def main() -> None:
    assert stream_events() == ["text", "start get_weather", "args", "end get_weather", "done tool_calls"]
    assert whole_answer() == "hermes"
    assert openai_stream() == ["get_weather"]
    assert "tool_calls" in openai_stream_async()
    assert [m["role"] for m in dispatch_calls()] == ["assistant", "tool"]


if __name__ == "__main__":
    main()
