"""Cancellation benchmark: abort-to-result latency by kind of tool, and the valid-call cost.

Run with ``python benchmarks/bench_cancel.py`` (or ``make bench``). Two parts, one run:

1. **Abort-to-result latency**, p50 and p99, for an async tool, a sync tool, an ``api.exec``
   tree and an isolated tool, each *cooperative* (it stops on its signal) and *stubborn* (it
   ignores it: swallows cancellation, never polls, traps SIGTERM, blocks its worker), with
   ``grace`` 0.2 and 2.0 side by side. A stubborn call must end near the grace (the model of
   docs/cancellation.md: deadline + grace + a small bound); a cooperative one in milliseconds.
2. **The valid-call path against the code before this change**, in the same run: the adapter's
   hot path, its guarded path and a guarded tool that suspends (each suspension is driven by
   the adapter), timed alternately in child processes importing this tree
   and the tree of ``--before`` (a git revision, extracted with ``git archive``). Target:
   within 1.05x.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))

from _harness import Table, emit, fmt_time, ratio, run_main  # noqa: E402

# -- 1. abort-to-result latency -------------------------------------------------------------

TREE = "trap '' TERM; sh -c 'sleep 30 & wait' & wait"


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def latencies(make: Any, count: int, grace: float) -> list[float]:
    """Start ``count`` calls at once, abort each after 0.2 s, time abort -> result."""
    import anyio

    from customtools import AbortController

    out: list[float] = []

    async def one(index: int) -> None:
        adapter = make(index, grace)
        controller = AbortController()
        async with anyio.create_task_group() as tg:

            async def abort() -> None:
                await anyio.sleep(0.2)
                started.append(time.perf_counter())
                controller.abort("bench")

            started: list[float] = []
            tg.start_soon(abort)
            result = await adapter.execute("c", {}, signal=controller.signal)
        assert result.is_error, result
        out.append(time.perf_counter() - started[0])

    async with anyio.create_task_group() as tg:
        for index in range(count):
            tg.start_soon(one, index)
    return out


def in_process_kinds(release: threading.Event) -> dict[str, Any]:
    import anyio

    from customtools import CustomTool, CustomToolAdapter, exec_command

    async def async_coop(*_: Any) -> str:
        await anyio.sleep(30)
        return "late"

    async def async_stubborn(*_: Any) -> str:
        cancelled = anyio.get_cancelled_exc_class()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with contextlib.suppress(cancelled):
                await anyio.sleep(0.02)
        return "late"

    def sync_coop(_i: Any, _p: Any, _u: Any, _c: Any, signal: Any) -> str:
        while not signal.aborted and not release.is_set():
            time.sleep(0.005)
        return "late"

    def sync_stubborn(*_: Any) -> str:
        release.wait(30)
        return "late"

    async def exec_coop(_i: Any, _p: Any, _u: Any, _c: Any, signal: Any) -> str:
        await exec_command("sleep", ["30"], signal=signal)
        return "late"

    async def exec_stubborn(_i: Any, _p: Any, _u: Any, _c: Any, signal: Any) -> str:
        await exec_command("sh", ["-c", TREE], signal=signal)
        return "late"

    def factory(execute: Any, per_call_name: bool = False) -> Any:
        def make(index: int, grace: float) -> Any:
            name = f"t{index}" if per_call_name else "t"
            return CustomToolAdapter(CustomTool(name=name, execute=execute), grace=grace)

        return make

    return {
        "async, cooperative": factory(async_coop),
        "async, swallows cancellation": factory(async_stubborn),
        "sync, polls its signal": factory(sync_coop),
        # one tool per call: the per-tool thread quota is not what is measured here
        "sync, ignores its signal": factory(sync_stubborn, per_call_name=True),
        "exec, sleep": factory(exec_coop),
        "exec, tree trapping TERM": factory(exec_stubborn),
    }


ISOLATED = '''
import time, anyio
from customtools import tool

@tool
async def coop() -> str:
    """Awaits: cancelled at once."""
    await anyio.sleep(30)
    return "late"

@tool
def stubborn() -> str:
    """Ignores its signal: its worker is killed past the grace."""
    time.sleep(30)
    return "late"
'''


async def latency_table(count: int, isolated_count: int) -> list[tuple[str, float, Any]]:
    from customtools import CustomToolAdapter, load_custom_tools
    from customtools.isolation import IsolationPool

    rows: list[tuple[str, float, Any]] = []
    release = threading.Event()
    try:
        for grace in (0.2, 2.0):
            for name, make in in_process_kinds(release).items():
                rows.append((name, grace, await latencies(make, count, grace)))
            with tempfile.TemporaryDirectory() as tmp:
                module = Path(tmp) / "iso_tools.py"
                module.write_text(ISOLATED)
                async with IsolationPool() as pool:
                    loaded = await load_custom_tools([str(module)], isolation=pool)
                    for label, tool in (
                        ("isolated, cooperative", "coop"),
                        ("isolated, ignores its signal", "stubborn"),
                    ):
                        proxy = loaded.get(tool).tool

                        def make(_i: int, g: float, proxy: Any = proxy) -> Any:
                            return CustomToolAdapter(proxy, grace=g)

                        rows.append((label, grace, await latencies(make, isolated_count, grace)))
    finally:
        release.set()
    return rows


# -- 2. the valid-call path, this tree against --before ------------------------------------

CHILD = textwrap.dedent(
    """
    import asyncio, json, sys, time
    from customtools import AbortController, CustomTool, CustomToolAdapter
    sys.path.insert(0, {bench!r})
    from _harness import SCHEMA, VALID

    async def execute(tool_call_id, params, on_update, ctx, signal):
        return "ok"

    async def awaits(tool_call_id, params, on_update, ctx, signal):
        for _ in range(10):  # ten suspensions: the guarded call drives each one
            await asyncio.sleep(0)
        return "ok"

    def adapter_of(execute):
        return CustomToolAdapter(
            CustomTool(name="read_file", description="bench", parameters=SCHEMA, execute=execute)
        )

    async def main():
        adapter, awaiting = adapter_of(execute), adapter_of(awaits)
        signal = AbortController().signal
        guarded = {{"signal": signal, "timeout": 60}}
        await adapter.execute("c", VALID)
        out = {{}}
        for label, tool, kwargs, n in (
            ("valid", adapter, {{}}, 20000),
            ("guarded", adapter, guarded, 20000),
            ("awaits", awaiting, guarded, 5000),
        ):
            best = float("inf")
            for _ in range(7):
                start = time.perf_counter()
                for _ in range(n):
                    await tool.execute("c", VALID, **kwargs)
                best = min(best, (time.perf_counter() - start) / n)
            out[label] = best
        print(json.dumps(out))

    asyncio.run(main())
    """
)


def valid_path(before: str, rounds: int) -> dict[str, dict[str, float]]:
    with tempfile.TemporaryDirectory() as tmp:
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", before, "customtools"],
            check=True,
            capture_output=True,
        ).stdout
        subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
        code = CHILD.format(bench=str(HERE))
        best: dict[str, dict[str, float]] = {"before": {}, "after": {}}
        for _ in range(rounds):  # alternate, so drift of the machine hits both alike
            for which, path in (("before", tmp), ("after", str(ROOT))):
                env = {**os.environ, "PYTHONPATH": path}
                line = subprocess.run(
                    [sys.executable, "-c", code],
                    check=True,
                    capture_output=True,
                    text=True,
                    env=env,
                    cwd=tmp,
                ).stdout.strip()
                for label, value in json.loads(line).items():
                    best[which][label] = min(best[which].get(label, float("inf")), value)
        return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=20, help="calls per in-process kind")
    parser.add_argument("--isolated-calls", type=int, default=10)
    parser.add_argument("--before", default="c2d3fee", help="git revision to compare against")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--valid-only", action="store_true", help="skip the latency part")
    args = parser.parse_args()

    import anyio

    if not args.valid_only:
        rows = anyio.run(latency_table, args.calls, args.isolated_calls)
        table = Table(
            ["tool", "grace", "p50", "p99"],
            note=f"Abort to result: {args.calls} concurrent calls per row"
            f" ({args.isolated_calls} on one worker for the isolated rows), asyncio.",
        )
        worst = float("-inf")
        for name, grace, values in rows:
            p50, p99 = statistics.median(values), percentile(values, 0.99)
            table.row(name, f"{grace} s", fmt_time(p50), fmt_time(p99))
            worst = max(worst, p99 - grace)
        # deadline + grace + a small bound (0.25 s, plus scheduling)
        table.target(
            "p99 ≤ grace + 0.5 s, every row", f"at most {worst:.2f} s past the grace", worst <= 0.5
        )
        emit(table)

    best = valid_path(args.before, args.rounds)
    table = Table(
        ["path", f"before (`{args.before}`)", "now", "ratio"],
        note=f"Best of {args.rounds} alternating rounds × 7 × 20,000 calls, child processes"
        " (awaits: 5,000 guarded calls of a tool that suspends ten times).",
    )
    for label, name in (
        ("valid", "valid: the hot path"),
        ("guarded", "valid, signal + timeout"),
        ("awaits", "guarded, a tool that awaits"),
    ):
        value = best["after"][label] / best["before"][label]
        table.row(
            f"`adapter.execute` ({name})",
            fmt_time(best["before"][label]),
            fmt_time(best["after"][label]),
            ratio(value),
        )
        table.target(f"{name} ≤ 1.05× before", ratio(value), value <= 1.05)
    emit(table)


if __name__ == "__main__":
    if sys.platform == "win32":  # pragma: no cover
        raise SystemExit("POSIX only")
    del asyncio  # the latency part runs under anyio (asyncio backend)
    run_main(main)
