"""The held-out check: every case of the conformance corpus (`tests/corpus/`)
through the Python `Parser`, under several chunkings of its text and of its
bytes, gives the Rust result.

The Rust result is what `toolscan parse --output events` prints for the same
input (when the binary is built: `TOOLSCAN_BIN`, else `target/debug/toolscan`
or `target/release/toolscan` of the workspace), and in any case the case's
own expectations, compared as `toolscan_testkit::corpus::check_expect`
compares them (see `tests/corpus/README.md`).
"""

import json
import random
import subprocess

import pytest
from rust_reference import CLI, ROOT

import toolscan

CORPUS = ROOT / "tests" / "corpus"


def load_cases():
    """Every case, less those ``skip.json`` names (cases that contradict the
    contract or the catalogue, each with its reason)."""
    skip_file = CORPUS / "skip.json"
    skip = json.loads(skip_file.read_text(encoding="utf-8")) if skip_file.exists() else {}
    cases = []
    for f in sorted(CORPUS.glob("*.jsonl")):
        for line in f.read_text(encoding="utf-8").splitlines():
            if line.strip():
                case = json.loads(line)
                if case["id"] in skip:
                    continue
                case["file"] = f.name
                cases.append(case)
    return cases


CASES = load_cases()


def target_format(case):
    """The format a case exercises: its own, or for an `auto` case the one
    its note says detection must (or may) pick."""
    if case["format"] != "auto":
        return case["format"]
    note = case.get("note", "")
    for prefix in ("must pick `", "may pick `"):
        if prefix in note:
            return note.split(prefix, 1)[1].split("`", 1)[0]
    return "auto"


def implemented(case):
    try:
        toolscan.Parser(target_format(case))
        return True
    except toolscan.UnknownFormatError:
        return False


RUN = [c for c in CASES if implemented(c)]


def options(case):
    # The command line's default ids: seeded from 0.
    return {"ids": "seeded", "seed": 0, "tools": case.get("tools")}


def coalesce(dicts):
    """Consecutive text, reasoning and same-call argument deltas merged."""
    out = []
    for d in dicts:
        last = out[-1] if out else None
        if (
            last is not None
            and d["type"] == last["type"]
            and d["type"] in ("text", "reasoning", "tool_call_args")
            and d.get("index") == last.get("index")
        ):
            last["delta"] += d["delta"]
        else:
            out.append(dict(d))
    return out


def run(case, pieces):
    p = toolscan.Parser(case["format"], **options(case))
    events = []
    for piece in pieces:
        events += p.feed(piece)
    events += p.finish()
    return events


def char_cuts(text, sizes):
    out, i = [], 0
    for n in sizes:
        if i >= len(text):
            break
        out.append(text[i : i + n])
        i += n
    if i < len(text):
        out.append(text[i:])
    return out


def fixed(seq, n):
    return [seq[i : i + n] for i in range(0, len(seq), n)] or [seq]


def random_cuts(seq, seed, most):
    rng = random.Random(seed)
    out, i = [], 0
    while i < len(seq):
        n = rng.randint(1, most)
        out.append(seq[i : i + n])
        i += n
    return out or [seq]


def chunkings(text):
    """(name, pieces): str pieces, and bytes pieces (cut inside characters)."""
    data = text.encode("utf-8")
    yield "whole", [text]
    yield "1 char", fixed(text, 1)
    yield "4 chars", fixed(text, 4)
    for seed in (1, 2, 3):
        yield f"random chars {seed}", random_cuts(text, seed, 16)
    yield "whole bytes", [data]
    yield "1 byte", fixed(data, 1)
    yield "3 bytes", fixed(data, 3)
    for seed in (4, 5):
        yield f"random bytes {seed}", random_cuts(data, seed, 7)


def check_expect(expect, events):
    """The case's expectations, as the testkit compares them."""
    text = "".join(e.delta for e in events if e.type == "text")
    got_text = " ".join(text.split())
    assert got_text == expect.get("text", ""), "text"
    calls = [e for e in events if e.type == "tool_call_end"]
    want = expect.get("tool_calls") or []
    assert len(calls) == len(want), f"{len(calls)} calls, want {len(want)}"
    for got, w in zip(calls, want):
        assert got.name == w.get("name", "")
        assert got.parsed() == w["arguments"]
        if "id" in w:
            assert got.id == w["id"]
        assert got.id != ""
    if isinstance(expect.get("diagnostics"), int):
        n = sum(1 for e in events if e.type == "diagnostic")
        assert n == expect["diagnostics"], "diagnostics"


def cli_events(case, tmp_path):
    args = [str(CLI), "parse", "--format", case["format"], "--output", "events"]
    if case.get("tools") is not None:
        tools = tmp_path / "tools.json"
        tools.write_text(json.dumps(case["tools"]), encoding="utf-8")
        args += ["--tools", str(tools)]
    out = subprocess.run(args, input=case["input"].encode("utf-8"), capture_output=True, check=True)
    return [json.loads(line) for line in out.stdout.decode("utf-8").splitlines() if line.strip()]


def test_the_corpus_is_there():
    assert len(CASES) >= 500
    assert len(RUN) >= 450


@pytest.mark.parametrize("case", RUN, ids=[c["id"] for c in RUN])
def test_corpus_case_equals_the_rust_result_under_every_chunking(case, tmp_path):
    reference = coalesce(e.to_dict() for e in run(case, [case["input"]]))
    if CLI is not None:
        assert reference == coalesce(cli_events(case, tmp_path)), "not what `toolscan parse` prints"
    for name, pieces in chunkings(case["input"]):
        events = run(case, pieces)
        assert events[-1].type == "done", name
        try:
            check_expect(case["expect"], events)
        except AssertionError as e:
            raise AssertionError(f"[{name}] {e}") from None
        assert coalesce(e.to_dict() for e in events) == reference, name
