"""The labelled corpus of contract changes the gate is held to.

Each entry is ``(name, side, old, new, label, code)``: ``side`` is ``"input"`` (``old`` and
``new`` are parameter schemas), ``"output"`` (output schemas) or ``"tool"`` (whole tool
entries, keyed by tool name); ``label`` is the verdict (the gravest kind found: breaking, then
undecided, compatible, notice; ``"unchanged"`` when nothing is reported); ``code`` is a code
the gate must report (``None`` for unchanged).
"""

from __future__ import annotations

from typing import Any


def obj(required: tuple[str, ...] = (), closed: bool = True, **props: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "object", "properties": props}
    if required:
        out["required"] = list(required)
    if closed:
        out["additionalProperties"] = False
    return out


S = {"type": "string"}
I = {"type": "integer"}  # noqa: E741
N = {"type": "number"}
NULL = {"type": "null"}
SN = {"type": ["string", "null"]}

TREE = {
    "$defs": {
        "node": obj(
            ("value",),
            value=I,
            children={"type": "array", "items": {"$ref": "#/$defs/node"}},
        )
    },
    "$ref": "#/$defs/node",
}


def tree(value: Any, description: str | None = None) -> dict[str, Any]:
    node = obj(
        ("value",), value=value, children={"type": "array", "items": {"$ref": "#/$defs/node"}}
    )
    if description:
        node["description"] = description
    return {"$defs": {"node": node}, "$ref": "#/$defs/node"}


def tagged(*variants: dict[str, Any]) -> dict[str, Any]:
    return {"oneOf": list(variants)}


def variant(tag: str, **props: Any) -> dict[str, Any]:
    return obj(("kind",), kind={"const": tag}, **props)


def tool(**entry: Any) -> dict[str, Any]:
    out = {"label": "t", "description": "A tool.", "parameters": obj(), "permissions": None}
    out.update(entry)
    return out


CORPUS: list[tuple[str, str, Any, Any, str, str | None]] = [
    # -- parameters: presence
    (
        "new required parameter",
        "input",
        obj(("q",), q=S),
        obj(("q", "n"), q=S, n=I),
        "breaking",
        "parameter-required",
    ),
    (
        "optional made required",
        "input",
        obj(("q",), q=S, n=I),
        obj(("q", "n"), q=S, n=I),
        "breaking",
        "parameter-required",
    ),
    (
        "required with a default is still required",
        "input",
        obj(q=S),
        obj(("q", "n"), q=S, n={**I, "default": 3}),
        "breaking",
        "parameter-required",
    ),
    (
        "required made optional",
        "input",
        obj(("q", "n"), q=S, n=I),
        obj(("q",), q=S, n=I),
        "compatible",
        "type-widened",
    ),
    (
        "parameter removed",
        "input",
        obj(("q",), q=S, n=I),
        obj(("q",), q=S),
        "breaking",
        "parameter-removed",
    ),
    (
        "parameter renamed",
        "input",
        obj(("q",), q=S),
        obj(("query",), query=S),
        "breaking",
        "parameter-removed",
    ),
    (
        "parameter dropped from an open object",
        "input",
        obj(closed=False, q=S, n=I),
        obj(closed=False, q=S),
        "undecided",
        "contract-undecided",
    ),
    (
        "new optional parameter",
        "input",
        obj(("q",), q=S),
        obj(("q",), q=S, n=I),
        "compatible",
        "parameter-added",
    ),
    (
        "new optional parameter on an open object",
        "input",
        obj(closed=False, q=S),
        obj(closed=False, q=S, n=I),
        "compatible",
        "parameter-added",
    ),
    (
        "nested property removed",
        "input",
        obj(o=obj(a=S, b=I)),
        obj(o=obj(a=S)),
        "breaking",
        "parameter-removed",
    ),
    (
        "nested new required property",
        "input",
        obj(o=obj(a=S)),
        obj(o=obj(("b",), a=S, b=I)),
        "breaking",
        "parameter-required",
    ),
    # -- parameters: types
    ("null dropped from a type list", "input", obj(q=SN), obj(q=S), "breaking", "type-narrowed"),
    ("null added to a type list", "input", obj(q=S), obj(q=SN), "compatible", "type-widened"),
    ("number narrowed to integer", "input", obj(q=N), obj(q=I), "breaking", "type-narrowed"),
    ("integer widened to number", "input", obj(q=I), obj(q=N), "compatible", "type-widened"),
    ("string changed to integer", "input", obj(q=S), obj(q=I), "breaking", "type-narrowed"),
    ("any value narrowed to a string", "input", obj(q={}), obj(q=S), "breaking", "type-narrowed"),
    ("a string widened to any value", "input", obj(q=S), obj(q=True), "compatible", "type-widened"),
    (
        "type list and anyOf are the same",
        "input",
        obj(q=SN),
        obj(q={"anyOf": [S, NULL]}),
        "unchanged",
        None,
    ),
    # -- parameters: bounds and patterns
    (
        "minimum raised",
        "input",
        obj(n={**I, "minimum": 0}),
        obj(n={**I, "minimum": 1}),
        "breaking",
        "type-narrowed",
    ),
    (
        "minimum lowered",
        "input",
        obj(n={**I, "minimum": 1}),
        obj(n={**I, "minimum": 0}),
        "compatible",
        "type-widened",
    ),
    (
        "maximum lowered",
        "input",
        obj(n={**N, "maximum": 10}),
        obj(n={**N, "maximum": 5}),
        "breaking",
        "type-narrowed",
    ),
    (
        "maximum dropped",
        "input",
        obj(n={**N, "maximum": 10}),
        obj(n=N),
        "compatible",
        "type-widened",
    ),
    (
        "exclusive minimum rewritten for integers",
        "input",
        obj(n={**I, "exclusiveMinimum": 0}),
        obj(n={**I, "minimum": 1}),
        "unchanged",
        None,
    ),
    (
        "exclusive minimum tightened",
        "input",
        obj(n={**N, "minimum": 0}),
        obj(n={**N, "exclusiveMinimum": 0}),
        "breaking",
        "type-narrowed",
    ),
    (
        "minLength added",
        "input",
        obj(q=S),
        obj(q={**S, "minLength": 1}),
        "breaking",
        "type-narrowed",
    ),
    (
        "maxLength raised",
        "input",
        obj(q={**S, "maxLength": 10}),
        obj(q={**S, "maxLength": 20}),
        "compatible",
        "type-widened",
    ),
    (
        "pattern added",
        "input",
        obj(q=S),
        obj(q={**S, "pattern": "^[a-z]+$"}),
        "breaking",
        "type-narrowed",
    ),
    (
        "pattern dropped",
        "input",
        obj(q={**S, "pattern": "^[a-z]+$"}),
        obj(q=S),
        "compatible",
        "type-widened",
    ),
    (
        "pattern changed",
        "input",
        obj(q={**S, "pattern": "^[a-z]+$"}),
        obj(q={**S, "pattern": "^[a-zA-Z]+$"}),
        "undecided",
        "contract-undecided",
    ),
    (
        "multipleOf added",
        "input",
        obj(n=I),
        obj(n={**I, "multipleOf": 5}),
        "breaking",
        "type-narrowed",
    ),
    (
        "multipleOf relaxed",
        "input",
        obj(n={**I, "multipleOf": 10}),
        obj(n={**I, "multipleOf": 5}),
        "compatible",
        "type-widened",
    ),
    (
        "additionalProperties closed",
        "input",
        obj(closed=False, q=S),
        obj(q=S),
        "breaking",
        "type-narrowed",
    ),
    (
        "additionalProperties opened",
        "input",
        obj(q=S),
        obj(closed=False, q=S),
        "compatible",
        "type-widened",
    ),
    (
        "additionalProperties schema narrowed",
        "input",
        {**obj(closed=False), "additionalProperties": SN},
        {**obj(closed=False), "additionalProperties": S},
        "breaking",
        "type-narrowed",
    ),
    (
        "`not` added",
        "input",
        obj(q=S),
        obj(q={**S, "not": {"const": "x"}}),
        "undecided",
        "contract-undecided",
    ),
    (
        "`not` dropped",
        "input",
        obj(q={**S, "not": {"const": "x"}}),
        obj(q=S),
        "compatible",
        "type-widened",
    ),
    # -- parameters: enum and const
    (
        "enum value removed",
        "input",
        obj(m={"enum": ["a", "b", "c"]}),
        obj(m={"enum": ["a", "b"]}),
        "breaking",
        "enum-value-removed",
    ),
    (
        "enum value added",
        "input",
        obj(m={"enum": ["a", "b"]}),
        obj(m={"enum": ["a", "b", "c"]}),
        "compatible",
        "enum-value-added",
    ),
    (
        "enum reordered",
        "input",
        obj(m={"enum": ["a", "b"]}),
        obj(m={"enum": ["b", "a"]}),
        "unchanged",
        None,
    ),
    (
        "enum widened to its type",
        "input",
        obj(m={"enum": ["a", "b"]}),
        obj(m=S),
        "compatible",
        "type-widened",
    ),
    (
        "string narrowed to an enum",
        "input",
        obj(m=S),
        obj(m={"enum": ["a", "b"]}),
        "breaking",
        "type-narrowed",
    ),
    (
        "const changed",
        "input",
        obj(m={"const": "a"}),
        obj(m={"const": "b"}),
        "breaking",
        "enum-value-removed",
    ),
    (
        "const widened to an enum holding it",
        "input",
        obj(m={"const": "a"}),
        obj(m={"enum": ["a", "b"]}),
        "compatible",
        "enum-value-added",
    ),
    (
        "enum against a new minimum refusing a value",
        "input",
        obj(n={"enum": [1, 2, 3]}),
        obj(n={**I, "minimum": 2}),
        "breaking",
        "enum-value-removed",
    ),
    (
        "enum inside a new minimum",
        "input",
        obj(n={"enum": [2, 3]}),
        obj(n={**I, "minimum": 2}),
        "compatible",
        "type-widened",
    ),
    (
        "enum values the old type refused do not count",
        "input",
        obj(m={"type": "string", "enum": ["a", 1]}),
        obj(m={"enum": ["a"]}),
        "unchanged",
        None,
    ),
    # -- parameters: $ref, combinators, recursion -----------------------------------------------
    (
        "a $ref target narrowed",
        "input",
        {**obj(a={"$ref": "#/$defs/A"}), "$defs": {"A": I}},
        {**obj(a={"$ref": "#/$defs/A"}), "$defs": {"A": {**I, "minimum": 0}}},
        "breaking",
        "type-narrowed",
    ),
    (
        "a $ref target widened",
        "input",
        {**obj(a={"$ref": "#/$defs/A"}), "$defs": {"A": I}},
        {**obj(a={"$ref": "#/$defs/A"}), "$defs": {"A": N}},
        "compatible",
        "type-widened",
    ),
    (
        "inline moved behind a $ref",
        "input",
        obj(("a",), a=obj(x=S)),
        {**obj(("a",), a={"$ref": "#/$defs/A"}), "$defs": {"A": obj(x=S)}},
        "unchanged",
        None,
    ),
    (
        "a $ref outside the document changed",
        "input",
        obj(a={"$ref": "https://example.com/a.json"}),
        obj(a={"$ref": "https://example.com/b.json"}),
        "undecided",
        "contract-undecided",
    ),
    (
        "allOf written as one schema",
        "input",
        {"allOf": [obj(a=S), {"required": ["a"]}]},
        obj(("a",), a=S),
        "unchanged",
        None,
    ),
    (
        "allOf adds a requirement",
        "input",
        obj(a=S),
        {"allOf": [obj(a=S), {"required": ["a"]}]},
        "breaking",
        "parameter-required",
    ),
    (
        "allOf tightens a bound",
        "input",
        obj(n=I),
        obj(n={"allOf": [I, {"minimum": 3}]}),
        "breaking",
        "type-narrowed",
    ),
    (
        "anyOf alternative removed",
        "input",
        obj(v={"anyOf": [S, I]}),
        obj(v={"anyOf": [S]}),
        "breaking",
        "type-narrowed",
    ),
    (
        "anyOf alternative added",
        "input",
        obj(v={"anyOf": [S, I]}),
        obj(v={"anyOf": [S, I, {"type": "boolean"}]}),
        "compatible",
        "type-widened",
    ),
    (
        "oneOf variant field narrowed",
        "input",
        tagged(variant("a", x=I), variant("b", y=S)),
        tagged(variant("a", x={**I, "maximum": 5}), variant("b", y=S)),
        "breaking",
        "type-narrowed",
    ),
    (
        "oneOf variant added",
        "input",
        tagged(variant("a", x=I)),
        tagged(variant("a", x=I), variant("b", y=S)),
        "compatible",
        "type-widened",
    ),
    (
        "oneOf variant removed",
        "input",
        tagged(variant("a", x=I), variant("b", y=S)),
        tagged(variant("a", x=I)),
        "breaking",
        "enum-value-removed",
    ),
    (
        "oneOf with alternatives that may overlap",
        "input",
        obj(v={"oneOf": [obj(a=I), obj(b=S)]}),
        obj(v={"oneOf": [obj(a=I), obj(b=S), obj(closed=False)]}),
        "undecided",
        "contract-undecided",
    ),
    ("recursive schema: a leaf narrowed", "input", TREE, tree(S), "breaking", "type-narrowed"),
    ("recursive schema: a leaf widened", "input", TREE, tree(N), "compatible", "type-widened"),
    (
        "recursive schema: a description",
        "input",
        TREE,
        tree(I, "One node."),
        "notice",
        "description-changed",
    ),
    # -- parameters: arrays
    (
        "items narrowed",
        "input",
        obj(t={"type": "array", "items": SN}),
        obj(t={"type": "array", "items": S}),
        "breaking",
        "type-narrowed",
    ),
    (
        "items widened",
        "input",
        obj(t={"type": "array", "items": S}),
        obj(t={"type": "array", "items": SN}),
        "compatible",
        "type-widened",
    ),
    (
        "minItems added",
        "input",
        obj(t={"type": "array", "items": S}),
        obj(t={"type": "array", "items": S, "minItems": 1}),
        "breaking",
        "type-narrowed",
    ),
    (
        "uniqueItems added",
        "input",
        obj(t={"type": "array"}),
        obj(t={"type": "array", "uniqueItems": True}),
        "breaking",
        "type-narrowed",
    ),
    # -- parameters: annotations
    (
        "parameter description changed",
        "input",
        obj(q={**S, "description": "a"}),
        obj(q={**S, "description": "b"}),
        "notice",
        "description-changed",
    ),
    (
        "parameter title changed",
        "input",
        obj(q={**S, "title": "A"}),
        obj(q={**S, "title": "B"}),
        "notice",
        "label-changed",
    ),
    (
        "default changed",
        "input",
        obj(n={**I, "default": 1}),
        obj(n={**I, "default": 2}),
        "notice",
        "default-changed",
    ),
    (
        "format added",
        "input",
        obj(q=S),
        obj(q={**S, "format": "email"}),
        "notice",
        "annotation-changed",
    ),
    (
        "deprecated",
        "input",
        obj(q=S),
        obj(q={**S, "deprecated": True}),
        "notice",
        "annotation-changed",
    ),
    # -- output
    (
        "output field removed",
        "output",
        obj(("a", "b"), a=S, b=I),
        obj(("a",), a=S),
        "breaking",
        "output-field-removed",
    ),
    (
        "output field may now be missing",
        "output",
        obj(("a", "b"), a=S, b=I),
        obj(("a",), a=S, b=I),
        "breaking",
        "output-field-removed",
    ),
    (
        "output field type changed",
        "output",
        obj(("a",), a=I),
        obj(("a",), a=S),
        "breaking",
        "output-type-changed",
    ),
    (
        "output field may now be null",
        "output",
        obj(("a",), a=I),
        obj(("a",), a={"type": ["integer", "null"]}),
        "breaking",
        "output-type-changed",
    ),
    (
        "output field narrowed",
        "output",
        obj(("a",), a={"type": ["integer", "null"]}),
        obj(("a",), a=I),
        "compatible",
        "output-narrowed",
    ),
    (
        "output field added",
        "output",
        obj(("a",), a=S),
        obj(("a", "b"), a=S, b=I),
        "compatible",
        "output-field-added",
    ),
    (
        "output enum value added",
        "output",
        obj(("s",), s={"enum": ["ok", "failed"]}),
        obj(("s",), s={"enum": ["ok", "failed", "partial"]}),
        "breaking",
        "output-type-changed",
    ),
    (
        "output enum value removed",
        "output",
        obj(("s",), s={"enum": ["ok", "failed"]}),
        obj(("s",), s={"enum": ["ok"]}),
        "compatible",
        "output-narrowed",
    ),
    (
        "output description changed",
        "output",
        {**obj(("a",), a=S), "description": "x"},
        {**obj(("a",), a=S), "description": "y"},
        "notice",
        "description-changed",
    ),
    # -- tools
    ("tool removed", "tool", {"a": tool(), "b": tool()}, {"a": tool()}, "breaking", "tool-removed"),
    ("tool added", "tool", {"a": tool()}, {"a": tool(), "b": tool()}, "compatible", "tool-added"),
    (
        "tool renamed, former name declared",
        "tool",
        {"a": tool()},
        {"b": tool(formerNames=["a"])},
        "compatible",
        "tool-renamed",
    ),
    (
        "tool renamed without its former name",
        "tool",
        {"a": tool()},
        {"b": tool()},
        "breaking",
        "tool-removed",
    ),
    (
        "deprecated alias dropped",
        "tool",
        {"b": tool(formerNames=["a"])},
        {"b": tool()},
        "breaking",
        "tool-removed",
    ),
    (
        "renamed and narrowed",
        "tool",
        {"a": tool(parameters=obj(q=SN))},
        {"b": tool(parameters=obj(q=S), formerNames=["a"])},
        "breaking",
        "type-narrowed",
    ),
    (
        "permissions widened: network",
        "tool",
        {"a": tool(permissions={"net": "none"})},
        {"a": tool(permissions={"net": [443]})},
        "breaking",
        "permissions-widened",
    ),
    (
        "permissions widened: a write path",
        "tool",
        {"a": tool()},
        {"a": tool(permissions={"write": ["out"]})},
        "breaking",
        "permissions-widened",
    ),
    (
        "permissions widened: programs",
        "tool",
        {"a": tool(permissions={"run": False})},
        {"a": tool(permissions={"run": True})},
        "breaking",
        "permissions-widened",
    ),
    (
        "permissions narrowed",
        "tool",
        {"a": tool(permissions={"net": "all", "read": ["."]})},
        {"a": tool(permissions={"net": [443], "read": ["data"]})},
        "compatible",
        "permissions-narrowed",
    ),
    (
        "approval required now",
        "tool",
        {"a": tool()},
        {"a": tool(requiresApproval=True)},
        "breaking",
        "approval-required",
    ),
    (
        "destructive hint asks for approval",
        "tool",
        {"a": tool()},
        {"a": tool(annotations={"destructiveHint": True})},
        "breaking",
        "approval-required",
    ),
    (
        "read-only hint added",
        "tool",
        {"a": tool()},
        {"a": tool(annotations={"readOnlyHint": True})},
        "notice",
        "annotation-changed",
    ),
    (
        "tool description changed",
        "tool",
        {"a": tool()},
        {"a": tool(description="Another.")},
        "notice",
        "description-changed",
    ),
    (
        "tool label changed",
        "tool",
        {"a": tool()},
        {"a": tool(label="T")},
        "notice",
        "label-changed",
    ),
    (
        "timeout changed",
        "tool",
        {"a": tool(timeout=30)},
        {"a": tool(timeout=60)},
        "notice",
        "contract-changed",
    ),
    (
        "output schema dropped",
        "tool",
        {"a": tool(outputSchema=obj(a=S))},
        {"a": tool()},
        "breaking",
        "output-type-changed",
    ),
    (
        "output schema declared",
        "tool",
        {"a": tool()},
        {"a": tool(outputSchema=obj(a=S))},
        "compatible",
        "output-narrowed",
    ),
]
