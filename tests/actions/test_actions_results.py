"""Result contracts of the two plugin kinds."""

from __future__ import annotations

from typing import Any

import pytest

from customtools.actions import (
    RESPONSE_FINALIZE,
    ActionResultError,
    ApplicationResult,
    Session,
    SessionResult,
)


def app(value: Any) -> ApplicationResult:
    return ApplicationResult.from_value(value, plugin="p", action_id="a")


def sess(value: Any, lifecycle: str | None = "t") -> SessionResult:
    return SessionResult.from_value(value, plugin="p", action_id="a", lifecycle=lifecycle)


def test_none_means_no_change() -> None:
    assert app(None) == ApplicationResult()
    assert sess(None) == SessionResult()


def test_application_result_fields() -> None:
    result = app(
        {
            "mutations": {"created": [Session(id="n")], "deleted": ["d"]},
            "ui_effects": [{"type": "reload"}],
            "display": {"body": "ok"},
            "status": "done",
        }
    )
    assert [s.id for s in result.created] == ["n"]
    assert result.deleted == ("d",)
    assert result.ui_effects == ({"type": "reload"},)
    assert result.display is not None
    assert result.payload == {"status": "done"}


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ([1], "result must be a mapping, got list"),
        (
            {"session_metadata": {}},
            "'session_metadata' is a session-plugin result key; an application plugin returns"
            " the changed session in mutations['updated']",
        ),
        ({"mutations": []}, "'mutations' must be a mapping"),
        ({"mutations": {"changed": []}}, "unknown mutations key(s) 'changed'"),
        ({"mutations": {"created": {}}}, "mutations['created'] must be a list of sessions"),
        ({"mutations": {"updated": [{"x": 1}]}}, "mutations['updated'][0] must be a session"),
        ({"mutations": {"deleted": [1]}}, "mutations['deleted'] must be a list of session ids"),
        ({"ui_effects": ["reload"]}, "'ui_effects' must be a mapping or a list of them"),
        ({"display": {"body": 1}}, "invalid display payload: display /body: required string"),
    ],
)
def test_application_contract_errors(value: Any, message: str) -> None:
    with pytest.raises(ActionResultError) as info:
        app(value)
    assert str(info.value).startswith("plugin 'p', action 'a': ")
    assert message in str(info.value)
    assert (info.value.plugin, info.value.action_id) == ("p", "a")


def test_session_result_fields() -> None:
    result = sess({"native_messages": [{"role": "user"}], "session_metadata": {"a": 1}})
    assert result.native_messages == ({"role": "user"},)
    assert result.session_metadata == {"a": 1}
    finals = sess({"final_messages": [{"role": "assistant"}]}, RESPONSE_FINALIZE)
    assert finals.final_messages == ({"role": "assistant"},)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("x", "result must be a mapping, got str"),
        ({"display": {"body": "x"}}, "'display' is application-level"),
        ({"mutations": {}, "ui_effects": []}, "'mutations', 'ui_effects' is application-level"),
        ({"notes": 1}, "unknown result key(s) 'notes'; a session plugin returns only"),
        ({"session_metadata": [1]}, "'session_metadata' must be a mapping (a merge patch)"),
        ({"native_messages": ["x"]}, "'native_messages' must be a list of message mappings"),
        ({"final_messages": []}, "'final_messages' may only be returned during response_finalize"),
    ],
)
def test_session_contract_errors(value: Any, message: str) -> None:
    with pytest.raises(ActionResultError) as info:
        sess(value)
    assert str(info.value).startswith("plugin 'p', action 'a': ")
    assert message in str(info.value)
