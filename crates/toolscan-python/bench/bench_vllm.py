"""toolscan's vLLM plugin against vLLM's own Hermes parser, on the same deltas.

    python crates/toolscan-python/bench/bench_vllm.py [--quick]

Needs the toolscan wheel (build it with `maturin build --release`) and vLLM
installed as for the tests (`crates/toolscan-python/tests/vllm/setup.sh VENV`);
where torch is missing, the tests' stubs stand in for the modules that need it.

Cases: one Hermes call (`<tool_call>{"name": "write_file", "arguments":
{"path": ..., "content": "<N KB>"}}</tool_call>`) with a 4, 16 and 64 KB
argument, and 50 KB of plain text; each streamed in 4-character deltas.
Columns, on the same deltas:

- vLLM loop: vLLM's chat streaming loop (`ChatStreamProcessor.step` on the
  parser `vllm serve --tool-call-parser NAME --enable-auto-tool-choice`
  builds), with vLLM's `hermes` and with `toolscan-hermes`; `ratio` is
  vLLM's time over the plugin's.
- plugin: the plugin's `extract_tool_calls_streaming` called directly, one
  call per delta (what it adds to vLLM's loop: the toolscan parser, the PyO3
  crossing and vLLM's `DeltaMessage` objects).
- feed: the bare `toolscan.Parser.feed` per delta.

Each time is the best of a few runs (one run for vLLM's Hermes on the largest
cases, which takes seconds). A plain script: no assertions, it prints a
table and whether the issue's targets are met.
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.join(HERE, "..", "tests", "vllm")
sys.path[:0] = [TESTS, os.path.join(TESTS, "stubs")]
if importlib.util.find_spec("torch") is None:
    import vllm_stubs

    vllm_stubs.install()

import logging  # noqa: E402

from harness import Tokenizer, request  # noqa: E402
from vllm.entrypoints.openai.chat_completion.stream_processor import (  # noqa: E402
    ChatStreamProcessor,
)
from vllm.parser.parser_manager import ParserManager  # noqa: E402

import toolscan  # noqa: E402
import toolscan.vllm as plugin  # noqa: E402

DELTA = 4


def call_text(kb: int) -> str:
    line = "The quick brown fox jumps over the lazy dog, again and again. "
    body = (line * (kb * 1024 // len(line) + 1))[: kb * 1024]
    return (
        '<tool_call>\n{"name": "write_file", "arguments": {"path": "notes.txt", '
        f'"content": "{body}"}}}}\n</tool_call>'
    )


def plain_text(kb: int) -> str:
    line = "Paris is mild today, 18 degrees with a light breeze; take a coat. "
    return (line * (kb * 1024 // len(line) + 1))[: kb * 1024]


def deltas_of(text: str) -> list[str]:
    return [text[i : i + DELTA] for i in range(0, len(text), DELTA)]


def timed(fn, runs: int) -> float:
    best = float("inf")
    for _ in range(runs):
        gc.collect()
        gc.disable()
        try:
            start = time.perf_counter()
            fn()
            best = min(best, time.perf_counter() - start)
        finally:
            gc.enable()
    return best


def vllm_loop(name: str, deltas: list[str], ids: list[list[int]]):
    tokenizer, req = Tokenizer(), request()
    parser_cls = ParserManager.get_parser(tool_parser_name=name, enable_auto_tools=True)

    def run():
        processor = ChatStreamProcessor(
            req, parser_cls(tokenizer, req.tools), enable_auto_tools=True, parser_cls=parser_cls
        )
        last = len(deltas) - 1
        for i, (delta, delta_ids) in enumerate(zip(deltas, ids)):
            processor.step(delta, delta_ids, "stop" if i == last else None, [1, 2, 3])

    return run


def plugin_direct(deltas: list[str], ids: list[list[int]]):
    tokenizer, req = Tokenizer(), request()
    cls = plugin.PARSERS["toolscan-hermes"]

    def run():
        parser = cls(tokenizer, req.tools)
        extract = parser.extract_tool_calls_streaming
        for delta, delta_ids in zip(deltas, ids):
            extract("", "", delta, (), (), delta_ids, req)
        parser.finish_streaming()

    return run


def bare_feed(deltas: list[str]):
    tools = request().model_dump(exclude_none=True)["tools"]

    def run():
        parser = toolscan.Parser("hermes", tools=tools)
        feed = parser.feed
        for delta in deltas:
            feed(delta)
        parser.finish()

    return run


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="one run each, 4 KB and 16 KB only")
    args = ap.parse_args()
    logging.disable(logging.WARNING)

    cases = [(f"call, {kb} KB argument", call_text(kb)) for kb in (4, 16, 64)]
    cases.append(("text, 50 KB", plain_text(50)))
    if args.quick:
        cases = cases[:2]
    tokenizer = Tokenizer()

    rows = []
    for label, text in cases:
        deltas = deltas_of(text)
        ids = [tokenizer.encode(d) for d in deltas]
        n = len(deltas)
        slow_runs = 1 if args.quick or len(text) > 20_000 else 3
        fast_runs = 1 if args.quick else 7
        theirs = timed(vllm_loop("hermes", deltas, ids), slow_runs)
        ours = timed(vllm_loop("toolscan-hermes", deltas, ids), fast_runs)
        direct = timed(plugin_direct(deltas, ids), fast_runs)
        feed = timed(bare_feed(deltas), fast_runs)
        rows.append((label, n, theirs, ours, direct, feed))
        print(f"  {label}: done", file=sys.stderr)

    us = 1e6
    head = (
        "| case | deltas | vLLM hermes, vLLM loop | toolscan-hermes, vLLM loop | ratio "
        "| plugin alone | Parser.feed |"
    )
    print(head)
    print("|---|---:|---:|---:|---:|---:|---:|")
    for label, n, theirs, ours, direct, feed in rows:
        print(
            f"| {label} | {n} | {theirs * 1e3:.1f} ms ({theirs / n * us:.1f} µs) "
            f"| {ours * 1e3:.1f} ms ({ours / n * us:.2f} µs) | {theirs / ours:.0f}× "
            f"| {direct * 1e3:.1f} ms ({direct / n * us:.2f} µs) "
            f"| {feed * 1e3:.1f} ms ({feed / n * us:.2f} µs) |"
        )
    print("\n(total time, and per delta in parentheses)")
    by_label = {r[0]: r for r in rows}
    big = by_label.get("call, 64 KB argument")
    if big is not None:
        ratio = big[2] / big[3]
        print(f"64 KB call, vLLM loop: {ratio:.0f}× vLLM's Hermes (target ≥ 100×)")
    text_row = by_label.get("text, 50 KB")
    if text_row is not None:
        per = text_row[4] / text_row[1] * us
        print(f"text delta through the plugin: {per:.2f} µs (target ≤ 2 µs)")


if __name__ == "__main__":
    main()
