"""Stands for xgrammar.contrib.hf (a transformers logits processor over torch)."""
