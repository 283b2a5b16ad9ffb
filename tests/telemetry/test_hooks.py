"""The observer hooks never break a call or a load, whatever the observer does."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from customtools import CustomTool, CustomToolAdapter, _observe, load_custom_tools

pytestmark = pytest.mark.anyio

GOOD = """
from customtools import CustomTool

def factory(api):
    return CustomTool(name="good", description="d", execute=lambda *a: "ok")
"""


class Hostile:
    """An observer whose every hook raises, at every stage."""

    def __init__(self, where: str) -> None:
        self.where = where

    def tool_observer(self, tool: CustomTool) -> Any:
        if self.where == "tool_observer":
            raise RuntimeError("tool_observer")
        return self

    def start(self, tool_call_id: str) -> Any:
        if self.where == "start":
            raise RuntimeError("start")
        return self

    def waiting(self, what: str) -> Any:
        raise RuntimeError("waiting")

    def finish(self, result: Any, error: Any) -> None:
        raise RuntimeError("finish")

    def load_step(self, name: str, attributes: Mapping[str, Any]) -> Any:
        if self.where == "load_step":
            raise RuntimeError("load_step")
        return self._step()

    @contextmanager
    def _step(self) -> Iterator[Any]:
        if self.where == "enter":
            raise RuntimeError("enter")
        yield self
        raise RuntimeError("exit")

    def set(self, key: str, value: Any) -> None:
        raise RuntimeError("set")

    def failed(self, code: str) -> None:
        raise RuntimeError("failed")

    def inject(self) -> dict[str, str]:
        raise RuntimeError("inject")

    def attach(self, carrier: Any) -> Any:
        raise RuntimeError("attach")


@pytest.fixture(params=["tool_observer", "start", "load_step", "enter", "exit"])
def hostile(request: pytest.FixtureRequest) -> Iterator[Hostile]:
    observer = Hostile(str(request.param))
    previous = _observe.set_observer(observer)  # type: ignore[arg-type]
    try:
        yield observer
    finally:
        _observe.set_observer(previous)


async def test_a_call_survives_its_observer(hostile: Hostile, caplog: Any) -> None:
    caplog.set_level("CRITICAL")  # the failures are logged; the call goes on
    tool = CustomTool(name="t", execute=lambda *a: "ok", requires_approval=True)

    async def approver(request: Any) -> bool:
        return True

    adapter = CustomToolAdapter(tool, approver=approver)
    result = await adapter.execute("c", {})
    assert not result.is_error, result
    assert result.content[0].text == "ok"  # type: ignore[union-attr]


async def test_a_load_survives_its_observer(hostile: Hostile, tmp_path: Path) -> None:
    path = tmp_path / "good.py"
    path.write_text(GOOD)
    broken = tmp_path / "broken.py"
    broken.write_text("def factory(:\n")
    result = await load_custom_tools([str(path), str(broken)], tmp_path)
    assert result.tool_names == ("good",)
    assert [e.code for e in result.errors] == ["syntax-error"]


def test_context_hooks_survive_their_observer(hostile: Hostile) -> None:
    assert _observe.inject_context() == {}
    with _observe.use_context({"traceparent": "00-" + "1" * 32 + "-" + "2" * 16 + "-01"}):
        pass
