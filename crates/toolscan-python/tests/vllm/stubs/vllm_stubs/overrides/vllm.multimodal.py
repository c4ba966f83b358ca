"""Stands for the vllm.multimodal package's __init__ (the multimodal registry,
over torch and PIL); tool parsing touches none of it."""
