"""A backend of another kind, built only on the four documented interfaces as a shared store
would be (no try_acquire fast path, awaited releases, results kept in their wire form and keys
in their text form): the policy behaves the same over it."""

from __future__ import annotations

import json
from collections.abc import Hashable
from typing import Any

import anyio
import pytest

from customtools import CustomTool, CustomToolAdapter, ToolContext, ToolResult
from customtools.policy import MemoryRates, MemoryStore, Policy

pytestmark = pytest.mark.anyio


class FarGate:
    """A cap whose every step awaits, as a network round trip would; FIFO by ticket."""

    def __init__(self, limit: int, log: list[str]) -> None:
        self.limit = limit
        self.used = 0
        self.log = log
        self.line: list[anyio.Event] = []

    def try_acquire(self, weight: int) -> bool:
        return False  # a remote store answers only in acquire

    async def acquire(self, weight: int) -> None:
        await anyio.lowlevel.checkpoint()
        if self.line or self.used + weight > self.limit:
            turn = anyio.Event()
            self.line.append(turn)
            try:
                await turn.wait()
            except BaseException:
                if turn in self.line:
                    self.line.remove(turn)
                else:  # granted meanwhile: give it back
                    self.used -= weight
                    self._next()
                raise
        else:
            self.used += weight
        self.log.append("acquire")

    async def release(self, weight: int) -> None:
        await anyio.lowlevel.checkpoint()  # a round trip: must not be skipped when cancelled
        self.log.append("release")
        self.used -= weight
        self._next()

    def _next(self) -> None:
        while self.line and self.used < self.limit:
            self.used += 1
            self.line.pop(0).set()


class FarSlots:
    def __init__(self) -> None:
        self.log: list[str] = []
        self.gates: dict[str, FarGate] = {}

    def gate(self, key: str, limit: int) -> FarGate:
        return self.gates.setdefault(key, FarGate(limit, self.log))


class FarCache:
    """Entries as text, keyed by the text form of the key and the pack's digest."""

    def __init__(self) -> None:
        self.entries: dict[str, str] = {}

    async def get(self, scope: str, digest: str, key: Hashable) -> ToolResult | None:
        await anyio.lowlevel.checkpoint()
        text = self.entries.get(f"{scope}|{digest}|{key!r}")
        return None if text is None else ToolResult.from_dict(json.loads(text))

    async def put(
        self, scope: str, digest: str, key: Hashable, result: ToolResult, size: int, ttl: float
    ) -> None:
        await anyio.lowlevel.checkpoint()
        self.entries[f"{scope}|{digest}|{key!r}"] = json.dumps(result.to_dict())


class FarBackend:
    def __init__(self) -> None:
        self.slots = FarSlots()
        self.rates = MemoryRates()
        self.results = MemoryStore()
        self.cache = FarCache()


async def test_caps_over_a_backend_that_awaits_hold_and_every_acquire_is_released() -> None:
    backend = FarBackend()
    running = most = 0
    go = anyio.Event()

    async def execute(call_id: str, params: Any, on_update: Any, ctx: Any, sig: Any) -> str:
        nonlocal running, most
        running += 1
        most = max(most, running)
        await go.wait()
        running -= 1
        return "ok"

    adapter = CustomToolAdapter(
        CustomTool(name="busy", execute=execute), policy=Policy(max_concurrent=2, backend=backend)
    )
    results: list[ToolResult] = []

    async def call(i: int) -> None:
        results.append(await adapter.execute(f"c{i}", {}))

    async with anyio.create_task_group() as group:
        for i in range(6):
            group.start_soon(call, i)
        with anyio.fail_after(30):
            while running < 2:
                await anyio.sleep(0)
        with anyio.move_on_after(0.01):  # a caller gives up while its call runs
            await adapter.execute("cancelled", {})
        go.set()
    assert most == 2
    assert [result.text for result in results] == ["ok"] * 6
    log = backend.slots.log
    assert log.count("acquire") == log.count("release") == 6
    assert backend.slots.gates["tool\0tool:busy\0busy"].used == 0


async def test_the_cache_over_a_backend_that_keeps_text_answers_a_repeat_per_caller() -> None:
    backend = FarBackend()
    calls: list[str] = []

    async def execute(call_id: str, params: Any, on_update: Any, ctx: Any, sig: Any) -> str:
        calls.append(ctx.caller)
        return f"answer for {ctx.caller} #{len(calls)}"

    tool = CustomTool(
        name="lookup",
        parameters={"type": "object"},
        execute=execute,
        annotations={"readOnlyHint": True, "idempotentHint": True},
    )
    adapter = CustomToolAdapter(tool, policy=Policy(backend=backend))
    alice = ToolContext(caller="alice")
    first = await adapter.execute("1", {"q": [1, 2.0, True]}, ctx=alice)
    again = await adapter.execute("2", {"q": [1, 2.0, True]}, ctx=alice)
    other = await adapter.execute("3", {"q": [1, 2, 1]}, ctx=alice)  # not the same arguments
    bob = await adapter.execute("4", {"q": [1, 2.0, True]}, ctx=ToolContext(caller="bob"))
    assert calls == ["alice", "alice", "bob"]
    assert again.text == first.text == "answer for alice #1"
    assert again.meta == {"customtools/policy": {"cache": "hit"}}
    assert other.text == "answer for alice #2"
    assert bob.text == "answer for bob #3"
