"""Writing reports: JSON, GitHub workflow commands, colour, and the live progress line."""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from typing import Any, Final, TextIO

from customtools._format import escape_control

__all__ = [
    "REPORT_VERSION",
    "AnsiTheme",
    "Progress",
    "github_command",
    "github_data",
    "github_property",
    "is_terminal",
    "print_json",
    "to_json_text",
    "use_color",
    "without_surrogates",
]

REPORT_VERSION: Final = 1
"""The ``version`` of every JSON report; it changes only when a field changes meaning or goes."""

_SPINNER: Final = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
_ASCII_SPINNER: Final = "|/-\\"


_SURROGATE: Final = re.compile("[\ud800-\udfff]")


def without_surrogates(text: str) -> str:
    """``text`` with lone surrogates (which no UTF-8 stream can write) shown as ``\\udXXX``.

    Everything else, ANSI colour codes of a theme included, is left as it is.
    """
    return _SURROGATE.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


def to_json_text(data: Any) -> str:
    """``data`` as indented JSON: non-ASCII kept, a lone surrogate written as its ``\\uXXXX``
    escape (valid JSON, and writable to any UTF-8 stream), non-JSON values through ``repr``."""
    from customtools._format import safe_repr

    return without_surrogates(json.dumps(data, indent=2, ensure_ascii=False, default=safe_repr))


def print_json(data: Any, stream: TextIO | None = None) -> None:
    """Print ``data`` as indented JSON (see :func:`to_json_text`)."""
    out = stream if stream is not None else sys.stdout
    out.write(to_json_text(data) + "\n")


# -- GitHub workflow commands -------------------------------------------------------------------
# https://docs.github.com/actions/using-workflows/workflow-commands-for-github-actions: in the
# message, "%", CR and LF are escaped; in a property value, also ":" and ",".


def github_data(text: str) -> str:
    """Escape the message part of a workflow command."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def github_property(text: str) -> str:
    """Escape a property value (``file=``, ``title=``) of a workflow command."""
    return github_data(text).replace(":", "%3A").replace(",", "%2C")


def github_command(command: str, message: str, **properties: str | int | None) -> str:
    """One workflow command line, e.g. ``::error file=a.py,line=3,title=T::message``.

    Properties whose value is ``None`` are left out.
    """
    props = ",".join(
        f"{key}={github_property(str(value))}"
        for key, value in properties.items()
        if value is not None
    )
    head = f"::{command} {props}" if props else f"::{command}"
    return f"{head}::{github_data(message)}"


# -- colour -------------------------------------------------------------------------------------


def is_terminal(stream: TextIO) -> bool:
    """Whether ``stream`` is an interactive terminal that understands cursor movement."""
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty()) and os.environ.get("TERM") != "dumb"


def use_color(stream: TextIO, choice: str) -> bool:
    """Whether to colour ``stream``: ``--color always|never|auto`` (auto: a terminal, and
    neither ``NO_COLOR`` set nor ``TERM=dumb``)."""
    if choice != "auto":
        return choice == "always"
    return not os.environ.get("NO_COLOR") and is_terminal(stream)


class AnsiTheme:
    """A render theme drawing with ANSI SGR codes (a :class:`~customtools.rendering.Theme`)."""

    __slots__ = ()

    _CODES: Final = {
        "accent": "36",
        "muted": "2",
        "dim": "2",
        "success": "32",
        "warning": "33",
        "error": "31",
    }

    def fg(self, color: str, text: str) -> str:
        """``text`` in ``color``; unknown colour names leave it unchanged."""
        code = self._CODES.get(color)
        return f"\x1b[{code}m{text}\x1b[0m" if code else text

    def bold(self, text: str) -> str:
        """``text`` in bold."""
        return f"\x1b[1m{text}\x1b[0m"


# -- live progress ------------------------------------------------------------------------------


class Progress:
    """Shows a running call's streamed updates on a stream (stderr).

    On a terminal it keeps one line, redrawn in place: a spinner, the elapsed time and the
    latest update's last line, cut to the terminal width. Elsewhere (a pipe, a CI log) each
    update is printed as plain lines prefixed with ``... ``, and the spinner stays silent.
    Control characters in an update are shown as escapes
    (:func:`~customtools._format.escape_control`): tool output cannot retitle the terminal,
    clear it, or write a CI workflow command.
    """

    def __init__(self, stream: TextIO, *, live: bool) -> None:
        self._stream = stream
        self._live = live
        self._frame = 0
        self._text = ""
        self._drawn = False
        self._elapsed = 0.0
        encoding = (getattr(stream, "encoding", None) or "ascii").lower()
        self._frames = _SPINNER if encoding.startswith("utf") else _ASCII_SPINNER

    @property
    def live(self) -> bool:
        """Whether the progress line is redrawn in place (a terminal)."""
        return self._live

    def update(self, text: str) -> None:
        """Show one streamed update (already rendered as text)."""
        if self._live:
            lines = [line for line in text.splitlines() if line.strip()]
            self._text = escape_control(lines[-1]) if lines else ""
            self._draw()
            return
        for line in text.splitlines() or [""]:
            self._stream.write(f"... {escape_control(line)}\n")
        self._stream.flush()

    def tick(self, elapsed: float) -> None:
        """Advance the spinner (called a few times a second while the call runs)."""
        if not self._live:
            return
        self._frame += 1
        self._elapsed = elapsed
        self._draw()

    def message(self, text: str) -> None:
        """Print a line of its own (above the live line, which is redrawn next tick)."""
        self.clear()
        self._stream.write(text + "\n")
        self._stream.flush()

    def clear(self) -> None:
        """Erase the live line, if one is drawn."""
        if self._live and self._drawn:
            self._stream.write("\r\x1b[2K")
            self._stream.flush()
            self._drawn = False

    def _draw(self) -> None:
        width = max(20, shutil.get_terminal_size((80, 24)).columns - 1)
        spinner = self._frames[self._frame % len(self._frames)]
        line = f"{spinner} {self._elapsed:4.1f}s {self._text}"
        if len(line) > width:
            line = line[: width - 1] + "…"
        self._stream.write("\r\x1b[2K" + line)
        self._stream.flush()
        self._drawn = True
