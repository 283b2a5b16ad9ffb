"""The one vocabulary of error results: every ``details["error"]`` kind and its codes.

Every error result the adapter, the isolation proxies and the MCP mount produce carries
``details["error"]`` (the *kind*) and ``details["code"]``, both from this table.
``docs/errors.md`` lists it, and ``tests/test_error_results.py`` keeps the two equal and checks
that the package uses no kind or code missing here. A tool's own exception is the one open
kind: its class name, with a code only for a ``BaseException`` (:data:`TOOL_RAISED`); an
ordinary exception is named by its kind alone, as docs/errors.md has always said.
"""

from __future__ import annotations

from typing import Final

__all__ = ["ERROR_RESULTS", "TOOL_RAISED"]

TOOL_RAISED: Final = "<exception class name>"
"""The kind of a result for an exception the tool raised: its class name."""

ERROR_RESULTS: Final[dict[str, tuple[str, tuple[str, ...]]]] = {
    "ToolArgumentsError": ("the arguments are invalid", ("invalid-arguments",)),
    "ToolAbortedError": (
        "the call was cancelled: its signal was aborted, or the caller's task was cancelled",
        ("aborted", "caller-cancelled"),
    ),
    "ToolTimeoutError": ("the call's deadline passed", ("timeout",)),
    "ThreadLimit": (
        "a sync call was refused: that tool has too many abandoned threads",
        ("thread-limit",),
    ),
    "ContentError": ("the tool returned something that is not a result", ("unusable-result",)),
    "OutputSchemaError": (
        "the structured content breaks the tool's output schema",
        ("missing-structured-content", "invalid-structured-content"),
    ),
    "ApprovalDenied": (
        "a call that needs approval was not run",
        ("approval-denied", "approval-timeout", "no-approver", "approval-error"),
    ),
    "WorkerLost": (
        "an isolated tool's worker process ended or was killed",
        ("worker-crashed", "worker-killed", "module-dead"),
    ),
    "MessageTooLarge": (
        "arguments or a result too large to cross to/from a worker",
        ("message-too-large",),
    ),
    "ToolNotFound": ("the worker process no longer defines the tool", ("tool-not-found",)),
    "LazyLoadFailed": (
        "a tool loaded from the manifest cache could not be imported on its first call, or its"
        " module no longer defines it as cached (load the tools again)",
        ("import-failed", "definition-changed"),
    ),
    "SandboxDenied": (
        "a sandboxed tool was denied what its pack did not declare (details: permission, path)",
        ("sandbox-denied",),
    ),
    "McpServerError": (
        "a mounted MCP server failed, refused or did not answer the call, or answered it with"
        " an invalid result (a JSON-RPC error code is in rpc_code)",
        ("unavailable", "connection-lost", "refused", "timeout", "invalid-result"),
    ),
    TOOL_RAISED: (
        "the tool raised (or exited); only a BaseException carries a code",
        ("tool-exit", "tool-base-exception"),
    ),
}
"""kind -> (what it means, its codes)."""
