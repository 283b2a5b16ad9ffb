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
import os
import statistics
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Annotated, Any, Literal

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import (
    INVALID,
    SCHEMA,
    VALID,
    Case,
    Table,
    cases_table,
    compile_case,
    emit,
    fmt_time,
    measure,
    ratio,
    run_main,
)

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


def import_checks(rounds: int) -> list[tuple[str, bool | None, str]]:
    costs = import_costs(rounds)
    anyio_s = costs["anyio"]
    print(
        f"import cost over python -c pass, median CPU time of {rounds} fresh interpreters each:"
        f" import anyio {anyio_s * 1e3:.1f} ms, import customtools {costs['root'] * 1e3:.1f} ms,"
        f" core names {costs['core'] * 1e3:.1f} ms"
    )
    return [
        (
            "`import customtools` ≤ 1.5× `import anyio` (CPU time)",
            costs["root"] <= 1.5 * anyio_s,
            ratio(costs["root"] / anyio_s),
        ),
        (
            "`from customtools import CustomTool, CustomToolAdapter, ToolRegistry, Type`",
            None,
            f"{ratio(costs['core'] / anyio_s)} `import anyio`",
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--import-rounds", type=int, default=40)
    parser.add_argument(
        "--import-only", action="store_true", help="only the import figures (fresh interpreters)"
    )
    args = parser.parse_args()
    if args.import_only:
        table = Table(["target", "result", ""])
        for name, ok, figure in import_checks(args.import_rounds):
            table.target(name, figure, ok)
        emit(table)
        return

    cases = asyncio.run(call_benchmarks(args.repeats))
    base = cases["baseline: await fn(**params)"]
    emit(
        cases_table(
            list(cases.values()),
            baseline=base,
            note=f"Best and median of {args.repeats} round-robin repeats; ratios and targets"
            " use the best.",
        )
    )
    valid = cases["customtools adapter.execute (valid)"].best
    guarded = cases["customtools adapter.execute (valid, signal + timeout)"].best
    invalid = cases["customtools adapter.execute (invalid, all violations)"].best
    table = Table(["target", "result", ""])
    table.target("valid call ≤ 6× bare await", ratio(valid / base.best), valid / base.best <= 6)
    table.target(
        "signal + timeout ≤ 30× bare await", ratio(guarded / base.best), guarded / base.best <= 30
    )
    table.target("invalid call ≤ 15 µs", fmt_time(invalid), invalid <= 15e-6)
    for name, case in cases.items():
        if name.startswith("MCP") and name.endswith("(valid)"):
            speedup = case.best / valid
            table.target("valid call ≥ 15× faster than the MCP SDK", ratio(speedup), speedup >= 15)
        if name.startswith("MCP") and name.endswith("(invalid)"):
            speedup = case.best / invalid
            table.target("invalid call faster than the MCP SDK's", ratio(speedup), speedup > 1)
        if name.startswith("LangChain"):
            speedup = case.best / valid
            table.target("valid call ≥ 150× faster than LangChain", ratio(speedup), speedup >= 150)
    rate = asyncio.run(update_throughput())
    table.target("`on_update` to a plain callback ≥ 1 M/s", f"{rate / 1e6:.2f} M/s", rate >= 1e6)
    peak = adapter_memory()
    table.target("peak memory, 1,000 tools + adapters", f"{peak / 1024:.0f} KiB", None)
    emit(table)


if __name__ == "__main__":
    run_main(main)
