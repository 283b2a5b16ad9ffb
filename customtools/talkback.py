"""Tools that talk back: ask the user for a form, ask the host's model, log with levels.

A tool calls :meth:`ToolContext.ask <customtools.ToolContext.ask>`,
:meth:`~customtools.ToolContext.sample` and :meth:`~customtools.ToolContext.log`; a host
answers through the :class:`InputHandler`, :class:`Sampler` and :class:`LogSink` it puts on
the context. ``customtools serve`` maps them to MCP elicitation, sampling and logging, and
``customtools.mcp.mount`` maps a mounted server's requests back to them. See
``docs/authoring.md`` ("Talking back").
"""

from __future__ import annotations

from customtools._public import rehome as _rehome
from customtools._talkback import (
    DEFAULT_ASK_TIMEOUT,
    DEFAULT_SAMPLE_TIMEOUT,
    LOG_LEVELS,
    InputAnswer,
    InputHandler,
    InputRequest,
    LogLevel,
    LogSink,
    Sampler,
    SampleRequest,
    SampleResult,
    TalkBackError,
    check_form_schema,
)

__all__ = [
    "DEFAULT_ASK_TIMEOUT",
    "DEFAULT_SAMPLE_TIMEOUT",
    "LOG_LEVELS",
    "InputAnswer",
    "InputHandler",
    "InputRequest",
    "LogLevel",
    "LogSink",
    "SampleRequest",
    "SampleResult",
    "Sampler",
    "TalkBackError",
    "check_form_schema",
]

_rehome(globals(), __name__, __all__)
