"""Display payloads: validation, round trips and preserved extension kinds."""

from __future__ import annotations

from typing import Any

import pytest

from customtools.actions import (
    CopyTextAction,
    Display,
    DisplayError,
    ExtensionDisplayAction,
    OpenUrlAction,
    RunActionAction,
)

FULL: dict[str, Any] = {
    "format": "markdown",
    "title": "Login",
    "body": "Open [this link](https://example.test) and enter code `ABCD-EFGH`.",
    "variant": "info",
    "presentation": "inline",
    "dismissible": True,
    "display_id": "auth-login",
    "actions": [
        {"kind": "open_url", "id": "open", "label": "Open link", "url": "https://example.test"},
        {"kind": "copy_text", "id": "copy", "label": "Copy code", "text": "ABCD-EFGH"},
        {
            "kind": "run_action",
            "id": "check",
            "label": "Check status",
            "plugin": "auth",
            "action_id": "check_status",
            "params": {"poll": True},
            "preserve_display": True,
            "_meta": {"x": 1},
        },
        {"kind": "_share_sheet", "id": "share", "payload": [1, 2]},
    ],
    "_meta": {"trace": "t1"},
}


def test_full_payload_round_trips() -> None:
    display = Display.from_dict(FULL)
    assert display.to_dict() == FULL
    open_url, copy, run, ext = display.actions
    assert open_url == OpenUrlAction(id="open", label="Open link", url="https://example.test")
    assert copy == CopyTextAction(id="copy", label="Copy code", text="ABCD-EFGH")
    assert isinstance(run, RunActionAction)
    assert (run.plugin, run.action_id, run.preserve_display) == ("auth", "check_status", True)
    assert isinstance(ext, ExtensionDisplayAction)
    assert ext.kind == "_share_sheet"
    assert ext.id == "share"


def test_minimal_payload_defaults_to_markdown() -> None:
    display = Display.from_dict({"body": "hello"})
    assert display.format == "markdown"
    assert display.to_dict() == {"format": "markdown", "body": "hello"}
    assert Display.from_dict(display) is display


@pytest.mark.parametrize(
    ("payload", "path", "message"),
    [
        ({}, "/body", "display /body: required string, got None"),
        ({"body": "b", "format": "html"}, "/format", "display /format: 'html' is not"),
        ({"body": "b", "variant": "warn"}, "/variant", "display /variant: 'warn' is not one of"),
        ({"body": "b", "presentation": "popup"}, "/presentation", "is not one of banner"),
        ({"body": "b", "dismissible": "yes"}, "/dismissible", "must be true or false"),
        ({"body": "b", "title": 3}, "/title", "display /title: must be a non-empty string"),
        ({"body": "b", "actions": {}}, "/actions", "display /actions: must be a list"),
        (
            {"body": "b", "actions": [{"kind": "popup", "id": "p", "label": "P"}]},
            "/actions/0/kind",
            "unknown action kind 'popup'; use open_url, copy_text, run_action",
        ),
        (
            {"body": "b", "actions": [{"kind": "open_url", "id": "o", "label": "O"}]},
            "/actions/0/url",
            "display /actions/0/url: must be a non-empty string, got None",
        ),
        (
            {
                "body": "b",
                "actions": [
                    {"kind": "open_url", "id": "o", "label": "O", "url": "javascript:alert(1)"}
                ],
            },
            "/actions/0/url",
            "is not an https, http or mailto URL",
        ),
        (
            {"body": "b", "actions": [{"kind": "run_action", "id": "r", "label": "R"}]},
            "/actions/0/plugin",
            "display /actions/0/plugin: must be a non-empty string",
        ),
        (
            {
                "body": "b",
                "actions": [
                    {"kind": "copy_text", "id": "c", "label": "C", "text": "1"},
                    {"kind": "copy_text", "id": "c", "label": "C", "text": "2"},
                ],
            },
            "/actions",
            "duplicate action id 'c'",
        ),
        (
            {"body": "b", "actions": [{"kind": "copy_text", "label": "C", "text": "1"}]},
            "/actions/0/id",
            "display /actions/0/id",
        ),
    ],
)
def test_invalid_payloads_name_the_field(payload: Any, path: str, message: str) -> None:
    with pytest.raises(DisplayError) as info:
        Display.from_dict(payload)
    assert message in str(info.value)
    assert info.value.path == path


def test_extension_hint_values_are_allowed() -> None:
    display = Display.from_dict({"body": "b", "variant": "_brand", "presentation": "_sheet"})
    assert (display.variant, display.presentation) == ("_brand", "_sheet")


def test_non_mapping_payload() -> None:
    with pytest.raises(DisplayError, match="must be a mapping with at least 'body', got str"):
        Display.from_dict("hello")


@pytest.mark.parametrize(
    ("action", "path"),
    [
        ("open", "/actions/0"),
        ({"kind": "copy_text", "id": "c", "label": "C", "text": 5}, "/actions/0/text"),
        (
            {"kind": "copy_text", "id": "c", "label": "C", "text": "t", "_meta": 1},
            "/actions/0/_meta",
        ),
        (
            {"kind": "run_action", "id": "r", "label": "R", "plugin": "p", "action_id": "a",
             "params": [1]},
            "/actions/0/params",
        ),
        (
            {"kind": "run_action", "id": "r", "label": "R", "plugin": "p", "action_id": "a",
             "preserve_display": "yes"},
            "/actions/0/preserve_display",
        ),
    ],
)  # fmt: skip
def test_invalid_follow_up_actions(action: Any, path: str) -> None:
    with pytest.raises(DisplayError) as info:
        Display.from_dict({"body": "b", "actions": [action]})
    assert info.value.path == path
    assert str(info.value).startswith(f"display {path}")


def test_run_action_defaults_round_trip() -> None:
    wire = {"kind": "run_action", "id": "r", "label": "R", "plugin": "p", "action_id": "a"}
    display = Display.from_dict({"body": "b", "actions": [wire]})
    assert display.actions[0].to_dict() == {**wire, "preserve_display": False}
