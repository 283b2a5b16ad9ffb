"""Runs a program (no shell) through ``api.exec``; aborting the call kills its process tree.

The program gets ``api.exec``'s minimal environment (``PATH``, ``HOME``, the locale, ...), not
the host's: the model picks the command, so the host's API keys must not be visible to it.
"""

from __future__ import annotations

from typing import Any

from customtools import CustomTool, ToolResult


def factory(api: Any) -> CustomTool:
    Type = api.typebox

    async def execute(tool_call_id: str, params: Any, on_update: Any, ctx: Any, signal: Any) -> Any:
        on_update(ToolResult.from_text(f"running {params['command']} ..."))
        result = await api.exec(
            params["command"], params["args"], signal=signal, timeout=params["timeout"]
        )
        if result.killed:
            reason = "timed out" if result.timed_out else "was cancelled"
            raise RuntimeError(f"{params['command']} {reason}")
        text = result.stdout if result.stdout else result.stderr
        return ToolResult.from_text(
            text or f"(no output, exit code {result.code})",
            details={"code": result.code, "truncated": result.stdout_truncated},
            is_error=result.code != 0,
        )

    return CustomTool(
        name="run_command",
        label="Run command",
        description="Runs a program with arguments (no shell) in the working directory and "
        "returns its output. Use for quick, read-only commands such as 'ls' or 'git status'.",
        parameters=Type.Object(
            {
                "command": Type.String(minLength=1, description="program to run, e.g. 'ls'"),
                "args": Type.Optional(Type.Array(Type.String(), default=[])),
                "timeout": Type.Optional(Type.Number(minimum=0.1, maximum=600, default=30)),
            }
        ),
        execute=execute,
    )
