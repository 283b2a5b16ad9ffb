"""Isolated tools survive what Python cannot contain in-process: every case on asyncio and trio.

Each test checks that the host survives, that every call ends with a result naming the module
and the exit cause, and that no worker process is left behind.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

import anyio
import pytest

from customtools import AbortController, CustomToolAdapter
from customtools._isolation._pool import IsolationPool

from ._helpers import alive, load, options, write

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(os.name != "posix", reason="process isolation needs POSIX"),
]

# How a worker ended reads the same in validate (tests/isolation/test_process.py).
OS_EXIT = "(without an exception: os._exit(), or a C extension ended it)"
SEGFAULT = "(the Python interpreter crashed, in the module or a C extension it uses)"

MARK = """
def mark(params):
    with open(params["file"], "a") as handle:
        handle.write(f"{os.getpid()}\\n")
"""


async def test_exit_and_segfault_at_import_are_load_errors_and_siblings_load(
    tmp_path: Path,
) -> None:
    write(tmp_path, "quits.py", "os._exit(3)\n")
    write(tmp_path, "segv.py", "import ctypes\nctypes.string_at(0)\n")
    write(
        tmp_path,
        "good.py",
        """
        def factory(api):
            return CustomTool(name="good", execute=lambda *a: "fine")
        """,
    )
    async with IsolationPool(**options()) as pool:
        result = await load(pool, tmp_path, "quits.py", "segv.py", "good.py")
        assert result.tool_names == ("good",)
        by_path = {Path(error.path).name: error for error in result.errors}
        assert by_path["quits.py"].code == "worker-crashed"
        assert "quits.py exited with status 3" in by_path["quits.py"].error
        assert by_path["segv.py"].code == "worker-crashed"
        assert "was killed by SIGSEGV" in by_path["segv.py"].error
        assert len(pool.pids) == 1  # only the module that loaded keeps a worker
        pids = pool.pids
        outcome = await CustomToolAdapter(result.tools[0].tool).execute("c", {})
        assert outcome.text == "fine"
    assert not any(alive(pid) for pid in pids)


async def test_endless_loop_at_import_hits_the_load_timeout(tmp_path: Path) -> None:
    write(tmp_path, "spins.py", "while True:\n    pass\n")
    async with IsolationPool(**options()) as pool:
        result = await load(pool, tmp_path, "spins.py", load_timeout=0.5)
        assert result.tools == ()
        (error,) = result.errors
        assert error.code == "timeout"
        assert "spins.py did not finish importing the module within 1.5 s" in error.error
        assert "load_timeout" in error.error
        assert pool.pids == ()


TOOLS = (
    MARK
    + """
def factory(api):
    def exits(call_id, params, on_update, ctx, signal):
        mark(params)
        os._exit(7)

    def segv(call_id, params, on_update, ctx, signal):
        import ctypes
        mark(params)
        ctypes.string_at(0)

    async def waits(call_id, params, on_update, ctx, signal):
        import anyio
        mark(params)
        await anyio.sleep(30)
        return "slept"

    def pid(call_id, params, on_update, ctx, signal):
        return str(os.getpid())

    schema = Type.Object({"file": Type.String()})
    return [
        CustomTool(name="exits", execute=exits, parameters=schema),
        CustomTool(name="segv", execute=segv, parameters=schema),
        CustomTool(name="waits", execute=waits, parameters=schema),
        CustomTool(name="pid", execute=pid),
    ]
"""
)


async def test_exit_segfault_and_outside_kill_during_calls_restart_the_worker(
    tmp_path: Path,
) -> None:
    write(tmp_path, "tools.py", TOOLS)
    marks = tmp_path / "marks.txt"
    async with IsolationPool(**options()) as pool:
        result = await load(pool, tmp_path, "tools.py")
        adapters = {t.tool.name: CustomToolAdapter(t.tool) for t in result.tools}
        seen = []

        exited = await adapters["exits"].execute("1", {"file": str(marks)})
        assert exited.is_error
        assert f"tools.py exited with status 7 {OS_EXIT} during the call" in exited.text
        assert "restarted for the next call" in exited.text
        assert exited.details["cause"] == f"exited with status 7 {OS_EXIT}"

        crashed = await adapters["segv"].execute("2", {"file": str(marks)})
        assert crashed.is_error
        assert f"tools.py was killed by SIGSEGV {SEGFAULT} during the call" in crashed.text

        async def kill_when_marked() -> None:
            with anyio.fail_after(20):
                while len(marks.read_text().split()) < 3:
                    await anyio.sleep(0.01)
            os.kill(int(marks.read_text().split()[2]), signal.SIGKILL)

        async with anyio.create_task_group() as group:
            group.start_soon(kill_when_marked)
            killed = await adapters["waits"].execute("3", {"file": str(marks)})
        assert killed.is_error
        assert "was killed by SIGKILL during the call" in killed.text

        after = await adapters["pid"].execute("4", {})
        assert not after.is_error
        seen = [int(pid) for pid in marks.read_text().split()] + [int(after.text)]
        assert len(set(seen)) == 4  # every restart is a new worker, more than once
        assert os.getpid() not in seen
        assert pool.pids == (int(after.text),)
    assert not any(alive(pid) for pid in seen)


async def test_a_worker_that_crashes_every_time_is_reported_dead(tmp_path: Path) -> None:
    write(
        tmp_path,
        "flaky.py",
        """
        def factory(api):
            def always(call_id, params, on_update, ctx, signal):
                mark(params)
                os._exit(9)
            return CustomTool(name="always", execute=always,
                              parameters=Type.Object({"file": Type.String()}))
        """,
        prelude=MARK,
    )
    marks = tmp_path / "marks.txt"
    async with IsolationPool(**options(restart_limit=2)) as pool:
        result = await load(pool, tmp_path, "flaky.py")
        adapter = CustomToolAdapter(result.tools[0].tool)
        texts = [(await adapter.execute(str(i), {"file": str(marks)})).text for i in range(4)]
        assert all(f"exited with status 9 {OS_EXIT} during the call" in t for t in texts[:2])
        assert "restarted for the next call" in texts[1]
        assert "exited with status 9" in texts[2]
        assert "fix the module and load the tools again" in texts[2]
        assert "is dead: it ended unexpectedly 3 time(s) in a row" in texts[3]
        assert "restart_limit is 2" in texts[3]
        pids = [int(pid) for pid in marks.read_text().split()]
        assert len(pids) == 3  # the dead module was not started a fourth time
        assert len(set(pids)) == 3
        assert pool.pids == ()
    assert not any(alive(pid) for pid in pids)


async def test_a_sync_tool_ignoring_its_signal_is_stopped_by_killing_its_worker(
    tmp_path: Path,
) -> None:
    write(
        tmp_path,
        "stubborn.py",
        """
        def factory(api):
            def stubborn(call_id, params, on_update, ctx, signal):
                import subprocess
                child = subprocess.Popen(["sleep", "60"])
                with open(params["file"], "a") as handle:
                    handle.write(f"{os.getpid()} {child.pid}\\n")
                while True:  # never looks at the signal
                    time.sleep(0.01)

            def pid(call_id, params, on_update, ctx, signal):
                return str(os.getpid())

            return [
                CustomTool(name="stubborn", execute=stubborn,
                           parameters=Type.Object({"file": Type.String()})),
                CustomTool(name="pid", execute=pid),
            ]
        """,
        prelude=MARK,
    )
    marks = tmp_path / "marks.txt"
    async with IsolationPool(**options()) as pool:
        result = await load(pool, tmp_path, "stubborn.py")
        stubborn = CustomToolAdapter(result.get("stubborn").tool, timeout=1.0)
        outcome = await stubborn.execute("1", {"file": str(marks)})
        assert outcome.is_error
        assert outcome.details["timed_out"] is True
        worker, child = (int(pid) for pid in marks.read_text().split())
        # No work survives the cancelled call: the worker is gone already, and its child was
        # sent SIGKILL with the worker's process group (the kernel ends it a moment later).
        assert not alive(worker)
        with anyio.fail_after(5):
            while alive(child):
                await anyio.sleep(0.01)
        fresh = await CustomToolAdapter(result.get("pid").tool).execute("2", {})
        assert not fresh.is_error
        assert int(fresh.text) != worker


async def test_abort_and_timeout_reach_the_tool_signal_inside_the_worker(tmp_path: Path) -> None:
    write(
        tmp_path,
        "polite.py",
        """
        def factory(api):
            async def waits(call_id, params, on_update, ctx, signal):
                import anyio
                with open(params["file"], "a") as handle:
                    handle.write("started\\n")
                try:
                    await anyio.sleep(30)
                finally:  # cancelled by the abort, as in-process: the signal says why
                    with open(params["file"], "a") as handle:
                        handle.write(f"{type(signal.reason).__name__}: {signal.reason}\\n")

            def polls(call_id, params, on_update, ctx, signal):
                while not signal.aborted:
                    time.sleep(0.005)
                with open(params["file"], "a") as handle:
                    handle.write(f"sync saw {type(signal.reason).__name__}\\n")
                return "stopped"

            schema = Type.Object({"file": Type.String()})
            return [CustomTool(name="waits", execute=waits, parameters=schema),
                    CustomTool(name="polls", execute=polls, parameters=schema)]
        """,
    )
    log = tmp_path / "log.txt"
    log.write_text("")
    async with IsolationPool(**options(grace=10.0)) as pool:
        result = await load(pool, tmp_path, "polite.py")
        pid = pool.pids[0]
        waits = CustomToolAdapter(result.get("waits").tool)
        controller = AbortController()

        async def abort_when_started() -> None:
            with anyio.fail_after(20):
                while "started" not in log.read_text():
                    await anyio.sleep(0.01)
            controller.abort("user pressed stop")

        async with anyio.create_task_group() as group:
            group.start_soon(abort_when_started)
            aborted = await waits.execute("1", {"file": str(log)}, signal=controller.signal)
        assert aborted.is_error
        assert aborted.details["cancelled"] is True
        assert "str: user pressed stop" in log.read_text()

        timed = await CustomToolAdapter(result.get("polls").tool).execute(
            "2", {"file": str(log)}, timeout=0.3
        )
        assert timed.details["timed_out"] is True
        assert "sync saw ToolTimeoutError" in log.read_text()
        assert pool.pids == (pid,)  # cooperative tools never cost the worker


async def test_a_memory_bomb_is_bounded_by_the_limit(tmp_path: Path) -> None:
    write(
        tmp_path,
        "bomb.py",
        """
        def factory(api):
            def bomb(call_id, params, on_update, ctx, signal):
                chunks = []
                for _ in range(64):
                    chunks.append(bytearray(64 * 1024 * 1024))
                return f"allocated {len(chunks)} chunks"
            return CustomTool(name="bomb", execute=bomb)
        """,
    )
    async with IsolationPool(**options(memory_limit_mib=256)) as pool:
        result = await load(pool, tmp_path, "bomb.py")
        pid = pool.pids[0]
        outcome = await CustomToolAdapter(result.tools[0].tool).execute("1", {})
        assert outcome.is_error
        assert "MemoryError" in outcome.text
        assert pool.pids == (pid,)  # contained inside the worker: it goes on


async def test_closing_the_pool_leaves_no_process_behind(tmp_path: Path) -> None:
    write(
        tmp_path,
        "spawner.py",
        """
        def factory(api):
            import subprocess
            child = subprocess.Popen(["sleep", "60"])
            def child_pid(call_id, params, on_update, ctx, signal):
                return str(child.pid)
            return CustomTool(name="child_pid", execute=child_pid)
        """,
    )
    async with IsolationPool(**options()) as pool:
        result = await load(pool, tmp_path, "spawner.py")
        (worker,) = pool.pids
        child = int((await CustomToolAdapter(result.tools[0].tool).execute("1", {})).text)
        assert alive(worker)
        assert alive(child)
    assert not alive(worker)
    with anyio.fail_after(5):  # the child is reaped by init once killed
        while alive(child):
            await anyio.sleep(0.01)
    assert pool.pids == ()
    closed = await CustomToolAdapter(result.tools[0].tool).execute("2", {})
    assert closed.is_error
    assert "is closed" in closed.text


async def test_the_cpu_limit_kills_a_spinning_worker_and_the_next_call_restarts_it(
    tmp_path: Path,
) -> None:
    write(
        tmp_path,
        "spinner.py",
        """
        def factory(api):
            def spin(call_id, params, on_update, ctx, signal):
                while True:
                    pass

            def pid(call_id, params, on_update, ctx, signal):
                return str(os.getpid())

            return [CustomTool(name="spin", execute=spin), CustomTool(name="pid", execute=pid)]
        """,
    )
    async with IsolationPool(**options(cpu_limit=1)) as pool:
        result = await load(pool, tmp_path, "spinner.py")
        (first,) = pool.pids
        outcome = await CustomToolAdapter(result.get("spin").tool).execute("1", {})
        assert outcome.is_error
        assert "killed by SIGXCPU (it used up its CPU time, 1 s) during the call" in outcome.text
        assert not alive(first)
        again = await CustomToolAdapter(result.get("pid").tool).execute("2", {})
        assert int(again.text) != first


async def test_killing_a_worker_for_one_call_ends_its_other_calls_with_the_reason(
    tmp_path: Path,
) -> None:
    write(
        tmp_path,
        "shared.py",
        """
        def factory(api):
            async def sleeper(call_id, params, on_update, ctx, signal):
                import anyio
                await anyio.sleep(30)

            def stubborn(call_id, params, on_update, ctx, signal):
                while True:
                    time.sleep(0.01)

            return [CustomTool(name="sleeper", execute=sleeper),
                    CustomTool(name="stubborn", execute=stubborn)]
        """,
    )
    async with IsolationPool(**options()) as pool:
        result = await load(pool, tmp_path, "shared.py")
        (worker,) = pool.pids
        outcomes: dict[str, str] = {}

        async def sleeper() -> None:
            outcome = await CustomToolAdapter(result.get("sleeper").tool).execute("1", {})
            outcomes["sleeper"] = outcome.text

        async def stubborn() -> None:
            await anyio.sleep(0.2)  # the sleeper's call is the one reading the channel
            adapter = CustomToolAdapter(result.get("stubborn").tool, timeout=0.5)
            outcomes["stubborn"] = (await adapter.execute("2", {})).text

        with anyio.fail_after(30):
            async with anyio.create_task_group() as group:
                group.start_soon(sleeper)
                group.start_soon(stubborn)
        assert "timed out" in outcomes["stubborn"]
        assert "a cancelled call did not end within 0.3 s (grace)" in outcomes["sleeper"]
        assert not alive(worker)


async def test_a_request_the_worker_cannot_read_ends_at_deadline_plus_grace(
    tmp_path: Path,
) -> None:
    write(
        tmp_path,
        "blocked.py",
        """
        from customtools import tool

        @tool
        async def block(file: str) -> str:
            \"\"\"Blocks the worker's event loop.\"\"\"
            with open(file, "w") as handle:
                handle.write("blocking")
            time.sleep(30)
            return "unblocked"

        @tool
        async def take(blob: str) -> str:
            \"\"\"Takes a big argument.\"\"\"
            return f"got {len(blob)}"
        """,
    )
    marks = tmp_path / "marks.txt"
    async with IsolationPool(**options()) as pool:
        result = await load(pool, tmp_path, "blocked.py")
        block = CustomToolAdapter(result.get("block").tool, timeout=60)  # type: ignore[union-attr]
        take = CustomToolAdapter(result.get("take").tool, timeout=1, grace=0.2)  # type: ignore[union-attr]
        blocked: list[object] = []

        async def run_block() -> None:
            blocked.append(await block.execute("a", {"file": str(marks)}))

        async with anyio.create_task_group() as group:
            group.start_soon(run_block)
            with anyio.fail_after(20):
                while not marks.exists():
                    await anyio.sleep(0.01)
            # More than a pipe holds: the request waits for a worker that reads nothing.
            taken = await take.execute("b", {"blob": "x" * (1 << 20)})

        assert taken.is_error
        assert taken.details["code"] == "timeout"
        (lost,) = blocked
        # The worker was stopped by the call's grace, not by the 10 s bound on a stuck send.
        assert lost.details["cause"] == (  # type: ignore[attr-defined]
            "was killed: a cancelled call did not end within 0.2 s (grace)"
        )
