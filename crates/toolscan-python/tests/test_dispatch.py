"""toolscan.dispatch: each handler starts when its call closes, while the
stream goes on; results in call order; errors and unknown tools are results;
cancellation leaves no handler running. Sources: generators of text chunks
that sleep between chunks, chunk dicts, and the real `openai` client against
a small SSE server on loopback that streams slowly."""

import asyncio
import json
import random
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import openai
import pytest

import toolscan
import toolscan.dispatch
from toolscan.dispatch import CallResult, Dispatcher, UnknownToolError


def hermes(name, **arguments):
    """A call in Hermes's markup (Qwen3's chat template writes the same)."""
    return f'<tool_call>\n{json.dumps({"name": name, "arguments": arguments})}\n</tool_call>'


#: A call early, then a long tail of text: the stream goes on well after the call closed.
EARLY_CALL = "Let me check.\n" + hermes("get_weather", city="Paris") + "\n" + "While it runs, more words. " * 4


def pieces(text, size=7):
    return [text[i : i + size] for i in range(0, len(text), size)]


class Slow:
    """A text stream that sleeps between chunks; `last` is the time its last
    chunk was handed out."""

    def __init__(self, text, delay=0.02, size=7):
        self.chunks = pieces(text, size)
        self.delay = delay
        self.last = None
        self.closed = False

    def __iter__(self):
        for i, chunk in enumerate(self.chunks):
            time.sleep(self.delay)
            if i == len(self.chunks) - 1:
                self.last = time.perf_counter()
            yield chunk

    async def __aiter__(self):
        for i, chunk in enumerate(self.chunks):
            await asyncio.sleep(self.delay)
            if i == len(self.chunks) - 1:
                self.last = time.perf_counter()
            yield chunk

    def close(self):
        self.closed = True


class AsyncOnly:
    """An async iterable that is not also an iterable (as `AsyncStream`)."""

    def __init__(self, slow):
        self.slow = slow

    def __aiter__(self):
        return self.slow.__aiter__()


def get_weather(city):
    return {"city": city, "celsius": 21}


def test_a_handler_starts_before_a_slow_stream_ends():
    stream = Slow(EARLY_CALL)
    out = toolscan.dispatch.run(stream, {"get_weather": get_weather}, "hermes")
    [result] = out.results
    assert result.ok and result.value == {"city": "Paris", "celsius": 21}
    # The call closes about a third of the way in: its handler ran long
    # before the last chunk came.
    assert result.started < stream.last - 0.2
    assert result.finished < stream.last
    assert out.stream_ended >= stream.last
    assert stream.closed


def test_results_come_in_call_order_when_handlers_finish_out_of_order():
    text = "".join(hermes("sleep", s=s) for s in (0.3, 0.1, 0.0))

    def sleep(s):
        time.sleep(s)
        return s

    out = toolscan.dispatch.run(pieces(text), {"sleep": sleep}, "hermes")
    assert [r.value for r in out.results] == [0.3, 0.1, 0.0]
    assert [c.index for c in out.calls] == [0, 1, 2]
    finished = [r.finished for r in out.results]
    assert finished[2] < finished[1] < finished[0]
    # They ran at the same time, not one after the other.
    assert max(finished) - min(r.started for r in out.results) < 0.55


def test_the_events_give_each_result_in_call_order_as_soon_as_it_is_ready():
    text = hermes("sleep", s=0.2) + hermes("sleep", s=0.0)

    def sleep(s):
        time.sleep(s)
        return s

    kinds = []
    for item in Dispatcher({"sleep": sleep}, "hermes").events(pieces(text, 5)):
        kinds.append(item.value if isinstance(item, CallResult) else item.type)
    ends = [i for i, k in enumerate(kinds) if k == "tool_call_end"]
    assert kinds[-3:] == ["done", 0.2, 0.0]
    assert len(ends) == 2


def test_a_handlers_exception_is_its_calls_result_and_the_other_calls_go_on():
    def broken(**_):
        raise RuntimeError("the weather service is down")

    text = hermes("get_weather", city="Oslo") + hermes("broken", x=1) + hermes("get_weather", city="Rome")
    out = toolscan.dispatch.run([text], {"get_weather": get_weather, "broken": broken}, "hermes")
    first, second, third = out.results
    assert first.ok and third.ok and third.value["city"] == "Rome"
    assert not second.ok and isinstance(second.error, RuntimeError)
    assert second.content == "Error: RuntimeError: the weather service is down"
    # Wrong arguments are the handler's TypeError, a result as well.
    out = toolscan.dispatch.run([hermes("get_weather", town="Oslo")], {"get_weather": get_weather}, "hermes")
    assert isinstance(out.results[0].error, TypeError)


def test_an_unknown_tool_is_a_result_naming_the_tools():
    out = toolscan.dispatch.run([hermes("get_time", zone="UTC")], {"get_weather": get_weather}, "hermes")
    [result] = out.results
    assert isinstance(result.error, UnknownToolError)
    assert result.started is None
    assert result.content == "Error: UnknownToolError: no tool named 'get_time' (the tools: get_weather)"


def test_the_messages_are_the_next_turns_assistant_and_tool_messages():
    text = "Checking." + hermes("get_weather", city="Paris")
    out = toolscan.dispatch.run([text], {"get_weather": get_weather}, "hermes")
    assistant, tool = out.messages()
    [call] = out.calls
    assert assistant == {
        "role": "assistant",
        "content": "Checking.",
        "tool_calls": [
            {"id": call.id, "type": "function", "function": {"name": "get_weather", "arguments": call.arguments}}
        ],
    }
    assert tool == {"role": "tool", "tool_call_id": call.id, "content": '{"city": "Paris", "celsius": 21}'}
    assert out.finish_reason == "tool_calls"
    # No calls: the text alone.
    out = toolscan.dispatch.run(["Hello."], {}, "hermes")
    assert out.messages() == [{"role": "assistant", "content": "Hello."}]
    assert out.finish_reason == "stop"


@pytest.mark.parametrize("seed", range(5))
def test_text_and_calls_match_toolscan_parse_on_the_same_text(seed):
    text = (
        "First.\n"
        + hermes("get_weather", city="Zürich", unit="celsius")
        + "\nthen "
        + hermes("search", query='café "best"', max=3)
        + " and <tool_call>not json</tool_call> the end"
    )
    rng = random.Random(seed)
    cuts = sorted(rng.sample(range(1, len(text)), 12))
    chunks = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)])]
    out = toolscan.dispatch.run(chunks, {}, "hermes", ids="seeded", seed=3)
    whole = toolscan.parse(text, "hermes", ids="seeded", seed=3)
    assert out.text == whole.text
    assert [(c.id, c.name, c.arguments) for c in out.calls] == [
        (c.id, c.name, c.arguments) for c in whole.tool_calls
    ]
    assert [d.kind for d in out.diagnostics] == [d.kind for d in whole.diagnostics]
    assert out.finish_reason == whole.finish_reason


def test_a_calls_diagnostics_are_the_schema_checks_of_that_call():
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {
        "type": "object", "properties": {"city": {"type": "string"}}}}}]
    text = hermes("get_weather", city=3) + hermes("get_weather", city="Oslo")
    out = toolscan.dispatch.run(pieces(text), {"get_weather": get_weather}, "hermes", tools=tools, check_calls="report")
    whole = toolscan.parse(text, "hermes", tools=tools, check_calls="report")
    assert [[d.kind for d in c.diagnostics] for c in out.calls] == [
        [d.kind for d in c.diagnostics] for c in whole.tool_calls
    ] == [["wrong_type"], []]


def test_an_item_that_is_neither_text_nor_a_chat_chunk_is_a_type_error():
    with pytest.raises(TypeError, match="neither a text chunk"):
        toolscan.dispatch.run(["text", 42], {})
    with pytest.raises(TypeError, match="aevents"):
        toolscan.dispatch.run(AsyncOnly(Slow("x")), {})


def test_bad_options_raise_when_the_dispatcher_is_made():
    with pytest.raises(toolscan.UnknownFormatError):
        Dispatcher({}, "no-such-format")
    with pytest.raises(toolscan.OptionsError):
        Dispatcher({}, "hermes", check_calls="strict")
    with pytest.raises(ValueError):
        Dispatcher({}, "hermes", max_concurrent=0)


def test_async_handlers_run_concurrently_under_asyncio_before_the_stream_ends():
    text = "Two.\n" + hermes("wait", s=0.3) + hermes("wait", s=0.3) + " and on " * 10
    stream = Slow(text, delay=0.02)

    async def wait(s):
        await asyncio.sleep(s)
        return s

    out = asyncio.run(toolscan.dispatch.arun(AsyncOnly(stream), {"wait": wait}, "hermes"))
    first, second = out.results
    assert first.value == second.value == 0.3
    assert first.started < stream.last and second.started < stream.last
    # Side by side: the second started while the first was still asleep.
    assert second.started < first.finished


def test_arun_takes_plain_handlers_and_run_takes_async_ones():
    async def wait(s):
        await asyncio.sleep(s)
        return "async"

    def plain(s):
        return "plain"

    text = hermes("wait", s=0.01) + hermes("plain", s=0)
    handlers = {"wait": wait, "plain": plain}
    out = asyncio.run(toolscan.dispatch.arun(pieces(text), handlers, "hermes"))
    assert [r.value for r in out.results] == ["async", "plain"]
    out = toolscan.dispatch.run(pieces(text), handlers, "hermes")
    assert [r.value for r in out.results] == ["async", "plain"]


def test_breaking_out_of_events_leaves_no_handler_running():
    text = hermes("work", n=0) + hermes("work", n=1) + " and a long tail " * 20
    running, started, stopped = set(), [], []

    def work(n):
        running.add(n)
        started.append(n)
        time.sleep(0.2)
        running.discard(n)
        stopped.append(n)

    stream = Slow(text, delay=0.01)
    # One at a time: the second call waits for the first one's thread.
    gen = Dispatcher({"work": work}, "hermes", max_concurrent=1).events(stream)
    ends = 0
    for item in gen:
        if getattr(item, "type", None) == "tool_call_end":
            ends += 1
            if ends == 2:
                break
    gen.close()
    # The running handler was waited for; the one that had not started never ran.
    assert running == set()
    assert started == stopped == [0]
    assert stream.closed


def test_cancelling_the_arun_task_cancels_its_async_handlers():
    cancelled = []

    async def forever():
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            cancelled.append(True)
            raise

    async def main():
        stream = Slow(hermes("forever") + " tail" * 50, delay=0.01)
        task = asyncio.ensure_future(toolscan.dispatch.arun(AsyncOnly(stream), {"forever": forever}, "hermes"))
        await asyncio.sleep(0.3)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]

    start = time.perf_counter()
    assert asyncio.run(main()) == []
    assert cancelled == [True]
    assert time.perf_counter() - start < 1.5


def test_a_stream_that_fails_cancels_the_dispatch_and_raises():
    started = []

    def work():
        started.append(time.perf_counter())
        time.sleep(0.1)

    def failing():
        yield hermes("work")
        yield hermes("work")
        raise ConnectionError("the upstream went away")

    with pytest.raises(ConnectionError):
        Dispatcher({"work": work}, "hermes", max_concurrent=1).run(failing())
    assert len(started) == 1  # the second call never started

    async def main():
        async def wait():
            await asyncio.sleep(10)

        async def failing_async():
            yield hermes("wait")
            await asyncio.sleep(0.05)
            raise ConnectionError("the upstream went away")

        with pytest.raises(ConnectionError):
            await toolscan.dispatch.arun(failing_async(), {"wait": wait}, "hermes")
        return [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]

    assert asyncio.run(main()) == []


def chunk(delta, finish_reason=None):
    return {
        "id": "c1",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
    }


def test_native_tool_calls_are_dispatched_when_a_later_chunk_shows_them_complete():
    started = {}
    read = []

    def tool(**args):
        started[args["n"]] = len(read)

    def native():
        chunks = [
            chunk({"role": "assistant", "content": ""}),
            chunk({"tool_calls": [{"index": 0, "id": "a", "type": "function", "function": {"name": "tool", "arguments": ""}}]}),
            chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"n": 0'}}]}),
            chunk({"tool_calls": [{"index": 0, "function": {"arguments": "}"}}]}),
            chunk({"tool_calls": [{"index": 1, "id": "b", "type": "function", "function": {"name": "tool", "arguments": '{"n": 1}'}}]}),
            chunk({"tool_calls": [{"index": 2, "id": "c", "type": "function", "function": {"name": "tool", "arguments": "[1]"}}]}),
            chunk({}, "tool_calls"),
        ]
        for c in chunks:
            read.append(c)
            yield c
            time.sleep(0.02)

    out = toolscan.dispatch.run(native(), {"tool": tool})
    assert [(c.id, c.arguments, c.native) for c in out.calls] == [("a", '{"n": 0}', True), ("b", '{"n": 1}', True), ("c", "[1]", True)]
    # Call 0 is complete once call 1's entry comes (the 5th chunk), call 1 once call 2's comes.
    assert started == {0: 5, 1: 6}
    assert isinstance(out.results[2].error, toolscan.dispatch.ArgumentsError)
    assert out.finish_reason == "tool_calls"


class SlowServer(BaseHTTPRequestHandler):
    """POST /v1/chat/completions: EARLY_CALL in 7-character deltas, one every
    20 ms, as plain text (a server without a tool parser); with
    `"native": true` in the request, two native calls instead.
    `server.last` is when the last event was written."""

    def log_message(self, *args):
        pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        envelope = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 0, "model": body["model"]}

        def send(delta, finish_reason=None):
            data = {**envelope, "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}]}
            self.wfile.write(f"data: {json.dumps(data)}\n\n".encode())
            self.wfile.flush()
            time.sleep(0.02)

        send({"role": "assistant", "content": ""})
        if body.get("native"):
            # Two calls, the second's arguments streamed slowly: the first
            # is complete when the second's entry comes.
            fn = {"name": "get_weather", "arguments": '{"city": "Paris"}'}
            send({"tool_calls": [{"index": 0, "id": "call_1", "type": "function", "function": fn}]})
            fn = {"name": "write_note", "arguments": '{"text": "'}
            send({"tool_calls": [{"index": 1, "id": "call_2", "type": "function", "function": fn}]})
            for piece in pieces("a long note " * 12):
                send({"tool_calls": [{"index": 1, "function": {"arguments": piece}}]})
            send({"tool_calls": [{"index": 1, "function": {"arguments": '"}'}}]})
        else:
            for piece in pieces(EARLY_CALL):
                send({"content": piece})
        self.server.last = time.perf_counter()
        send({}, "tool_calls" if body.get("native") else "stop")
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()


@pytest.fixture(scope="module")
def server():
    server = ThreadingHTTPServer(("127.0.0.1", 0), SlowServer)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    server.base_url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    yield server
    server.shutdown()
    server.server_close()


TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}]


def test_the_openai_client_against_a_slow_server_starts_the_handler_before_the_stream_ends(server):
    client = openai.OpenAI(base_url=server.base_url, api_key="test", max_retries=0)
    stream = client.chat.completions.create(
        model="Qwen/Qwen3-8B", messages=[{"role": "user", "content": "weather?"}], tools=TOOLS, stream=True
    )
    # No format named: the request's model (Qwen3, which writes Hermes's markup) gives it.
    out = toolscan.dispatch.run(stream, {"get_weather": get_weather})
    [result] = out.results
    assert result.value == {"city": "Paris", "celsius": 21}
    assert result.started < server.last - 0.3
    assert out.text == EARLY_CALL.replace(hermes("get_weather", city="Paris"), "")
    assert out.finish_reason == "tool_calls"
    assert stream.response.is_closed


def test_the_async_openai_client_with_native_calls_starts_the_handler_before_the_stream_ends(server):
    async def main():
        client = openai.AsyncOpenAI(base_url=server.base_url, api_key="test", max_retries=0)
        stream = await client.chat.completions.create(
            model="some-model", messages=[{"role": "user", "content": "weather?"}], stream=True,
            extra_body={"native": True},
        )

        async def weather(city):
            return get_weather(city)

        def write_note(text):
            return len(text)

        out = await toolscan.dispatch.arun(stream, {"get_weather": weather, "write_note": write_note})
        await client.close()
        return out

    out = asyncio.run(main())
    first, second = out.results
    assert first.call.native and first.call.id == "call_1"
    assert first.value == {"city": "Paris", "celsius": 21}
    assert first.started < server.last - 0.2
    # The last call is complete only at the finish reason.
    assert second.value == len("a long note " * 12) and second.started > server.last
    assert out.finish_reason == "tool_calls"
