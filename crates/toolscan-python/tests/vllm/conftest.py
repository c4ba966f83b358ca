"""vLLM's real classes, without torch.

`setup.sh VENV` installs vLLM (without its dependencies) and the light
packages its tool parsers import (`requirements.txt`). The modules that need
torch or CUDA on the way are replaced by the stand-ins in `stubs/` (see
`stubs/vllm_stubs/__init__.py`); where torch is installed, nothing is replaced.
Without vLLM, these tests are not collected.
"""

import importlib.util
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

if importlib.util.find_spec("vllm") is None:
    collect_ignore_glob = ["*"]
else:
    sys.path.insert(0, os.path.join(HERE, "stubs"))
    sys.path.insert(0, HERE)
    if importlib.util.find_spec("torch") is None:
        import vllm_stubs

        vllm_stubs.install()
