"""toolscan's vLLM tool-parser plugin, driven through vLLM 0.33's own chat
streaming loop and compared with vLLM's own parser of each format.

The answers are written the way each model's chat template writes calls
(Qwen/Hermes `<tool_call>` JSON, Qwen3-Coder's XML parameters, Llama 3.1's
bare JSON with "parameters", Mistral's `[TOOL_CALLS]name[ARGS]{...}`, the
pythonic list). Where vLLM's parser is right, both must give the same
content and calls on every chunking; where it is wrong, the test says so and
asserts the right answer (and pins vLLM 0.33.0's wrong one).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from harness import Tokenizer, fold, legacy, request, serve, split, whole
from vllm.entrypoints.generate.base.protocol import DeltaMessage
from vllm.tool_parsers import ToolParser, ToolParserManager

import toolscan
import toolscan.vllm as plugin

HERE = os.path.dirname(os.path.abspath(__file__))
SIZES = [1, 2, 3, 4, 7, 16, [1, 5, 2, 11, 3], 0]

QWEN_TEXT_CALL = (
    "I will check the weather.\n"
    '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}\n</tool_call>'
)
QWEN_TWO_CALLS = (
    '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>\n'
    '<tool_call>\n{"name": "write_file", "arguments": {"path": "a.txt", '
    '"content": "line 1\\nline \\"2\\" <tool_call> {}"}}\n</tool_call>'
)
QWEN3_CODER = (
    "Let me look.\n<tool_call>\n<function=get_weather>\n<parameter=city>\nSan Francisco\n"
    "</parameter>\n<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>"
)
LLAMA_JSON = '{"name": "get_weather", "parameters": {"city": "Paris", "days": 3}}'
MISTRAL_V11 = (
    '[TOOL_CALLS]get_weather[ARGS]{"city": "Paris", "days": 3}'
    '[TOOL_CALLS]write_file[ARGS]{"path": "a.txt", "content": "hi"}'
)
PYTHONIC = '[get_weather(city="Paris", days=3), write_file(path="a.txt", content="x, y")]'
SEED_OSS = (
    "I will check.<seed:tool_call>\n<function=get_weather>\n<parameter=city>Paris</parameter>\n"
    "<parameter=days>3</parameter>\n</function>\n</seed:tool_call>"
)
GLM45 = (
    "Checking.<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n"
    "<arg_key>days</arg_key>\n<arg_value>3</arg_value>\n</tool_call>"
)
MINIMAX_M2 = (
    'Checking.\n<minimax:tool_call>\n<invoke name="get_weather">\n'
    '<parameter name="city">Paris</parameter>\n<parameter name="days">3</parameter>\n'
    "</invoke>\n</minimax:tool_call>"
)
KIMI_K2 = (
    "Checking.<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0"
    '<|tool_call_argument_begin|>{"city": "Paris", "days": 3}<|tool_call_end|>'
    "<|tool_calls_section_end|>"
)
GRANITE = (
    'Let me look.<|tool_call|>[{"name": "get_weather", "arguments": {"city": "Paris"}}, '
    '{"name": "write_file", "arguments": {}}]'
)
OLMO3 = (
    '<function_calls>get_weather(city="Paris", days=3)\n'
    'write_file(path="a.txt", content="x")</function_calls>'
)
LFM2 = '<|tool_call_start|>[get_weather(city="Paris", days=3)]<|tool_call_end|>The weather is mild.'

# (vLLM's name, our name, answer): vLLM's parser gets these right on every
# chunking tried, and ours must give the same.
AGREED = [
    ("hermes", "toolscan-hermes", QWEN_TEXT_CALL),
    ("hermes", "toolscan-hermes", QWEN_TWO_CALLS),
    ("hermes", "toolscan-hermes", "Just text, no call: 1 < 2 and <b>bold</b>."),
    (
        "hermes",
        "toolscan-hermes",
        "Météo à Zürich ☀️ — je vérifie.\n<tool_call>\n"
        '{"name": "get_weather", "arguments": {"city": "Zürich 🇨🇭", "unit": "c"}}\n</tool_call>',
    ),
    ("qwen3_coder", "toolscan-qwen3-coder", QWEN3_CODER),
    ("pythonic", "toolscan-pythonic", PYTHONIC),
    ("mistral", "toolscan-mistral-v11", MISTRAL_V11),
    ("seed_oss", "toolscan-seed-oss", SEED_OSS),
    ("glm45", "toolscan-glm45", GLM45),
    ("minimax_m2", "toolscan-minimax-m2", MINIMAX_M2),
    ("kimi_k2", "toolscan-kimi-k2", KIMI_K2),
    ("granite", "toolscan-granite", GRANITE),
    ("olmo3", "toolscan-olmo3", OLMO3),
    ("lfm2", "toolscan-lfm2", LFM2),
    ("llama4_pythonic", "toolscan-pythonic", '[get_weather(city="Paris", days=3)]'),
]


def summary(folded):
    """Content, calls (parsed arguments) and finish reason. Content that is
    only whitespace counts as none: the Qwen template writes a newline
    between two `<tool_call>` blocks, which toolscan sends as content and
    vLLM's Hermes parser drops; vLLM's own non-streaming path sends no
    whitespace-only content either."""
    content = folded.content if folded.content.strip() else ""
    return content, folded.call_summary(), folded.finish_reason


def size_id(size):
    return "x".join(map(str, size)) if isinstance(size, list) else str(size)


# -- registration -----------------------------------------------------------


def test_every_format_is_registered_under_toolscan_dash_its_name():
    names = ["toolscan"] + [f"toolscan-{f.name}" for f in toolscan.formats()]
    for name in names:
        cls = ToolParserManager.get_tool_parser(name)
        assert issubclass(cls, ToolParser), name
        assert cls is plugin.PARSERS[name]
    assert ToolParserManager.get_tool_parser("toolscan-qwen3-coder").format == "qwen3-coder"
    assert ToolParserManager.get_tool_parser("toolscan").format is None


def _in_fresh_interpreter(code: str) -> str:
    prelude = (
        "import sys, importlib.util\n"
        f"sys.path[:0] = [{os.path.join(HERE, 'stubs')!r}]\n"
        "if importlib.util.find_spec('torch') is None:\n"
        "    import vllm_stubs; vllm_stubs.install()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", prelude + code],
        check=False,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize("how", ["path", "module"])
def test_vllm_import_tool_parser_finds_toolscan_hermes(how):
    """`vllm serve --tool-parser-plugin X` calls `import_tool_parser(X)`. Given
    the path of vllm.py, vLLM imports the file under its base name, "vllm":
    the plugin must put vLLM back, or every later vLLM import fails."""
    target = plugin.__file__ if how == "path" else "toolscan.vllm"
    out = _in_fresh_interpreter(
        "from vllm.tool_parsers import ToolParserManager, ToolParser\n"
        f"ToolParserManager.import_tool_parser({target!r})\n"
        "cls = ToolParserManager.get_tool_parser('toolscan-hermes')\n"
        "assert issubclass(cls, ToolParser) and cls.format == 'hermes'\n"
        "assert 'toolscan-qwen3-coder' in ToolParserManager.list_registered()\n"
        "import vllm, vllm.tool_parsers.hermes_tool_parser\n"
        "assert hasattr(vllm, '__path__'), vllm\n"
        "ToolParserManager.get_tool_parser('qwen3_coder')  # a lazy import of vLLM's\n"
        "print(cls.__module__, ToolParserManager.get_tool_parser('toolscan').__name__)\n"
    )
    assert out.split() == ["toolscan.vllm", "ToolscanToolParser"]


# -- the same answers as vLLM's parsers where those are right -----------------


@pytest.mark.parametrize("size", SIZES, ids=size_id)
@pytest.mark.parametrize("theirs,ours,text", AGREED, ids=lambda v: str(v)[:24])
def test_same_content_and_calls_as_vllms_parser(theirs, ours, text, size):
    deltas = split(text, size)
    expected = serve(theirs, deltas)
    got = serve(ours, deltas)
    assert summary(got) == summary(expected)
    if theirs in ("hermes", "mistral"):
        # Both pass the model's JSON through: the same bytes.
        assert [c["arguments"] for c in got.calls] == [c["arguments"] for c in expected.calls]


@pytest.mark.parametrize("size", [1, 4, 16], ids=size_id)
def test_a_call_arrives_whole_in_the_delta_that_closes_it(size):
    """By default (the OpenAI delta rules of `toolscan sse`): nothing of a
    call goes out before its end is confirmed; then one entry carries its
    id, name and all its arguments, in the delta that brings the closing
    tag (no finish needed)."""
    text = QWEN_TEXT_CALL
    deltas = split(text, size)
    messages = serve_messages("toolscan-hermes", deltas)
    end = text.index("</tool_call>") + len("</tool_call>")
    seen, entries = 0, []
    for delta, message in zip(deltas, messages):
        seen += len(delta)
        for tc in (message.tool_calls if message else None) or []:
            entries.append((seen >= end, tc.id is not None, tc.function.name, tc.function.arguments))
    assert entries == [(True, True, "get_weather", '{"city": "Paris", "days": 3}')]
    assert fold(messages).call_summary() == [("get_weather", {"city": "Paris", "days": 3})]


@pytest.mark.parametrize("size", [1, 4, 16], ids=size_id)
def test_arguments_stream_as_they_arrive_when_asked(size, monkeypatch):
    """With live arguments (`TOOLSCAN_STREAM_ARGUMENTS=1`): the arguments
    come in pieces as their deltas arrive, not in one block at the call's
    end; the call is complete, arguments and all, with the delta that
    closes it."""
    monkeypatch.setattr(plugin.ToolscanToolParser, "stream_arguments", True)
    text = QWEN_TEXT_CALL
    deltas = split(text, size)
    messages = serve_messages("toolscan-hermes", deltas)
    end = text.index("}}") + 2  # the arguments' last byte, before `\n</tool_call>`
    sent_before_end, seen = "", 0
    for delta, message in zip(deltas, messages):
        seen += len(delta)
        if seen >= end or message is None:
            continue
        for tc in message.tool_calls:
            sent_before_end += (tc.function.arguments or "") if tc.function else ""
    assert sent_before_end.startswith('{"city": "Par')
    assert fold(messages).call_summary() == [("get_weather", {"city": "Paris", "days": 3})]


BROKEN_CALLS = [
    # The JSON breaks after the arguments began.
    'Sure.<tool_call>\n{"name": "get_weather", "arguments": {"city": }\n</tool_call> Sorry.',
    # A stray closer inside the call's JSON.
    '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Pa</tool_call>ris"}}',
]


@pytest.mark.parametrize("size", [1, 3, 0], ids=size_id)
@pytest.mark.parametrize("text", BROKEN_CALLS, ids=["bad-json", "stray-closer"])
def test_a_broken_call_never_reaches_the_client_as_a_call(text, size):
    """A block that breaks after it began (issue: phantom calls) sends no
    call entry at any point: its bytes are content, as the model wrote
    them, and nothing asks the client to parse arguments that never
    completed."""
    deltas = split(text, size)
    messages = serve_messages("toolscan-hermes", deltas)
    assert all(not (m and m.tool_calls) for m in messages)
    got = serve("toolscan-hermes", deltas)
    assert (got.content, got.calls) == (text, [])


def serve_messages(name, deltas):
    """The raw DeltaMessages of `serve` (no finish reason: a stream still going)."""
    from vllm.entrypoints.openai.chat_completion.stream_processor import ChatStreamProcessor
    from vllm.parser.parser_manager import ParserManager

    tokenizer, req = Tokenizer(), request()
    parser_cls = ParserManager.get_parser(tool_parser_name=name, enable_auto_tools=True)
    processor = ChatStreamProcessor(
        req, parser_cls(tokenizer, req.tools), enable_auto_tools=True, parser_cls=parser_cls
    )
    return [processor.step(d, tokenizer.encode(d), None, [1]).delta for d in deltas]


@pytest.mark.parametrize("size", [1, 5, 0], ids=size_id)
def test_legacy_driver_gives_what_the_serving_loop_gives(size):
    """Called directly with previous/current/delta texts and token ids (the
    pre-unified serving loop), then finish_streaming()."""
    deltas = split(QWEN_TEXT_CALL + " Done.", size)
    a, b = legacy("toolscan-hermes", deltas), serve("toolscan-hermes", deltas)
    assert (a.content, a.call_summary()) == (b.content, b.call_summary())


def test_plain_text_passes_delta_for_delta():
    text = "The weather in Paris is mild, 18 degrees; take a coat. " * 20
    messages = serve_messages("toolscan-hermes", split(text, 4))
    assert all(m is not None and m.content for m in messages)
    assert "".join(m.content for m in messages) == text
    assert all(not m.tool_calls for m in messages)


def test_state_the_serving_layer_reads_at_the_end():
    """prev_tool_call_arr / streamed_args_for_tool: vLLM's
    get_remaining_unstreamed_args() finds nothing left to send."""
    tool_parser = plugin.PARSERS["toolscan-hermes"](Tokenizer(), request().tools)
    req = request()
    for delta in split(QWEN_TWO_CALLS, 5):
        tool_parser.extract_tool_calls_streaming("", "", delta, [], [], [], req)
    tool_parser.finish_streaming()
    assert [c["name"] for c in tool_parser.prev_tool_call_arr] == ["get_weather", "write_file"]
    assert [json.loads(c["arguments"]) for c in tool_parser.prev_tool_call_arr] == [
        {"city": "Paris"},
        {"path": "a.txt", "content": 'line 1\nline "2" <tool_call> {}'},
    ]
    assert tool_parser.streamed_args_for_tool == [
        c["arguments"] for c in tool_parser.prev_tool_call_arr
    ]
    assert tool_parser.current_tool_id == 1
    assert tool_parser.get_remaining_unstreamed_args() == ""


# -- where vLLM's parsers are wrong --------------------------------------------

HERMES_TEXT_AROUND = (
    "Checking.\n"
    '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>\n'
    "I asked for Paris; the answer follows."
)


@pytest.mark.parametrize("size", [1, 4, 0], ids=size_id)
def test_text_after_a_call_is_kept(size):
    """vLLM 0.33's Hermes parser sends content only up to the first
    `<tool_call>`: the sentence after the call is lost, streaming or not."""
    deltas = split(HERMES_TEXT_AROUND, size)
    ours = serve("toolscan-hermes", deltas)
    assert ours.content == "Checking.\n\nI asked for Paris; the answer follows."
    assert ours.call_summary() == [("get_weather", {"city": "Paris"})]
    theirs = serve("hermes", deltas)
    assert theirs.content == "Checking.\n"  # vLLM: the sentence after the call is gone
    assert whole("toolscan-hermes", HERMES_TEXT_AROUND).content == ours.content
    assert whole("hermes", HERMES_TEXT_AROUND).content == "Checking.\n"


@pytest.mark.parametrize("size", [1, 3], ids=size_id)
def test_text_held_back_at_the_end_is_sent_when_the_stream_finishes(size):
    """An answer that ends in what could start a marker (`<tool_c`): vLLM's
    Hermes parser holds it back and never sends it; the plugin's
    finish_streaming() (called by vLLM at the end) sends it."""
    text = "Compare a <tool_c"
    ours = serve("toolscan-hermes", split(text, size))
    assert (ours.content, ours.calls, ours.finish_reason) == (text, [], "stop")
    assert serve("hermes", split(text, size)).content == "Compare a "  # vLLM loses "<tool_c"


def test_llama_json_answer_in_one_delta():
    """vLLM 0.33's llama3_json parser finds no call, and sends no content, when
    the whole answer arrives in one delta (a fast stream, or a short call)."""
    ours = serve("toolscan-llama3-json", [LLAMA_JSON])
    assert ours.call_summary() == [("get_weather", {"city": "Paris", "days": 3})]
    assert ours.finish_reason == "tool_calls"
    theirs = serve("llama3_json", [LLAMA_JSON])
    assert (theirs.content, theirs.calls) == ("", [])  # vLLM: the call is lost


WEATHER = [("get_weather", {"city": "Paris", "days": 3})]


class Garbled(list):
    """The raw argument texts vLLM's parser streamed, which are not JSON."""


# (vLLM's name, our name, answer, the right content and calls, and what
# vLLM 0.33.0's parser gives instead on the chunkings where it is wrong:
# content and calls, or `Garbled` arguments).
VLLM_WRONG = [
    (
        "deepseek_v3",
        "toolscan-deepseek-v3",
        "Checking.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n"
        '```json\n{"city": "Paris", "days": 3}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>',
        ("Checking.", WEATHER),
        {0: ("", [])},  # in one delta: the call and the text are lost
    ),
    (
        "deepseek_v31",
        "toolscan-deepseek-v3.1",
        "Checking.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>"
        '{"city": "Paris", "days": 3}<｜tool▁call▁end｜><｜tool▁calls▁end｜>',
        ("Checking.", WEATHER),
        {
            3: Garbled(['{"city": "Paris", "days": 3']),
            16: Garbled(['{"city": "Paris"']),
            0: ("", []),
        },
    ),
    (
        "internlm",
        "toolscan-internlm",
        "Checking.<|action_start|><|plugin|>\n"
        '{"name": "get_weather", "parameters": {"city": "Paris", "days": 3}}<|action_end|>',
        ("Checking.", WEATHER),
        {0: ("Checking.", [])},
    ),
    (
        "step3",
        "toolscan-step3",
        "Checking.<｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜>"
        '<steptml:invoke name="get_weather"><steptml:parameter name="city">Paris</steptml:parameter>'
        '<steptml:parameter name="days">3</steptml:parameter></steptml:invoke>'
        "<｜tool_call_end｜><｜tool_calls_end｜>",
        ("Checking.", WEATHER),
        {0: ("Checking.", [])},
    ),
    (
        "jamba",
        "toolscan-jamba",
        '<tool_calls>[{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}]</tool_calls>',
        ("", WEATHER),
        {
            1: Garbled(['{"Paris, "days": 3']),
            4: Garbled(['{"city": "Paris, "days": 3']),
            0: ("", []),
        },
    ),
    (
        "xlam",
        "toolscan-xlam",
        '[{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}]',
        ("", WEATHER),
        {
            2: Garbled(['{"city": "Paris", "days": 3}{"city": "Paris", "days": 3}']),
            4: Garbled(['{{"city": "Paris", "days": 3}']),
        },
    ),
    (
        "phi4_mini_json",
        "toolscan-phi4-mini",
        'functools[{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}]',
        ("", WEATHER),
        {1: ("", []), 4: ("", []), 0: ("", [])},  # never a call, and the text is gone
    ),
    (
        "functiongemma",
        "toolscan-functiongemma",
        "<start_function_call>call:get_weather{city:<escape>Paris<escape>,days:3}"
        "<end_function_call>",
        ("", WEATHER),
        # the bare number is dropped; in one delta, the whole call
        {
            1: ("", [("get_weather", {"city": "Paris"})]),
            4: ("", [("get_weather", {"city": "Paris"})]),
            0: ("", []),
        },
    ),
    ("llama3_json", "toolscan-llama3-json", LLAMA_JSON, ("", WEATHER), {0: ("", [])}),
]


@pytest.mark.parametrize("size", SIZES, ids=size_id)
@pytest.mark.parametrize(
    "theirs,ours,text,right,wrong", VLLM_WRONG, ids=[case[0] for case in VLLM_WRONG]
)
def test_right_where_vllms_parser_is_wrong(theirs, ours, text, right, wrong, size):
    """Every chunking gives the right content and calls; vLLM's parser of
    the format loses the call, the text or an argument on some of them, or
    streams arguments that are not JSON: pinned as vLLM 0.33.0 does it."""
    deltas = split(text, size)
    got = summary(serve(ours, deltas))
    assert got == (*right, "tool_calls")
    if not isinstance(size, int) or size not in wrong:
        return
    if isinstance(wrong[size], Garbled):
        assert [c["arguments"] for c in serve(theirs, deltas).calls] == wrong[size]
    else:
        content, calls = wrong[size]
        assert summary(serve(theirs, deltas))[:2] == (content, calls)


@pytest.mark.parametrize("size", [1, 4, 16], ids=size_id)
def test_llama_json_agrees_when_streamed(size):
    deltas = split(LLAMA_JSON, size)
    assert summary(serve("toolscan-llama3-json", deltas)) == summary(serve("llama3_json", deltas))


# -- options: tools, tool_choice, the model ------------------------------------


def test_request_tools_type_the_parameters():
    """Qwen3-Coder writes parameter values bare; the request's tool schema
    says which are strings. `days` declared a string stays "3"."""
    tools = json.loads(json.dumps(request().model_dump(exclude_none=True)["tools"]))
    tools[0]["function"]["parameters"]["properties"]["days"] = {"type": "string"}
    req = request(tools=tools)
    deltas = split(QWEN3_CODER, 4)
    ours = serve("toolscan-qwen3-coder", deltas, req=req)
    assert ours.call_summary() == [("get_weather", {"city": "San Francisco", "days": "3"})]
    assert summary(ours) == summary(serve("qwen3_coder", deltas, req=req))


def test_tool_choice_none_passes_the_text_through():
    req = request(tool_choice="none")
    got = serve("toolscan-hermes", split(QWEN_TEXT_CALL, 4), req=req)
    assert (got.content, got.calls) == (QWEN_TEXT_CALL, [])
    assert whole("toolscan-hermes", QWEN_TEXT_CALL, req=req).content == QWEN_TEXT_CALL


@pytest.mark.parametrize(
    "tokenizer_name,served_name,text,calls",
    [
        ("Qwen/Qwen3-8B", "test/model", QWEN_TEXT_CALL, [("get_weather", {"city": "Paris", "days": 3})]),
        ("Qwen/Qwen3-Coder-30B-A3B-Instruct", "coder", QWEN3_CODER,
         [("get_weather", {"city": "San Francisco", "days": 3})]),
        # A local path that names no model: the request's (served) model name
        # does. (Bare JSON has no marker: `auto` would not read it as a call.)
        ("/srv/models/snapshot-1", "meta-llama/Llama-3.1-8B-Instruct", LLAMA_JSON,
         [("get_weather", {"city": "Paris", "days": 3})]),
        # Neither: the format is detected from the output.
        ("someone/unknown-model", "test/model", QWEN_TEXT_CALL,
         [("get_weather", {"city": "Paris", "days": 3})]),
    ],
)  # fmt: skip
def test_plain_toolscan_takes_the_format_from_the_model(tokenizer_name, served_name, text, calls):
    req = request()
    req.model = served_name
    got = serve("toolscan", split(text, 3), req=req, tokenizer=Tokenizer(tokenizer_name))
    assert got.call_summary() == calls


def test_a_call_cut_off_by_the_token_limit_comes_back_as_text():
    """The engine stops inside a call (finish reason "length"): the call is
    not dispatched; its bytes come back as content at the end."""
    text = 'Sure.<tool_call>\n{"name": "get_weather", "arguments": {"city": "Pa'
    got = serve("toolscan-hermes", split(text, 4), finish_reason="length")
    assert (got.content, got.calls) == (text, [])
    assert got.finish_reason == "length"
    tool_parser = plugin.PARSERS["toolscan-hermes"](Tokenizer(), None)
    for delta in split(text, 4):
        tool_parser.extract_tool_calls_streaming("", "", delta, [], [], [], request())
    end = tool_parser.finish_streaming()
    assert isinstance(end, DeltaMessage) and end.content.startswith("<tool_call>")
    assert [d.kind for d in tool_parser.diagnostics] == ["truncated"]


def test_whole_answer_matches_the_stream():
    info = whole("toolscan-hermes", QWEN_TWO_CALLS)
    streamed = serve("toolscan-hermes", split(QWEN_TWO_CALLS, 3))
    assert info.tools_called
    assert [(c.function.name, json.loads(c.function.arguments)) for c in info.tool_calls] == (
        streamed.call_summary()
    )
    assert all(c.type == "function" and c.id for c in info.tool_calls)
    assert info.content == (streamed.content or None)


def test_tools_of_either_api_reach_the_parser_as_the_chat_tools_array():
    from openai.types.responses.function_tool import FunctionTool

    chat = request().tools
    flat = FunctionTool(
        type="function",
        name="get_weather",
        parameters={"type": "object", "properties": {"city": {"type": "string"}}},
        strict=False,
    )
    assert json.loads(plugin._tools_json(chat))[0]["function"]["name"] == "get_weather"
    assert json.loads(plugin._tools_json([flat])) == [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
                "strict": False,
            },
        }
    ]
    assert plugin._tools_json([{"type": "web_search"}]) is None
    assert plugin._tools_json(None) is None


def serve_with_reasoning(name, reasoning_parser, deltas):
    from vllm.entrypoints.openai.chat_completion.stream_processor import ChatStreamProcessor
    from vllm.parser.parser_manager import ParserManager

    tokenizer, req = Tokenizer(), request(include_reasoning=True)
    parser_cls = ParserManager.get_parser(
        tool_parser_name=name, reasoning_parser_name=reasoning_parser, enable_auto_tools=True
    )
    processor = ChatStreamProcessor(
        req, parser_cls(tokenizer, req.tools), enable_auto_tools=True, parser_cls=parser_cls
    )
    messages, reasoning, step = [], "", None
    for i, delta in enumerate(deltas):
        last = i == len(deltas) - 1
        step = processor.step(delta, tokenizer.encode(delta), "stop" if last else None, [1, 2, 3])
        messages.append(step.delta)
        if step.delta is not None and step.delta.reasoning:
            reasoning += step.delta.reasoning
    return reasoning, summary(fold(messages, step.finish_reason))


@pytest.mark.parametrize("size", [1, 4, 0], ids=size_id)
@pytest.mark.parametrize("reasoning_parser", ["qwen3", "deepseek_r1"])
def test_after_vllms_reasoning_parser(reasoning_parser, size):
    """With `--reasoning-parser` (qwen3's is engine-based like the plugin,
    deepseek_r1's is not), the plugin gets the text after `</think>`."""
    text = (
        "<think>I should call the tool.</think>Checking.<tool_call>\n"
        '{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
    )
    deltas = split(text, size)
    ours = serve_with_reasoning("toolscan-hermes", reasoning_parser, deltas)
    assert ours == (
        "I should call the tool.",
        ("Checking.", [("get_weather", {"city": "Paris"})], "tool_calls"),
    )
    assert ours == serve_with_reasoning("hermes", reasoning_parser, deltas)


def test_delta_objects_are_built_without_validation_and_equal_validated_ones():
    """The plugin builds vLLM's delta objects without pydantic's validation
    (the cost of a delta); the builders are checked at import against
    validated objects and must have passed that check with vLLM 0.33."""
    assert plugin._Message.__qualname__.startswith("_fast_builders")
    from vllm.entrypoints.generate.base.protocol import DeltaFunctionCall, DeltaToolCall

    built = plugin._Message(None, [plugin._ToolCall(3, plugin._Function(arguments='"a'))])
    validated = DeltaMessage(
        content=None,
        tool_calls=[DeltaToolCall(index=3, function=DeltaFunctionCall(arguments='"a'))],
    )
    assert built == validated
    assert built.model_dump_json() == validated.model_dump_json()
    assert built.tool_calls[0].function.model_dump(exclude_none=True) == {"arguments": '"a'}
