"""An OpenAI Agents SDK agent using the example tool pack in process (offline: a scripted model)."""

import anyio
from agents import Agent, Runner, set_tracing_disabled
from agents.testing import ScriptedModel, assistant_message, function_call

from customtools import discover_and_load
from customtools.integrations.openai_agents import function_tools

set_tracing_disabled(True)  # offline: no traces are sent


async def main() -> None:
    tools = function_tools(await discover_and_load(["examples/tools"]))
    model = ScriptedModel(  # stands in for an LLM: call count_words once, then answer
        [
            [function_call("count_words", {"text": "the cat and the hat"}, call_id="c1")],
            [assistant_message("done")],
        ]
    )
    result = await Runner.run(Agent(name="counter", model=model, tools=tools), "How many words?")
    print(f"counted: {result.new_items[-2].output}")


anyio.run(main)
