"""The adapter's approval maps to the protocol's tool-call confirmation in a HostSession."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from customtools import CustomTool, CustomToolAdapter, Type
from customtools.host import HostSession, tool_calls

pytestmark = pytest.mark.anyio

CHAT = "ahp://chat/1"


async def run(tool_call_id: str, params: Any, on_update: Any, ctx: Any, signal: Any) -> str:
    return f"removed {params['path']}"


TOOL = CustomTool(
    name="remove",
    description="Remove a file.",
    parameters=Type.Object({"path": Type.String()}),
    execute=run,
    requires_approval=True,
)


def start_turn(session: HostSession) -> None:
    session.dispatch(
        {"type": "chat/turnStarted", "turnId": "t1", "userMessage": {"text": "clean up"}},
        chat=CHAT,
    )
    session.start_tool_call(CHAT, turn_id="t1", tool_call_id="tc1", tool_name="remove")


@pytest.mark.parametrize("approved", [True, False])
async def test_a_client_answers_the_confirmation(approved: bool) -> None:
    seen: list[dict[str, Any]] = []
    session = HostSession("ahp://session/1", on_action=lambda ch, action: seen.append(action))
    start_turn(session)
    adapter = CustomToolAdapter(TOOL, approver=session.approver(CHAT, turn_id="t1"))

    async def client() -> None:
        while not any(a["type"] == "chat/toolCallReady" for a in seen):
            await anyio.sleep(0.01)
        [call] = tool_calls(session.chats[CHAT])
        assert call["status"] == "pending-confirmation"
        assert call["toolInput"] == '{"path": "a.txt"}'
        session.dispatch_from_client(
            {
                "type": "chat/toolCallConfirmed",
                "turnId": "t1",
                "toolCallId": "tc1",
                "approved": approved,
                "confirmed": "user-action",
            },
            client_id="ide",
            chat=CHAT,
        )

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(client)
            result = await adapter.execute("tc1", {"path": "a.txt"})
    if approved:
        assert result.text == "removed a.txt"
        assert tool_calls(session.chats[CHAT])[0]["status"] == "running"
    else:
        assert result.is_error
        assert "denied by the user" in result.text
        assert tool_calls(session.chats[CHAT])[0]["status"] == "cancelled"


async def test_no_answer_is_a_denial_after_the_timeout() -> None:
    session = HostSession("ahp://session/1")
    start_turn(session)
    adapter = CustomToolAdapter(
        TOOL, approver=session.approver(CHAT, turn_id="t1"), approval_timeout=0.05
    )
    with anyio.fail_after(5):
        result = await adapter.execute("tc1", {"path": "a.txt"})
    assert result.details["code"] == "approval-timeout"


def test_the_documented_example_runs_and_the_page_quotes_it() -> None:
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    example = root / "docs" / "examples" / "host_approval.py"
    done = subprocess.run(
        [sys.executable, str(example)], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "removed a.txt\n"
    page = (root / "docs" / "host-toolkit.md").read_text(encoding="utf-8")
    source = example.read_text(encoding="utf-8")
    for line in (
        '    session.start_tool_call(chat, turn_id="t1", tool_call_id="tc1", tool_name="remove")',
        '    adapter = CustomToolAdapter(tool, approver=session.approver(chat, turn_id="t1"))',
    ):
        assert line in page
        assert line in source
