"""customtools tools as OpenAI Agents SDK function tools: :func:`function_tools`.

::

    from agents import Agent, Runner
    from customtools import discover_and_load
    from customtools.integrations.openai_agents import function_tools

    agent = Agent(name="assistant", tools=function_tools(await discover_and_load([], cwd=".")))

Requires the ``openai-agents`` extra. What maps and what does not: ``docs/integrations.md``.
"""

from __future__ import annotations

from customtools._public import rehome as _rehome
from customtools.integrations._openai_agents import function_tools

__all__ = ["function_tools"]

_rehome(globals(), __name__, __all__)
