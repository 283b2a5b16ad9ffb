"""Field codecs shared by the host toolkit's wire types (private).

Every wire type declares its plain fields as :class:`Field` specs; :func:`decode_fields` turns a
JSON object into constructor arguments plus an ``extra`` mapping, and :func:`encode_fields` goes
back. ``extra`` keeps what a typed decoder would otherwise lose, so a round trip is lossless:

* keys the type does not know (newer protocol versions, passthrough data), and
* known optional keys whose value is ``null`` -- ``null`` and absent are different on the wire.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from customtools.host._errors import CustomizationError

Kind = Literal["str", "bool", "strs", "obj", "any"]

_TYPE_NAMES = {
    "str": "a string",
    "bool": "a boolean",
    "strs": "a list of strings",
    "obj": "an object",
    "any": "a value",
}


@dataclass(frozen=True, slots=True)
class Field:
    """One plain field: Python attribute, wire key, value kind, required or not."""

    attr: str
    key: str
    kind: Kind = "str"
    required: bool = False


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, Mapping):
        return "object"
    return type(value).__name__


def convert(value: Any, kind: Kind, where: str) -> Any:
    """Check ``value`` against ``kind`` and return its Python form (lists become tuples)."""
    ok = (
        kind == "any"
        or (kind == "str" and isinstance(value, str))
        or (kind == "bool" and isinstance(value, bool))
        or (kind == "obj" and isinstance(value, Mapping))
        or (kind == "strs" and isinstance(value, list) and all(isinstance(v, str) for v in value))
    )
    if not ok:
        raise CustomizationError(
            f"{where} must be {_TYPE_NAMES[kind]}, got {_json_type(value)}", where=where
        )
    if kind == "strs":
        return tuple(value)
    if kind == "obj":
        return dict(value)
    return value


def require_object(data: Any, where: str) -> Mapping[str, Any]:
    """Return ``data`` if it is a JSON object, else raise :class:`CustomizationError`."""
    if not isinstance(data, Mapping):
        raise CustomizationError(f"{where} must be an object, got {_json_type(data)}", where=where)
    return data


def decode_fields(
    data: Mapping[str, Any],
    fields: Iterable[Field],
    where: str,
    *,
    handled: Iterable[str] = (),
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Decode ``fields`` from ``data``.

    Args:
        data: the JSON object.
        fields: the plain fields to decode.
        where: JSON path used in error messages.
        handled: further keys the caller decodes itself (kept out of ``extra``).

    Returns:
        ``(kwargs, extra)``: constructor arguments and the lossless remainder.

    Raises:
        CustomizationError: a required field is missing or ``null``, or a value has the wrong
            type.
    """
    kwargs: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    known = set(handled)
    for spec in fields:
        known.add(spec.key)
        if spec.key not in data or data[spec.key] is None:
            if spec.required:
                raise CustomizationError(
                    f"{where}: required field '{spec.key}' is missing", where=where
                )
            if spec.key in data:
                extra[spec.key] = None
            continue
        kwargs[spec.attr] = convert(data[spec.key], spec.kind, f"{where}.{spec.key}")
    extra.update((key, value) for key, value in data.items() if key not in known)
    return kwargs, extra


def encode_value(value: Any) -> Any:
    """Return the JSON form of a decoded plain value (tuples become lists)."""
    if isinstance(value, tuple):
        return [encode_value(v) for v in value]
    if isinstance(value, Mapping):
        return {k: encode_value(v) for k, v in value.items()}
    return value


def encode_fields(obj: Any, fields: Iterable[Field], out: dict[str, Any]) -> dict[str, Any]:
    """Write the non-``None`` plain ``fields`` of ``obj`` into ``out``; return ``out``."""
    for spec in fields:
        value = getattr(obj, spec.attr)
        if value is not None:
            out[spec.key] = encode_value(value)
    return out


def put_extra(out: dict[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    """Write preserved ``extra`` keys that ``out`` does not already hold; return ``out``."""
    for key, value in extra.items():
        out.setdefault(key, value)
    return out
