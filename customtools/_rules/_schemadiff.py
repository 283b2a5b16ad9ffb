"""Comparing two JSON Schemas for the contract gate: what the new schema allows that the old
did not (*widened*), what it no longer allows (*narrowed*), and what cannot be decided.

The comparison follows JSON Schema (Draft 2020-12) semantics rather than the text of the
schemas: ``$ref`` (inside the document) is followed, ``allOf`` is combined into one schema,
``anyOf``/``oneOf`` and ``type`` lists become alternatives matched by type (and by a
``const`` discriminator between object alternatives), ``type`` lists and unions written either
way compare alike, and ``enum``/``const`` are finite sets whose values are checked one by one
against the other schema with a real validator (so ``{"enum": [1, 2]}`` against
``{"type": "integer", "minimum": 2}`` is exact). Recursive schemas end where a pair of
subschemas is met again. ``default``, ``title``, ``description``, ``format`` and
``deprecated`` are annotations: their changes are reported as such, never as narrowing.

What the rules cannot decide (a changed ``pattern``, a keyword this module does not model
such as ``not`` or ``if``, an ``allOf`` that cannot be combined, a ``$ref`` outside the
document, alternatives an old value could match several of) is reported with the effect
``"unknown"``, never guessed.

Conventions where semantics alone would mislead (see ``docs/ci.md``): callers send only the
properties a schema declares, so adding an optional property to an open object is a widening;
a declared property that disappears from an object that still allows undeclared ones is
``"unknown"`` (the tool may or may not still read it).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from customtools._jsonpointer import escape_token, unescape_token

__all__ = ["SchemaChange", "diff_schemas"]

Effect = Literal["narrowed", "widened", "unknown", "annotation"]
Schema = Mapping[str, Any]
Path = tuple[str, ...]  # where in an instance (SchemaChange.path)
_Note = Callable[[Effect, str, str], None]  # records a change at one place: effect, what, text


def _words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


_TYPES: Final = _words("null boolean number string array object")
_NUMBER: Final = _words("minimum maximum exclusiveMinimum exclusiveMaximum multipleOf")
_BY_TYPE: Final = {
    "number": _NUMBER,
    "integer": _NUMBER,
    "string": _words("minLength maxLength pattern"),
    "array": _words(
        "items prefixItems minItems maxItems uniqueItems contains minContains maxContains"
        " unevaluatedItems"
    ),
    "object": _words(
        "properties required additionalProperties patternProperties minProperties"
        " maxProperties propertyNames dependentRequired dependentSchemas unevaluatedProperties"
    ),
}
_TYPED: Final = frozenset(k for keys in _BY_TYPE.values() for k in keys)
_ANNOTATIONS: Final = _words("title description default format deprecated")
# Keywords that never change what a schema allows (annotations and document structure).
_IGNORED: Final = frozenset(
    _ANNOTATIONS
    + _words(
        "examples readOnly writeOnly $comment $schema $id $anchor $dynamicAnchor $defs"
        " definitions $vocabulary contentEncoding contentMediaType"
    )
)
# Keywords compared by their meaning; any other is compared by equality.
_MODELLED: Final = frozenset(
    _NUMBER
    + _words(
        "type enum const allOf anyOf oneOf $ref properties required additionalProperties"
        " patternProperties items prefixItems minItems maxItems uniqueItems minProperties"
        " maxProperties minLength maxLength pattern"
    )
)
_LOWER: Final = {"minimum", "minLength", "minItems", "minProperties", "exclusiveMinimum"}
_UPPER: Final = {"maximum", "maxLength", "maxItems", "maxProperties", "exclusiveMaximum"}
_BOUNDS: Final = (
    ("minimum", "exclusiveMinimum", True),
    ("maximum", "exclusiveMaximum", False),
    ("minLength", None, True),
    ("maxLength", None, False),
    ("minItems", None, True),
    ("maxItems", None, False),
    ("minProperties", None, True),
    ("maxProperties", None, False),
)
_ANY_PATTERNS: Final = frozenset({"", ".*", "^.*$", "^.*", ".*$", "[\\s\\S]*", "^[\\s\\S]*$"})
_MAX_DEPTH: Final = 48


@dataclass(frozen=True, slots=True)
class SchemaChange:
    """One difference between two schemas.

    Attributes:
        effect: ``"narrowed"`` (the new schema no longer allows something the old allowed),
            ``"widened"`` (it allows more), ``"unknown"`` (the rules cannot tell) or
            ``"annotation"`` (a description, title, default, format or deprecation).
        what: the kind of difference: ``"removed"``, ``"undeclared"``, ``"added"``,
            ``"required"``, ``"optional"``, ``"enum"``, ``"type"``, ``"bound"``,
            ``"pattern"``, ``"closed"``, ``"keyword"``, ``"description"``, ``"title"``,
            ``"default"``, ``"format"``, ``"deprecated"``.
        path: where in an instance: property names, ``"[]"`` for array items, ``"*"`` for
            undeclared properties.
        pointer: JSON Pointer to the subschema concerned (in the new schema when it is
            there, else in the old).
        text: the difference in plain words, without its subject (``"is required now"``).
    """

    effect: Effect
    what: str
    path: tuple[str, ...]
    pointer: str
    text: str


def diff_schemas(old: Any, new: Any) -> list[SchemaChange]:
    """Every difference between ``old`` and ``new`` (two JSON Schemas), in the order found."""
    if old == new:
        return []
    differ = _Differ(_Side(old, "urn:customtools:old"), _Side(new, "urn:customtools:new"))
    differ.compare(differ.old.at(""), differ.new.at(""), ())
    return differ.changes


# -- one side: resolving and combining ------------------------------------------------------------


@dataclass(slots=True)
class _Node:
    """A subschema of one side with ``$ref`` and ``allOf`` taken out (as far as they combine).

    ``check`` is a schema that allows what this node allows, valid against the whole document
    (for checking values); ``key`` names the node for recursion (equal keys: the same node).
    """

    side: _Side
    schema: dict[str, Any]
    pointer: str | None  # where it is, when it is one place of the document
    check: Any
    key: str
    problem: str | None = None  # why it could not be combined (then ``schema`` is raw)
    never: bool = False  # ``false``: allows nothing

    def child(self, schema: Any, relative: str) -> _Node:
        """The node of ``schema``, found at ``relative`` below this one."""
        if self.pointer is not None:
            pointer = f"{self.pointer}/{relative}"
            found = self.side._walk(pointer)
            if found is not None and found[0] is schema:
                return self.side.at(pointer)
        return self.side.detached(schema, f"{self.key}/{relative}")


_FALSE_TYPE: Final = "__never__"


class _Side:
    """One schema document: resolves references and checks values against its subschemas."""

    def __init__(self, root: Any, uri: str) -> None:
        self.root = root
        self.uri = uri
        self._validators: dict[str, Any] = {}

    def resolve(self, ref: str) -> tuple[Any, str] | None:
        """The subschema a ``#/json/pointer`` reference names, and its pointer."""
        from urllib.parse import unquote

        if not ref.startswith("#") or (len(ref) > 1 and ref[1] != "/"):
            return None  # another document, or an anchor name: not followed
        pointer = unquote(ref[1:])
        return self._walk(pointer)

    def _walk(self, pointer: str) -> tuple[Any, str] | None:
        target: Any = self.root
        for token in pointer.split("/")[1:] if pointer else ():
            key = unescape_token(token)
            if isinstance(target, Mapping) and key in target:
                target = target[key]
            elif isinstance(target, list) and key.isdigit() and int(key) < len(target):
                target = target[int(key)]
            else:
                return None
        return target, pointer

    def at(self, pointer: str, hops: int = 0) -> _Node:
        """The node at ``pointer`` (which must exist)."""
        found = self._walk(pointer)
        assert found is not None
        return self._node(found[0], pointer, self._ref(pointer), f"{self.uri}#{pointer}", hops)

    def detached(self, schema: Any, key: str) -> _Node:
        """A node for a subschema that is no single place of the document (a combined one)."""
        check: dict[str, Any] = {"allOf": [schema]}
        if isinstance(self.root, Mapping):
            for defs in ("$defs", "definitions"):
                if defs in self.root:
                    check[defs] = self.root[defs]
        return self._node(schema, None, check, key, 0)

    def _ref(self, pointer: str) -> dict[str, Any]:
        from urllib.parse import quote

        return {"$ref": f"{self.uri}#{quote(pointer, safe='/~')}"}

    def _node(self, schema: Any, pointer: str | None, check: Any, key: str, hops: int) -> _Node:
        if schema is True or schema == {}:
            return _Node(self, {}, pointer, check, key)
        if schema is False or not isinstance(schema, Mapping):
            return _Node(self, {}, pointer, check, key, never=True)
        schema = dict(schema)
        ref = schema.pop("$ref", None)
        if isinstance(ref, str):
            found = self.resolve(ref) if hops < 32 else None
            if found is None:
                problem = f"refers to {ref!r}, which the gate cannot follow"
                return _Node(self, {**schema, "$ref": ref}, pointer, check, key, problem=problem)
            target_pointer = found[1]
            if not schema:
                return self.at(target_pointer, hops + 1)
            target = self._node(found[0], target_pointer, check, key, hops + 1)
            return self._combine(target, self._node(schema, None, check, key, hops + 1), pointer)
        parts = schema.pop("allOf", None)
        if isinstance(parts, list) and parts:
            node = _Node(self, schema, pointer, check, key)
            for index, part in enumerate(parts):
                sub = None if pointer is None else f"{pointer}/allOf/{index}"
                node = self._combine(node, self._node(part, sub, check, key, hops + 1), pointer)
                if node.problem is not None or node.never:
                    break
            return node
        return _Node(self, schema, pointer, check, key)

    def _combine(self, a: _Node, b: _Node, pointer: str | None) -> _Node:
        if a.never or b.never:
            return _Node(self, {}, pointer, a.check, a.key, never=True)
        if a.problem is not None or b.problem is not None:
            return _Node(self, a.schema, pointer, a.check, a.key, problem=a.problem or b.problem)
        merged = _merge(a.schema, b.schema)
        if merged is None:
            problem = "uses an allOf the gate cannot combine"
            return _Node(self, a.schema, pointer, a.check, a.key, problem=problem)
        # Still one place of the document when the other part adds only annotations.
        where = a.pointer if all(k in _IGNORED for k in b.schema) else pointer
        return _Node(self, merged, where, a.check, a.key)

    def allows(self, check: Any, value: Any) -> bool | None:
        """Whether ``value`` is valid against ``check`` (``None``: cannot tell)."""
        key = json.dumps(check, sort_keys=True, default=repr)
        validator = self._validators.get(key)
        if validator is None:
            from jsonschema import Draft202012Validator
            from referencing import Registry, Resource
            from referencing.jsonschema import DRAFT202012

            resource = Resource.from_contents(self.root, default_specification=DRAFT202012)
            pairs = [(self.uri, resource)]
            if isinstance(resource.id(), str):
                pairs.append((str(resource.id()), resource))
            validator = Draft202012Validator(check, registry=Registry().with_resources(pairs))
            self._validators[key] = validator
        try:
            return bool(validator.is_valid(value))
        except Exception:  # an unresolvable reference, a pattern the engine refuses
            return None


def _types(schema: Mapping[str, Any]) -> list[str] | None:
    value = schema.get("type")
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(t, str) for t in value):
        return list(value)
    return None


def _intersect_types(a: list[str], b: list[str]) -> list[str]:
    out = [t for t in a if t in b]
    if "integer" in a and "number" in b and "integer" not in out:
        out.append("integer")
    if "number" in a and "integer" in b and "integer" not in out:
        out.append("integer")
    return out or [_FALSE_TYPE]


def _merge(a: Mapping[str, Any], b: Mapping[str, Any]) -> dict[str, Any] | None:
    """``a`` and ``b`` as one schema, or ``None`` when they do not combine keyword by keyword."""
    out = dict(a)
    for key, value in b.items():
        if key not in out or out[key] == value:
            out[key] = value
            continue
        mine = out[key]
        if key in _IGNORED:
            continue  # annotations: the first part's
        if key == "type":
            ta, tb = _types(out), _types(b)
            if ta is None or tb is None:
                return None
            out[key] = _intersect_types(ta, tb)
        elif key == "required" and isinstance(mine, list) and isinstance(value, list):
            out[key] = mine + [name for name in value if name not in mine]
        elif key == "enum" and isinstance(mine, list) and isinstance(value, list):
            out[key] = [item for item in mine if item in value]
        elif key in _LOWER and _number(mine) and _number(value):
            out[key] = max(mine, value)
        elif key in _UPPER and _number(mine) and _number(value):
            out[key] = min(mine, value)
        elif key == "properties" and isinstance(mine, Mapping) and isinstance(value, Mapping):
            props = dict(mine)
            for name, sub in value.items():
                props[name] = {"allOf": [props[name], sub]} if name in props else sub
            out[key] = props
        elif key in ("items", "additionalProperties"):
            if mine is False or value is False:
                out[key] = False
            else:
                out[key] = {"allOf": [mine, value]}
        else:
            return None
    # An object part that closes itself also refuses the other part's properties.
    for one, other in ((a, b), (b, a)):
        closed = one.get("additionalProperties", True)
        if closed is not True and closed != {}:
            extra = set(other.get("properties") or ()) - set(one.get("properties") or ())
            if extra:
                return None
    return out


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


# -- alternatives ---------------------------------------------------------------------------------


@dataclass(slots=True)
class _Branch:
    """One alternative of a node: a single type with its keywords, or a finite set of values."""

    type: str | None  # None: finite (``values``)
    schema: dict[str, Any]
    node: _Node  # the alternative's node (its children are found below it)
    values: list[Any] = field(default_factory=list)


def _branches(side: _Side, node: _Node, depth: int = 0) -> list[_Branch] | None:
    """The alternatives of ``node`` (``None`` when they cannot be worked out)."""
    schema = node.schema
    alternatives = None
    for key in ("anyOf", "oneOf"):
        if isinstance(schema.get(key), list):
            if alternatives is not None:
                return None  # both: not modelled
            alternatives = (key, schema[key])
    if alternatives is not None:
        key, items = alternatives
        base = {k: v for k, v in schema.items() if k != key}
        out: list[_Branch] = []
        for index, item in enumerate(items):
            part = node.child(item, f"{key}/{index}")
            if part.problem is not None or depth > 8:
                return None
            if part.never:
                continue
            merged = _merge(base, part.schema)
            if merged is None:
                return None
            found = _branches(
                side, _Node(side, merged, part.pointer, node.check, part.key), depth + 1
            )
            if found is None:
                return None
            out.extend(found)
        return out
    if "const" in schema or "enum" in schema:
        values = [schema["const"]] if "const" in schema else list(schema.get("enum") or ())
        if "const" in schema and isinstance(schema.get("enum"), list):
            values = [v for v in values if v in schema["enum"]]
        return [_Branch(None, schema, node, values)]
    types = _types(schema)
    if types is None:
        types = list(_TYPES)
    if _FALSE_TYPE in types:
        return []
    out = []
    for name in types:
        own = _BY_TYPE.get(name, ())
        keep = {k: v for k, v in schema.items() if k not in _TYPED or k in own}
        out.append(_Branch(name, keep, node))
    return out


def _covers(new: str, old: str) -> bool:
    return new == old or (new == "number" and old == "integer")


def _discriminator(branch: _Branch) -> dict[str, Any]:
    """``{property: value}`` of the properties an object alternative fixes with ``const``."""
    out = {}
    for name, sub in (branch.schema.get("properties") or {}).items():
        if isinstance(sub, Mapping):
            if "const" in sub:
                out[name] = sub["const"]
            elif isinstance(sub.get("enum"), list) and len(sub["enum"]) == 1:
                out[name] = sub["enum"][0]
    return out


# -- the comparison -------------------------------------------------------------------------------


def _show(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True, default=repr)
    return text if len(text) <= 60 else text[:57] + "..."


def _kind(name: str) -> str:
    return {"integer": "integers", "number": "numbers", "array": "arrays", "object": "objects"}.get(
        name, f"{name}s" if name in ("string", "boolean") else name
    )


class _Differ:
    def __init__(self, old: _Side, new: _Side) -> None:
        self.old = old
        self.new = new
        self.changes: list[SchemaChange] = []
        self._seen: set[tuple[str, str]] = set()
        self._keys: set[tuple[str, str, Path, str]] = set()

    def add(self, effect: Effect, what: str, path: Path, pointer: str | None, text: str) -> None:
        key = (effect, what, path, text)
        if key not in self._keys:
            self._keys.add(key)
            self.changes.append(SchemaChange(effect, what, path, pointer or "", text))

    def at(self, path: Path, pointer: str | None) -> _Note:
        """:meth:`add` for the changes at ``path`` (``pointer``: the subschema concerned)."""
        return lambda effect, what, text: self.add(effect, what, path, pointer, text)

    # -- nodes ----------------------------------------------------------------------------------

    def compare(self, old: _Node, new: _Node, path: Path) -> None:
        key = (old.key, new.key)
        if key in self._seen:
            return  # met again: a recursive schema, or a subschema shared by several places
        self._seen.add(key)
        where = new.pointer if new.pointer is not None else old.pointer
        note = self.at(path, where)
        if len(path) > _MAX_DEPTH:
            note("unknown", "keyword", "nests too deep for the gate to compare")
            return
        if old.never or new.never:
            if old.never and not new.never:
                note("widened", "type", "allows values now (it allowed none)")
            elif new.never and not old.never:
                note("narrowed", "type", "allows no value at all now")
            return
        self._annotations(old.schema, new.schema, note)
        problem = old.problem or new.problem
        old_branches = None if problem else _branches(self.old, old)
        new_branches = None if problem else _branches(self.new, new)
        if old_branches is None or new_branches is None:
            if _strip(old.schema) != _strip(new.schema):
                why = problem or "alternatives (anyOf/oneOf) the gate cannot match up"
                note("unknown", "keyword", f"changed, and {why}" if problem else f"changed {why}")
            return
        self._values(old, new, old_branches, new_branches, note)
        self._typed(new, old_branches, new_branches, path, where)

    def _annotations(self, old: Schema, new: Schema, note: _Note) -> None:
        for key in _ANNOTATIONS:
            before, after = old.get(key, _ABSENT), new.get(key, _ABSENT)
            if before == after:
                continue
            if key == "default":
                if after is _ABSENT:
                    text = f"has no default now (it was {_show(before)})"
                elif before is _ABSENT:
                    text = f"has the default {_show(after)} now"
                else:
                    text = f"default changed from {_show(before)} to {_show(after)}"
            elif key == "format":
                text = (
                    f"format changed from {_show(old.get(key))} to {_show(new.get(key))}"
                    " (an annotation: the adapter does not check formats)"
                )
            elif key == "deprecated":
                text = "is deprecated now" if after is True else "is no longer deprecated"
            else:
                text = f"{key} changed"
            note("annotation", key, text)

    def _values(
        self, old: _Node, new: _Node, olds: list[_Branch], news: list[_Branch], note: _Note
    ) -> None:
        """Finite alternatives, checked value by value against the other side."""
        sides: tuple[tuple[_Side, _Node, _Side, _Node, list[_Branch], Effect, str], ...] = (
            (self.old, old, self.new, new, olds, "narrowed", "no longer allows"),
            (self.new, new, self.old, old, news, "widened", "now allows"),
        )
        for side, node, other, target, branches, effect, verb in sides:
            for branch in branches:
                if branch.type is not None:
                    continue
                for value in branch.values:
                    if side.allows(node.check, value) is not True:
                        continue  # the side's own schema refuses it: not one of its values
                    verdict = other.allows(target.check, value)
                    if verdict is None:
                        note("unknown", "enum", f"cannot check the value {_show(value)}")
                    elif not verdict:
                        note(effect, "enum", f"{verb} the value {_show(value)}")

    def _typed(
        self, new: _Node, olds: list[_Branch], news: list[_Branch], path: Path, where: Any
    ) -> None:
        """Typed alternatives, matched by type (and discriminator), then keyword by keyword."""
        note = self.at(path, where)
        old_typed = [b for b in olds if b.type is not None]
        new_typed = [b for b in news if b.type is not None]
        new_finite = [b for b in news if b.type is None]
        matched: set[int] = set()
        for branch in old_typed:
            assert branch.type is not None
            matches = [b for b in new_typed if b.type is not None and _covers(b.type, branch.type)]
            if not matches and branch.type == "number":
                matches = [b for b in new_typed if b.type == "integer"]
                if matches:
                    note("narrowed", "type", "no longer allows non-integer numbers")
            if not matches:
                if new_finite:
                    allowed = [v for b in new_finite for v in b.values]
                    note(
                        "narrowed",
                        "type",
                        f"allows only the values {_show(allowed)} now, not any {branch.type}",
                    )
                else:
                    note("narrowed", "type", f"no longer allows {_kind(branch.type)}")
                continue
            if len(matches) > 1:
                matches = self._pick(branch, matches, new, path)
                if not matches:
                    note(
                        "unknown",
                        "type",
                        f"its {_kind(branch.type)} may match several alternatives of the new"
                        " schema; the gate cannot tell which",
                    )
                    continue
            matched.add(id(matches[0]))
            self._branch(branch, matches[0], path)
        for branch in new_typed:
            assert branch.type is not None
            if any(b.type is not None and _covers(branch.type, b.type) for b in old_typed):
                if branch.type == "number" and not any(b.type == "number" for b in old_typed):
                    note("widened", "type", "now allows non-integer numbers")
                elif id(branch) not in matched and branch.type == "object":
                    where_new = branch.node.pointer if branch.node.pointer is not None else where
                    self.add("widened", "type", path, where_new, "allows another kind of object")
                continue
            if any(b.type is not None and _covers(b.type, branch.type) for b in old_typed):
                continue  # an integer alternative beside an old number one
            note("widened", "type", f"now allows {_kind(branch.type)}")

    def _pick(
        self, branch: _Branch, matches: list[_Branch], new: _Node, path: Path
    ) -> list[_Branch]:
        """The one alternative an old one corresponds to: by discriminator, else the only one
        that compares without narrowing (for ``anyOf``)."""
        tag = _discriminator(branch)
        if tag:
            tagged = [m for m in matches if _discriminator(m).items() & tag.items()]
            if len(tagged) == 1:
                return tagged
        if "oneOf" in new.schema:
            return []  # overlapping oneOf alternatives: the value would match more than one
        clean = []
        for candidate in matches:
            probe = _Differ(self.old, self.new)
            probe._seen = set(self._seen)
            probe._branch(branch, candidate, path)
            if not any(c.effect in ("narrowed", "unknown") for c in probe.changes):
                clean.append(candidate)
        return clean[:1]

    # -- one type --------------------------------------------------------------------------------

    def _branch(self, old: _Branch, new: _Branch, path: Path) -> None:
        old_node, new_node = old.node, new.node
        where = new_node.pointer if new_node.pointer is not None else old_node.pointer
        note = self.at(path, where)
        a, b = old.schema, new.schema
        kind = old.type
        for key in sorted((set(a) | set(b)) - _MODELLED - _IGNORED):
            self._keyword(key, a.get(key, _ABSENT), b.get(key, _ABSENT), note)
        # Each type keeps only its own bounds (see _branches), so one call compares them all.
        self._bounds(a, b, note, integer=new.type == "integer")
        if kind in ("number", "integer"):
            self._multiple(a, b, note, integer=new.type == "integer")
        elif kind == "string":
            self._pattern(a, b, note)
        elif kind == "array":
            self._array(a, b, old_node, new_node, path, note)
        elif kind == "object":
            self._object(a, b, old_node, new_node, path, where)

    def _keyword(self, key: str, a: Any, b: Any, note: _Note) -> None:
        if a == b and not _has_ref(a):
            return
        if b is _ABSENT:
            note("widened", "keyword", f"dropped {key!r}")
        elif a == b and self._same_targets(a):
            return
        else:
            verb = "added" if a is _ABSENT else "changed"
            note("unknown", "keyword", f"{verb} {key!r}, which the gate does not compare")

    def _same_targets(self, value: Any) -> bool:
        """Whether every ``$ref`` in ``value`` points at equal subschemas on both sides."""
        for ref in _refs(value):
            a, b = self.old.resolve(ref), self.new.resolve(ref)
            if a is None or b is None or a[0] != b[0]:
                return False
        return True

    def _bounds(self, a: Schema, b: Schema, note: _Note, *, integer: bool = False) -> None:
        for key, exclusive, lower in _BOUNDS:
            before = _bound(a, key, exclusive, lower=lower, integer=integer)
            after = _bound(b, key, exclusive, lower=lower, integer=integer)
            if before != after:
                effect: Effect = "narrowed" if _tighter(before, after, lower=lower) else "widened"
                if before is None:
                    text = f"{key} {_show_bound(after)} added"
                elif after is None:
                    text = f"{key} {_show_bound(before)} dropped"
                else:
                    text = f"{key} {_show_bound(before)} -> {_show_bound(after)}"
                note(effect, "bound", text)

    def _multiple(self, a: Schema, b: Schema, note: _Note, *, integer: bool) -> None:
        before, after = a.get("multipleOf"), b.get("multipleOf")
        if (
            before == after
            or not (_number(before) or before is None)
            or not (_number(after) or after is None)
        ):
            if before != after:
                note("unknown", "bound", "multipleOf changed")
            return
        if after is None or (integer and after == 1):
            if before is not None:
                note("widened", "bound", f"multipleOf {_show(before)} dropped")
            return
        if before is None:
            note("narrowed", "bound", f"must be a multiple of {_show(after)} now")
            return
        ratio = before / after
        if math.isclose(ratio, round(ratio)):
            note("widened", "bound", f"multipleOf {before} -> {after}")
        else:
            note("narrowed", "bound", f"multipleOf {before} -> {after}")

    def _pattern(self, a: Schema, b: Schema, note: _Note) -> None:
        before, after = a.get("pattern"), b.get("pattern")
        if before in _ANY_PATTERNS:
            before = None
        if after in _ANY_PATTERNS:
            after = None
        if before == after:
            return
        if after is None:
            note("widened", "pattern", f"pattern {_show(before)} dropped")
        elif before is None:
            note("narrowed", "pattern", f"must match the pattern {_show(after)} now")
        else:
            note(
                "unknown",
                "pattern",
                f"pattern changed from {_show(before)} to {_show(after)}; the gate cannot tell"
                " whether every string the old one allowed still matches",
            )

    def _array(self, a: Schema, b: Schema, old: _Node, new: _Node, path: Path, note: _Note) -> None:
        if a.get("uniqueItems") is True and b.get("uniqueItems") is not True:
            note("widened", "bound", "items need not be unique now")
        elif b.get("uniqueItems") is True and a.get("uniqueItems") is not True:
            note("narrowed", "bound", "items must be unique now")
        before, after = a.get("prefixItems", []), b.get("prefixItems", [])
        if before != after or _has_ref(before):
            if len(before) != len(after):
                note("unknown", "keyword", "prefixItems changed length")
            for index, (x, y) in enumerate(zip(before, after, strict=False)):
                self.compare(
                    old.child(x, f"prefixItems/{index}"),
                    new.child(y, f"prefixItems/{index}"),
                    (*path, f"[{index}]"),
                )
        if a.get("items", True) != b.get("items", True) or _has_ref(a.get("items")):
            self.compare(
                old.child(a.get("items", True), "items"),
                new.child(b.get("items", True), "items"),
                (*path, "[]"),
            )

    def _object(self, a: Schema, b: Schema, old: _Node, new: _Node, path: Path, where: Any) -> None:
        note = self.at(path, where)
        before = a.get("properties") or {}
        after = b.get("properties") or {}
        required_before = set(a.get("required") or ())
        required_after = set(b.get("required") or ())
        extra_before = a.get("additionalProperties", True)
        extra_after = b.get("additionalProperties", True)
        patterns_before = a.get("patternProperties") or {}
        patterns_after = b.get("patternProperties") or {}
        removed = [name for name in before if name not in after]
        added = [name for name in after if name not in before]
        for name in before:
            here = (*path, name)
            relative = f"properties/{escape_token(name)}"
            if name in after:
                child = new.child(after[name], relative)
                self.compare(old.child(before[name], relative), child, here)
                if name in required_after and name not in required_before:
                    self.add("narrowed", "required", here, child.pointer, "is required now")
                elif name in required_before and name not in required_after:
                    self.add("widened", "optional", here, child.pointer, "is optional now")
                continue
            gone = old.child(before[name], relative).pointer
            renamed = [other for other in added if _strip(after[other]) == _strip(before[name])]
            hint = f" (renamed to {renamed[0]!r}?)" if len(removed) == 1 == len(renamed) else ""
            if extra_after is False or patterns_after:
                self.add("narrowed", "removed", here, gone, f"was removed{hint}")
                continue
            self.add(
                "unknown",
                "undeclared",
                here,
                gone,
                f"is no longer declared{hint}, but the object still allows undeclared properties",
            )
            if extra_after is not True and extra_after != {}:
                self.compare(
                    old.child(before[name], relative),
                    new.child(extra_after, "additionalProperties"),
                    here,
                )
        for name in added:
            here = (*path, name)
            child = new.child(after[name], f"properties/{escape_token(name)}")
            if name in required_after:
                text = "was added as a required property"
                self.add("narrowed", "added", here, child.pointer, text)
            else:
                self.add("widened", "added", here, child.pointer, "was added (optional)")
        for name in sorted(required_after - required_before - set(after) - set(before)):
            self.add("narrowed", "required", (*path, name), where, "is required now")
        if patterns_before != patterns_after or _has_ref(patterns_before):
            if patterns_after or not (extra_after is True or extra_after == {}):
                note("unknown", "keyword", "patternProperties changed")
            else:
                note("widened", "keyword", "patternProperties dropped")
        open_before = extra_before is not False
        open_after = extra_after is not False
        if open_before and not open_after:
            note("narrowed", "closed", "allows no undeclared properties now")
        elif open_after and not open_before:
            note("widened", "closed", "allows undeclared properties now")
        elif open_before and (extra_before != extra_after or _has_ref(extra_before)):
            self.compare(
                old.child(extra_before, "additionalProperties"),
                new.child(extra_after, "additionalProperties"),
                (*path, "*"),
            )


_ABSENT: Final[Any] = object()


def _strip(schema: Any) -> Any:
    """``schema`` without annotations, for comparisons that ignore them."""
    if isinstance(schema, Mapping):
        return {k: _strip(v) for k, v in schema.items() if k not in _IGNORED or k == "$defs"}
    if isinstance(schema, list):
        return [_strip(v) for v in schema]
    return schema


def _refs(value: Any) -> Iterator[str]:
    if isinstance(value, Mapping):
        for key, item in value.items():
            if key == "$ref" and isinstance(item, str):
                yield item
            else:
                yield from _refs(item)
    elif isinstance(value, list):
        for item in value:
            yield from _refs(item)


def _has_ref(value: Any) -> bool:
    return next(_refs(value), None) is not None


Bound = tuple[float, bool] | None  # (value, exclusive)


def _bound(schema: Schema, key: str, exclusive: str | None, *, lower: bool, integer: bool) -> Bound:
    found: Bound = None
    value: Any = schema.get(key)
    if _number(value):
        found = (value, False)
    if exclusive is not None and _number(schema.get(exclusive)):
        other: Bound = (schema[exclusive], True)
        if found is None or _tighter(found, other, lower=lower):
            found = other
    if found is not None and integer:
        number, is_exclusive = found
        if lower:
            edge = math.floor(number) + 1 if is_exclusive else math.ceil(number)
        else:
            edge = math.ceil(number) - 1 if is_exclusive else math.floor(number)
        found = (edge, False)
    return found


def _tighter(before: Bound, after: Bound, *, lower: bool) -> bool:
    """Whether the bound ``after`` allows less than ``before``."""
    if after is None:
        return False
    if before is None:
        return True
    (x, x_open), (y, y_open) = before, after
    if x != y:
        return y > x if lower else y < x
    return y_open and not x_open


def _show_bound(bound: Bound) -> str:
    if bound is None:
        return "none"
    value, exclusive = bound
    return f"{_show(value)} (exclusive)" if exclusive else _show(value)
