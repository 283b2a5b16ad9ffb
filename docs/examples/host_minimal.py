import anyio

from customtools import ToolRegistry, discover_and_load


async def main() -> None:
    result = await discover_and_load(["examples/tools"], builtin_tool_names=["bash", "read"])
    for error in result.errors:
        print(f"tool failed to load: {error.path}: {error.error}")
    for pending in result.pending_trust:  # project code waits until the user trusts it
        print(f"not loaded: {pending.message()}")
    registry = ToolRegistry(result)  # name -> tool, one kept adapter each
    answer = await registry.call("countdown", "call-1", {"steps": 2, "interval": 0})
    print(answer.text)


anyio.run(main)
