"""Exceptions and warnings of :mod:`customtools.actions`.

The classes live in :mod:`customtools._errors` with the rest of the tree (drawn there);
they are re-exported here for the actions package's modules.
"""

from __future__ import annotations

from customtools._errors import (
    ActionDefinitionError,
    ActionError,
    ActionFailedError,
    ActionInputError,
    ActionNotFoundError,
    ActionResultError,
    ActionTimeoutError,
    ContextError,
    DisplayError,
    PluginError,
    ReservedContextKeyWarning,
)

__all__ = [
    "ActionDefinitionError",
    "ActionError",
    "ActionFailedError",
    "ActionInputError",
    "ActionNotFoundError",
    "ActionResultError",
    "ActionTimeoutError",
    "ContextError",
    "DisplayError",
    "PluginError",
    "ReservedContextKeyWarning",
]
