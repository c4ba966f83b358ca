"""Stands for vllm.env_override, which imports torch to patch it; nothing to patch here."""
