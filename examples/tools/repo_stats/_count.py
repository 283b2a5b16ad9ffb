"""Counting helper of the repo_stats tool (not a tool itself: the scan never imports it)."""

from __future__ import annotations

import os
from collections import Counter
from typing import Any


def count_by_extension(root: str, top: int, signal: Any) -> list[tuple[str, int]]:
    counts: Counter[str] = Counter()
    for _folder, dirs, files in os.walk(root):
        signal.raise_if_aborted()
        dirs[:] = [d for d in dirs if not d.startswith(".") and d != "__pycache__"]
        for name in files:
            counts[os.path.splitext(name)[1]] += 1
    return counts.most_common(top)
