"""Stands for the vllm.tokenizers package's __init__, which loads the Hugging
Face backends (transformers). The parsers need only the ``TokenizerLike``
protocol, which is vLLM's own; the tests pass a small tokenizer of their own."""

from vllm.tokenizers.protocol import TokenizerLike  # noqa: F401
