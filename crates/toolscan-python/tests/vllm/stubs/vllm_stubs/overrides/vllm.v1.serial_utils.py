"""Stands for vllm.v1.serial_utils (torch, zmq and the multimodal inputs); the
sampling parameters need ``PydanticMsgspecMixin``, vLLM's own."""

from typing import Any, ClassVar, get_type_hints  # noqa: F401

import msgspec  # noqa: F401
from pydantic import GetCoreSchemaHandler  # noqa: F401
from pydantic_core import core_schema  # noqa: F401

from vllm_stubs import take

take(globals(), "vllm.v1.serial_utils", "PydanticMsgspecMixin")
