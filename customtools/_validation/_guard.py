"""Argument limits and JSON-ness (an iterative walk, never recursive) and :func:`parse_arguments`.

The walk enforces what the documentation promises about every call's arguments, whatever the
schema: no nesting deeper than ``max_depth``, no more than ``max_nodes`` values, and only
plain JSON data (``dict`` with ``str`` keys, ``list``/``tuple``, ``str`` without lone
surrogates, ``int``, finite ``float``, ``bool``, ``None``). The engines cannot be relied on for
the last part: ``jsonschema_rs`` never looks inside a free-form field, reads ``NaN`` and
``Infinity`` as ``null``, and accepts lone surrogates.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable
from typing import Any

from customtools._format import escape_control, safe_repr
from customtools._validation._messages import arguments_error
from customtools._violations import (
    DEFAULT_LIMITS,
    ValidationLimits,
    Violation,
    json_pointer,
)

__all__ = [
    "all_finite",
    "find_limit_violation",
    "non_finite_name",
    "non_json_message",
    "parse_arguments",
    "reject_constant",
]

_CONTAINERS = (dict, list, tuple)
_SURROGATE = re.compile("[\ud800-\udfff]")
_PLAIN_JSON = "send plain JSON (objects, arrays, strings, numbers, true, false, null)"


def non_finite_name(number: float) -> str:
    """``"NaN"``, ``"Infinity"`` or ``"-Infinity"``: how JavaScript and JSON texts spell it."""
    if math.isnan(number):
        return "NaN"
    return "Infinity" if number > 0 else "-Infinity"


def non_json_message(value: Any) -> str | None:
    """Why the scalar ``value`` is not JSON data, or ``None`` when it is.

    Containers (``dict``, ``list``, ``tuple``) are not judged here; the walk descends into them.
    """
    if isinstance(value, str):
        found = None if value.isascii() else _SURROGATE.search(value)
        if found is None:
            return None
        return (
            f"the text holds a lone surrogate ({escape_control(found.group())}) at character "
            f"{found.start()}, which is not valid Unicode; send valid text (a character outside "
            "the Basic Multilingual Plane is escaped as a surrogate pair)"
        )
    if value is None or isinstance(value, int):  # bool is an int
        return None
    if isinstance(value, float):
        if math.isfinite(value):
            return None
        if math.isnan(value):
            return "NaN is not a JSON number; send a finite number"
        return (
            f"{non_finite_name(value)} is not a JSON number (a number too large for a 64-bit "
            "float, such as 1e400, becomes Infinity); send a finite number"
        )
    if isinstance(value, (set, frozenset)):
        return "a set is not JSON data; send an array"
    if isinstance(value, (bytes, bytearray, memoryview)):
        return "a bytes value is not JSON data; send a string"
    name = escape_control(type(value).__qualname__)
    return f"a value of type {name} is not JSON data; {_PLAIN_JSON}"


def _key_message(key: Any) -> str | None:
    if isinstance(key, str):
        message = non_json_message(key)
        return None if message is None else message.replace("the text", "the key", 1)
    shown = escape_control(safe_repr(key))
    if len(shown) > 60:
        shown = shown[:57] + "..."
    return (
        f"the key {shown} ({escape_control(type(key).__qualname__)}) is not a string; JSON "
        "object keys are strings"
    )


def all_finite(value: Any) -> bool:
    """Whether no number anywhere in ``value`` is NaN or infinite (a cheap pre-check for
    schemas whose only open places accept ``null``: the compiled engine reads NaN and
    Infinity as ``null``). Anything else that is not JSON is left to the engine."""
    stack = [value]
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is str or kind is int or kind is bool or item is None:
            continue
        if kind is dict:
            stack.extend(item.values())
        elif kind is list or kind is tuple:
            stack.extend(item)
        elif isinstance(item, float):
            if not math.isfinite(item):
                return False
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
    return True


def find_limit_violation(value: Any, limits: ValidationLimits) -> Violation | None:
    """Return the first breach of ``limits`` or of plain JSON in ``value``, or ``None``.

    The walk keeps its own stack, so no nesting depth can exhaust Python's or Rust's stack,
    and it stops at the first breach, so its cost is bounded by the limits themselves.
    A breached limit has the keyword ``"limits"``; a value JSON cannot carry (a set, bytes,
    a non-string key, NaN, a lone surrogate, any other object) has ``"json"``.

    Args:
        value: the arguments.
        limits: the limits to enforce (``max_depth``, ``max_nodes``).
    """
    if not isinstance(value, _CONTAINERS):
        message = non_json_message(value)
        return None if message is None else Violation(path="", message=message, keyword="json")
    max_depth = limits.max_depth
    max_nodes = limits.max_nodes
    nodes = 1
    stack: list[tuple[Any, int, tuple[str | int, ...]]] = [(value, 1, ())]
    while stack:
        container, depth, parts = stack.pop()
        if depth > max_depth:
            return Violation(
                path=json_pointer(parts),
                message=f"the value is nested more than {max_depth} levels deep; "
                "send a flatter value",
                keyword="limits",
            )
        nodes += len(container)
        if nodes > max_nodes:
            return Violation(
                path=json_pointer(parts),
                message=f"the arguments hold more than {max_nodes} values; send less data",
                keyword="limits",
            )
        pairs: Iterable[tuple[Any, Any]]
        if isinstance(container, dict):
            for key in container:
                if type(key) is not str or not key.isascii():
                    message = _key_message(key)
                    if message is not None:
                        return Violation(path=json_pointer(parts), message=message, keyword="json")
            pairs = container.items()
        else:
            pairs = enumerate(container)
        for key, item in pairs:
            kind = type(item)
            # exact types first: the common case costs a few comparisons per value
            if kind is str:
                if item.isascii() or _SURROGATE.search(item) is None:
                    continue
            elif kind is int or kind is bool or item is None:
                continue
            elif kind is dict or kind is list or kind is tuple or isinstance(item, _CONTAINERS):
                stack.append((item, depth + 1, (*parts, key)))
                continue
            message = non_json_message(item)
            if message is not None:
                return Violation(path=json_pointer((*parts, key)), message=message, keyword="json")
    return None


class _NonFiniteConstantError(ValueError):
    pass


def reject_constant(name: str) -> Any:
    """``json.loads``'s ``parse_constant``: ``NaN`` and ``Infinity`` are not JSON."""
    raise _NonFiniteConstantError(name)


def parse_arguments(
    text: str | bytes | bytearray,
    *,
    limits: ValidationLimits | None = None,
    tool_name: str | None = None,
) -> Any:
    """Parse the raw JSON text of a model's tool arguments, safely.

    The text's length is checked before parsing (``limits.max_text_length``) and the result's
    depth and size after (``limits.max_depth``, ``limits.max_nodes``). ``NaN``, ``Infinity``
    and numbers that overflow to infinity (``1e400``) are rejected; so are integers too long
    to convert, invalid UTF-8, nesting deep enough to exhaust the parser's stack, and lone
    surrogates (``"\\ud800"`` escaped or raw, in a key or a value: not valid Unicode, and
    text that cannot be encoded later; they are rejected, not replaced, so the tool never
    sees text other than what was sent). An empty
    or all-whitespace text means "no arguments" and parses to ``{}`` (some clients send that
    for tools without parameters).

    Args:
        text: the JSON text, as ``str`` or UTF-8/16/32 ``bytes``.
        limits: the limits to enforce; :class:`ValidationLimits` defaults when omitted.
        tool_name: named in the error message when given.

    Returns:
        The parsed value (usually a ``dict``).

    Raises:
        ToolArgumentsError: the text is not acceptable JSON; the message says why. No
            ``ValueError`` or ``RecursionError`` from the parser ever escapes otherwise.
        TypeError: ``text`` is neither ``str`` nor bytes.
    """
    limits = limits or DEFAULT_LIMITS
    if isinstance(text, bytearray):
        text = bytes(text)
    if not isinstance(text, (str, bytes)):
        raise TypeError(f"arguments text must be str or bytes, not {type(text).__name__}")
    unit = "characters" if isinstance(text, str) else "bytes"

    def fail(message: str, keyword: str = "json", path: str = "") -> Exception:
        violation = Violation(path=path, message=message, keyword=keyword)
        return arguments_error([violation], tool_name=tool_name)

    if len(text) > limits.max_text_length:
        raise fail(
            f"the arguments text is {len(text)} {unit} long, more than the limit of "
            f"{limits.max_text_length}; send less data",
            "limits",
        )
    if not text.strip():
        return {}
    try:
        value = json.loads(text, parse_constant=reject_constant)
    except RecursionError:
        raise fail(
            f"the arguments are nested too deeply to parse (the limit is {limits.max_depth} "
            "levels); send a flatter value",
            "limits",
        ) from None
    except _NonFiniteConstantError as exc:
        raise fail(f"{exc} is not valid JSON; send a finite number or null") from None
    except json.JSONDecodeError as exc:
        raise fail(
            f"the arguments are not valid JSON: {exc.msg} (line {exc.lineno}, column "
            f"{exc.colno}); send one JSON object"
        ) from None
    except UnicodeDecodeError as exc:
        raise fail(f"the arguments are not valid UTF-8 ({exc.reason}); send UTF-8 text") from None
    except ValueError as exc:
        if "integer string conversion" in str(exc):
            raise fail(
                "an integer in the arguments has too many digits to convert; send a shorter "
                "number or a string"
            ) from None
        raise fail(f"the arguments are not valid JSON: {exc}") from None
    violation = find_limit_violation(value, limits)
    if violation is not None:
        raise arguments_error([violation], tool_name=tool_name)
    return value
