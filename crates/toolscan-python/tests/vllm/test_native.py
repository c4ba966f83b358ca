"""The plugin's streaming path (`toolscan._native.VllmStream`) with the
native builders of vLLM's delta objects (built in Rust) against the same
stream with the plugin's Python builders (what it falls back to when the
native ones fail the import-time check): on the same streams, both must
return equal objects, delta for delta, and leave the tool parser in the
same state.
"""

from __future__ import annotations

import gc
import weakref

import pytest
from harness import Tokenizer, deltas_through, request, serve, split
from test_plugin import AGREED, HERMES_TEXT_AROUND, SIZES, VLLM_WRONG, size_id
from vllm.entrypoints.generate.base.protocol import (
    DeltaFunctionCall,
    DeltaMessage,
    DeltaToolCall,
)

import toolscan.vllm as plugin
from toolscan import _native

# (our parser's name, answer): every answer of the other tests, plus the
# streams where the Python path does the rare things (a call cut off, text
# held back to the end, a malformed block, ids of the model's own).
STREAMS = sorted(
    {(ours, text) for _, ours, text in AGREED} | {(case[1], case[2]) for case in VLLM_WRONG}
) + [
    ("toolscan-hermes", HERMES_TEXT_AROUND),
    ("toolscan-hermes", 'Sure.<tool_call>\n{"name": "get_weather", "arguments": {"city": "Pa'),
    ("toolscan-hermes", "Compare a <tool_c"),
    ("toolscan-hermes", "<tool_call>\n{not json at all}\n</tool_call> and after"),
    ("toolscan-hermes", '<tool_call>\n{"name": "get_weather", "arguments": {}}\n</tool_call>'),
    (
        "toolscan",
        'Hi.<tool_call>\n{"name": "write_file", "arguments": {"path": "é"}}\n</tool_call>',
    ),
]


def stream(name, deltas, native, req=None):
    """Drive the tool parser as vLLM's serving layer does (previous /
    current / delta texts and token ids, one call per delta, then
    finish_streaming), on the native path or the Python one; its messages
    and the state vLLM reads at the end."""
    saved = plugin._NATIVE
    if not native:
        plugin._NATIVE = None
    try:
        tokenizer, req = Tokenizer(), req if req is not None else request()
        tool_parser = plugin.PARSERS[name](tokenizer, req.tools)
        messages = deltas_through(tool_parser, deltas, req, tokenizer)
        messages.append(tool_parser.finish_streaming())
        # A delta after the end: nothing.
        messages.append(tool_parser.extract_tool_calls_streaming("", "", "x", [], [], [], req))
    finally:
        plugin._NATIVE = saved
    state = (
        tool_parser.prev_tool_call_arr,
        tool_parser.streamed_args_for_tool,
        tool_parser.current_tool_id,
        tool_parser.current_tool_name_sent,
        [(d.kind, d.offset, d.message) for d in tool_parser.diagnostics],
        tool_parser.get_remaining_unstreamed_args(),
    )
    return messages, state, tool_parser


def shape(obj, ids=None):
    """An object down to what a test can see of it: its class, its fields
    and the ones set (nested), its extra and private parts. With `ids` (a
    dict, filled on the way), each call id is replaced by its rank among
    the ids met: generated ids differ from one parser to the next."""
    if isinstance(obj, list):
        return [shape(o, ids) for o in obj]
    if not isinstance(obj, (DeltaMessage, DeltaToolCall, DeltaFunctionCall)):
        return obj
    fields = {k: shape(v, ids) for k, v in obj.__dict__.items()}
    dumped = obj.model_dump_json()
    if ids is not None:
        if isinstance(obj, DeltaToolCall) and obj.id is not None:
            fields["id"] = ids.setdefault(obj.id, f"id-{len(ids)}")
        for id_, rank in ids.items():
            dumped = dumped.replace(id_, rank)
    return (
        type(obj),
        fields,
        obj.model_fields_set,
        obj.__pydantic_extra__,
        obj.__pydantic_private__,
        dumped,
    )


@pytest.mark.parametrize("size", SIZES, ids=size_id)
@pytest.mark.parametrize("name,text", STREAMS, ids=lambda v: str(v)[:24])
def test_native_and_python_paths_give_equal_objects_and_state(name, text, size):
    deltas = split(text, size)
    native, native_state, _ = stream(name, deltas, native=True)
    python, python_state, _ = stream(name, deltas, native=False)
    assert shape(native, {}) == shape(python, {})
    assert native_state == python_state


def test_the_models_own_ids_come_through_the_native_path():
    """Ids the format carries (Kimi K2's) are the call entries' ids on
    either path (generated ones differ from one parser to the next: the
    comparison above ranks them)."""
    text = (
        "Checking.<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0"
        '<|tool_call_argument_begin|>{"city": "Paris"}<|tool_call_end|>'
        "<|tool_calls_section_end|>"
    )
    native, _, _ = stream("toolscan-kimi-k2", split(text, 3), native=True)
    python, _, _ = stream("toolscan-kimi-k2", split(text, 3), native=False)
    ids = lambda ms: [c.id for m in ms if m for c in m.tool_calls if c.id]  # noqa: E731
    assert ids(native) == ids(python) == ["functions.get_weather:0"]


def test_the_stream_is_bound_as_the_instances_method_with_either_builders():
    """After the first delta, vLLM's call goes straight to the native
    stream's method (no Python frame of the plugin's in between), with the
    native builders and with the Python ones alike: the delta rules are
    the native stream's either way."""
    assert isinstance(plugin._NATIVE, _native.VllmBuilders)
    tool_parser = plugin.PARSERS["toolscan-hermes"](Tokenizer(), request().tools)
    first = tool_parser.extract_tool_calls_streaming("", "", "Hi", [], [], [], request())
    assert first == DeltaMessage(content="Hi")
    method = tool_parser.extract_tool_calls_streaming
    assert type(method).__name__ == "builtin_function_or_method"
    assert isinstance(method.__self__, _native.VllmStream)
    # And with the Python builders when the native ones are not there.
    saved, plugin._NATIVE = plugin._NATIVE, None
    try:
        python = plugin.PARSERS["toolscan-hermes"](Tokenizer(), request().tools)
        first = python.extract_tool_calls_streaming("", "", "Hi", [], [], [], request())
        assert type(first) is DeltaMessage and first.content == "Hi"
        method = python.extract_tool_calls_streaming
        assert isinstance(method.__self__, _native.VllmStream)
    finally:
        plugin._NATIVE = saved


def test_native_builders_pass_the_import_check_and_equal_validated_objects():
    native = plugin._NATIVE
    built = (native.message, native.tool_call, native.function)
    assert plugin._same_objects(built, plugin._validated_builders())
    args = lambda a: native.message(None, [native.tool_call(3, native.function(arguments=a))])  # noqa: E731
    made = args('"a')
    validated = DeltaMessage(
        content=None,
        tool_calls=[DeltaToolCall(index=3, function=DeltaFunctionCall(arguments='"a'))],
    )
    assert shape(made) == shape(validated)
    # A call's whole entry: its name and its arguments set together.
    whole = native.function("f", "{}")
    assert shape(whole) == shape(DeltaFunctionCall(name="f", arguments="{}"))
    # Each object has its own fields-set: pydantic adds to it on assignment.
    other = args('"b')
    made.content = "x"
    assert other.model_fields_set == {"content", "tool_calls"}
    assert made.tool_calls[0].model_fields_set is not other.tool_calls[0].model_fields_set


def test_native_builders_refuse_a_class_that_is_not_a_pydantic_model():
    class NotAModel:
        model_config: dict = {}

    with pytest.raises(TypeError):
        _native.VllmBuilders(NotAModel, DeltaToolCall, DeltaFunctionCall)


def test_a_tool_parser_on_the_native_path_is_freed():
    """The tool parser holds its stream (as its method) and the stream the
    tool parser's attributes: the cycle is the garbage collector's to
    break."""
    tool_parser = plugin.PARSERS["toolscan-hermes"](Tokenizer(), request().tools)
    tool_parser.extract_tool_calls_streaming("", "", "<tool_call>", [], [], [], request())
    assert tool_parser._stream is not None
    gone = weakref.ref(tool_parser)
    del tool_parser
    gc.collect()
    assert gone() is None


def test_native_builders_through_vllms_loop_agree_with_the_python_ones():
    text = HERMES_TEXT_AROUND + '<tool_call>\n{"name": "write_file", "arguments": {}}\n</tool_call>'
    deltas = split(text, 4)
    native = serve("toolscan-hermes", deltas)
    saved, plugin._NATIVE = plugin._NATIVE, None
    try:
        python = serve("toolscan-hermes", deltas)
    finally:
        plugin._NATIVE = saved
    assert (native.content, native.call_summary(), native.finish_reason, native.messages) == (
        python.content,
        python.call_summary(),
        python.finish_reason,
        python.messages,
    )
