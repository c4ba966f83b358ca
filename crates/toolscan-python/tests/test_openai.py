"""toolscan.openai on the `openai` package's own types: streamed chunks
(objects and dicts, sync and async) and whole completions, accumulated with
the client's own helper (`ChatCompletionStreamState`)."""

import asyncio
import json

import pytest
from openai.lib.streaming.chat import ChatCompletionStreamState
from openai.types.chat import ChatCompletion, ChatCompletionChunk

import toolscan
import toolscan.openai

CALL = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}}\n</tool_call>'
ANSWER = "Let me check the weather.\n" + CALL


def chunk_dict(content=None, finish_reason=None, index=0, tool_calls=None, **extra):
    delta = {}
    if content is not None:
        delta["content"] = content
    if tool_calls is not None:
        delta["tool_calls"] = tool_calls
    d = {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1700000000,
        "model": "qwen3",
        "choices": [{"index": index, "delta": delta, "finish_reason": finish_reason}],
    }
    d.update(extra)
    return d


def stream_dicts(text, size=5, finish_reason="stop"):
    out = [chunk_dict(content="", **{})]
    out[0]["choices"][0]["delta"]["role"] = "assistant"
    pieces = [text[i : i + size] for i in range(0, len(text), size)]
    out += [chunk_dict(content=p) for p in pieces]
    out.append(chunk_dict(finish_reason=finish_reason))
    return out


def stream_objects(text, size=5, finish_reason="stop"):
    return [ChatCompletionChunk.model_validate(d) for d in stream_dicts(text, size, finish_reason)]


def accumulate(chunks):
    state = ChatCompletionStreamState()
    for c in chunks:
        state.handle_chunk(c)
    return state.get_final_completion()


def test_wrapped_stream_accumulates_to_the_call_with_the_clients_helper():
    out = list(toolscan.openai.wrap(stream_objects(ANSWER), format="hermes"))
    assert all(isinstance(c, ChatCompletionChunk) for c in out)
    final = accumulate(out)
    choice = final.choices[0]
    assert choice.finish_reason == "tool_calls"
    assert choice.message.content.strip() == "Let me check the weather."
    [call] = choice.message.tool_calls
    assert call.type == "function"
    assert call.id.startswith("call_")
    assert call.function.name == "get_weather"
    assert json.loads(call.function.arguments) == {"city": "Paris", "unit": "celsius"}


def test_content_holds_only_text_and_calls_come_as_entries():
    out = list(toolscan.openai.wrap(stream_objects(ANSWER, size=3), format="hermes"))
    text = "".join(c.choices[0].delta.content or "" for c in out if c.choices)
    assert "<tool_call>" not in text and "get_weather" not in text
    entries = [tc for c in out if c.choices for tc in (c.choices[0].delta.tool_calls or [])]
    first, rest = entries[0], entries[1:]
    assert (first.index, first.type, first.function.name) == (0, "function", "get_weather")
    assert first.id
    assert all(e.id is None and e.function.name is None for e in rest)
    arguments = "".join(e.function.arguments or "" for e in entries)
    assert json.loads(arguments) == {"city": "Paris", "unit": "celsius"}


def test_finish_reason_comes_in_a_chunk_after_the_last_entries():
    out = list(toolscan.openai.wrap(stream_objects(ANSWER, size=400), format="hermes"))
    last = out[-1].choices[0]
    assert last.finish_reason == "tool_calls"
    assert not last.delta.tool_calls
    assert out[-2].choices[0].delta.tool_calls
    assert out[-2].choices[0].finish_reason is None


def test_dict_chunks_give_dict_chunks():
    out = list(toolscan.openai.wrap(stream_dicts(ANSWER), format="hermes"))
    assert all(isinstance(c, dict) for c in out)
    final = accumulate(ChatCompletionChunk.model_validate(c) for c in out)
    assert final.choices[0].message.tool_calls[0].function.name == "get_weather"


def test_plain_text_chunks_pass_through_as_they_came():
    chunks = stream_objects("Just an answer, no tools.", size=4)
    out = list(toolscan.openai.wrap(chunks, format="hermes"))
    assert [id(c) for c in out] == [id(c) for c in chunks]
    assert accumulate(out).choices[0].finish_reason == "stop"


def test_held_back_text_is_sent_when_released():
    # "<tool" may begin a marker: held, then released as text.
    chunks = stream_objects("a <tool", size=100) + []
    chunks.insert(-1, ChatCompletionChunk.model_validate(chunk_dict(content="s> b")))
    out = list(toolscan.openai.wrap(chunks, format="hermes"))
    text = "".join(c.choices[0].delta.content or "" for c in out if c.choices)
    assert text == "a <tools> b"


def test_a_stream_without_finish_reason_gets_what_was_held_at_its_end():
    chunks = stream_objects(ANSWER[:-3], size=7)[:-1]  # cut inside `</tool_call>`, no finish
    chunks.append(ChatCompletionChunk.model_validate(chunk_dict(content="ll>")))
    out = list(toolscan.openai.wrap(chunks, format="hermes"))
    assert out[-1].choices[0].finish_reason == "tool_calls"
    assert accumulate(out).choices[0].message.tool_calls[0].function.name == "get_weather"


def test_usage_chunk_ends_the_choices_first():
    chunks = stream_dicts(ANSWER)[:-1]
    usage = {"prompt_tokens": 10, "completion_tokens": 20, "total_tokens": 30}
    chunks.append({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "qwen3", "choices": [], "usage": usage})
    out = list(toolscan.openai.wrap(chunks, format="hermes"))
    assert out[-1]["usage"] == usage and out[-1]["choices"] == []
    assert out[-2]["choices"][0]["finish_reason"] == "tool_calls"


def test_native_tool_calls_keep_their_index_unless_a_text_call_took_it():
    chunks = stream_dicts(CALL, size=200, finish_reason=None)[:-1]
    native = {"index": 0, "id": "call_native", "type": "function", "function": {"name": "lookup", "arguments": "{}"}}
    chunks.append(chunk_dict(tool_calls=[native], finish_reason="tool_calls"))
    out = list(toolscan.openai.wrap(chunks, format="hermes"))
    entries = [tc for c in out for ch in c["choices"] for tc in (ch["delta"].get("tool_calls") or [])]
    assert [(e["index"], e.get("id")) for e in entries if "id" in e][1] == (1, "call_native")


def test_reasoning_goes_to_reasoning_content():
    chunks = stream_objects("<think>Paris, probably.</think>" + CALL, size=6)
    out = list(toolscan.openai.wrap(chunks, format="hermes", reasoning=True))
    reasoning = "".join(getattr(c.choices[0].delta, "reasoning_content", None) or "" for c in out if c.choices)
    assert reasoning == "Paris, probably."
    assert accumulate(out).choices[0].message.tool_calls[0].function.name == "get_weather"


def test_every_choice_has_its_own_parser_and_ids():
    chunks = []
    for i in range(0, len(CALL), 9):
        for index in (0, 1):
            chunks.append(chunk_dict(content=CALL[i : i + 9], index=index))
    chunks.append(chunk_dict(finish_reason="stop", index=0))
    chunks.append(chunk_dict(finish_reason="stop", index=1))
    out = list(toolscan.openai.wrap(chunks, format="hermes", ids="seeded"))
    ids = {}
    for c in out:
        for ch in c["choices"]:
            for tc in ch["delta"].get("tool_calls") or []:
                if "id" in tc:
                    ids[ch["index"]] = tc["id"]
    assert len(ids) == 2 and ids[0] != ids[1]


def test_reject_sends_only_calls_that_pass_the_check():
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {
        "type": "object", "properties": {"city": {"type": "string"}, "unit": {"enum": ["celsius"]}},
        "required": ["city"]}}}]
    bad = '<tool_call>{"name": "get_weather", "arguments": {"unit": "kelvin"}}</tool_call>'
    out = list(toolscan.openai.wrap(stream_objects(bad + CALL, size=4), format="hermes", tools=tools, check_calls="reject"))
    final = accumulate(out)
    [call] = final.choices[0].message.tool_calls
    assert json.loads(call.function.arguments)["city"] == "Paris"
    assert "kelvin" in final.choices[0].message.content


BROKEN = 'Checking.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": </tool_call>\nSorry.'


def test_a_call_that_breaks_after_it_began_is_content_never_an_entry():
    # No phantom call: the client's helper, given the tool's schema, would
    # parse the arguments of every entry it received.
    for chunks in (stream_objects(BROKEN, size=4), stream_dicts(BROKEN, size=4)):
        out = list(toolscan.openai.wrap(chunks, format="hermes"))
        for c in out:
            delta = c["choices"][0]["delta"] if isinstance(c, dict) else c.choices[0].delta.model_dump()
            assert not delta.get("tool_calls"), c
        if isinstance(out[0], dict):
            continue
        final = accumulate(out)
        assert final.choices[0].message.content == BROKEN
        assert not final.choices[0].message.tool_calls
        assert final.choices[0].finish_reason == "stop"


def test_a_call_cut_by_the_token_limit_is_content_with_length():
    cut = ANSWER[: -len('celsius"}}\n</tool_call>')]
    out = list(toolscan.openai.wrap(stream_objects(cut, size=6, finish_reason="length"), format="hermes"))
    assert all(not c.choices[0].delta.tool_calls for c in out)
    assert "".join(c.choices[0].delta.content or "" for c in out) == cut
    assert [c.choices[0].finish_reason for c in out if c.choices[0].finish_reason] == ["length"]


def test_a_complete_call_is_one_entry_with_all_its_arguments():
    out = list(toolscan.openai.wrap(stream_dicts(ANSWER, size=3), format="hermes"))
    entries = [e for c in out for e in c["choices"][0]["delta"].get("tool_calls") or []]
    assert len(entries) == 1
    assert json.loads(entries[0]["function"]["arguments"]) == {"city": "Paris", "unit": "celsius"}


def test_stream_arguments_sends_the_deltas_as_they_come():
    out = list(toolscan.openai.wrap(stream_dicts(ANSWER, size=3), format="hermes", stream_arguments=True))
    entries = [e for c in out for e in c["choices"][0]["delta"].get("tool_calls") or []]
    assert len(entries) > 2
    assert entries[0]["function"]["name"] == "get_weather"
    assert json.loads("".join(e["function"]["arguments"] for e in entries)) == {"city": "Paris", "unit": "celsius"}
    with pytest.raises(toolscan.OptionsError):
        toolscan.openai.wrap(iter([]), format="hermes", stream_arguments="yes")


def test_async_streams_are_wrapped_too():
    async def source():
        for c in stream_objects(ANSWER):
            yield c

    async def main():
        wrapped = toolscan.openai.wrap(source(), format="hermes")
        assert hasattr(wrapped, "__aiter__")
        return [c async for c in wrapped]

    out = asyncio.run(main())
    assert accumulate(out).choices[0].message.tool_calls[0].function.name == "get_weather"

    async def main_explicit():
        return [c async for c in toolscan.openai.wrap_async(source(), format="hermes")]

    assert len(asyncio.run(main_explicit())) == len(out)


class Upstream:
    """An upstream stream that counts what was read and whether it was closed
    (as ``openai.Stream`` releases its response in ``close()``)."""

    def __init__(self, chunks):
        self.chunks = chunks
        self.read = 0
        self.closed = 0

    def __iter__(self):
        for c in self.chunks:
            self.read += 1
            yield c

    def close(self):
        self.closed += 1


def test_the_upstream_is_closed_when_the_consumer_stops_early():
    up = Upstream(stream_objects(ANSWER))
    wrapped = toolscan.openai.wrap(up, format="hermes")
    first = next(wrapped)
    assert first.choices[0].delta.role == "assistant"
    assert up.closed == 0
    wrapped.close()
    assert up.closed == 1
    assert up.read < len(up.chunks)
    # A `for` loop left with `break`, the wrapper dropped.
    up = Upstream(stream_objects(ANSWER))
    for _ in toolscan.openai.wrap(up, format="hermes"):
        break
    assert up.closed == 1


def test_the_upstream_is_closed_at_the_end_of_the_stream():
    up = Upstream(stream_objects(ANSWER))
    out = list(toolscan.openai.wrap(up, format="hermes"))
    assert up.read == len(up.chunks) and up.closed == 1
    assert accumulate(out).choices[0].message.tool_calls[0].function.name == "get_weather"


def test_an_async_upstream_is_closed_when_the_consumer_stops_early():
    closed = []

    class AsyncUpstream:
        def __init__(self):
            self.chunks = iter(stream_objects(ANSWER))

        def __aiter__(self):
            return self

        async def __anext__(self):
            try:
                return next(self.chunks)
            except StopIteration:
                raise StopAsyncIteration from None

        async def close(self):  # as `openai.AsyncStream.close`
            closed.append("close")

    async def main():
        wrapped = toolscan.openai.wrap(AsyncUpstream(), format="hermes")
        async for _ in wrapped:
            break
        await wrapped.aclose()

    asyncio.run(main())
    assert closed == ["close"]


def completion(content, finish_reason="stop"):
    return ChatCompletion.model_validate({
        "id": "chatcmpl-2", "object": "chat.completion", "created": 1700000000, "model": "qwen3",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": finish_reason}],
    })


def test_wrap_response_rewrites_a_whole_completion():
    out = toolscan.openai.wrap_response(completion(ANSWER), format="hermes")
    assert isinstance(out, ChatCompletion)
    choice = out.choices[0]
    assert choice.finish_reason == "tool_calls"
    assert choice.message.content.strip() == "Let me check the weather."
    [call] = choice.message.tool_calls
    assert call.function.name == "get_weather"
    assert json.loads(call.function.arguments) == {"city": "Paris", "unit": "celsius"}


def test_wrap_response_content_is_none_when_only_calls():
    out = toolscan.openai.wrap_response(completion(CALL), format="hermes")
    assert out.choices[0].message.content is None


def test_wrap_response_keeps_length_and_unchanged_completions():
    plain = completion("No calls here.")
    assert toolscan.openai.wrap_response(plain, format="hermes") is plain
    cut = toolscan.openai.wrap_response(completion(CALL, finish_reason="length"), format="hermes")
    assert cut.choices[0].finish_reason == "length"


def test_bad_options_raise_at_once():
    with pytest.raises(toolscan.UnknownFormatError):
        toolscan.openai.wrap(iter([]), format="no-such-format")
    with pytest.raises(toolscan.OptionsError):
        toolscan.openai.wrap(iter([]), format="hermes", check_calls="sometimes")


# The same rewrite as `toolscan sse`: the same streams through both (when
# the binary is built) give equal chunks.

from rust_reference import CLI  # noqa: E402


def sse_cli(chunks, *args):
    import subprocess

    body = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
    out = subprocess.run([str(CLI), "sse", *args], input=body.encode(), capture_output=True, check=True)
    lines = [line[len("data: "):] for line in out.stdout.decode().splitlines() if line.startswith("data: ")]
    assert lines[-1] == "[DONE]"
    return [json.loads(line) for line in lines[:-1]]


def two_choices():
    chunks = []
    for i in range(0, len(ANSWER), 9):
        for index in (0, 1):
            chunks.append(chunk_dict(content=ANSWER[i : i + 9], index=index))
    chunks.append(chunk_dict(finish_reason="stop", index=0))
    chunks.append(chunk_dict(finish_reason="length", index=1))
    return chunks


def with_usage():
    chunks = stream_dicts(ANSWER, size=11)[:-1]
    chunks.append({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "qwen3",
                   "choices": [], "usage": {"prompt_tokens": 1, "completion_tokens": 2, "total_tokens": 3}})
    return chunks


def with_native():
    chunks = stream_dicts(CALL, size=13, finish_reason=None)[:-1]
    native = {"index": 0, "id": "call_native", "type": "function", "function": {"name": "lookup", "arguments": "{}"}}
    chunks.append(chunk_dict(tool_calls=[native], finish_reason="tool_calls"))
    return chunks


SAME_AS_SSE = {
    "text and a call, 5 bytes a chunk": (lambda: stream_dicts(ANSWER, size=5), []),
    "a call, whole": (lambda: stream_dicts(CALL, size=1000), []),
    "plain text": (lambda: stream_dicts("No tools here, <b>bold</b> text.", size=4), []),
    "reasoning": (lambda: stream_dicts("<think>Paris?</think>" + ANSWER, size=6), ["--reasoning"]),
    "two choices": (two_choices, []),
    "a usage chunk": (with_usage, []),
    "a native call after a text call": (with_native, []),
    "no finish_reason": (lambda: stream_dicts(ANSWER, size=8)[:-1], []),
    "cut by a stop sequence": (lambda: stream_dicts(ANSWER[: -len("</tool_call>")], size=8), []),
    "a call that breaks": (lambda: stream_dicts(BROKEN, size=5), []),
    "a call cut by the token limit": (lambda: stream_dicts(ANSWER[:-20], size=7, finish_reason="length"), []),
    "live arguments": (lambda: stream_dicts(ANSWER, size=5), ["--stream-arguments"]),
}


@pytest.mark.skipif(CLI is None, reason="the toolscan binary is not built")
@pytest.mark.parametrize("name", list(SAME_AS_SSE))
def test_wrap_rewrites_as_toolscan_sse_does(name):
    make, args = SAME_AS_SSE[name]
    chunks = make()
    reasoning = "--reasoning" in args
    live = "--stream-arguments" in args
    ours = list(toolscan.openai.wrap(chunks, format="hermes", ids="seeded", reasoning=reasoning, stream_arguments=live))
    assert ours == sse_cli(chunks, "--format", "hermes", *args)
