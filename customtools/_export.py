"""Provider tool formats and the provider compatibility checks ``customtools validate`` runs.

Export
    :func:`to_json_schema`, :func:`to_openai`, :func:`to_anthropic` and :func:`to_mcp` turn a
    :class:`~customtools.CustomTool` into the definition each API advertises. They copy the
    tool's ``parameters`` unchanged: nothing is rewritten to fit a provider, so what a tool
    declares is what the model sees. ``customtools schema NAME --format ...`` prints them.
    Deferred tools (``defer=True``, or :attr:`CustomTool.deferrable`) carry
    ``defer_loading: true`` in the formats that have that flag (Anthropic, OpenAI
    Responses); MCP and Chat Completions have none.

Compatibility
    :func:`openai_issues`, :func:`openai_strict_issues` and :func:`anthropic_issues` list the
    rules a tool breaks, as :class:`CompatibilityIssue` values (never exceptions). The rules are
    the documented ones at the time of writing:

    * every provider wants an object schema at the root (``"type": "object"``), without a
      root-level ``anyOf`` / ``oneOf`` / ``allOf``;
    * OpenAI caps a function description at 1024 characters;
    * OpenAI strict mode (``CustomTool(strict=True)``) accepts a subset of JSON Schema: every
      object closes with ``additionalProperties: false`` and lists every property in
      ``required`` (an optional field is spelled as a union with ``null``); only the keywords in
      :data:`OPENAI_STRICT_KEYWORDS` are allowed (no ``default``, ``minLength``, ``allOf``,
      ...); at most 10 levels of nesting, 5000 properties and 1000 enum values in total.

    These are pure functions of the tool: no network, no provider SDK.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Final, Literal

from customtools._jsonpointer import escape_token, format_pointer
from customtools._tool import CustomTool

__all__ = [
    "APPROVAL_META_KEY",
    "JSON_SCHEMA_DIALECT",
    "OPENAI_DESCRIPTION_LIMIT",
    "OPENAI_STRICT_KEYWORDS",
    "CompatibilityIssue",
    "anthropic_issues",
    "openai_issues",
    "openai_strict_issues",
    "subschemas",
    "to_anthropic",
    "to_json_schema",
    "to_mcp",
    "to_openai",
]

JSON_SCHEMA_DIALECT: Final = "https://json-schema.org/draft/2020-12/schema"
"""The ``$schema`` :func:`to_json_schema` declares (the dialect ``parameters`` are checked in)."""

OPENAI_DESCRIPTION_LIMIT: Final = 1024
"""Longest function description the OpenAI API accepts, in characters."""

OPENAI_STRICT_KEYWORDS: Final = frozenset(
    {
        # structure
        "type",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "anyOf",
        "enum",
        "const",
        "$ref",
        "$defs",
        "definitions",
        # annotations
        "title",
        "description",
        # strings
        "pattern",
        "format",
        # numbers
        "multipleOf",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        # arrays
        "minItems",
        "maxItems",
    }
)
"""The JSON Schema keywords OpenAI strict mode accepts; any other keyword is an issue."""

_STRICT_TYPES: Final = frozenset(
    {"string", "number", "integer", "boolean", "object", "array", "null"}
)
_STRICT_MAX_DEPTH: Final = 10
_STRICT_MAX_PROPERTIES: Final = 5000
_STRICT_MAX_ENUM_VALUES: Final = 1000
_ROOT_COMBINATORS: Final = ("anyOf", "oneOf", "allOf")
_SUBSCHEMA_MAPS: Final = ("properties", "$defs", "definitions", "patternProperties")
# Walks stop there: far beyond any schema check_schema accepts.
_MAX_TOKENS: Final = 128
_MAX_NODES: Final = 20_000
_SUBSCHEMA_LISTS: Final = ("anyOf", "oneOf", "allOf", "prefixItems")
_SUBSCHEMA_SINGLE: Final = (
    "items",
    "additionalProperties",
    "not",
    "if",
    "then",
    "else",
    "contains",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
)

Provider = Literal["openai", "anthropic", "mcp"]


@dataclass(frozen=True, slots=True, kw_only=True)
class CompatibilityIssue:
    """One provider rule a tool breaks.

    Args:
        provider: ``"openai"``, ``"anthropic"`` or ``"mcp"``.
        rule: a stable kebab-case rule id (``"root-not-object"``, ``"strict-keyword"``,
            ``"strict-optional-property"``, ...).
        path: JSON Pointer into ``parameters`` of the offending schema (``""`` for the root,
            ``None`` when the issue is not about the schema).
        message: one line saying what is wrong and what to do.
    """

    provider: Provider
    rule: str
    path: str | None
    message: str

    def to_dict(self) -> dict[str, Any]:
        """JSON form: the fields by name."""
        return asdict(self)


# -- export -------------------------------------------------------------------------------------


def _parameters(tool: CustomTool) -> dict[str, Any]:
    return dict(tool.parameters)


def to_json_schema(tool: CustomTool) -> dict[str, Any]:
    """The tool's arguments as a standalone JSON Schema document.

    ``$schema`` is set to Draft 2020-12 and ``title`` / ``description`` to the tool's name and
    description, unless ``parameters`` already sets them.
    """
    out: dict[str, Any] = {"$schema": JSON_SCHEMA_DIALECT, "title": tool.name}
    if tool.description:
        out["description"] = tool.description
    out.update(_parameters(tool))
    return out


def _deferred(tool: CustomTool, defer: bool | None) -> bool:
    return tool.deferrable if defer is None else bool(defer)


def to_openai(
    tool: CustomTool,
    *,
    api: Literal["chat", "responses"] = "chat",
    defer: bool | None = None,
) -> dict[str, Any]:
    """The tool as an OpenAI function tool.

    Args:
        tool: the tool.
        api: ``"chat"`` for Chat Completions (``{"type": "function", "function": {...}}``) or
            ``"responses"`` for the Responses API (the same fields, not nested).
        defer: mark the tool ``defer_loading: true`` for the Responses API's tool search (its
            schema is loaded when a search finds it); ``None`` follows
            :attr:`CustomTool.deferrable`. Chat Completions has no such flag: ignored there.

    ``strict`` is included, as ``true``, only when the tool sets ``strict=True``; check
    :func:`openai_strict_issues` first, since the API rejects a strict schema outside the
    subset.
    """
    function: dict[str, Any] = {"name": tool.name}
    if tool.description:
        function["description"] = tool.description
    function["parameters"] = _parameters(tool)
    if tool.strict:
        function["strict"] = True
    if api == "responses":
        if _deferred(tool, defer):
            function["defer_loading"] = True
        return {"type": "function", **function}
    if api != "chat":
        raise ValueError(f"api must be 'chat' or 'responses', got {api!r}")
    return {"type": "function", "function": function}


def to_anthropic(tool: CustomTool, *, defer: bool | None = None) -> dict[str, Any]:
    """The tool as an Anthropic Messages API tool: ``name``, ``description``,
    ``input_schema``, and ``defer_loading: true`` when deferred.

    Args:
        tool: the tool.
        defer: mark it deferred for the API's tool search (its schema stays out of the
            context until a search finds it); ``None`` follows :attr:`CustomTool.deferrable`.
    """
    out: dict[str, Any] = {"name": tool.name}
    if tool.description:
        out["description"] = tool.description
    out["input_schema"] = _parameters(tool)
    if _deferred(tool, defer):
        out["defer_loading"] = True
    return out


APPROVAL_META_KEY: Final = "customtools/approval"
"""The ``_meta`` key of an MCP listing telling clients a tool asks for approval (by
elicitation): ``"always"``, or ``"conditional"`` when a rule of the arguments decides."""


def _approval(tool: CustomTool) -> str | None:
    rule = tool.requires_approval
    if callable(rule):
        return "conditional"
    if rule is None:
        hints = tool.annotations or {}
        rule = hints.get("destructiveHint") is True and hints.get("readOnlyHint") is not True
    return "always" if rule else None


def to_mcp(tool: CustomTool) -> dict[str, Any]:
    """The tool as a Model Context Protocol ``Tool``, exactly as ``customtools serve`` lists it:
    ``name``, ``title`` (the label, left out when it is the name: clients show the name
    then), ``description``, ``inputSchema`` and, when set, ``outputSchema``, ``annotations``
    and ``_meta`` (with :data:`APPROVAL_META_KEY` for a tool that asks for approval)."""
    wire = tool.to_dict()
    out: dict[str, Any] = {"name": tool.name}
    if tool.label and tool.label != tool.name:
        out["title"] = tool.label
    if tool.description:
        out["description"] = tool.description
    out["inputSchema"] = _parameters(tool)
    for key in ("outputSchema", "annotations"):
        if key in wire:
            out[key] = wire[key]
    meta = dict(wire.get("_meta") or {})
    approval = _approval(tool)
    if approval is not None:
        meta[APPROVAL_META_KEY] = approval
    if meta:
        out["_meta"] = meta
    return out


# -- compatibility ------------------------------------------------------------------------------


def _root_issues(field: str, schema: Mapping[str, Any]) -> list[str]:
    problems = []
    if schema.get("type") != "object":
        got = schema.get("type", "no type")
        problems.append(
            f'{field} must be an object schema with "type": "object" at the root'
            f" (got {got!r}); wrap the arguments in Type.Object"
        )
    for keyword in _ROOT_COMBINATORS:
        if keyword in schema:
            problems.append(
                f"{field} must not use {keyword!r} at the root; put the alternatives inside a"
                " property instead"
            )
    return problems


def _root(provider: Provider, field: str, tool: CustomTool) -> list[CompatibilityIssue]:
    return [
        CompatibilityIssue(provider=provider, rule="root-not-object", path="", message=message)
        for message in _root_issues(field, tool.parameters)
    ]


def openai_issues(tool: CustomTool) -> list[CompatibilityIssue]:
    """The OpenAI function-calling rules ``tool`` breaks.

    Always checked: an object schema at the root, a description of at most
    :data:`OPENAI_DESCRIPTION_LIMIT` characters. When ``tool.strict`` is set, the strict-mode
    rules of :func:`openai_strict_issues` are added.
    """
    issues = _root("openai", "OpenAI function parameters", tool)
    if len(tool.description) > OPENAI_DESCRIPTION_LIMIT:
        issues.append(
            CompatibilityIssue(
                provider="openai",
                rule="description-too-long",
                path=None,
                message=f"the description is {len(tool.description)} characters long; OpenAI"
                f" accepts at most {OPENAI_DESCRIPTION_LIMIT}",
            )
        )
    if tool.strict:
        issues.extend(openai_strict_issues(tool.parameters))
    return issues


def openai_strict_issues(schema: Mapping[str, Any]) -> list[CompatibilityIssue]:
    """The OpenAI strict-mode rules a ``parameters`` schema breaks (``[]`` when it fits).

    Each issue carries the JSON Pointer of the offending subschema. See the module docstring
    for the rules.
    """
    issues = [_strict("root-not-object", "", text) for text in _root_issues("the schema", schema)]
    counts = {"properties": 0, "enum": 0}
    deepest = 0
    walk = subschemas(schema, _SUBSCHEMA_MAPS, _SUBSCHEMA_LISTS, _SUBSCHEMA_SINGLE)
    for tokens, node, depth in walk:
        deepest = max(deepest, depth)
        issues.extend(_strict_node(format_pointer(tokens), node, counts))
    for rule, found, limit, what in (
        ("strict-too-deep", deepest, _STRICT_MAX_DEPTH, f"objects nest {deepest} levels deep"),
        (
            "strict-too-many-properties",
            counts["properties"],
            _STRICT_MAX_PROPERTIES,
            f"the schema declares {counts['properties']} properties",
        ),
        (
            "strict-too-many-enum-values",
            counts["enum"],
            _STRICT_MAX_ENUM_VALUES,
            f"the schema lists {counts['enum']} enum values",
        ),
    ):
        if found > limit:
            issues.append(_strict(rule, "", f"{what}; strict mode allows {limit}"))
    return issues


def anthropic_issues(tool: CustomTool) -> list[CompatibilityIssue]:
    """The Anthropic tool-use rules ``tool`` breaks: ``input_schema`` must be an object
    schema with ``"type": "object"`` and no root-level ``anyOf`` / ``oneOf`` / ``allOf``."""
    return _root("anthropic", "Anthropic input_schema", tool)


def _strict(rule: str, path: str, message: str) -> CompatibilityIssue:
    return CompatibilityIssue(
        provider="openai", rule=rule, path=path, message=f"strict mode: {message}"
    )


Tokens = tuple[str | int, ...]


def subschemas(
    root: Any, maps: Sequence[str], lists: Sequence[str], singles: Sequence[str]
) -> Iterator[tuple[Tokens, Mapping[str, Any], int]]:
    """Every subschema of ``root`` that is a mapping, in pre-order, with its path of tokens
    from the root and how many ``properties`` it is nested in (object depth).

    The keywords followed: ``maps`` hold name -> subschema, ``lists`` a list of subschemas,
    ``singles`` one subschema. Without recursion, and bounded (a schema changed after it was
    checked, even into a cycle of dicts, cannot make a walk run away).
    """
    stack: list[tuple[Tokens, Any, int]] = [((), root, 0)]
    seen = 0
    while stack and seen < _MAX_NODES:
        tokens, node, depth = stack.pop()
        if not isinstance(node, Mapping) or len(tokens) > _MAX_TOKENS:
            continue
        seen += 1
        yield tokens, node, depth
        children: list[tuple[Tokens, Any, int]] = []
        for keyword in maps:
            value = node.get(keyword)
            if isinstance(value, Mapping):
                inner = depth + 1 if keyword == "properties" else depth
                children += [((*tokens, keyword, str(k)), v, inner) for k, v in value.items()]
        for keyword in lists:
            value = node.get(keyword)
            if isinstance(value, list):
                children += [((*tokens, keyword, i), v, depth) for i, v in enumerate(value)]
        children += [((*tokens, keyword), node.get(keyword), depth) for keyword in singles]
        stack.extend(reversed(children))


def _strict_node(
    path: str, node: Mapping[str, Any], counts: dict[str, int]
) -> Iterator[CompatibilityIssue]:
    where = path or "the root"
    for keyword in node:
        if keyword not in OPENAI_STRICT_KEYWORDS:
            yield _strict(
                "strict-keyword",
                path,
                f"{where} uses {keyword!r}, which strict mode does not support; remove it"
                + (
                    " (describe the default in the description instead)"
                    if keyword == "default"
                    else ""
                ),
            )
    kind = node.get("type")
    kinds = kind if isinstance(kind, list) else [kind] if kind is not None else []
    for name in kinds:
        if name not in _STRICT_TYPES:
            yield _strict("strict-type", path, f"{where} has unsupported type {name!r}")
    if not kinds and not any(k in node for k in ("anyOf", "enum", "const", "$ref")):
        yield _strict(
            "strict-untyped",
            path,
            f'{where} accepts any value; strict mode needs a "type" (or anyOf, enum, const)',
        )
    enum = node.get("enum")
    if isinstance(enum, list):
        counts["enum"] += len(enum)
    if "object" in kinds or "properties" in node:
        properties = node.get("properties")
        names = list(properties) if isinstance(properties, Mapping) else []
        counts["properties"] += len(names)
        if node.get("additionalProperties") is not False:
            yield _strict(
                "strict-open-object",
                path,
                f'{where} must set "additionalProperties": false',
            )
        required = node.get("required")
        listed = set(required) if isinstance(required, list) else set()
        for name in names:
            if name not in listed:
                yield _strict(
                    "strict-optional-property",
                    f"{path}/properties/{escape_token(str(name))}",
                    f"property {name!r} of {where} is not required; strict mode needs every"
                    ' property in "required" (make it a union with null to allow no value)',
                )
