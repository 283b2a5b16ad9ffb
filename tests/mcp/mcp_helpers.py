"""Shared by the MCP tests: the fixture pack, process checks, free ports, subprocess servers."""

from __future__ import annotations

import os
import re
import socket
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
from zygote import python_argv

ROOT = Path(__file__).resolve().parents[2]
PACK = Path(__file__).resolve().parent / "pack"
EXAMPLES = ROOT / "examples" / "tools"
PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGA"
    "WjR9awAAAABJRU5ErkJggg=="
)


async def load_pack(*paths: Path) -> Any:
    from customtools import load_custom_tools

    result = await load_custom_tools([str(p) for p in (paths or (PACK,))], str(ROOT))
    assert not result.errors, [e.error for e in result.errors]
    return result


def pid_gone(pid: int) -> bool:
    """True when ``pid`` no longer runs (gone, or a zombie: dead and not ours to reap)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1]
    except (OSError, IndexError):
        return True
    return state.startswith("Z")


async def wait_until(predicate: Any, limit: float = 10.0) -> bool:
    """Poll ``predicate`` every 10 ms for at most ``limit`` seconds; its last value."""
    with anyio.move_on_after(limit):
        while not predicate():
            await anyio.sleep(0.01)
    return bool(predicate())


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def child_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k in ("HOME", "PATH", "LANG", "TMPDIR")}
    env["PYTHONPATH"] = str(ROOT)
    return env


def serve_argv(*args: str) -> list[str]:
    """The command of a ``customtools serve`` process (forked from the test suite's zygote:
    see ``tests/zygote.py``)."""
    return python_argv("-m", "customtools", "serve", "--no-entry-points", *args)


@asynccontextmanager
async def http_server(
    *args: str,
    host: str = "127.0.0.1",
    env: dict[str, str] | None = None,
    max_files: tuple[int, int] | None = None,
) -> AsyncIterator[str]:
    """A ``customtools serve --http`` subprocess on loopback; yields its URL. ``max_files``:
    the soft and hard open-file limits it starts with."""
    async with http_servers(1, *args, host=host, env=env, max_files=max_files) as urls:
        yield urls[0]


@asynccontextmanager
async def http_servers(
    count: int,
    *args: str,
    host: str = "127.0.0.1",
    env: dict[str, str] | None = None,
    max_files: tuple[int, int] | None = None,
) -> AsyncIterator[list[str]]:
    """``count`` ``customtools serve --http`` subprocesses started together, each on a port the
    system gives it (``HOST:0``: no port is picked before the server binds it, so parallel
    tests cannot take each other's); yields the URLs they report on stderr. Stopped (SIGTERM,
    then SIGKILL) on exit, whatever happened."""
    processes: list[Any] = []
    argv = serve_argv(*args, "--http", f"{host}:0")
    if max_files is not None:  # set in the server's own process, then ``-m customtools``
        limit = (
            "import resource, runpy;"
            f" resource.setrlimit(resource.RLIMIT_NOFILE, {max_files});"
            " runpy.run_module('customtools', run_name='__main__', alter_sys=True)"
        )
        argv = python_argv("-c", limit, *argv[argv.index("customtools") + 1 :])
    with tempfile.TemporaryDirectory() as logs:
        try:
            for index in range(count):
                with open(os.path.join(logs, str(index)), "wb") as log:
                    processes.append(
                        await anyio.open_process(
                            argv,
                            stdin=None,
                            stdout=None,
                            stderr=log,
                            cwd=str(ROOT),
                            env={**child_env(), **(env or {})},
                        )
                    )
            urls = []
            with anyio.fail_after(30):
                for index, process in enumerate(processes):
                    urls.append(await _listening(Path(logs, str(index)), process))
            yield urls
        finally:
            await stop_processes(processes)


async def _listening(log: Path, process: Any) -> str:
    """The URL in the server's "listening on" line, once it has written it to ``log``."""
    while True:
        found = re.search(r"listening on (\S+)", log.read_text(errors="replace"))
        if found:
            return found.group(1)
        if process.returncode is not None:
            raise RuntimeError(f"the server exited with {process.returncode}: {log.read_text()}")
        await anyio.sleep(0.05)


async def stop_processes(processes: list[Any]) -> None:
    """Terminate ``processes``, kill any still running after 5 s, and reap them (shielded)."""
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
