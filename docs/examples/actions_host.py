"""Host side of plugin actions: find plugins, run lifecycles, handle failures.

Run it with ``python docs/examples/actions_host.py [plugin-root ...]``.
"""

from __future__ import annotations

import sys
from typing import Any

import anyio

from customtools.actions import (
    REQUEST_ERROR,
    REQUEST_PREPARE,
    ActionDispatcher,
    Session,
    find_plugins,
)


class Application:
    """Stands in for the host application (what plugins get as ``app``)."""

    def __init__(self) -> None:
        self.saved: dict[str, dict[str, Any]] = {}


async def handle_request(
    dispatcher: ActionDispatcher, session: Session, config: dict[str, Any]
) -> Session:
    prepared = await dispatcher.run_lifecycle(
        REQUEST_PREPARE, session, config, {"request_id": "r-1"}
    )
    for failure in prepared.failures:  # the run went on; decide what to tell the user
        print(f"warning: {failure.plugin}.{failure.action_id}: {failure.error}")
    session = prepared.session
    try:
        raise RuntimeError("provider unavailable")  # the request itself fails here
    except RuntimeError as exc:
        failed = await dispatcher.run_lifecycle(REQUEST_ERROR, session, config, error=exc)
        return failed.session


async def main(roots: list[str]) -> dict[str, Any]:
    found = await anyio.to_thread.run_sync(find_plugins, roots)
    for error in found.errors:
        print(f"plugin not loaded: {error.message}")
    app = Application()
    dispatcher = ActionDispatcher(
        found.registry(), app=app, app_config={"agents": {}}, timeout=5, on_failure="continue"
    )
    session = await handle_request(dispatcher, Session(id="s-1"), {"model": "small"})
    app.saved[session.id] = session.to_dict()
    listed = await dispatcher.list_actions({}, manual_only=True)
    return {
        "plugins": [p.name for p in found.plugins],
        "errors": [e.message for e in found.errors],
        "manual_actions": [f"{x.plugin}.{x.action.id}" for x in listed],
        "saved": app.saved,
    }


if __name__ == "__main__":
    print(anyio.run(main, sys.argv[1:]))
