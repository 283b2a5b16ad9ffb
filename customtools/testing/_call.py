"""One recorded tool call: :class:`ToolCall`, which :meth:`ToolPack.call
<customtools.testing.ToolPack.call>` makes.

A test calls a tool through the same :class:`~customtools.CustomToolAdapter` a host uses, so
argument validation, defaults, coercions, update ordering, cancellation and error results
behave exactly as in production. What the helpers add is the recording (every update, in
order) and scripted aborts: after the N-th update or after a delay.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from customtools._content import ContentBlock, ToolResult

__all__ = ["ToolCall"]


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
