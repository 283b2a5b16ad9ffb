"""Core runtime benchmark: the adapter against a bare await, the MCP SDK and LangChain.

Run with ``make bench`` (installs the ``bench`` extra) or ``python benchmarks/bench_adapter.py``.
Everything is measured in one process, in one run, on the 4-property schema of the
performance anchors; figures are ratios to a bare ``await fn(**params)`` measured alongside.
The import figures (``--import-only`` for them alone) time fresh interpreters, as a ratio to
``import anyio`` measured in the same run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Annotated, Any, Literal

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import INVALID, SCHEMA, VALID, Case, compile_case, fmt_time, measure

from customtools import AbortController, CustomTool, CustomToolAdapter, ToolResult

try:  # peers are optional: installed by the `bench` extra
    from pydantic import BaseModel, ConfigDict, Field
except ImportError:  # pragma: no cover
    BaseModel = ConfigDict = Field = None  # type: ignore[assignment,misc]


async def bare(path: str, limit: int, mode: str, tags: list[str] | None = None) -> str:
    return "ok"


async def tool_execute(
    tool_call_id: str, params: Any, on_update: Any, ctx: Any, signal: Any
) -> str:
    return "ok"


def make_adapter() -> CustomToolAdapter:
    return CustomToolAdapter(
        CustomTool(name="read_file", description="bench", parameters=SCHEMA, execute=tool_execute)
    )


async def read_file_peer(
    path: Annotated[str, Field(pattern="^[A-Za-z0-9_./-]+$", min_length=1)],
    limit: Annotated[int, Field(ge=1)],
    mode: Literal["read", "write", "append"],
    tags: list[str] | None = None,
) -> str:
    return "ok"


def mcp_cases(ns: dict[str, Any]) -> list[Case]:
    if Field is None:
        return []
    server: Any
    try:
        from mcp.server.mcpserver import MCPServer

        server = MCPServer("bench")
        label = "MCP SDK MCPServer.call_tool"
    except ImportError:
        try:
            from mcp.server.fastmcp import FastMCP
        except ImportError:
            return []
        server = FastMCP("bench")
        label = "MCP SDK FastMCP.call_tool"

    server.add_tool(read_file_peer, name="read_file", structured_output=False)

    async def mcp_call(args: dict[str, Any]) -> Any:
        return await server.call_tool("read_file", args)

    async def mcp_call_invalid() -> Any:
        try:
            return await server.call_tool("read_file", INVALID)
        except Exception as exc:  # the SDK raises ToolError for invalid arguments
            return exc

    ns["mcp_call"] = mcp_call
    ns["mcp_call_invalid"] = mcp_call_invalid
    return [
        Case(f"{label} (valid)", compile_case("await mcp_call(VALID)", ns)),
        Case(f"{label} (invalid)", compile_case("await mcp_call_invalid()", ns)),
    ]


def langchain_cases(ns: dict[str, Any]) -> list[Case]:
    try:
        from langchain_core.tools import StructuredTool
    except ImportError:
        return []

    class Args(BaseModel):
        model_config = ConfigDict(extra="forbid")
        path: str = Field(pattern="^[A-Za-z0-9_./-]+$", min_length=1)
        limit: int = Field(ge=1)
        mode: Literal["read", "write", "append"]
        tags: list[str] | None = None

    async def read_file(**kwargs: Any) -> str:
        return "ok"

    ns["lc_tool"] = StructuredTool.from_function(
        coroutine=read_file, name="read_file", description="bench", args_schema=Args
    )
    return [
        Case(
            "LangChain StructuredTool.ainvoke (valid)",
            compile_case("await lc_tool.ainvoke(VALID)", ns),
        )
    ]


async def call_benchmarks(repeats: int) -> dict[str, Any]:
    adapter = make_adapter()
    controller = AbortController()
    ns: dict[str, Any] = {
        "bare": bare,
        "adapter": adapter,
        "VALID": VALID,
        "INVALID": INVALID,
        "signal": controller.signal,
    }
    mcp = mcp_cases(ns)
    # Sanity: the adapter really validates and really reports every violation.
    ok = await adapter.execute("c", VALID)
    bad = await adapter.execute("c", INVALID)
    assert not ok.is_error and ok.text == "ok", ok
    assert bad.is_error and len(bad.details["violations"]) == 4, bad
    timed = await adapter.execute("c", VALID, signal=controller.signal, timeout=60)
    assert not timed.is_error, timed

    import anyio
    import jsonschema_rs

    ns["anyio"] = anyio
    ns["rust_validator"] = jsonschema_rs.validator_for(SCHEMA)
    cases = [
        Case("baseline: await fn(**params)", compile_case("await bare(**VALID)", ns)),
        Case(
            "floor: await fn inside anyio.CancelScope(deadline)",
            compile_case(
                "with anyio.CancelScope(deadline=anyio.current_time() + 60):\n"
                "            await bare(**VALID)",
                ns,
            ),
        ),
        Case(
            "floor: jsonschema_rs iter_errors (4 violations)",
            compile_case("list(rust_validator.iter_errors(INVALID))", ns),
        ),
        Case(
            "customtools adapter.execute (valid)",
            compile_case('await adapter.execute("c", VALID)', ns),
        ),
        Case(
            "customtools adapter.execute (valid, signal + timeout)",
            compile_case('await adapter.execute("c", VALID, signal=signal, timeout=60)', ns),
        ),
        Case(
            "customtools adapter.execute (invalid, all violations)",
            compile_case('await adapter.execute("c", INVALID)', ns),
        ),
        *mcp,
        *langchain_cases(ns),
    ]
    await measure(cases, repeats=repeats)
    return {c.name: c for c in cases}


async def update_throughput(n: int = 200_000) -> float:
    async def streamer(
        tool_call_id: str, params: Any, on_update: Any, ctx: Any, signal: Any
    ) -> str:
        partial = ToolResult.from_text("tick")
        for _ in range(n):
            on_update(partial)
        return "done"

    adapter = CustomToolAdapter(CustomTool(name="streamer", execute=streamer))
    received: list[ToolResult] = []
    samples = []
    for _ in range(5):
        received.clear()
        start = time.perf_counter()
        await adapter.execute("c", {}, on_update=received.append)
        samples.append(n / (time.perf_counter() - start))
    assert len(received) == n
    return statistics.median(samples)


IMPORTS = {
    "base": "pass",
    "anyio": "import anyio",
    "root": "import customtools",
    "core": "from customtools import CustomTool, CustomToolAdapter, ToolRegistry, Type",
}
"""What the import figures time, each in a fresh interpreter (``python -c``)."""


def import_costs(rounds: int = 40) -> dict[str, float]:
    """Median CPU seconds (user + system) each of :data:`IMPORTS` adds to ``python -c pass``.

    Round-robin over fresh interpreters, so the statements share the machine's moments. CPU
    time of the child rather than wall time: on a busy machine the wall time is mostly the
    wait for a core, and the ratio to ``import anyio`` is what is read.
    """
    # PYTHONDONTWRITEBYTECODE would make every run compile the package from source.
    env = {
        k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONDONTWRITEBYTECODE")
    }

    def run(code: str) -> float:
        child = subprocess.Popen([sys.executable, "-c", code], env=env)
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
        assert child.returncode == 0, code
        return usage.ru_utime + usage.ru_stime

    samples: dict[str, list[float]] = {label: [] for label in IMPORTS}
    for code in IMPORTS.values():
        run(code)  # warm the bytecode cache
    for _ in range(rounds):
        for label, code in IMPORTS.items():
            samples[label].append(run(code))
    base = statistics.median(samples.pop("base"))
    return {label: statistics.median(times) - base for label, times in samples.items()}


def import_checks(rounds: int) -> list[tuple[str, bool, str]]:
    costs = import_costs(rounds)
    anyio_s = costs["anyio"]
    print(
        f"import cost over python -c pass, median CPU time of {rounds} fresh interpreters each:"
        f" import anyio {anyio_s * 1e3:.1f} ms, import customtools {costs['root'] * 1e3:.1f} ms,"
        f" core names {costs['core'] * 1e3:.1f} ms"
    )
    return [
        (
            "import customtools <= 1.5x import anyio",
            costs["root"] <= 1.5 * anyio_s,
            f"{costs['root'] / anyio_s:.2f}x",
        ),
        (
            "from customtools import CustomTool, CustomToolAdapter, ToolRegistry, Type (reported)",
            True,
            f"{costs['core'] / anyio_s:.2f}x import anyio",
        ),
    ]


def adapter_memory(count: int = 1000) -> int:
    def execute(*_: Any) -> str:
        return "ok"

    tracemalloc.start()
    before = tracemalloc.take_snapshot()
    tools = [
        CustomTool(name=f"tool_{i}", description="d", parameters=SCHEMA, execute=execute)
        for i in range(count)
    ]
    adapters = [CustomToolAdapter(t) for t in tools]
    _, peak = tracemalloc.get_traced_memory()
    del before
    tracemalloc.stop()
    assert len(adapters) == count
    return peak


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--json", action="store_true", help="print a JSON summary too")
    parser.add_argument("--import-rounds", type=int, default=40)
    parser.add_argument(
        "--import-only", action="store_true", help="only the import figures (fresh interpreters)"
    )
    args = parser.parse_args()
    if args.import_only:
        checks = import_checks(args.import_rounds)
        for name, ok, figure in checks:
            print(f"  [{'met' if ok else 'MISSED'}] {name}: {figure}")
        return 0 if all(ok for _, ok, _ in checks) else 1

    cases = asyncio.run(call_benchmarks(args.repeats))
    base = cases["baseline: await fn(**params)"].best
    print(
        f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs; best and median of"
        f" {args.repeats} round-robin repeats; ratios and targets use the best"
    )
    print(f"{'case':56} {'best':>10} {'vs bare':>8} {'median':>10} {'spread':>7}")
    for case in cases.values():
        print(
            f"{case.name:56} {fmt_time(case.best):>10} {case.best / base:>7.2f}x"
            f" {fmt_time(case.median):>10} {case.spread:>6.0%}"
        )

    valid = cases["customtools adapter.execute (valid)"].best
    guarded = cases["customtools adapter.execute (valid, signal + timeout)"].best
    invalid = cases["customtools adapter.execute (invalid, all violations)"].best
    summary: dict[str, Any] = {
        "valid_ratio": valid / base,
        "guarded_ratio": guarded / base,
        "invalid_us": invalid * 1e6,
    }
    print()
    checks = [
        ("valid call <= 6x bare await", valid / base <= 6, f"{valid / base:.2f}x"),
        ("signal + timeout <= 30x bare await", guarded / base <= 30, f"{guarded / base:.2f}x"),
        ("invalid call <= 15 us", invalid <= 15e-6, fmt_time(invalid)),
    ]
    for name, case in cases.items():
        if name.startswith("MCP") and name.endswith("(valid)"):
            summary["mcp_speedup"] = case.best / valid
            checks.append(
                (
                    "MCP valid >= 15x slower",
                    case.best / valid >= 15,
                    f"{case.best / valid:.1f}x",
                )
            )
        if name.startswith("MCP") and name.endswith("(invalid)"):
            summary["mcp_invalid_speedup"] = case.best / invalid
            checks.append(
                (
                    "faster than MCP invalid path",
                    invalid < case.best,
                    f"{case.best / invalid:.1f}x",
                )
            )
        if name.startswith("LangChain"):
            summary["langchain_speedup"] = case.best / valid
            checks.append(
                (
                    "LangChain >= 150x slower",
                    case.best / valid >= 150,
                    f"{case.best / valid:.0f}x",
                )
            )

    rate = asyncio.run(update_throughput())
    summary["updates_per_s"] = rate
    checks.append(("on_update >= 1M updates/s", rate >= 1e6, f"{rate / 1e6:.2f} M/s"))

    checks += import_checks(args.import_rounds)

    peak = adapter_memory()
    summary["adapters_peak_bytes"] = peak
    checks.append(
        ("peak memory, 1,000 tools + adapters (reported)", True, f"{peak / 1024:.0f} KiB")
    )

    for name, ok, figure in checks:
        print(f"  [{'met' if ok else 'MISSED'}] {name}: {figure}")
    if args.json:
        print(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
