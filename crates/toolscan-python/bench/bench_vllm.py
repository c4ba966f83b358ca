"""toolscan's vLLM plugin against vLLM's own Hermes parser, on the same deltas.

    python crates/toolscan-python/bench/bench_vllm.py [--quick]

Needs the toolscan wheel (build it with `maturin build --release`) and vLLM
installed as for the tests (`crates/toolscan-python/tests/vllm/setup.sh VENV`);
where torch is missing, the tests' stubs stand in for the modules that need it.

Cases: one Hermes call (`<tool_call>{"name": "write_file", "arguments":
{"path": ..., "content": "<N KB>"}}</tool_call>`) with a 4, 16 and 64 KB
argument, and 50 KB of plain text; each streamed in 4-character deltas.
Columns, on the same deltas:

- parser: the time spent in the tool parser's `extract_tool_calls_streaming`
  (and the plugin's `finish_streaming`), called once per delta with the
  previous / current / delta texts and token ids, as vLLM's serving layer
  calls a tool parser: vLLM's `hermes` against `toolscan-hermes` (the
  toolscan parser, the PyO3 crossing and vLLM's delta objects included),
  on the plugin's native streaming path (`toolscan._native.VllmStream`,
  which builds vLLM's objects in Rust) and on its Python path (the
  fallback where the native builders fail their import-time check).
- vLLM loop: the whole of vLLM's chat streaming loop (`ChatStreamProcessor.step`
  on the parser `vllm serve --tool-call-parser NAME --enable-auto-tool-choice`
  builds), which adds vLLM's own work per delta to either parser's.
- feed: the bare `toolscan.Parser.feed` per delta.
- vLLM's delta objects alone: the three pydantic objects vLLM's interface
  asks a parser to return for each argument delta, made the fastest way
  known (the plugin's builders in Rust, no validation) and nothing else:
  what any parser that returns them spends per delta at least, so vLLM's
  parser time over it bounds the ratio such a parser can reach (not timed
  on the text case, where a parser returns one object).

Each time is the best of 15 runs (3 for vLLM's parser, 1 on the cases
above 20 KB, which take seconds). A plain script: no assertions, it prints a
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
            inner = fn()
            took = time.perf_counter() - start if inner is None else inner
            best = min(best, took)
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


def hermes_direct(deltas: list[str], ids: list[list[int]]):
    """vLLM's Hermes parser, given the accumulated texts; only the time in its
    calls counts (it is returned, for `timed`)."""
    from vllm.tool_parsers import ToolParserManager

    tokenizer, req = Tokenizer(), request()
    cls = ToolParserManager.get_tool_parser("hermes")
    clock = time.perf_counter

    def run():
        parser = cls(tokenizer, req.tools)
        extract = parser.extract_tool_calls_streaming
        previous, previous_ids, spent = "", [], 0.0
        for delta, delta_ids in zip(deltas, ids):
            current, current_ids = previous + delta, previous_ids + delta_ids
            start = clock()
            extract(previous, current, delta, previous_ids, current_ids, delta_ids, req)
            spent += clock() - start
            previous, previous_ids = current, current_ids
        return spent

    return run


def plugin_direct(deltas: list[str], ids: list[list[int]], native: bool = True):
    """The plugin, called as `hermes_direct` calls vLLM's parser. It reads
    only `delta_text`: the accumulated texts are left out of the loop rather
    than built for nothing (building them is the caller's cost, not the
    parser's). `native=False`: with the Python builders of the objects.

    As vLLM does, the method is looked up on each call: the plugin binds
    its native path as the instance's method at the first delta."""
    tokenizer, req = Tokenizer(), request()
    cls = plugin.PARSERS["toolscan-hermes"]
    builders = plugin._NATIVE if native else None

    def run():
        saved, plugin._NATIVE = plugin._NATIVE, builders
        try:
            parser = cls(tokenizer, req.tools)
            for delta, delta_ids in zip(deltas, ids):
                parser.extract_tool_calls_streaming("", "", delta, (), (), delta_ids, req)
            parser.finish_streaming()
        finally:
            plugin._NATIVE = saved

    return run


def objects_only(deltas: list[str]):
    """What vLLM's interface asks of any tool parser per argument delta,
    alone: the three delta objects (`DeltaMessage`, `DeltaToolCall`,
    `DeltaFunctionCall`) for each delta, made the fastest way known here —
    the plugin's own builders in Rust (`VllmBuilders`: `object.__new__`
    and pydantic's four attributes, no validation), three calls from
    Python a delta. No parsing: the delta text is the arguments piece."""
    from vllm.entrypoints.generate.base.protocol import (
        DeltaFunctionCall,
        DeltaMessage,
        DeltaToolCall,
    )

    b = toolscan._native.VllmBuilders(DeltaMessage, DeltaToolCall, DeltaFunctionCall)
    message, tool_call, function = b.message, b.tool_call, b.function

    def run():
        for delta in deltas:
            message(None, [tool_call(0, function(None, delta))])

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
        fast_runs = 1 if args.quick else 15
        row = (
            label,
            n,
            timed(hermes_direct(deltas, ids), slow_runs),
            timed(plugin_direct(deltas, ids), fast_runs),
            timed(plugin_direct(deltas, ids, native=False), fast_runs),
            timed(vllm_loop("hermes", deltas, ids), slow_runs),
            timed(vllm_loop("toolscan-hermes", deltas, ids), fast_runs),
            timed(bare_feed(deltas), fast_runs),
            timed(objects_only(deltas), fast_runs) if label.startswith("call") else None,
        )
        rows.append(row)
        print(f"  {label}: done", file=sys.stderr)

    us = 1e6

    def cell(total, n):
        per = total / n * us
        return (
            f"{total * 1e3:.1f} ms ({per:.1f} µs)"
            if per >= 10
            else f"{total * 1e3:.1f} ms ({per:.2f} µs)"
        )

    print(
        "| case | deltas | parser: vLLM hermes | parser: toolscan-hermes | ratio "
        "| parser: toolscan-hermes, Python path | ratio "
        "| vLLM loop: vLLM hermes | vLLM loop: toolscan-hermes | ratio | Parser.feed "
        "| vLLM's delta objects alone | ratio |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for label, n, p_theirs, p_ours, p_py, l_theirs, l_ours, feed, objs in rows:
        print(
            f"| {label} | {n} | {cell(p_theirs, n)} | {cell(p_ours, n)} | {p_theirs / p_ours:.0f}× "
            f"| {cell(p_py, n)} | {p_theirs / p_py:.0f}× "
            f"| {cell(l_theirs, n)} | {cell(l_ours, n)} | {l_theirs / l_ours:.0f}× | {cell(feed, n)} "
            + (f"| {cell(objs, n)} | {p_theirs / objs:.0f}× |" if objs else "| — | — |")
        )
    print("\n(total for the stream, and per delta in parentheses; 4-character deltas)")
    print("load average (1, 5, 15 min) at the end: " + ", ".join(f"{x:.1f}" for x in os.getloadavg()))
    by_label = {r[0]: r for r in rows}
    big = by_label.get("call, 64 KB argument")
    if big is not None:
        print(
            f"64 KB call: the plugin {big[2] / big[3]:.0f}× faster than vLLM's Hermes parser "
            f"(target ≥ 100×; {big[2] / big[4]:.0f}× on its Python path); "
            f"{big[5] / big[6]:.0f}× in vLLM's whole loop; the delta objects vLLM asks for, "
            f"alone, {big[8] / big[1] * us:.2f} µs a delta: at most {big[2] / big[8]:.0f}× "
            f"for any parser that returns them"
        )
    text_row = by_label.get("text, 50 KB")
    if text_row is not None:
        per = text_row[3] / text_row[1] * us
        py_per = text_row[4] / text_row[1] * us
        print(
            f"text delta through the plugin: {per:.2f} µs (target ≤ 2 µs; "
            f"{py_per:.2f} µs on its Python path)"
        )


if __name__ == "__main__":
    main()
