"""Shared state on a real Redis server (``RedisState`` and its stores), and the in-memory
stores they stand in for. Replicas behind a proxy are in test_mcp_replicas.py."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp.shared.subscriptions import ResourceUpdated, ToolsListChanged
from mcp_helpers import serve_argv
from mcp_types import JSONRPCNotification
from redis_helpers import RedisServer, free_port, namespace, require_redis_binary

from customtools import CustomTool, CustomToolAdapter, ToolResult
from customtools.mcp import HttpSecurity, ToolServer
from customtools.mcp import _redis as redis_module
from customtools.mcp._redis import (
    EVENT_TTL,
    EventScopeMiddleware,
    RedisPolicyBackend,
    RedisState,
    redacted_url,
)
from customtools.mcp._rerun import StateSeal
from customtools.mcp._shared import MemoryNonces, MemoryVisibility, SharedStateError
from customtools.policy import Policy

pytestmark = pytest.mark.anyio

asyncio_only = pytest.mark.parametrize("anyio_backend", ["asyncio"])  # redis-py is asyncio-only


@pytest.fixture(scope="module")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    server = RedisServer(require_redis_binary(), tmp_path_factory.mktemp("redis"))
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def own_redis(tmp_path: Path) -> Iterator[RedisServer]:
    """A server of this test alone (it is stopped and restarted, on its own Unix socket)."""
    server = RedisServer(require_redis_binary(), tmp_path, unix=True)
    server.start()
    try:
        yield server
    finally:
        server.stop()


def state(server: RedisServer, ns: str, **options: Any) -> RedisState:
    return RedisState(server.url, namespace=ns, timeout=1.0, **options)


# -- connecting ----------------------------------------------------------------------------


@asyncio_only
async def test_an_unreachable_redis_is_one_error_naming_the_url() -> None:
    url = f"redis://127.0.0.1:{free_port()}/0"
    with pytest.raises(
        SharedStateError, match=r"^Redis at redis://127\.0\.0\.1:\d+/0 is unreachable"
    ):
        async with RedisState(url):
            pass


@asyncio_only
async def test_the_error_hides_the_password_in_the_url() -> None:
    url = f"redis://app:s3cret@127.0.0.1:{free_port()}/0"
    with pytest.raises(SharedStateError) as caught:
        async with RedisState(url):
            pass
    assert "s3cret" not in str(caught.value)
    assert f"redis://app:***@127.0.0.1:{url.rsplit(':', 1)[1]}" in str(caught.value)
    assert redacted_url("redis://127.0.0.1:6379/0") == "redis://127.0.0.1:6379/0"


def test_an_unusable_namespace_or_url_is_refused_at_once() -> None:
    with pytest.raises(ValueError, match="Redis namespace 'a b' is not usable"):
        RedisState("redis://127.0.0.1:6379/0", namespace="a b")
    with pytest.raises(ValueError, match="Redis URL 'http://x' is not usable"):
        RedisState("http://x")


@pytest.mark.parametrize("anyio_backend", ["trio"])
async def test_on_trio_the_error_says_asyncio_only(redis_server: RedisServer) -> None:
    with pytest.raises(RuntimeError, match="runs on asyncio only"):
        async with state(redis_server, namespace()):
            pass


# -- the seal key and replay protection ----------------------------------------------------


@asyncio_only
async def test_replicas_share_the_deployments_seal_key(redis_server: RedisServer) -> None:
    ns = namespace()
    async with state(redis_server, ns) as a, state(redis_server, ns) as b:
        assert a.state_key is not None
        assert a.state_key == b.state_key
        assert len(a.state_key) == 32
    async with state(redis_server, namespace()) as other:
        assert other.state_key != a.state_key
    async with state(redis_server, ns, state_key=b"given" * 8) as given:
        assert given.state_key == b"given" * 8


@asyncio_only
async def test_a_nonce_is_claimed_once_by_the_whole_deployment(redis_server: RedisServer) -> None:
    ns = namespace()
    expiry = time.time() + 30
    async with state(redis_server, ns) as a, state(redis_server, ns) as b:
        assert await a.nonces.claim("n1", expiry) is True
        assert await b.nonces.claim("n1", expiry) is False
        assert await a.nonces.claim("n1", expiry) is False
        ttl = await a.client.pttl(a.key("nonce", "n1"))
        assert 0 < ttl <= 30_001  # the key ends with the state
    async with state(redis_server, namespace()) as elsewhere:
        assert await elsewhere.nonces.claim("n1", expiry) is True  # another deployment


@asyncio_only
async def test_a_state_sealed_on_one_replica_opens_once_on_any(redis_server: RedisServer) -> None:
    ns = namespace()
    async with state(redis_server, ns) as a, state(redis_server, ns) as b:
        assert a.state_key is not None
        assert b.state_key is not None
        one, two = StateSeal(a.state_key, a.nonces), StateSeal(b.state_key, b.nonces)
        sealed = one.seal({"t": "tool", "d": "d", "e": time.time() + 60, "a": []})
        payload = two.open(sealed, tool="tool", digest="d")
        await two.spend(payload, tool="tool")
        for seal in (one, two):
            with pytest.raises(MCPError, match="it was already used"):
                await seal.spend(seal.open(sealed, tool="tool", digest="d"), tool="tool")


async def test_the_memory_nonces_refuse_a_replay_in_one_process() -> None:
    seal = StateSeal(b"k" * 32, MemoryNonces())
    sealed = seal.seal({"t": "tool", "d": "d", "e": time.time() + 60, "a": []})
    await seal.spend(seal.open(sealed, tool="tool", digest="d"), tool="tool")
    with pytest.raises(MCPError, match="it was already used"):
        await seal.spend(seal.open(sealed, tool="tool", digest="d"), tool="tool")


# -- per-client visibility -----------------------------------------------------------------


@asyncio_only
async def test_tools_a_client_made_visible_are_visible_on_every_replica(
    redis_server: RedisServer,
) -> None:
    ns = namespace()
    async with state(redis_server, ns) as a, state(redis_server, ns) as b:
        assert await a.visibility.show("alice", ["search_hit", "other"]) is True
        assert await b.visibility.show("alice", ["third", "other"]) is True
        assert await a.visibility.show("alice", ["other"]) is False  # nothing new: no change
        assert await b.visibility.shown("alice") == {"search_hit", "other", "third"}
        assert await a.visibility.shown("bob") == frozenset()
        keys = [key async for key in a.client.scan_iter(match=a.key("visible", "*"))]
        assert len(keys) == 1
        assert await a.client.pttl(keys[0]) > 0  # bounded by a TTL
        await b.visibility.forget("alice")
        assert await a.visibility.shown("alice") == frozenset()


async def test_memory_visibility_expires_and_is_per_client() -> None:
    store = MemoryVisibility(ttl=0.2)
    assert await store.show("alice", ["a"]) is True
    assert await store.show("alice", ["b", "a"]) is True
    assert await store.show("alice", ["b"]) is False  # nothing new: no list_changed due
    assert await store.shown("alice") == {"a", "b"}
    assert await store.shown("bob") == frozenset()
    await anyio.sleep(0.3)
    assert await store.shown("alice") == frozenset()
    await store.show("alice", ["c"])
    assert await store.shown("alice") == {"c"}  # an expired set does not come back


# -- tool search's found tools across replicas ---------------------------------------------


def _tool(name: str, description: str) -> CustomTool:
    return CustomTool(name=name, description=description, execute=lambda *args: f"{name} ran")


SEARCHABLE = [_tool("weather", "Current weather for a city."), _tool("git_log", "Commit logs.")]


class _Verifier:
    """An OAuth token verifier: each token is its own subject (alice's, bob's)."""

    async def verify_token(self, token: str) -> Any:
        from mcp.server.auth.provider import AccessToken

        return AccessToken(token=token, client_id="app", scopes=[], subject=token[:5])


@asynccontextmanager
async def _replica(shared: RedisState) -> AsyncIterator[Any]:
    """A stateless tool-search server on ``shared`` behind an OAuth verifier, in process."""
    from mcp.server.auth.settings import AuthSettings

    security = HttpSecurity(
        token_verifier=_Verifier(),
        auth=AuthSettings(
            issuer_url="https://issuer.example",  # type: ignore[arg-type]
            resource_server_url="http://127.0.0.1/mcp",  # type: ignore[arg-type]
            validate_token_resource=False,
        ),
    )
    server = ToolServer(SEARCHABLE, tool_search=True, shared=shared)
    app = server.streamable_http_app(host="127.0.0.1", stateless=True, security=security)
    async with server.server.session_manager.run():
        yield app


@asynccontextmanager
async def _client(app: Any, token: str) -> AsyncIterator[Client]:
    from mcp.client.streamable_http import streamable_http_client

    http = httpx2.AsyncClient(
        transport=httpx2.ASGITransport(app=app),
        headers={"Authorization": f"Bearer {token}"},
        timeout=10,
    )
    endpoint = streamable_http_client("http://127.0.0.1/mcp", http_client=http)
    async with http, Client(endpoint, mode="auto") as client:
        yield client


async def _listed(client: Client) -> list[str]:
    return [tool.name for tool in (await client.list_tools()).tools]


@asyncio_only
async def test_a_principals_search_on_one_replica_is_listed_by_another(
    own_redis: RedisServer,
) -> None:
    ns = namespace()
    alice, bob = "alice-token-0123456789", "bobby-token-0123456789"
    async with (
        state(own_redis, ns) as shared_a,
        state(own_redis, ns) as shared_b,
        _replica(shared_a) as a,
        _replica(shared_b) as b,
    ):
        with anyio.fail_after(30):
            async with _client(a, alice) as on_a:
                found = await on_a.call_tool("search_tools", {"query": "weather", "limit": 1})
            assert [t["name"] for t in found.structured_content["tools"]] == ["weather"]  # type: ignore[index]
            async with _client(b, alice) as on_b:
                assert await _listed(on_b) == ["search_tools", "weather"]
                assert (await on_b.call_tool("weather", {})).content[0].text == "weather ran"  # type: ignore[union-attr]
            async with _client(b, bob) as other:
                assert await _listed(other) == ["search_tools"]  # another principal

            # Redis gone: the listing is the search tool alone, and a search still answers.
            own_redis.stop()
            async with _client(b, alice) as on_b:
                assert await _listed(on_b) == ["search_tools"]
                again = await on_b.call_tool("search_tools", {"query": "git", "limit": 1})
                assert again.is_error is False
        assert shared_b.faults["tool visibility"] >= 2


# -- list_changed across replicas ----------------------------------------------------------


@asyncio_only
async def test_an_event_published_on_one_replica_reaches_the_others_once(
    redis_server: RedisServer,
) -> None:
    ns = namespace()
    async with state(redis_server, ns) as a, state(redis_server, ns) as b:
        heard_a: list[Any] = []
        heard_b: list[Any] = []
        a.bus.subscribe(heard_a.append)
        unsubscribe = b.bus.subscribe(heard_b.append)
        await a.bus.publish(ToolsListChanged())
        await a.bus.publish(ResourceUpdated(uri="file:///x"))
        with anyio.fail_after(5):
            while len(heard_b) < 2:
                await anyio.sleep(0.01)
        await anyio.sleep(0.1)  # nothing more arrives (the publisher heard it once, locally)
        assert heard_a == [ToolsListChanged(), ResourceUpdated(uri="file:///x")]
        assert heard_b == heard_a
        unsubscribe()
        await a.bus.publish(ToolsListChanged())
        await anyio.sleep(0.1)
        assert len(heard_b) == 2
    async with state(redis_server, namespace()) as c, state(redis_server, ns) as d:
        heard_c: list[Any] = []
        c.bus.subscribe(heard_c.append)
        await d.bus.publish(ToolsListChanged())
        await anyio.sleep(0.2)
        assert heard_c == []  # another deployment hears nothing


# -- the event store -----------------------------------------------------------------------


async def _stored_in_a_session(store: Any, texts: list[str], stream: str = "1") -> list[str]:
    """Store ``texts`` as one session's events (scoped as the HTTP app scopes them)."""
    ids: list[str] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        ids.append(await store.store_event(stream, None))  # the priming event
        for text in texts:
            message = JSONRPCNotification(
                jsonrpc="2.0", method="notifications/message", params={"data": text}
            )
            ids.append(await store.store_event(stream, message))

    await EventScopeMiddleware(app)({"type": "http", "headers": []}, None, None)
    return ids


@asyncio_only
async def test_a_stream_replays_what_followed_an_event_and_never_another_sessions(
    redis_server: RedisServer,
) -> None:
    async with state(redis_server, namespace()) as a, state(redis_server, a.namespace) as b:
        mine = await _stored_in_a_session(a.events, ["one", "two", "three"])
        theirs = await _stored_in_a_session(a.events, ["other"])  # the same stream id "1"
        sent: list[Any] = []

        async def send(event: Any) -> None:
            sent.append(event)

        assert await b.events.replay_events_after(mine[1], send) == "1"  # on another replica
        assert [e.message.params["data"] for e in sent] == ["two", "three"]
        assert [e.event_id for e in sent] == mine[2:]
        sent.clear()
        assert await b.events.replay_events_after(theirs[0], send) == "1"
        assert [e.message.params["data"] for e in sent] == ["other"]
        for foreign in ("nonsense", "a.b.c", f"{mine[1]}x", mine[1].replace(".", ".x", 1)):
            sent.clear()
            assert await b.events.replay_events_after(foreign, send) in (None, "1")
            assert sent == []
        key = a.key("events", mine[1].split(".")[0], mine[1].split(".")[1])
        assert 0 < await a.client.pttl(key) <= EVENT_TTL * 1000


# -- bounds --------------------------------------------------------------------------------


@asyncio_only
async def test_every_key_but_the_seal_key_expires(redis_server: RedisServer) -> None:
    async with state(redis_server, namespace()) as s:
        await s.nonces.claim("n", time.time() + 60)
        await s.visibility.show("c", ["t"])
        await _stored_in_a_session(s.events, ["e"])
        keys = [key.decode() async for key in s.client.scan_iter(match=s.key("*"))]
        assert len(keys) == 4
        for key in keys:
            expected = -1 if key == s.key("seal-key") else 1
            assert (await s.client.pttl(key) > 0) == (expected > 0), key


# -- Redis lost mid-run --------------------------------------------------------------------


@asyncio_only
async def test_redis_lost_mid_run_fails_visibly_and_recovers_on_its_own(
    own_redis: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    ns = namespace()
    async with state(own_redis, ns) as a, state(own_redis, ns) as b:
        assert a.state_key is not None
        seal = StateSeal(a.state_key, a.nonces)
        heard_a: list[Any] = []
        heard_b: list[Any] = []
        a.bus.subscribe(heard_a.append)
        b.bus.subscribe(heard_b.append)
        live = await _stored_in_a_session(a.events, ["before"])
        own_redis.stop()

        with anyio.fail_after(10):  # nothing hangs
            sealed = seal.seal({"t": "tool", "d": "d", "e": time.time() + 60, "a": []})
            with pytest.raises(MCPError, match="its one use cannot be checked now") as refused:
                await seal.spend(seal.open(sealed, tool="tool", digest="d"), tool="tool")
            assert f"Redis at {own_redis.url} failed (replay protection)" in str(refused.value)
            with pytest.raises(SharedStateError, match=r"failed \(tool visibility\)"):
                await a.visibility.shown("c")
            await a.bus.publish(ToolsListChanged())  # this replica's clients still hear it
            lost = await _stored_in_a_session(a.events, ["during"])

            async def send(event: Any) -> None:
                raise AssertionError("nothing can be replayed")

            assert await a.events.replay_events_after(live[1], send) is None
        assert heard_a == [ToolsListChanged()]
        assert all(".lost-" in event_id for event_id in lost)
        faults = a.faults
        assert faults["replay protection"] == 1
        assert faults["tool visibility"] == 1
        assert faults["list_changed"] == 1
        assert faults["event store"] == 3
        logged = [r.getMessage() for r in caplog.records if r.name == "customtools.mcp"]
        assert f"Redis at {own_redis.url} failed (replay protection): " in "\n".join(logged)

        own_redis.start()
        with anyio.fail_after(15):  # the client and the subscriptions come back by themselves
            while True:
                try:
                    await seal.spend(seal.open(sealed, tool="tool", digest="d"), tool="tool")
                    break
                except MCPError:
                    await anyio.sleep(0.1)
            while ToolsListChanged() not in heard_b:  # resubscribed: clients list again
                await anyio.sleep(0.05)
            heard_b.clear()
            await a.bus.publish(ToolsListChanged())  # and the fan-out works again
            while not heard_b:
                await anyio.sleep(0.05)
        assert "answers again (replay protection)" in "\n".join(
            r.getMessage() for r in caplog.records
        )


def test_a_fault_names_the_url_and_the_feature() -> None:
    error = RedisState("redis://127.0.0.1:1/0").fault("replay protection", TimeoutError())
    assert str(error) == (
        "Redis at redis://127.0.0.1:1/0 failed (replay protection): no answer in time"
    )


def test_the_redis_client_is_imported_only_on_its_path() -> None:
    code = (
        "import sys, customtools, customtools.mcp, customtools.cli\n"
        "from customtools.mcp import ToolServer, serve, SharedStateError, VisibilityStore\n"
        "ToolServer([])\n"
        "print('redis' in sys.modules)\n"
        "from customtools.mcp import RedisState, RedisPolicyBackend\n"
        "print('redis' in sys.modules, RedisState.__module__, RedisPolicyBackend.__module__)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "True", "customtools.mcp", "customtools.mcp"]


# -- the command line ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--redis", "redis://127.0.0.1:1/0"], "--redis applies to --http only"),
        (["--state-key-env", "X"], "--state-key-env applies to --http only"),
        (
            ["--http", "127.0.0.1:0", "--redis-namespace", "n"],
            "--redis-namespace applies with --redis only",
        ),
        (
            [
                "--http",
                "127.0.0.1:0",
                "--redis",
                "redis://127.0.0.1:1/0",
                "--redis-namespace",
                "a b",
            ],
            "--redis: Redis namespace 'a b' is not usable",
        ),
        (
            ["--http", "127.0.0.1:0", "--state-key-env", "CUSTOMTOOLS_NO_SUCH_KEY"],
            "environment variable 'CUSTOMTOOLS_NO_SUCH_KEY' is not set",
        ),
    ],
)
def test_bad_shared_state_options_are_usage_errors(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from customtools.cli import run

    assert run(["serve", "--no-entry-points", *argv]) == 2
    assert message in capsys.readouterr().err


def test_a_short_state_key_is_refused_naming_its_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from customtools.cli import run

    key = tmp_path / "state.key"
    key.write_text("short-but-sixteen-chars\n")
    key.chmod(0o600)
    argv = ["serve", "--no-entry-points", "--http", "127.0.0.1:0", "--state-key-file", str(key)]
    assert run(argv) == 2
    err = capsys.readouterr().err
    assert f"the key in {key} has 23 characters; use at least 32" in err


def test_serve_with_an_unreachable_redis_exits_naming_the_url(tmp_path: Path) -> None:
    port = free_port()
    tools = tmp_path / "tools"
    tools.mkdir()
    (tools / "loud.py").write_text("print('imported')\ndef factory(api):\n    return []\n")
    out = subprocess.run(
        serve_argv(
            str(tools),
            "--http",
            "127.0.0.1:0",
            "--redis",
            f"redis://127.0.0.1:{port}/0",
        ),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert out.returncode == 2
    assert f"Redis at redis://127.0.0.1:{port}/0 is unreachable" in out.stderr
    assert "imported" not in out.stdout + out.stderr  # checked before any tool is loaded


# -- the execution policy's stores -----------------------------------------------------------


@asyncio_only
async def test_a_shared_cap_admits_its_limit_across_replicas_first_in_first_out(
    redis_server: RedisServer,
) -> None:
    ns = namespace()
    running = peak = 0
    order: list[int] = []
    async with (
        state(redis_server, ns) as a,
        state(redis_server, ns) as b,
        RedisPolicyBackend(a) as one,
        RedisPolicyBackend(b) as two,
    ):
        gates = [one.slots.gate("tool\0x", 2), two.slots.gate("tool\0x", 2)]
        assert not gates[0].try_acquire(1)  # always taken in acquire, with one round trip

        async def call(index: int) -> None:
            nonlocal running, peak
            gate = gates[index % 2]
            await gate.acquire(1)
            order.append(index)
            running += 1
            peak = max(peak, running)
            await anyio.sleep(0.01)
            running -= 1
            await gate.release(1)

        with anyio.fail_after(30):
            async with anyio.create_task_group() as group:
                for index in range(20):
                    group.start_soon(call, index)
                    await anyio.sleep(0)
        assert peak == 2
        assert sorted(order) == list(range(20))
        local = [[i for i in order if i % 2 == side] for side in (0, 1)]
        assert local == [sorted(local[0]), sorted(local[1])]  # each replica: first in, first out


@asyncio_only
async def test_a_cancelled_wait_leaves_the_line_and_a_dead_replicas_slots_come_back(
    redis_server: RedisServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(redis_module, "LEASE", 0.3)  # a lease the test can outlive
    ns = namespace()
    async with (
        state(redis_server, ns) as a,
        state(redis_server, ns) as b,
        RedisPolicyBackend(b) as two,
    ):
        waiter = two.slots.gate("host", 1)
        async with RedisPolicyBackend(a) as one:
            with anyio.fail_after(10):
                await one.slots.gate("host", 1).acquire(1)  # never given back: a dead replica
            with anyio.move_on_after(0.2) as waited:
                await waiter.acquire(1)
            assert waited.cancelled_caught
            assert await b.client.zcard(b.key("gate", waiter.id, "line")) == 0  # it left
        # The dead replica's lease ran out (it renews no more): the slot is free again.
        with anyio.fail_after(10):
            await waiter.acquire(1)
        await waiter.release(1)


@asyncio_only
async def test_rates_results_and_the_cache_are_shared_by_replicas(
    redis_server: RedisServer,
) -> None:
    ns = namespace()
    result = ToolResult.from_text("hello", meta={"k": 1})
    async with (
        state(redis_server, ns) as a,
        state(redis_server, ns) as b,
        RedisPolicyBackend(a) as one,
        RedisPolicyBackend(b) as two,
    ):
        assert [await one.rates.take("r", 2, 60), await two.rates.take("r", 2, 60)] == [0.0, 0.0]
        assert 59 < await two.rates.take("r", 2, 60) <= 60  # the third call, on either replica

        handle = await one.results.put("the whole result", "alice", 60)
        assert await two.results.get(handle, "alice") == "the whole result"
        assert await two.results.get(handle, "bob") is None  # never another caller's
        assert await two.results.get(handle, None) is None
        assert await two.results.get("r-../../etc", "alice") is None

        key = ("alice", (("q", 1),))
        await one.cache.put("pack\0tool", "digest-1", key, result, 10, 60)
        assert await two.cache.get("pack\0tool", "digest-1", key) == result
        assert await two.cache.get("pack\0tool", "digest-2", key) is None  # the pack changed
        assert await two.cache.get("pack\0tool", "digest-1", ("bob", (("q", 1),))) is None
        await one.cache.put("pack\0tool", "digest-1", ("big",), result, 32 << 20, 60)
        assert await two.cache.get("pack\0tool", "digest-1", ("big",)) is None  # too big
    keys = await redis_keys(redis_server, ns)
    del keys[f"customtools:{ns}:seal-key"]  # the deployment's, kept
    assert keys
    assert all(ttl > 0 for ttl in keys.values()), keys  # everything else expires


async def redis_keys(server: RedisServer, ns: str) -> dict[str, int]:
    async with state(server, "probe") as probe:
        names = [name async for name in probe.client.scan_iter(f"customtools:{ns}:*")]
        return {name.decode(): await probe.client.pttl(name) for name in names}


@asyncio_only
async def test_a_capped_call_is_refused_while_redis_is_down_and_runs_once_it_is_back(
    own_redis: RedisServer,
) -> None:
    async def execute(call_id: str, params: Any, on_update: Any, ctx: Any, signal: Any) -> str:
        return "ran"

    tool = CustomTool(
        name="capped", label="Capped", description="Runs.", parameters={}, execute=execute
    )
    async with state(own_redis, namespace()) as shared, RedisPolicyBackend(shared) as backend:
        adapter = CustomToolAdapter(tool, policy=Policy(max_concurrent=1, backend=backend))
        assert (await adapter.execute("1", {})).text == "ran"
        own_redis.stop()
        with anyio.fail_after(10):
            refused = await adapter.execute("2", {})
        assert refused.is_error
        assert refused.details["error"] == "PolicyRefused"
        assert refused.details["code"] == "policy-unavailable"
        assert f"Redis at {own_redis.url} failed (execution policy)" in refused.text
        own_redis.start()
        with anyio.fail_after(10):
            assert (await adapter.execute("3", {})).text == "ran"  # reconnected by itself
