"""The Python API: Parser, the event classes, parse, formats,
format_for_model, the errors."""

import json

import pytest

import toolscan

CALL = '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>'


def feed_all(p, chunks):
    events = []
    for chunk in chunks:
        events += p.feed(chunk)
    return events + p.finish()


def test_feed_and_finish_give_the_call_and_its_text():
    p = toolscan.Parser("hermes")
    events = feed_all(p, ["I will check.<tool_", 'call>{"name": "get_weather", ', '"arguments": {"city": "Par', 'is"}}</tool_call>'])
    assert [e.type for e in events] == [
        "text", "tool_call_start", "tool_call_args", "tool_call_args", "tool_call_end", "done",
    ]
    end = events[-2]
    assert (end.name, end.arguments) == ("get_weather", '{"city": "Paris"}')
    assert end.parsed() == {"city": "Paris"}
    assert events[-1] == toolscan.Done("tool_calls")


def test_a_call_ends_in_the_feed_that_delivers_its_last_byte():
    p = toolscan.Parser("hermes")
    assert not any(e.type == "tool_call_end" for e in p.feed(CALL[:-1]))
    assert [e.type for e in p.feed(CALL[-1:])] == ["tool_call_end"]


def test_argument_deltas_add_up_to_the_arguments():
    p = toolscan.Parser("hermes")
    events = feed_all(p, [CALL[i : i + 3] for i in range(0, len(CALL), 3)])
    args = "".join(e.delta for e in events if isinstance(e, toolscan.ToolCallArgs))
    end = next(e for e in events if isinstance(e, toolscan.ToolCallEnd))
    assert args == end.arguments


def test_bytes_split_inside_a_character_give_the_same_text():
    data = "Zürich 🌍 ok".encode()
    p = toolscan.Parser("hermes")
    events = feed_all(p, [data[i : i + 1] for i in range(len(data))])
    assert "".join(e.delta for e in events if e.type == "text") == "Zürich 🌍 ok"
    assert not any(e.type == "diagnostic" for e in events)


def test_invalid_utf8_becomes_a_replacement_character_and_a_diagnostic():
    p = toolscan.Parser("hermes")
    events = feed_all(p, [b"a\xffb"])
    assert "".join(e.delta for e in events if e.type == "text") == "a\ufffdb"
    assert [e.kind for e in events if e.type == "diagnostic"] == ["invalid_utf8"]


def test_str_and_bytes_chunks_mix():
    p = toolscan.Parser("hermes")
    events = feed_all(p, [CALL[:20].encode(), CALL[20:40], bytearray(CALL[40:].encode())])
    assert [e.name for e in events if e.type == "tool_call_end"] == ["get_weather"]


def test_feed_takes_only_str_or_bytes():
    with pytest.raises(TypeError):
        toolscan.Parser().feed(12)


def test_events_are_frozen_comparable_hashable_and_matchable():
    e = toolscan.ToolCallEnd(0, "call_1", "f", '{"a": [1, 2]}')
    assert e == toolscan.ToolCallEnd(0, "call_1", "f", '{"a": [1, 2]}')
    assert e != toolscan.ToolCallEnd(1, "call_1", "f", '{"a": [1, 2]}')
    assert e != toolscan.ToolCallStart(0, "call_1", "f")
    assert len({e, toolscan.ToolCallEnd(0, "call_1", "f", '{"a": [1, 2]}')}) == 1
    assert repr(e) == "ToolCallEnd(index=0, id='call_1', name='f', arguments='{\"a\": [1, 2]}')"
    with pytest.raises(AttributeError):
        e.name = "g"
    match e:
        case toolscan.ToolCallEnd(index, id, name, arguments):
            assert (index, id, name) == (0, "call_1", "f")
    assert toolscan.ToolCallEnd.__match_args__ == ("index", "id", "name", "arguments")


def test_to_dict_is_the_json_of_the_command_line():
    cases = [
        (toolscan.Text("hi"), {"type": "text", "delta": "hi"}),
        (toolscan.Reasoning("hm"), {"type": "reasoning", "delta": "hm"}),
        (toolscan.ToolCallStart(0, "c", "f"), {"type": "tool_call_start", "index": 0, "id": "c", "name": "f"}),
        (toolscan.ToolCallArgs(0, '{"a"'), {"type": "tool_call_args", "index": 0, "delta": '{"a"'}),
        (toolscan.ToolCallEnd(0, "c", "f", '{"a": 1}'), {"type": "tool_call_end", "index": 0, "id": "c", "name": "f", "arguments": {"a": 1}}),
        (toolscan.Diagnostic("malformed", 3, "why"), {"type": "diagnostic", "kind": "malformed", "offset": 3, "message": "why"}),
        (toolscan.Done("stop"), {"type": "done", "finish_reason": "stop"}),
    ]
    for event, want in cases:
        assert event.type == want["type"]
        assert event.to_dict() == want


def test_parsed_gives_a_new_dict_each_time():
    e = toolscan.ToolCallEnd(0, "c", "f", '{"a": 1}')
    first = e.parsed()
    first["a"] = 2
    assert e.parsed() == {"a": 1}


def test_feed_after_finish_raises_and_finish_again_gives_nothing():
    p = toolscan.Parser("hermes")
    p.feed("hi")
    assert p.finish()[-1].type == "done"
    assert p.finished
    assert p.finish() == []
    with pytest.raises(toolscan.FinishedError):
        p.feed("more")
    assert issubclass(toolscan.FinishedError, toolscan.ToolscanError)


def test_unknown_format_and_bad_options_raise_typed_errors():
    with pytest.raises(toolscan.UnknownFormatError):
        toolscan.Parser("no-such-format")
    for bad in [
        {"max_call_bytes": 0},
        {"max_depth": -1},
        {"max_holdback": "10"},
        {"check_calls": "maybe"},
        {"calls_in_reasoning": "sometimes"},
        {"ids": "uuid"},
        {"tools": "not json"},
        {"tools": [{"no": "name"}]},
        {"tools": [object()]},
    ]:
        with pytest.raises(toolscan.OptionsError):
            toolscan.Parser("hermes", **bad)
    assert issubclass(toolscan.OptionsError, toolscan.ToolscanError)
    assert issubclass(toolscan.UnknownFormatError, toolscan.ToolscanError)


def test_model_picks_the_format_and_aliases_resolve():
    assert toolscan.format_for_model("Qwen/Qwen3-8B") == "hermes"
    assert toolscan.format_for_model("no/such-model") is None
    assert toolscan.Parser(model="Qwen/Qwen3-8B").format == "hermes"
    assert toolscan.Parser(model="no/such-model").format == "auto"
    assert toolscan.Parser("mistral", model="Qwen/Qwen3-8B").format == "mistral"
    assert toolscan.Parser("qwen3_coder").format == "qwen3-coder"
    assert toolscan.Parser().format == "auto"


def test_formats_lists_the_built_in_formats():
    fs = toolscan.formats()
    names = [f.name for f in fs]
    assert "hermes" in names and "mistral" in names and "auto" not in names
    for f in fs:
        assert isinstance(f, toolscan.FormatInfo)
        assert f.description
        toolscan.Parser(f.name)


def test_tools_as_a_list_or_json_text_flag_unknown_tools():
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]
    other = '<tool_call>{"name": "launch", "arguments": {}}</tool_call>'
    for t in (tools, json.dumps(tools)):
        events = feed_all(toolscan.Parser("hermes", tools=t), [other])
        assert [e.kind for e in events if e.type == "diagnostic"] == ["unknown_tool"]


def test_check_calls_reject_makes_a_bad_call_text():
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {
        "type": "object", "required": ["city"], "properties": {"city": {"type": "string"}}}}}]
    bad = '<tool_call>{"name": "get_weather", "arguments": {}}</tool_call>'
    r = toolscan.parse(bad, "hermes", tools=tools, check_calls="reject")
    assert r.tool_calls == [] and r.text == bad
    r = toolscan.parse(bad, "hermes", tools=tools, check_calls="report")
    assert [d.kind for d in r.tool_calls[0].diagnostics] == ["missing_parameter"]


def test_a_bare_name_finds_the_namespaced_tool_and_normalize_tool_names_renames_it():
    tools = [{"type": "function", "function": {"name": "functions.exec", "parameters": {
        "type": "object", "properties": {"pid": {"type": "string"}}}}}]
    call = "<tool_call>\n<function=exec>\n<parameter=pid>\n99797\n</parameter>\n</function>\n</tool_call>"
    r = toolscan.parse(call, "qwen3-coder", tools=tools)
    assert (r.tool_calls[0].name, r.tool_calls[0].parsed()) == ("exec", {"pid": "99797"})
    assert r.diagnostics == []
    r = toolscan.parse(call, "qwen3-coder", tools=tools, normalize_tool_names=True)
    assert r.tool_calls[0].name == "functions.exec"


def test_reasoning_options():
    think = "<think>Maybe Paris.</think>Sure."
    events = feed_all(toolscan.Parser("hermes", reasoning=True), [think])
    assert "".join(e.delta for e in events if e.type == "reasoning") == "Maybe Paris."
    assert "".join(e.delta for e in events if e.type == "text") == "Sure."
    r = toolscan.parse("Maybe Paris.</think>Sure.", "hermes", reasoning=True, starts_in_reasoning=True)
    assert (r.reasoning, r.text) == ("Maybe Paris.", "Sure.")
    quoted = f"<think>I could write {CALL}.</think>"
    assert toolscan.parse(quoted, "hermes").tool_calls == []
    assert len(toolscan.parse(quoted, "hermes", calls_in_reasoning="call").tool_calls) == 1


def test_limits_are_applied():
    r = toolscan.parse(CALL, "hermes", max_call_bytes=20)
    assert r.tool_calls == [] and [d.kind for d in r.diagnostics] == ["limit"]
    assert len(toolscan.parse(CALL, "hermes", max_depth=4).tool_calls) == 1


def test_max_calls_and_only_tool():
    two = CALL + CALL.replace("get_weather", "search")
    assert [c.name for c in toolscan.parse(two, "hermes", max_calls=1).tool_calls] == ["get_weather"]
    assert [c.name for c in toolscan.parse(two, "hermes", only_tool="search").tool_calls] == ["search"]


def test_complete_at_stop_completes_a_call_cut_by_a_stop_sequence():
    cut = CALL[: -len("</tool_call>")]
    p = toolscan.Parser("hermes", complete_at_stop=True)
    p.feed(cut)
    assert [e.type for e in p.finish(at_stop=True)][-2:] == ["tool_call_end", "done"]
    p = toolscan.Parser("hermes")
    p.feed(cut)
    assert p.finish()[-1] == toolscan.Done("length")


def test_seeded_ids_are_reproducible_and_random_ones_differ():
    a = toolscan.parse(CALL, "hermes", ids="seeded").tool_calls[0].id
    assert a == toolscan.parse(CALL, "hermes", seed=0).tool_calls[0].id
    assert a != toolscan.parse(CALL, "hermes", seed=1).tool_calls[0].id
    mistral = toolscan.parse("[TOOL_CALLS]get_time[ARGS]{}", "auto", ids="mistral").tool_calls[0].id
    assert len(mistral) == 9 and mistral.isalnum()
    randoms = {toolscan.parse(CALL, "hermes").tool_calls[0].id for _ in range(3)}
    assert len(randoms) == 3


def test_parse_gives_the_whole_response():
    r = toolscan.parse("Checking." + CALL, "hermes", seed=0)
    assert r.text == "Checking."
    assert r.reasoning is None
    assert r.finish_reason == "tool_calls"
    [c] = r.tool_calls
    assert (c.index, c.name, c.arguments) == (0, "get_weather", '{"city": "Paris"}')
    assert c.parsed() == {"city": "Paris"}
    assert r.diagnostics == []
    assert r.to_dict() == {
        "text": "Checking.",
        "tool_calls": [{"id": c.id, "name": "get_weather", "arguments": {"city": "Paris"}}],
        "diagnostics": [],
        "finish_reason": "tool_calls",
    }
    assert toolscan.parse(("Checking." + CALL).encode(), "hermes", seed=0).to_dict() == r.to_dict()


def test_parse_equals_the_streamed_events():
    text = "a" + CALL + "b<tool_call>{broken</tool_call>" + CALL
    events = feed_all(toolscan.Parser("hermes", seed=0), [text[i : i + 2] for i in range(0, len(text), 2)])
    r = toolscan.parse(text, "hermes", seed=0)
    assert r.text == "".join(e.delta for e in events if e.type == "text")
    assert [(c.index, c.id, c.name, c.arguments) for c in r.tool_calls] == [
        (e.index, e.id, e.name, e.arguments) for e in events if e.type == "tool_call_end"
    ]
    assert r.diagnostics == [e for e in events if e.type == "diagnostic"]


def test_offset_counts_the_bytes_fed():
    p = toolscan.Parser()
    p.feed("é")
    p.feed(b"ab")
    assert p.offset == 4
