"""The MCP bridge: served ``tools/call`` round trips and mounted calls, against the bare SDK.

Three servers answer the same one-argument ``echo`` tool, each in its own process:

* ``floor``: the SDK's low-level ``Server`` returning the text, with no validation at all
  (the least any server can do);
* ``mcpserver``: the SDK's ``MCPServer`` with a decorated ``echo(text: str) -> str``;
* ``customtools``: ``customtools serve`` with a custom tool (schema validated, adapter,
  progress and cancellation machinery).

Measured, all in the same run and interleaved round-robin (repeat r of every case, then
repeat r+1), best of the repeats per case (noise on a shared machine only adds time):

* sequential ``tools/call`` round trips with the SDK ``Client`` over stdio and over
  streamable HTTP (stateful): customtools vs floor (target <= 1.15x) and vs MCPServer
  (target: faster);
* 32 concurrent HTTP clients: calls per second, customtools vs MCPServer (target: >=);
* a mounted call (``McpMount`` tool through its ``CustomToolAdapter``) vs a bare
  ``Client.call_tool`` to the same floor server over stdio (target <= 1.1x);
* ``customtools serve --http`` with bearer-token authentication (``--token-env``) vs the same
  server without it (target <= 1.05x).

Usage::

    python benchmarks/bench_mcp.py [--calls 300] [--repeats 5] [--auth-only]
    python benchmarks/bench_mcp.py --server floor|mcpserver stdio|http [PORT]   (internal)
"""

from __future__ import annotations

import argparse
import os
import socket
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from _harness import Table, emit, ratio, run_main

ROOT = Path(__file__).resolve().parents[1]

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


# -- the servers ------------------------------------------------------------------------------


def run_floor(transport: str, port: int) -> None:
    import mcp_types as types
    from mcp.server.lowlevel import Server

    tool = types.Tool(
        name="echo",
        description="Returns the text.",
        input_schema={"type": "object", "properties": {"text": {"type": "string"}}},
    )

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[tool])

    async def call_tool(ctx: Any, params: Any) -> types.CallToolResult:
        return types.CallToolResult(content=[types.TextContent(text=params.arguments["text"])])

    server = Server("floor", on_list_tools=list_tools, on_call_tool=call_tool)
    if transport == "stdio":
        from mcp.server.stdio import stdio_server

        async def main() -> None:
            async with stdio_server() as (read, write):
                await server.run(read, write, server.create_initialization_options())

        anyio.run(main)
    else:
        import uvicorn

        app = server.streamable_http_app(host="127.0.0.1")
        uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", access_log=False)


def run_mcpserver(transport: str, port: int) -> None:
    from mcp.server.mcpserver import MCPServer

    # Warnings only, as the other servers: access logs would slow it down.
    app = MCPServer("mcpserver", log_level="WARNING")

    @app.tool()
    def echo(text: str) -> str:
        """Returns the text."""
        return text

    if transport == "stdio":
        app.run()
    else:
        app.run("streamable-http", host="127.0.0.1", port=port)


# -- the client side --------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


TOKEN_ENV = "CUSTOMTOOLS_BENCH_TOKEN"
TOKEN = "bench-token-0123456789abcdefghijklmnop"


def server_argv(kind: str, transport: str, port: int, pack: str) -> list[str]:
    if kind in ("customtools", "customtools-token"):
        argv = [sys.executable, "-m", "customtools", "serve", "--no-entry-points", pack]
        if kind == "customtools-token":
            argv += ["--token-env", TOKEN_ENV]
        return argv + (["--http", f"127.0.0.1:{port}"] if transport == "http" else [])
    return [sys.executable, __file__, "--server", kind, transport, str(port)]


def child_env(home: str) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", ""),
        "HOME": home,
        "PYTHONPATH": str(ROOT),
        TOKEN_ENV: TOKEN,
    }


async def wait_for_port(port: int) -> None:
    with anyio.fail_after(60):
        while True:
            try:
                await (await anyio.connect_tcp("127.0.0.1", port)).aclose()
                return
            except OSError:
                await anyio.sleep(0.05)


async def start_http_server(stack: Any, kind: str, pack: str, env: Any, cwd: str) -> str:
    """Start ``kind``'s server over HTTP on a free loopback port, stopped with ``stack``; its URL."""
    port = free_port()
    process = await anyio.open_process(
        server_argv(kind, "http", port, pack),
        env=env,
        cwd=cwd,
        stdin=None,
        stdout=None,
        stderr=None,
    )
    stack.push_async_callback(process.aclose)
    stack.callback(process.kill)
    await wait_for_port(port)
    return f"http://127.0.0.1:{port}/mcp"


async def sequential(client: Any, calls: int) -> float:
    start = time.perf_counter()
    for i in range(calls):
        await client.call_tool("echo", {"text": f"t{i}"})
    return (time.perf_counter() - start) / calls


async def concurrent(url: str, clients: int, calls: int) -> float:
    """Calls per second of ``clients`` connected clients making ``calls`` calls each."""
    from mcp import Client

    go = anyio.Event()
    connected = 0
    finished = 0
    all_connected = anyio.Event()
    done = anyio.Event()

    async def one() -> None:
        nonlocal connected, finished
        async with Client(url) as client:
            await client.call_tool("echo", {"text": "warm"})
            connected += 1
            if connected == clients:
                all_connected.set()
            await go.wait()
            for i in range(calls):
                await client.call_tool("echo", {"text": f"t{i}"})
            finished += 1
            if finished == clients:
                done.set()

    async with anyio.create_task_group() as tg:
        for _ in range(clients):
            tg.start_soon(one)
        await all_connected.wait()
        start = time.perf_counter()
        go.set()
        await done.wait()
        elapsed = time.perf_counter() - start
    return clients * calls / elapsed


async def token_client(stack: Any, url: str, *, token: bool = True) -> Any:
    """A ``Client`` with the SDK's default HTTP client settings, sending the bearer token
    with every request (or, for the baseline, built the same way without it)."""
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    headers = {"Authorization": f"Bearer {TOKEN}"} if token else {}
    http = await stack.enter_async_context(create_mcp_http_client(headers=headers))
    return await stack.enter_async_context(Client(streamable_http_client(url, http_client=http)))


async def measure_auth(calls: int, repeats: int) -> dict[str, Any]:
    """Only the HTTP round trip with and without a bearer token, interleaved."""
    from contextlib import AsyncExitStack

    results: dict[str, Any] = {"calls": calls, "repeats": repeats}
    with tempfile.TemporaryDirectory() as tmp:
        pack = os.path.join(tmp, "pack")
        os.mkdir(pack)
        Path(pack, "echo.py").write_text(TOOL_PACK)
        env = child_env(tmp)
        async with AsyncExitStack() as stack:
            cases: dict[str, Any] = {}
            for kind in ("customtools", "customtools-token"):
                url = await start_http_server(stack, kind, pack, env, tmp)
                cases[f"http/{kind}"] = await token_client(
                    stack, url, token=kind == "customtools-token"
                )
            for client in cases.values():
                await sequential(client, 20)
            samples: dict[str, list[float]] = {name: [] for name in cases}
            names = list(cases)
            for repeat in range(repeats):
                # A B B A ...: neither case always runs first (order effects cancel out).
                for name in names if repeat % 2 == 0 else names[::-1]:
                    samples[name].append(await sequential(cases[name], calls))
            best = {name: min(values) for name, values in samples.items()}
            results["us_per_call"] = {name: round(v * 1e6, 1) for name, v in best.items()}
            results["calls_per_s_32_clients"] = {}
            results["ratios"] = {
                "http token/no token": best["http/customtools-token"] / best["http/customtools"]
            }
    return results


async def measure(calls: int, repeats: int) -> dict[str, Any]:
    from contextlib import AsyncExitStack

    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    from customtools import CustomToolAdapter
    from customtools.mcp import McpMount, McpServerConfig

    kinds = ("floor", "mcpserver", "customtools")
    results: dict[str, Any] = {"calls": calls, "repeats": repeats}
    with tempfile.TemporaryDirectory() as tmp:
        pack = os.path.join(tmp, "pack")
        os.mkdir(pack)
        Path(pack, "echo.py").write_text(TOOL_PACK)
        env = child_env(tmp)
        async with AsyncExitStack() as stack:
            stdio: dict[str, Any] = {}
            http: dict[str, Any] = {}
            urls: dict[str, str] = {}
            for kind in kinds:
                argv = server_argv(kind, "stdio", 0, pack)
                params = StdioServerParameters(command=argv[0], args=argv[1:], env=env, cwd=tmp)
                stdio[kind] = await stack.enter_async_context(Client(params))
                urls[kind] = await start_http_server(stack, kind, pack, env, tmp)
                http[kind] = await stack.enter_async_context(Client(urls[kind]))
            token_url = await start_http_server(stack, "customtools-token", pack, env, tmp)
            http["customtools-token"] = await token_client(stack, token_url)
            floor = server_argv("floor", "stdio", 0, pack)
            mount = await stack.enter_async_context(
                McpMount(
                    [
                        McpServerConfig(
                            name="floor",
                            command=floor[0],
                            args=tuple(floor[1:]),
                            env={"PYTHONPATH": str(ROOT)},
                            cwd=tmp,
                        )
                    ]
                )
            )
            (tool,) = await mount.tools()
            mounted = CustomToolAdapter(tool)

            class MountedClient:
                async def call_tool(self, name: str, arguments: dict[str, Any]) -> Any:
                    return await mounted.execute("bench", arguments)

            cases: dict[str, Any] = {
                **{f"stdio/{k}": stdio[k] for k in kinds},
                **{f"http/{k}": http[k] for k in kinds},
                "http/customtools-token": http["customtools-token"],
                "mount/bare-client": stdio["floor"],
                "mount/mounted": MountedClient(),
            }
            for client in cases.values():  # warm-up (and the client's implicit tools/list)
                await sequential(client, 20)
            samples: dict[str, list[float]] = {name: [] for name in cases}
            throughput: dict[str, list[float]] = {"mcpserver": [], "customtools": []}
            for _ in range(repeats):
                for name, client in cases.items():
                    samples[name].append(await sequential(client, calls))
                for kind in throughput:
                    throughput[kind].append(await concurrent(urls[kind], 32, 10))
            best = {name: min(values) for name, values in samples.items()}
            results["us_per_call"] = {name: round(v * 1e6, 1) for name, v in best.items()}
            results["calls_per_s_32_clients"] = {k: round(max(v)) for k, v in throughput.items()}
            results["ratios"] = {
                "stdio customtools/floor": best["stdio/customtools"] / best["stdio/floor"],
                "stdio customtools/mcpserver": best["stdio/customtools"] / best["stdio/mcpserver"],
                "http customtools/floor": best["http/customtools"] / best["http/floor"],
                "http customtools/mcpserver": best["http/customtools"] / best["http/mcpserver"],
                "http 32 clients customtools/mcpserver throughput": max(throughput["customtools"])
                / max(throughput["mcpserver"]),
                "mounted/bare client": best["mount/mounted"] / best["mount/bare-client"],
                "http token/no token": best["http/customtools-token"] / best["http/customtools"],
            }
    return results


TARGETS = {
    "stdio customtools/floor": ("<=", 1.15),
    "stdio customtools/mcpserver": ("<", 1.0),
    "http customtools/floor": ("<=", 1.15),
    "http customtools/mcpserver": ("<", 1.0),
    "http 32 clients customtools/mcpserver throughput": (">=", 1.0),
    "mounted/bare client": ("<=", 1.1),
    "http token/no token": ("<=", 1.05),
}


LABELS = {
    "stdio customtools/floor": "stdio: customtools / floor",
    "stdio customtools/mcpserver": "stdio: customtools / `MCPServer`",
    "http customtools/floor": "HTTP: customtools / floor",
    "http customtools/mcpserver": "HTTP: customtools / `MCPServer`",
    "http 32 clients customtools/mcpserver throughput": "HTTP, 32 clients: customtools /"
    " `MCPServer` calls per second",
    "mounted/bare client": "mounted call / bare SDK client call",
    "http token/no token": "HTTP: bearer token / no token",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument(
        "--auth-only", action="store_true", help="only HTTP with and without a bearer token"
    )
    parser.add_argument("--server", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.server:
        kind, transport, *rest = args.server
        port = int(rest[0]) if rest else 0
        {"floor": run_floor, "mcpserver": run_mcpserver}[kind](transport, port)
        raise SystemExit(0)
    results = anyio.run(measure_auth if args.auth_only else measure, args.calls, args.repeats)
    table = Table(
        ["case", "per call"],
        note=f"Best of {args.repeats} interleaved repeats of {args.calls} sequential calls.",
    )
    for name, value in results["us_per_call"].items():
        table.row(name.replace("/", ": "), f"{value:,.1f} µs")
    for kind, value in results["calls_per_s_32_clients"].items():
        table.row(f"HTTP, 32 clients: {kind} (calls per second)", f"{value:,}")
    for name, value in results["ratios"].items():
        op, target = TARGETS[name]
        ok = {"<=": value <= target, "<": value < target, ">=": value >= target}[op]
        sign = {"<=": "≤", "<": "<", ">=": "≥"}[op]
        table.target(f"{LABELS[name]} {sign} {target}×", ratio(value), ok)
    emit(table)


if __name__ == "__main__":
    run_main(main)
