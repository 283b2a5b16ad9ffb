"""customtools tools as a pydantic-ai toolset: :class:`CustomToolset`.

::

    from pydantic_ai import Agent
    from customtools import discover_and_load
    from customtools.integrations.pydantic_ai import CustomToolset

    agent = Agent(model, toolsets=[CustomToolset(await discover_and_load([], cwd="."))])

What maps (details in ``docs/integrations.md``):

- each tool's ``parameters`` is the ``ToolDefinition``'s JSON Schema as declared, ``strict``
  as the tool says; customtools validates (pydantic-ai's validator passes the JSON through);
- an invalid-arguments result is a ``ModelRetry`` carrying customtools' message (it counts
  against the tool's retries), any other error result a ``ToolFailed`` with the result's
  text; ``details`` travel in ``ToolReturn.metadata`` (never sent to the model), images as
  ``BinaryImage`` content;
- updates are :class:`CustomToolUpdate` events in the run's event stream (``ctx.emit``);
- cancelling the run aborts the tool's signal (sync tools included);
- a call that needs approval raises ``ApprovalRequired`` (the run ends with
  ``DeferredToolRequests``); resumed with an approval it runs, with a denial pydantic-ai tells
  the model itself;
- ``tool_call_id`` is the model's; the tool context is ``context`` (or ``context(run_ctx)``).

Requires the ``pydantic-ai`` extra (``pydantic-ai-slim``).
"""

from __future__ import annotations

from customtools._public import rehome as _rehome
from customtools.integrations._pydantic_ai import CustomToolset, CustomToolUpdate

__all__ = ["CustomToolUpdate", "CustomToolset"]

_rehome(globals(), __name__, __all__)
