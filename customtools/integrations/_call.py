"""What every framework adapter does around one call: abort on cancel, approval, updates.

- **Cancellation.** Frameworks cancel the task awaiting a tool (on asyncio a bare
  ``task.cancel()``, which carries nothing that tells it from a tool's own asyncio timeout);
  none passes a signal. Each call gets its own :class:`~customtools.AbortController` and runs
  shielded in a task of its own: when the framework cancels, the signal is aborted first,
  the tool gets a bounded grace to see ``signal.aborted`` and return, then the call is
  cancelled (the cancellation model). A sync tool's thread is never left running, and an
  async tool's cleanup (``finally``) runs with its signal already aborted.
- **Approval.** The adapter decides whether a call needs approval from the *validated*
  arguments. A first pass asks a probe approver that only records the request and says no;
  the tool body does not run. If it was asked, the framework decides (pydantic-ai defers the
  call, LangGraph interrupts, ...) and, on a yes, the call runs again with an approver that
  says yes. A no keeps the first pass's ``approval-denied`` result.
- **Updates.** ``on_update`` is synchronous; a framework channel that must be awaited is fed
  through a memory stream pumped by a task next to the call.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, Final

import anyio

from customtools._abort import AbortController
from customtools._adapter import CustomToolAdapter
from customtools._approval import ApprovalRequest
from customtools._content import ImageContent, TextContent, ToolResult
from customtools._context import ToolContext
from customtools._error_results import Kind
from customtools._registry import ToolRegistry
from customtools._runtime import CALLER_CANCELLED, DEFAULT_GRACE

__all__ = [
    "ADAPTER_APPROVER",
    "CANCELLED_REASON",
    "Decide",
    "HostUpdate",
    "as_registry",
    "host_sink",
    "images",
    "is_argument_error",
    "may_need_approval",
    "run_call",
    "strict_fits",
    "text_only",
]

_log = logging.getLogger("customtools.integrations")

CANCELLED_REASON: Final = CALLER_CANCELLED
"""The reason a tool's signal carries when the framework cancels the call: the adapter's own
reason for a cancelled caller, so sync and async tools see the same one."""

Decide = Callable[[ApprovalRequest], Awaitable[bool]]
"""The framework's answer for a call that needs approval (it may raise to pause the run)."""

ADAPTER_APPROVER: Any = object()
"""``decide=ADAPTER_APPROVER``: leave approval to the adapter's own approver (or fail closed)."""

HostUpdate = Callable[[str, str, ToolResult], None]
"""A host's update callback: ``(tool_name, tool_call_id, partial_result)``."""


def host_sink(
    on_update: HostUpdate | None, tool_name: str, tool_call_id: str
) -> Callable[[ToolResult], None] | None:
    """``on_update`` bound to one call, or ``None``."""
    if on_update is None:
        return None

    def sink(partial: ToolResult) -> None:
        on_update(tool_name, tool_call_id, partial)

    return sink


def as_registry(tools: Any, adapter_options: dict[str, Any]) -> ToolRegistry:
    """A registry for what a host hands an adapter: a registry, a load result, or tools."""
    if isinstance(tools, ToolRegistry):
        if adapter_options:
            raise TypeError(
                "adapter options cannot be applied to an existing ToolRegistry; pass them to"
                " ToolRegistry(...) instead"
            )
        return tools
    registry = ToolRegistry(tools, **adapter_options)
    for conflict in registry.conflicts:  # the framework gets a list: say what was left out
        _log.warning("%s", conflict.error)
    return registry


def may_need_approval(tool: Any) -> bool:
    """Whether some call of ``tool`` could need approval (a rule, or a destructive hint)."""
    if tool.requires_approval is not None:
        return tool.requires_approval is not False
    hints = tool.annotations or {}
    return hints.get("destructiveHint") is True and hints.get("readOnlyHint") is not True


def strict_fits(tool: Any) -> bool:
    """Whether ``tool`` asks for strict mode and its schema meets OpenAI's strict rules."""
    if not tool.strict:
        return False
    from customtools._export import openai_strict_issues

    return not openai_strict_issues(tool.parameters)


def is_argument_error(result: ToolResult) -> bool:
    """Whether an error result says the model's arguments were invalid (the model can fix it)."""
    details = result.details
    return isinstance(details, dict) and details.get("error") == Kind.ARGUMENTS


class _Relay:
    """The sending end of an update relay and the task body that drains it."""

    __slots__ = ("pump", "stream")

    def __init__(self, stream: Any, pump: Callable[[], Awaitable[None]]) -> None:
        self.stream = stream
        self.pump = pump


async def _probe(request: ApprovalRequest, asked: list[ApprovalRequest]) -> bool:
    asked.append(request)
    return False


async def _yes(request: ApprovalRequest) -> bool:
    return True


async def run_call(
    adapter: CustomToolAdapter,
    tool_call_id: str,
    params: Any,
    *,
    ctx: ToolContext | None,
    on_update: Callable[[ToolResult], None] | None = None,
    decide: Decide = ADAPTER_APPROVER,
    emit: Callable[[ToolResult], Awaitable[None]] | None = None,
    grace: float = DEFAULT_GRACE,
) -> ToolResult:
    """Run one call for a framework: see the module docstring.

    Args:
        adapter: the tool's kept adapter.
        tool_call_id: the framework's id for the call.
        params: the model's arguments (validated by the adapter).
        ctx: the tool context for this call.
        on_update: a synchronous update sink (a host callback, a stream writer).
        decide: asked when the call needs approval (by the adapter's rule, on the validated
            arguments); :data:`ADAPTER_APPROVER` (the default) leaves it to the adapter's own
            approver, which refuses when there is none.
        emit: an awaitable update sink (pumped by a task next to the call).
        grace: seconds a cancelled call may take to settle after its signal aborted, before
            it is cancelled.

    Raises:
        the framework's own exceptions from ``decide``, and cancellation (after aborting the
        tool's signal).
    """
    controller = AbortController()
    sink = on_update
    send: Any = None
    if emit is not None:
        stream, receive = anyio.create_memory_object_stream[ToolResult](math.inf)

        def relay(partial: ToolResult) -> None:
            if on_update is not None:
                on_update(partial)
            stream.send_nowait(partial)

        async def pump() -> None:
            async with receive:
                async for partial in receive:
                    try:
                        await emit(partial)
                    except Exception:  # the channel's fault must not fail the call
                        name = adapter.tool.name
                        _log.warning("dropped an update of tool %r", name, exc_info=True)

        sink = relay
        send = _Relay(stream, pump)
    return await _shielded(
        adapter, tool_call_id, params, ctx, sink, decide, controller, send, grace
    )


async def _shielded(
    adapter: CustomToolAdapter,
    tool_call_id: str,
    params: Any,
    ctx: ToolContext | None,
    sink: Callable[[ToolResult], None] | None,
    decide: Decide,
    controller: AbortController,
    send: Any,
    grace: float,
) -> ToolResult:
    """The call runs shielded in a task of its own; a cancel aborts the signal first, waits up
    to ``grace`` for the tool to see it and return, then cancels (the cancellation model): a
    sync tool's thread is never left running, and an async tool's cleanup sees its signal
    aborted."""
    signal = controller.signal
    outcome: list[ToolResult] = []
    raised: list[Exception] = []
    done = anyio.Event()
    inner = anyio.CancelScope(shield=True)

    async def run() -> None:
        with inner:
            try:
                outcome.append(
                    await _gated(adapter, tool_call_id, params, ctx, sink, decide, signal)
                )
            except Exception as exc:  # the framework's own (a pause): re-raised unwrapped
                raised.append(exc)
            finally:
                if send is not None:
                    send.stream.close()
        done.set()

    async with anyio.create_task_group() as group:
        if send is not None:
            group.start_soon(_pump, send.pump)
        group.start_soon(run)
        try:
            await done.wait()
        except anyio.get_cancelled_exc_class():
            controller.abort(CANCELLED_REASON)
            with anyio.CancelScope(shield=True):
                with anyio.move_on_after(grace):
                    await done.wait()
                inner.cancel()
            raise
    if raised:
        raise raised[0]
    return outcome[0]


async def _pump(pump: Callable[[], Awaitable[None]]) -> None:
    await pump()


async def _gated(
    adapter: CustomToolAdapter,
    tool_call_id: str,
    params: Any,
    ctx: ToolContext | None,
    on_update: Callable[[ToolResult], None] | None,
    decide: Decide,
    signal: Any,
) -> ToolResult:
    if decide is ADAPTER_APPROVER:
        return await adapter.execute(
            tool_call_id, params, signal=signal, on_update=on_update, ctx=ctx
        )
    asked: list[ApprovalRequest] = []

    async def probe(request: ApprovalRequest) -> bool:
        return await _probe(request, asked)

    first = await adapter.execute(
        tool_call_id, params, signal=signal, on_update=on_update, ctx=ctx, approver=probe
    )
    if not asked or not await decide(asked[0]):
        return first
    return await adapter.execute(
        tool_call_id, params, signal=signal, on_update=on_update, ctx=ctx, approver=_yes
    )


def images(result: ToolResult) -> Iterable[ImageContent]:
    """The image blocks of ``result``."""
    return (block for block in result.content if isinstance(block, ImageContent))


def text_only(result: ToolResult) -> bool:
    """Whether ``result`` holds nothing but text blocks."""
    return all(isinstance(block, TextContent) for block in result.content)
