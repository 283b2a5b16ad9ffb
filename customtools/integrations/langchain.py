"""customtools tools as LangChain tools for LangGraph: :func:`langchain_tools`.

::

    from langgraph.prebuilt import ToolNode
    from customtools import discover_and_load
    from customtools.integrations.langchain import langchain_tools

    tools = langchain_tools(await discover_and_load([], cwd="."))
    model = chat_model.bind_tools(tools)  # and ToolNode(tools) in the graph

Requires the ``langchain`` extra (``langchain-core`` and ``langgraph``). What maps and what
does not: ``docs/integrations.md``.
"""

from __future__ import annotations

from customtools._public import rehome as _rehome
from customtools.integrations._langchain import UPDATE_EVENT, CustomToolsTool, langchain_tools

__all__ = ["UPDATE_EVENT", "CustomToolsTool", "langchain_tools"]

_rehome(globals(), __name__, __all__)
