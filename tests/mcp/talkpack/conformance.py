"""Fixture pack: the tools the MCP conformance suite's talk-back scenarios call.

Written once against the talk-back API (``ctx.ask``, ``ctx.sample``, ``ctx.log``); served by
``customtools serve`` in both protocol eras (see ``scripts/conformance_talkback.sh``).
"""

from __future__ import annotations

import anyio

from customtools import ToolContext, tool

USER = {
    "type": "object",
    "properties": {
        "username": {"type": "string", "description": "Your user name"},
        "email": {"type": "string", "description": "Your e-mail address"},
    },
    "required": ["username", "email"],
}

DEFAULTS = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "default": "John Doe"},
        "age": {"type": "integer", "default": 30},
        "score": {"type": "number", "default": 95.5},
        "status": {
            "type": "string",
            "enum": ["active", "inactive", "pending"],
            "default": "active",
        },
        "verified": {"type": "boolean", "default": True},
    },
}

ENUMS = {
    "type": "object",
    "properties": {
        "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
        "titledSingle": {
            "type": "string",
            "oneOf": [
                {"const": "value1", "title": "First Option"},
                {"const": "value2", "title": "Second Option"},
                {"const": "value3", "title": "Third Option"},
            ],
        },
        "legacyEnum": {
            "type": "string",
            "enum": ["opt1", "opt2", "opt3"],
            "enumNames": ["Option One", "Option Two", "Option Three"],
        },
        "untitledMulti": {
            "type": "array",
            "items": {"type": "string", "enum": ["option1", "option2", "option3"]},
        },
        "titledMulti": {
            "type": "array",
            "items": {
                "anyOf": [
                    {"const": "value1", "title": "First Choice"},
                    {"const": "value2", "title": "Second Choice"},
                    {"const": "value3", "title": "Third Choice"},
                ]
            },
        },
    },
}


@tool
async def test_tool_with_logging(ctx: ToolContext) -> str:
    """Send three info log messages, about 50 ms apart."""
    for line in ("Tool execution started", "Tool processing data", "Tool execution completed"):
        ctx.log("info", line)
        await anyio.sleep(0.05)
    return "Logging test completed"


@tool
async def test_sampling(prompt: str, ctx: ToolContext) -> str:
    """Ask the client's model.

    Args:
        prompt: The prompt to send.
    """
    result = await ctx.sample(prompt, max_tokens=100)
    return f"LLM response: {result.text}"


@tool
async def test_elicitation(message: str, ctx: ToolContext) -> str:
    """Ask the user for a user name and an e-mail address.

    Args:
        message: The question shown to the user.
    """
    answer = await ctx.ask(message, USER)
    return f"User response: <{answer.action}, {dict(answer.values)}>"


@tool
async def test_elicitation_sep1034_defaults(ctx: ToolContext) -> str:
    """Ask with a default for every field (SEP-1034)."""
    answer = await ctx.ask("Please review your details", DEFAULTS)
    return f"Elicitation result: <{answer.action}, {dict(answer.values)}>"


@tool
async def test_elicitation_sep1330_enums(ctx: ToolContext) -> str:
    """Ask with every enum form (SEP-1330)."""
    answer = await ctx.ask("Please pick some options", ENUMS)
    return f"Elicitation result: <{answer.action}, {dict(answer.values)}>"


@tool
async def test_ask_or_explain(ctx: ToolContext) -> str:
    """Ask, and say so when the client cannot answer (a typed outcome, not a crash)."""
    if not ctx.can_ask:
        return "cannot ask: the client does not support elicitation"
    answer = await ctx.ask(
        "Proceed?", {"type": "object", "properties": {"ok": {"type": "boolean"}}}
    )
    return answer.action
