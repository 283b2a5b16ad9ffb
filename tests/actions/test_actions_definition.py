"""Action definitions: parsing, validation messages, round trips and manual input checks."""

from __future__ import annotations

import pytest

from customtools.actions import (
    ActionDefinition,
    ActionDefinitionError,
    ActionInputError,
    check_params,
    parse_actions,
)


def test_minimal_definition_is_manual_and_labelled_by_id() -> None:
    action = ActionDefinition.from_dict({"id": "login"})
    assert action.label == "login"
    assert action.trigger == ()
    assert action.is_manual
    assert action.inputs == {}


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (None, ()),
        ([], ()),
        ("request_prepare", ("request_prepare",)),
        (["session_create", "request_prepare"], ("session_create", "request_prepare")),
        (["a", "a", "b"], ("a", "b")),
        ("my_future_custom_lifecycle", ("my_future_custom_lifecycle",)),
    ],
)
def test_trigger_forms(raw: object, expected: tuple[str, ...]) -> None:
    action = ActionDefinition.from_dict({"id": "x", "trigger": raw})
    assert action.trigger == expected
    assert action.is_manual is (not expected)
    for name in expected:
        assert action.triggered_by(name)
    assert not action.triggered_by("unrelated")


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (
            5,
            "'trigger' must be a lifecycle name or a list of them, got int; omit it for a"
            " manual action",
        ),
        (
            {"on": "x"},
            "'trigger' must be a lifecycle name or a list of them, got dict; omit"
            " it for a manual action",
        ),
        (["ok", 3], "'trigger[1]' must be a non-empty lifecycle name, got 3"),
        ([""], "'trigger[0]' must be a non-empty lifecycle name, got ''"),
    ],
)
def test_trigger_of_the_wrong_type_is_a_clear_error(raw: object, message: str) -> None:
    with pytest.raises(ActionDefinitionError) as info:
        ActionDefinition.from_dict({"id": "ensure", "trigger": raw}, plugin="cache")
    assert str(info.value) == f"plugin 'cache', action 'ensure': {message}"
    assert info.value.plugin == "cache"
    assert info.value.action_id == "ensure"


@pytest.mark.parametrize("bad_id", [None, "", "has space", 7, "x" * 129])
def test_bad_ids(bad_id: object) -> None:
    with pytest.raises(ActionDefinitionError, match="action 'id' must be a non-empty string"):
        ActionDefinition.from_dict({"id": bad_id}, plugin="p")


def test_duplicate_ids_within_a_plugin_are_rejected() -> None:
    with pytest.raises(ActionDefinitionError) as info:
        parse_actions([{"id": "a"}, {"id": "b"}, {"id": "a"}], plugin="auth")
    assert str(info.value) == (
        "plugin 'auth': duplicate action id 'a'; action ids must be unique within a plugin"
    )
    assert info.value.action_id == "a"


@pytest.mark.parametrize("raw", [{"id": "a"}, "a", 3])
def test_get_actions_must_return_a_list(raw: object) -> None:
    with pytest.raises(ActionDefinitionError, match="get_actions must return a list"):
        parse_actions(raw, plugin="p")


def test_parse_actions_keeps_order_and_accepts_none() -> None:
    assert parse_actions(None) == ()
    ids = [a.id for a in parse_actions([{"id": "z"}, {"id": "a"}, {"id": "m"}])]
    assert ids == ["z", "a", "m"]


@pytest.mark.parametrize(
    ("inputs", "message"),
    [
        ([1], "'inputs' must be a mapping of input name to spec, got list"),
        ({"n": "string"}, "input 'n' must map a string name to a spec mapping"),
        ({"n": {"type": "str"}}, "input 'n' has type 'str'; use one of array, boolean"),
        ({"n": {"required": "yes"}}, "input 'n' 'required' must be true or false"),
    ],
)
def test_bad_inputs(inputs: object, message: str) -> None:
    with pytest.raises(ActionDefinitionError, match=message):
        ActionDefinition.from_dict({"id": "a", "inputs": inputs}, plugin="p")


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"id": "a", "label": 3}, "'label' must be a string, got int"),
        ({"id": "a", "description": []}, "'description' must be a string, got list"),
        ({"id": "a", "_meta": "x"}, "'_meta' must be a mapping, got str"),
        (["id"], "each action must be a mapping with at least an 'id', got list"),
    ],
)
def test_bad_fields(data: object, message: str) -> None:
    with pytest.raises(ActionDefinitionError, match=message):
        ActionDefinition.from_dict(data, plugin="p")


def test_round_trip_keeps_meta_and_unknown_keys() -> None:
    wire = {
        "id": "ensure_session_defaults",
        "label": "Ensure session defaults",
        "description": "Fill in defaults",
        "inputs": {"session_id": {"type": "string", "required": True}},
        "trigger": ["session_create", "request_prepare"],
        "icon": "wrench",
        "_meta": {"vendor/x": 1},
    }
    action = ActionDefinition.from_dict(wire)
    assert action.extra == {"icon": "wrench"}
    assert action.to_dict() == wire
    assert ActionDefinition.from_dict(action.to_dict()) == action


def test_single_trigger_is_written_as_a_string() -> None:
    action = ActionDefinition.from_dict({"id": "a", "trigger": ["session_list"]})
    assert action.to_dict()["trigger"] == "session_list"
    assert "trigger" not in ActionDefinition.from_dict({"id": "a"}).to_dict()


def test_check_params_reports_every_problem() -> None:
    action = ActionDefinition.from_dict(
        {
            "id": "rename",
            "inputs": {
                "title": {"type": "string", "required": True},
                "count": {"type": "integer"},
                "flag": {"type": "boolean"},
                "anything": {},
            },
        }
    )
    with pytest.raises(ActionInputError) as info:
        check_params(action, {"count": True, "flag": "no", "anything": object()}, plugin="p")
    assert str(info.value) == (
        "plugin 'p', action 'rename': missing required input 'title';"
        " input 'count' must be integer, got bool; input 'flag' must be boolean, got str"
    )
    check_params(action, {"title": "t", "count": 2, "extra": [1]}, plugin="p")
