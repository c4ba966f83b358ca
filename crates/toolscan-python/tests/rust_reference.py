"""Where the workspace and its `toolscan` binary are (the Rust reference the
Python results are compared with)."""

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def cli_binary():
    """`TOOLSCAN_BIN`, else the workspace's `target/{debug,release}/toolscan`,
    else None (the comparisons with it are then skipped)."""
    env = os.environ.get("TOOLSCAN_BIN")
    if env:
        return Path(env)
    for profile in ("debug", "release"):
        p = ROOT / "target" / profile / "toolscan"
        if p.exists():
            return p
    return None


CLI = cli_binary()
