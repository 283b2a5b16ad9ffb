"""Issue 16: one cancellation model (docs/cancellation.md); items 1-8 as regression tests.

Each test fails on the code before the model: the process trees, workers and threads it
checks survived, the calls it bounds hung, the responses it forbids were sent.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import pathlib
import signal
import subprocess
import sys
import threading
import time
from typing import Any

import anyio
import pytest
from _procs import pids_in_group

from customtools import (
    AbortController,
    CustomTool,
    CustomToolAdapter,
    _runtime,
    exec_command,
    load_custom_tools,
)
from customtools._runtime import CALLER_CANCELLED, abandoned_threads
from customtools.isolation import IsolationPool

pytestmark = pytest.mark.anyio

TREE = "trap '' TERM; sh -c 'sleep 60 & wait' & wait"  # a shell ignoring TERM, grandchildren


async def wait_until(predicate: Any, bound: float = 5.0) -> bool:
    deadline = time.monotonic() + bound
    while time.monotonic() < deadline:
        if predicate():
            return True
        await anyio.sleep(0.02)
    return bool(predicate())


# -- item 1: an exec tree whose shell ignores SIGTERM dies with its aborted call ------------------


async def test_item1_an_aborted_exec_tree_that_ignores_sigterm_is_killed() -> None:
    groups: list[int] = []

    async def execute(_id: str, _p: Any, _u: Any, _c: Any, signal: Any) -> str:
        async def note() -> None:
            await anyio.sleep(0.3)
            for entry in os.listdir("/proc"):  # the group of the sh we started
                if entry.isdigit():
                    try:
                        cmd = pathlib.Path(f"/proc/{entry}/cmdline").read_bytes()
                    except OSError:
                        continue
                    if TREE.encode() in cmd:
                        groups.append(os.getpgid(int(entry)))

        async with anyio.create_task_group() as tg:
            tg.start_soon(note)
            result = await exec_command("sh", ["-c", TREE], signal=signal)
        return f"killed={result.killed}"

    adapter = CustomToolAdapter(CustomTool(name="tree", execute=execute))  # the default grace
    controller = AbortController()
    with anyio.fail_after(15):
        async with anyio.create_task_group() as tg:

            async def abort() -> None:
                await anyio.sleep(0.5)
                controller.abort("stop")

            tg.start_soon(abort)
            result = await adapter.execute("c", {}, signal=controller.signal)
    assert result.is_error
    assert result.details["cancelled"] is True
    assert groups
    assert await wait_until(lambda: not any(pids_in_group(g) for g in groups))


# -- item 2: an isolated call past the DEFAULT grace kills and restarts its worker ----------------


async def test_item2_default_grace_kills_the_worker_and_the_next_call_works(
    tmp_path: pathlib.Path,
) -> None:
    mark = tmp_path / "STILL_RAN"
    (tmp_path / "stuck.py").write_text(
        "import time, pathlib\nfrom customtools import tool\n"
        "@tool\ndef stuck() -> str:\n    '''Ignores its signal.'''\n"
        f"    time.sleep(6); pathlib.Path({str(mark)!r}).write_text('ran'); return 'late'\n"
        "@tool\ndef ok() -> str:\n    '''Fine.'''\n    return 'fine'\n"
    )
    async with IsolationPool() as pool:  # the default grace (2 s): the review's H2
        loaded = await load_custom_tools([str(tmp_path / "stuck.py")], isolation=pool)
        first = pool.pids[0]
        with anyio.fail_after(20):
            result = await CustomToolAdapter(loaded.get("stuck").tool, timeout=0.2).execute("c", {})
            assert result.details["timed_out"] is True
            assert not pathlib.Path(f"/proc/{first}").exists() or not pids_in_group(first)
            again = await CustomToolAdapter(loaded.get("ok").tool, timeout=10).execute("c", {})
        assert again.text == "fine"
        assert pool.pids
        assert pool.pids[0] != first
    await anyio.sleep(0.1)
    assert not mark.exists()


# -- item 3: a tool swallowing cancellation returns at deadline + grace ---------------------------


async def test_item3_a_tool_swallowing_everything_returns_at_deadline_plus_grace() -> None:
    finished: list[bool] = []

    async def execute(*_: Any) -> str:
        started = time.monotonic()
        while time.monotonic() - started < 20:  # bounded, for the test
            with contextlib.suppress(BaseException):  # the misbehaviour under test
                await anyio.sleep(0.05)
        finished.append(True)
        return "late"

    adapter = CustomToolAdapter(CustomTool(name="swallow", execute=execute))  # default grace
    with anyio.fail_after(10):  # before the fix: 20 s, the tool's own end
        result = await adapter.execute("c", {}, timeout=0.3)
    assert result.details["timed_out"] is True
    assert not finished


# -- item 4: one tool's abandoned threads never refuse another tool -------------------------------


async def test_item4_a_saturated_sync_tool_leaves_other_sync_tools_running(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_runtime, "MAX_ABANDONED_THREADS", 4)
    release = threading.Event()

    def stuck(*_: Any) -> str:
        release.wait(20)  # ignores its signal
        return "finally"

    def quick(*_: Any) -> str:
        return "quick"

    bad = CustomToolAdapter(CustomTool(name="bad", execute=stuck))
    good = CustomToolAdapter(CustomTool(name="good", execute=quick))
    results: list[Any] = []

    async def one() -> None:
        results.append(await bad.execute("c", {}, timeout=0.01))

    try:
        with anyio.fail_after(20):
            # A call whose 0.01 s deadline passes before a thread picks it up never runs the
            # tool (a loaded machine): calls are made until the cap is reached.
            while abandoned_threads("bad") < 4:
                async with anyio.create_task_group() as tg:
                    for _ in range(6):
                        tg.start_soon(one)
            assert all(r.details["timed_out"] for r in results)
            refused = await bad.execute("c", {})
            other = await good.execute("c", {})
    finally:
        release.set()
    assert other.text == "quick"  # before: refused too, by bad's threads
    assert refused.details["code"] == "thread-limit"
    assert refused.details["tool"] == "bad"
    assert "tool 'bad' was not started" in refused.text
    with anyio.fail_after(10):
        while abandoned_threads("bad"):
            await anyio.sleep(0.01)


# -- item 5: the caller's task cancelled aborts a sync tool's signal ------------------------------


async def test_item5_cancelling_the_callers_task_aborts_a_sync_tools_signal() -> None:
    seen: dict[str, Any] = {}
    started = threading.Event()

    def execute(_id: str, _p: Any, _u: Any, _c: Any, signal: Any) -> str:
        started.set()
        for _ in range(200):
            if signal.aborted:
                seen["reason"] = signal.reason
                return "stopped"
            time.sleep(0.01)
        seen["ran"] = True
        return "done"

    adapter = CustomToolAdapter(CustomTool(name="slow_sync", execute=execute))
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            tg.start_soon(adapter.execute, "c", {})  # no signal: what frameworks do
            await anyio.to_thread.run_sync(started.wait, 5)
            tg.cancel_scope.cancel()
    assert seen == {"reason": CALLER_CANCELLED}


# -- item 6: an isolated sync tool that needs approval runs after approval ------------------------


async def test_item6_isolated_sync_tool_needing_approval_answers(tmp_path: pathlib.Path) -> None:
    (tmp_path / "appr.py").write_text(
        "from customtools import tool\n"
        "@tool(annotations={'destructiveHint': True})\n"
        "def destroy(path: str) -> str:\n    '''Delete something.'''\n"
        "    return 'deleted ' + path\n"
    )
    asked: list[str] = []

    async def approver(request: Any) -> bool:
        asked.append(request.tool.name)
        return True

    async with IsolationPool(grace=0.3) as pool:
        loaded = await load_custom_tools([str(tmp_path / "appr.py")], isolation=pool)
        adapter = CustomToolAdapter(loaded.get("destroy").tool, approver=approver)
        with anyio.fail_after(15):
            result = await adapter.execute("c", {"path": "x"})
    assert result.text == "deleted x"
    assert asked == ["destroy"]


# -- item 7: signal handlers a module changes are restored and reported ---------------------------


async def test_item7_a_module_changing_signal_handlers_is_restored_and_reported(
    tmp_path: pathlib.Path,
) -> None:
    (tmp_path / "sigmod.py").write_text(
        "import signal\nfrom customtools import tool\n"
        "signal.signal(signal.SIGINT, signal.SIG_IGN)\n"
        "@tool\ndef hello() -> str:\n    '''Hi.'''\n    return 'hi'\n"
    )
    before = signal.getsignal(signal.SIGINT)
    result = await load_custom_tools([str(tmp_path / "sigmod.py")])
    assert signal.getsignal(signal.SIGINT) is before
    assert [e.code for e in result.errors] == ["changed-process-state"]
    assert "signal handlers (SIGINT" in result.errors[0].error


# -- item 8: serve --stdio writes nothing after the client's input closed -------------------------


def test_item8_stdio_sends_nothing_for_an_in_flight_call_after_stdin_closed(
    tmp_path: pathlib.Path,
) -> None:
    (tmp_path / "slow.py").write_text(
        "import anyio\nfrom customtools import tool\n"
        "@tool\nasync def slow() -> str:\n    '''Sleeps.'''\n"
        "    await anyio.sleep(5)\n    return 'done'\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "customtools", "serve", "--stdio", str(tmp_path / "slow.py")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        cwd=tmp_path,
    )
    assert proc.stdin is not None
    assert proc.stdout is not None
    try:

        def send(message: dict[str, Any]) -> None:
            assert proc.stdin is not None
            proc.stdin.write((json.dumps(message) + "\n").encode())
            proc.stdin.flush()

        send(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "t", "version": "1"},
                },
            }
        )
        assert b'"id":1' in proc.stdout.readline()
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "slow"}})
        time.sleep(0.5)  # the call is in flight
        proc.stdin.close()
        rest = proc.stdout.read()
        proc.wait(20)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(5)
        proc.stdout.close()
        if not proc.stdin.closed:
            proc.stdin.close()
    assert rest == b""


async def test_item5_cancelling_the_callers_task_aborts_an_async_tools_signal_too() -> None:
    # With a host signal the call is guarded: the caller's cancellation fires the tool's
    # signal (the host's own signal is not aborted: it is the host's).
    seen: list[Any] = []
    host = AbortController()

    async def execute(_id: str, _p: Any, _u: Any, _c: Any, signal: Any) -> str:
        try:
            await anyio.sleep(30)
        finally:
            seen.append(signal.reason)
        return "late"

    adapter = CustomToolAdapter(CustomTool(name="slow_async", execute=execute))
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            tg.start_soon(lambda: adapter.execute("c", {}, signal=host.signal))
            await anyio.sleep(0.1)
            tg.cancel_scope.cancel()
    assert seen == [CALLER_CANCELLED]
    assert not host.signal.aborted


async def test_item5_under_isolation_the_callers_cancellation_reaches_the_worker(
    tmp_path: pathlib.Path,
) -> None:
    seen = tmp_path / "seen.txt"
    (tmp_path / "polls.py").write_text(
        "import time, pathlib\nfrom customtools import tool, AbortSignal\n"
        "@tool\ndef polls(signal: AbortSignal) -> str:\n    '''Polls its signal.'''\n"
        "    for _ in range(2000):\n"
        "        if signal.aborted:\n"
        f"            pathlib.Path({str(seen)!r}).write_text(str(signal.reason))\n"
        "            return 'stopped'\n"
        "        time.sleep(0.005)\n"
        "    return 'ran to the end'\n"
    )
    async with IsolationPool() as pool:
        loaded = await load_custom_tools([str(tmp_path / "polls.py")], isolation=pool)
        adapter = CustomToolAdapter(loaded.get("polls").tool)
        with anyio.fail_after(15):
            async with anyio.create_task_group() as tg:
                tg.start_soon(adapter.execute, "c", {})  # no signal: what frameworks do
                await anyio.sleep(0.5)
                tg.cancel_scope.cancel()
            assert await wait_until(seen.exists)
            assert seen.read_text() == CALLER_CANCELLED


async def test_item2_a_desynchronised_worker_is_killed_and_the_module_recovers(
    tmp_path: pathlib.Path,
) -> None:
    # The review's second H2 symptom: a tool writes half a frame on the protocol pipe; the
    # host then waits for the rest, the call times out, and only the kill past the (default)
    # grace brings the module back.
    (tmp_path / "desync.py").write_text(
        "import gc, os\nfrom customtools import tool\n"
        "from customtools._isolation._wire import Channel\n"
        "@tool\ndef desync() -> str:\n    '''Corrupts its channel.'''\n"
        "    channel = next(o for o in gc.get_objects() if type(o) is Channel)\n"
        "    os.write(channel._write_fd, (1000).to_bytes(4, 'big') + b'{\"op\":')\n"
        "    return 'never seen'\n"
        "@tool\ndef ok() -> str:\n    '''Fine.'''\n    return 'fine'\n"
    )
    async with IsolationPool() as pool:
        loaded = await load_custom_tools([str(tmp_path / "desync.py")], isolation=pool)
        with anyio.fail_after(20):
            broken = await CustomToolAdapter(loaded.get("desync").tool, timeout=0.3).execute(
                "c", {}
            )
            again = await CustomToolAdapter(loaded.get("ok").tool, timeout=5).execute("c", {})
    assert broken.is_error
    assert again.text == "fine"


async def _forever() -> None:
    await anyio.sleep_forever()


async def _ticking() -> None:
    # Resumes every millisecond: the caller's cancellation arrives right after a resumption.
    while True:
        await anyio.sleep(0.001)


@pytest.mark.parametrize("body", [_forever, _ticking], ids=["sleeps", "ticks"])
async def test_an_async_tools_cleanup_sees_its_signal_aborted_by_the_callers_cancel(
    body: Any,
) -> None:
    seen: list[tuple[bool, Any]] = []
    started = anyio.Event()

    async def execute(call_id: str, params: Any, on_update: Any, ctx: Any, signal: Any) -> str:
        started.set()
        try:
            await body()
        finally:
            seen.append((signal.aborted, signal.reason))
        return "never"

    adapter = CustomToolAdapter(CustomTool(name="waits", description="d", execute=execute))
    for _ in range(5):
        started = anyio.Event()
        with anyio.fail_after(10):
            async with anyio.create_task_group() as group:
                call = functools.partial(adapter.execute, "c", {}, signal=AbortController().signal)
                group.start_soon(call)
                await started.wait()
                await anyio.sleep(0.02)
                group.cancel_scope.cancel()
    assert seen == [(True, CALLER_CANCELLED)] * 5
