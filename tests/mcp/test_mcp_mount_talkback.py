"""A mounted MCP server that elicits, samples and logs: the host's handlers answer it, and
without them its requests are declined cleanly (never a hang)."""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

import anyio
import pytest
from zygote import python_argv

from customtools import CustomToolAdapter, ToolContext
from customtools.mcp import McpMount, McpServerConfig
from customtools.talkback import InputAnswer, InputRequest, SampleRequest, SampleResult

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
]

ROOT = Path(__file__).resolve().parents[2]
SERVER = Path(__file__).resolve().parent / "servers" / "talkback_server.py"


def config() -> McpServerConfig:
    command, *argv = python_argv(str(SERVER))
    return McpServerConfig(
        name="talk",
        command=command,
        args=tuple(argv),
        env={"PYTHONPATH": os.environ.get("PYTHONPATH", str(ROOT))},
        cwd=str(ROOT),
        timeout=20,
    )


async def call(mount: McpMount, name: str) -> Any:
    tools = {t.name: t for t in await mount.tools()}
    with anyio.fail_after(30):
        return await CustomToolAdapter(tools[f"mcp__talk__{name}"]).execute("c1", {})


async def test_the_hosts_handlers_answer_a_mounted_server() -> None:
    forms: list[InputRequest] = []
    prompts: list[SampleRequest] = []
    logs: list[tuple[str, str]] = []

    async def handler(request: InputRequest) -> InputAnswer:
        forms.append(request)
        return InputAnswer(action="accept", values={"name": "Ada"})

    async def sampler(request: SampleRequest) -> SampleResult:
        prompts.append(request)
        return SampleResult(text="Paris", model="host-model")

    mount = McpMount(
        [config()],
        input_handler=handler,
        sampler=sampler,
        log_sink=lambda level, message, data: logs.append((level, message)),
    )
    async with mount:
        greeted = await call(mount, "greet")
        capital = await call(mount, "capital")
        chatted = await call(mount, "chat")
    assert greeted.text == "Hello, Ada!"
    assert forms[0].message == "What is your name?"
    assert "name" in forms[0].schema["properties"]
    assert capital.text == "model said: Paris"
    assert prompts[0].messages[0]["content"] == "What is the capital of France?"
    assert prompts[0].max_tokens == 50
    assert chatted.text == "chatted"
    assert ("info", "starting") in logs
    assert ("warning", "careful") in logs


async def test_a_host_ui_answers_a_mounted_servers_form() -> None:
    class UI:
        def notify(self, message: str, level: str = "info") -> None: ...

        async def confirm(self, title: str, message: str = "") -> bool:
            return False

        async def select(self, title: str, options: Any) -> str | None:
            return None

        async def input(self, title: str, placeholder: str | None = None) -> str | None:
            return "Grace"

        def set_status(self, key: str, text: str | None) -> None: ...

    async with McpMount([config()], ui=UI()) as mount:
        greeted = await call(mount, "greet")
    assert greeted.text == "Hello, Grace!"


async def test_without_handlers_the_requests_are_declined_cleanly(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.INFO, logger="customtools.mcp.server.talk"):
        async with McpMount([config()]) as mount:
            greeted = await call(mount, "greet")
            capital = await call(mount, "capital")
            await call(mount, "chat")
    assert greeted.is_error is True
    assert "elicitation" in greeted.text.lower()
    assert capital.is_error is True
    assert "sampling" in capital.text.lower()


async def test_a_handler_that_never_answers_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    import customtools._talkback as talkback

    monkeypatch.setattr(talkback, "DEFAULT_ASK_TIMEOUT", 0.2)

    async def never(_request: InputRequest) -> InputAnswer:
        await anyio.sleep_forever()
        raise AssertionError

    async with McpMount([config()], input_handler=never) as mount:
        greeted = await call(mount, "greet")
    assert greeted.text == "no name: cancel"


async def test_each_calls_question_reaches_the_caller_that_caused_it() -> None:
    """Two hosts' calls at once: each form goes to its own call's handler, never the mount's."""
    asked: dict[str, list[str]] = {"ada": [], "grace": [], "mount": []}
    both_asked = anyio.Event()

    def handler(who: str) -> Any:
        async def answer(request: InputRequest) -> InputAnswer:
            asked[who].append(request.message)
            if asked["ada"] and asked["grace"]:
                both_asked.set()
            await both_asked.wait()  # both questions are open at the same time
            return InputAnswer(action="accept", values={"name": who.title()})

        return answer

    async def sampler(request: SampleRequest) -> SampleResult:
        return SampleResult(text="Lyon", model="grace-model")

    async with McpMount([config()], input_handler=handler("mount")) as mount:
        greet = {t.name: t for t in await mount.tools()}["mcp__talk__greet"]
        capital = {t.name: t for t in await mount.tools()}["mcp__talk__capital"]
        adapter = CustomToolAdapter(greet)
        results: dict[str, Any] = {}

        async def run(who: str) -> None:
            ctx = ToolContext(input_handler=handler(who))
            results[who] = await adapter.execute(who, {}, ctx=ctx)

        with anyio.fail_after(30):
            async with anyio.create_task_group() as group:
                group.start_soon(run, "ada")
                group.start_soon(run, "grace")
            sampled = await CustomToolAdapter(capital).execute(
                "s", {}, ctx=ToolContext(sampler=sampler)
            )
    assert results["ada"].text == "Hello, Ada!"
    assert results["grace"].text == "Hello, Grace!"
    assert asked == {"ada": ["What is your name?"], "grace": ["What is your name?"], "mount": []}
    assert sampled.text == "model said: Lyon"


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_served_mounted_tools_ask_the_client_whose_call_asked(mode: str) -> None:
    """`serve` with a mounted server and two clients at once: each client's elicitation
    answers its own call."""
    from mcp import Client

    from customtools.mcp import ToolServer

    opened: set[str] = set()
    both = anyio.Event()

    def client_form(who: str) -> Any:
        async def elicit(_ctx: Any, params: Any) -> Any:
            import mcp_types as types

            opened.add(who)
            if len(opened) == 2:
                both.set()
            with anyio.fail_after(20):
                await both.wait()
            return types.ElicitResult(action="accept", content={"name": who})

        return elicit

    async with McpMount([config()]) as mount:
        server = ToolServer(await mount.tools())
        texts: dict[str, str] = {}

        async def run(who: str) -> None:
            async with Client(server.server, mode=mode, elicitation_callback=client_form(who)) as c:
                result = await c.call_tool("mcp__talk__greet", {})
                texts[who] = result.content[0].text  # type: ignore[union-attr]

        with anyio.fail_after(60):
            async with anyio.create_task_group() as group:
                group.start_soon(run, "Ada")
                group.start_soon(run, "Grace")
    assert texts == {"Ada": "Hello, Ada!", "Grace": "Hello, Grace!"}
