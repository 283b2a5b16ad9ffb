"""A complete tool module, as a tool pack would ship it (see docs/authoring.md)."""

from __future__ import annotations

from typing import Any

import anyio
import anyio.lowlevel

from customtools import CustomTool, ToolResult


def factory(api: Any) -> list[CustomTool]:
    Type = api.typebox

    async def word_count(
        tool_call_id: str, params: Any, on_update: Any, ctx: Any, signal: Any
    ) -> ToolResult:
        words = params["text"].split()
        counts: dict[str, int] = {}
        for index, word in enumerate(words, 1):
            signal.raise_if_aborted()  # stop promptly when the host aborts
            key = word.lower() if params["ignore_case"] else word
            counts[key] = counts.get(key, 0) + 1
            if index % params["report_every"] == 0:
                on_update(ToolResult.from_text(f"{index}/{len(words)} words"))
                await anyio.lowlevel.checkpoint()  # a checkpoint: cancellation can land here
        top = sorted(counts.items(), key=lambda item: (-item[1], item[0]))[: params["top"]]
        return ToolResult.from_text(
            ", ".join(f"{word}={n}" for word, n in top),
            details={"total": len(words), "distinct": len(counts)},
        )

    def shout(tool_call_id: str, params: Any, on_update: Any, ctx: Any, signal: Any) -> str:
        if not params["text"].strip():
            raise ValueError("nothing to shout: 'text' is blank")
        return params["text"].upper()

    return [
        CustomTool(
            name="word_count",
            label="Word count",
            description="Counts words in a text and lists the most frequent ones.",
            parameters=Type.Object(
                {
                    "text": Type.String(description="the text to count"),
                    "top": Type.Optional(Type.Integer(minimum=1, default=3)),
                    "ignore_case": Type.Optional(Type.Boolean(default=True)),
                    "report_every": Type.Optional(Type.Integer(minimum=1, default=1000)),
                }
            ),
            execute=word_count,
        ),
        CustomTool(
            name="shout",
            description="Returns the text in capitals.",
            parameters=Type.Object({"text": Type.String()}),
            execute=shout,
        ),
    ]
