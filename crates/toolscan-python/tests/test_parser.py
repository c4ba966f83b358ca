"""The Parser: events of a stream, chunk by chunk."""

import toolscan

HERMES_CALL = '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>'


def test_feed_and_finish_give_the_call_and_its_text():
    p = toolscan.Parser("hermes")
    events = []
    for chunk in ["I will check.<tool_", 'call>{"name": "get_weather", ', '"arguments": {"city": "Par', 'is"}}</tool_call>']:
        events += p.feed(chunk)
    events += p.finish()
    assert [e.type for e in events] == [
        "text", "tool_call_start", "tool_call_args", "tool_call_args", "tool_call_end", "done",
    ]
    end = events[-2]
    assert (end.name, end.arguments) == ("get_weather", '{"city": "Paris"}')
    assert end.parsed() == {"city": "Paris"}
    assert events[-1] == toolscan.Done("tool_calls")
