"""The README example: define a tool, wrap it in an adapter, call it with streamed updates."""

import anyio

from customtools import CustomTool, CustomToolAdapter, ToolResult, Type


async def greet(tool_call_id, params, on_update, ctx, signal):
    on_update(ToolResult.from_text("thinking..."))
    return f"Hello, {params['name']}!"


tool = CustomTool(
    name="greet",
    description="Greets someone by name.",
    parameters=Type.Object({"name": Type.String(minLength=1)}),
    execute=greet,
)


async def main():
    result = await CustomToolAdapter(tool).execute("call-1", {"name": "Ada"}, on_update=print)
    print(result.text)  # Hello, Ada!


if __name__ == "__main__":
    anyio.run(main)
