"""A property of the gate: when the new parameters schema accepts every value the old one
accepted, the gate never calls the change breaking.

Pairs are made by drawing a schema A and applying changes that should keep every value of A
valid (widening a type or bound, making a property optional, adding an optional one, opening
an object) and rewrites that change nothing (moving a subschema behind ``$ref``, splitting
``required`` into an ``allOf``, writing a union as ``anyOf``, changing a description). The
premise is then checked, not assumed: values of A drawn with hypothesis-jsonschema must all
be valid against B, or the pair is rejected. Narrowing changes are left out on purpose: a
sample can miss the one value a narrowing refuses, so a correct "breaking" would read as a
failure here; the labelled corpus covers them. Examples are derandomized, so a run is
repeatable.
"""

from __future__ import annotations

import copy
from typing import Any

import jsonschema
from hypothesis import HealthCheck, Phase, event, given, reject, settings
from hypothesis import strategies as st
from hypothesis_jsonschema import from_schema

from customtools._rules._contract import compare_contracts, contract_document

from .corpus import tool

NAMES = ("a", "b", "c")

scalars = st.one_of(
    st.builds(
        lambda low: {"type": "integer", **({"minimum": low} if low is not None else {})},
        st.none() | st.integers(-3, 3),
    ),
    st.just({"type": "number", "maximum": 100}),
    st.builds(
        lambda most: {"type": "string", **({"maxLength": most} if most else {})},
        st.none() | st.integers(1, 5),
    ),
    st.just({"type": "boolean"}),
    st.just({"type": ["string", "null"]}),
    st.builds(
        lambda values: {"enum": values},
        st.lists(st.sampled_from(["x", "y", "z", 1, 2]), min_size=1, max_size=3, unique=True),
    ),
)


def _object(props: dict[str, Any], required: list[str], closed: bool) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "object", "properties": props}
    wanted = [name for name in required if name in props]
    if wanted:
        out["required"] = wanted
    if closed:
        out["additionalProperties"] = False
    return out


def objects(children: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    return st.builds(
        _object,
        st.dictionaries(st.sampled_from(NAMES), children, max_size=3),
        st.lists(st.sampled_from(NAMES), min_size=1, max_size=3, unique=True),
        st.booleans(),
    )


nested = st.recursive(
    scalars,
    lambda inner: (
        objects(inner)
        | st.builds(lambda items: {"type": "array", "items": items, "maxItems": 3}, inner)
    ),
    max_leaves=4,
)
roots = objects(nested)


def _nodes(schema: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Paths of the subschemas of ``schema`` (properties and items)."""
    out = [path]
    if isinstance(schema, dict):
        for name, sub in (schema.get("properties") or {}).items():
            out += _nodes(sub, (*path, "properties", name))
        if isinstance(schema.get("items"), dict):
            out += _nodes(schema["items"], (*path, "items"))
    return out


def _get(schema: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        schema = schema[key]
    return schema


def _set(schema: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    _get(schema, path[:-1])[path[-1]] = value
    return schema


CHANGES = (
    "nullable",
    "more values",
    "no bounds",
    "number",
    "new optional",
    "optional",
    "allOf",
    "open",
    "anyOf",
    "$ref",
)


def _options(node: dict[str, Any], *, root: bool) -> list[str]:
    """The changes that apply to ``node``."""
    kind = node.get("type")
    out = []
    if isinstance(kind, str):
        out.append("nullable")
    if "enum" in node:
        out.append("more values")
    if any(bound in node for bound in ("minimum", "maxLength", "maxItems", "maximum")):
        out.append("no bounds")
    if kind == "integer":
        out.append("number")
    if kind == "object":
        out.append("new optional")
        if node.get("required"):
            out.append("optional")
            if not root:
                out.append("allOf")
        if node.get("additionalProperties") is False:
            out.append("open")
    if not root:
        out += ["anyOf", "$ref"]
    return out


def _widen(node: dict[str, Any], how: str, root: dict[str, Any], index: int) -> dict[str, Any]:
    """One change to ``node`` that keeps every value it allowed valid."""
    node = copy.deepcopy(node)
    if how == "describe":
        node["description"] = "changed"
    elif how == "nullable":
        node["type"] = [node["type"], "null"]
    elif how == "more values":
        node["enum"] = [*node["enum"], "w"]
    elif how == "no bounds":
        for bound in ("minimum", "maxLength", "maxItems", "maximum"):
            node.pop(bound, None)
    elif how == "number":
        node["type"] = "number"
    elif how == "new optional":
        node["properties"] = {**node["properties"], "d": {"type": "string"}}
    elif how == "optional":
        node["required"] = node["required"][1:]
        if not node["required"]:
            del node["required"]
    elif how == "allOf":
        rest = {k: v for k, v in node.items() if k != "required"}
        node = {"allOf": [rest, {"required": node["required"]}]}
    elif how == "open":
        del node["additionalProperties"]
    elif how == "anyOf":
        node = {"anyOf": [node, {"type": "null"}]}
    elif how == "$ref":
        root.setdefault("$defs", {})[f"D{index}"] = node
        node = {"$ref": f"#/$defs/D{index}"}
    return node


@settings(
    max_examples=60,
    phases=[Phase.explicit, Phase.reuse, Phase.generate],  # a failure is shown unshrunk
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(data=st.data(), old=roots)
def test_a_change_that_keeps_every_old_value_valid_is_never_breaking(
    data: st.DataObject, old: dict[str, Any]
) -> None:
    new = copy.deepcopy(old)
    new["description"] = "Changed."  # an annotation change rides along with every pair
    for index in range(data.draw(st.integers(1, 4), label="changes")):
        how = data.draw(st.sampled_from(CHANGES), label="how")
        paths = [  # where it applies (the root stays an object schema, as parameters are)
            path
            for path in _nodes(new)
            if isinstance(_get(new, path), dict) and how in _options(_get(new, path), root=not path)
        ]
        if not paths:
            continue
        path = data.draw(st.sampled_from(paths), label="where")
        event(how)
        new = _set(new, path, _widen(_get(new, path), how, new, index))
    values = data.draw(st.lists(from_schema(old), min_size=1, max_size=6), label="values of A")
    validator = jsonschema.Draft202012Validator(new)
    if not all(validator.is_valid(value) for value in values):
        reject()  # the premise does not hold for this pair

    found = compare_contracts(
        contract_document([("p", None, {"t": tool(parameters=old)})]),
        contract_document([("p", None, {"t": tool(parameters=new)})]),
    )

    assert not [item.finding.message for item in found if item.kind == "breaking"]
