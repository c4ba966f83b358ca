"""Stands for the vllm.utils package's __init__, which imports torch for type
hints. ``random_uuid`` is vLLM's own; the package's submodules are vLLM's."""

import uuid  # noqa: F401

from vllm_stubs import take

take(globals(), "vllm.utils", "MASK_64_BITS", "random_uuid")
