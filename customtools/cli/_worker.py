"""The child process of ``customtools validate``: loads tool modules and reports on each.

The parent (:mod:`customtools.cli._sandbox`) starts ``python -c`` with a bootstrap that calls
:func:`main`, writes one JSON request on stdin and reads JSON lines back::

    request   {"cwd": str, "loadTimeout": float | null, "candidates": [Candidate.to_dict()]}
    replies   {"event": "ready"}
              {"event": "start", "index": i}           before module i is imported
              {"event": "done", "index": i, ...}       its report (see _report)
              {"event": "end"}

Replies go to a private duplicate of the original stdout; file descriptor 1 is pointed at
stderr first, so whatever a tool module prints (from Python, C code or a child program) cannot
corrupt the protocol. ``faulthandler`` writes a traceback to stderr when the interpreter
crashes and, on ``SIGUSR1``, when the parent gives up on a module that hangs; the parent reads
the tool's line from it. Modules load one at a time, each in its own ``load_scan`` (so its
import time is its own); name conflicts between modules are the parent's job.
"""

from __future__ import annotations

import ast
import faulthandler
import json
import os
import re
import signal
import sys
import time
from typing import Any, TextIO

__all__ = ["candidate_from_dict", "main"]

_FRAME_RE = re.compile(r'File "([^"]+)", line (\d+)')


def _claim_stdout() -> TextIO:
    """A private stream on the original stdout; fd 1 then points at stderr."""
    sys.stdout.flush()
    protocol_fd = os.dup(1)  # not inherited by children (PEP 446)
    os.dup2(2, 1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)  # tool modules must not read the request
    os.close(null)
    return os.fdopen(protocol_fd, "w", encoding="utf-8", buffering=1)


def _send(stream: TextIO, event: str, **fields: Any) -> None:
    stream.write(json.dumps({"event": event, **fields}, default=str) + "\n")
    stream.flush()


def candidate_from_dict(data: dict[str, Any]) -> Any:
    """Rebuild a :class:`~customtools.loading.Candidate` from its ``to_dict()`` form."""
    from customtools._loading._records import Candidate, ToolSource

    source = data["source"]
    return Candidate(
        path=data["path"],
        resolved_path=data["resolvedPath"],
        kind=data["kind"],
        entry_point=data.get("entryPoint"),
        source=ToolSource(
            provider=source["provider"],
            provider_name=source["providerName"],
            level=source["level"],
            plugin_name=source.get("pluginName"),
            plugin_version=source.get("pluginVersion"),
            distribution=source.get("distribution"),
        ),
    )


# -- where things are in the source --------------------------------------------------------------


def main_file(candidate: Any) -> str | None:
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


def frame_in(text: str | None, candidate: Any, *, last: bool) -> tuple[str, int] | None:
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


def _tool_report(tool: Any, locations: _Locations) -> dict[str, Any]:
    from customtools._export import anthropic_issues, openai_issues, openai_strict_issues

    issues = [*openai_issues(tool), *anthropic_issues(tool)]
    return {
        "name": tool.name,
        "label": tool.label,
        "description": tool.description,
        "strict": tool.strict,
        "hidden": tool.hidden,
        "line": locations.line_for(tool.name),
        "issues": [issue.to_dict() for issue in issues],
        "openaiStrictCompatible": not openai_strict_issues(tool.parameters),
    }


def _error_report(error: Any, candidate: Any, locations: _Locations) -> dict[str, Any]:
    where = frame_in(error.traceback, candidate, last=True)
    file, line = where if where is not None else (main_file(candidate), None)
    if line is None and error.code not in ("syntax-error", "missing-dependency", "import-error"):
        line = locations.line_for(error.tool_name)
    return {
        "code": error.code,
        "message": error.error,
        "toolName": error.tool_name,
        "file": file,
        "line": line,
        "traceback": error.traceback,
    }


async def _load_one(candidate: Any, cwd: str, load_timeout: float | None) -> dict[str, Any]:
    from customtools._loading._loader import load_scan
    from customtools._loading._records import ScanResult

    started = time.perf_counter()
    result = await load_scan(ScanResult(candidates=(candidate,)), cwd, load_timeout=load_timeout)
    seconds = time.perf_counter() - started
    locations = _Locations(main_file(candidate))
    return {
        "seconds": seconds,
        "tools": [_tool_report(loaded.tool, locations) for loaded in result.tools],
        "errors": [_error_report(error, candidate, locations) for error in result.errors],
        "diagnostics": [item.to_dict() for item in result.diagnostics],
    }


def _warm_up() -> None:
    """Import what every load needs, so the first module's time is its own."""
    from customtools import CustomTool, Type

    tool = CustomTool(
        name="warm_up",
        execute=lambda *args: None,
        parameters=Type.Object({"a": Type.Optional(Type.String(minLength=1, default="x"))}),
    )
    _tool_report(tool, _Locations(None))


async def _serve(request: dict[str, Any], protocol: TextIO) -> None:
    cwd = request["cwd"]
    load_timeout = request.get("loadTimeout")
    _warm_up()
    _send(protocol, "ready")
    for index, data in enumerate(request["candidates"]):
        candidate = candidate_from_dict(data)
        _send(protocol, "start", index=index)
        report = await _load_one(candidate, cwd, load_timeout)
        sys.stderr.flush()
        _send(protocol, "done", index=index, **report)
    _send(protocol, "end")


def main() -> None:
    """Run the worker: read the request on stdin, report, and end the process (never
    returns normally: see the comment at the end)."""
    import anyio

    request = json.load(sys.stdin)
    protocol = _claim_stdout()
    faulthandler.enable(file=sys.stderr, all_threads=True)
    if hasattr(signal, "SIGUSR1"):
        faulthandler.register(signal.SIGUSR1, file=sys.stderr, all_threads=True)
    anyio.run(_serve, request, protocol)
    sys.stderr.flush()
    protocol.flush()
    # Tool modules may have left non-daemon threads or atexit hooks behind; they must not keep
    # the report waiting.
    os._exit(0)
