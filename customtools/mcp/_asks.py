"""A mounted MCP server's requests to its client, answered by the host (``McpMount``).

Elicitation goes to the host's :class:`~customtools.talkback.InputHandler`, sampling to its
:class:`~customtools.talkback.Sampler`, log messages to its
:class:`~customtools.talkback.LogSink`; only what the host provides is declared to the server.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import Any

import anyio
import mcp_types as types

from customtools._talkback import (
    LOG_LEVELS,
    InputAnswer,
    InputRequest,
    SampleRequest,
    SampleResult,
    py_level,
)

__all__ = ["client_callbacks"]

_log = logging.getLogger("customtools.mcp.mount")


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

    Only what the host provides is declared: without an input handler the client does not
    declare elicitation (a server that asks anyway gets the SDK's "not supported" error),
    likewise sampling. Log messages go to ``log_sink``, else to the
    ``customtools.mcp.server.<name>`` logger. Every answer is bounded in time.
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

    if input_handler is not None:

        async def elicit(_ctx: Any, params: Any) -> Any:
            if getattr(params, "mode", "form") != "form":
                return types.ElicitResult(action="decline")  # URL mode: not offered
            request = InputRequest(message=params.message, schema=dict(params.requested_schema))
            try:
                with anyio.fail_after(DEFAULT_ASK_TIMEOUT):
                    answer = await input_handler(request)
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

    if sampler is not None:

        async def sample(_ctx: Any, params: Any) -> Any:
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
                    result = await sampler(request)
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
