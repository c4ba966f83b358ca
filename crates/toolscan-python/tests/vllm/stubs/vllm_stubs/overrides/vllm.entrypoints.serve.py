"""Stands for the vllm.entrypoints.serve package's __init__, which builds the
FastAPI routers; its submodules (the protocol base classes) are vLLM's own."""
