"""The cancellation soak: nothing a cancelled call started survives it.

On each backend: 100 aborted ``exec`` trees three levels deep (two levels ignoring SIGTERM),
100 aborted pure-Python calls, 50 isolated calls with the DEFAULT grace (a sync tool ignoring
its signal with a child process, an async tool blocking its loop), 50 calls whose caller's
task is cancelled. Then: no process of ours survives, no child is a zombie, the descriptor
count is back within +5, and every call said why it ended. Calls run concurrently and every
wait is bounded, so the soak takes seconds, not minutes.
"""

from __future__ import annotations

import contextlib
import os
import pathlib
import threading
import time
import uuid
from typing import Any

import anyio
import pytest
from _procs import processes_with, zombie_children

from customtools import (
    AbortController,
    CustomTool,
    CustomToolAdapter,
    exec_command,
    load_custom_tools,
)
from customtools._runtime import CALLER_CANCELLED, abandoned_threads
from customtools.isolation import IsolationPool

pytestmark = pytest.mark.anyio

GRACE = 0.2  # the in-process calls' grace; the isolated ones use the default


def fd_count() -> int:
    return len(os.listdir("/proc/self/fd"))


async def settle(predicate: Any, bound: float = 10.0) -> bool:
    deadline = time.monotonic() + bound
    while time.monotonic() < deadline:
        if predicate():
            return True
        await anyio.sleep(0.05)
    return bool(predicate())


async def aborted_after(
    adapter: CustomToolAdapter, delay: float, results: list[Any], **options: Any
) -> None:
    controller = AbortController()
    async with anyio.create_task_group() as tg:

        async def abort() -> None:
            await anyio.sleep(delay)
            controller.abort("soak")

        tg.start_soon(abort)
        results.append(await adapter.execute("c", {}, signal=controller.signal, **options))


async def exec_trees(token: str) -> list[Any]:
    # level 1: sh; level 2: sh ignoring TERM; level 3: sleep (inherits the ignore)
    tree = f"sh -c \"trap '' TERM; sleep {token} & wait\" & wait"

    async def execute(_id: str, _p: Any, _u: Any, _c: Any, signal: Any) -> str:
        result = await exec_command("sh", ["-c", tree], signal=signal)
        return f"killed={result.killed}"

    adapter = CustomToolAdapter(CustomTool(name="tree", execute=execute), grace=GRACE)
    results: list[Any] = []
    for _ in range(4):
        async with anyio.create_task_group() as tg:
            for _ in range(25):
                tg.start_soon(aborted_after, adapter, 0.3, results)
    return results


async def python_calls() -> list[Any]:
    async def cooperative(*_: Any) -> str:
        await anyio.sleep(30)
        return "late"

    async def swallowing(*_: Any) -> str:
        cancelled = anyio.get_cancelled_exc_class()
        started = time.monotonic()
        while time.monotonic() - started < 30:
            with contextlib.suppress(cancelled):
                await anyio.sleep(0.02)
        return "late"

    def sync_polling(_id: str, _p: Any, _u: Any, _c: Any, signal: Any) -> str:
        started = time.monotonic()
        while not signal.aborted and time.monotonic() - started < 30:
            time.sleep(0.01)
        return "late"

    adapters = [
        CustomToolAdapter(CustomTool(name=name, execute=execute), grace=GRACE)
        for name, execute in (
            ("cooperative", cooperative),
            ("swallowing", swallowing),
            ("sync_polling", sync_polling),
        )
    ]
    results: list[Any] = []
    async with anyio.create_task_group() as tg:
        for index in range(100):
            tg.start_soon(aborted_after, adapters[index % 3], 0.1, results)
    return results


SYNC_MODULE = '''
import subprocess, time
from customtools import tool

@tool
def stubborn_sync() -> str:
    """Starts a child, then ignores its signal."""
    subprocess.Popen(["sleep", "{token}"])
    time.sleep(30)
    return "late"
'''

ASYNC_MODULE = '''
import time
from customtools import tool

@tool
async def blocking_async() -> str:
    """Blocks its worker's event loop."""
    time.sleep(30)
    return "late"
'''


async def isolated_calls(tmp_path: pathlib.Path, token: str) -> list[Any]:
    results: list[Any] = []
    (tmp_path / "sync_mod.py").write_text(SYNC_MODULE.replace("{token}", token))
    (tmp_path / "async_mod.py").write_text(ASYNC_MODULE)
    async with IsolationPool() as pool:  # the default grace
        loaded = await load_custom_tools(
            [str(tmp_path / "sync_mod.py"), str(tmp_path / "async_mod.py")], isolation=pool
        )
        adapters = [
            CustomToolAdapter(loaded.get("stubborn_sync").tool),
            CustomToolAdapter(loaded.get("blocking_async").tool),
        ]
        workers = pool.pids

        async def one(adapter: CustomToolAdapter) -> None:
            results.append(await adapter.execute("c", {}, timeout=0.3))

        async with anyio.create_task_group() as tg:
            for index in range(50):
                tg.start_soon(one, adapters[index % 2])
        assert await settle(lambda: not any(os.path.exists(f"/proc/{p}") for p in workers))
    return results


async def caller_cancelled_calls() -> list[str]:
    reasons: list[str] = []
    started = threading.Semaphore(0)

    def sync_tool(_id: str, _p: Any, _u: Any, _c: Any, signal: Any) -> str:
        started.release()
        deadline = time.monotonic() + 30
        while not signal.aborted and time.monotonic() < deadline:
            time.sleep(0.01)
        reasons.append(signal.reason)
        return "late"

    async def async_tool(*_: Any) -> str:
        try:
            await anyio.sleep(30)
        finally:
            reasons.append("async cancelled")
        return "late"

    adapters = [
        CustomToolAdapter(CustomTool(name="soak_sync", execute=sync_tool), grace=GRACE),
        CustomToolAdapter(CustomTool(name="soak_async", execute=async_tool), grace=GRACE),
    ]
    async with anyio.create_task_group() as tg:
        for index in range(50):
            tg.start_soon(adapters[index % 2].execute, "c", {})
        await anyio.sleep(0.3)
        tg.cancel_scope.cancel()
    assert await settle(lambda: abandoned_threads("soak_sync") == 0)
    return reasons


async def test_cancellation_soak_leaves_nothing_behind(tmp_path: pathlib.Path) -> None:
    # A sleep duration no other process uses: it marks every process the soak starts.
    token = f"29.{uuid.uuid4().int % 10**12:012d}"
    fds = fd_count()
    with anyio.fail_after(120):
        trees = await exec_trees(token)
        python = await python_calls()
        isolated = await isolated_calls(tmp_path, token)
        reasons = await caller_cancelled_calls()
        assert await settle(lambda: not processes_with(token))
        assert await settle(lambda: not zombie_children())
        assert await settle(lambda: fd_count() <= fds + 5)

    assert len(trees) == 100
    assert all(r.is_error and r.details["code"] == "aborted" for r in trees), trees[:3]
    assert len(python) == 100
    assert all(r.is_error and r.details["code"] == "aborted" for r in python), python[:3]
    assert all("soak" in r.text for r in python)
    assert len(isolated) == 50
    assert all(r.is_error and r.details["timed_out"] is True for r in isolated), isolated[:3]
    assert len(reasons) == 50
    assert reasons.count(CALLER_CANCELLED) == 25
    assert reasons.count("async cancelled") == 25
