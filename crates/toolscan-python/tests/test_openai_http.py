"""End to end: the real `openai` client, streaming from a chat-completions
server on loopback (a small one in this file, sending a model's answer as
plain text in SSE events, as a server without a tool parser does), its
stream wrapped by toolscan.openai."""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import openai
import pytest
from openai.lib.streaming.chat import ChatCompletionStreamState

import toolscan.openai

ANSWER = (
    "I'll look both up.\n"
    '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Zürich", "unit": "celsius"}}\n</tool_call>\n'
    '<tool_call>\n{"name": "search", "arguments": {"query": "café \\"best\\"", "max": 3}}\n</tool_call>'
)
TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}},
    {"type": "function", "function": {"name": "search", "parameters": {"type": "object", "properties": {"query": {"type": "string"}}}}},
]


class Handler(BaseHTTPRequestHandler):
    """POST /v1/chat/completions: the answer, streamed in 7-character
    deltas (or whole, without `stream`)."""

    def log_message(self, *args):
        pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.requests.append(body)
        envelope = {"id": "chatcmpl-9", "created": 1700000000, "model": body["model"]}
        if not body.get("stream"):
            data = json.dumps({**envelope, "object": "chat.completion", "choices": [
                {"index": 0, "message": {"role": "assistant", "content": ANSWER}, "finish_reason": "stop"}]}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()

        def send(choice):
            chunk = {**envelope, "object": "chat.completion.chunk", "choices": [choice]}
            self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
            self.wfile.flush()

        send({"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None})
        for i in range(0, len(ANSWER), 7):
            send({"index": 0, "delta": {"content": ANSWER[i : i + 7]}, "finish_reason": None})
        send({"index": 0, "delta": {}, "finish_reason": "stop"})
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()


@pytest.fixture(scope="module")
def base_url():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.requests = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


def check_calls(message):
    assert message.content.strip() == "I'll look both up."
    calls = message.tool_calls
    assert [c.function.name for c in calls] == ["get_weather", "search"]
    assert json.loads(calls[0].function.arguments) == {"city": "Zürich", "unit": "celsius"}
    assert json.loads(calls[1].function.arguments) == {"query": 'café "best"', "max": 3}
    assert len({c.id for c in calls}) == 2


def test_the_openai_client_streams_calls_through_wrap(base_url):
    client = openai.OpenAI(base_url=base_url, api_key="test", max_retries=0)
    stream = client.chat.completions.create(
        model="Qwen/Qwen3-8B", messages=[{"role": "user", "content": "weather?"}], tools=TOOLS, stream=True,
    )
    state = ChatCompletionStreamState()
    with stream:
        for chunk in toolscan.openai.wrap(stream, model="Qwen/Qwen3-8B", tools=TOOLS):
            assert "<tool_call>" not in (chunk.choices[0].delta.content or "")
            state.handle_chunk(chunk)
    final = state.get_final_completion()
    assert final.choices[0].finish_reason == "tool_calls"
    check_calls(final.choices[0].message)


def test_breaking_off_the_wrapped_stream_closes_the_clients_response(base_url):
    client = openai.OpenAI(base_url=base_url, api_key="test", max_retries=0)
    stream = client.chat.completions.create(
        model="qwen3", messages=[{"role": "user", "content": "weather?"}], stream=True,
    )
    wrapped = toolscan.openai.wrap(stream, format="hermes")
    next(wrapped)
    assert not stream.response.is_closed
    wrapped.close()
    assert stream.response.is_closed


def test_the_async_client_streams_calls_through_wrap(base_url):
    import asyncio

    async def main():
        client = openai.AsyncOpenAI(base_url=base_url, api_key="test", max_retries=0)
        stream = await client.chat.completions.create(
            model="qwen3", messages=[{"role": "user", "content": "weather?"}], stream=True,
        )
        state = ChatCompletionStreamState()
        async for chunk in toolscan.openai.wrap(stream, format="hermes"):
            state.handle_chunk(chunk)
        await client.close()
        return state.get_final_completion()

    final = asyncio.run(main())
    check_calls(final.choices[0].message)


def test_the_openai_client_gets_calls_of_a_whole_answer_through_wrap_response(base_url):
    client = openai.OpenAI(base_url=base_url, api_key="test", max_retries=0)
    completion = client.chat.completions.create(model="qwen3", messages=[{"role": "user", "content": "weather?"}])
    out = toolscan.openai.wrap_response(completion, format="hermes")
    assert out.choices[0].finish_reason == "tool_calls"
    check_calls(out.choices[0].message)
