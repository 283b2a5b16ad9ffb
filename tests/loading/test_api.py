"""The factory API object: cwd, exec, ui, logger, typebox, sdk, pending actions."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import pytest

import customtools
from customtools._loading._api import (
    NO_OP_UI,
    NoOpUIContext,
    PendingAction,
    PendingActionStore,
    SharedState,
    ToolAPI,
    UIContext,
)
from customtools._loading._loader import load_custom_tools
from customtools._typebox import Type

from ._helpers import write

pytestmark = pytest.mark.anyio


def _api(cwd: Path, name: str = "customtools.tools.t") -> ToolAPI:
    return ToolAPI(
        SharedState(cwd=str(cwd), pending_actions=PendingActionStore()), logger_name=name
    )


async def test_each_tool_module_gets_its_own_logger(tmp_path: Path) -> None:
    for stem in ("alpha", "beta.v2"):
        write(
            tmp_path / "tools" / f"{stem}.py",
            "def factory(api):\n"
            f"    return {{'name': {stem.replace('.', '_')!r},"
            " 'execute': lambda *a: api.logger}\n",
        )
    result = await load_custom_tools([tmp_path / "tools"], tmp_path)
    alpha = result.get("alpha").tool.execute()  # type: ignore[union-attr]
    beta = result.get("beta_v2").tool.execute()  # type: ignore[union-attr]
    assert isinstance(alpha, logging.Logger)
    assert alpha.name == "customtools.tools.alpha"
    assert beta.name == "customtools.tools.beta_v2"


async def test_factories_of_one_load_share_state(tmp_path: Path) -> None:
    for stem in ("one", "two"):
        write(
            tmp_path / "tools" / f"{stem}.py",
            "def factory(api):\n"
            f"    return {{'name': {stem!r}, 'execute': lambda *a: api.pending_actions}}\n",
        )
    result = await load_custom_tools([tmp_path / "tools"], tmp_path)
    stores = {id(result.get(n).tool.execute()) for n in ("one", "two")}  # type: ignore[union-attr]
    assert stores == {id(result.pending_actions)}


def test_typebox_and_sdk(tmp_path: Path) -> None:
    api = _api(tmp_path)
    assert api.typebox is Type
    assert api.sdk is customtools
    assert api.cwd == str(tmp_path)
    assert api.ui is NO_OP_UI
    assert api.has_ui is False
    assert "has_ui=False" in repr(api)


async def test_exec_runs_in_api_cwd_by_default(tmp_path: Path) -> None:
    api = _api(tmp_path)
    result = await api.exec(sys.executable, ["-c", "import os; print(os.getcwd())"])
    assert result.code == 0
    assert result.stdout.strip() == str(tmp_path)


async def test_exec_cwd_overrides(tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    result = await _api(tmp_path).exec(
        sys.executable, ["-c", "import os; print(os.getcwd())"], cwd=str(other)
    )
    assert result.stdout.strip() == str(other)


async def test_exec_forwards_input_env_and_timeout(tmp_path: Path) -> None:
    api = _api(tmp_path)
    result = await api.exec(
        sys.executable,
        ["-c", "import os, sys; print(sys.stdin.read() + os.environ['CT_API_TEST'])"],
        input="piped-",
        env={"CT_API_TEST": "env"},
        timeout=30,
    )
    assert result.stdout.strip() == "piped-env"
    slow = await api.exec(sys.executable, ["-c", "import time; time.sleep(30)"], timeout=0.2)
    assert slow.timed_out
    assert slow.code is None


async def test_no_op_ui_gives_safe_answers() -> None:
    ui = NoOpUIContext()
    assert await ui.confirm("Delete?", "really") is False
    assert await ui.select("Pick", ["a", "b"]) is None
    assert await ui.input("Name?") is None
    ui.notify("hello", "warning")
    ui.set_status("k", "text")
    assert isinstance(ui, UIContext)
    assert repr(ui) == "NoOpUIContext()"


def test_push_pending_action_keeps_details(tmp_path: Path) -> None:
    api = _api(tmp_path)
    action = api.push_pending_action(
        label="Delete build/", apply=lambda reason: "deleted", details={"files": 3}
    )
    assert api.pending_actions.pending == (action,)
    assert action.details == {"files": 3}
    assert action.to_dict() == {"id": action.id, "label": "Delete build/", "details": {"files": 3}}


def test_push_pending_action_accepts_a_mapping_with_aliases(tmp_path: Path) -> None:
    api = _api(tmp_path)
    action = api.push_pending_action(
        {"label": "Rename", "apply": print, "sourceToolName": "renamer", "description": "why"}
    )
    assert action.tool_name == "renamer"
    assert action.to_dict()["toolName"] == "renamer"
    assert action.to_dict()["description"] == "why"


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"label": "", "apply": print}, ValueError, "label must be a non-empty string"),
        ({"label": "x", "apply": 3}, TypeError, "apply must be callable"),
        ({"label": "x", "apply": print, "reject": 3}, TypeError, "reject must be callable"),
        ({"label": "x"}, ValueError, "'label' and 'apply' are required"),
        ({"label": "x", "apply": print, "bogus": 1}, ValueError, "unknown key"),
    ],
)
def test_bad_pending_actions_are_rejected(
    tmp_path: Path, kwargs: dict[str, object], error: type[Exception], match: str
) -> None:
    api = _api(tmp_path)
    with pytest.raises(error, match=match):
        api.push_pending_action(**kwargs)
    assert len(api.pending_actions) == 0


def test_push_pending_action_rejects_other_types(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="expects a PendingAction or a mapping"):
        _api(tmp_path).push_pending_action(42)  # type: ignore[arg-type]


async def test_store_resolves_last_in_first_out_and_awaits() -> None:
    store = PendingActionStore()
    seen: list[tuple[str, object]] = []

    async def apply_async(reason: object) -> str:
        seen.append(("apply-second", reason))
        return "second applied"

    store.push(PendingAction(label="first", apply=lambda r: seen.append(("apply-first", r))))
    store.push(PendingAction(label="second", apply=apply_async))
    assert store.peek().label == "second"  # type: ignore[union-attr]
    assert await store.resolve(reason="ok") == "second applied"
    assert await store.resolve(apply=False, reason="no") is None  # no reject: nothing runs
    assert seen == [("apply-second", "ok")]
    assert len(store) == 0
    with pytest.raises(LookupError, match="no pending action to resolve"):
        await store.resolve()


async def test_store_resolve_by_id_runs_reject() -> None:
    store = PendingActionStore()
    rejected: list[object] = []
    keep = store.push(PendingAction(label="keep", apply=print))
    target = store.push(PendingAction(label="t", apply=print, reject=rejected.append))
    store.push(PendingAction(label="top", apply=print))
    await store.resolve(target.id, apply=False, reason="user said no")
    assert rejected == ["user said no"]
    assert [a.label for a in store.pending] == ["keep", "top"]
    with pytest.raises(LookupError, match="no pending action with id 'nope'"):
        store.pop("nope")
    assert store.pop(keep.id) is keep


def test_store_subscribers_hear_pushes_and_can_leave(caplog: pytest.LogCaptureFixture) -> None:
    store = PendingActionStore()
    heard: list[str] = []

    def broken(action: PendingAction) -> None:
        raise RuntimeError("listener bug")

    store.subscribe(broken)
    leave = store.subscribe(lambda action: heard.append(action.label))
    store.push(PendingAction(label="a", apply=print))
    leave()
    leave()  # idempotent
    store.push(PendingAction(label="b", apply=print))
    assert heard == ["a"]
    assert "pending-action listener" in caplog.text
    assert len(store) == 2
    assert repr(store) == "<PendingActionStore 2 pending>"
