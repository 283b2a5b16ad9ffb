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


# -- the 2026-07-28 scenarios: input_required (SEP-2322) and per-request capabilities (SEP-2575)

NAME = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
COLOR = {"type": "object", "properties": {"color": {"type": "string"}}, "required": ["color"]}
CONFIRM = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}


@tool
async def test_input_required_result_elicitation(ctx: ToolContext) -> str:
    """Ask for a name under the key ``user_name``."""
    answer = await ctx.ask("What is your name?", NAME, key="user_name")
    return f"Hello, {answer.values['name']}!" if answer.accepted else f"No name: {answer.action}"


@tool
async def test_input_required_result_sampling(ctx: ToolContext) -> str:
    """Ask the client's model a question."""
    result = await ctx.sample("What is the capital of France?", max_tokens=100)
    return f"LLM response: {result.text}"


@tool
async def test_input_required_result_request_state(ctx: ToolContext) -> str:
    """Ask for a confirmation; the answer comes back with the sealed requestState."""
    answer = await ctx.ask("Please confirm", CONFIRM, key="confirm")
    return f"state-ok: {answer.action}"


@tool
async def test_input_required_result_tampered_state(ctx: ToolContext) -> str:
    """Ask for a confirmation (a changed requestState is refused)."""
    answer = await ctx.ask("Please confirm", CONFIRM, key="confirm")
    return f"confirmed: {answer.action}"


@tool
async def test_input_required_result_multi_round(ctx: ToolContext) -> str:
    """Ask two questions, one round each."""
    name = await ctx.ask("Step 1: What is your name?", NAME, key="step1")
    color = await ctx.ask("Step 2: What is your favorite color?", COLOR, key="step2")
    return f"{name.values.get('name')} likes {color.values.get('color')}"


@tool
async def test_input_required_result_capabilities(ctx: ToolContext) -> str:
    """Ask only what the client declared it can answer."""
    asked = (await ctx.ask("Proceed?", CONFIRM)).action if ctx.can_ask else "not asked"
    sampled = (await ctx.sample("Say hi", max_tokens=10)).text if ctx.can_sample else "-"
    return f"{asked}/{sampled}"


@tool
async def test_missing_capability(ctx: ToolContext) -> str:
    """Sample without checking: a client without sampling gets -32021."""
    return (await ctx.sample("Say hi", max_tokens=10)).text


@tool
async def test_streaming_elicitation(ctx: ToolContext) -> str:
    """Ask: in the 2026-07-28 era the question travels in the result, never on the stream."""
    return (await ctx.ask("Continue?", CONFIRM)).action


@tool
async def test_logging_tool(ctx: ToolContext) -> str:
    """Log once: sent only when the request asked for a log level."""
    ctx.log("info", "a log message")
    return "logged"
