"""The type stubs and the package's annotations, held to the code.

- ``mypy.stubtest`` compares ``python/toolscan/_native.pyi`` with the built
  extension module (constructors, parameters and defaults, what can be
  subclassed, ``__all__``); what it may report is in
  ``stubtest-allowlist.txt``, each line with its reason.
- ``mypy --strict`` checks the package (``toolscan``, ``toolscan.openai``,
  ``toolscan.dispatch``, ``toolscan.vllm``) and ``typing/public_api.py``, a
  typed use of the public API, which is also run.

The settings are the package's ``[tool.mypy]`` (``pyproject.toml``): the
stubs are read from ``python/``, the module imported is the installed one.
mypy is pinned in ``requirements.txt``; without it the checks are skipped.
"""

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

import toolscan

CRATE = Path(__file__).resolve().parent.parent
CONFIG = CRATE / "pyproject.toml"
ALLOWLIST = CRATE / "tests" / "stubtest-allowlist.txt"
EXAMPLE = CRATE / "tests" / "typing" / "public_api.py"

needs_mypy = pytest.mark.skipif(
    importlib.util.find_spec("mypy") is None,
    reason="mypy is not installed (tests/requirements.txt pins it; it needs Python 3.10+)",
)


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory):
    """One mypy cache for the module's runs (the standard library and the
    openai package are analysed once)."""
    return tmp_path_factory.mktemp("mypy-cache")


def run(args, cwd):
    """Runs `python -m ...` from `cwd` (away from the source tree, so that
    the installed package is the one imported); its exit code and output."""
    env = {k: v for k, v in os.environ.items() if k not in ("MYPYPATH", "PYTHONPATH")}
    done = subprocess.run(
        [sys.executable, "-m", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    return done.returncode, done.stdout + done.stderr


def mypy(targets, cache_dir, tmp_path):
    return run(
        ["mypy", "--config-file", str(CONFIG), "--cache-dir", str(cache_dir), *targets],
        tmp_path,
    )


@needs_mypy
def test_the_stubs_match_the_extension_module(tmp_path):
    code, output = run(
        [
            "mypy.stubtest",
            "toolscan._native",
            "--allowlist",
            str(ALLOWLIST),
            "--mypy-config-file",
            str(CONFIG),
        ],
        tmp_path,
    )
    assert code == 0, "stubtest reports differences:\n" + output


@needs_mypy
def test_the_package_type_checks_strictly(cache_dir, tmp_path):
    code, output = mypy(["-p", "toolscan"], cache_dir, tmp_path)
    assert code == 0, "mypy --strict -p toolscan:\n" + output


@needs_mypy
def test_a_typed_use_of_the_public_api_type_checks_and_its_misuses_do_not(cache_dir, tmp_path):
    # `public_api.py` marks each misuse `# type: ignore[code]`: an ignore
    # that is not needed (the stubs let the misuse through) is an error too.
    code, output = mypy([str(EXAMPLE)], cache_dir, tmp_path)
    assert code == 0, f"mypy --strict {EXAMPLE.name}:\n" + output


@pytest.mark.skipif(sys.version_info < (3, 10), reason="public_api.py uses `match` (Python 3.10+)")
def test_the_typed_use_of_the_public_api_runs(tmp_path):
    done = subprocess.run(
        [sys.executable, str(EXAMPLE)], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_installed_package_ships_its_stubs_and_the_typed_marker():
    package = Path(toolscan.__file__).parent
    assert (package / "_native.pyi").is_file()
    assert (package / "py.typed").is_file()
