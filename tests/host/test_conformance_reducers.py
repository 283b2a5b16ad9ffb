"""The protocol's own reducer fixtures, in scope for the host toolkit, run against our reducers.

Fixtures live in ``tests/conformance/ahp/reducers/`` (copied unmodified; see SOURCE.md). As the
protocol's other clients do, results are compared after dropping ``null``-valued keys.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from customtools.host import reduce_chat, reduce_session

FIXTURES = Path(__file__).resolve().parents[1] / "conformance" / "ahp" / "reducers"
FIXTURE_CLOCK_MS = 9999  # the fixtures were recorded with Date.now() pinned to 9999 ms

SESSION_PREFIXES = (
    "session/customization",
    "session/activeClient",
    "session/serverToolsChanged",
    "session/mcpServerStateChanged",
)
CHAT_ACTIONS = {
    "chat/toolCallStart",
    "chat/toolCallDelta",
    "chat/toolCallReady",
    "chat/toolCallConfirmed",
    "chat/toolCallComplete",
    "chat/toolCallResultConfirmed",
    "chat/toolCallContentChanged",
    "chat/turnComplete",
    "chat/turnCancelled",
    "chat/error",
    "chat/turnStarted",
    "chat/inputRequested",
    "chat/inputAnswerChanged",
    "chat/inputCompleted",
}


def _load(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def _in_scope(fixture: dict[str, Any]) -> bool:
    types = [a.get("type", "") for a in fixture["actions"]]
    if fixture["reducer"] == "session":
        return all(t.startswith(SESSION_PREFIXES) for t in types) or types == [
            "session/nonExistentAction"
        ]
    if fixture["reducer"] == "chat":
        return all(t in CHAT_ACTIONS for t in types) and not any(
            "queuedMessageId" in a for a in fixture["actions"]
        )
    return False


def _drop_nulls(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _drop_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_drop_nulls(v) for v in value]
    return value


ALL = sorted(FIXTURES.glob("*.json"))
IN_SCOPE = [p for p in ALL if _in_scope(_load(p))]


def test_the_in_scope_fixture_set_is_the_documented_one() -> None:
    names = {p.name[:3] for p in IN_SCOPE}
    # Every fixture number the reference digest lists for porting is present and selected.
    listed = {
        "035",
        "036",
        "221",
        "222",
        "058",
        "059",
        "060",
        "061",
        "062",
        "137",
        "138",
        "139",
        "152",
        "153",
        "154",
        "159",
        "160",
        "161",
        "162",
        "163",
        "220",
        "017",
        "024",
        "025",
        "029",
        "085",
        "088",
        "090",
        "092",
        "095",
        "096",
        "097",
        "098",
        "099",
    }
    assert listed <= names
    assert len(IN_SCOPE) >= 60


@pytest.mark.parametrize("path", IN_SCOPE, ids=[p.stem for p in IN_SCOPE])
def test_fixture(path: Path) -> None:
    fixture = _load(path)
    state = fixture["initial"]
    before = json.dumps(state, sort_keys=True)
    for action in fixture["actions"]:
        if fixture["reducer"] == "session":
            state = reduce_session(state, action)
        else:
            state = reduce_chat(state, action, clock=lambda: FIXTURE_CLOCK_MS)
    assert _drop_nulls(state) == _drop_nulls(fixture["expected"])
    # Pure: the initial state object was never mutated.
    assert json.dumps(fixture["initial"], sort_keys=True) == before
