"""Showing tool calls and results to people: render hooks with fallbacks, and themes.

:func:`render_call` and :func:`render_result` run a tool's own ``render_call`` /
``render_result`` hooks and fall back to a plain rendering when a hook is missing or fails.
See ``docs/session-and-rendering.md``.
"""

from __future__ import annotations

from customtools._public import rehome as _rehome
from customtools._render import PLAIN_THEME, RenderOptions, Theme, render_call, render_result

__all__ = ["PLAIN_THEME", "RenderOptions", "Theme", "render_call", "render_result"]

_rehome(globals(), __name__, __all__)
