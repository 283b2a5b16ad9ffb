"""Talk-back over MCP stdio: a tool that asks one question, against a plain call, same run.

``customtools serve --stdio`` serves a pack of two tools: ``echo`` returns its text, ``ask``
asks one question (``ctx.ask``, a one-field form) and returns the answer. The SDK ``Client``
answers the question at once from its elicitation callback. Measured, in the same run,
interleaved round-robin in blocks of ``--calls`` sequential calls, p50 (median) per call:

* ``plain``: ``echo`` round trips (handshake era);
* ``ask, handshake``: ``ask`` round trips, the question a live ``elicitation/create``
  mid-call (one extra round trip on the same pipe);
* ``ask, 2026-07-28``: ``ask`` round trips in the modern era, where the question is an
  ``input_required`` result and the client retries with the answer (two ``tools/call``,
  the tool runs twice);
* with ``--baseline SRC`` (a checkout of the code before this change, for example
  ``git worktree add /tmp/base <commit>``): ``plain, baseline``, the same ``echo`` served by
  that checkout's ``customtools serve``; the ratio ``plain / plain, baseline`` is the cost
  talk-back adds to a call that does not ask (target <= 1.02x).

Usage::

    python benchmarks/bench_talkback.py [--calls 200] [--repeats 7] [--baseline SRC]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from _harness import Table, emit, ratio, run_main

ROOT = Path(__file__).resolve().parents[1]

PACK = """\
from customtools import ToolContext, tool


@tool
async def echo(text: str) -> str:
    \"\"\"Return the text.\"\"\"
    return text


@tool
async def ask(ctx: ToolContext) -> str:
    \"\"\"Ask one question.\"\"\"
    answer = await ctx.ask(
        "Name?", {"type": "object", "properties": {"name": {"type": "string"}}}
    )
    return str(answer.values.get("name"))
"""

PLAIN_PACK = """\
from customtools import tool


@tool
async def echo(text: str) -> str:
    \"\"\"Return the text.\"\"\"
    return text
"""


def _params(pack: Path, src: Path) -> Any:
    from mcp.client.stdio import StdioServerParameters

    env = {k: v for k, v in os.environ.items() if k in ("HOME", "PATH", "LANG", "TMPDIR")}
    env["PYTHONPATH"] = str(src)
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "customtools", "serve", "--no-entry-points", str(pack), "--stdio"],
        env=env,
        cwd=str(src),
    )


async def _answer(_ctx: Any, _params: Any) -> Any:
    import mcp_types as types

    return types.ElicitResult(action="accept", content={"name": "Ada"})


async def _block(client: Any, tool: str, args: dict[str, Any], calls: int) -> list[float]:
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        result = await client.call_tool(tool, args)
        times.append(time.perf_counter() - start)
        assert not result.is_error, result
    return times


async def run(calls: int, repeats: int, baseline: Path | None) -> dict[str, Any]:
    from contextlib import AsyncExitStack

    from mcp import Client
    from mcp.client.stdio import stdio_client

    with tempfile.TemporaryDirectory() as tmp:
        pack = Path(tmp) / "pack"
        pack.mkdir()
        (pack / "tools.py").write_text(PACK)
        plain_pack = Path(tmp) / "plain"
        plain_pack.mkdir()
        (plain_pack / "tools.py").write_text(PLAIN_PACK)
        errlog = open(os.devnull, "w")  # noqa: SIM115 - closed below
        try:
            async with AsyncExitStack() as stack:

                async def connect(src: Path, which: Path, mode: str) -> Any:
                    transport = stdio_client(_params(which, src), errlog=errlog)
                    return await stack.enter_async_context(
                        Client(transport, mode=mode, elicitation_callback=_answer)  # type: ignore[arg-type]
                    )

                legacy = await connect(ROOT, pack, "legacy")
                modern = await connect(ROOT, pack, "auto")
                cases: dict[str, tuple[Any, str, dict[str, Any]]] = {
                    "plain": (legacy, "echo", {"text": "hi"}),
                    "ask, handshake": (legacy, "ask", {}),
                    "ask, 2026-07-28": (modern, "ask", {}),
                }
                if baseline is not None:
                    base = await connect(baseline, plain_pack, "legacy")
                    cases["plain, baseline"] = (base, "echo", {"text": "hi"})
                for client, tool, args in cases.values():  # warm up
                    await _block(client, tool, args, 20)
                samples: dict[str, list[float]] = {name: [] for name in cases}
                for _ in range(repeats):
                    for name, (client, tool, args) in cases.items():
                        samples[name].extend(await _block(client, tool, args, calls))
        finally:
            errlog.close()
    p50 = {name: statistics.median(values) for name, values in samples.items()}
    ratios = {
        "ask, handshake / plain": p50["ask, handshake"] / p50["plain"],
        "ask, 2026-07-28 / plain": p50["ask, 2026-07-28"] / p50["plain"],
    }
    if "plain, baseline" in p50:
        ratios["plain / plain, baseline"] = p50["plain"] / p50["plain, baseline"]
    return {"p50_us": {k: v * 1e6 for k, v in p50.items()}, "ratios": ratios}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--baseline", type=Path, default=None)
    args = parser.parse_args()
    out = anyio.run(run, args.calls, args.repeats, args.baseline)
    table = Table(
        ["case", "p50 per call", "× plain"],
        note=f"{args.repeats} interleaved blocks of {args.calls} sequential calls per case.",
    )
    for name, value in out["p50_us"].items():
        table.row(name, f"{value:,.0f} µs", ratio(value / out["p50_us"]["plain"]))
    if "plain / plain, baseline" in out["ratios"]:
        value = out["ratios"]["plain / plain, baseline"]
        table.target("plain call ≤ 1.02× the baseline's", ratio(value), value <= 1.02)
    emit(table)


if __name__ == "__main__":
    run_main(main)
