#!/usr/bin/env python3
"""Writes the recorded SSE streams of this directory (deterministic).

vLLM-style `chat.completions` streams of a Qwen3 (hermes format) server
that only sends text: token-sized `delta.content` chunks, `finish_reason`
on the last content chunk, a usage chunk with empty `choices` (as with
`stream_options.include_usage`), then `[DONE]`.

Run from anywhere: python3 examples/data/sse/generate.py
"""
import json
import os
import re

HERE = os.path.dirname(os.path.abspath(__file__))
MODEL = "Qwen/Qwen3-8B"
CREATED = 1749816000
FINGERPRINT = "fp_vllm_0.9.1"

# Qwen3's special tokens are single tokens; the rest is cut like a BPE
# tokenizer would, roughly: a word with its leading space, runs of
# punctuation, line breaks.
SPECIAL = r"<think>|</think>|<tool_call>|</tool_call>"
TOKEN = re.compile(SPECIAL + r"|\n+| ?[A-Za-z]+|_[a-z]+| ?\d+| ?[^\sA-Za-z\d]+| ")


def tokens(text):
    out = TOKEN.findall(text)
    assert "".join(out) == text, (out, text)
    return out


def chunk(cid, choices, **extra):
    c = {
        "id": cid,
        "object": "chat.completion.chunk",
        "created": CREATED,
        "model": MODEL,
        "system_fingerprint": FINGERPRINT,
        "choices": choices,
    }
    c.update(extra)
    return c


def choice(index, delta, finish=None):
    return {"index": index, "delta": delta, "logprobs": None, "finish_reason": finish}


def stream(cid, answers, finishes, usage):
    """answers: one text per choice; chunks interleave the choices token by token."""
    events = []
    for i in range(len(answers)):
        events.append(chunk(cid, [choice(i, {"role": "assistant", "content": ""})]))
    toks = [tokens(a) for a in answers]
    longest = max(len(t) for t in toks)
    for k in range(longest):
        for i, t in enumerate(toks):
            if k < len(t):
                last = k == len(t) - 1
                events.append(
                    chunk(cid, [choice(i, {"content": t[k]}, finishes[i] if last else None)])
                )
    events.append(chunk(cid, [], usage=usage))
    lines = ["data: " + json.dumps(e, ensure_ascii=False, separators=(",", ":")) + "\n\n" for e in events]
    lines.append("data: [DONE]\n\n")
    return "".join(lines)


def write(name, text):
    with open(os.path.join(HERE, name), "w", encoding="utf-8", newline="\n") as f:
        f.write(text)


WEATHER = (
    "<think>\nThe user wants the current weather in Paris. I have a get_weather tool "
    "that takes a city, so I'll call it.\n</think>\n\n"
    "Let me check the current weather in Paris for you.\n\n"
    "<tool_call>\n"
    '{"name": "get_weather", "arguments": {"city": "Paris"}}\n'
    "</tool_call>"
)

write(
    "qwen3-weather.sse",
    stream(
        "chatcmpl-7f3c9a2e41b84d0f9e6a1c5b2d8e4f60",
        [WEATHER],
        ["stop"],
        {"prompt_tokens": 312, "total_tokens": 371, "completion_tokens": 59},
    ),
)

# The client asked to stop at `</tool_call>`: the server ends inside the
# call, its arguments complete, with finish_reason "stop".
write(
    "qwen3-weather-stop.sse",
    stream(
        "chatcmpl-2b8e0d4c6a1f47e3b9c5d7f1a3e6b820",
        [WEATHER[: WEATHER.index("</tool_call>")]],
        ["stop"],
        {"prompt_tokens": 312, "total_tokens": 367, "completion_tokens": 55},
    ),
)

write(
    "two-choices.sse",
    stream(
        "chatcmpl-c41d7e9a0b2f4a6c8e1d3f5b7a9c0e24",
        [
            "I'll look that up.\n<tool_call>\n"
            '{"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}}\n'
            "</tool_call>",
            "Paris is usually mild in June: around 20 °C by day, with the odd shower.",
        ],
        ["stop", "stop"],
        {"prompt_tokens": 298, "total_tokens": 389, "completion_tokens": 91},
    ),
)

# `toolscan demo`: two calls, then more text, so the first call is ready
# long before the stream ends.
with open(os.path.join(HERE, "..", "qwen3-weather.txt"), encoding="utf-8") as f:
    TWO_CALLS = f.read()

write(
    "demo.sse",
    stream(
        "chatcmpl-5d2a8f1c3e7b4906a4c2e8d0f6b1a3c9",
        [TWO_CALLS],
        ["stop"],
        {"prompt_tokens": 356, "total_tokens": 512, "completion_tokens": 156},
    ),
)
