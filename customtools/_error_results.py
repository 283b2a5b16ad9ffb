"""The one vocabulary of error results and load records, and the builder of error results.

An error result carries ``details["error"]`` (its *kind*, :class:`Kind`) and
``details["code"]`` (its cause, :class:`Code`); a ``LoadError``, ``Diagnostic`` or
``ServeDiagnostic`` carries a :class:`LoadCode`. Each kind and each load code is one row below
(the row registers it in :data:`ERROR_RESULTS` or :data:`LOAD_CODES`, which docs/errors.md
lists), and the package spells them only through these names, so a typo is a name error. The
rulebook (``customtools._rules``) adds a severity to every code of a load record. A tool's own
exception is the one open kind (:attr:`Kind.TOOL_RAISED`): its class name, with a code only for
a ``BaseException``.

The names are ``Final`` strings, not enums: the project supports Python 3.10, which has no
``StrEnum``, and a ``(str, Enum)`` member formats differently across versions and is not the
plain ``str`` that crosses the wire to workers and MCP clients.
"""

from __future__ import annotations

import logging
from typing import Any, Final

from customtools._content import ToolResult, text_result
from customtools._format import describe_exception, safe_str

__all__ = [
    "ERROR_RESULTS",
    "LOAD_CODES",
    "Code",
    "Kind",
    "LoadCode",
    "error_result",
    "failure_code",
    "failure_result",
]

ERROR_RESULTS: Final[dict[str, tuple[str, tuple[str, ...]]]] = {}
"""kind -> (what it means, its codes), in the order of the docs."""

LOAD_CODES: Final[dict[str, tuple[str, str]]] = {}
"""code -> (the record that carries it, what it means), in the order of the docs."""


def _kind(kind: str, meaning: str, *codes: str) -> str:
    ERROR_RESULTS[kind] = (meaning, codes)
    return kind


def _load(record: str, meaning: str, code: str) -> str:
    LOAD_CODES[code] = (record, meaning)
    return code


class Code:
    """``details["code"]`` of an error result: why it is one."""

    INVALID_ARGUMENTS: Final = "invalid-arguments"
    ABORTED: Final = "aborted"
    CALLER_CANCELLED: Final = "caller-cancelled"
    TIMEOUT: Final = "timeout"
    THREAD_LIMIT: Final = "thread-limit"
    UNUSABLE_RESULT: Final = "unusable-result"
    MISSING_STRUCTURED_CONTENT: Final = "missing-structured-content"
    INVALID_STRUCTURED_CONTENT: Final = "invalid-structured-content"
    APPROVAL_DENIED: Final = "approval-denied"
    APPROVAL_TIMEOUT: Final = "approval-timeout"
    NO_APPROVER: Final = "no-approver"
    APPROVAL_ERROR: Final = "approval-error"
    WORKER_CRASHED: Final = "worker-crashed"
    WORKER_KILLED: Final = "worker-killed"
    MODULE_DEAD: Final = "module-dead"
    MESSAGE_TOO_LARGE: Final = "message-too-large"
    TOOL_NOT_FOUND: Final = "tool-not-found"
    SANDBOX_DENIED: Final = "sandbox-denied"
    UNAVAILABLE: Final = "unavailable"
    CONNECTION_LOST: Final = "connection-lost"
    REFUSED: Final = "refused"
    INVALID_RESULT: Final = "invalid-result"
    TOOL_EXIT: Final = "tool-exit"
    """A ``SystemExit`` raised by tool code."""
    TOOL_BASE_EXCEPTION: Final = "tool-base-exception"
    """Any other ``BaseException`` of tool code (``GeneratorExit``, a cancellation exception the
    tool raised itself, a ``KeyboardInterrupt`` raised in a worker thread, ...)."""


class Kind:
    """``details["error"]`` of an error result, one row per kind: name, meaning, codes."""

    ARGUMENTS: Final = _kind(
        "ToolArgumentsError",
        "the arguments are invalid (`violations`: `[{path, message, keyword}]`)",
        Code.INVALID_ARGUMENTS,
    )
    ABORTED: Final = _kind(
        "ToolAbortedError",
        "the call was cancelled: its signal was aborted, or the caller's task was cancelled",
        Code.ABORTED,
        Code.CALLER_CANCELLED,
    )
    TIMEOUT: Final = _kind("ToolTimeoutError", "the call's deadline passed", Code.TIMEOUT)
    THREAD_LIMIT: Final = _kind(
        "ThreadLimit",
        "a sync call was refused: that tool has too many abandoned threads",
        Code.THREAD_LIMIT,
    )
    CONTENT: Final = _kind(
        "ContentError", "the tool returned something that is not a result", Code.UNUSABLE_RESULT
    )
    OUTPUT_SCHEMA: Final = _kind(
        "OutputSchemaError",
        "the structured content breaks the tool's output schema",
        Code.MISSING_STRUCTURED_CONTENT,
        Code.INVALID_STRUCTURED_CONTENT,
    )
    APPROVAL_DENIED: Final = _kind(
        "ApprovalDenied",
        "a call that needs approval was not run",
        Code.APPROVAL_DENIED,
        Code.APPROVAL_TIMEOUT,
        Code.NO_APPROVER,
        Code.APPROVAL_ERROR,
    )
    WORKER_LOST: Final = _kind(
        "WorkerLost",
        "an isolated tool's worker process ended or was killed",
        Code.WORKER_CRASHED,
        Code.WORKER_KILLED,
        Code.MODULE_DEAD,
    )
    MESSAGE_TOO_LARGE: Final = _kind(
        "MessageTooLarge",
        "arguments or a result too large to cross to/from a worker",
        Code.MESSAGE_TOO_LARGE,
    )
    TOOL_NOT_FOUND: Final = _kind(
        "ToolNotFound", "the worker process no longer defines the tool", Code.TOOL_NOT_FOUND
    )
    SANDBOX_DENIED: Final = _kind(
        "SandboxDenied",
        "a sandboxed tool was denied what its pack did not declare (details: permission, path)",
        Code.SANDBOX_DENIED,
    )
    MCP_SERVER: Final = _kind(
        "McpServerError",
        "a mounted MCP server failed, refused or did not answer the call, or answered it with"
        " an invalid result (a JSON-RPC error code is in rpc_code)",
        Code.UNAVAILABLE,
        Code.CONNECTION_LOST,
        Code.REFUSED,
        Code.TIMEOUT,
        Code.INVALID_RESULT,
    )
    TOOL_RAISED: Final = _kind(
        "<exception class name>",
        "the tool raised (or exited); only a BaseException carries a code (`message`; for"
        " `SystemExit` also `exit_code`)",
        Code.TOOL_EXIT,
        Code.TOOL_BASE_EXCEPTION,
    )


_IMPORT = (
    "the module does not import (the line is the failing line of the module, or of the"
    " package's helper file)"
)
_FACTORY = (
    "the factory contract: no factory, a factory that raises, exits or returns something other"
    " than tools, an invalid tool (bad name, schema or field), an async factory past its bound,"
    " a module that changes process state (undone; its tools are not loaded)"
)
_PATH = "path problems from the scan (see [discovery.md](discovery.md))"
_WORKER = (
    "an isolation worker: the module ended it while loading, its `PERMISSIONS` cannot be"
    " read, or the worker itself failed (a customtools bug)"
)
_WORTH = "scan and load diagnostics worth fixing"
_INFO = (
    "informational: a skipped or disabled source, a module that left threads running, a"
    " reload that kept the previous tools, a message of an `.mcp.json` server"
)
_SANDBOX = (
    "what the kernel enforces of a sandboxed module's permissions (`sandbox-unavailable`"
    " is a load error under `require_sandbox`)"
)
_SERVE = (
    "a tool `serve` does not offer: a name MCP clients reject, a name taken, or a"
    " parameters schema that is not an object"
)


class LoadCode:
    """``code`` of a ``LoadError``, a ``Diagnostic`` or a ``ServeDiagnostic``."""

    SYNTAX_ERROR: Final = _load("LoadError", _IMPORT, "syntax-error")
    IMPORT_ERROR: Final = _load("LoadError", _IMPORT, "import-error")
    MISSING_DEPENDENCY: Final = _load("LoadError", _IMPORT, "missing-dependency")
    MODULE_EXIT: Final = _load("LoadError", _IMPORT, "module-exit")
    NO_FACTORY: Final = _load("LoadError", _FACTORY, "no-factory")
    FACTORY_NOT_CALLABLE: Final = _load("LoadError", _FACTORY, "factory-not-callable")
    FACTORY_ERROR: Final = _load("LoadError", _FACTORY, "factory-error")
    FACTORY_EXIT: Final = _load("LoadError", _FACTORY, "factory-exit")
    INVALID_RETURN: Final = _load("LoadError", _FACTORY, "invalid-return")
    INVALID_TOOL: Final = _load("LoadError", _FACTORY, "invalid-tool")
    TIMEOUT: Final = _load("LoadError", _FACTORY, "timeout")
    CHANGED_PROCESS_STATE: Final = _load("LoadError", _FACTORY, "changed-process-state")
    NOT_FOUND: Final = _load("LoadError", _PATH, "not-found")
    UNREADABLE: Final = _load("LoadError", _PATH, "unreadable")
    METADATA_NOT_EXECUTABLE: Final = _load("LoadError", _PATH, "metadata-not-executable")
    NOT_A_MODULE: Final = _load("LoadError", _PATH, "not-a-module")
    INVALID_PATH: Final = _load("LoadError", _PATH, "invalid-path")
    INVALID_MANIFEST: Final = _load("LoadError", _PATH, "invalid-manifest")
    PATH_OUTSIDE_PLUGIN: Final = _load("LoadError", _PATH, "path-outside-plugin")
    INVALID_DISTRIBUTION: Final = _load("LoadError", _PATH, "invalid-distribution")
    INVALID_ENTRY_POINT: Final = _load("LoadError", _PATH, "invalid-entry-point")
    PROVIDER_ERROR: Final = _load("LoadError", _PATH, "provider-error")
    LOAD_ERROR: Final = _load("LoadError", _PATH, "load-error")
    NAME_CONFLICT: Final = _load(
        "LoadError", "the name is built in or already taken by an earlier tool", "name-conflict"
    )
    TRUST_STORE_ERROR: Final = _load(
        "LoadError",
        "the trust store cannot be read; no project source was loaded",
        "trust-store-error",
    )
    INVALID_MCP_JSON: Final = _load(
        "LoadError",
        "an `.mcp.json` file cannot be read or declares an invalid server",
        "invalid-mcp-json",
    )
    WORKER_CRASHED: Final = _load("LoadError", _WORKER, "worker-crashed")
    INVALID_PERMISSIONS: Final = _load("LoadError", _WORKER, "invalid-permissions")
    INTERNAL_ERROR: Final = _load("LoadError", _WORKER, "internal-error")
    NO_TOOLS: Final = _load("Diagnostic", _WORTH, "no-tools")
    INVALID_METADATA: Final = _load("Diagnostic", _WORTH, "invalid-metadata")
    BROKEN_SYMLINK: Final = _load("Diagnostic", _WORTH, "broken-symlink")
    UNREADABLE_DIRECTORY: Final = _load("Diagnostic", _WORTH, "unreadable-directory")
    INVALID_REGISTRY: Final = _load("Diagnostic", _WORTH, "invalid-registry")
    INVALID_REGISTRY_ENTRY: Final = _load("Diagnostic", _WORTH, "invalid-registry-entry")
    BROKEN_DISTRIBUTION: Final = _load("Diagnostic", _WORTH, "broken-distribution")
    UNKNOWN_PROVIDER: Final = _load("Diagnostic", _WORTH, "unknown-provider")
    SIMILAR_NAME: Final = _load(
        "Diagnostic", "two tool names differ only by letter case", "similar-name"
    )
    PENDING_TRUST: Final = _load(
        "Diagnostic", "a project source was not loaded: it is not trusted", "pending-trust"
    )
    SKIPPED_FILE: Final = _load("Diagnostic", _INFO, "skipped-file")
    SKIPPED_DIRECTORY: Final = _load("Diagnostic", _INFO, "skipped-directory")
    DUPLICATE_PATH: Final = _load("Diagnostic", _INFO, "duplicate-path")
    METADATA_OUTSIDE_ROOT: Final = _load("Diagnostic", _INFO, "metadata-outside-root")
    PROVIDER_DISABLED: Final = _load("Diagnostic", _INFO, "provider-disabled")
    PLUGIN_DISABLED: Final = _load("Diagnostic", _INFO, "plugin-disabled")
    STARTED_THREADS: Final = _load("Diagnostic", _INFO, "started-threads")
    RELOAD_KEPT_PREVIOUS: Final = _load("Diagnostic", _INFO, "reload-kept-previous")
    MCP_SERVER: Final = _load("Diagnostic", _INFO, "mcp-server")
    SANDBOX_ENFORCED: Final = _load("Diagnostic", _SANDBOX, "sandbox-enforced")
    SANDBOX_PARTIAL: Final = _load("Diagnostic", _SANDBOX, "sandbox-partial")
    SANDBOX_UNAVAILABLE: Final = _load("Diagnostic", _SANDBOX, "sandbox-unavailable")
    INVALID_NAME: Final = _load("ServeDiagnostic", _SERVE, "invalid-name")
    DUPLICATE_NAME: Final = _load("ServeDiagnostic", _SERVE, "duplicate-name")
    SCHEMA_ROOT: Final = _load("ServeDiagnostic", _SERVE, "schema-root")


_log = logging.getLogger("customtools.adapter")


def error_result(kind: str, code: str | None, text: str, **details: Any) -> ToolResult:
    """The error result of ``kind`` and ``code`` (``None`` only for :attr:`Kind.TOOL_RAISED`),
    with ``text`` for the model and ``details`` beside ``error`` and ``code``."""
    if code is None:
        return text_result(text, {"error": kind, **details}, True)
    return text_result(text, {"error": kind, "code": code, **details}, True)


def failure_code(exc: BaseException) -> str | None:
    """The ``details["code"]`` for ``exc`` raised by tool code; ``None`` for an ordinary
    ``Exception`` (those are named by ``details["error"]`` alone)."""
    if isinstance(exc, Exception):
        return None
    return Code.TOOL_EXIT if isinstance(exc, SystemExit) else Code.TOOL_BASE_EXCEPTION


def failure_result(exc: BaseException, tool_name: str, doing: str | None = None) -> ToolResult:
    """The error result of ``exc`` raised by tool ``tool_name`` (while ``doing`` it, when
    the failure is the adapter's own step, such as preparing validation).

    Its kind is the exception's class name; its text never calls ``str(exc)`` directly, since
    tool code controls ``__str__``.
    """
    kind = type(exc).__name__
    _log.debug("tool %r raised %s", tool_name, kind, exc_info=exc)
    described = describe_exception(exc)
    if described.startswith(f"{kind}: "):
        message = described[len(kind) + 2 :]
    elif described.endswith(" with no message"):
        message, described = kind, f"{kind}: {kind}"
    else:
        message = described  # "Kind (its message could not be read: ...)"
    code = failure_code(exc)
    if isinstance(exc, SystemExit):
        status: object = exc.code
        if not (status is None or isinstance(status, (int, str))):
            status = safe_str(status) or type(status).__name__
        text = (
            f"tool {tool_name!r} exited with sys.exit({status!r}) instead of returning a"
            " result (SystemExit; a tool must not exit the host)"
        )
        return error_result(kind, code, text, message=message, exit_code=status)
    if code is not None:
        text = f"tool {tool_name!r} raised {described} (a BaseException, not an Exception)"
    else:
        text = f"tool {tool_name!r} {doing}: {described}" if doing else described
    return error_result(kind, code, text, message=message)
