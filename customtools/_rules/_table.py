"""The rulebook's table: every code with its default severity, the severity policy, and the
:class:`Finding` record every check produces."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from types import MappingProxyType
from typing import Any, Final, Literal

from customtools._error_results import LOAD_CODES, LoadCode

__all__ = ["RULES", "Finding", "Rule", "Scope", "Severity", "severity_for"]

Severity = Literal["error", "warning", "notice"]
Scope = Literal["tool", "pack", "load", "scan", "validate", "contract"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Rule:
    """One code of the rulebook.

    Attributes:
        code: the stable kebab-case code findings carry.
        severity: its default severity (``strict`` makes every warning an error).
        scope: who reports it: ``"tool"`` (:func:`check_tool`), ``"pack"`` (the pack checks),
            ``"load"`` (a load error), ``"scan"`` (a loader diagnostic), ``"validate"``
            (only the ``customtools validate`` command can see it) or ``"contract"`` (a
            difference ``customtools contract check`` found between two contracts).
        summary: what it means, for the docs.
    """

    code: str
    severity: Severity
    scope: Scope
    summary: str


def _rules(*rules: Rule) -> Mapping[str, Rule]:
    return MappingProxyType({rule.code: rule for rule in rules})


def _rows(severity: Severity, *rows: tuple[str, str], scope: Scope = "contract") -> list[Rule]:
    return [Rule(code=c, severity=severity, scope=scope, summary=s) for c, s in rows]


def _family(scope: Scope, severity: Severity, summary: str, *codes: str) -> list[Rule]:
    return [Rule(code=code, severity=severity, scope=scope, summary=summary) for code in codes]


def _loader(warnings: tuple[str, ...], notices: tuple[str, ...]) -> list[Rule]:
    """Rules of ``LOAD_CODES``: a load error is an error; a diagnostic must be listed here."""
    severity: dict[str, Severity] = {
        **dict.fromkeys(warnings, "warning"),
        **dict.fromkeys(notices, "notice"),
    }
    return [
        Rule(
            code=code,
            severity="error" if record == "LoadError" else severity[code],
            scope="load" if record == "LoadError" else "scan",
            summary=meaning,
        )
        for code, (record, meaning) in LOAD_CODES.items()
        if record != "ServeDiagnostic"  # never reaches a check
    ]


RULES: Final[Mapping[str, Rule]] = _rules(
    *_loader(  # the codes of load records (customtools._error_results), with severities
        warnings=(
            LoadCode.NO_TOOLS,
            LoadCode.INVALID_METADATA,
            LoadCode.BROKEN_SYMLINK,
            LoadCode.UNREADABLE_DIRECTORY,
            LoadCode.INVALID_REGISTRY,
            LoadCode.INVALID_REGISTRY_ENTRY,
            LoadCode.BROKEN_DISTRIBUTION,
            LoadCode.UNKNOWN_PROVIDER,
            LoadCode.SIMILAR_NAME,
            LoadCode.PENDING_TRUST,
            LoadCode.LAZY_IMPORT_FAILED,
            LoadCode.LAZY_DEFINITION_CHANGED,
            LoadCode.MANIFEST_CACHE_IGNORED,
            LoadCode.MANIFEST_CACHE_UNWRITABLE,
        ),
        notices=(
            LoadCode.SKIPPED_FILE,
            LoadCode.SKIPPED_DIRECTORY,
            LoadCode.DUPLICATE_PATH,
            LoadCode.METADATA_OUTSIDE_ROOT,
            LoadCode.PROVIDER_DISABLED,
            LoadCode.PLUGIN_DISABLED,
            LoadCode.STARTED_THREADS,
            LoadCode.RELOAD_KEPT_PREVIOUS,
            LoadCode.MCP_SERVER,
            LoadCode.SANDBOX_ENFORCED,
            LoadCode.SANDBOX_PARTIAL,
            LoadCode.SANDBOX_UNAVAILABLE,
            LoadCode.EAGER_IMPORT,
        ),
    ),
    # -- one tool ---------------------------------------------------------------------------
    Rule(
        code="empty-description",
        severity="error",
        scope="tool",
        summary="the tool has no description; the model reads it to decide when to call it",
    ),
    Rule(
        code="invisible-unicode",
        severity="warning",
        scope="tool",
        summary="the description, label or schema text holds zero-width, bidirectional or tag"
        " characters: prompt text a reviewer cannot see",
    ),
    *_rows(
        "error",
        (
            "invalid-schema",
            "the parameters schema no longer compiles, or cannot be read, grew past the"
            " limits or refers to itself (a factory changed it after building the tool)",
        ),
        (
            "required-not-defined",
            "a name in `required` has no entry in `properties`, so the model is never"
            " told about it",
        ),
        (
            "invalid-default",
            "a `default` breaks its own schema: the adapter would fill in a value the"
            " schema forbids and fail the call",
        ),
        (
            "invalid-example",
            "an `examples` entry breaks its own schema, teaching the model a wrong call",
        ),
        scope="tool",
    ),
    *_family(
        "tool",
        "warning",
        'the parameters schema is not `"type": "object"` at the root, or uses a root-level'
        " `anyOf`/`oneOf`/`allOf`",
        "openai-root-not-object",
        "anthropic-root-not-object",
    ),
    Rule(
        code="openai-description-too-long",
        severity="warning",
        scope="tool",
        summary="the description is longer than the 1024 characters OpenAI accepts",
    ),
    *_family(
        "tool",
        "warning",
        "only for tools with `strict=True`: the schema is outside OpenAI's strict-mode subset",
        "openai-strict-keyword",
        "openai-strict-type",
        "openai-strict-untyped",
        "openai-strict-open-object",
        "openai-strict-optional-property",
        "openai-strict-too-deep",
        "openai-strict-too-many-properties",
        "openai-strict-too-many-enum-values",
    ),
    # -- a pack -----------------------------------------------------------------------------
    Rule(
        code="empty-pack",
        severity="error",
        scope="pack",
        summary="the pack loaded no tool and reported no error: check the path",
    ),
    Rule(
        code="metadata-name-taken",
        severity="warning",
        scope="pack",
        summary="a `.md`/`.json` metadata file has the name of a tool; the tool is used and"
        " the metadata is not",
    ),
    # -- only `customtools validate` ---------------------------------------------------------
    *_rows(
        "error",
        (
            "crash",
            "the module ended its worker process (a signal, `os._exit`, the CPU limit) or"
            " its supervisor",
        ),
        (
            "tampered",
            "the report channel carried messages validate did not send, or the supervisor"
            " did not end cleanly: the module's outcome cannot be trusted",
        ),
        ("worker-error", "the validation process itself could not start (the message says why)"),
        scope="validate",
    ),
    Rule(
        code="slow-import",
        severity="warning",
        scope="validate",
        summary="the module took longer than `--slow-import` seconds (default 0.5) to import"
        " and build its tools",
    ),
    Rule(
        code="unenforceable-permissions",
        severity="notice",
        scope="validate",
        summary="the running kernel cannot enforce all the module's declared permissions"
        " when sandboxed (no Landlock, or TCP ports before Landlock ABI 4)",
    ),
    Rule(
        code="invalid-policy",
        severity="error",
        scope="validate",
        summary="the module's `POLICY` is not a literal `Policy(...)` call hosts can use (they"
        " ignore it)",
    ),
    Rule(
        code="no-tools-found",
        severity="warning",
        scope="validate",
        summary="discovery found no tool module",
    ),
    # -- `customtools contract check`: breaking (error), undecided (warning), the rest notices
    *_rows(
        "error",
        ("tool-removed", "breaking: a tool (or a deprecated alias) is gone"),
        ("parameter-required", "breaking: a new required parameter, or one made required"),
        ("parameter-removed", "breaking: a parameter was removed or renamed"),
        (
            "type-narrowed",
            "breaking: a parameter allows less: a type dropped from a union, a tighter bound or"
            " pattern, `additionalProperties` closed, values limited to an enum",
        ),
        ("enum-value-removed", "breaking: an enum (or const) value is no longer allowed"),
        ("output-field-removed", "breaking: an output field was removed or may now be missing"),
        (
            "output-type-changed",
            "breaking: the output may hold values it could not before (a type or value added,"
            " the output schema dropped)",
        ),
        ("permissions-widened", "breaking: the declared permissions grant more"),
        ("approval-required", "breaking: calls ask for approval now"),
    ),
    *_rows(
        "warning",
        (
            "contract-undecided",
            "undecided: the gate cannot tell whether the change breaks callers (a changed"
            " pattern, a keyword it does not compare, a module that failed to load)",
        ),
    ),
    *_rows(
        "notice",
        ("tool-added", "compatible: a new tool"),
        ("tool-renamed", "compatible: a tool renamed, its old name kept as a deprecated alias"),
        ("parameter-added", "compatible: a new optional parameter"),
        ("type-widened", "compatible: a parameter allows more (type, bound, optional now)"),
        ("enum-value-added", "compatible: a new enum value"),
        ("output-field-added", "compatible: a new output field"),
        ("output-narrowed", "compatible: the output holds fewer kinds of values"),
        ("permissions-narrowed", "compatible: the declared permissions grant less"),
        ("description-changed", "notice: a tool or schema description changed"),
        ("label-changed", "notice: a tool label or schema title changed"),
        ("default-changed", "notice: a parameter's default changed"),
        ("annotation-changed", "notice: an MCP annotation, a format or a deprecation changed"),
        ("contract-changed", "notice: another part of the contract changed (timeout, flags)"),
        ("unused-acknowledgement", "notice: an acknowledgement matches no change"),
    ),
)
"""Every code, with its default severity: the one severity policy of all the front ends."""


def severity_for(code: str, *, strict: bool = False, unknown: Severity = "notice") -> Severity:
    """The severity of ``code`` under the default or the ``strict`` policy.

    Args:
        code: a finding code.
        strict: the strict policy: every warning is an error (notices stay notices).
        unknown: the severity of a code :data:`RULES` does not list: one of a host's own
            provider (every code of customtools' own records is listed).
    """
    rule = RULES.get(code)
    severity = rule.severity if rule is not None else unknown
    if strict and severity == "warning":
        return "error"
    return severity


@dataclass(frozen=True, slots=True, kw_only=True)
class Finding:
    """One problem a check found.

    Attributes:
        severity: ``"error"`` fails the check; ``"warning"`` fails it only when strict;
            ``"notice"`` never does.
        code: the stable kebab-case code (see :data:`RULES`).
        message: one line saying what is wrong and what to do.
        path: the file concerned, when known.
        tool_name: the tool concerned, when known.
        pointer: JSON Pointer into the tool's ``parameters`` of the schema concerned
            (``""`` is the root), when the finding is about the schema.
        line: the 1-based line in ``path``, when known.
        detail: a traceback or other long text, when there is one.
    """

    severity: Severity
    code: str
    message: str
    path: str | None = None
    tool_name: str | None = None
    pointer: str | None = None
    line: int | None = None
    detail: str | None = None

    def __str__(self) -> str:
        where = self.path or "(pack)"
        if self.line is not None:
            where += f":{self.line}"
        tool = f" tool {self.tool_name!r}" if self.tool_name else ""
        return f"{self.severity}: {where}{tool} [{self.code}]: {self.message}"

    def to_dict(self) -> dict[str, Any]:
        """JSON form; ``None`` fields are omitted."""
        out: dict[str, Any] = {}
        for item in fields(self):
            value = getattr(self, item.name)
            if value is not None or item.name in _REQUIRED:
                out[_KEYS.get(item.name, item.name)] = value
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Finding:
        """The inverse of :meth:`to_dict`."""
        values: dict[str, Any] = {
            item.name: data.get(_KEYS.get(item.name, item.name)) for item in fields(cls)
        }
        return cls(**values | {name: data[name] for name in _REQUIRED})


# A finding's JSON keys that are not its field's name, and the fields always written.
_KEYS: Final = {"tool_name": "toolName"}
_REQUIRED: Final = ("severity", "code", "message")
