"""The talk-back fixture pack (``tests/mcp/talkpack``) behind a real ``customtools serve``
subprocess, over stdio and streamable HTTP, with the official client in both eras."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError
from mcp_helpers import ROOT, child_env, http_server, serve_argv

pytestmark = [
    pytest.mark.anyio,
    # the SDK's HTTP client leaves SSE generators to the garbage collector on trio
    pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
]

TALKPACK = Path(__file__).resolve().parent / "talkpack"


@pytest.fixture(autouse=True)
def collect_garbage() -> Iterator[None]:
    yield
    gc.collect()


def era(anyio_backend: str) -> str:
    """asyncio speaks the modern era (2026-07-28), trio the handshake era."""
    return "auto" if anyio_backend == "asyncio" else "legacy"


class Recorder:
    """The client's side: answers forms and sampling requests, keeps log messages."""

    def __init__(self) -> None:
        self.forms: list[Any] = []
        self.logs: list[types.LoggingMessageNotificationParams] = []

    async def elicit(self, _ctx: Any, params: Any) -> types.ElicitResult:
        self.forms.append(params)
        if "username" in params.requested_schema["properties"]:
            return types.ElicitResult(
                action="accept", content={"username": "ada", "email": "ada@example.org"}
            )
        return types.ElicitResult(action="decline")

    async def sample(self, _ctx: Any, params: Any) -> types.CreateMessageResult:
        prompt = params.messages[0].content.text
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text=f"echo {prompt}"),
            model="fixture-model",
            stop_reason="endTurn",
        )

    async def log(self, params: types.LoggingMessageNotificationParams) -> None:
        self.logs.append(params)

    def options(self, mode: str) -> dict[str, Any]:
        return {
            "mode": mode,
            "elicitation_callback": self.elicit,
            "sampling_callback": self.sample,
            "logging_callback": self.log,
            "log_level": "debug" if mode == "auto" else None,
        }


async def exercise(client: Client, recorder: Recorder, mode: str) -> None:
    if mode == "legacy":
        await client.set_logging_level("debug")
    with anyio.fail_after(20):
        asked = await client.call_tool("test_elicitation", {"message": "Who are you?"})
        sampled = await client.call_tool("test_sampling", {"prompt": "2+2?"})
        logged = await client.call_tool("test_tool_with_logging", {})
        declined = await client.call_tool("test_ask_or_explain", {})
    assert asked.content[0].text == (  # type: ignore[union-attr]
        "User response: <accept, {'username': 'ada', 'email': 'ada@example.org'}>"
    )
    assert recorder.forms[0].message == "Who are you?"
    assert sampled.content[0].text == "LLM response: echo 2+2?"  # type: ignore[union-attr]
    assert logged.is_error is False
    assert declined.content[0].text == "decline"  # type: ignore[union-attr]
    lines = [entry.data for entry in recorder.logs if entry.logger == "test_tool_with_logging"]
    assert lines == ["Tool execution started", "Tool processing data", "Tool execution completed"]


# The same pack from sandboxed isolation workers: their questions, sampling and logs go
# through the host's context to the client, and the 2026-07-28 era re-runs the call.
SANDBOX = pytest.mark.parametrize("flags", [(), ("--sandbox",)], ids=["in-process", "sandboxed"])


@SANDBOX
async def test_stdio_asks_samples_and_logs(
    anyio_backend: str, tmp_path: Path, flags: tuple[str, ...]
) -> None:
    mode = era(anyio_backend)
    recorder = Recorder()
    argv = serve_argv(str(TALKPACK), "--stdio", *flags)
    params = StdioServerParameters(command=argv[0], args=argv[1:], env=child_env(), cwd=str(ROOT))
    with (tmp_path / "stderr.txt").open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog), **recorder.options(mode)) as client:
            await exercise(client, recorder, mode)


@SANDBOX
async def test_stdio_client_without_capabilities_gets_typed_outcomes(
    anyio_backend: str, tmp_path: Path, flags: tuple[str, ...]
) -> None:
    argv = serve_argv(str(TALKPACK), "--stdio", *flags)
    params = StdioServerParameters(command=argv[0], args=argv[1:], env=child_env(), cwd=str(ROOT))
    mode = era(anyio_backend)
    with (tmp_path / "stderr.txt").open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog), mode=mode) as client:
            with anyio.fail_after(20):
                explained = await client.call_tool("test_ask_or_explain", {})
                if mode == "auto":  # 2026-07-28: the capability is missing (SEP-2575)
                    with pytest.raises(MCPError) as refused:
                        await client.call_tool("test_sampling", {"prompt": "x"})
                else:
                    sampled = await client.call_tool("test_sampling", {"prompt": "x"})
    text = explained.content[0].text  # type: ignore[union-attr]
    assert text == "cannot ask: the client does not support elicitation"
    if mode == "auto":
        assert refused.value.error.code == types.MISSING_REQUIRED_CLIENT_CAPABILITY
    else:
        assert sampled.is_error is True
        assert "did not declare the sampling capability" in sampled.content[0].text  # type: ignore[union-attr]


async def test_http_asks_samples_and_logs(anyio_backend: str) -> None:
    mode = era(anyio_backend)
    recorder = Recorder()
    async with (
        http_server(str(TALKPACK)) as url,
        Client(url, **recorder.options(mode)) as client,
    ):
        await exercise(client, recorder, mode)


async def test_stateless_http_handshake_era_says_why_it_cannot_ask() -> None:
    recorder = Recorder()
    async with (
        http_server(str(TALKPACK), "--stateless") as url,
        Client(url, mode="legacy", elicitation_callback=recorder.elicit) as client,
    ):
        with anyio.fail_after(20):
            result = await client.call_tool("test_elicitation", {"message": "Who?"})
    assert result.is_error is True
    assert "stateless HTTP in the handshake era" in result.content[0].text  # type: ignore[union-attr]


async def test_http_answers_a_missing_capability_with_400(anyio_backend: str) -> None:
    # A 2026-07-28 request that declares no capabilities calls a tool that samples: the
    # JSON-RPC error -32021 names the capability, and the HTTP status is 400 (SEP-2575).
    import httpx2

    request = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {
            "name": "test_sampling",
            "arguments": {"prompt": "x"},
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
            },
        },
    }
    headers = {
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "tools/call",
        "Mcp-Name": "test_sampling",
    }
    async with http_server(str(TALKPACK)) as url, httpx2.AsyncClient(timeout=15) as http:
        with anyio.fail_after(20):
            response = await http.post(url, json=request, headers=headers)
    assert response.status_code == 400, response.text
    body = response.json()
    assert body["id"] == 7
    assert body["error"]["code"] == types.MISSING_REQUIRED_CLIENT_CAPABILITY
    assert body["error"]["data"] == {"requiredCapabilities": {"sampling": {}}}
