"""How ``serve --http`` is protected (review M1): DNS-rebinding checks on every bind, bearer
tokens, and refusal to serve a non-loopback address unauthenticated.

Real loopback HTTP requests to a real ``customtools serve`` subprocess. Nothing here binds a
non-loopback address: the refusals happen before any socket is opened.
"""

from __future__ import annotations

import functools
import gc
import os
import socket
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp_helpers import PACK, http_server

from customtools.cli import run
from customtools.mcp import HttpSecurity, ToolServer, is_loopback, read_token

pytestmark = pytest.mark.anyio

TOKEN = "t0ken-for-the-tests-only-0123456789"
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "probe", "version": "1"},
    },
}
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


@pytest.fixture
def collect_garbage() -> Iterator[None]:
    yield
    gc.collect()


@asynccontextmanager
async def served(
    host: str,
    *args: str,
    pack: Path = PACK,
    env: dict[str, str] | None = None,
    max_files: tuple[int, int] | None = None,
) -> AsyncIterator[str]:
    """``customtools serve --http`` on a loopback ``host`` (with the soft and hard open-file
    limits ``max_files`` when given); yields the URL; always stopped."""
    async with http_server(str(pack), *args, host=host, env=env, max_files=max_files) as url:
        yield url


async def post(url: str, headers: dict[str, str]) -> httpx2.Response:
    async with httpx2.AsyncClient(timeout=10) as http:
        with anyio.fail_after(15):
            return await http.post(url, json=INIT, headers={**ACCEPT, **headers})


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
@pytest.mark.usefixtures("collect_garbage")
async def test_every_loopback_bind_checks_host_and_origin() -> None:
    # The review's reproduction: 127.0.0.2 is loopback but was not in the SDK's list.
    async with served("127.0.0.2") as url:
        rebinding = await post(url, {"Host": "attacker.example"})
        assert rebinding.status_code == 421
        origin = await post(url, {"Origin": "http://attacker.example"})
        assert origin.status_code == 403
        own = await post(url, {"Origin": "http://127.0.0.2:1"})
        assert own.status_code == 200
        assert "serverInfo" in own.text


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
@pytest.mark.usefixtures("collect_garbage")
async def test_a_bearer_token_is_required_and_checked() -> None:
    env = {"CT_TEST_TOKEN": TOKEN}
    async with served("127.0.0.2", "--token-env", "CT_TEST_TOKEN", env=env) as url:
        missing = await post(url, {})
        assert missing.status_code == 401
        assert missing.headers["www-authenticate"].startswith("Bearer")
        wrong = await post(url, {"Authorization": f"Bearer {TOKEN[:-1]}x"})
        assert wrong.status_code == 401
        other_scheme = await post(url, {"Authorization": f"Basic {TOKEN}"})
        assert other_scheme.status_code == 401
        # Authentication does not switch the rebinding checks off.
        host = await post(url, {"Authorization": f"Bearer {TOKEN}", "Host": "attacker.example"})
        assert host.status_code == 421
        right = await post(url, {"Authorization": f"Bearer {TOKEN}"})
        assert right.status_code == 200
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=10)
        async with http, Client(streamable_http_client(url, http_client=http)) as client:
            with anyio.fail_after(15):
                result = await client.call_tool("echo", {"text": "authorised"})
        assert result.content[0].text == "authorised"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("argv", "needs"),
    [
        (["--http", "0.0.0.0:0"], ["--token-file", "--allowed-host"]),
        (["--http", "[::]:0", "--allowed-host", "tools.example"], ["--token-file"]),
        (["--http", "192.0.2.1:0", "--token-env", "CT_TEST_TOKEN"], ["--allowed-host"]),
        (["--http", "example.com:0", "--token-env", "CT_TEST_TOKEN"], ["--allowed-host"]),
    ],
)
def test_a_non_loopback_bind_without_protection_refuses_to_start(
    argv: list[str],
    needs: list[str],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CT_TEST_TOKEN", TOKEN)
    assert run(["serve", "--no-entry-points", str(PACK), *argv]) == 2
    err = capsys.readouterr().err
    assert "refusing to serve HTTP" in err
    assert "not a loopback address" in err
    for flag in needs:
        assert flag in err


def test_token_flags_need_http(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["serve", "--token-env", "X"]) == 2
    assert "--token-env applies to --http only" in capsys.readouterr().err


def test_an_embedding_host_gets_the_same_refusal() -> None:
    server = ToolServer()
    with pytest.raises(ValueError, match="not a loopback address"):
        server.streamable_http_app(host="0.0.0.0")
    with pytest.raises(ValueError, match="allowed-host"):
        server.streamable_http_app(host="10.1.2.3", security=HttpSecurity(bearer_token=TOKEN))
    app = server.streamable_http_app(
        host="10.1.2.3",
        security=HttpSecurity(bearer_token=TOKEN, allowed_hosts=["tools.example"]),
    )
    assert app is not None


def test_transport_settings_list_loopback_the_bound_host_and_the_allowed_values() -> None:
    settings = HttpSecurity(
        allowed_hosts=["tools.example", "other.example:8443"],
        allowed_origins=["https://app.example"],
    ).transport_settings("127.0.0.5")
    assert settings.enable_dns_rebinding_protection
    assert {"127.0.0.1:*", "localhost:*", "[::1]:*", "127.0.0.5:*"} <= set(settings.allowed_hosts)
    assert {"127.0.0.1", "localhost", "127.0.0.5"} <= set(settings.allowed_hosts)  # port 80
    assert {"tools.example", "tools.example:*", "other.example:8443"} <= set(settings.allowed_hosts)
    assert "other.example:8443:*" not in settings.allowed_hosts
    assert {"https://app.example", "https://app.example:*"} <= set(settings.allowed_origins)
    wildcard = HttpSecurity().transport_settings("0.0.0.0")
    assert not any(h.startswith("0.0.0.0") for h in wildcard.allowed_hosts)


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.0.0.2", True),
        ("127.255.255.254", True),
        ("::1", True),
        ("[::1]", True),
        ("::ffff:127.0.0.9", True),
        ("localhost", True),
        ("LOCALHOST.", True),
        ("0.0.0.0", False),
        ("::", False),
        ("128.0.0.1", False),
        ("localhost.example.com", False),
        ("10.0.0.1", False),
        ("", False),
    ],
)
def test_loopback_is_127_slash_8_and_ipv6_one(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_tokens_are_read_from_a_private_file_or_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = tmp_path / "token"
    secret.write_text(f"  {TOKEN}\n")
    secret.chmod(0o600)
    assert read_token(file=secret) == TOKEN
    secret.chmod(0o644)
    with pytest.raises(ValueError, match="chmod 600"):
        read_token(file=secret)
    secret.chmod(0o600)
    secret.write_text("short\n")
    with pytest.raises(ValueError, match="at least 16 characters"):
        read_token(file=secret)
    with pytest.raises(ValueError, match="cannot be read"):
        read_token(file=tmp_path / "missing")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo, 0o600)
    with pytest.raises(ValueError, match="not a regular file"):
        read_token(file=fifo)  # never blocks on the pipe
    monkeypatch.setenv("CT_TEST_TOKEN", TOKEN)
    assert read_token(env="CT_TEST_TOKEN") == TOKEN
    assert "CT_TEST_TOKEN" not in os.environ  # read once, then gone from the environment
    with pytest.raises(ValueError, match="is not set"):
        read_token(env="CT_TEST_TOKEN")
    with pytest.raises(ValueError, match="exactly one"):
        read_token()


def test_the_token_is_not_in_the_repr() -> None:
    assert TOKEN not in repr(HttpSecurity(bearer_token=TOKEN))


def test_a_verifier_needs_auth_settings_and_excludes_a_token() -> None:
    class Verifier:
        async def verify_token(self, token: str) -> Any:
            return None

    with pytest.raises(ValueError, match="AuthSettings"):
        HttpSecurity(token_verifier=Verifier())
    with pytest.raises(ValueError, match="not both"):
        HttpSecurity(bearer_token=TOKEN, token_verifier=Verifier(), auth=object())


async def test_an_oauth_token_verifier_guards_the_endpoint_in_process() -> None:
    from mcp.server.auth.provider import AccessToken
    from mcp.server.auth.settings import AuthSettings

    class Verifier:
        async def verify_token(self, token: str) -> AccessToken | None:
            if token == "oauth-token-from-the-issuer":
                return AccessToken(token=token, client_id="client", scopes=["tools"])
            return None

    security = HttpSecurity(
        token_verifier=Verifier(),
        auth=AuthSettings(
            issuer_url="https://issuer.example",  # type: ignore[arg-type]
            resource_server_url="https://tools.example/mcp",  # type: ignore[arg-type]
            validate_token_resource=False,
            required_scopes=["tools"],
        ),
        allowed_hosts=["tools.example"],
    )
    server = ToolServer()
    app = server.streamable_http_app(host="10.1.2.3", security=security)
    transport = httpx2.ASGITransport(app=app)
    headers = {**ACCEPT, "Host": "tools.example"}
    http = httpx2.AsyncClient(transport=transport, base_url="http://tools.example")
    async with server.server.session_manager.run(), http:
        with anyio.fail_after(15):
            missing = await http.post("/mcp", json=INIT, headers=headers)
            wrong = await http.post(
                "/mcp", json=INIT, headers={**headers, "Authorization": "Bearer nope"}
            )
            right = await http.post(
                "/mcp",
                json=INIT,
                headers={**headers, "Authorization": "Bearer oauth-token-from-the-issuer"},
            )
            rebinding = await http.post(
                "/mcp",
                json=INIT,
                headers={
                    **headers,
                    "Host": "attacker.example",
                    "Authorization": "Bearer oauth-token-from-the-issuer",
                },
            )
    assert missing.status_code == 401
    assert wrong.status_code == 401
    assert right.status_code == 200
    assert rebinding.status_code == 421


ENV_TOOL = """
import os, subprocess, sys
from customtools import tool

@tool
def show_env(name: str) -> str:
    \"\"\"What this process and a child it starts see of a variable.\"\"\"
    child = subprocess.run(
        [sys.executable, "-c", f"import os; print(os.environ.get({name!r}))"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()
    return f"{os.environ.get(name)}/{child}"
"""


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
@pytest.mark.usefixtures("collect_garbage")
async def test_a_token_from_the_environment_is_not_left_for_tools(tmp_path: Path) -> None:
    pack = tmp_path / "pack"
    pack.mkdir()
    (pack / "show_env.py").write_text(ENV_TOOL)
    env = {"CT_TEST_TOKEN": TOKEN}
    async with served("127.0.0.1", "--token-env", "CT_TEST_TOKEN", pack=pack, env=env) as url:
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=10)
        async with http, Client(streamable_http_client(url, http_client=http)) as client:
            with anyio.fail_after(15):
                result = await client.call_tool("show_env", {"name": "CT_TEST_TOKEN"})
    assert result.content[0].text == "None/None"  # type: ignore[union-attr]


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
@pytest.mark.usefixtures("collect_garbage")
async def test_connections_that_never_finish_their_headers_do_not_lock_clients_out() -> None:
    # 700 connections that stop in the middle of their headers, against a server started with
    # 128 open files allowed (512 at most): they used to take every descriptor before any
    # token was checked, and the authenticated client then got nothing (accept failed with
    # EMFILE). Raising the limit alone would not do: 700 > 512.
    env = {"CT_TEST_TOKEN": TOKEN}
    slow: list[socket.socket] = []
    async with served(
        "127.0.0.1", "--token-env", "CT_TEST_TOKEN", env=env, max_files=(128, 512)
    ) as url:
        port = int(url.rsplit(":", 1)[1].split("/", 1)[0])
        try:
            for _ in range(700):
                sock = socket.create_connection(("127.0.0.1", port), timeout=5)
                slow.append(sock)
                sock.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            right = await post(url, {"Authorization": f"Bearer {TOKEN}"})
        finally:
            for sock in slow:
                sock.close()
    assert right.status_code == 200
    assert "serverInfo" in right.text


@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # uvicorn runs on asyncio only
async def test_a_connection_that_stalls_in_its_headers_is_closed(anyio_backend: str) -> None:
    from customtools.mcp import serve_http

    urls: list[str] = []
    async with anyio.create_task_group() as group:
        group.start_soon(
            functools.partial(
                serve_http, ToolServer(), port=0, header_timeout=0.2, on_ready=urls.append
            )
        )
        try:
            with anyio.fail_after(20):
                while not urls:
                    await anyio.sleep(0.01)
                port = int(urls[0].rsplit(":", 1)[1].split("/", 1)[0])
                stream = await anyio.connect_tcp("127.0.0.1", port)
                async with stream:
                    await stream.send(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
                    with pytest.raises(anyio.EndOfStream):
                        await stream.receive()  # the server closed it, with no response
        finally:
            group.cancel_scope.cancel()
