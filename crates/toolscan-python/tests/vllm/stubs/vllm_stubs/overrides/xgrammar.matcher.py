"""Stands for xgrammar.matcher, whose token bitmasks are torch tensors. vLLM's
parsers import xgrammar for its structural-tag classes (pure pydantic); the
matcher is used only by the engine when it constrains decoding."""


def _needs_torch(*args, **kwargs):
    raise RuntimeError("xgrammar's matcher needs torch, which the tests stub out")


class GrammarMatcher:
    __init__ = _needs_torch


class BatchGrammarMatcher:
    __init__ = _needs_torch


allocate_token_bitmask = apply_token_bitmask_inplace = _needs_torch
get_bitmask_shape = reset_token_bitmask = _needs_torch
bitmask_dtype = None
