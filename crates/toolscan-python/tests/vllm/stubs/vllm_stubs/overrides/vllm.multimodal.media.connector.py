"""Stands for vllm.multimodal.media.connector (HTTP media fetching over torch,
PIL and aiohttp). ``merge_media_io_kwargs`` is imported by the renderer's
parameter classes; this one merges per modality without the decoders' rules."""


def merge_media_io_kwargs(defaults, overrides):
    if not defaults and not overrides:
        return None
    merged = {}
    for key in set(defaults or {}) | set(overrides or {}):
        merged[key] = {**((defaults or {}).get(key) or {}), **((overrides or {}).get(key) or {})}
    return merged or None
