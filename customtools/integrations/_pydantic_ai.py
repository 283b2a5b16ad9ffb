"""The pydantic-ai adapter (public home: ``customtools.integrations.pydantic_ai``)."""

from __future__ import annotations

import base64
import dataclasses
from collections.abc import Callable
from typing import Any

import pydantic_core
from pydantic_ai import BinaryImage, ToolReturn
from pydantic_ai.exceptions import ApprovalRequired, ModelRetry, ToolFailed
from pydantic_ai.messages import CustomEvent
from pydantic_ai.tools import RunContext, ToolDefinition
from pydantic_ai.toolsets import AbstractToolset, ToolsetTool

from customtools._approval import ApprovalRequest
from customtools._content import ToolResult
from customtools._context import ToolContext
from customtools._registry import ToolRegistry
from customtools.integrations._call import (
    HostUpdate,
    as_registry,
    host_sink,
    images,
    is_argument_error,
    run_call,
    strict_fits,
)

__all__ = ["CustomToolUpdate", "CustomToolset"]

# The model's JSON passes through as is: the adapter validates it with customtools' messages.
_PASS_THROUGH = pydantic_core.SchemaValidator(pydantic_core.core_schema.any_schema())


@dataclasses.dataclass(kw_only=True)
class CustomToolUpdate(CustomEvent, name="customtools_update"):
    """A partial result of a running customtools tool, in the run's event stream.

    ``tool_call_id`` and ``tool_name`` are stamped by pydantic-ai.

    Attributes:
        text: the partial result's text.
        result: the partial :class:`~customtools.ToolResult` in its wire form.
    """

    text: str = ""
    result: dict[str, Any] = dataclasses.field(default_factory=dict)


ContextArg = ToolContext | Callable[[RunContext[Any]], ToolContext] | None


class CustomToolset(AbstractToolset[Any]):
    """A pydantic-ai toolset running customtools tools through their kept adapters.

    Args:
        tools: a :class:`~customtools.ToolRegistry`, a :class:`~customtools.LoadResult`, or
            tools and ``@tool`` functions.
        id: the toolset's id (needed for durable execution).
        max_retries: retries per tool; ``None`` takes the agent's.
        context: the :class:`~customtools.ToolContext` calls get, or a function of the run's
            ``RunContext`` returning one.
        on_update: also called with ``(tool_name, tool_call_id, partial)`` for every partial
            result (besides the event stream).
        **adapter_options: options for each tool's adapter (``timeout``, ...) when ``tools``
            is not a registry already.
    """

    def __init__(
        self,
        tools: Any,
        *,
        id: str | None = None,  # pydantic-ai's own name for it
        max_retries: int | None = None,
        context: ContextArg = None,
        on_update: HostUpdate | None = None,
        **adapter_options: Any,
    ) -> None:
        self.registry: ToolRegistry = as_registry(tools, adapter_options)
        self._id = id
        self._max_retries = max_retries
        self._context = context
        self._on_update = on_update
        # Definitions follow the registry (a host may add or remove tools between runs).
        self._definitions: dict[str, tuple[Any, ToolDefinition]] = {}

    @property
    def id(self) -> str | None:
        """The toolset's id, if one was given."""
        return self._id

    def __repr__(self) -> str:
        return f"<CustomToolset {', '.join(self.registry.names) or 'no tools'}>"

    async def get_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]:
        """Every tool of the registry, with its declared schema."""
        retries = self._max_retries if self._max_retries is not None else ctx.max_retries
        return {
            tool.name: ToolsetTool(
                toolset=self,
                tool_def=self._definition(tool),
                max_retries=retries,
                args_validator=_PASS_THROUGH,
            )
            for tool in self.registry
        }

    def _definition(self, tool: Any) -> ToolDefinition:
        kept = self._definitions.get(tool.name)
        if kept is not None and kept[0] is tool:
            return kept[1]
        definition = ToolDefinition(
            name=tool.name,
            parameters_json_schema=dict(tool.parameters),
            description=tool.description or None,
            strict=True if strict_fits(tool) else None,
            metadata=dict(tool.meta) if tool.meta else None,
        )
        self._definitions[tool.name] = (tool, definition)
        return definition

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: ToolsetTool[Any]
    ) -> Any:
        """Run one call; see the module docstring for what the model gets back."""
        entry = self.registry.entry(name)
        context = self._context
        tool_ctx = context(ctx) if callable(context) else context
        approved = ctx.tool_call_approved

        async def decide(request: ApprovalRequest) -> bool:
            if approved:
                return True
            raise ApprovalRequired(
                metadata={"tool": request.tool.name, "arguments": dict(request.arguments)}
            )

        async def emit(partial: ToolResult) -> None:
            await ctx.emit(CustomToolUpdate(text=partial.text, result=partial.to_dict()))

        call_id = ctx.tool_call_id or f"pydantic-ai-{name}"
        result = await run_call(
            entry.adapter,
            call_id,
            tool_args,
            ctx=tool_ctx,
            on_update=host_sink(self._on_update, name, call_id),
            decide=decide,
            emit=emit,
        )
        return _to_return(result, structured=entry.tool.output_schema is not None)


def _to_return(result: ToolResult, *, structured: bool) -> Any:
    if result.is_error:
        text = result.text or "the tool failed without a message"
        if is_argument_error(result):
            raise ModelRetry(text)
        raise ToolFailed(text)
    value: Any = result.text
    if structured and result.structured_content is not None:
        value = result.structured_content
    pictures = [
        BinaryImage(data=base64.b64decode(block.data), media_type=block.mime_type)
        for block in images(result)
    ]
    if not pictures and not result.details:
        return value
    return ToolReturn(
        return_value=value,
        content=pictures or None,
        metadata=dict(result.details) if result.details else None,
    )
