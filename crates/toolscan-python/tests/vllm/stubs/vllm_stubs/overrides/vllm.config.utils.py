"""Stands for vllm.config.utils (which imports torch); the protocol module
needs ``replace``, vLLM's own."""

from collections.abc import Callable  # noqa: F401
from dataclasses import MISSING, field, fields, is_dataclass  # noqa: F401
from typing import Any, TypeVar, cast  # noqa: F401

from pydantic.fields import FieldInfo  # noqa: F401

from vllm.logger import init_logger
from vllm_stubs import take

logger = init_logger(__name__)
ConfigType = type
ConfigT = TypeVar("ConfigT")

take(globals(), "vllm.config.utils", "get_field", "is_init_field", "replace")
