"""Plugin actions: manual and lifecycle-triggered actions, and their dispatcher.

Plugins offer *actions* through ``get_actions(state)`` and run them through
``execute_action(...)``. An action without a ``trigger`` runs when a user or UI asks for it;
an action with ``trigger: "request_prepare"`` (or any lifecycle name, or a list) also runs
automatically when a host calls :meth:`ActionDispatcher.run_lifecycle` with that name.

Two plugin kinds share the concept: *application plugins* return application-level results
(session mutations, ``ui_effects``, ``display``), *session plugins* (provider extensions,
features) return only ``native_messages`` and ``session_metadata`` patches for one session.

Quick start::

    from customtools.actions import ActionDispatcher, REQUEST_PREPARE, Session, find_plugins

    found = find_plugins(["~/.customtools/plugins/my-pack"])
    dispatcher = ActionDispatcher(found.registry(), app=my_app, app_config=config)
    result = await dispatcher.run_lifecycle(REQUEST_PREPARE, Session(id="s1"), config)
    session = result.session

See ``docs/actions.md`` for the walkthrough, the failure policy and the plugin module contract.
"""

from __future__ import annotations

from customtools._public import rehome as _rehome
from customtools.actions import (
    _context,
    _definition,
    _dispatcher,
    _display,
    _errors,
    _finder,
    _lifecycle,
    _plugins,
    _results,
    _session,
)
from customtools.actions._context import *  # noqa: F403 - each module's __all__ is public
from customtools.actions._definition import *  # noqa: F403
from customtools.actions._dispatcher import *  # noqa: F403
from customtools.actions._display import *  # noqa: F403
from customtools.actions._errors import *  # noqa: F403
from customtools.actions._finder import *  # noqa: F403
from customtools.actions._invoke import IdentityCodec, NativeCodec
from customtools.actions._lifecycle import *  # noqa: F403
from customtools.actions._merge import ListedAction
from customtools.actions._plugins import *  # noqa: F403
from customtools.actions._results import *  # noqa: F403
from customtools.actions._session import *  # noqa: F403

__all__ = [
    *_context.__all__,
    *_definition.__all__,
    *_dispatcher.__all__,
    *_display.__all__,
    *_errors.__all__,
    *_finder.__all__,
    *_lifecycle.__all__,
    *_plugins.__all__,
    *_results.__all__,
    *_session.__all__,
    "IdentityCodec",
    "ListedAction",
    "NativeCodec",
]
__all__.sort(key=lambda name: (not name.isupper(), name))  # constants first, as in the modules

_rehome(globals(), __name__, __all__)
