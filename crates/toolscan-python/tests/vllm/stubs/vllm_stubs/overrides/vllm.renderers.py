"""Stands for the vllm.renderers package's __init__, which imports the
renderers and with them the multimodal stack (numpy, torch). The request
classes need only the parameter classes, which are vLLM's own."""

from vllm.renderers.params import (  # noqa: F401
    ChatParams,
    ReasoningEffort,
    TokenizeParams,
    map_reasoning_effort,
    merge_kwargs,
)
