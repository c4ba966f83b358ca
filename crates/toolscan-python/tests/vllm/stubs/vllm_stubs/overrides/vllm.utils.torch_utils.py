"""Stands for vllm.utils.torch_utils (torch); the sampling parameters need
``make_ndarray_with_pad``, vLLM's own, over numpy."""

from typing import TypeVar

import numpy as np  # noqa: F401
import numpy.typing as npt  # noqa: F401

from vllm_stubs import take

T = TypeVar("T")

take(globals(), "vllm.utils.torch_utils", "make_ndarray_with_pad")
