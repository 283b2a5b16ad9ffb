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
    ├── CustomizationError (ValueError)     host toolkit: a customization payload is malformed
    ├── ActionRejectedError                 host toolkit: a client's action must be refused
    └── JsonRpcError                        an extension request failed with a JSON-RPC code

Plugin actions own their branch under ``CustomToolsError``: ``ActionError`` and its subclasses
live in :mod:`customtools.actions` (drawn in ``customtools/actions/_errors.py``).

Messages are part of the API: they name the tool, path or field and say what to do.
Tests pin them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from customtools._validation._model import Violation

__all__ = [
    "ActionRejectedError",
    "ContentError",
    "CustomToolsError",
    "CustomizationError",
    "JsonRpcError",
    "LoadFailedError",
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


class CustomizationError(CustomToolsError, ValueError):
    """A wire payload of the customization or tool model is malformed.

    Raised by ``from_dict`` when a *known* discriminator carries a payload that does not fit its
    shape (a ``directory`` without ``contents``, a ``degraded`` load state without ``message``).
    Unknown discriminators are never an error in open unions; they decode to opaque values.

    Attributes:
        where: the JSON path of the offending value (``customizations[1].load``).
    """

    def __init__(self, message: str, *, where: str = "") -> None:
        super().__init__(message)
        self.where = where


class ActionRejectedError(CustomToolsError):
    """The host refuses an action a client dispatched.

    The protocol's answer is to echo the action back in an ``ActionEnvelope`` with
    ``rejectionReason`` set; :meth:`envelope` builds that echo.

    Attributes:
        reason: the ``rejectionReason`` text (also the exception message).
        action: the rejected action, as dispatched.
        client_id: the client that dispatched it.
    """

    def __init__(self, reason: str, *, action: Mapping[str, Any], client_id: str) -> None:
        super().__init__(reason)
        self.reason = reason
        self.action = dict(action)
        self.client_id = client_id

    def envelope(self, *, channel: str, server_seq: int, client_seq: int) -> dict[str, Any]:
        """Return the rejection echo: ``{channel, action, serverSeq, origin, rejectionReason}``."""
        return {
            "channel": channel,
            "action": dict(self.action),
            "serverSeq": server_seq,
            "origin": {"clientId": self.client_id, "clientSeq": client_seq},
            "rejectionReason": self.reason,
        }


class JsonRpcError(CustomToolsError):
    """A JSON-RPC error: raise it from an extension handler to answer with a specific code.

    Attributes:
        code: the JSON-RPC error code (any integer survives a round trip).
        data: optional ``data`` member of the error object.
    """

    def __init__(self, code: int, message: str, *, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON-RPC ``error`` object."""
        out: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            out["data"] = self.data
        return out
