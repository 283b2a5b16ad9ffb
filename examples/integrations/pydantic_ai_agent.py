"""A pydantic-ai agent using the example tool pack in process (offline: a scripted model)."""

import anyio
from pydantic_ai import Agent
from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import FunctionModel

from customtools import discover_and_load
from customtools.integrations.pydantic_ai import CustomToolset


def model(messages, info):  # stands in for an LLM: call count_words once, then answer
    if len(messages) == 1:
        args = {"text": "the cat and the hat"}
        return ModelResponse(parts=[ToolCallPart("count_words", args, tool_call_id="c1")])
    [returned] = [p for p in messages[-1].parts if isinstance(p, ToolReturnPart)]
    return ModelResponse(parts=[TextPart(f"counted: {returned.content}")])


async def main() -> None:
    tools = await discover_and_load(["examples/tools"])
    agent = Agent(FunctionModel(model), toolsets=[CustomToolset(tools)])
    result = await agent.run("How many words?")
    print(result.output)


anyio.run(main)
