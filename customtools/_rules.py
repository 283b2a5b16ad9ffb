"""The rulebook: every check ``customtools validate``, ``customtools.testing`` and the pytest
plugin run on a tool pack, in one place.

A check turns what it looks at (a :class:`~customtools.CustomTool`, a
:class:`~customtools.LoadResult`, the tools of several packs) into :class:`Finding` records
with stable kebab-case codes. The checks never decide how bad a finding is: :data:`RULES` is
the one table of default severities, and :func:`severity_for` applies the policy (the default,
or ``strict``, where every warning is an error). So a code means the same thing, with the same
severity, whichever front end reports it; ``docs/cli.md`` prints the table.

Checks of one tool (:func:`check_tool`)
    ``empty-description``, ``invisible-unicode`` (in the description, the label, or a title,
    description or property name of the schema), ``invalid-schema``,
    ``required-not-defined``, ``invalid-default`` and ``invalid-example`` (a ``default`` or an
    ``examples`` entry that breaks its own subschema), and the provider rules
    (``openai-*``, ``anthropic-*``) of :mod:`customtools._export`.

Checks of a pack
    :func:`check_load_result` maps a load (errors, diagnostics, metadata) to findings and
    runs :func:`check_tool` on each tool; :func:`check_names` finds ``name-conflict`` and
    ``similar-name`` across tools loaded separately (``validate`` loads each module in a child
    process); :func:`check_metadata` and :func:`empty_pack` are the pack rules both share.

Only ``validate`` reports what needs a child process or a clock (``crash``, ``timeout`` of a
module, ``worker-error``, ``slow-import``) or discovery (``no-tools-found``); those codes are in
the table too, so their severity is policy like the rest.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Final, Literal

from customtools._format import describe_exception, find_invisible, safe_repr
from customtools._jsonpointer import format_pointer

if TYPE_CHECKING:
    from customtools._loading._loader import LoadResult
    from customtools._loading._records import MetadataFile
    from customtools._tool import CustomTool

__all__ = [
    "RULES",
    "Finding",
    "Rule",
    "Severity",
    "ToolSite",
    "check_load_result",
    "check_metadata",
    "check_names",
    "check_tool",
    "empty_pack",
    "severity_for",
]

Severity = Literal["error", "warning", "notice"]
Scope = Literal["tool", "pack", "load", "scan", "validate"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Rule:
    """One code of the rulebook.

    Attributes:
        code: the stable kebab-case code findings carry.
        severity: its default severity (``strict`` makes every warning an error).
        scope: who reports it: ``"tool"`` (:func:`check_tool`), ``"pack"`` (the pack checks),
            ``"load"`` (a load error), ``"scan"`` (a loader diagnostic) or ``"validate"``
            (only the ``customtools validate`` command can see it).
        summary: what it means, for the docs.
    """

    code: str
    severity: Severity
    scope: Scope
    summary: str


def _rules(*rules: Rule) -> Mapping[str, Rule]:
    return MappingProxyType({rule.code: rule for rule in rules})


def _family(scope: Scope, severity: Severity, summary: str, *codes: str) -> list[Rule]:
    return [Rule(code=code, severity=severity, scope=scope, summary=summary) for code in codes]


RULES: Final[Mapping[str, Rule]] = _rules(
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
    Rule(
        code="invalid-schema",
        severity="error",
        scope="tool",
        summary="the parameters schema no longer compiles (a factory changed it after"
        " building the tool)",
    ),
    Rule(
        code="required-not-defined",
        severity="error",
        scope="tool",
        summary="a name in `required` has no entry in `properties`, so the model is never"
        " told about it",
    ),
    Rule(
        code="invalid-default",
        severity="error",
        scope="tool",
        summary="a `default` breaks its own schema: the adapter would fill in a value the"
        " schema forbids and fail the call",
    ),
    Rule(
        code="invalid-example",
        severity="error",
        scope="tool",
        summary="an `examples` entry breaks its own schema, teaching the model a wrong call",
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
        code="name-conflict",
        severity="error",
        scope="pack",
        summary="two tools (in one pack or across the packs given) claim one name, or a tool"
        " claims a built-in name",
    ),
    Rule(
        code="similar-name",
        severity="warning",
        scope="pack",
        summary="two tool names differ only by letter case",
    ),
    Rule(
        code="metadata-name-taken",
        severity="warning",
        scope="pack",
        summary="a `.md`/`.json` metadata file has the name of a tool; the tool is used and"
        " the metadata is not",
    ),
    # -- loading (every load error is an error; unknown codes too) -----------------------------
    *_family(
        "load",
        "error",
        "the module does not import (the line is the failing line of the module, or of the"
        " package's helper file)",
        "syntax-error",
        "import-error",
        "missing-dependency",
        "module-exit",
    ),
    *_family(
        "load",
        "error",
        "the factory contract: no factory, a factory that raises, exits or returns something"
        " else than tools, an invalid tool (bad name, schema or field), an async factory past"
        " its bound, a module that changes process state",
        "no-factory",
        "factory-not-callable",
        "factory-error",
        "factory-exit",
        "invalid-return",
        "invalid-tool",
        "timeout",
        "changed-process-state",
    ),
    *_family(
        "load",
        "error",
        "path problems from the scan (see discovery.md)",
        "not-found",
        "unreadable",
        "metadata-not-executable",
        "not-a-module",
        "invalid-path",
        "invalid-manifest",
        "path-outside-plugin",
        "invalid-distribution",
        "invalid-entry-point",
        "provider-error",
        "load-error",
    ),
    # -- loader diagnostics ------------------------------------------------------------------
    *_family(
        "scan",
        "warning",
        "scan and load diagnostics worth fixing",
        "no-tools",
        "invalid-metadata",
        "broken-symlink",
        "unreadable-directory",
        "invalid-registry",
        "invalid-registry-entry",
        "broken-distribution",
        "unknown-provider",
    ),
    *_family(
        "scan",
        "notice",
        "informational; never fails a check (unknown diagnostic codes are notices too)",
        "skipped-file",
        "skipped-directory",
        "duplicate-path",
        "provider-disabled",
        "plugin-disabled",
    ),
    # -- only `customtools validate` ---------------------------------------------------------
    Rule(
        code="crash",
        severity="error",
        scope="validate",
        summary="the module ended the child process (a signal, or `os._exit`)",
    ),
    Rule(
        code="worker-error",
        severity="error",
        scope="validate",
        summary="the validation child itself could not start (the message says why)",
    ),
    Rule(
        code="slow-import",
        severity="warning",
        scope="validate",
        summary="the module took longer than `--slow-import` seconds (default 0.5) to import"
        " and build its tools",
    ),
    Rule(
        code="no-tools-found",
        severity="warning",
        scope="validate",
        summary="discovery found no tool module",
    ),
)
"""Every code, with its default severity: the one severity policy of all the front ends."""


def severity_for(code: str, *, strict: bool = False, unknown: Severity = "notice") -> Severity:
    """The severity of ``code`` under the default or the ``strict`` policy.

    Args:
        code: a finding code.
        strict: the strict policy: every warning is an error (notices stay notices).
        unknown: the severity of a code :data:`RULES` does not list (a load error passes
            ``"error"``; a new loader diagnostic is a notice).
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
        out: dict[str, Any] = {
            "severity": self.severity,
            "code": self.code,
            "message": self.message,
        }
        for key, value in (
            ("path", self.path),
            ("toolName", self.tool_name),
            ("pointer", self.pointer),
            ("line", self.line),
            ("detail", self.detail),
        ):
            if value is not None:
                out[key] = value
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Finding:
        """The inverse of :meth:`to_dict`."""
        return cls(
            severity=data["severity"],
            code=data["code"],
            message=data["message"],
            path=data.get("path"),
            tool_name=data.get("toolName"),
            pointer=data.get("pointer"),
            line=data.get("line"),
            detail=data.get("detail"),
        )


# -- one tool -------------------------------------------------------------------------------------

# Keywords whose value is a map of names to subschemas, a list of subschemas, or one subschema.
_SUBSCHEMA_MAPS: Final = ("properties", "patternProperties", "$defs", "definitions")
_SUBSCHEMA_MAPS_MORE: Final = ("dependentSchemas",)
_SUBSCHEMA_LISTS: Final = ("allOf", "anyOf", "oneOf", "prefixItems", "items")
_SUBSCHEMA_ONE: Final = (
    "items",
    "additionalItems",
    "additionalProperties",
    "unevaluatedItems",
    "unevaluatedProperties",
    "contains",
    "propertyNames",
    "not",
    "if",
    "then",
    "else",
    "contentSchema",
)
_MAX_DEPTH: Final = 64  # check_schema bounds real schemas far below this
_MAX_LISTED: Final = 3


def _subschemas(
    node: Any, tokens: tuple[str | int, ...] = ()
) -> Iterator[tuple[tuple[str | int, ...], Mapping[str, Any]]]:
    """Every subschema that is a mapping, with its path of tokens from the root."""
    if not isinstance(node, Mapping) or len(tokens) > _MAX_DEPTH:
        return
    yield tokens, node
    for keyword in (*_SUBSCHEMA_MAPS, *_SUBSCHEMA_MAPS_MORE):
        children = node.get(keyword)
        if isinstance(children, Mapping):
            for name, child in children.items():
                yield from _subschemas(child, (*tokens, keyword, str(name)))
    for keyword in _SUBSCHEMA_LISTS:
        children = node.get(keyword)
        if isinstance(children, list):
            for index, child in enumerate(children):
                yield from _subschemas(child, (*tokens, keyword, index))
    for keyword in _SUBSCHEMA_ONE:
        yield from _subschemas(node.get(keyword), (*tokens, keyword))


def _describe_place(tokens: Sequence[str | int]) -> str:
    """``property 'limit'`` for a property of the root, else ``the schema at /a/b``."""
    if len(tokens) == 2 and tokens[0] == "properties":
        return f"property {safe_repr(tokens[1])}"
    if not tokens:
        return "the parameters schema"
    return f"the schema at {format_pointer(tokens)}"


def _listing(text: str) -> str:
    found = find_invisible(text)
    shown = ", ".join(
        f"{item.codepoint} {item.name} at {item.position}" for item in found[:_MAX_LISTED]
    )
    more = f" and {len(found) - _MAX_LISTED} more" if len(found) > _MAX_LISTED else ""
    return f"{len(found)} invisible or direction-changing character(s) ({shown}{more})"


class _ToolChecker:
    """Runs the per-tool rules on one tool; each rule is contained on its own."""

    def __init__(self, tool: CustomTool, path: str | None, strict: bool) -> None:
        self.tool = tool
        self.path = path
        self.strict = strict
        self.found: list[Finding] = []

    def add(self, code: str, message: str, *, pointer: str | None = None) -> None:
        self.found.append(
            Finding(
                severity=severity_for(code, strict=self.strict, unknown="warning"),
                code=code,
                message=message,
                path=self.path,
                tool_name=self.tool.name,
                pointer=pointer,
            )
        )

    def run(self) -> list[Finding]:
        compiled = self._guarded("schema", self.schema_compiles)
        self._guarded("description", self.description)
        self._guarded("invisible-unicode", self.invisible)
        self._guarded("required", self.required)
        if compiled:
            self._guarded("defaults and examples", self.defaults_and_examples)
        self._guarded("provider", self.providers)
        return self.found

    def _guarded(self, what: str, rule: Any) -> bool:
        # A schema is tool data: a mapping whose methods raise must not take the check down.
        try:
            return bool(rule())
        except Exception as exc:
            self.found.append(
                Finding(
                    severity="error",
                    code="invalid-schema",
                    message=f"the {what} check could not read the tool's definition:"
                    f" {describe_exception(exc)}; make parameters plain JSON data",
                    path=self.path,
                    tool_name=self.tool.name,
                )
            )
            return False

    # -- the rules ------------------------------------------------------------------------------

    def description(self) -> bool:
        if not self.tool.description.strip():
            self.add(
                "empty-description",
                f"tool {self.tool.name!r} has no description; models choose tools by it, so say"
                " what it does and when to use it",
            )
        return True

    def invisible(self) -> bool:
        tool = self.tool
        for field_name, text in (("description", tool.description), ("label", tool.label)):
            if find_invisible(text):
                self.add(
                    "invisible-unicode",
                    f"the {field_name} of tool {tool.name!r} holds {_listing(text)}; a model"
                    " reads them and a reviewer does not see them: remove them",
                )
        for tokens, node in _subschemas(tool.parameters):
            for keyword in ("title", "description"):
                value = node.get(keyword)
                if isinstance(value, str) and find_invisible(value):
                    self.add(
                        "invisible-unicode",
                        f"the {keyword} of {_describe_place(tokens)} holds {_listing(value)};"
                        " a model reads them and a reviewer does not see them: remove them",
                        pointer=format_pointer((*tokens, keyword)),
                    )
            properties = node.get("properties")
            if isinstance(properties, Mapping):
                for name in properties:
                    if isinstance(name, str) and find_invisible(name):
                        self.add(
                            "invisible-unicode",
                            f"the property name {name!r} holds {_listing(name)}; the model"
                            " would have to send them back: rename the property",
                            pointer=format_pointer((*tokens, "properties", name)),
                        )
        return True

    def schema_compiles(self) -> bool:
        from customtools._errors import SchemaError
        from customtools._validation import compile_validator

        try:
            compile_validator(
                self.tool.parameters, tool_name=self.tool.name, coerce=False, apply_defaults=False
            )
        except SchemaError as exc:
            self.add(
                "invalid-schema",
                f"the parameters schema does not compile: {describe_exception(exc)}; build it"
                " with customtools.Type and do not change it after building the tool",
                pointer="",
            )
            return False
        return True

    def required(self) -> bool:
        for tokens, node in _subschemas(self.tool.parameters):
            required = node.get("required")
            if not isinstance(required, list):
                continue
            properties = node.get("properties")
            kind = node.get("type")
            is_object = kind == "object" or (isinstance(kind, list) and "object" in kind)
            # A branch such as anyOf: [{"required": ["a"]}] names its parent's properties,
            # and $ref / allOf can bring properties in: only plain object schemas are judged.
            if not (isinstance(properties, Mapping) or is_object) or any(
                key in node for key in ("$ref", "$dynamicRef", "allOf")
            ):
                continue
            defined = properties if isinstance(properties, Mapping) else {}
            patterns = node.get("patternProperties")
            for name in required:
                if not isinstance(name, str) or name in defined:
                    continue
                if isinstance(patterns, Mapping) and _matches_any(name, patterns):
                    continue
                where = "the root" if not tokens else format_pointer(tokens)
                self.add(
                    "required-not-defined",
                    f"{name!r} is required (at {where}) but has no entry in 'properties', so"
                    " the model is never told about it: describe it there or drop it from"
                    " 'required'",
                    pointer=format_pointer(tokens),
                )
        return True

    def defaults_and_examples(self) -> bool:
        root = self.tool.parameters
        for tokens, node in _subschemas(root):
            has_default = "default" in node
            examples = node.get("examples")
            if not has_default and not isinstance(examples, list):
                continue
            validator = self._compile_alone(root, tokens, node)
            if validator is None:
                continue
            place = _describe_place(tokens)
            if has_default:
                for problem in _problems(validator, node["default"]):
                    self.add(
                        "invalid-default",
                        f"the default of {place} breaks its own schema: {problem}; the"
                        " adapter fills it in when the model leaves it out, and the call then"
                        " fails: fix the default or the constraint",
                        pointer=format_pointer(tokens),
                    )
            for index, example in enumerate(examples if isinstance(examples, list) else ()):
                for problem in _problems(validator, example):
                    self.add(
                        "invalid-example",
                        f"example {index} of {place} breaks its own schema: {problem}; the"
                        " model copies examples: fix the example or the constraint",
                        pointer=format_pointer((*tokens, "examples", index)),
                    )
        return True

    def _compile_alone(
        self, root: Mapping[str, Any], tokens: tuple[str | int, ...], node: Mapping[str, Any]
    ) -> Any:
        """A validator for ``node`` by itself, with the root's definitions for its ``$ref``s;
        ``None`` when it does not compile that way (then there is nothing sound to say)."""
        from customtools._errors import SchemaError
        from customtools._validation import compile_validator

        alone = dict(node)
        if tokens:
            for keyword in ("$schema", "$defs", "definitions"):
                if keyword in root and keyword not in alone:
                    alone[keyword] = root[keyword]
        try:
            return compile_validator(
                alone, tool_name=self.tool.name, coerce=False, apply_defaults=False
            )
        except SchemaError:
            return None

    def providers(self) -> bool:
        from customtools._export import anthropic_issues, openai_issues

        for issue in (*openai_issues(self.tool), *anthropic_issues(self.tool)):
            self.add(
                f"{issue.provider}-{issue.rule}",
                f"tool {self.tool.name!r}: {issue.message}",
                pointer=issue.path,
            )
        return True


def _matches_any(name: str, patterns: Mapping[str, Any]) -> bool:
    for pattern in patterns:
        try:
            if re.search(str(pattern), name):
                return True
        except re.error:
            continue
    return False


def _problems(validator: Any, value: Any) -> list[str]:
    from customtools._errors import ToolArgumentsError

    try:
        validator.validate(value)
    except ToolArgumentsError as exc:
        return [
            violation.message if not violation.path else str(violation)
            for violation in exc.violations
        ] or [describe_exception(exc)]
    return []


def check_tool(tool: CustomTool, *, path: str | None = None, strict: bool = False) -> list[Finding]:
    """Every per-tool rule on ``tool``; an empty list when it is clean.

    Never raises for what the tool holds: a schema that cannot be read is an
    ``invalid-schema`` finding.

    Args:
        tool: the tool.
        path: the file it came from, copied into the findings.
        strict: the strict policy (warnings become errors).
    """
    return _ToolChecker(tool, path, strict).run()


# -- packs ----------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolSite:
    """A tool's name and where it was defined, for :func:`check_names`.

    Attributes:
        name: the tool name.
        path: the file, for findings and messages.
        line: the line in ``path``, when known.
        pack: a label for the pack it belongs to (``None``: the only pack).
    """

    name: str
    path: str | None = None
    line: int | None = None
    pack: str | None = None


def check_names(
    sites: Iterable[ToolSite], *, builtins: Iterable[str] = (), strict: bool = False
) -> list[tuple[ToolSite, Finding]]:
    """``name-conflict`` and ``similar-name`` across tools loaded separately, in order.

    The first tool to claim a name keeps it (as a host would); each later claim, and any claim
    of a ``builtins`` name, is a ``name-conflict``. Names that differ only by letter case are a
    ``similar-name``. Returns each finding with the site it is about.
    """
    claims: dict[str, ToolSite | None] = dict.fromkeys(builtins)
    folded: dict[str, str] = {name.casefold(): name for name in claims}
    out: list[tuple[ToolSite, Finding]] = []

    def add(site: ToolSite, code: str, message: str) -> None:
        finding = Finding(
            severity=severity_for(code, strict=strict),
            code=code,
            message=message,
            path=site.path,
            tool_name=site.name,
            line=site.line,
        )
        out.append((site, finding))

    for site in sites:
        name = site.name
        if name in claims:
            first = claims[name]
            if first is None:
                message = f"tool name {name!r} is a built-in tool name; rename the tool"
            else:
                other = "this pack" if first.pack == site.pack else f"pack {first.pack}"
                message = (
                    f"tool name {name!r} is already taken by {first.path} ({other});"
                    " a host loads only the first; rename one of them"
                )
            add(site, "name-conflict", message)
            continue
        claims[name] = site
        similar = folded.setdefault(name.casefold(), name)
        if similar != name:
            add(
                site,
                "similar-name",
                f"tool {name!r} differs from {similar!r} only by letter case; models may"
                " confuse them",
            )
    return out


def check_metadata(
    metadata: Iterable[MetadataFile], tool_paths: Mapping[str, str], *, strict: bool = False
) -> list[Finding]:
    """The rules on a pack's metadata files: ``metadata-name-taken`` (a metadata file named
    like a tool; ``tool_paths`` maps each tool name to its file) and ``invisible-unicode`` in
    a metadata description."""
    found: list[Finding] = []
    for item in metadata:
        owner = tool_paths.get(item.name)
        if owner is not None:
            found.append(
                Finding(
                    severity=severity_for("metadata-name-taken", strict=strict),
                    code="metadata-name-taken",
                    message=f"metadata file names {item.name!r}, which is also a tool from"
                    f" {owner}; the tool is used and the metadata is not: rename or remove one",
                    path=item.path,
                    tool_name=item.name,
                )
            )
        if find_invisible(item.description):
            found.append(
                Finding(
                    severity=severity_for("invisible-unicode", strict=strict),
                    code="invisible-unicode",
                    message=f"the description of metadata {item.name!r} holds"
                    f" {_listing(item.description)}; a model reads them and a reviewer does"
                    " not see them: remove them",
                    path=item.path,
                )
            )
    return found


def empty_pack(where: str, *, path: str | None = None, strict: bool = False) -> Finding:
    """The ``empty-pack`` finding for a pack (``where``, its display name) that loaded no
    tool and reported no error."""
    return Finding(
        severity=severity_for("empty-pack", strict=strict),
        code="empty-pack",
        message=f"no tool loaded from {where}: check the path (a tools directory contributes"
        " its <name>.py files and package directories, and a factory must return tools)",
        path=path,
    )


def check_load_result(
    result: LoadResult, *, where: str = "the pack", path: str | None = None, strict: bool = False
) -> list[Finding]:
    """Every rule on one in-process load of a pack.

    Load errors keep their loader codes (always errors); diagnostics get their severity from
    :data:`RULES` (unknown ones are notices); then ``empty-pack``, :func:`check_tool` on each
    tool, and :func:`check_metadata`.

    Args:
        result: the load.
        where: the pack, as named in an ``empty-pack`` message.
        path: the pack's path, for an ``empty-pack`` finding.
        strict: the strict policy.
    """
    found = [
        Finding(
            severity="error",
            code=error.code,
            message=error.error,
            path=error.path,
            tool_name=error.tool_name,
            detail=error.traceback,
        )
        for error in result.errors
    ]
    if not result.tools and not result.errors:
        found.append(empty_pack(where, path=path, strict=strict))
    for loaded in result.tools:
        found += check_tool(loaded.tool, path=loaded.path, strict=strict)
    found += [
        Finding(
            severity=severity_for(item.code, strict=strict),
            code=item.code,
            message=item.message,
            path=item.path,
        )
        for item in result.diagnostics
    ]
    found += check_metadata(
        result.metadata, {loaded.tool.name: loaded.path for loaded in result.tools}, strict=strict
    )
    return found
