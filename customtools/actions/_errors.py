"""The exception branch of :mod:`customtools.actions`, hanging off :class:`CustomToolsError`::

    CustomToolsError                        (customtools)
    └── ActionError                         every error customtools.actions raises on purpose
        ├── ActionDefinitionError (ValueError)  an action list breaks the rules
        ├── ActionResultError (ValueError)      a result breaks its plugin kind's contract
        │   └── DisplayError                    a ``display`` payload is invalid
        ├── ContextError (ValueError)           execution context is not serializable
        ├── ActionInputError (ValueError)       manual params miss a required input
        ├── ActionNotFoundError (LookupError)   no such plugin or action
        ├── PluginError (ValueError)            a plugin object or registration is unusable
        └── ActionFailedError                   an action raised or timed out
            └── ActionTimeoutError (TimeoutError)

:class:`ReservedContextKeyWarning` (a ``UserWarning``) is emitted when caller context for a
plugin action tries to set a key the context builder owns.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from customtools._errors import CustomToolsError

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


class ActionError(CustomToolsError):
    """Base class of every error raised by :mod:`customtools.actions`."""


class ActionDefinitionError(ActionError, ValueError):
    """An action definition (or a plugin's list of them) breaks a rule.

    Attributes:
        plugin: the plugin whose ``get_actions`` produced the definition, when known.
        action_id: the offending action id, when known.
    """

    def __init__(
        self, message: str, *, plugin: str | None = None, action_id: str | None = None
    ) -> None:
        super().__init__(message)
        self.plugin = plugin
        self.action_id = action_id


class ActionResultError(ActionError, ValueError):
    """An action returned a result its plugin kind may not return.

    Attributes:
        plugin: the plugin name.
        action_id: the action id.
    """

    def __init__(
        self, message: str, *, plugin: str | None = None, action_id: str | None = None
    ) -> None:
        super().__init__(message)
        self.plugin = plugin
        self.action_id = action_id


class DisplayError(ActionResultError):
    """A ``display`` payload (or one of its follow-up actions) is invalid.

    Attributes:
        path: JSON-Pointer-like path of the offending field inside the payload.
    """

    def __init__(self, message: str, *, path: str = "") -> None:
        super().__init__(message)
        self.path = path


class ContextError(ActionError, ValueError):
    """Execution context that must be JSON-serializable is not.

    Attributes:
        key_path: the offending place, such as ``context['error']['args'][0]``.
    """

    def __init__(self, message: str, *, key_path: str = "") -> None:
        super().__init__(message)
        self.key_path = key_path


class ActionInputError(ActionError, ValueError):
    """Params for a manual action miss a required input or have the wrong type."""


class ActionNotFoundError(ActionError, LookupError):
    """No registered plugin has that name, or the plugin offers no action with that id."""


class PluginError(ActionError, ValueError):
    """A plugin object or registration is unusable (missing methods, duplicate name, ...)."""


class ActionFailedError(ActionError):
    """An action (or a plugin hook) raised, broke its contract, or timed out.

    The original exception is chained as ``__cause__``.

    Attributes:
        plugin: the plugin name.
        action_id: the action id (``None`` when ``init`` or ``get_actions`` failed).
        stage: ``"init"``, ``"get_actions"`` or ``"execute"``.
        error: the serialized error (``{"type": ..., "message": ...}``).
    """

    def __init__(
        self,
        message: str,
        *,
        plugin: str,
        action_id: str | None,
        stage: str,
        error: Mapping[str, Any],
    ) -> None:
        super().__init__(message)
        self.plugin = plugin
        self.action_id = action_id
        self.stage = stage
        self.error = dict(error)


class ActionTimeoutError(ActionFailedError, TimeoutError):
    """An action (or plugin hook) ran past the dispatcher's timeout. Also a TimeoutError."""


class ReservedContextKeyWarning(UserWarning):
    """Caller context tried to set a key owned by the context builder; the value was dropped."""
