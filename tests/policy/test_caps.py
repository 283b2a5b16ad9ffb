"""Concurrency caps and rates: never more running than the cap, first in first out, a
bounded wait with its error result, and a queued call that is cancelled leaves the line."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from customtools import AbortController, CustomTool, CustomToolAdapter, ToolRegistry, ToolResult
from customtools.policy import MemorySlots, Policy

pytestmark = pytest.mark.anyio

SCHEMA = {"type": "object", "properties": {"i": {"type": "integer"}}, "required": ["i"]}


class Probe:
    """A tool that records, from inside, how many of its calls run at once and in which
    order they started; each call ends when the test releases it."""

    def __init__(self) -> None:
        self.running = 0
        self.most = 0
        self.started: list[int] = []
        self.release: dict[int, anyio.Event] = {}

    async def execute(self, call_id: str, params: Any, on_update: Any, ctx: Any, sig: Any) -> str:
        i = params["i"]
        self.running += 1
        self.most = max(self.most, self.running)
        self.started.append(i)
        try:
            await self.release.setdefault(i, anyio.Event()).wait()
        finally:
            self.running -= 1
        return f"done {i}"

    def tool(self, name: str = "probe", **fields: Any) -> CustomTool:
        return CustomTool(name=name, parameters=SCHEMA, execute=self.execute, **fields)


async def wait_for(predicate: Any) -> None:
    with anyio.fail_after(30):
        while not predicate():
            await anyio.sleep(0)


async def test_a_thousand_calls_against_a_cap_of_eight_run_eight_at_most_in_fifo_order() -> None:
    probe = Probe()
    adapter = CustomToolAdapter(probe.tool(), policy=Policy(max_concurrent=8, queue_timeout=60))
    arrived: list[int] = []
    results: dict[int, Any] = {}

    async def call(i: int) -> None:
        arrived.append(i)  # nothing suspends between here and the call joining the line
        results[i] = await adapter.execute(f"c{i}", {"i": i})

    async with anyio.create_task_group() as group:
        for i in range(1000):
            group.start_soon(call, i)
        for done in range(1000):
            # Release the oldest running call once the running set is full, one at a time, so
            # each release admits exactly one waiting call.
            await wait_for(lambda d=done: len(probe.started) >= min(d + 8, 1000))
            probe.release.setdefault(probe.started[done], anyio.Event()).set()
    assert probe.most == 8
    assert probe.started == arrived  # first in, first out
    assert sorted(results) == list(range(1000))
    assert all(results[i].text == f"done {i}" for i in range(1000))


async def test_a_call_that_waits_too_long_gets_a_queue_timeout_error_result() -> None:
    probe = Probe()
    adapter = CustomToolAdapter(probe.tool(), policy=Policy(max_concurrent=1, queue_timeout=0.05))
    async with anyio.create_task_group() as group:
        group.start_soon(adapter.execute, "first", {"i": 0})
        await wait_for(lambda: probe.started == [0])
        refused = await adapter.execute("second", {"i": 1})
        probe.release.setdefault(0, anyio.Event()).set()
    assert refused.is_error
    assert refused.details["error"] == "PolicyRefused"
    assert refused.details["code"] == "queue-timeout"
    assert refused.details["limit"] == "max_concurrent"
    assert "tool 'probe' was not run: it waited" in refused.text
    assert "at most 1 running per tool" in refused.text
    assert probe.started == [0]  # the refused call never ran


async def test_cancelling_a_queued_call_takes_it_out_of_the_line() -> None:
    probe = Probe()
    adapter = CustomToolAdapter(probe.tool(), policy=Policy(max_concurrent=1, queue_timeout=60))
    controller = AbortController()
    outcome: list[Any] = []
    async with anyio.create_task_group() as group:
        group.start_soon(adapter.execute, "first", {"i": 0})
        await wait_for(lambda: probe.started == [0])

        async def queued() -> None:
            outcome.append(await adapter.execute("second", {"i": 1}, signal=controller.signal))

        group.start_soon(queued)
        group.start_soon(adapter.execute, "third", {"i": 2})
        gate = adapter._plan.gates[0][0]  # type: ignore[union-attr]
        await wait_for(lambda: gate.waiting == 2)
        controller.abort("the user gave up")
        await wait_for(lambda: bool(outcome))
        assert gate.waiting == 1  # the aborted call left; the third still waits
        probe.release.setdefault(0, anyio.Event()).set()
        await wait_for(lambda: probe.started == [0, 2])
        probe.release.setdefault(2, anyio.Event()).set()
    assert outcome[0].details["code"] == "aborted"
    assert "was cancelled while it waited to start: the user gave up" in outcome[0].text
    assert 1 not in probe.started


async def test_a_caller_cancelling_a_queued_call_frees_its_place() -> None:
    probe = Probe()
    adapter = CustomToolAdapter(probe.tool(), policy=Policy(max_concurrent=1))
    async with anyio.create_task_group() as group:
        group.start_soon(adapter.execute, "first", {"i": 0})
        await wait_for(lambda: probe.started == [0])
        with anyio.move_on_after(0.05):
            await adapter.execute("second", {"i": 1})  # the caller's task gives up waiting
        gate = adapter._plan.gates[0][0]  # type: ignore[union-attr]
        assert gate.waiting == 0
        probe.release.setdefault(0, anyio.Event()).set()
    assert probe.started == [0]
    assert gate.used == 0


async def test_the_host_cap_is_shared_by_every_tool_under_the_policy() -> None:
    probe = Probe()
    policy = Policy(max_concurrent_host=3, queue_timeout=0.05)
    registry = ToolRegistry([probe.tool("a"), probe.tool("b")], policy=policy)
    async with anyio.create_task_group() as group:
        for i in range(3):
            group.start_soon(registry.call, "a" if i % 2 else "b", f"c{i}", {"i": i})
        await wait_for(lambda: len(probe.started) == 3)
        refused = await registry.call("a", "c4", {"i": 4})
        for i in range(3):
            probe.release.setdefault(i, anyio.Event()).set()
    assert probe.most == 3
    assert refused.details["code"] == "queue-timeout"
    assert "at most 3 in all" in refused.text


async def test_a_heavier_pack_takes_more_of_the_host_cap(tmp_path: Any) -> None:
    from customtools import load_custom_tools

    (tmp_path / "heavy.py").write_text(
        "import anyio\n"
        "from customtools import CustomTool\n"
        "from customtools.policy import Policy\n"
        "POLICY = Policy(weight=2)\n"
        "RUNNING = []\n"
        "async def run(call_id, params, on_update, ctx, signal):\n"
        "    RUNNING.append(call_id)\n"
        "    await anyio.sleep(3600)\n"
        "def factory(api):\n"
        "    return CustomTool(name='heavy', execute=run)\n"
    )
    loaded = await load_custom_tools([str(tmp_path / "heavy.py")], cwd=str(tmp_path))
    registry = ToolRegistry(loaded, policy=Policy(max_concurrent_host=3, queue_timeout=0.05))
    async with anyio.create_task_group() as group:
        group.start_soon(registry.call, "heavy", "one", {})
        await wait_for(lambda: registry.adapter("heavy")._plan.gates[0][0].used == 2)  # type: ignore[union-attr]
        refused = await registry.call("heavy", "two", {})  # 2 + 2 > 3
        group.cancel_scope.cancel()
    assert refused.details["code"] == "queue-timeout"


async def test_a_rate_refuses_what_it_cannot_start_in_time_and_says_when() -> None:
    async def quick(call_id: str, params: Any, on_update: Any, ctx: Any, sig: Any) -> str:
        return "ok"

    adapter = CustomToolAdapter(
        CustomTool(name="paid", execute=quick), policy=Policy(rate=(2, 3600), queue_timeout=1)
    )
    first = await adapter.execute("1", {})
    second = await adapter.execute("2", {})
    third = await adapter.execute("3", {})
    assert [first.text, second.text] == ["ok", "ok"]
    assert third.details["error"] == "PolicyRefused"
    assert third.details["code"] == "rate-limited"
    assert 3590 < third.details["retry_after"] <= 3600
    assert "it may start at most 2 call(s) per 3600 s; try again in" in third.text


async def test_a_rate_waits_when_the_next_start_comes_within_the_queue_timeout() -> None:
    async def quick(call_id: str, params: Any, on_update: Any, ctx: Any, sig: Any) -> str:
        return "ok"

    adapter = CustomToolAdapter(
        CustomTool(name="paid", execute=quick), policy=Policy(rate=(1, 0.05), queue_timeout=5)
    )
    await adapter.execute("1", {})
    waited = await adapter.execute("2", {})
    assert waited.text == "ok"
    assert waited.meta["customtools/policy"]["queued"] > 0


async def test_calls_of_two_tools_under_three_caps_all_run_and_give_every_unit_back() -> None:
    # Each cap is first in, first out; a call takes them one after the other (tool, pack,
    # host), so the order calls start in across caps is not the order they came in.
    probe = Probe()
    policy = Policy(
        max_concurrent=2, max_concurrent_pack=2, max_concurrent_host=1, queue_timeout=60
    )
    registry = ToolRegistry([probe.tool("a"), probe.tool("b")], policy=policy)
    async with anyio.create_task_group() as group:
        for i in range(40):
            group.start_soon(registry.call, "a" if i % 2 else "b", f"c{i}", {"i": i})
        for done in range(40):
            await wait_for(lambda d=done: len(probe.started) == d + 1)
            probe.release.setdefault(probe.started[done], anyio.Event()).set()
    assert probe.most == 1  # the host cap, the smallest, holds
    assert sorted(probe.started) == list(range(40))
    plans = [registry.adapter(name)._plan for name in "ab"]
    gates = [gate for plan in plans for gate, _ in plan.gates]  # type: ignore[union-attr]
    assert {gate.used for gate in gates} == {0}
    assert {gate.waiting for gate in gates} == {0}


async def test_a_call_queues_behind_a_waiting_one_though_its_own_caps_are_free() -> None:
    probe = Probe()
    policy = Policy(max_concurrent=5, max_concurrent_host=1, queue_timeout=60)
    registry = ToolRegistry([probe.tool("a"), probe.tool("b")], policy=policy)
    async with anyio.create_task_group() as group:
        group.start_soon(registry.call, "a", "first", {"i": 0})
        await wait_for(lambda: probe.started == [0])
        group.start_soon(registry.call, "b", "second", {"i": 1})  # waits for the host cap
        host = registry.adapter("a")._plan.gates[1][0]  # type: ignore[union-attr]
        await wait_for(lambda: host.waiting == 1)
        group.start_soon(registry.call, "a", "third", {"i": 2})  # its tool cap has room
        await wait_for(lambda: host.waiting == 2)
        for i in range(3):
            probe.release.setdefault(i, anyio.Event()).set()
            await wait_for(lambda i=i: len(probe.started) == min(i + 2, 3))
    assert probe.started == [0, 1, 2]
    assert host.used == 0


async def test_a_queued_call_that_is_aborted_gives_back_the_caps_it_already_held() -> None:
    probe = Probe()
    adapter = CustomToolAdapter(
        probe.tool(), policy=Policy(max_concurrent=5, max_concurrent_host=1, queue_timeout=60)
    )
    (tool, _), (host, _) = adapter._plan.gates  # type: ignore[union-attr]
    controller = AbortController()
    async with anyio.create_task_group() as group:
        group.start_soon(adapter.execute, "first", {"i": 0})
        await wait_for(lambda: probe.started == [0])
        outcome: list[Any] = []

        async def queued() -> None:
            outcome.append(await adapter.execute("second", {"i": 1}, signal=controller.signal))

        group.start_soon(queued)
        await wait_for(lambda: host.waiting == 1)
        assert tool.used == 2  # the tool cap is held while the host cap is awaited
        controller.abort("no longer needed")
        await wait_for(lambda: bool(outcome))
        assert (tool.used, host.used, host.waiting) == (1, 1, 0)
        probe.release.setdefault(0, anyio.Event()).set()
    assert outcome[0].details["code"] == "aborted"
    assert (tool.used, host.used) == (0, 0)


async def test_a_full_host_cap_is_the_one_a_queue_timeout_names() -> None:
    probe = Probe()
    registry = ToolRegistry(
        [probe.tool("a"), probe.tool("b")],
        policy=Policy(max_concurrent=5, max_concurrent_host=1, queue_timeout=0.05),
    )
    async with anyio.create_task_group() as group:
        group.start_soon(registry.call, "a", "first", {"i": 0})
        await wait_for(lambda: probe.started == [0])
        refused = await registry.call("b", "second", {"i": 1})
        probe.release.setdefault(0, anyio.Event()).set()
    assert refused.details["code"] == "queue-timeout"
    assert refused.details["limit"] == "max_concurrent_host"
    assert "at most 1 in all" in refused.text


async def test_a_gate_follows_the_newest_limit_the_host_sets() -> None:
    slots = MemorySlots()
    gate = slots.gate("host", 2)
    assert gate.try_acquire(1)
    assert gate.try_acquire(1)
    assert slots.gate("host", 1) is gate  # the host's new policy
    assert not gate.try_acquire(1)
    gate.give(1)
    assert not gate.try_acquire(1)  # one still runs, and one is the limit now
    async with anyio.create_task_group() as group:
        group.start_soon(gate.acquire, 1)
        await wait_for(lambda: gate.waiting == 1)
        slots.gate("host", 3)  # room for it now
        await wait_for(lambda: gate.waiting == 0)
    assert gate.used == 2


@pytest.mark.parametrize("caps", [1, 2, 3])
async def test_the_inline_path_gives_every_unit_back_whatever_the_call_does(caps: int) -> None:
    """An uncontended call takes its caps inline (one cap has a path of its own): whether
    the tool returns, raises, exits or is cancelled by its caller, every unit comes back."""
    limits = {"max_concurrent": 2, "max_concurrent_pack": 3, "max_concurrent_host": 4}
    policy = Policy(**dict(list(limits.items())[:caps]))
    gate = anyio.Event()

    async def execute(call_id: str, params: Any, on_update: Any, ctx: Any, sig: Any) -> Any:
        how = ["text", "result", "raise", "exit", "block"][params["i"]]
        if how == "raise":
            raise ValueError("no")
        if how == "exit":
            raise SystemExit(3)
        if how == "block":
            await gate.wait()
        return ToolResult.from_text("ok") if how == "result" else "ok"

    adapter = CustomToolAdapter(
        CustomTool(name="t", parameters=SCHEMA, execute=execute), policy=policy
    )
    assert (type(adapter).__name__ == "_OneCapAdapter") == (caps == 1)
    gates = [g for g, _ in adapter._plan.gates]  # type: ignore[union-attr]
    outcomes = [await adapter.execute("c", {"i": i}) for i in range(4)]
    assert [r.is_error for r in outcomes] == [False, False, True, True]
    assert [g.used for g in gates] == [0] * caps
    with anyio.move_on_after(0.05):
        running = adapter.execute("c", {"i": 4})
        await running  # the caller gives up while the tool runs
    assert [g.used for g in gates] == [0] * caps
    async with anyio.create_task_group() as group:
        group.start_soon(adapter.execute, "c", {"i": 4})
        await wait_for(lambda: [g.used for g in gates] == [1] * caps)
        gate.set()
    assert [g.used for g in gates] == [0] * caps
