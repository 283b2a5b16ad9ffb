"""The main job: discover the example tool pack, list it, and run the streaming tool.

Run with ``make demo`` (which creates ``.venv`` and installs the project first).
"""

from __future__ import annotations

import sys
from pathlib import Path

import anyio

from customtools import AbortController, CustomToolAdapter, ToolResult, discover_and_load

TOOLS = Path(__file__).resolve().parent / "tools"


async def main() -> int:
    # Only the example pack: a temporary HOME keeps the user's own tool dirs out of the demo.
    result = await discover_and_load([TOOLS], cwd=TOOLS.parent, entry_points=False, home=TOOLS)
    print(f"loaded {len(result.tools)} tools from {TOOLS}:")
    for loaded in result.tools:
        print(f"  {loaded.tool.name:14} {loaded.tool.description}")
    for meta in result.metadata:
        print(f"  {meta.name:14} (metadata only: {Path(meta.path).name})")
    for error in result.errors:
        print(f"  error: {error}", file=sys.stderr)

    countdown = result.get("countdown")
    if countdown is None:
        print("the countdown tool did not load", file=sys.stderr)
        return 1
    adapter = CustomToolAdapter(countdown.tool, timeout=30)

    def show(update: ToolResult) -> None:
        print(f"  update: {update.text}   details={update.details}")

    print("\nrunning countdown {steps: 4, interval: 0.3} with streamed updates:")
    final = await adapter.execute(
        "demo-1", {"steps": 4, "interval": 0.3}, signal=AbortController().signal, on_update=show
    )
    print(f"  result: {final.text}   is_error={final.is_error}")
    return 1 if final.is_error or result.errors else 0


if __name__ == "__main__":
    sys.exit(anyio.run(main))
