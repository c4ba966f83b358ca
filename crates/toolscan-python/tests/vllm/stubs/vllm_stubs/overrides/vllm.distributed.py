"""Stands for the vllm.distributed package's __init__ (torch.distributed).
vLLM's logger asks its ``parallel_state`` whether this process is the first
rank before logging "once"; the stand-in of that module answers yes."""
