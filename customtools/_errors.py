"""The exception tree of customtools.

Every exception the library raises on purpose derives from :class:`CustomToolsError`, and
also from the builtin it resembles, so callers can catch either::

    CustomToolsError
    ├── ToolDefinitionError (ValueError)   a tool's fields break the rules (name, execute, ...)
    │   └── SchemaError                     ``parameters`` is not a usable JSON Schema
    ├── ContentError (ValueError)           a result, update or content block has the wrong shape
    ├── ToolArgumentsError (ValueError)     call arguments failed validation (every violation)
    ├── ToolAbortedError                    a call was aborted through its signal
    │   └── ToolTimeoutError (TimeoutError) a call ran past its timeout
    ├── LoadFailedError                     a strict load met errors (all of them are listed)
    └── ActionError                         plugin actions (customtools.actions)
        ├── ActionDefinitionError (ValueError)  an action list breaks the rules
        ├── ActionResultError (ValueError)      a result breaks its plugin kind's contract
        │   └── DisplayError                    a ``display`` payload is invalid
        ├── ContextError (ValueError)           execution context is not serializable
        ├── ActionInputError (ValueError)       manual params miss a required input
        ├── ActionNotFoundError (LookupError)   no such plugin or action
        ├── PluginError (ValueError)            a plugin object or registration is unusable
        └── ActionFailedError                   an action raised or timed out
            └── ActionTimeoutError (TimeoutError)

``ReservedContextKeyWarning`` (a ``UserWarning``) is emitted when caller context for a plugin
action tries to set a key the context builder owns.

Messages are part of the API: they name the tool, path or field and say what to do.
Tests pin them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from customtools._validation._model import Violation

__all__ = [
    "ActionDefinitionError",
    "ActionError",
    "ActionFailedError",
    "ActionInputError",
    "ActionNotFoundError",
    "ActionResultError",
    "ActionTimeoutError",
    "ContentError",
    "ContextError",
    "CustomToolsError",
    "DisplayError",
    "LoadFailedError",
    "PluginError",
    "ReservedContextKeyWarning",
    "SchemaError",
    "ToolAbortedError",
    "ToolArgumentsError",
    "ToolDefinitionError",
    "ToolTimeoutError",
]


class CustomToolsError(Exception):
    """Base class of every error customtools raises on purpose."""


class ToolDefinitionError(CustomToolsError, ValueError):
    """A tool definition breaks a rule: a bad name, a missing ``execute``, a wrong option.

    Raised when a :class:`~customtools.CustomTool` is constructed. The loader turns it into a
    ``LoadError`` record for that tool, so one bad tool never stops a load.
    """


class SchemaError(ToolDefinitionError):
    """A tool's ``parameters`` is not a valid JSON Schema (Draft 2020-12) or exceeds a limit.

    Attributes:
        path: JSON Pointer to the offending place in the schema (``""`` for the root).
    """

    def __init__(self, message: str, *, path: str = "") -> None:
        super().__init__(message)
        self.path = path


class ContentError(CustomToolsError, ValueError):
    """A result, partial update or content block does not have a shape customtools accepts."""


class ToolArgumentsError(CustomToolsError, ValueError):
    """Arguments for a tool call failed validation.

    Attributes:
        tool_name: the tool the arguments were meant for (``None`` when unknown).
        violations: every violation found, each with a JSON Pointer path and a message.
    """

    def __init__(
        self, message: str, *, violations: Sequence[Violation] = (), tool_name: str | None = None
    ) -> None:
        super().__init__(message)
        self.violations = tuple(violations)
        self.tool_name = tool_name


class ToolAbortedError(CustomToolsError):
    """A tool call was aborted through its :class:`~customtools.AbortSignal`.

    Raised by :meth:`AbortSignal.raise_if_aborted`; the adapter turns an aborted call into an
    error result saying it was cancelled, so hosts normally see this only inside tool code.

    Attributes:
        reason: the reason given to :meth:`AbortController.abort` (any object).
    """

    def __init__(self, message: str = "the operation was aborted", *, reason: Any = None) -> None:
        super().__init__(message)
        self.reason = reason


class ToolTimeoutError(ToolAbortedError, TimeoutError):
    """A tool call ran past its timeout. Also a :class:`TimeoutError`."""


class LoadFailedError(CustomToolsError):
    """A strict load met one or more errors; ``errors`` holds every ``LoadError`` record."""

    def __init__(self, message: str, *, errors: Sequence[Any] = ()) -> None:
        super().__init__(message)
        self.errors = tuple(errors)


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
