"""A small timeit-style harness for async statements, measured round-robin.

Each case is a statement compiled into a tight ``for`` loop inside a generated ``async def``;
every case is calibrated to about ``target`` seconds per repeat, and repeats run round-robin
(repeat r of every case, then repeat r+1) so slow drift of the machine hits every case alike.
GC is off inside the timed loop, as timeit does. Results are seconds per iteration.

Noise on a shared machine only ever adds time, so the figures that targets are checked against
are the *best* of the repeats (what ``timeit`` recommends); medians and the spread are printed
alongside so a reader can see how noisy the run was.
"""

from __future__ import annotations

import gc
import json
import os
import statistics
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

Runner = Callable[[int], Awaitable[float]]

# The 4-property tool schema of the performance anchors, with valid input and input carrying
# four independent violations (pattern, minimum, enum, an unexpected property).
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "pattern": "^[A-Za-z0-9_./-]+$", "minLength": 1},
        "limit": {"type": "integer", "minimum": 1},
        "tags": {"type": "array", "items": {"type": "string"}},
        "mode": {"type": "string", "enum": ["read", "write", "append"]},
    },
    "required": ["path", "limit", "mode"],
    "additionalProperties": False,
}
VALID: dict[str, Any] = {
    "path": "src/pkg/main.py",
    "limit": 10,
    "tags": ["a", "b", "c"],
    "mode": "read",
}
INVALID: dict[str, Any] = {"path": "bad path!", "limit": 0, "mode": "delete", "extra": 1}


def compile_case(
    stmt: str, namespace: dict[str, Any], clock: Callable[[], float] = time.perf_counter
) -> Runner:
    """Compile ``stmt`` (which may use ``await``) into ``async def run(n) -> seconds``
    (``clock``: ``time.process_time`` counts only this process's CPU time, so that other
    processes on a shared machine do not add to it)."""
    src = (
        "async def __run(__n):\n"
        "    __t = __perf()\n"
        "    for __i in range(__n):\n"
        f"        {stmt}\n"
        "    return __perf() - __t\n"
    )
    ns = dict(namespace)
    ns["__perf"] = clock
    exec(compile(src, f"<case {stmt!r}>", "exec"), ns)
    runner: Runner = ns["__run"]
    return runner


@dataclass
class Case:
    """One measured statement."""

    name: str
    runner: Runner
    n: int = 1
    samples: list[float] = field(default_factory=list)

    @property
    def best(self) -> float:
        return min(self.samples)

    @property
    def median(self) -> float:
        return statistics.median(self.samples)

    @property
    def spread(self) -> float:
        return (max(self.samples) - min(self.samples)) / self.median


async def _timed(runner: Runner, n: int) -> float:
    enabled = gc.isenabled()
    gc.disable()
    try:
        return await runner(n)
    finally:
        if enabled:
            gc.enable()


async def measure(cases: list[Case], *, repeats: int = 7, target: float = 0.1) -> None:
    """Calibrate each case to about ``target`` seconds and collect ``repeats`` samples."""
    for case in cases:
        n = 1
        while True:
            elapsed = await _timed(case.runner, n)
            if elapsed >= target / 4 or n >= 10_000_000:
                break
            n *= 4
        case.n = max(1, int(n * target / max(elapsed, 1e-9)))
    for _ in range(repeats):
        for case in cases:
            case.samples.append(await _timed(case.runner, case.n) / case.n)


def fmt_time(seconds: float) -> str:
    """Human units: ns, µs or ms."""
    if seconds < 1e-6:
        return f"{seconds * 1e9:.0f} ns"
    if seconds < 1e-3:
        return f"{seconds * 1e6:.2f} µs"
    return f"{seconds * 1e3:.2f} ms"


# --- Reporting: every figure a benchmark prints is a row of a `Table`, so that
# `run.py --write-docs` can put the same rows into docs/performance.md.

RESULTS_ENV = "CUSTOMTOOLS_BENCH_RESULTS"
"""When set, `emit` also appends each table as one JSON line to the file it names."""

_missed: list[str] = []
# Taken out of the environment so that the benchmark's own child processes do not record.
_results_path = os.environ.pop(RESULTS_ENV, "")


@dataclass
class Table:
    """One table of figures: a header row and rows of already formatted cells.

    ``targets`` are ``(target, result, met)`` triples, rendered as a table of their own below
    the figures ("met" or "**missed**"); ``met`` is ``None`` for a figure that is only reported.
    ``note`` is one line of text printed above the table (what was measured, how often).
    """

    columns: list[str]
    rows: list[list[str]] = field(default_factory=list)
    targets: list[tuple[str, str, bool | None]] = field(default_factory=list)
    note: str = ""

    def row(self, *cells: object) -> None:
        self.rows.append([str(cell) for cell in cells])

    def target(self, target: str, result: str, met: bool | None) -> None:
        self.targets.append((target, result, met))

    def to_dict(self) -> dict[str, Any]:
        return {
            "columns": self.columns,
            "rows": self.rows,
            "targets": [list(t) for t in self.targets],
            "note": self.note,
        }

    def markdown(self) -> str:
        """The table (and its targets) as Markdown, as docs/performance.md shows it."""
        return table_markdown(self.to_dict())


def _md_row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def table_markdown(data: dict[str, Any]) -> str:
    """Render one table's JSON form (``Table.to_dict``) as Markdown."""
    out: list[str] = []
    if data.get("note"):
        out += [data["note"], ""]
    if data["rows"]:
        columns = data["columns"]
        # The first column is text; the others are figures, right-aligned.
        out.append(_md_row(columns))
        out.append("|" + "|".join(["---"] + ["---:"] * (len(columns) - 1)) + "|")
        out += [_md_row(row) for row in data["rows"]]
    if data["targets"]:
        if out:
            out.append("")
        out.append("| target | result | |")
        out.append("|---|---|---|")
        for target, result, met in data["targets"]:
            verdict = "reported" if met is None else "met" if met else "**missed**"
            out.append(_md_row([target, result, verdict]))
    return "\n".join(out)


def emit(table: Table) -> None:
    """Print ``table`` for a reader; with `RESULTS_ENV` set, also record it as a JSON line."""
    print("\n" + table.markdown() + "\n", flush=True)
    _missed.extend(t for t, _, met in table.targets if met is False)
    if _results_path:
        with open(_results_path, "a", encoding="utf-8") as out:
            out.write(json.dumps({"table": table.to_dict()}) + "\n")


def run_main(main: Callable[[], object]) -> None:
    """Run a benchmark's ``main`` and exit: 0 if every target was met, 1 if one was missed.

    A run that got to the end records ``{"complete": ...}`` (so `run.py` can tell it from a
    crash, which leaves the document's block as it was).
    """
    main()
    if _results_path:
        with open(_results_path, "a", encoding="utf-8") as out:
            out.write(json.dumps({"complete": True, "missed": _missed}) + "\n")
    raise SystemExit(1 if _missed else 0)


def ratio(value: float) -> str:
    """A ratio as the tables show it: ``1.23×``."""
    return f"{value:.2f}×"


def cases_table(cases: list[Case], *, baseline: Case | None = None, note: str = "") -> Table:
    """The usual table of `measure`'s cases: best, the ratio to ``baseline``, median."""
    columns = ["case", "best", *(["× " + baseline.name] if baseline else []), "median"]
    table = Table(columns, note=note)
    for case in cases:
        vs = [ratio(case.best / baseline.best)] if baseline else []
        table.row(case.name, fmt_time(case.best), *vs, fmt_time(case.median))
    return table
