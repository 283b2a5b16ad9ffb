"""A LangGraph agent using the example tool pack in process (offline: a scripted model)."""

import anyio
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

from customtools import discover_and_load
from customtools.integrations.langchain import langchain_tools

# Stands in for an LLM: call count_words once, then answer.
call = {"name": "count_words", "args": {"text": "the cat and the hat"}, "id": "c1"}
model = GenericFakeChatModel(messages=iter([AIMessage("", tool_calls=[call]), AIMessage("done")]))


async def main() -> None:
    tools = langchain_tools(await discover_and_load(["examples/tools"]))
    graph = StateGraph(MessagesState)
    graph.add_node("model", lambda state: {"messages": [model.invoke(state["messages"])]})
    graph.add_node("tools", ToolNode(tools))
    graph.add_edge(START, "model")
    graph.add_conditional_edges("model", tools_condition)
    graph.add_edge("tools", "model")
    result = await graph.compile().ainvoke({"messages": [("user", "How many words?")]})
    print(f"counted: {result['messages'][-2].content}")


anyio.run(main)
