"""A mounted MCP server's requests to its client, answered by the host (``McpMount``).

Elicitation and sampling go to the talk-back of the call that caused them (:data:`CALLER`, its
:class:`~customtools.ToolContext`: ``input_handler`` or a real ``ui``, ``sampler``), else to the
mount's own :class:`~customtools.talkback.InputHandler` and
:class:`~customtools.talkback.Sampler`; log messages go to the mount's
:class:`~customtools.talkback.LogSink`. Elicitation and sampling are always declared (a call's
context may answer); a request nobody can answer gets an error saying so.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from contextvars import ContextVar
from typing import Any

import anyio
import mcp_types as types

from customtools._talkback import (
    LOG_LEVELS,
    NO_OP_UI,
    InputAnswer,
    InputRequest,
    SampleRequest,
    SampleResult,
    py_level,
    ui_input_handler,
)

__all__ = ["CALLER", "client_callbacks"]

_log = logging.getLogger("customtools.mcp.mount")

CALLER: ContextVar[Any] = ContextVar("customtools_mount_caller", default=None)
"""The :class:`~customtools.ToolContext` of the mounted call running in this context.

Set around each call; a server's question that arrives within the call (the 2026-07-28 era
embeds them in the call's own result, and the SDK answers them in the calling task) sees it.
A handshake-era server's live request arrives on the connection's reader instead, where no
call is current: the mount's own handlers answer it.
"""


def _caller_input(fallback: Any) -> Any:
    ctx = CALLER.get()
    if ctx is not None:
        if ctx.input_handler is not None:
            return ctx.input_handler
        if ctx.has_ui and ctx.ui is not NO_OP_UI:
            return ui_input_handler(ctx.ui)
    return fallback


def _caller_sampler(fallback: Any) -> Any:
    ctx = CALLER.get()
    if ctx is not None and ctx.sampler is not None:
        return ctx.sampler
    return fallback


def _text_of(content: Any) -> str:
    blocks = content if isinstance(content, list) else [content]
    return "".join(str(getattr(block, "text", "")) for block in blocks)


def client_callbacks(
    server: str,
    *,
    input_handler: Any = None,
    sampler: Any = None,
    log_sink: Any = None,
) -> dict[str, Any]:
    """The SDK ``Client`` options that let a mounted server ``server`` ask the host.

    Elicitation and sampling are declared and answered by the calling tool's context
    (:data:`CALLER`) when it can, else by ``input_handler`` / ``sampler``; a request neither
    can answer gets an error naming what is missing. Log messages go to ``log_sink``, else to
    the ``customtools.mcp.server.<name>`` logger. Every answer is bounded in time.
    """
    from customtools._talkback import DEFAULT_ASK_TIMEOUT, DEFAULT_SAMPLE_TIMEOUT

    logger = logging.getLogger(f"customtools.mcp.server.{server}")
    options: dict[str, Any] = {}

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        data = params.data
        if isinstance(data, Mapping):
            message = str(data.get("message", ""))
            extra = {str(k): v for k, v in data.items() if k != "message"}
        else:
            message, extra = (data if isinstance(data, str) else json.dumps(data)), {}
        level = params.level if params.level in LOG_LEVELS else "info"
        if log_sink is None:
            logger.log(py_level(level), "%s %s", message, extra or "")
            return
        try:
            log_sink(level, message, extra)
        except Exception:
            _log.exception("the host's log sink raised on a message of MCP server %r", server)

    options["logging_callback"] = on_log
    if log_sink is not None:
        options["log_level"] = "debug"

    def unavailable(what: str, lacking: str) -> types.ErrorData:
        return types.ErrorData(
            code=types.INVALID_REQUEST,
            message=f"{what} is not available: neither the call nor the host of MCP server"
            f" {server!r} {lacking}",
        )

    async def elicit(_ctx: Any, params: Any) -> Any:
        handler = _caller_input(input_handler)
        if handler is None:
            return unavailable("elicitation", "can show a form")
        if getattr(params, "mode", "form") != "form":
            return types.ElicitResult(action="decline")  # URL mode: not offered
        request = InputRequest(message=params.message, schema=dict(params.requested_schema))
        try:
            with anyio.fail_after(DEFAULT_ASK_TIMEOUT):
                answer = await handler(request)
        except TimeoutError:
            return types.ElicitResult(action="cancel")
        except Exception as exc:
            _log.warning("the host's input handler failed for MCP server %r: %s", server, exc)
            return types.ElicitResult(action="cancel")
        if not isinstance(answer, InputAnswer):
            return types.ElicitResult(action="cancel")
        content = dict(answer.values) if answer.accepted else None
        return types.ElicitResult(action=answer.action, content=content)

    options["elicitation_callback"] = elicit

    async def sample(_ctx: Any, params: Any) -> Any:
        answerer = _caller_sampler(sampler)
        if answerer is None:
            return unavailable("sampling", "has a model to ask")
        request = SampleRequest(
            messages=tuple(
                {"role": m.role, "content": _text_of(m.content)} for m in params.messages
            ),
            max_tokens=params.max_tokens,
            system_prompt=params.system_prompt,
            temperature=params.temperature,
            stop_sequences=tuple(params.stop_sequences or ()),
        )
        try:
            with anyio.fail_after(DEFAULT_SAMPLE_TIMEOUT):
                result = await answerer(request)
            if not isinstance(result, SampleResult):
                raise TypeError(f"the sampler returned {type(result).__name__}")
        except Exception as exc:
            return types.ErrorData(
                code=types.INTERNAL_ERROR,
                message=f"the host could not sample for MCP server {server!r}: {exc}",
            )
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text=result.text),
            model=result.model or "unknown",
            stop_reason=result.stop_reason or "endTurn",
        )

    options["sampling_callback"] = sample
    return options
