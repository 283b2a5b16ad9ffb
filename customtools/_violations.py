"""Value objects of the validation engine: violations, coercions and limits."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from customtools._jsonpointer import format_pointer

__all__ = [
    "Coercion",
    "ValidationLimits",
    "Violation",
    "json_pointer",
    "make_violation",
]


def json_pointer(parts: Sequence[str | int]) -> str:
    """Return the JSON Pointer (RFC 6901) for a sequence of keys and indexes."""
    return format_pointer(parts) if parts else ""


@dataclass(frozen=True, slots=True)
class Violation:
    """One reason why a tool's arguments failed validation.

    Attributes:
        path: JSON Pointer into the arguments (``"/limit"``, ``"/tags/2"``); ``""`` is the root.
        message: what is wrong, phrased for the model to act on
            (``"0 is less than the minimum of 1"``).
        keyword: the schema keyword that failed (``"minimum"``, ``"required"``,
            ``"additionalProperties"``, ...); ``"limits"`` for a breached
            :class:`ValidationLimits` guard and ``"json"`` for values JSON cannot carry.
    """

    path: str
    message: str
    keyword: str

    def __str__(self) -> str:
        return f"{self.path or '(root)'}: {self.message}"

    def to_dict(self) -> dict[str, Any]:
        """Return the violation as a JSON-ready mapping (``path``, ``message``, ``keyword``)."""
        return {"path": self.path, "message": self.message, "keyword": self.keyword}


_new = object.__new__
_set_path = Violation.__dict__["path"].__set__
_set_message = Violation.__dict__["message"].__set__
_set_keyword = Violation.__dict__["keyword"].__set__


def make_violation(path: str, message: str, keyword: str) -> Violation:
    """Build a :class:`Violation` about 2.5x faster than its frozen ``__init__``.

    Error reporting builds one per violation on a path budgeted in microseconds; the slot
    descriptors set the fields directly, and the instance is as immutable as any other.
    """
    violation: Violation = _new(Violation)
    _set_path(violation, path)
    _set_message(violation, message)
    _set_keyword(violation, keyword)
    return violation


@dataclass(frozen=True, slots=True)
class Coercion:
    """One repair applied to a model's arguments before the tool saw them.

    Attributes:
        path: JSON Pointer of the repaired value (``""`` is the root).
        kind: what was done: ``"json_string"`` (a JSON text parsed into the object or array
            the schema expects), ``"numeric_string"`` (``"10"`` to ``10``),
            ``"boolean_string"`` (``"true"`` to ``True``), ``"dropped_null"`` (an optional
            property given as ``null``, ``"null"`` or ``""`` that the schema rejects was
            removed) or ``"default"`` (a missing optional property got the schema's default).
        original: the value the model sent (``None`` for ``"default"``: nothing was sent).
        value: the value the tool receives (``None`` for ``"dropped_null"``: nothing).
    """

    path: str
    kind: str
    original: Any
    value: Any

    def to_dict(self) -> dict[str, Any]:
        """Return the coercion as a JSON-ready mapping (path, kind, original, value)."""
        return {
            "path": self.path,
            "kind": self.kind,
            "original": self.original,
            "value": self.value,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class ValidationLimits:
    """Guards against pathological arguments and schemas. The defaults suit tool calls.

    Argument limits are checked without recursion, so a hostile value can never exhaust the
    stack, together with plain JSON (string keys, finite numbers, no lone surrogates, no
    other Python objects). They are enforced by :func:`parse_arguments`; before every call to
    a tool whose schema can recurse (``$ref`` cycles, ``$dynamicRef``, remote references),
    compares deep values (``uniqueItems``) or lets values through unexamined (a free-form
    field such as ``{}``, an object without ``additionalProperties``, a place accepting
    ``null``); and before violations are collected for a failed call. A closed schema is only
    ever walked by the engine as deep as the schema itself, and the engine examines every
    value, so valid calls to such tools skip the walk (it would cost more than validation).

    Attributes:
        max_depth: deepest nesting of arrays and objects in the arguments (the root object
            is depth 1).
        max_nodes: most values (containers, keys' values and array items) in the arguments.
        max_text_length: longest raw JSON text :func:`parse_arguments` accepts, in characters
            for ``str`` and bytes for ``bytes``.
        max_schema_nodes: most values in a ``parameters`` schema.
        max_schema_depth: deepest nesting in a ``parameters`` schema.
        max_violations: most violations collected for one call; the message says when more
            were cut off.
    """

    max_depth: int = 64
    max_nodes: int = 100_000
    max_text_length: int = 4 * 1024 * 1024
    max_schema_nodes: int = 10_000
    max_schema_depth: int = 64
    max_violations: int = 100

    def __post_init__(self) -> None:
        for name in self.__dataclass_fields__:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(
                    f"ValidationLimits.{name} must be a positive integer, not {value!r}"
                )


DEFAULT_LIMITS = ValidationLimits()
