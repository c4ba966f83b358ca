"""Stands for the vllm.renderers.chat_utils package's __init__, which imports
the chat-template and multimodal message parsers (torch). The request classes
need the message types and ``make_tool_call_id`` (vLLM's own) and
``has_non_text_content`` (used only for disaggregated prefill; simplified)."""

from vllm.renderers.chat_utils.tool_call import (  # noqa: F401
    get_tool_call_id_type,
    make_tool_call_id,
)
from vllm.renderers.chat_utils.types import *  # noqa: F401,F403


def has_non_text_content(messages) -> bool:
    if not isinstance(messages, list):
        return False
    for msg in messages:
        content = msg.get("content") if isinstance(msg, dict) else None
        if isinstance(content, list) and any(
            not isinstance(part, dict) or part.get("type", "text") != "text" for part in content
        ):
            return True
    return False
