"""The LangChain / LangGraph adapter (public home: ``customtools.integrations.langchain``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import anyio
from langchain_core.callbacks import adispatch_custom_event
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, ToolException
from pydantic import PrivateAttr

from customtools._approval import ApprovalRequest
from customtools._content import ToolResult
from customtools._context import ToolContext
from customtools._registry import RegisteredTool
from customtools.integrations._call import (
    ADAPTER_APPROVER,
    HostUpdate,
    as_registry,
    host_sink,
    images,
    run_call,
)

__all__ = ["UPDATE_EVENT", "CustomToolsTool", "langchain_tools"]

UPDATE_EVENT = "customtools_update"
"""The name of the custom event an update is dispatched as outside a LangGraph graph."""

ContextArg = ToolContext | Callable[[RunnableConfig], ToolContext] | None

_PARAMS = "customtools_params"
_CALL_ID = "customtools_call_id"


def _stream_writer() -> Callable[[Any], None] | None:
    """LangGraph's stream writer when running inside a graph, else ``None``."""
    try:
        from langgraph.config import get_stream_writer

        return get_stream_writer()
    except (ImportError, RuntimeError, KeyError, AttributeError):
        return None


def _approved(answer: Any) -> bool:
    if isinstance(answer, Mapping):
        answer = answer.get("approved", answer.get("type"))
    if isinstance(answer, str):
        return answer.lower() in ("approve", "approved", "yes", "accept")
    return answer is True


class CustomToolsTool(BaseTool):
    """A LangChain tool running one customtools tool through its kept adapter.

    Made by :func:`langchain_tools`; see it for what maps. ``args_schema`` is the tool's
    declared JSON Schema (a dict, so LangChain does not re-validate: customtools does).
    """

    handle_tool_error: bool = True
    response_format: str = "content_and_artifact"  # type: ignore[assignment]
    _entry: RegisteredTool = PrivateAttr()
    _context: Any = PrivateAttr(default=None)
    _on_update: Any = PrivateAttr(default=None)
    _interrupt: bool = PrivateAttr(default=True)

    def _to_args_and_kwargs(
        self, tool_input: str | dict[str, Any], tool_call_id: str | None
    ) -> tuple[tuple[Any, ...], dict[str, Any]]:
        # The arguments go to the adapter as one mapping, with the call's id beside them.
        params = self._parse_input(tool_input, tool_call_id)
        return (), {_PARAMS: params, _CALL_ID: tool_call_id}

    def _run(self, config: RunnableConfig, **kwargs: Any) -> Any:
        """Synchronous use (``tool.invoke``): the call runs on its own event loop."""
        return anyio.run(self._call, kwargs[_PARAMS], kwargs[_CALL_ID], config)

    async def _arun(self, config: RunnableConfig, **kwargs: Any) -> Any:
        return await self._call(kwargs[_PARAMS], kwargs[_CALL_ID], config)

    async def _call(self, params: Any, call_id: str | None, config: RunnableConfig) -> Any:
        entry = self._entry
        name = entry.tool.name
        call_id = call_id or f"langchain-{name}"
        context = self._context
        tool_ctx = context(config) if callable(context) else context
        host = host_sink(self._on_update, name, call_id)
        writer = _stream_writer()
        emit: Any = None
        if writer is not None:
            graph_writer = writer

            def on_update(partial: ToolResult) -> None:
                if host is not None:
                    host(partial)
                graph_writer(
                    {
                        "event": UPDATE_EVENT,
                        "tool": name,
                        "tool_call_id": call_id,
                        "text": partial.text,
                        "result": partial.to_dict(),
                    }
                )

            sink: Callable[[ToolResult], None] | None = on_update
        elif config.get("callbacks"):  # someone listens (astream_events, a handler)
            sink = host

            async def emit(partial: ToolResult) -> None:
                # The tool run's own config comes from the context (the pump task copies it).
                await adispatch_custom_event(
                    UPDATE_EVENT,
                    {"tool": name, "tool_call_id": call_id, "result": partial.to_dict()},
                )

        else:
            sink = host

        decide: Any = ADAPTER_APPROVER
        if self._interrupt and writer is not None:  # inside a LangGraph graph

            async def decide(request: ApprovalRequest) -> bool:
                from langgraph.types import interrupt

                answer = interrupt(
                    {
                        "type": "customtools_approval",
                        "tool": name,
                        "tool_call_id": call_id,
                        "arguments": dict(request.arguments),
                        "description": entry.tool.description,
                    }
                )
                return _approved(answer)

        result = await run_call(
            entry.adapter, call_id, params, ctx=tool_ctx, on_update=sink, decide=decide, emit=emit
        )
        if result.is_error:
            raise ToolException(result.text or "the tool failed without a message")
        return _content(result), result


def _content(result: ToolResult) -> Any:
    pictures = list(images(result))
    if not pictures:
        return result.text
    blocks: list[dict[str, Any]] = [{"type": "text", "text": result.text}] if result.text else []
    blocks.extend(
        {"type": "image", "source_type": "base64", "mime_type": b.mime_type, "data": b.data}
        for b in pictures
    )
    return blocks


def langchain_tools(
    tools: Any,
    *,
    context: ContextArg = None,
    on_update: HostUpdate | None = None,
    interrupt_for_approval: bool = True,
    **adapter_options: Any,
) -> list[CustomToolsTool]:
    """customtools tools as LangChain ``BaseTool`` objects (for LangGraph's ``ToolNode`` and
    prebuilt agents, or any tool-calling chat model).

    ::

        agent = create_react_agent(model, langchain_tools(await discover_and_load([], cwd=".")))

    - ``args_schema`` is the tool's ``parameters`` as declared; customtools validates;
    - an error result (invalid arguments included) is a ``ToolException`` carrying
      customtools' text, which the tool turns into a ``ToolMessage`` with ``status="error"``;
      the artifact of a successful call is the :class:`~customtools.ToolResult` (its
      ``details`` and ``structured_content`` stay off the model's context);
    - updates go to LangGraph's stream writer inside a graph (``stream_mode="custom"``),
      else they are dispatched as ``customtools_update`` custom events (``astream_events``);
      ``on_update`` gets them too;
    - cancelling the run aborts the tool's signal, sync tools included;
    - inside a graph, a call that needs approval calls LangGraph's ``interrupt()`` (resume
      with ``Command(resume=True)`` or ``{"approved": False}``); the tool body runs once, after
      the answer. Outside a graph, approval is the adapter's own ``approver`` (fail closed);
    - ``tool_call_id`` is the model's; the tool context is ``context`` (or
      ``context(config)`` of the call's ``RunnableConfig``).

    Args:
        tools: a :class:`~customtools.ToolRegistry`, a :class:`~customtools.LoadResult`, or
            tools and ``@tool`` functions.
        context: the :class:`~customtools.ToolContext` calls get, or a function of the call's
            ``RunnableConfig`` returning one.
        on_update: called with ``(tool_name, tool_call_id, partial)`` for every update.
        interrupt_for_approval: ask through ``interrupt()`` inside a graph (else always the
            adapter's approver).
        **adapter_options: options for each tool's adapter (``timeout``, ``approver``, ...)
            when ``tools`` is not a registry already.

    Returns:
        one tool per registered customtools tool, in registry order.
    """
    registry = as_registry(tools, adapter_options)
    out: list[CustomToolsTool] = []
    for name in registry.names:
        entry = registry.entry(name)
        converted = CustomToolsTool(
            name=name,
            description=entry.tool.description or entry.tool.label or name,
            args_schema=dict(entry.tool.parameters),
        )
        converted._entry = entry
        converted._context = context
        converted._on_update = on_update
        converted._interrupt = interrupt_for_approval
        out.append(converted)
    return out
