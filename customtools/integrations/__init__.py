"""Native adapters for agent frameworks, one optional extra each (see docs/integrations.md).

- ``customtools.integrations.pydantic_ai``: a pydantic-ai toolset (extra ``pydantic-ai``);
- ``customtools.integrations.langchain``: LangChain ``BaseTool`` objects for LangGraph's
  agents (extra ``langchain``);
- ``customtools.integrations.openai_agents``: OpenAI Agents SDK ``FunctionTool`` objects
  (extra ``openai-agents``).

This package imports no framework: each submodule imports its own when it is imported.
"""

from __future__ import annotations

__all__: list[str] = []
