"""Stands for vllm.outputs (the engine's request outputs, over torch); the
chat protocol needs ``WeightVersionSpan``, vLLM's own."""

from dataclasses import dataclass  # noqa: F401

from vllm_stubs import take

take(globals(), "vllm.outputs", "WeightVersionSpan")
