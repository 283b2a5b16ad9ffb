"""A tool that talks back: it asks the user, asks the host's model and logs (docs/authoring.md)."""

from __future__ import annotations

from customtools import ToolContext, Type, tool
from customtools.talkback import TalkBackError

CLEANUP = Type.Object(
    {
        "keep_days": Type.Optional(Type.Integer(minimum=0, default=30)),
        "mode": Type.Union([Type.Literal("trash"), Type.Literal("delete")]),
    }
)


@tool
async def cleanup(folder: str, ctx: ToolContext) -> str:
    """Clean up old files in a folder, after asking how.

    Args:
        folder: The folder to clean.
    """
    ctx.log("info", "cleanup asked", folder=folder)
    try:
        answer = await ctx.ask(f"How should {folder} be cleaned?", CLEANUP)
    except TalkBackError as exc:  # nobody can answer: say so instead of guessing
        return f"not cleaned: {exc.code}"
    if not answer.accepted:
        return f"not cleaned: the user chose {answer.action}"
    summary = await ctx.sample(
        f"In five words, describe removing files older than {answer.values['keep_days']} days",
        max_tokens=20,
    )
    return f"{answer.values['mode']} after {answer.values['keep_days']} days: {summary.text}"
