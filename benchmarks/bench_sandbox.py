"""Sandboxed isolation workers against unsandboxed ones, in the same run.

Run with ``python benchmarks/bench_sandbox.py``. Two measurements, alternating sandboxed and
unsandboxed so both see the same machine load:

- worker start: a load of one tool module in a fresh worker (interpreter start, customtools
  imported, the confinement applied, the module imported), the median of ``--starts`` each;
- call round trip: p50 of an isolated call of a trivial async tool, ``--calls`` per block,
  ``--blocks`` alternating blocks, on asyncio and trio.

Targets: sandboxed start <= 1.3x unsandboxed; sandboxed round trip p50 <= 1.05x unsandboxed.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import SCHEMA, VALID, Table, emit, fmt_time, ratio, run_main

from customtools import CustomToolAdapter
from customtools._isolation._pool import IsolationPool
from customtools._loading._loader import load_scan
from customtools._loading._scan import explicit_candidates

START_TARGET = 1.3
CALL_TARGET = 1.05

TOOL_MODULE = f"""
from customtools import CustomTool

SCHEMA = {SCHEMA!r}

async def execute(tool_call_id, params, on_update, ctx, signal):
    return "ok"

def factory(api):
    return CustomTool(name="read_file", description="bench", parameters=SCHEMA, execute=execute)
"""


async def one_start(directory: str, *, sandbox: bool) -> float:
    scanned = explicit_candidates([os.path.join(directory, "bench_tool.py")], directory)
    async with IsolationPool() as pool:
        started = time.perf_counter()
        loaded = await load_scan(scanned, directory, isolation=pool, sandbox=sandbox)
        elapsed = time.perf_counter() - started
        loaded.raise_for_errors()
    return elapsed


async def starts(directory: str, count: int) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {"unsandboxed": [], "sandboxed": []}
    await one_start(directory, sandbox=True)  # warm the page cache for both
    for _ in range(count):
        out["unsandboxed"].append(await one_start(directory, sandbox=False))
        out["sandboxed"].append(await one_start(directory, sandbox=True))
    return out


async def calls(directory: str, count: int, blocks: int) -> dict[str, list[float]]:
    scanned = explicit_candidates([os.path.join(directory, "bench_tool.py")], directory)
    async with IsolationPool() as plain_pool, IsolationPool() as boxed_pool:
        plain = await load_scan(scanned, directory, isolation=plain_pool)
        boxed = await load_scan(scanned, directory, isolation=boxed_pool, sandbox=True)
        plain.raise_for_errors()
        boxed.raise_for_errors()
        adapters = {
            "unsandboxed": CustomToolAdapter(plain.tools[0].tool),
            "sandboxed": CustomToolAdapter(boxed.tools[0].tool),
        }
        for adapter in adapters.values():
            assert (await adapter.execute("warm", dict(VALID))).text == "ok"
        out: dict[str, list[float]] = {name: [] for name in adapters}
        clock = time.perf_counter
        for _ in range(blocks):
            for name, adapter in adapters.items():
                for _ in range(count):
                    started = clock()
                    await adapter.execute("c", VALID)
                    out[name].append(clock() - started)
        return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--starts", type=int, default=15, help="worker starts of each kind")
    parser.add_argument("--calls", type=int, default=1000, help="calls per block")
    parser.add_argument("--blocks", type=int, default=4, help="alternating blocks")
    args = parser.parse_args()
    table = Table(
        ["measurement", "unsandboxed", "sandboxed", "ratio"],
        note=f"{args.starts} worker starts of each kind; {args.blocks} alternating blocks of"
        f" {args.calls} calls of each kind per backend.",
    )
    with tempfile.TemporaryDirectory() as directory:
        Path(directory, "bench_tool.py").write_text(textwrap.dedent(TOOL_MODULE))
        started = anyio.run(starts, directory, args.starts)
        plain = statistics.median(started["unsandboxed"])
        boxed = statistics.median(started["sandboxed"])
        label = "worker start (load of one module, median)"
        table.row(label, fmt_time(plain), fmt_time(boxed), ratio(boxed / plain))
        table.target(
            f"{label} ≤ {START_TARGET}×", ratio(boxed / plain), boxed / plain <= START_TARGET
        )
        for backend in ("asyncio", "trio"):
            samples: Any = anyio.run(calls, directory, args.calls, args.blocks, backend=backend)
            plain = statistics.median(samples["unsandboxed"])
            boxed = statistics.median(samples["sandboxed"])
            label = f"call round trip p50, {backend}"
            table.row(label, fmt_time(plain), fmt_time(boxed), ratio(boxed / plain))
            table.target(
                f"{label} ≤ {CALL_TARGET}×", ratio(boxed / plain), boxed / plain <= CALL_TARGET
            )
    emit(table)


if __name__ == "__main__":
    run_main(main)
