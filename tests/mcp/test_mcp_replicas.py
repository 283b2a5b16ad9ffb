"""``customtools serve --http`` replicas behind a round-robin proxy (servers/rrproxy.py),
sharing a seal key or a real Redis server: what docs/deploy.md promises, end to end. Three
replicas where every one must take part (a replay refused by each, a change heard by the
clients of each); two where a request only has to reach "another" replica (each replica
costs a process start, about 1.5 s of CPU).

The replicas and the proxy are subprocesses on loopback ports; the client runs on asyncio
only (what is tested is the servers' behaviour, and each test starts its replicas).
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp_helpers import PACK, ROOT, _listening, child_env, serve_argv
from redis_helpers import RedisServer, namespace, require_redis_binary

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.parametrize("anyio_backend", ["asyncio"]),
    pytest.mark.timeout(180),  # servers start per test: slow on a loaded machine
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
]

TALKPACK = Path(__file__).resolve().parent / "talkpack"
PROXY = Path(__file__).resolve().parent / "servers" / "rrproxy.py"
ACCEPT_USER = types.ElicitResult(
    action="accept", content={"username": "ada", "email": "ada@example.org"}
)
USER_ANSWER = "User response: <accept, {'username': 'ada', 'email': 'ada@example.org'}>"


@pytest.fixture(scope="module")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    server = RedisServer(require_redis_binary(), tmp_path_factory.mktemp("redis"))
    server.start()
    try:
        yield server
    finally:
        server.stop()


@dataclass
class Replica:
    url: str  # the MCP endpoint
    base: str  # scheme://host:port, for the proxy
    process: Any
    log: Path

    def stderr(self) -> str:
        return self.log.read_text(errors="replace")


async def _stop(processes: list[Any]) -> None:
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


@asynccontextmanager
async def replicas(tmp_path: Path, *argvs: list[str]) -> AsyncIterator[list[Replica]]:
    """One ``customtools serve --http`` per argument list, each on the port the system gives
    it (``127.0.0.1:0``, read from the server's "listening on" line)."""
    started: list[Replica] = []
    try:
        for index, args in enumerate(argvs):
            log = tmp_path / f"replica{index}.log"
            with log.open("wb") as sink:
                process = await anyio.open_process(
                    serve_argv(*args, "--http", "127.0.0.1:0"),
                    stdin=None,
                    stdout=None,
                    stderr=sink,
                    cwd=str(ROOT),
                    env=child_env(),
                )
            started.append(Replica("", "", process, log))
        with anyio.fail_after(60):
            for replica in started:
                replica.url = await _listening(replica.log, replica.process)
                replica.base = replica.url.rsplit("/", 1)[0]
        yield started
    finally:
        await _stop([replica.process for replica in started])


@asynccontextmanager
async def proxy(backends: list[Replica]) -> AsyncIterator[str]:
    """The round-robin proxy in front of ``backends`` (on a port the system gives it, which
    it prints); yields its MCP endpoint."""
    process = await anyio.open_process(
        [sys.executable, str(PROXY), *(b.base for b in backends)],
        stdin=None,
        stderr=None,
        cwd=str(ROOT),
        env=child_env(),
    )
    try:
        assert process.stdout is not None
        line = b""
        with anyio.fail_after(60):
            while not line.endswith(b"\n"):
                chunk = await process.stdout.receive(64)
                line += chunk
        yield f"http://127.0.0.1:{int(line)}/mcp"
    finally:
        await _stop([process])


async def proxy_log(endpoint: str) -> list[dict[str, Any]]:
    async with httpx2.AsyncClient(timeout=10) as http:
        return list((await http.get(endpoint.replace("/mcp", "/_proxy/log"))).json())


async def drop_streams(endpoint: str) -> int:
    async with httpx2.AsyncClient(timeout=10) as http:
        return int((await http.post(endpoint.replace("/mcp", "/_proxy/drop"))).json()["dropped"])


def calls(log: list[dict[str, Any]]) -> list[int]:
    """The backends that got the ``tools/call`` requests, in order."""
    return [entry["backend"] for entry in log if entry["method"] == "tools/call"]


async def elicit(_ctx: Any, _params: Any) -> types.ElicitResult:
    return ACCEPT_USER


def text(result: Any) -> str:
    return str(result.content[0].text)


def key_file(tmp_path: Path) -> Path:
    path = tmp_path / "state.key"
    path.write_text("k" * 43 + "\n")
    path.chmod(0o600)
    return path


# -- the 2026-07-28 era: any replica answers any request -----------------------------------


async def test_a_talk_back_retry_on_another_replica_completes_with_a_shared_key(
    tmp_path: Path,
) -> None:
    args = [str(TALKPACK), "--stateless", "--state-key-file", str(key_file(tmp_path))]
    async with replicas(tmp_path, args, args) as two, proxy(two) as endpoint:
        async with Client(endpoint, mode="auto", elicitation_callback=elicit) as client:
            with anyio.fail_after(30):
                result = await client.call_tool("test_elicitation", {"message": "Who?"})
        assert text(result) == USER_ANSWER
        question, retry = calls(await proxy_log(endpoint))
        assert question != retry  # the retry was opened by another replica


async def test_with_redis_a_replayed_request_state_is_refused_by_every_replica(
    tmp_path: Path, redis_server: RedisServer
) -> None:
    shared = ["--redis", redis_server.url, "--redis-namespace", namespace()]
    args = [str(TALKPACK), "--stateless", *shared]  # no key given: the deployment's, in Redis
    async with replicas(tmp_path, args, args, args) as three, proxy(three) as endpoint:
        async with Client(endpoint, mode="auto", elicitation_callback=elicit) as client:
            with anyio.fail_after(30):
                asked = await client.session.call_tool(
                    "test_elicitation", {"message": "Who?"}, allow_input_required=True
                )
                assert isinstance(asked, types.InputRequiredResult)
                (key,) = asked.input_requests
                retry = {
                    "request_state": asked.request_state,
                    "input_responses": {key: ACCEPT_USER},
                    "allow_input_required": True,
                }
                done = await client.session.call_tool(
                    "test_elicitation", {"message": "Who?"}, **retry
                )
        assert text(done) == USER_ANSWER
        question, answered = calls(await proxy_log(endpoint))
        assert question != answered
        for replica in three:
            async with Client(replica.url, mode="auto") as direct:
                with anyio.fail_after(30), pytest.raises(MCPError, match="already used"):
                    await direct.session.call_tool("test_elicitation", {"message": "Who?"}, **retry)


async def test_a_change_on_one_replica_notifies_the_clients_of_all_three(
    tmp_path: Path, redis_server: RedisServer
) -> None:
    shared = ["--redis", redis_server.url, "--redis-namespace", namespace()]
    dirs = []
    for index in range(3):
        tools = tmp_path / f"tools{index}"
        shutil.copytree(PACK, tools, ignore=shutil.ignore_patterns("__pycache__"))
        dirs.append(tools)
    argvs = [[str(dirs[0]), "--reload", *shared]] + [[str(d), *shared] for d in dirs[1:]]
    heard = {"handshake": anyio.Event()}

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            heard["handshake"].set()

    async with (
        replicas(tmp_path, *argvs) as three,
        Client(three[1].url, mode="auto") as modern_1,
        Client(three[2].url, mode="auto") as modern_2,
        Client(three[2].url, mode="legacy", message_handler=on_message) as legacy_2,
        modern_1.listen(tools_list_changed=True) as events_1,
        modern_2.listen(tools_list_changed=True) as events_2,
    ):
        await legacy_2.list_tools()  # the handshake is complete
        await anyio.sleep(0.5)  # replica 0's watcher is up
        (dirs[0] / "echo.py").write_text((dirs[0] / "echo.py").read_text() + "\n# changed\n")
        with anyio.fail_after(30):
            assert isinstance(await events_1.__anext__(), type(await events_2.__anext__()))
            await heard["handshake"].wait()


async def test_a_replica_killed_mid_call_leaves_the_retry_to_another(
    tmp_path: Path, redis_server: RedisServer
) -> None:
    args = [str(PACK), "--stateless", "--redis", redis_server.url, "--redis-namespace", namespace()]
    started = anyio.Event()

    async def progressed(progress: float, total: float | None, message: str | None) -> None:
        started.set()

    async with replicas(tmp_path, args, args) as two, proxy(two) as endpoint:
        async with Client(endpoint, mode="auto", read_timeout_seconds=20) as client:
            with anyio.fail_after(60):
                async with anyio.create_task_group() as group:
                    outcome: list[Any] = []

                    async def long_call() -> None:
                        try:
                            outcome.append(
                                await client.call_tool(
                                    "steps", {"n": 200, "pause": 0.1}, progress_callback=progressed
                                )
                            )
                        except Exception as exc:  # whatever the client raises for a lost peer
                            outcome.append(exc)

                    group.start_soon(long_call)
                    await started.wait()
                    (victim,) = calls(await proxy_log(endpoint))
                    two[victim].process.kill()
                assert len(outcome) == 1
                assert isinstance(outcome[0], Exception) or outcome[0].is_error
                retried = await client.call_tool("steps", {"n": 2})
        assert text(retried) == "done 2"
        assert calls(await proxy_log(endpoint))[-1] != victim


# -- the handshake era: sticky sessions, resumable streams ---------------------------------


async def test_a_dropped_handshake_stream_resumes_from_the_event_store(
    tmp_path: Path, redis_server: RedisServer
) -> None:
    args = [str(PACK), "--redis", redis_server.url, "--redis-namespace", namespace()]
    seen: list[str | None] = []
    endpoint_box: list[str] = []

    async def progressed(progress: float, total: float | None, message: str | None) -> None:
        seen.append(message)
        if progress == 2:  # the connection drops; the tool goes on meanwhile
            assert await drop_streams(endpoint_box[0]) >= 1

    async with replicas(tmp_path, args, args) as two, proxy(two) as endpoint:
        endpoint_box.append(endpoint)
        async with Client(endpoint, mode="legacy") as client:
            with anyio.fail_after(30):
                result = await client.call_tool(
                    "steps", {"n": 6, "pause": 0.15}, progress_callback=progressed
                )
                assert text(result) == "done 6"
                assert seen == [f"step {i}" for i in range(1, 7)]
            replays = [e for e in await proxy_log(endpoint) if e["http"] == "GET"]
            assert replays  # the client came back with Last-Event-ID
            (home,) = {e["backend"] for e in await proxy_log(endpoint) if e["method"]}
            two[home].process.kill()  # its replica is gone, and the session with it
            with anyio.fail_after(30), pytest.raises(MCPError) as lost:
                await client.call_tool("steps", {"n": 1})
            assert lost.value.code == types.INVALID_REQUEST  # the session is unknown
        async with Client(endpoint, mode="legacy") as again:  # a new session recovers
            with anyio.fail_after(30):
                assert text(await again.call_tool("steps", {"n": 1})) == "done 1"


# -- Redis restarted mid-run ---------------------------------------------------------------


async def test_calls_go_on_while_redis_restarts_and_nothing_hangs(tmp_path: Path) -> None:
    own = RedisServer(require_redis_binary(), tmp_path, unix=True)  # restarted at the same path
    own.start()
    try:
        args = [str(TALKPACK), "--stateless", "--redis", own.url, "--redis-namespace", "r"]
        async with (
            replicas(tmp_path, args, args) as two,
            proxy(two) as endpoint,
            Client(endpoint, mode="auto", elicitation_callback=elicit) as client,
        ):
            with anyio.fail_after(30):
                assert text(await client.call_tool("test_elicitation", {"message": "a"}))
            own.stop()
            with anyio.fail_after(30):
                logged = await client.call_tool("test_tool_with_logging", {})
                assert logged.is_error is False  # a call without talk-back needs no Redis
                with pytest.raises(MCPError, match="its one use cannot be checked now"):
                    await client.call_tool("test_elicitation", {"message": "b"})
            own.start()
            with anyio.fail_after(30):
                while True:  # the replicas reconnect by themselves
                    try:
                        result = await client.call_tool("test_elicitation", {"message": "c"})
                        break
                    except MCPError:
                        await anyio.sleep(0.2)
            assert text(result) == USER_ANSWER
        logs = "".join(replica.stderr() for replica in two)
        assert f"Redis at {own.url} failed (replay protection)" in logs
    finally:
        own.stop()
