"""Process isolation: the round trip of an isolated call against the in-process adapter.

Run with ``python benchmarks/bench_isolation.py`` (``make bench`` runs it too). A trivial async
tool (the 4-property schema of the performance anchors) is called through a
``CustomToolAdapter`` in-process and through the same adapter on a proxy whose tool runs in a
worker process; calls alternate in blocks, in one run, on asyncio and on trio. With the
``bench`` extra installed, the same tool served by the MCP SDK over stdio is measured too
(the alternative protocol considered in docs/design.md). Target: isolated p50 <= 150 µs.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import SCHEMA, VALID, Table, emit, fmt_time, ratio, run_main

from customtools import CustomTool, CustomToolAdapter
from customtools._isolation._pool import IsolationPool
from customtools._loading._loader import load_scan
from customtools._loading._scan import explicit_candidates

TARGET_P50 = 150e-6

TOOL_MODULE = f"""
from customtools import CustomTool

SCHEMA = {SCHEMA!r}

async def execute(tool_call_id, params, on_update, ctx, signal):
    return "ok"

def factory(api):
    return CustomTool(name="read_file", description="bench", parameters=SCHEMA, execute=execute)
"""

MCP_SERVER = """
try:
    from mcp.server.mcpserver import MCPServer as Server  # mcp 2.x
except ImportError:
    from mcp.server.fastmcp import FastMCP as Server  # mcp 1.x

server = Server("bench")

@server.tool()
async def read_file(path: str, limit: int, mode: str, tags: list[str] | None = None) -> str:
    return "ok"

server.run("stdio")
"""


async def tool_execute(
    tool_call_id: str, params: Any, on_update: Any, ctx: Any, signal: Any
) -> str:
    return "ok"


def percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


async def timed_calls(call: Any, count: int) -> list[float]:
    out = []
    clock = time.perf_counter
    for index in range(count):
        started = clock()
        await call(index)
        out.append(clock() - started)
    return out


async def isolated_vs_in_process(
    calls: int, blocks: int, directory: str, spin_us: int
) -> dict[str, list[float]]:
    local = CustomToolAdapter(
        CustomTool(name="read_file", description="bench", parameters=SCHEMA, execute=tool_execute)
    )
    async with IsolationPool(spin_us=spin_us) as pool:
        scanned = explicit_candidates([os.path.join(directory, "bench_tool.py")], directory)
        loaded = await load_scan(scanned, directory, isolation=pool)
        loaded.raise_for_errors()
        remote = CustomToolAdapter(loaded.tools[0].tool)
        result = await remote.execute("warm", dict(VALID))
        assert result.text == "ok", result
        samples: dict[str, list[float]] = {"in-process": [], "isolated": []}
        for _ in range(blocks):

            async def local_call(index: int) -> Any:
                return await local.execute("c", VALID)

            async def remote_call(index: int) -> Any:
                return await remote.execute("c", VALID)

            samples["in-process"] += await timed_calls(local_call, calls)
            samples["isolated"] += await timed_calls(remote_call, calls)
        return samples


async def mcp_stdio(calls: int, blocks: int, directory: str) -> list[float] | None:
    try:
        from mcp import ClientSession, StdioServerParameters
        from mcp.client.stdio import stdio_client
    except ImportError:
        return None
    server = os.path.join(directory, "mcp_server.py")
    Path(server).write_text(MCP_SERVER)
    params = StdioServerParameters(command=sys.executable, args=[server])
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        await session.call_tool("read_file", dict(VALID))
        samples: list[float] = []
        for _ in range(blocks):

            async def call(index: int) -> Any:
                return await session.call_tool("read_file", VALID)

            samples += await timed_calls(call, calls)
        return samples


def report(table: Table, backend: str, samples: dict[str, list[float]]) -> None:
    base = percentile(samples["in-process"], 0.5)
    for name, values in samples.items():
        p50 = percentile(values, 0.5)
        table.row(
            f"{name}, {backend}",
            fmt_time(p50),
            fmt_time(percentile(values, 0.99)),
            ratio(p50 / base),
        )
        if name == "isolated":
            table.target(
                f"isolated p50 ≤ {fmt_time(TARGET_P50)}, {backend}",
                fmt_time(p50),
                p50 <= TARGET_P50,
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=2000, help="calls per block")
    parser.add_argument("--blocks", type=int, default=5, help="alternating blocks")
    parser.add_argument(
        "--spin-us", type=int, default=200, help="IsolationOptions.spin_us (0: never poll)"
    )
    args = parser.parse_args()
    table = Table(
        ["path", "p50", "p99", "× in-process p50"],
        note=f"{args.blocks} alternating blocks of {args.calls} sequential calls per path.",
    )
    with tempfile.TemporaryDirectory() as directory:
        Path(directory, "bench_tool.py").write_text(textwrap.dedent(TOOL_MODULE))
        for backend in ("asyncio", "trio"):
            samples = anyio.run(
                isolated_vs_in_process,
                args.calls,
                args.blocks,
                directory,
                args.spin_us,
                backend=backend,
            )
            report(table, backend, samples)
        mcp = anyio.run(mcp_stdio, max(1, args.calls // 4), args.blocks, directory)
        if mcp is None:
            table.row("MCP SDK over stdio: skipped (install the bench extra)", "", "", "")
        else:
            table.row(
                "MCP SDK over stdio, asyncio (why the worker does not use it)",
                fmt_time(percentile(mcp, 0.5)),
                fmt_time(percentile(mcp, 0.99)),
                "",
            )
    emit(table)


if __name__ == "__main__":
    run_main(main)
