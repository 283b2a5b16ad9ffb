"""The one vocabulary of error results and load records, and the builder of error results.

An error result's ``details["error"]`` is a :class:`Kind` and its ``details["code"]`` a
:class:`Code`; a ``LoadError``, ``Diagnostic`` or ``ServeDiagnostic`` carries a
:class:`LoadCode`. Each is one row below, registered in the tables docs/errors.md lists; the
package spells them only through these names, so a typo is a name error. The rulebook
(``customtools._rules``) adds a severity to each code of a load record. The names are ``Final``
strings, not enums: Python 3.10 has no ``StrEnum``, and a ``(str, Enum)`` member formats
differently across versions and is not the plain ``str`` that crosses the wire.
"""

from __future__ import annotations

from typing import Any, Final

from customtools._content import ToolResult, text_result
from customtools._format import describe_exception, logger, safe_str

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

ERROR_RESULTS: Final[dict[str, tuple[str, tuple[str, ...]]]] = {}  # kind -> (meaning, codes)
LOAD_CODES: Final[dict[str, tuple[str, str]]] = {}  # code -> (its record's class, meaning)


def _kind(kind: str, meaning: str) -> str:
    ERROR_RESULTS[kind] = (meaning, ())
    return kind


def _code(code: str, *kinds: str) -> str:
    for kind in kinds:
        meaning, codes = ERROR_RESULTS[kind]
        ERROR_RESULTS[kind] = (meaning, (*codes, code))
    return code


def _load(record: str, meaning: str, code: str) -> str:
    LOAD_CODES[code] = (record, meaning)
    return code


class Kind:
    """``details["error"]`` of an error result: what went wrong (one row per kind)."""

    ARGUMENTS: Final = _kind("ToolArgumentsError", "the arguments are invalid")
    ABORTED: Final = _kind("ToolAbortedError", "the call's signal aborted, or its caller cancelled")
    TIMEOUT: Final = _kind("ToolTimeoutError", "the call's deadline passed")
    THREAD_LIMIT: Final = _kind("ThreadLimit", "refused: the tool has too many abandoned threads")
    CONTENT: Final = _kind("ContentError", "the tool returned something that is not a result")
    OUTPUT_SCHEMA: Final = _kind("OutputSchemaError", "the result breaks the output schema")
    APPROVAL_DENIED: Final = _kind("ApprovalDenied", "a call that needs approval was not run")
    WORKER_LOST: Final = _kind("WorkerLost", "an isolated tool's worker ended or was killed")
    UNREVIEWED_CODE: Final = _kind("UnreviewedCode", "a file changed since the user trusted it")
    MESSAGE_TOO_LARGE: Final = _kind("MessageTooLarge", "arguments or result too big for a worker")
    TOOL_NOT_FOUND: Final = _kind("ToolNotFound", "the worker process no longer defines the tool")
    LAZY_LOAD_FAILED: Final = _kind("LazyLoadFailed", "a lazy tool's module failed or changed")
    SANDBOX_DENIED: Final = _kind("SandboxDenied", "a sandbox denied what the pack didn't declare")
    MCP_SERVER: Final = _kind("McpServerError", "a mounted MCP server failed, refused or timed out")
    TALKBACK: Final = _kind("TalkBackError", "nobody answered the tool's `ctx.ask` or `ctx.sample`")
    POLICY_REFUSED: Final = _kind("PolicyRefused", "the execution policy did not start the call")
    TOOL_RAISED: Final = _kind("<exception class name>", "the tool raised (or exited)")


class Code:
    """``details["code"]`` of an error result: why (one row per code, naming its kinds)."""

    INVALID_ARGUMENTS: Final = _code("invalid-arguments", Kind.ARGUMENTS)
    ABORTED: Final = _code("aborted", Kind.ABORTED)
    CALLER_CANCELLED: Final = _code("caller-cancelled", Kind.ABORTED)
    TIMEOUT: Final = _code("timeout", Kind.TIMEOUT, Kind.MCP_SERVER)
    THREAD_LIMIT: Final = _code("thread-limit", Kind.THREAD_LIMIT)
    UNUSABLE_RESULT: Final = _code("unusable-result", Kind.CONTENT)
    MISSING_STRUCTURED_CONTENT: Final = _code("missing-structured-content", Kind.OUTPUT_SCHEMA)
    INVALID_STRUCTURED_CONTENT: Final = _code("invalid-structured-content", Kind.OUTPUT_SCHEMA)
    APPROVAL_DENIED: Final = _code("approval-denied", Kind.APPROVAL_DENIED)
    APPROVAL_TIMEOUT: Final = _code("approval-timeout", Kind.APPROVAL_DENIED)
    NO_APPROVER: Final = _code("no-approver", Kind.APPROVAL_DENIED)
    APPROVAL_ERROR: Final = _code("approval-error", Kind.APPROVAL_DENIED)
    WORKER_CRASHED: Final = _code("worker-crashed", Kind.WORKER_LOST)
    WORKER_KILLED: Final = _code("worker-killed", Kind.WORKER_LOST)
    MODULE_DEAD: Final = _code("module-dead", Kind.WORKER_LOST)
    CHANGED_SINCE_TRUSTED: Final = _code("changed-since-trusted", Kind.UNREVIEWED_CODE)
    MESSAGE_TOO_LARGE: Final = _code("message-too-large", Kind.MESSAGE_TOO_LARGE)
    TOOL_NOT_FOUND: Final = _code("tool-not-found", Kind.TOOL_NOT_FOUND)
    IMPORT_FAILED: Final = _code("import-failed", Kind.LAZY_LOAD_FAILED)
    DEFINITION_CHANGED: Final = _code("definition-changed", Kind.LAZY_LOAD_FAILED)
    SANDBOX_DENIED: Final = _code("sandbox-denied", Kind.SANDBOX_DENIED)
    UNAVAILABLE: Final = _code("unavailable", Kind.MCP_SERVER)
    CONNECTION_LOST: Final = _code("connection-lost", Kind.MCP_SERVER)
    REFUSED: Final = _code("refused", Kind.MCP_SERVER)
    INVALID_RESULT: Final = _code("invalid-result", Kind.MCP_SERVER)
    NO_INPUT_HANDLER: Final = _code("no-input-handler", Kind.TALKBACK)
    NO_SAMPLER: Final = _code("no-sampler", Kind.TALKBACK)
    INPUT_TIMEOUT: Final = _code("input-timeout", Kind.TALKBACK)
    SAMPLING_TIMEOUT: Final = _code("sampling-timeout", Kind.TALKBACK)
    INVALID_ANSWER: Final = _code("invalid-answer", Kind.TALKBACK)
    TALKBACK_FAILED: Final = _code("talkback-failed", Kind.TALKBACK)
    QUEUE_TIMEOUT: Final = _code("queue-timeout", Kind.POLICY_REFUSED)
    RATE_LIMITED: Final = _code("rate-limited", Kind.POLICY_REFUSED)
    # A shared backend (Redis) that cannot answer: the call is not run (never run uncapped).
    POLICY_UNAVAILABLE: Final = _code("policy-unavailable", Kind.POLICY_REFUSED)
    TOOL_EXIT: Final = _code("tool-exit", Kind.TOOL_RAISED)  # a SystemExit
    TOOL_BASE_EXCEPTION: Final = _code("tool-base-exception", Kind.TOOL_RAISED)  # any other


_IMPORT = "the module does not import (the line is that of the failing module or helper file)"
_FACTORY = "no factory, or one that raises, exits, overruns, changes process state, returns no tool"
_PATH = "path problems from the scan (see [discovery.md](discovery.md))"
_SOURCE = "a name built in or taken, an unreadable trust store, an unusable `.mcp.json` file"
_WORKER = "the isolation worker: the module ended it, its `PERMISSIONS` cannot be read, a bug"
_WORTH = "scan and load diagnostics worth fixing"
_INFO = "informational: a skipped or disabled source, threads left running, a reload, a server"
_SANDBOX = "what the kernel enforces of a sandboxed module's permissions"
_LAZY = "lazy loading: imported at load anyway, a failed first call, an unusable manifest cache"
_SERVE = "a tool `serve` does not offer: a name clients reject or taken, a non-object schema"


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
    NAME_CONFLICT: Final = _load("LoadError", _SOURCE, "name-conflict")
    TRUST_STORE_ERROR: Final = _load("LoadError", _SOURCE, "trust-store-error")
    INVALID_MCP_JSON: Final = _load("LoadError", _SOURCE, "invalid-mcp-json")
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
    SIMILAR_NAME: Final = _load("Diagnostic", "two names differ only by case", "similar-name")
    PENDING_TRUST: Final = _load("Diagnostic", "a project source is not trusted", "pending-trust")
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
    EAGER_IMPORT: Final = _load("Diagnostic", _LAZY, "eager-import")
    LAZY_IMPORT_FAILED: Final = _load("Diagnostic", _LAZY, "lazy-import-failed")
    LAZY_DEFINITION_CHANGED: Final = _load("Diagnostic", _LAZY, "lazy-definition-changed")
    MANIFEST_CACHE_IGNORED: Final = _load("Diagnostic", _LAZY, "manifest-cache-ignored")
    MANIFEST_CACHE_UNWRITABLE: Final = _load("Diagnostic", _LAZY, "manifest-cache-unwritable")
    INVALID_NAME: Final = _load("ServeDiagnostic", _SERVE, "invalid-name")
    SCHEMA_ROOT: Final = _load("ServeDiagnostic", _SERVE, "schema-root")


_log = logger("customtools.adapter")


def error_result(kind: str, code: str | None, text: str, **details: Any) -> ToolResult:
    """The error result of ``kind`` and ``code`` (``None`` only for :attr:`Kind.TOOL_RAISED`),
    with ``text`` for the model and ``details`` beside ``error`` and ``code``."""
    if code is None:
        return text_result(text, {"error": kind, **details}, True)
    return text_result(text, {"error": kind, "code": code, **details}, True)


def failure_code(exc: BaseException) -> str | None:
    """The ``details["code"]`` for ``exc`` raised by tool code (``None`` for an ``Exception``)."""
    if isinstance(exc, Exception):
        return None
    return Code.TOOL_EXIT if isinstance(exc, SystemExit) else Code.TOOL_BASE_EXCEPTION


def failure_result(exc: BaseException, tool_name: str, doing: str | None = None) -> ToolResult:
    """The error result of ``exc`` raised by tool ``tool_name`` (or while ``doing`` a step)."""
    kind = type(exc).__name__
    _log.debug("tool %r raised %s", tool_name, kind, exc_info=exc)
    described = describe_exception(exc)  # never str(exc): tool code controls __str__
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
