"""``customtools dev``'s log: each load, reload and tool call as one readable stderr line.

It is an observer of the adapter and loader hooks (:mod:`customtools._observe`), the same
hooks OpenTelemetry uses, so ``dev`` logs exactly what a traced host would see.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, TextIO

from customtools import _observe
from customtools._format import escape_control

if TYPE_CHECKING:
    from customtools._content import ToolResult
    from customtools._loading._loader import LoadResult
    from customtools._tool import CustomTool

__all__ = ["DevLog"]

_PREFIX = "customtools dev:"


class _Step:
    __slots__ = ("error",)

    def __init__(self) -> None:
        self.error: str | None = None

    def set(self, key: str, value: str | int | float | bool) -> None:
        return None

    def failed(self, code: str) -> None:
        self.error = code


class _Call:
    __slots__ = ("_call_id", "_log", "_name", "_started")

    def __init__(self, log: DevLog, name: str, call_id: str) -> None:
        self._log = log
        self._name = name
        self._call_id = call_id
        self._started = time.perf_counter()

    def waiting(self, what: str) -> AbstractContextManager[object]:
        self._log.write(f"call {self._name} [{self._call_id}] waiting for {what}")
        return contextlib.nullcontext()

    def finish(self, result: ToolResult | None, error: BaseException | None) -> None:
        elapsed = (time.perf_counter() - self._started) * 1000
        if result is None:
            outcome = f"cancelled by the caller ({type(error).__name__})"
        elif not result.is_error:
            outcome = "ok"
        else:
            details = result.details if isinstance(result.details, Mapping) else {}
            kind = details.get("code") or details.get("error") or "error"
            outcome = f"error {kind}"
        self._log.write(f"call {self._name} [{self._call_id}] {outcome} in {elapsed:.1f} ms")


class _Tool:
    __slots__ = ("_log", "_name")

    def __init__(self, log: DevLog, name: str) -> None:
        self._log = log
        self._name = escape_control(name)

    def start(self, tool_call_id: str) -> _Call:
        return _Call(self._log, self._name, escape_control(tool_call_id))


class DevLog:
    """Writes ``customtools dev: ...`` lines for loads, reloads and calls to ``stream``."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._served: dict[str, Any] = {}  # name -> tool of the previous load
        self._loads = 0

    def install(self) -> None:
        """Register as the process's observer (adapters built from now on are logged)."""
        _observe.set_observer(self)

    def write(self, line: str) -> None:
        """One line, flushed."""
        self._stream.write(f"{_PREFIX} {line}\n")
        self._stream.flush()

    def tool_observer(self, tool: CustomTool) -> _Tool:
        """Log ``tool``'s calls."""
        return _Tool(self, tool.name)

    @contextlib.contextmanager
    def load_step(
        self, name: str, attributes: Mapping[str, str | int | float | bool]
    ) -> Iterator[_Step]:
        """Log module imports with their time and outcome; other steps are silent."""
        step = _Step()
        started = time.perf_counter()
        yield step
        if name == _observe.STEP_MODULE:
            elapsed = (time.perf_counter() - started) * 1000
            path = escape_control(str(attributes.get("customtools.source.path", "?")))
            outcome = f"failed ({step.error})" if step.error else "imported"
            self.write(f"{path} {outcome} in {elapsed:.1f} ms")

    def inject(self) -> dict[str, str]:
        """No trace context: the log is not a tracer."""
        return {}

    def attach(self, carrier: Mapping[str, str]) -> AbstractContextManager[object]:
        """No trace context: nothing to attach."""
        return contextlib.nullcontext()

    def loaded(self, result: LoadResult) -> None:
        """Summarize a load: tools added, removed and replaced since the previous one."""
        served = {loaded.tool.name: loaded.tool for loaded in result.tools}
        self._loads += 1
        if self._loads == 1:
            self.write(f"loaded {len(served)} tools: {', '.join(served) or '(none)'}")
        else:
            added = sorted(set(served) - set(self._served))
            removed = sorted(set(self._served) - set(served))
            changed = sorted(
                n for n in set(served) & set(self._served) if served[n] is not self._served[n]
            )
            parts = [
                f"{label} {', '.join(names)}"
                for label, names in (("added", added), ("removed", removed), ("changed", changed))
                if names
            ]
            self.write(f"reloaded: {'; '.join(parts) or 'no tool changed'}")
        self._served = served
        for error in result.errors:
            self.write(f"error: {escape_control(str(error.path))}: {escape_control(error.error)}")
