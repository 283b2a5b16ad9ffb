"""Grace period, reconnect and unsubscribe policy: checklist items 26-30."""

from __future__ import annotations

import anyio
import pytest

from customtools.host import ClientPresence


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def presence() -> tuple[ClientPresence, FakeClock]:
    clock = FakeClock()
    return ClientPresence(grace_seconds=30, clock=clock), clock


def test_item26_reconnect_within_grace_with_resubscription_keeps_the_client() -> None:
    p, clock = presence()
    p.connected("ide", "conn-1", ["session:/1"])
    p.disconnected("conn-1")
    clock.now += 10
    assert p.in_grace("ide")
    released = p.reconnected("ide", "conn-2", ["session:/1"], active_in=["session:/1"])
    assert released == []
    assert not p.in_grace("ide")
    clock.now += 60
    assert p.expired() == []


def test_item27_no_return_within_the_window_releases_the_client() -> None:
    p, clock = presence()
    p.connected("ide", "conn-1", ["session:/1"])
    p.disconnected("conn-1")
    clock.now += 29
    assert p.expired() == []
    clock.now += 1
    assert p.expired() == ["ide"]
    assert not p.in_grace("ide")


def test_item28_reconnect_without_the_session_releases_it_at_once() -> None:
    p, _ = presence()
    p.connected("ide", "conn-1", ["session:/1", "session:/2"])
    p.disconnected("conn-1")
    released = p.reconnected(
        "ide", "conn-2", ["session:/2"], active_in=["session:/1", "session:/2"]
    )
    assert released == ["session:/1"]


def test_item29_unsubscribe_releases_unless_another_connection_still_subscribes() -> None:
    p, _ = presence()
    p.connected("ide", "window-1", ["session:/1"])
    p.connected("ide", "window-2", ["session:/1"])
    assert p.unsubscribe("window-1", "session:/1") is False
    assert p.unsubscribe("window-2", "session:/1") is True


def test_item30_a_rearmed_timer_gets_the_remaining_window_not_a_new_one() -> None:
    p, clock = presence()
    p.connected("ide", "conn-1")
    p.disconnected("conn-1")
    clock.now += 12
    # A tool call is stamped for 'ide' while it is in grace: the timer is re-armed.
    assert p.remaining("ide") == 18
    clock.now += 5
    assert p.remaining("ide") == 13


def test_a_second_connection_closing_keeps_the_client_active() -> None:
    p, _ = presence()
    p.connected("ide", "a")
    p.connected("ide", "b")
    p.disconnected("a")
    assert not p.in_grace("ide")
    assert p.remaining("ide") is None


@pytest.mark.anyio
async def test_watch_releases_after_the_window() -> None:
    p = ClientPresence(grace_seconds=0.01)
    p.connected("ide", "c")
    p.disconnected("c")
    released: list[str] = []
    assert await p.watch("ide", released.append) is True
    assert released == ["ide"]


@pytest.mark.anyio
async def test_watch_does_nothing_when_the_client_came_back() -> None:
    p = ClientPresence(grace_seconds=60)
    p.connected("ide", "c")
    p.disconnected("c")
    released: list[str] = []

    async def release(client_id: str) -> None:
        released.append(client_id)

    async with anyio.create_task_group() as tg:
        result: list[bool] = []

        async def watch() -> None:
            result.append(await p.watch("ide", release))

        tg.start_soon(watch)
        await anyio.sleep(0)
        p.connected("ide", "c2")
        tg.cancel_scope.cancel()
    assert released == []
    assert await p.watch("ide", release) is False
