"""``customtools serve`` as a real subprocess: stdio and streamable HTTP (stateful, stateless,
and two stateless processes behind a round-robin balancer)."""

from __future__ import annotations

import gc
import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp_helpers import (
    PACK,
    PNG,
    ROOT,
    child_env,
    http_server,
    http_servers,
    pid_gone,
    serve_argv,
    wait_until,
)

from customtools.mcp import DETAILS_META_KEY

pytestmark = pytest.mark.anyio

# The SDK's HTTP client leaves its SSE response generators to the garbage collector on trio
# (mcp 2.3.0 with httpx2): harmless, but pytest reports each as an unraisable exception.
# The marked tests collect that garbage before they end, so it is not reported in the next test.
CLIENT_GENERATORS_ON_TRIO = pytest.mark.filterwarnings(
    "ignore::pytest.PytestUnraisableExceptionWarning"
)


@pytest.fixture
def collect_garbage() -> Iterator[None]:
    yield
    gc.collect()


def era(anyio_backend: str) -> str:
    """Both eras and both backends, without the cross product: asyncio speaks the modern
    era, trio the handshake era (each subprocess test costs a server start)."""
    return "auto" if anyio_backend == "asyncio" else "legacy"


def stdio_params(*args: str) -> StdioServerParameters:
    argv = serve_argv(str(PACK), "--stdio", *args)
    return StdioServerParameters(command=argv[0], args=argv[1:], env=child_env(), cwd=str(ROOT))


async def exercise(client: Client) -> None:
    """The scenarios every transport must pass, on one connection."""
    listed = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert listed["echo"].input_schema["$defs"] == {"word": {"type": "string", "minLength": 1}}
    assert listed["echo"].title == "Echo"
    assert listed["echo"].meta == {"customtools/origin": "fixture"}

    ok = await client.call_tool("echo", {"text": "hi", "times": 2}, meta={"customtools/trace": "t"})
    assert ok.is_error is False
    assert ok.content[0].text == "hi hi"  # type: ignore[union-attr]
    assert ok.meta is not None
    assert ok.meta[DETAILS_META_KEY] == {"times": 2, "meta": {"customtools/trace": "t"}}

    bad = await client.call_tool("echo", {"times": 0, "bogus": 1})
    assert bad.is_error is True
    assert all(part in bad.content[0].text for part in ("text", "/times", "bogus"))  # type: ignore[union-attr]

    boom = await client.call_tool("boom", {})
    assert boom.is_error is True
    assert "RuntimeError" in boom.content[0].text  # type: ignore[union-attr]

    picture = await client.call_tool("picture", {})
    assert [block.type for block in picture.content] == ["image", "text"]
    assert picture.content[0].data == PNG  # type: ignore[union-attr]

    entered: list[float] = []

    async def progress(value: float, total: float | None, message: str | None) -> None:
        entered.append(value)

    done = await client.call_tool("steps", {"n": 3, "pause": 0.1}, progress_callback=progress)
    assert done.content[0].text == "done 3"  # type: ignore[union-attr]
    assert await wait_until(lambda: len(entered) == 3, limit=2)
    assert entered == sorted(entered)
    assert entered[-1] == 3


async def cancel_sleeper(client: Client, directory: Path) -> None:
    """Start the sleeper, cancel it after its first progress; the child must be gone."""
    started = anyio.Event()

    async def progress(value: float, total: float | None, message: str | None) -> None:
        started.set()

    async with anyio.create_task_group() as tg:

        async def call() -> None:
            await client.call_tool("sleeper", {"dir": str(directory)}, progress_callback=progress)

        tg.start_soon(call)
        with anyio.fail_after(15):
            await started.wait()
        tg.cancel_scope.cancel()
    assert await wait_until(lambda: (directory / "aborted").exists())
    assert (directory / "aborted").read_text() == "True"
    assert await wait_until(lambda: pid_gone(int((directory / "pid").read_text())))


async def test_stdio_serves_the_pack(anyio_backend: str, tmp_path: Path) -> None:
    mode = era(anyio_backend)
    errors: list[Any] = []

    async def on_message(message: Any) -> None:
        if isinstance(message, Exception):
            errors.append(message)

    log = tmp_path / "stderr.txt"
    with log.open("w") as errlog:
        transport = stdio_client(stdio_params(), errlog=errlog)
        async with Client(transport, mode=mode, message_handler=on_message) as client:
            await exercise(client)
            noisy = await client.call_tool("noisy", {})
            assert noisy.content[0].text == "quiet result"  # type: ignore[union-attr]
            await cancel_sleeper(client, tmp_path)
            after = await client.call_tool("echo", {"text": "again"})
            assert after.content[0].text == "again"  # type: ignore[union-attr]
    assert errors == []
    text = log.read_text()
    for line in ("noise-import", "noise-print", "noise-fd", "noise-child"):
        assert line in text
    assert "serving 6 tools" in text


async def test_stdio_client_leaving_mid_call_stops_the_tool_and_the_server(
    anyio_backend: str, tmp_path: Path
) -> None:
    started = anyio.Event()

    async def progress(value: float, total: float | None, message: str | None) -> None:
        started.set()

    mode = era(anyio_backend)
    async with Client(stdio_params(), mode=mode) as client, anyio.create_task_group() as tg:

        async def call() -> None:
            await client.call_tool("sleeper", {"dir": str(tmp_path)}, progress_callback=progress)

        tg.start_soon(call)
        with anyio.fail_after(15):
            await started.wait()
        tg.cancel_scope.cancel()  # leaves the client (closes the server's stdin) mid-call
    assert await wait_until(lambda: pid_gone(int((tmp_path / "pid").read_text())))
    assert await wait_until(lambda: pid_gone(int((tmp_path / "server").read_text())))
    assert (tmp_path / "aborted").read_text() == "True"


@CLIENT_GENERATORS_ON_TRIO
@pytest.mark.parametrize("stateless", [False, True], ids=["stateful", "stateless"])
@pytest.mark.usefixtures("collect_garbage")
async def test_streamable_http_serves_the_pack(stateless: bool, tmp_path: Path) -> None:
    extra = ("--stateless",) if stateless else ()
    async with http_server(str(PACK), *extra) as url:
        async with Client(url) as client:
            await exercise(client)
            await cancel_sleeper(client, tmp_path)
        if not stateless:  # stateless handshake-era sessions cannot cancel (see docs/mcp.md)
            legacy = tmp_path / "legacy"
            legacy.mkdir()
            async with Client(url, mode="legacy") as client:
                await exercise(client)
                await cancel_sleeper(client, legacy)


async def _balance(listener: Any, backends: list[int], counts: dict[int, int]) -> None:
    """A tiny TCP round-robin balancer: each connection goes to the next backend."""
    turn = itertools.cycle(backends)

    async def pipe(source: Any, sink: Any) -> None:
        try:
            async for chunk in source:
                await sink.send(chunk)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            pass
        finally:
            await sink.aclose()

    async def handle(client: Any) -> None:
        port = next(turn)
        counts[port] += 1
        async with (
            client,
            await anyio.connect_tcp("127.0.0.1", port) as upstream,
            anyio.create_task_group() as tg,
        ):
            tg.start_soon(pipe, client, upstream)
            tg.start_soon(pipe, upstream, client)

    await listener.serve(handle)


@CLIENT_GENERATORS_ON_TRIO
@pytest.mark.usefixtures("collect_garbage")
async def test_two_stateless_processes_behind_a_balancer_answer_every_call(
    tmp_path: Path,
) -> None:
    async with http_servers(2, str(PACK), "--stateless") as urls:
        ports = [int(url.rsplit(":", 1)[1].split("/")[0]) for url in urls]
        counts = dict.fromkeys(ports, 0)
        listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
        port = listener.extra(anyio.abc.SocketAttribute.local_port)
        url = f"http://127.0.0.1:{port}/mcp"
        answers: dict[str, list[str]] = {}

        async def one_client(index: int) -> None:
            async with Client(url) as client:
                for call in range(1):
                    token = f"c{index}x{call}"
                    result = await client.call_tool("echo", {"text": token})
                    answers.setdefault(token, []).append(result.content[0].text)  # type: ignore[union-attr]

        async with anyio.create_task_group() as tg:
            tg.start_soon(_balance, listener, ports, counts)
            with anyio.fail_after(40):
                async with anyio.create_task_group() as clients:
                    for index in range(32):
                        clients.start_soon(one_client, index)
            tg.cancel_scope.cancel()
    assert answers == {f"c{i}x0": [f"c{i}x0"] for i in range(32)}
    assert all(count > 0 for count in counts.values())
