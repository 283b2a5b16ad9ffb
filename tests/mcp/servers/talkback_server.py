"""A plain SDK server for the mount talk-back tests (not customtools): it elicits, samples
and logs, in whichever era the client speaks (the SDK's era-independent ``Resolve`` form).

Usage: python talkback_server.py
"""

from __future__ import annotations

import sys
from typing import Annotated

import mcp_types as types
from mcp.server.elicitation import ElicitationResult
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.resolve import Elicit, Resolve, Sample
from pydantic import BaseModel

app = MCPServer("talkback-fixture")


class Person(BaseModel):
    name: str


def ask_name() -> Elicit[Person]:
    return Elicit("What is your name?", Person)


def ask_capital() -> Sample:
    question = types.TextContent(type="text", text="What is the capital of France?")
    return Sample([types.SamplingMessage(role="user", content=question)], max_tokens=50)


@app.tool()
async def greet(person: Annotated[ElicitationResult[Person], Resolve(ask_name)]) -> str:
    """Asks the user's name."""
    if person.action == "accept":
        return f"Hello, {person.data.name}!"
    return f"no name: {person.action}"


@app.tool()
async def capital(answer: Annotated[types.CreateMessageResult, Resolve(ask_capital)]) -> str:
    """Asks the client's model."""
    content = answer.content
    return f"model said: {getattr(content, 'text', '?')}"


@app.tool()
async def chat(ctx: Context) -> str:
    """Logs twice."""
    await ctx.info("starting")
    await ctx.warning("careful")
    return "chatted"


if __name__ == "__main__":
    print("talkback fixture server starting", file=sys.stderr, flush=True)
    app.run()
