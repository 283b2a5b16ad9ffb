"""A host tool that asks the session's clients before it runs (docs/host-toolkit.md)."""

from __future__ import annotations

from typing import Any

import anyio

from customtools import CustomTool, CustomToolAdapter, Type
from customtools.host import HostSession, tool_calls


async def remove(tool_call_id: str, params: Any, on_update: Any, ctx: Any, signal: Any) -> str:
    return f"removed {params['path']}"


tool = CustomTool(
    name="remove",
    description="Remove a file.",
    parameters=Type.Object({"path": Type.String()}),
    execute=remove,
    requires_approval=True,
)


async def main() -> None:
    chat = "ahp://chat/1"
    asked = anyio.Event()

    def forward(channel: str, action: Any) -> None:  # what a host sends its clients
        if action["type"] == "chat/toolCallReady":
            asked.set()

    session = HostSession("ahp://session/1", on_action=forward)
    session.dispatch(
        {"type": "chat/turnStarted", "turnId": "t1", "userMessage": {"text": "tidy up"}},
        chat=chat,
    )

    async def client_says_yes() -> None:  # an IDE answering the confirmation
        await asked.wait()
        assert tool_calls(session.chats[chat])[0]["status"] == "pending-confirmation"
        session.dispatch_from_client(
            {"type": "chat/toolCallConfirmed", "turnId": "t1", "toolCallId": "tc1",
             "approved": True, "confirmed": "user-action"},
            client_id="ide", chat=chat,
        )  # fmt: skip

    session.start_tool_call(chat, turn_id="t1", tool_call_id="tc1", tool_name="remove")
    adapter = CustomToolAdapter(tool, approver=session.approver(chat, turn_id="t1"))
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(client_says_yes)
        result = await adapter.execute("tc1", {"path": "a.txt"})
    print(result.text)  # removed a.txt


if __name__ == "__main__":
    anyio.run(main)
