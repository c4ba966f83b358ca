"""Light stand-ins for the few vLLM modules that need torch or CUDA at import.

vLLM's tool parsers, its protocol classes (``DeltaMessage``, ``DeltaToolCall``,
``ExtractedToolCallInformation``, ``ChatCompletionRequest``) and its
``ToolParserManager`` are plain Python over pydantic, but the packages they sit
in import torch, the multimodal stack or the engine configuration on the way.
``install()`` puts a finder in front of the import system that loads, for the
modules listed in ``overrides/`` (one file per module, named by its dotted
name), our file instead of vLLM's. Every other vLLM module is vLLM's own.

An override that stands for a package keeps vLLM's directory as its
``__path__``, so the package's real submodules still import from vLLM.
"""

from __future__ import annotations

import ast
import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys

OVERRIDES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "overrides")


def _overridden() -> set[str]:
    return {name[: -len(".py")] for name in os.listdir(OVERRIDES) if name.endswith(".py")}


class _Finder(importlib.abc.MetaPathFinder):
    def __init__(self) -> None:
        self.names = _overridden()

    def find_spec(self, name, path, target=None):
        if name not in self.names:
            return None
        real = importlib.machinery.PathFinder.find_spec(name, path)
        spec = importlib.util.spec_from_file_location(
            name,
            os.path.join(OVERRIDES, name + ".py"),
            submodule_search_locations=(
                list(real.submodule_search_locations)
                if real is not None and real.submodule_search_locations
                else None
            ),
        )
        return spec


def take(namespace: dict, module: str, *names: str) -> None:
    """Run, in an override's ``namespace``, vLLM's own top-level definitions
    ``names`` from the source of ``module`` (without running that module), so
    an override keeps vLLM's code for what it must provide. The override
    imports what those definitions use."""
    spec = importlib.machinery.PathFinder.find_spec(module.split(".")[0])
    if spec is None or not spec.submodule_search_locations:
        raise ImportError(f"vLLM is not installed (looking for {module})")
    root = list(spec.submodule_search_locations)[0]
    rel = module.split(".")[1:]
    path = os.path.join(root, *rel) + ".py"
    if not os.path.exists(path):
        path = os.path.join(root, *rel, "__init__.py")
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    wanted = set(names)
    body = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name in wanted:
            body.append(node)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id in wanted for t in targets):
                body.append(node)
    found = {n.name if isinstance(n, (ast.FunctionDef, ast.ClassDef)) else None for n in body} | {
        t.id
        for n in body
        if isinstance(n, (ast.Assign, ast.AnnAssign))
        for t in (n.targets if isinstance(n, ast.Assign) else [n.target])
        if isinstance(t, ast.Name)
    }
    missing = wanted - found
    if missing:
        raise ImportError(f"{module} no longer defines {sorted(missing)}")
    exec(compile(ast.Module(body=body, type_ignores=[]), path, "exec"), namespace)


def install() -> None:
    """Put the finder first on ``sys.meta_path`` (once)."""
    if not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder())
