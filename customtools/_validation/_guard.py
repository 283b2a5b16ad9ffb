"""Argument limits (an iterative walk, never recursive) and :func:`parse_arguments`."""

from __future__ import annotations

import json
import math
from typing import Any

from customtools._validation._messages import arguments_error
from customtools._validation._model import (
    DEFAULT_LIMITS,
    ValidationLimits,
    Violation,
    json_pointer,
)

__all__ = ["find_limit_violation", "parse_arguments"]

_CONTAINERS = (dict, list, tuple)


def find_limit_violation(
    value: Any, limits: ValidationLimits, *, finite_numbers: bool = False
) -> Violation | None:
    """Return the first breach of ``limits`` in ``value``, or ``None``.

    The walk keeps its own stack, so no nesting depth can exhaust Python's or Rust's stack,
    and it stops at the first breach, so its cost is bounded by the limits themselves.

    Args:
        value: the arguments.
        limits: the limits to enforce (``max_depth``, ``max_nodes``).
        finite_numbers: also reject NaN and infinite floats (for freshly parsed text).
    """
    max_depth = limits.max_depth
    max_nodes = limits.max_nodes
    nodes = 1
    stack: list[tuple[Any, int, tuple[str | int, ...]]] = [(value, 1, ())]
    while stack:
        container, depth, parts = stack.pop()
        if not isinstance(container, _CONTAINERS):
            if finite_numbers and isinstance(container, float) and not math.isfinite(container):
                return Violation(
                    path=json_pointer(parts),
                    message=f"{container} is not a JSON number (too large for a 64-bit float); "
                    "send a finite number",
                    keyword="json",
                )
            continue
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
        items = container.items() if isinstance(container, dict) else enumerate(container)
        for key, item in items:
            if isinstance(item, _CONTAINERS) or (
                finite_numbers and isinstance(item, float) and not math.isfinite(item)
            ):
                stack.append((item, depth + 1, (*parts, key)))
    return None


class _NonFiniteConstantError(ValueError):
    pass


def _reject_constant(name: str) -> Any:
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
    to convert, invalid UTF-8 and nesting deep enough to exhaust the parser's stack. An empty
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
        value = json.loads(text, parse_constant=_reject_constant)
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
    violation = find_limit_violation(value, limits, finite_numbers=True)
    if violation is not None:
        raise arguments_error([violation], tool_name=tool_name)
    return value
