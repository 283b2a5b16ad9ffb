"""Helpers for the loading tests: fixture packs, hand-made scan results, tool files."""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

from customtools._loading._records import Candidate, ScanResult, ToolSource

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def source(provider: str = "configured", level: str = "user", **extra: str | None) -> ToolSource:
    """A ToolSource for tests."""
    names = {"configured": "Configured paths", "native": "customtools", "claude": "Claude Code"}
    return ToolSource(
        provider=provider,
        provider_name=names.get(provider, provider),
        level=level,  # type: ignore[arg-type]
        **extra,  # type: ignore[arg-type]
    )


def copy_pack(name: str, dest: Path) -> Path:
    """Copy fixture pack ``tests/fixtures/<name>`` to ``dest`` (so caches land in tmp)."""
    target = dest / name
    shutil.copytree(FIXTURES / name, target, ignore=shutil.ignore_patterns("__pycache__"))
    return target


def write(path: Path, text: str) -> Path:
    """Write dedented ``text`` to ``path`` (parents created)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


def candidate(path: Path, src: ToolSource | None = None) -> Candidate:
    """A module or package candidate for ``path``."""
    kind = "package" if path.is_dir() else "module"
    return Candidate(
        path=str(path),
        resolved_path=str(path.resolve()),
        kind=kind,
        source=src or source(),
    )


def candidates_in(directory: Path, src: ToolSource | None = None) -> list[Candidate]:
    """What a scan would find in ``directory``: ``*.py`` files and packages, sorted."""
    found = []
    for entry in sorted(directory.iterdir()):
        if entry.name.startswith(("_", ".")):
            continue
        if entry.suffix == ".py" or (entry.is_dir() and (entry / "__init__.py").exists()):
            found.append(candidate(entry, src))
    return found


def scan_of(*directories: Path, src: ToolSource | None = None) -> ScanResult:
    """A ScanResult over ``directories`` in order."""
    candidates: list[Candidate] = []
    for directory in directories:
        candidates += candidates_in(directory, src)
    return ScanResult(candidates=tuple(candidates))


def tool_module(name: str, *, body: str = "", factory_prefix: str = "") -> str:
    """Source of a module whose factory returns one mapping tool called ``name``."""
    return (
        f"{textwrap.dedent(body)}\n"
        f"{factory_prefix}def factory(api):\n"
        f"    return {{'name': {name!r}, 'execute': lambda *a: {name!r}}}\n"
    )
