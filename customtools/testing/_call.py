"""One recorded tool call: :class:`ToolCall`, and :func:`record_call`, which makes it.

A test calls a tool through the same :class:`~customtools.CustomToolAdapter` a host uses, so
argument validation, defaults, coercions, update ordering, cancellation and error results
behave exactly as in production. What the helpers add is the recording (every update, in
order) and scripted aborts: after the N-th update or after a delay.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import anyio

from customtools._abort import AbortController, AbortSignal
from customtools._adapter import CustomToolAdapter
from customtools._content import ContentBlock, ToolResult
from customtools._context import ToolContext

__all__ = ["ToolCall", "record_call"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCall:
    """What one call of a tool produced: its final result and every update before it.

    The shortcuts (``text``, ``is_error``, ``details``, ...) read the final result, so a
    ``ToolCall`` can be handed to every assertion helper in place of its ``result``.

    Attributes:
        tool_name: the tool that was called.
        tool_call_id: the call id the tool received.
        params: the arguments as given (a copy; before validation, defaults and coercions).
        result: the final result; an error result for invalid arguments, exceptions, aborts
            and timeouts, exactly as a host would get it.
        updates: every partial result the tool streamed, in order, as the host received them.
        aborted_by: why the helper aborted the call (``abort_after_updates`` or
            ``abort_after``), or ``None`` when it did not.
    """

    tool_name: str
    tool_call_id: str
    params: Any = field(default_factory=dict)
    result: ToolResult
    updates: tuple[ToolResult, ...] = ()
    aborted_by: str | None = None

    @property
    def text(self) -> str:
        """The text blocks of the final result, joined by newlines."""
        return self.result.text

    @property
    def is_error(self) -> bool:
        """Whether the final result is an error result."""
        return self.result.is_error

    @property
    def details(self) -> Any:
        """The final result's ``details`` (for the host, never sent to the model)."""
        return self.result.details

    @property
    def content(self) -> tuple[ContentBlock, ...]:
        """The final result's content blocks."""
        return tuple(self.result.content)

    @property
    def structured_content(self) -> Any:
        """The final result's ``structured_content``."""
        return self.result.structured_content

    @property
    def cancelled(self) -> bool:
        """Whether the call was aborted or timed out (the adapter's cancelled result)."""
        details = self.result.details
        return (
            self.result.is_error
            and isinstance(details, Mapping)
            and details.get("cancelled") is True
        )

    @property
    def update_texts(self) -> list[str]:
        """The text of each update, in order."""
        return [update.text for update in self.updates]


async def record_call(
    adapter: CustomToolAdapter,
    params: Any = None,
    *,
    tool_call_id: str = "test-call",
    signal: AbortSignal | None = None,
    timeout: float | None = None,
    ctx: ToolContext | None = None,
    on_update: Callable[[ToolResult], Any] | None = None,
    abort_after_updates: int | None = None,
    abort_after: float | None = None,
    abort_reason: str | None = None,
) -> ToolCall:
    """Run one call through ``adapter`` and record it (see :meth:`ToolPack.call`)."""
    if abort_after_updates is not None and (
        isinstance(abort_after_updates, bool)
        or not isinstance(abort_after_updates, int)
        or abort_after_updates < 1
    ):
        raise ValueError(
            f"abort_after_updates must be an integer >= 1, got {abort_after_updates!r}"
        )
    if abort_after is not None and not abort_after >= 0:
        raise ValueError(f"abort_after must be a number of seconds >= 0, got {abort_after!r}")
    # A mapping is copied so the record keeps what the test passed; anything else (a list, a
    # JSON string) goes to the adapter as given, to test how invalid arguments are reported.
    arguments: Any = (
        {} if params is None else dict(params) if isinstance(params, Mapping) else params
    )
    updates: list[ToolResult] = []
    scripted: AbortController | None = None
    aborted_by: list[str] = []
    if abort_after_updates is not None or abort_after is not None:
        scripted = AbortController()
        signal = scripted.signal if signal is None else AbortSignal.any([signal, scripted.signal])

    def abort(why: str) -> None:
        if scripted is not None and not scripted.signal.aborted:
            aborted_by.append(why)
            scripted.abort(abort_reason if abort_reason is not None else f"aborted by test {why}")

    def record(partial: ToolResult) -> None:
        updates.append(partial)
        # Abort before the test's own callback runs: if that raises, the adapter logs it and
        # goes on, and the scripted abort must still happen.
        if abort_after_updates is not None and len(updates) >= abort_after_updates:
            abort(f"after {abort_after_updates} update(s)")
        if on_update is not None:
            on_update(partial)

    async def run() -> ToolResult:
        return await adapter.execute(
            tool_call_id, arguments, signal=signal, on_update=record, ctx=ctx, timeout=timeout
        )

    if abort_after is None:
        result = await run()
    else:
        delay = abort_after

        async def abort_later() -> None:
            await anyio.sleep(delay)
            abort(f"after {delay:g} s")

        async with anyio.create_task_group() as group:
            group.start_soon(abort_later)
            result = await run()
            group.cancel_scope.cancel()
    return ToolCall(
        tool_name=adapter.name,
        tool_call_id=tool_call_id,
        params=arguments,
        result=result,
        updates=tuple(updates),
        aborted_by=aborted_by[0] if aborted_by else None,
    )
