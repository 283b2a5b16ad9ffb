"""The one vocabulary of error results: every ``details["error"]`` kind and its codes.

Every error result the adapter, the isolation proxies and the MCP mount produce carries
``details["error"]`` (the *kind*) and, where a kind has more than one cause,
``details["code"]`` from this table. ``docs/errors.md`` lists it, and
``tests/test_error_results.py`` keeps the two equal and checks that the package uses no kind
missing here. A tool's own exception is the one open kind: its class name, with a code only
for a ``BaseException`` (:data:`TOOL_RAISED`).
"""

from __future__ import annotations

from typing import Final

__all__ = ["ERROR_RESULTS", "TOOL_RAISED"]

TOOL_RAISED: Final = "<exception class name>"
"""The kind of a result for an exception the tool raised: its class name."""

ERROR_RESULTS: Final[dict[str, tuple[str, tuple[str, ...]]]] = {
    "ToolArgumentsError": ("the arguments are invalid", ()),
    "ToolAbortedError": (
        "the call was cancelled: its signal was aborted, or the caller's task was cancelled",
        ("aborted", "caller-cancelled"),
    ),
    "ToolTimeoutError": ("the call's deadline passed", ("timeout",)),
    "ThreadLimit": (
        "a sync call was refused: that tool has too many abandoned threads",
        ("thread-limit",),
    ),
    "ContentError": ("the tool returned something that is not a result", ()),
    "OutputSchemaError": (
        "the structured content breaks the tool's output schema",
        ("missing-structured-content", "invalid-structured-content"),
    ),
    "ApprovalDenied": (
        "a call that needs approval was not run",
        ("approval-denied", "approval-timeout", "no-approver", "approval-error"),
    ),
    "WorkerLost": ("an isolated tool's worker process ended or was killed", ()),
    "MessageTooLarge": ("arguments or a result too large to cross to/from a worker", ()),
    "ToolNotFound": ("the worker process no longer defines the tool", ()),
    "McpServerError": ("a mounted MCP server failed or refused the call", ()),
    TOOL_RAISED: (
        "the tool raised (or exited); only a BaseException carries a code",
        ("tool-exit", "tool-base-exception"),
    ),
}
"""kind -> (what it means, its codes)."""
