"""The message a model reads when its arguments fail validation."""

from __future__ import annotations

from collections.abc import Sequence

from customtools._errors import ToolArgumentsError
from customtools._violations import Violation

__all__ = ["arguments_error", "arguments_message"]

_RETRY_HINT = "Fix these arguments to match the tool's parameter schema and call the tool again."
_MAX_MESSAGE_CHARS = 300


def _shorten(message: str) -> str:
    if len(message) <= _MAX_MESSAGE_CHARS:
        return message
    return message[: _MAX_MESSAGE_CHARS - 1] + "…"


def arguments_message(
    violations: Sequence[Violation], *, tool_name: str | None, truncated: bool = False
) -> str:
    """The text of a :class:`ToolArgumentsError`: every violation, one per line, and a hint."""
    head = f"invalid arguments for tool {tool_name!r}:" if tool_name else "invalid tool arguments:"
    lines = [head]
    limit = _MAX_MESSAGE_CHARS
    lines.extend(
        [
            f"  - {v.path or '(root)'}: "
            f"{v.message if len(v.message) <= limit else _shorten(v.message)}"
            for v in violations
        ]
    )
    if truncated:
        lines.append(f"  - ... more violations were found (only the first {len(violations)} shown)")
    lines.append(_RETRY_HINT)
    return "\n".join(lines)


def arguments_error(
    violations: Sequence[Violation], *, tool_name: str | None, truncated: bool = False
) -> ToolArgumentsError:
    """Build the :class:`ToolArgumentsError` listing every violation, one per line."""
    return ToolArgumentsError(
        arguments_message(violations, tool_name=tool_name, truncated=truncated),
        violations=violations,
        tool_name=tool_name,
    )
