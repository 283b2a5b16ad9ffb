"""Reload latency: from a tool file's write to the MCP client's ``tools/list_changed``, p50.

Run with ``python benchmarks/bench_reload.py`` (needs the ``mcp`` and ``reload`` extras). One
process: a ``ToolServer`` whose tools follow ``Reloader.watch()`` (what ``customtools serve
--reload`` runs), the SDK's client connected in memory (handshake era, which carries the
notification). Each round rewrites one of 20 tool modules and waits for the notification.
The watcher's debounce (50 ms by default) is part of the figure; it is also printed with the
debounce set to 1 ms to show the rest.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from _harness import Table, emit, fmt_time, run_main


def source(name: str, version: int) -> str:
    return (
        "from customtools import CustomTool\n"
        "def factory(api):\n"
        f"    return CustomTool(name={name!r}, description='d', execute=lambda *a: 'v{version}')\n"
    )


async def measure(rounds: int, debounce_ms: int) -> list[float]:
    from mcp import Client
    from mcp_types import ToolListChangedNotification

    from customtools.loading import Reloader
    from customtools.mcp import ToolServer

    with tempfile.TemporaryDirectory() as tmp:
        tools = Path(tmp)
        for index in range(20):
            (tools / f"tool_{index}.py").write_text(source(f"tool_{index}", 0))
        reloader = Reloader([tools], tools, explicit=True)
        result = await reloader.load()
        server = ToolServer([loaded.tool for loaded in result.tools])
        heard = anyio.Event()

        async def on_message(message: Any) -> None:
            if isinstance(message, ToolListChangedNotification):
                heard.set()

        async def follow() -> None:
            async for new in reloader.watch(debounce_ms=debounce_ms, step_ms=10):
                await server.set_tools([loaded.tool for loaded in new.tools])

        samples: list[float] = []
        async with (
            Client(server.server, mode="legacy", message_handler=on_message) as client,
            anyio.create_task_group() as group,
        ):
            await client.list_tools()
            group.start_soon(follow)
            await anyio.sleep(0.3)  # the watcher is up
            for round_ in range(1, rounds + 1):
                heard = anyio.Event()
                start = time.perf_counter()
                (tools / f"tool_{round_ % 20}.py").write_text(source(f"tool_{round_ % 20}", round_))
                with anyio.fail_after(10):
                    await heard.wait()
                samples.append(time.perf_counter() - start)
                await anyio.sleep(0.05)
            group.cancel_scope.cancel()
        reloader.close()
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=30)
    args = parser.parse_args()
    table = Table(
        ["watcher debounce", "p50", "p90"],
        note=f"{args.rounds} rounds, one of 20 modules rewritten per round.",
    )
    for debounce in (50, 1):
        samples = anyio.run(measure, args.rounds, debounce)
        ordered = sorted(samples)
        p90 = ordered[int(len(ordered) * 0.9) - 1]
        label = f"{debounce} ms" + (" (the default)" if debounce == 50 else "")
        table.row(label, fmt_time(statistics.median(samples)), fmt_time(p90))
    emit(table)


if __name__ == "__main__":
    run_main(main)
