"""Testing one tool without a pack on disk, and without pytest fixtures (docs/testing.md)."""

from __future__ import annotations

from typing import Any

from customtools import CustomTool, Type
from customtools.testing import ToolPack, assert_error, assert_ok


def shout(tool_call_id: str, params: Any, on_update: Any, ctx: Any, signal: Any) -> str:
    return str(params["text"]).upper()


SHOUT = CustomTool(
    name="shout",
    description="Repeats the text in capitals.",
    parameters=Type.Object({"text": Type.String(minLength=1)}),
    execute=shout,
)


def test_shout() -> None:
    pack = ToolPack([SHOUT])

    assert_ok(pack.call_sync("shout", {"text": "hi"}))
    assert pack.call_sync("shout", {"text": "hi"}).text == "HI"
    assert_error(pack.call_sync("shout", {"text": ""}), match="/text")
