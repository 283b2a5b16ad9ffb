"""Rendering hooks with fallbacks: :func:`render_call`, :func:`render_result`.

A UI shows a tool call and its result through the tool's optional ``render_call(args, theme)``
and ``render_result(result, options, theme, args)`` hooks. These two functions call them and
fall back to a plain, one-glance text rendering when a hook is missing, raises, or returns
``None``, so a broken renderer never breaks the UI. A raising hook is logged once per
(tool name, hook), not once per frame.

The fallback format (pinned by tests, described in ``docs/session-and-rendering.md``):

* call: ``theme.bold(label)`` then `` key=value`` for each argument, values compact JSON
  (strings quoted and escaped), each cut to :data:`MAX_VALUE_CHARS` with ``…``, at most
  :data:`MAX_ARGS` arguments then ``…(+N more)``;
* result: an ``[error]`` marker (``theme.fg("error", ...)``) when ``result.is_error`` and a
  ``[partial]`` marker (``theme.fg("muted", ...)``, led by a spinner character when
  ``options.spinner_frame`` is set) when ``options.is_partial``, then the result's text; other
  blocks appear as ``[image image/png]``-style placeholders; an empty result shows
  ``(no output)``; collapsed (``expanded=False``) shows the first :data:`COLLAPSED_LINES` lines
  then ``… (+N lines)``. Control characters other than newline and tab are shown as escapes, so
  tool output cannot drive the terminal.
"""

from __future__ import annotations

import inspect
import json
import logging
import math
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Protocol, runtime_checkable

from customtools._content import (
    AudioContent,
    ContentBlock,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
    ToolResult,
)
from customtools._format import describe_exception, safe_repr, safe_str
from customtools._tool import CustomTool

__all__ = [
    "COLLAPSED_LINES",
    "MAX_ARGS",
    "MAX_VALUE_CHARS",
    "PLAIN_THEME",
    "PlainTheme",
    "RenderOptions",
    "Theme",
    "format_call",
    "format_result",
    "render_call",
    "render_result",
]

_log = logging.getLogger("customtools.render")

MAX_VALUE_CHARS: Final = 60
"""Longest rendering of one argument value in the fallback call line (``…`` marks a cut)."""
MAX_ARGS: Final = 8
"""Most arguments the fallback call line shows; the rest are counted as ``…(+N more)``."""
COLLAPSED_LINES: Final = 10
"""Lines of result text the fallback shows when ``options.expanded`` is false."""
_MAX_LINE_CHARS: Final = 400  # a collapsed view also cuts very long lines
_MAX_WARNED: Final = 1024  # bound on remembered (tool, hook) pairs; oldest forgotten first
_SPINNER: Final = "|/-\\"
# C0 controls except tab and newline, DEL, C1 controls, and lone surrogates.
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")


@dataclass(frozen=True, slots=True, kw_only=True)
class RenderOptions:
    """How a UI wants a result drawn, passed to ``render_result`` as ``options``.

    Args:
        expanded: show everything (the user expanded the result) rather than a summary.
        is_partial: ``result`` is a streamed partial update; the call is still running.
        spinner_frame: a counter that advances while the call runs, for animations.
    """

    expanded: bool = False
    is_partial: bool = False
    spinner_frame: int | None = None


@runtime_checkable
class Theme(Protocol):
    """What a rendering hook may ask of the host's theme.

    Colour names are the host's; hooks should stick to the common ones (``"accent"``,
    ``"muted"``, ``"success"``, ``"warning"``, ``"error"``). A theme returns the text
    unchanged for a name it does not know.
    """

    def fg(self, color: str, text: str) -> str:
        """Return ``text`` drawn in the foreground colour ``color``."""

    def bold(self, text: str) -> str:
        """Return ``text`` in bold."""


class PlainTheme:
    """A :class:`Theme` that returns text unchanged (logs, tests, plain terminals)."""

    __slots__ = ()

    def fg(self, color: str, text: str) -> str:
        """Return ``text`` unchanged."""
        return text

    def bold(self, text: str) -> str:
        """Return ``text`` unchanged."""
        return text

    def __repr__(self) -> str:
        return "PLAIN_THEME"


PLAIN_THEME: Final = PlainTheme()
"""The default theme: no styling at all."""

_warned: dict[tuple[str, str], None] = {}
_warned_lock = threading.Lock()


def _warn_once(tool: CustomTool, hook: str, exc: BaseException | None, problem: str) -> None:
    key = (tool.name, hook)
    with _warned_lock:
        if key in _warned:
            return
        _warned[key] = None
        if len(_warned) > _MAX_WARNED:
            del _warned[next(iter(_warned))]
    _log.warning(
        "custom tool %r: %s %s; showing the default rendering"
        " (further failures of this hook are not logged)",
        tool.name,
        hook,
        problem,
        exc_info=exc,
    )


def _run_hook(tool: CustomTool, hook_name: str, hook: Callable[..., Any], *args: Any) -> Any:
    try:
        out = hook(*args)
    except KeyboardInterrupt:
        raise  # on the caller's thread: it cannot be told apart from the user's Ctrl-C
    except BaseException as exc:  # SystemExit, GeneratorExit, ...: still a broken renderer
        _warn_once(tool, hook_name, exc, f"raised {describe_exception(exc)}")
        return None
    if inspect.isawaitable(out):
        if inspect.iscoroutine(out):
            out.close()  # never awaited on purpose; closing avoids a "never awaited" warning
        _warn_once(tool, hook_name, None, "returned an awaitable; rendering hooks must be sync")
        return None
    return out


def render_call(tool: CustomTool, args: Any, theme: Theme = PLAIN_THEME) -> Any:
    """What a UI shows for a call of ``tool`` with ``args``.

    Calls ``tool.render_call(args, theme)``; when the tool has no such hook, or it raises,
    returns an awaitable or returns ``None``, returns :func:`format_call` instead.

    Args:
        tool: the tool being called.
        args: the call's arguments (usually a mapping; while arguments stream, maybe partial).
        theme: the host's theme.

    Returns:
        The hook's value (whatever the host's UI accepts), or the fallback ``str``.
    """
    hook = tool.render_call
    if hook is not None:
        out = _run_hook(tool, "render_call", hook, args, theme)
        if out is not None:
            return out
    return format_call(tool, args, theme)


def render_result(
    tool: CustomTool,
    result: ToolResult,
    options: RenderOptions,
    theme: Theme = PLAIN_THEME,
    args: Any = None,
) -> Any:
    """What a UI shows for a (partial or final) result of ``tool``.

    Calls ``tool.render_result(result, options, theme, args)`` (``args`` always passed, ``None``
    when the host does not know them); when the tool has no such hook, or it raises, returns an
    awaitable or returns ``None``, returns :func:`format_result` instead.

    Args:
        tool: the tool that produced the result.
        result: the final result or a partial update.
        options: how the UI wants it drawn.
        theme: the host's theme.
        args: the call's arguments, so a renderer can say what the result is about.

    Returns:
        The hook's value, or the fallback ``str``.
    """
    hook = tool.render_result
    if hook is not None:
        out = _run_hook(tool, "render_result", hook, result, options, theme, args)
        if out is not None:
            return out
    return format_result(result, options, theme)


def _escape(text: str) -> str:
    return _UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _compact(value: Any, budget: int, depth: int = 0) -> str:
    """Compact JSON-like text of ``value``, at most about ``budget`` characters, built lazily
    so a huge or deeply nested value costs no more than what is shown."""
    if isinstance(value, str):
        cut = value[: budget + 1]
        return _escape(json.dumps(cut, ensure_ascii=False))
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, int):
        if value.bit_length() > 3 * budget + 64:  # str() of a huge int is slow or refused
            return f"<int of {value.bit_length()} bits>"
        return str(value)
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else str(value)
    if depth >= 4 or budget <= 2:
        return "{…}" if isinstance(value, Mapping) else "[…]" if _is_seq(value) else "…"
    if isinstance(value, Mapping):
        items = ((f"{_compact(_key_text(k), budget)}:", v) for k, v in value.items())
        return _join("{", "}", items, budget, depth)
    if _is_seq(value):
        return _join("[", "]", (("", v) for v in value), budget, depth)
    return _escape(safe_repr(value)[: budget + 1])


def _key_text(key: Any) -> str:
    return key if isinstance(key, str) else safe_str(key) or safe_repr(key)


def _is_seq(value: Any) -> bool:
    return isinstance(value, (Sequence, set, frozenset)) and not isinstance(
        value, (str, bytes, bytearray)
    )


def _join(
    open_: str, close: str, items: Any, budget: int, depth: int
) -> str:  # items: iterable of (prefix, value)
    parts = [open_]
    used = 1
    for index, (prefix, item) in enumerate(items):
        if used >= budget:
            parts.append("…")
            break
        text = prefix + _compact(item, budget - used, depth + 1)
        parts.append(("," if index else "") + text)
        used += len(text) + 1
    parts.append(close)
    return "".join(parts)


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def format_call(tool: CustomTool, args: Any, theme: Theme = PLAIN_THEME) -> str:
    """The fallback call rendering: the bold label, then compact ``key=value`` arguments.

    Example: ``read_file path="src/a.py" limit=10``.
    """
    head = theme.bold(tool.label)
    if args is None or (isinstance(args, Mapping) and not args):
        return head
    if not isinstance(args, Mapping):
        return f"{head} {_clip(_compact(args, MAX_VALUE_CHARS), MAX_VALUE_CHARS)}"
    parts = [head]
    for index, (key, value) in enumerate(args.items()):
        if index == MAX_ARGS:
            parts.append(f"…(+{len(args) - MAX_ARGS} more)")
            break
        name = key if isinstance(key, str) and key.isidentifier() else _compact(_key_text(key), 30)
        parts.append(
            f"{_clip(name, 30)}={_clip(_compact(value, MAX_VALUE_CHARS), MAX_VALUE_CHARS)}"
        )
    return " ".join(parts)


def _block_text(block: ContentBlock) -> str:
    if isinstance(block, TextContent):
        return block.text
    if isinstance(block, (ImageContent, AudioContent)):
        return f"[{block.type} {block.mime_type}]"
    if isinstance(block, ResourceLink):
        return f"[resource_link {block.uri}]"
    if isinstance(block, EmbeddedResource):
        uri = block.resource.get("uri")
        return f"[resource {uri}]" if isinstance(uri, str) else "[resource]"
    return f"[{block.type}]"  # an extension block


def _collapse(text: str, lines: int) -> str:
    """The first ``lines`` lines of ``text`` (each cut to a sane length) and a count of the
    rest, found without splitting the whole text; a CRLF line end counts as LF."""
    shown: list[str] = []
    start = 0
    while len(shown) < lines:
        end = text.find("\n", start)
        if end < 0:
            shown.append(_clip(text[start:], _MAX_LINE_CHARS))
            return "\n".join(shown)
        shown.append(_clip(text[start:end].removesuffix("\r"), _MAX_LINE_CHARS))
        start = end + 1
    if start >= len(text):
        return "\n".join(shown)
    rest = text.count("\n", start) + 1
    return "\n".join(shown) + f"\n… (+{rest} line{'s' if rest != 1 else ''})"


def format_result(result: ToolResult, options: RenderOptions, theme: Theme = PLAIN_THEME) -> str:
    """The fallback result rendering: markers, then the result's text (see the module doc).

    Example: ``[error] file not found: src/a.py``.
    """
    markers: list[str] = []
    if result.is_error:
        markers.append(theme.fg("error", "[error]"))
    if options.is_partial:
        marker = "[partial]"
        if options.spinner_frame is not None:
            marker = f"{_SPINNER[options.spinner_frame % len(_SPINNER)]} {marker}"
        markers.append(theme.fg("muted", marker))
    content = result.content
    if len(content) == 1 and isinstance(content[0], TextContent):
        text = content[0].text  # the common case: no copy of a large text
    else:
        text = "\n".join(_block_text(block) for block in content)
    if options.expanded:
        text = text.replace("\r\n", "\n")
    else:
        text = _collapse(text, COLLAPSED_LINES)
    text = _escape(text)
    if not text:
        text = theme.fg("muted", "(no output)")
    return " ".join([*markers, text])
