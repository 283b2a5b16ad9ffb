"""An async generator as a tool: each ``yield`` streams to the host as a partial result.

The last value yielded is also the final result. The ``signal`` parameter is filled in by the
adapter (the model never sees it); the loop stops as soon as the call is aborted.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated

import anyio

from customtools import AbortSignal, tool


@tool(label="Ticker")
async def ticker(
    count: Annotated[int, {"minimum": 1, "maximum": 50}],
    signal: AbortSignal,
    interval: Annotated[float, {"minimum": 0, "maximum": 2}] = 0.1,
) -> AsyncIterator[str]:
    """Tick a number of times, reporting each tick as it happens.

    Args:
        count: How many ticks.
        interval: Seconds between ticks.
    """
    for index in range(1, count + 1):
        signal.raise_if_aborted()
        yield f"tick {index}/{count}"
        await anyio.sleep(interval)
