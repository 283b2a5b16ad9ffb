"""Approval before a tool runs: who must be asked, and asking.

A tool declares ``requires_approval`` (``True``, or a function of the validated arguments,
for example "only for paths outside the project"); when it says nothing, an explicit MCP
``destructiveHint: true`` annotation (without ``readOnlyHint: true``) asks for approval. The
adapter asks the host's approver after the arguments are valid and before ``execute`` runs.
Every way of not getting a clear yes is an error result the model can read, never a silent
skip: a denial, no answer within the approval timeout, an approver that raises, or no
approver at all for a tool that needs one (fail closed).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeAlias

__all__ = [
    "DEFAULT_APPROVAL_TIMEOUT",
    "ApprovalRequest",
    "Approver",
    "approval_required",
]

DEFAULT_APPROVAL_TIMEOUT = 300.0
"""Seconds the adapter waits for an approver's answer before it counts as a denial."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ApprovalRequest:
    """What an approver is asked about: one call of one tool, with its validated arguments.

    Args:
        tool: the tool (its name, label, description and annotations are for the prompt).
        tool_call_id: the model's id for the call.
        arguments: the validated (and repaired) arguments the tool would receive.
    """

    tool: Any
    tool_call_id: str
    arguments: Mapping[str, Any]


Approver: TypeAlias = Callable[[ApprovalRequest], Awaitable[bool]]
"""``async def approver(request) -> bool``: exactly ``True`` lets the call run."""


def approval_required(tool: Any, arguments: Mapping[str, Any]) -> bool:
    """Whether this call of ``tool`` with ``arguments`` needs the host's approval.

    Raises:
        Exception: whatever a ``requires_approval`` function raises (the adapter turns it into
            an error result: it fails closed).
    """
    rule = tool.requires_approval
    if rule is None:
        hints = tool.annotations or {}
        return hints.get("destructiveHint") is True and hints.get("readOnlyHint") is not True
    if callable(rule):
        return bool(rule(arguments))
    return bool(rule)
