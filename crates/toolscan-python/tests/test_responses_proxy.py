"""End to end: the real `openai` client's Responses API (`responses.create`,
streamed and whole, and the `responses.stream` helper) through `toolscan
proxy` (the binary the Rust build made), over a chat-completions server on
loopback that writes its calls as text — in four notations — and records
what it received. Skipped when the binary is not built."""

import json
import socket
import subprocess
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import openai
import pytest
from rust_reference import CLI

pytestmark = pytest.mark.skipif(CLI is None, reason="the toolscan binary is not built")

ANSWERS = {
    "hermes": 'Let me check.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>',
    "qwen3-coder": "Let me check.\n<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call>",
    "mistral-v11": 'Let me check.[TOOL_CALLS]get_weather[CALL_ID]a1b2c3d4e[ARGS]{"city": "Paris"}',
    "harmony": (
        "<|channel|>analysis<|message|>The user wants the weather.<|end|>"
        "<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json"
        '<|message|>{"city": "Paris"}<|call|>'
    ),
    "plain": "It is 18 °C in Paris.",
}
TOOLS = [
    {
        "type": "function",
        "name": "get_weather",
        "description": "The weather in a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    }
]


class Upstream(BaseHTTPRequestHandler):
    """POST /v1/chat/completions: the model's answer (by `model`), streamed
    in 7-character deltas or whole; every request body kept."""

    def log_message(self, *args):
        pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.requests.append(body)
        answer = ANSWERS[body["model"]]
        if self.path.endswith("/responses"):
            return self.serve_responses(body, answer)
        envelope = {"id": "chatcmpl-1", "created": 1700000000, "model": body["model"]}
        usage = {"prompt_tokens": 20, "completion_tokens": 10, "total_tokens": 30}
        if not body.get("stream"):
            data = json.dumps({**envelope, "object": "chat.completion", "usage": usage, "choices": [
                {"index": 0, "message": {"role": "assistant", "content": answer}, "finish_reason": "stop"}]}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()

        def send(chunk):
            chunk = {**envelope, "object": "chat.completion.chunk", **chunk}
            self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
            self.wfile.flush()

        for i in range(0, len(answer), 7):
            send({"choices": [{"index": 0, "delta": {"content": answer[i : i + 7]}, "finish_reason": None}]})
        send({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
        send({"choices": [], "usage": usage})
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()


    def serve_responses(self, body, answer):
        """POST /v1/responses, as a server that serves it (vLLM, LM
        Studio) but leaves the calls a model writes as text in its message."""
        message = {"id": "msg_1", "type": "message", "role": "assistant", "status": "completed",
                   "content": [{"type": "output_text", "text": answer, "annotations": [], "logprobs": []}]}
        response = {"id": "resp_up", "object": "response", "created_at": 1700000000, "model": body["model"],
                    "status": "completed", "output": [message], "parallel_tool_calls": True,
                    "tool_choice": "auto", "tools": body.get("tools", []),
                    "usage": {"input_tokens": 20, "output_tokens": 10, "total_tokens": 30,
                              "input_tokens_details": {"cached_tokens": 0},
                              "output_tokens_details": {"reasoning_tokens": 0}}}
        if not body.get("stream"):
            data = json.dumps(response).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        seq = iter(range(1000))

        def send(kind, **fields):
            event = {"type": kind, "sequence_number": next(seq), **fields}
            self.wfile.write(f"event: {kind}\ndata: {json.dumps(event)}\n\n".encode())
            self.wfile.flush()

        begun = {**response, "status": "in_progress", "output": [], "usage": None}
        send("response.created", response=begun)
        send("response.in_progress", response=begun)
        empty = {**message, "status": "in_progress", "content": []}
        send("response.output_item.added", output_index=0, item=empty)
        part = {"type": "output_text", "text": "", "annotations": [], "logprobs": []}
        send("response.content_part.added", output_index=0, item_id="msg_1", content_index=0, part=part)
        for i in range(0, len(answer), 7):
            send("response.output_text.delta", output_index=0, item_id="msg_1", content_index=0,
                 delta=answer[i : i + 7], logprobs=[])
        send("response.output_text.done", output_index=0, item_id="msg_1", content_index=0, text=answer,
             logprobs=[])
        send("response.content_part.done", output_index=0, item_id="msg_1", content_index=0,
             part={**part, "text": answer})
        send("response.output_item.done", output_index=0, item=message)
        send("response.completed", response=response)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_proxy(tmp_path_factory, *args):
    """An upstream, and `toolscan proxy` in front of it with `args`."""
    upstream = ThreadingHTTPServer(("127.0.0.1", 0), Upstream)
    upstream.requests = []
    threading.Thread(target=upstream.serve_forever, daemon=True).start()
    model_map = tmp_path_factory.mktemp("proxy") / "models.json"
    model_map.write_text(json.dumps({m: m for m in ANSWERS if m != "plain"} | {"plain": "hermes"}))
    port = free_port()
    process = subprocess.Popen(
        [str(CLI), "proxy", "--listen", f"127.0.0.1:{port}",
         "--upstream", f"http://127.0.0.1:{upstream.server_address[1]}/v1",
         "--model-map", str(model_map), *args],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    for _ in range(200):
        try:
            urllib.request.urlopen(f"{base}/health", timeout=1)
            break
        except OSError:
            time.sleep(0.05)
    return process, base + "/v1", upstream


@pytest.fixture(scope="module")
def proxy(tmp_path_factory):
    process, base, upstream = start_proxy(tmp_path_factory, "--responses-store", "16")
    yield base, upstream
    process.terminate()
    process.wait(timeout=10)
    upstream.shutdown()
    upstream.server_close()


@pytest.fixture(scope="module")
def passthrough(tmp_path_factory):
    process, base, upstream = start_proxy(tmp_path_factory, "--responses", "passthrough")
    yield base, upstream
    process.terminate()
    process.wait(timeout=10)
    upstream.shutdown()
    upstream.server_close()


def client(base):
    return openai.OpenAI(base_url=base, api_key="test", max_retries=0)


def calls_of(response):
    return [(item.name, json.loads(item.arguments)) for item in response.output if item.type == "function_call"]


@pytest.mark.parametrize("model", ["hermes", "qwen3-coder", "mistral-v11", "harmony"])
def test_responses_create_whole_and_streamed_gets_the_calls(proxy, model):
    base, _ = proxy
    c = client(base)
    whole = c.responses.create(model=model, input="Weather in Paris?", tools=TOOLS)
    assert whole.status == "completed"
    assert calls_of(whole) == [("get_weather", {"city": "Paris"})]
    assert "get_weather" not in whole.output_text
    assert whole.usage.input_tokens == 20

    events = list(c.responses.create(model=model, input="Weather in Paris?", tools=TOOLS, stream=True))
    assert events[0].type == "response.created"
    assert events[-1].type == "response.completed"
    assert [e.sequence_number for e in events] == list(range(len(events)))
    assert calls_of(events[-1].response) == [("get_weather", {"city": "Paris"})]
    done = [e for e in events if e.type == "response.function_call_arguments.done"]
    assert [json.loads(e.arguments) for e in done] == [{"city": "Paris"}]


@pytest.mark.parametrize("model", ["hermes", "harmony"])
def test_the_responses_stream_helper_gets_the_calls(proxy, model):
    base, _ = proxy
    with client(base).responses.stream(model=model, input="Weather in Paris?", tools=TOOLS) as stream:
        kinds = [event.type for event in stream]
        final = stream.get_final_response()
    assert "response.function_call_arguments.done" in kinds
    assert calls_of(final) == [("get_weather", {"city": "Paris"})]
    if model == "harmony":
        # The analysis channel is reasoning, never text.
        assert [item.type for item in final.output][0] == "reasoning"
        assert "weather" not in final.output_text


def test_a_second_turn_with_the_calls_output(proxy):
    base, upstream = proxy
    c = client(base)
    first = c.responses.create(model="hermes", input="Weather in Paris?", tools=TOOLS)
    call = next(item for item in first.output if item.type == "function_call")
    second = c.responses.create(
        model="plain",
        tools=TOOLS,
        input=[
            {"role": "user", "content": "Weather in Paris?"},
            {"type": "function_call", "call_id": call.call_id, "name": call.name, "arguments": call.arguments},
            {"type": "function_call_output", "call_id": call.call_id, "output": "18 °C"},
        ],
    )
    assert second.output_text == ANSWERS["plain"]
    messages = upstream.requests[-1]["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "tool"]
    assert messages[1]["tool_calls"][0]["id"] == call.call_id
    assert messages[2] == {"role": "tool", "tool_call_id": call.call_id, "content": "18 °C"}

    # The same turn by `previous_response_id` (the proxy keeps 16).
    third = c.responses.create(
        model="plain",
        tools=TOOLS,
        previous_response_id=first.id,
        input=[{"type": "function_call_output", "call_id": call.call_id, "output": "18 °C"}],
    )
    assert third.output_text == ANSWERS["plain"]
    assert [m["role"] for m in upstream.requests[-1]["messages"]] == ["user", "assistant", "tool"]


def test_a_built_in_tool_is_a_clear_error(proxy):
    base, _ = proxy
    with pytest.raises(openai.BadRequestError) as e:
        client(base).responses.create(model="hermes", input="Search.", tools=[{"type": "web_search"}])
    assert "web_search" in str(e.value)


@pytest.mark.parametrize("model", ["hermes", "qwen3-coder", "mistral-v11", "harmony"])
def test_passthrough_rewrites_the_text_calls_of_an_upstreams_own_responses(passthrough, model):
    base, upstream = passthrough
    c = client(base)
    whole = c.responses.create(model=model, input="Weather in Paris?", tools=TOOLS)
    assert calls_of(whole) == [("get_weather", {"city": "Paris"})]
    assert "get_weather" not in whole.output_text
    # The request went to the upstream's own /v1/responses, as it came.
    assert upstream.requests[-1]["input"] == "Weather in Paris?"
    assert upstream.requests[-1]["tools"] == TOOLS

    with c.responses.stream(model=model, input="Weather in Paris?", tools=TOOLS) as stream:
        events = list(stream)
        final = stream.get_final_response()
    assert [e.sequence_number for e in events] == list(range(len(events)))
    assert calls_of(final) == [("get_weather", {"city": "Paris"})]
    assert "get_weather" not in final.output_text


def test_passthrough_without_tools_passes_the_answer_on(passthrough):
    base, _ = passthrough
    whole = client(base).responses.create(model="hermes", input="Weather in Paris?")
    assert calls_of(whole) == []
    assert "<tool_call>" in whole.output_text
