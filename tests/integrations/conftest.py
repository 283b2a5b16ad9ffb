"""Shared tools for the framework adapter tests.

The frameworks drive their runs on asyncio only (each builds on asyncio primitives), so these
tests run on the asyncio backend; the adapters themselves use anyio only.
"""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import pytest

from customtools import AbortSignal, CustomTool, tool


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class SlowState:
    """What the blocking sync tool saw: started, finished, and whether its signal aborted."""

    def __init__(self) -> None:
        self.started = threading.Event()
        self.finished = threading.Event()
        self.aborted = False
        self.reason: object = None
        self.cleanup_saw: tuple[bool, object] | None = None  # what an async tool's finally saw


def cleanup_tool(state: SlowState) -> CustomTool:
    """An async tool that waits until cancelled and records what its cleanup sees."""

    @tool
    async def waits(signal: AbortSignal) -> str:
        """Wait until cancelled."""
        state.started.set()
        try:
            await anyio.sleep_forever()
        finally:
            state.cleanup_saw = (signal.aborted, signal.reason)
            state.finished.set()
        return "never"

    return waits


def make_tools(state: SlowState, ran: list[str]) -> list[CustomTool]:
    @tool
    def echo(text: str, times: int = 1) -> str:
        """Repeat a text.

        Args:
            text: what to repeat.
            times: how often.
        """
        return " ".join([text] * times)

    @tool
    async def ticker(steps: int) -> AsyncIterator[str]:
        """Count up, streaming each step."""
        for step in range(1, steps + 1):
            yield f"tick {step}"

    @tool
    def slow_sync(signal: AbortSignal) -> str:
        """Block in a worker thread until the signal aborts (bounded)."""
        state.started.set()
        try:
            # Bounded: ends after 10 s even if the signal never aborts.
            for _ in range(1000):
                if signal.aborted:
                    state.aborted = True
                    state.reason = signal.reason
                    return "aborted"
                threading.Event().wait(0.01)
            return "ran to the end"
        finally:
            state.finished.set()

    @tool(requires_approval=True)
    def wipe(path: str) -> str:
        """Delete a path (approval needed)."""
        ran.append(path)
        return f"wiped {path}"

    @tool
    def broken(n: int) -> str:
        """Always fails."""
        raise ValueError(f"cannot handle {n}")

    return [echo, ticker, slow_sync, wipe, broken]


ISOLATED_PACK = '''
import os
from customtools import tool


@tool
def whoami(prefix: str) -> str:
    """Answer with the process id it runs in."""
    return f"{prefix}:{os.getpid()}"


def factory(api):
    return whoami
'''


@pytest.fixture
def isolated_pack(tmp_path: Path) -> Path:
    path = tmp_path / "isolated.py"
    path.write_text(ISOLATED_PACK)
    return path
