"""Loading one tool module inside a ``validate`` worker, and reading where things are in it.

A worker is a process the supervisor (:mod:`customtools._isolation._audit_child`) forks for
exactly one module: :func:`load_in_worker` loads it with a fresh ``load_scan`` and returns its
report as JSON text, which the worker writes to a pipe only the supervisor reads. :func:`frame_in`
and :func:`main_file` also serve the parent, to point a crash or hang at the module's line.
"""

from __future__ import annotations

import ast
import json
import os
import re
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from customtools._loading._records import Candidate, LoadError
    from customtools._tool import CustomTool

__all__ = ["error_entry", "frame_in", "load_in_worker", "main_file", "warm_up"]

_FRAME_RE = re.compile(r'File "([^"]+)", line (\d+)')


# -- where things are in the source --------------------------------------------------------------


def main_file(candidate: Candidate) -> str | None:
    """The file a module or package candidate starts in (``None`` for entry points)."""
    if candidate.kind == "package":
        return os.path.join(candidate.resolved_path, "__init__.py")
    if candidate.kind == "module":
        return str(candidate.resolved_path)
    return None


class _Locations:
    """Lines of ``def factory`` and of ``CustomTool(name="...")``-style calls in one file."""

    def __init__(self, path: str | None) -> None:
        self.factory_line: int | None = None
        self.tool_lines: dict[str, int] = {}
        if path is None:
            return
        try:
            with open(path, "rb") as handle:
                tree = ast.parse(handle.read(), filename=path)
        except (OSError, SyntaxError, ValueError):
            return
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if node.name == "factory" and self.factory_line is None:
                    self.factory_line = node.lineno
            elif isinstance(node, ast.Call):
                for keyword in node.keywords:
                    if (
                        keyword.arg == "name"
                        and isinstance(keyword.value, ast.Constant)
                        and isinstance(keyword.value.value, str)
                    ):
                        self.tool_lines.setdefault(keyword.value.value, node.lineno)

    def line_for(self, tool_name: str | None) -> int | None:
        if tool_name is not None and tool_name in self.tool_lines:
            return self.tool_lines[tool_name]
        return self.factory_line


def frame_in(text: str | None, candidate: Candidate, *, last: bool) -> tuple[str, int] | None:
    """The (file, line) of a traceback frame inside ``candidate``'s files.

    ``last`` picks the innermost frame of a Python traceback (most recent call last); a
    ``faulthandler`` dump lists the most recent call first, so it passes ``last=False``.
    """
    if not text or candidate.kind == "entry_point":
        return None
    root = os.path.realpath(candidate.resolved_path)
    hits = []
    for match in _FRAME_RE.finditer(text):
        path = match.group(1)
        real = os.path.realpath(path)
        if real == root or real.startswith(root + os.sep):
            hits.append((path, int(match.group(2))))
    if not hits:
        return None
    return hits[-1] if last else hits[0]


# -- one module -----------------------------------------------------------------------------------


def _tool_report(tool: CustomTool, locations: _Locations) -> dict[str, Any]:
    from customtools._export import openai_strict_issues
    from customtools._rules import check_tool

    return {
        "name": tool.name,
        "label": tool.label,
        "description": tool.description,
        "strict": tool.strict,
        "hidden": tool.hidden,
        "line": locations.line_for(tool.name),
        "findings": [finding.to_dict() for finding in check_tool(tool)],
        "openaiStrictCompatible": not openai_strict_issues(tool.parameters),
        "wire": tool.to_dict(),  # the contract gate's input
    }


def error_entry(
    candidate: Candidate,
    code: str,
    message: str,
    *,
    file: str | None = None,
    line: int | None = None,
    traceback: str | None = None,
) -> dict[str, Any]:
    """One error of a module's report: its ``LoadError`` form plus where it is (``file``
    (the module's main file by default), ``line``)."""
    from customtools._loading._records import LoadError

    error = LoadError.of(candidate, message, code, traceback=traceback)
    return {**error.to_dict(), "file": file or main_file(candidate), "line": line}


def _error_report(error: LoadError, candidate: Candidate, locations: _Locations) -> dict[str, Any]:
    where = frame_in(error.traceback, candidate, last=True)
    file, line = where if where is not None else (main_file(candidate), None)
    if line is None and error.code not in ("syntax-error", "missing-dependency", "import-error"):
        line = locations.line_for(error.tool_name)
    return {**error.to_dict(), "file": file, "line": line}


async def _load_one(candidate: Candidate, cwd: str, load_timeout: float | None) -> dict[str, Any]:
    from customtools._loading._loader import load_scan
    from customtools._loading._records import ScanResult

    started = time.perf_counter()
    # The parent applied the trust gate before sending the candidate here.
    result = await load_scan(
        ScanResult(candidates=(candidate,)), cwd, load_timeout=load_timeout, trust="all"
    )
    seconds = time.perf_counter() - started
    locations = _Locations(main_file(candidate))
    return {
        "seconds": seconds,
        "tools": [_tool_report(loaded.tool, locations) for loaded in result.tools],
        "errors": [_error_report(error, candidate, locations) for error in result.errors],
        "diagnostics": [item.to_dict() for item in result.diagnostics],
    }


def warm_up() -> None:
    """Import what every load needs, so the first module's time is its own."""
    from customtools import CustomTool, Type

    tool = CustomTool(
        name="warm_up",
        execute=lambda *args: None,
        parameters=Type.Object({"a": Type.Optional(Type.String(minLength=1, default="x"))}),
    )
    _tool_report(tool, _Locations(None))
    import anyio

    import customtools._loading._loader  # noqa: F401

    async def nothing() -> None:
        return None

    # The first anyio.run of a process imports its backend (~0.2 s): pay it once, before the
    # supervisor forks its workers.
    anyio.run(nothing)


def load_in_worker(data: dict[str, Any], cwd: str, load_timeout: float | None) -> str:
    """Load the candidate ``data`` (``Candidate.to_dict()``) and return its report as JSON.

    The report holds ``seconds``, ``tools``, ``errors`` and ``diagnostics``. Anything the
    loader itself raises (it should not) becomes an ``internal-error`` entry, described with
    :func:`~customtools._format.describe_exception`, so it is never mistaken for a crash.
    """
    import anyio

    from customtools._format import describe_exception, safe_repr
    from customtools._loading._records import Candidate

    candidate = Candidate.from_dict(data)
    try:
        report = anyio.run(_load_one, candidate, cwd, load_timeout)
    except Exception as exc:  # reported, with its traceback
        import traceback

        try:
            detail = "".join(traceback.format_exception(exc))
        except Exception:  # a traceback that cannot be formatted
            detail = None
        message = (
            "validate could not load the module: the loader failed with"
            f" {describe_exception(exc)}; please report this as a customtools bug"
        )
        report = {
            "seconds": None,
            "tools": [],
            "errors": [error_entry(candidate, "internal-error", message, traceback=detail)],
            "diagnostics": [],
        }
    return json.dumps(report, default=safe_repr)
