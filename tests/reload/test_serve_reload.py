"""``customtools dev`` (serve with reload) against the real MCP client over stdio: edits, new,
deleted and broken tools while a call is in flight; the client hears list-changed."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")
pytest.importorskip("watchfiles")

from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp_types import ToolListChangedNotification
from zygote import python_argv

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parents[2]

SLOW = """
import os, anyio
from customtools import CustomTool

HERE = os.path.dirname(os.path.abspath(__file__))

def factory(api):
    async def slow(call_id, params, on_update, ctx, signal):
        open(os.path.join(HERE, "..", "started"), "w").close()
        with anyio.fail_after(20):
            while not os.path.exists(os.path.join(HERE, "..", "go")):
                await anyio.sleep(0.01)
        return VERSION
    return CustomTool(name="slow", description="waits for go", execute=slow)
"""


def slow_source(version: str) -> str:
    return f"VERSION = {version!r}\n" + SLOW


def echo_source(name: str, text: str) -> str:
    return (
        "from customtools import CustomTool\n"
        "def factory(api):\n"
        f"    return CustomTool(name={name!r}, description='d', execute=lambda *a: {text!r})\n"
    )


class Heard:
    """Counts list-changed notifications; waits for the next one, bounded."""

    def __init__(self) -> None:
        self.count = 0
        self._event = anyio.Event()

    async def __call__(self, message: Any) -> None:
        if isinstance(message, ToolListChangedNotification):
            self.count += 1
            self._event.set()

    async def next_after(self, seen: int, limit: float = 15) -> None:
        with anyio.fail_after(limit):
            while self.count <= seen:
                self._event = anyio.Event()
                if self.count > seen:
                    break
                await self._event.wait()


async def names(client: Client) -> list[str]:
    return sorted(tool.name for tool in (await client.list_tools()).tools)


async def text(client: Client, name: str) -> str:
    result = await client.call_tool(name, {})
    return str(result.content[0].text)  # type: ignore[union-attr]


async def wait_for_file(path: Path, limit: float = 15) -> None:
    with anyio.fail_after(limit):
        while not path.exists():
            await anyio.sleep(0.01)


async def test_dev_reloads_while_a_client_is_connected(anyio_backend: str, tmp_path: Path) -> None:
    tools = tmp_path / "tools"
    tools.mkdir()
    (tools / "slow.py").write_text(slow_source("v1"))
    (tools / "echo.py").write_text(echo_source("echo", "e1"))
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "TMPDIR")}
    env.update(HOME=str(home), PYTHONPATH=str(ROOT))
    command, *argv = python_argv("-m", "customtools", "dev", "--no-entry-points", str(tools))
    params = StdioServerParameters(
        command=command,
        args=argv,
        env=env,
        cwd=str(tmp_path),
    )
    heard = Heard()
    log = tmp_path / "stderr.txt"
    with anyio.fail_after(90), log.open("w") as errlog:
        async with Client(
            stdio_client(params, errlog=errlog), mode="legacy", message_handler=heard
        ) as client:
            assert await names(client) == ["echo", "slow"]
            in_flight: list[str] = []

            async def call_slow() -> None:
                in_flight.append(await text(client, "slow"))

            async with anyio.create_task_group() as group:
                group.start_soon(call_slow)
                await wait_for_file(tmp_path / "started")
                # Edit both tools while the slow call runs.
                seen = heard.count
                (tools / "slow.py").write_text(slow_source("v2"))
                (tools / "echo.py").write_text(echo_source("echo", "e2"))
                await heard.next_after(seen)
                (tmp_path / "go").touch()
            assert in_flight == ["v1"]  # finished on the version it started with
            assert await text(client, "slow") == "v2"
            if await text(client, "echo") != "e2":  # the two edits may land in two reloads
                await heard.next_after(heard.count - 1)
                assert await text(client, "echo") == "e2"

            seen = heard.count
            (tools / "added.py").write_text(echo_source("added", "new"))
            await heard.next_after(seen)
            assert await names(client) == ["added", "echo", "slow"]
            assert await text(client, "added") == "new"

            seen = heard.count
            (tools / "echo.py").unlink()
            await heard.next_after(seen)
            assert await names(client) == ["added", "slow"]

            seen = heard.count
            (tools / "slow.py").write_text("def factory(:\n")
            await heard.next_after(seen)
            assert await names(client) == ["added", "slow"]
            assert await text(client, "slow") == "v2"  # the last good version still serves
    logged = log.read_text()
    assert "customtools dev: loaded 2 tools" in logged
    assert "customtools dev: reloaded: added added" in logged
    assert "customtools dev: reloaded: removed echo" in logged
    assert "slow.py failed to reload; its previous version is still served" in logged
    assert "customtools dev: call slow [" in logged
    assert " ok in " in logged


async def test_modern_clients_hear_a_reload_on_their_listen_stream(
    anyio_backend: str, tmp_path: Path
) -> None:
    # The 2026-07-28 era has no notifications outside a `subscriptions/listen` stream.
    from customtools.loading import Reloader
    from customtools.mcp import ToolServer

    tools = tmp_path / "tools"
    tools.mkdir()
    (tools / "echo.py").write_text(echo_source("echo", "e1"))
    reloader = Reloader([tools], tmp_path, explicit=True)
    server = ToolServer([loaded.tool for loaded in (await reloader.load()).tools])

    async def follow() -> None:
        async for result in reloader.watch():
            await server.set_tools([loaded.tool for loaded in result.tools])

    with anyio.fail_after(30):
        async with Client(server.server, mode="auto") as client, anyio.create_task_group() as tg:
            tg.start_soon(follow)
            async with client.listen(tools_list_changed=True) as events:
                await anyio.sleep(0.3)  # the watcher is up
                (tools / "added.py").write_text(echo_source("added", "new"))
                async for _event in events:
                    if "added" in await names(client):
                        break
            assert await text(client, "added") == "new"
            tg.cancel_scope.cancel()
    reloader.close()


def peek_source(version: str) -> str:
    # Reads a file outside the project: the sandbox (default permissions) denies it.
    return (
        "from customtools import tool\n"
        "@tool\n"
        "def peek(path: str) -> str:\n"
        "    '''Read a file.'''\n"
        "    try:\n"
        "        with open(path) as handle:\n"
        f"            return {version!r} + ':' + handle.read()\n"
        "    except OSError:\n"
        f"        return {version!r} + ':denied'\n"
    )


@pytest.mark.skipif(sys.platform != "linux", reason="the sandbox (Landlock) is Linux only")
async def test_serve_reload_sandbox_serves_edits_from_confined_workers_and_asks_trust_again(
    anyio_backend: str, tmp_path: Path
) -> None:
    from customtools import discover_and_load
    from customtools.loading import TrustStore

    secret = tmp_path / "secret.txt"
    secret.write_text("SECRET")
    project, home, tools = tmp_path / "project", tmp_path / "home", tmp_path / "tools"
    own = project / ".customtools" / "tools"
    own.mkdir(parents=True)
    home.mkdir()
    tools.mkdir()
    (tools / "peek.py").write_text(peek_source("v1"))
    (own / "mine.py").write_text(echo_source("mine", "m1"))
    found = await discover_and_load((), project, home=home, entry_points=False)
    TrustStore(home=home).grant(found.pending_trust[0])  # the user trusts the project tools
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "TMPDIR")}
    env.update(HOME=str(home), PYTHONPATH=str(ROOT))
    command, *argv = python_argv(
        "-m", "customtools", "serve", "--reload", "--sandbox", "--no-entry-points", str(tools)
    )
    params = StdioServerParameters(
        command=command,
        args=argv,
        env=env,
        cwd=str(project),
    )
    heard = Heard()
    log = tmp_path / "stderr.txt"
    with anyio.fail_after(120), log.open("w") as errlog:
        async with Client(
            stdio_client(params, errlog=errlog), mode="legacy", message_handler=heard
        ) as client:
            assert await names(client) == ["mine", "peek"]
            peek = await client.call_tool("peek", {"path": str(secret)})
            assert peek.content[0].text == "v1:denied"  # type: ignore[union-attr]

            seen = heard.count
            (tools / "peek.py").write_text(peek_source("v2"))
            await heard.next_after(seen)
            peek = await client.call_tool("peek", {"path": str(secret)})
            assert peek.content[0].text == "v2:denied"  # type: ignore[union-attr]
            assert await text(client, "mine") == "m1"

            seen = heard.count
            (own / "mine.py").write_text(echo_source("mine", "m2"))
            await heard.next_after(seen)
            assert await names(client) == ["peek"]  # edited project code: pending trust again
    logged = log.read_text()
    assert "Traceback" not in logged
    assert "project tool source(s) are not trusted" in logged
