"""``customtools serve --http`` replicas behind a round-robin proxy (servers/rrproxy.py),
sharing a seal key or a real Redis server: what docs/deploy.md promises, end to end.

Each replica costs a process start (about 1.5 s of CPU), so the tests that stop nothing share
one deployment per module: three replicas on one Redis behind one proxy (a replay refused by
each, a change heard by the clients of each, a dropped stream resumed). The tests that kill a
replica or restart Redis start their own two. The checks on the shared deployment are one
test, so that under pytest-xdist it starts once (two tests may land in two workers).

The replicas and the proxy are subprocesses on loopback ports; the client runs on asyncio
only (what is tested is the servers' behaviour).
"""

from __future__ import annotations

import json
import re
import select
import shutil
import subprocess
import time
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
from mcp_helpers import PACK, ROOT, _listening, child_env, serve_argv, stop_processes
from redis_helpers import RedisServer, namespace, require_redis_binary
from zygote import python_argv

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.parametrize("anyio_backend", ["asyncio"]),
    pytest.mark.timeout(180),  # servers start: slow on a loaded machine
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

    async def kill(self) -> None:
        """SIGKILL the replica and wait (at most 10 s) until its port refuses connections: a
        server forked by the zygote dies just after the client process the test holds."""
        self.process.kill()
        host, port = self.base.split("://", 1)[1].rsplit(":", 1)
        with anyio.fail_after(10):
            while True:
                try:
                    stream = await anyio.connect_tcp(host, int(port))
                except OSError:
                    return
                await stream.aclose()
                await anyio.sleep(0.02)


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
        await stop_processes([replica.process for replica in started])


@asynccontextmanager
async def proxy(backends: list[Replica]) -> AsyncIterator[str]:
    """The round-robin proxy in front of ``backends`` (on a port the system gives it, which
    it prints); yields its MCP endpoint."""
    process = await anyio.open_process(
        python_argv(str(PROXY), *(b.base for b in backends)),
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
        await stop_processes([process])


def _wait_listening(log: Path, process: subprocess.Popen[bytes], deadline: float) -> str:
    while time.monotonic() < deadline:
        found = re.search(r"listening on (\S+)", log.read_text(errors="replace"))
        if found:
            return found.group(1)
        if process.poll() is not None:
            raise RuntimeError(f"the server exited with {process.returncode}: {log.read_text()}")
        time.sleep(0.05)
    raise TimeoutError(f"no 'listening on' line in {log}")


def _stop_now(processes: list[subprocess.Popen[bytes]]) -> None:
    for process in processes:
        if process.poll() is None:
            process.terminate()
    for process in processes:
        try:
            process.wait(5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@dataclass
class Deployment:
    replicas: list[Replica]
    endpoint: str  # the proxy's MCP endpoint
    dirs: list[Path]  # each replica's copy of PACK; replica 0 reloads its own
    counts: Path  # what the counted tool (one file, served by all three) saw
    redis: str  # the Redis URL
    namespace: str


@pytest.fixture(scope="module")
def deployment(
    tmp_path_factory: pytest.TempPathFactory, redis_server: RedisServer
) -> Iterator[Deployment]:
    """Three stateful replicas (2026-07-28 requests go anywhere, handshake sessions stick) on
    one Redis namespace, each serving TALKPACK, its own copy of PACK and the one counted tool
    with tool search (every tool stays callable by name) and a cap of 4 calls per tool, behind
    the proxy."""
    tmp = tmp_path_factory.mktemp("deployment")
    ns = namespace()
    counted = tmp / "counted"
    counted.mkdir()
    (counted / "counted.py").write_text(COUNTING_TOOL)
    (counted / "counts.json").write_text('{"running": 0, "peak": 0, "calls": 0}')
    shared = [
        "--redis", redis_server.url, "--redis-namespace", ns, "--tool-search",
        "--policy", '{"maxConcurrent": 4, "queueTimeout": 120}',
    ]  # fmt: skip
    processes: list[subprocess.Popen[bytes]] = []
    started: list[Replica] = []
    dirs: list[Path] = []
    try:
        for index in range(3):
            tools = tmp / f"tools{index}"
            shutil.copytree(PACK, tools, ignore=shutil.ignore_patterns("__pycache__"))
            dirs.append(tools)
            log = tmp / f"replica{index}.log"
            reload = ["--reload"] if index == 0 else []
            paths = [str(TALKPACK), str(tools), str(counted)]
            argv = serve_argv(*paths, *reload, *shared, "--http", "127.0.0.1:0")
            with log.open("wb") as sink:
                process = subprocess.Popen(argv, stderr=sink, cwd=ROOT, env=child_env())
            processes.append(process)
            started.append(Replica("", "", process, log))
        deadline = time.monotonic() + 60
        for replica in started:
            replica.url = _wait_listening(replica.log, replica.process, deadline)
            replica.base = replica.url.rsplit("/", 1)[0]
        balancer = subprocess.Popen(
            python_argv(str(PROXY), *(r.base for r in started)),
            stdout=subprocess.PIPE,
            cwd=ROOT,
            env=child_env(),
        )
        processes.append(balancer)
        assert balancer.stdout is not None
        ready, _, _ = select.select([balancer.stdout], [], [], 60)
        assert ready, "the proxy printed no port"
        port = int(balancer.stdout.readline())
        yield Deployment(
            started, f"http://127.0.0.1:{port}/mcp", dirs, counted / "counts.json",
            redis_server.url, ns,
        )  # fmt: skip
    finally:
        _stop_now(processes)
        for process in processes:
            if process.stdout is not None:
                process.stdout.close()


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


# -- a shared key, no Redis ----------------------------------------------------------------


async def test_with_a_shared_key_a_retry_completes_on_another_replica_and_sessions_stay_home(
    tmp_path: Path,
) -> None:
    args = [str(TALKPACK), str(PACK), "--state-key-file", str(key_file(tmp_path))]
    async with replicas(tmp_path, args, args) as two, proxy(two) as endpoint:
        async with Client(endpoint, mode="auto", elicitation_callback=elicit) as client:
            with anyio.fail_after(30):
                result = await client.call_tool("test_elicitation", {"message": "Who?"})
        assert text(result) == USER_ANSWER
        question, retry = calls(await proxy_log(endpoint))
        assert question != retry  # the retry was opened by another replica

        # A handshake-era session lives in one replica: gone with it, and a new one recovers.
        before = len(await proxy_log(endpoint))
        async with Client(endpoint, mode="legacy") as legacy:
            with anyio.fail_after(30):
                assert text(await legacy.call_tool("steps", {"n": 1})) == "done 1"
            log = (await proxy_log(endpoint))[before:]
            (home,) = {e["backend"] for e in log if e["method"]}
            await two[home].kill()
            with anyio.fail_after(30), pytest.raises(MCPError) as lost:
                await legacy.call_tool("steps", {"n": 1})
            assert lost.value.code == types.INVALID_REQUEST  # the session is unknown
        async with Client(endpoint, mode="legacy") as again:
            with anyio.fail_after(30):
                assert text(await again.call_tool("steps", {"n": 1})) == "done 1"


# -- three replicas sharing one Redis (one deployment for the module) ----------------------


async def test_three_replicas_on_one_redis(deployment: Deployment) -> None:
    """Each check leaves the deployment as it found it (only replica 0's echo.py changes)."""
    await _a_retry_completes_anywhere_and_its_replay_is_refused_by_every_replica(deployment)
    await _a_change_on_one_replica_notifies_the_clients_of_all_three(deployment)
    await _a_dropped_handshake_stream_resumes_from_the_event_store(deployment)
    await _what_a_session_found_is_listed_to_it_from_redis(deployment)
    await _a_cap_of_4_holds_across_the_three_under_200_concurrent_calls(deployment)


async def _a_retry_completes_anywhere_and_its_replay_is_refused_by_every_replica(
    deployment: Deployment,
) -> None:
    endpoint = deployment.endpoint
    before = len(calls(await proxy_log(endpoint)))
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
            done = await client.session.call_tool("test_elicitation", {"message": "Who?"}, **retry)
    assert text(done) == USER_ANSWER  # no key given: the deployment's, in Redis
    question, answered = calls(await proxy_log(endpoint))[before:]
    assert question != answered
    for replica in deployment.replicas:
        async with Client(replica.url, mode="auto") as direct:
            with anyio.fail_after(30), pytest.raises(MCPError, match="already used"):
                await direct.session.call_tool("test_elicitation", {"message": "Who?"}, **retry)


async def _a_change_on_one_replica_notifies_the_clients_of_all_three(
    deployment: Deployment,
) -> None:
    three, changed = deployment.replicas, deployment.dirs[0] / "echo.py"
    heard = {"handshake": anyio.Event()}

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            heard["handshake"].set()

    async with (
        Client(three[1].url, mode="auto") as modern_1,
        Client(three[2].url, mode="auto") as modern_2,
        Client(three[2].url, mode="legacy", message_handler=on_message) as legacy_2,
        modern_1.listen(tools_list_changed=True) as events_1,
        modern_2.listen(tools_list_changed=True) as events_2,
    ):
        await legacy_2.list_tools()  # the handshake is complete
        await anyio.sleep(0.5)  # replica 0's watcher is up
        changed.write_text(changed.read_text() + "\n# changed\n")
        with anyio.fail_after(30):
            assert isinstance(await events_1.__anext__(), type(await events_2.__anext__()))
            await heard["handshake"].wait()


async def _a_dropped_handshake_stream_resumes_from_the_event_store(
    deployment: Deployment,
) -> None:
    endpoint = deployment.endpoint
    seen: list[str | None] = []

    async def progressed(progress: float, total: float | None, message: str | None) -> None:
        seen.append(message)
        if progress == 2:  # the connection drops; the tool goes on meanwhile
            assert await drop_streams(endpoint) >= 1

    before = len(await proxy_log(endpoint))
    async with Client(endpoint, mode="legacy") as client:
        with anyio.fail_after(30):
            result = await client.call_tool(
                "steps", {"n": 6, "pause": 0.15}, progress_callback=progressed
            )
    assert text(result) == "done 6"
    assert seen == [f"step {i}" for i in range(1, 7)]
    log = (await proxy_log(endpoint))[before:]
    assert [e for e in log if e["http"] == "GET"]  # the client came back with Last-Event-ID
    assert len({e["backend"] for e in log if e["method"]}) == 1  # on its session's replica


async def _what_a_session_found_is_listed_to_it_from_redis(deployment: Deployment) -> None:
    # A session stays on its replica; its found tools are kept in Redis, where a principal's
    # are read by every replica (test_mcp_redis.py: an OAuth principal across two replicas).
    from customtools.mcp._redis import RedisState

    async with Client(deployment.endpoint, mode="legacy") as client:
        with anyio.fail_after(30):
            listed = [t.name for t in (await client.list_tools()).tools]
            assert listed == ["search_tools", "read_result"]  # the policy's, always listed
            await client.call_tool("search_tools", {"query": "steps", "limit": 1})
            found = {t.name for t in (await client.list_tools()).tools}
            assert found == {*listed, "steps"}
    async with RedisState(deployment.redis, namespace=deployment.namespace) as shared:
        stored = [key async for key in shared.client.scan_iter(match=shared.key("visible", "*"))]
        assert len(stored) == 1
        assert await shared.client.smembers(stored[0]) == {b"steps"}


# A tool that counts the calls running at once in every process, in a file beside it. The
# first four calls wait until four run at once (bounded): the cap admits four, whatever the
# machine's speed, and the peak is then exactly what the cap allows.
COUNTING_TOOL = """
import fcntl
import json
from pathlib import Path

import anyio

from customtools import CustomTool

COUNTS = Path(__file__).with_name("counts.json")


def _count(step):
    with COUNTS.open("r+") as file:
        fcntl.flock(file, fcntl.LOCK_EX)
        counts = json.load(file)
        counts["running"] += step
        counts["peak"] = max(counts["peak"], counts["running"])
        counts["calls"] += step > 0
        file.seek(0)
        file.truncate()
        json.dump(counts, file)
        return counts


def factory(api):
    async def execute(call_id, params, on_update, ctx, signal):
        counts = _count(1)
        try:
            if counts["calls"] <= 4:
                with anyio.fail_after(60):
                    while _count(0)["running"] < 4:
                        await anyio.sleep(0.01)
            else:
                await anyio.sleep(0.005)
        finally:
            _count(-1)
        return "counted"

    return CustomTool(
        name="counted",
        label="Counted",
        description="Counts the calls running at once.",
        parameters={"type": "object", "properties": {}},
        execute=execute,
    )
"""


async def _a_cap_of_4_holds_across_the_three_under_200_concurrent_calls(
    deployment: Deployment,
) -> None:
    # With each replica's own caps the peak is 12; with the caps in Redis, 4.
    results: list[Any] = []
    before = len(await proxy_log(deployment.endpoint))
    async with Client(deployment.endpoint, mode="auto", read_timeout_seconds=120) as client:

        async def one() -> None:
            results.append(await client.call_tool("counted", {}))

        with anyio.fail_after(150):
            async with anyio.create_task_group() as group:
                for _ in range(200):
                    group.start_soon(one)
    log = (await proxy_log(deployment.endpoint))[before:]
    assert [text(result) for result in results] == ["counted"] * 200
    assert set(calls(log)) == {0, 1, 2}  # every replica ran calls
    assert json.loads(deployment.counts.read_text()) == {"running": 0, "peak": 4, "calls": 200}


# -- a replica killed, Redis restarted -----------------------------------------------------


async def test_calls_go_on_while_redis_restarts_and_after_a_replica_is_killed_mid_call(
    tmp_path: Path,
) -> None:
    own = RedisServer(require_redis_binary(), tmp_path, unix=True)  # restarted at the same path
    own.start()
    started = anyio.Event()

    async def progressed(progress: float, total: float | None, message: str | None) -> None:
        started.set()

    try:
        args = [str(TALKPACK), str(PACK), "--stateless", "--redis", own.url]
        async with (
            replicas(tmp_path, args, args) as two,
            proxy(two) as endpoint,
            Client(
                endpoint, mode="auto", elicitation_callback=elicit, read_timeout_seconds=20
            ) as client,
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

            # A replica killed mid-call: that call fails, the next one goes to the other.
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
                    victim = calls(await proxy_log(endpoint))[-1]
                    await two[victim].kill()
                assert len(outcome) == 1
                assert isinstance(outcome[0], Exception) or outcome[0].is_error
                retried = await client.call_tool("steps", {"n": 2})
            assert text(retried) == "done 2"
            assert calls(await proxy_log(endpoint))[-1] != victim
        logs = "".join(replica.stderr() for replica in two)
        assert f"Redis at {own.url} failed (replay protection)" in logs
    finally:
        own.stop()
