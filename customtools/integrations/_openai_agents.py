"""The OpenAI Agents SDK adapter (public home: ``customtools.integrations.openai_agents``)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from agents import FunctionTool, RunContextWrapper, ToolOutputImage, ToolOutputText
from agents.tool_context import ToolContext as AgentsToolContext

from customtools._approval import ApprovalRequest
from customtools._content import ToolResult
from customtools._context import ToolContext
from customtools._registry import RegisteredTool
from customtools.integrations._call import (
    HostUpdate,
    as_registry,
    host_sink,
    images,
    may_need_approval,
    run_call,
    strict_fits,
)

__all__ = ["function_tools"]

ContextArg = ToolContext | Callable[[AgentsToolContext[Any]], ToolContext] | None


def function_tools(
    tools: Any,
    *,
    context: ContextArg = None,
    on_update: HostUpdate | None = None,
    **adapter_options: Any,
) -> list[FunctionTool]:
    """customtools tools as OpenAI Agents SDK ``FunctionTool`` objects.

    ::

        agent = Agent(name="a", tools=function_tools(await discover_and_load([], cwd=".")))

    - ``params_json_schema`` is the tool's ``parameters`` as declared; ``strict_json_schema`` is
      on only for a tool that asks for strict mode and whose schema meets OpenAI's strict
      rules (see :func:`~customtools.export.openai_issues`), so the SDK never rewrites it;
    - customtools validates; invalid arguments, malformed JSON and error results come back to
      the model as tool output carrying customtools' text (never a generic message, never a
      failed run);
    - images are ``ToolOutputImage`` items next to the text;
    - the SDK has no progress channel for function tools: updates go to ``on_update``;
    - cancelling the run (``Runner.run``'s task, or a streamed run's ``cancel()``) aborts the
      tool's signal, sync tools included;
    - a tool that may need approval gets ``needs_approval``: its rule on the arguments as
      customtools validates them (coerced, defaults filled in; invalid arguments need
      approval), so the run stops with an interruption to approve or reject; a call runs
      past its rule only when the SDK recorded it as approved, else it gets an
      ``approval-denied`` result;
    - ``tool_call_id`` is the SDK's; the tool context is ``context`` (or ``context(tool_ctx)``
      of the SDK's ``ToolContext``).

    Args:
        tools: a :class:`~customtools.ToolRegistry`, a :class:`~customtools.LoadResult`, or
            tools and ``@tool`` functions.
        context: the :class:`~customtools.ToolContext` calls get, or a function of the SDK's
            ``ToolContext`` returning one.
        on_update: called with ``(tool_name, tool_call_id, partial)`` for every update.
        **adapter_options: options for each tool's adapter (``timeout``, ...) when ``tools``
            is not a registry already.

    Returns:
        one ``FunctionTool`` per tool, in registry order.
    """
    registry = as_registry(tools, adapter_options)
    return [_function_tool(registry.entry(name), context, on_update) for name in registry.names]


def _function_tool(
    entry: RegisteredTool, context: ContextArg, on_update: HostUpdate | None
) -> FunctionTool:
    tool = entry.tool
    name = tool.name

    async def invoke(tool_ctx: AgentsToolContext[Any], arguments: str) -> Any:
        try:
            params = json.loads(arguments) if arguments else {}
        except ValueError as exc:
            return (
                f"invalid arguments for tool {name!r}: they are not valid JSON ({exc});"
                " send one JSON object"
            )
        call_id = tool_ctx.tool_call_id

        async def decide(request: ApprovalRequest) -> bool:
            # Only what the SDK recorded as approved for this very call runs.
            return tool_ctx.is_tool_approved(name, call_id) is True

        result = await run_call(
            entry.adapter,
            call_id,
            params,
            ctx=context(tool_ctx) if callable(context) else context,
            on_update=host_sink(on_update, name, call_id),
            decide=decide,
        )
        return _output(result)

    needs: Any = False
    if may_need_approval(tool):

        async def needs_approval(
            run_context: RunContextWrapper[Any], params: dict[str, Any], call_id: str
        ) -> bool:
            return entry.adapter.needs_approval(params)

        needs = needs_approval
    return FunctionTool(
        name=name,
        description=tool.description,
        params_json_schema=dict(tool.parameters),
        on_invoke_tool=invoke,
        strict_json_schema=strict_fits(tool),
        needs_approval=needs,
    )


def _output(result: ToolResult) -> Any:
    pictures = list(images(result))
    if not pictures:
        return result.text or ("the tool failed without a message" if result.is_error else "")
    items: list[Any] = [ToolOutputText(text=result.text)] if result.text else []
    items.extend(
        ToolOutputImage(image_url=f"data:{block.mime_type};base64,{block.data}")
        for block in pictures
    )
    return items
