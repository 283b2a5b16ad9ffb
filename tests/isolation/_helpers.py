"""Shared helpers of the isolation tests: tool modules on disk, loads, process checks."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path
from typing import Any

from customtools._isolation._pool import IsolationPool
from customtools._loading._loader import LoadResult, load_scan
from customtools._loading._scan import explicit_candidates

HEADER = """
import os, sys, time
from customtools import CustomTool, Type
"""


def write(directory: Path, name: str, body: str, *, prelude: str = "") -> Path:
    path = directory / name
    path.write_text(HEADER + prelude + textwrap.dedent(body))
    return path


async def load(
    pool: IsolationPool, directory: Path, *names: str, load_timeout: float | None = 10.0
) -> LoadResult:
    paths = [str(directory / name) for name in names]
    scanned = explicit_candidates(paths, str(directory))
    return await load_scan(scanned, str(directory), isolation=pool, load_timeout=load_timeout)


def alive(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            state = handle.read().rsplit(")", 1)[-1].split()[0]
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
    return state != "Z"


def options(**values: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"grace": 0.3, "backoff": 0.01, "max_backoff": 0.05}
    base.update(values)
    return base
