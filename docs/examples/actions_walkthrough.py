"""Plugin actions walkthrough: a manual action with a display, a request_prepare repair.

Run it with ``python docs/examples/actions_walkthrough.py``. The file is also a valid plugin
module: copy it to ``<plugin root>/actions.py`` and ``find_plugins`` picks up ``plugins()``.
"""

from __future__ import annotations

import secrets
from typing import Any

import anyio

from customtools.actions import (
    REQUEST_PREPARE,
    SESSION_CREATE,
    ActionDispatcher,
    Session,
)


class LoginPlugin:
    """An application plugin: its manual action answers with a display payload."""

    name = "device_login"
    version = "1.0"

    def init(self, app_config: dict[str, Any]) -> dict[str, Any]:
        return {"login_url": app_config.get("login_url", "https://example.test/device")}

    def get_actions(self, state: dict[str, Any]) -> list[dict[str, Any]]:
        return [
            {"id": "start_login", "label": "Log in"},  # no trigger: manual only
            {"id": "check_status", "label": "Check login status"},
        ]

    def execute_action(
        self,
        app: Any,
        action_id: str,
        params: dict[str, Any],
        context: dict[str, Any] | None,
        state: dict[str, Any],
    ) -> dict[str, Any]:
        if action_id == "check_status":
            return {"display": {"body": "Still waiting for you to log in.", "variant": "info"}}
        code = "ABCD-EFGH"
        return {
            "display": {
                "format": "markdown",
                "title": "Log in",
                "body": f"Open [the login page]({state['login_url']}) and enter `{code}`.",
                "variant": "info",
                "presentation": "inline",
                "display_id": "device-login",
                "actions": [
                    {"kind": "open_url", "id": "open", "label": "Open", "url": state["login_url"]},
                    {"kind": "copy_text", "id": "copy", "label": "Copy code", "text": code},
                    {
                        "kind": "run_action",
                        "id": "check",
                        "label": "Check status",
                        "plugin": self.name,
                        "action_id": "check_status",
                        "preserve_display": True,
                    },
                ],
            },
            "login_code": code,  # machine-readable payload next to the display
        }


class PromptCacheKey:
    """A session plugin: makes sure every session has a prompt cache key override."""

    name = "prompt_cache"

    def get_actions(self, state: dict[str, Any]) -> list[dict[str, Any]]:
        return [
            {
                "id": "ensure_prompt_cache_key",
                "label": "Ensure prompt cache key",
                # new sessions get one at creation; older sessions are repaired per request
                "trigger": [SESSION_CREATE, REQUEST_PREPARE],
            }
        ]

    def execute_action(
        self,
        action_id: str,
        session: Session,
        native_messages: list[dict[str, Any]],
        params: dict[str, Any],
        context: dict[str, Any] | None,
        state: dict[str, Any],
    ) -> dict[str, Any] | None:
        if session.metadata.get("overrides", {}).get("prompt_cache_key"):
            return None  # idempotent: nothing to repair
        key = f"pc-{secrets.token_hex(4)}"
        return {"session_metadata": {"overrides": {"prompt_cache_key": key}}}


def plugins() -> list[Any]:
    """The plugin-module contract: a module-level ``plugins`` (here, a function)."""
    return [LoginPlugin(), PromptCacheKey()]


async def main() -> dict[str, Any]:
    dispatcher = ActionDispatcher(plugins(), timeout=10)

    # An old session from before the plugin existed: other overrides, no cache key.
    old = Session(id="s-1", metadata={"overrides": {"model": "small"}})
    prepared = await dispatcher.run_lifecycle(REQUEST_PREPARE, old, {"model": "small"})
    assert prepared.ok
    assert prepared.changed
    overrides = prepared.session.metadata["overrides"]
    print("repaired overrides:", sorted(overrides))

    # Running it again changes nothing: the action is idempotent.
    again = await dispatcher.run_lifecycle(REQUEST_PREPARE, prepared.session, {})
    print("changed on second run:", again.changed)

    # A user clicks "Log in": a manual action, same dispatcher, trigger_source "manual".
    login = await dispatcher.execute_action("device_login", "start_login", again.session, {})
    display = login.display
    assert display is not None
    print("display:", display.title, "|", [a.kind for a in display.actions])
    return {
        "overrides": dict(overrides),
        "changed_again": again.changed,
        "display": display.to_dict(),
        "payload": dict(login.payload),
        "trigger_source": login.trigger_source,
    }


if __name__ == "__main__":
    anyio.run(main)
