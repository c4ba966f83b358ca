"""Stands for the vllm.multimodal.media package's __init__ (audio, image and
video decoders)."""
