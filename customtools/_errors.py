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
    ├── TransientToolError                  a tool's failure worth retrying (customtools.policy)
    ├── LoadFailedError                     a strict load met errors (all of them are listed)
    └── TrustStoreError (ValueError)        the trust store cannot be read, parsed or written

Each package owns its branch under ``CustomToolsError``: ``ActionError`` and its subclasses
live in :mod:`customtools.actions`, the host toolkit's errors (``CustomizationError``,
``ActionRejectedError``, ``JsonRpcError``) in :mod:`customtools.host`. ``docs/errors.md``
draws the whole tree from the code.

Messages are part of the API: they name the tool, path or field and say what to do.
Tests pin them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from customtools._violations import Violation

__all__ = [
    "ContentError",
    "CustomToolsError",
    "LoadFailedError",
    "SchemaError",
    "ToolAbortedError",
    "ToolArgumentsError",
    "ToolDefinitionError",
    "ToolTimeoutError",
    "TransientToolError",
    "TrustStoreError",
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


class TransientToolError(CustomToolsError):
    """A tool's failure that may pass if the call is made again (its service was busy).

    A tool raises it when the service it calls timed out or answered "busy". The call's
    error result has ``details["error"] == "TransientToolError"``, which the execution
    policy retries, with backoff, for a tool annotated idempotent (and never for one
    annotated destructive); see docs/policy.md.
    """


class LoadFailedError(CustomToolsError):
    """A strict load met one or more errors; ``errors`` holds every ``LoadError`` record."""

    def __init__(self, message: str, *, errors: Sequence[Any] = ()) -> None:
        super().__init__(message)
        self.errors = tuple(errors)


class TrustStoreError(CustomToolsError, ValueError):
    """The trust store cannot be read, parsed or written; the message names the file.

    Never "trusted": a load that meets it loads no project code (see ``docs/trust.md``).

    Attributes:
        path: the store file.
    """

    def __init__(self, message: str, *, path: str) -> None:
        super().__init__(message)
        self.path = path
