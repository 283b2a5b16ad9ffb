"""A tool module written with typed functions (used by docs/authoring.md; tests run it)."""

from __future__ import annotations

import enum
from collections.abc import AsyncIterator
from typing import Annotated, TypedDict

from customtools import AbortSignal, tool


class Unit(enum.Enum):
    BYTES = "bytes"
    LINES = "lines"


class Size(TypedDict):
    path: str
    size: int
    unit: Unit


@tool(annotations={"readOnlyHint": True})
def file_size(path: Annotated[str, {"minLength": 1}], unit: Unit = Unit.BYTES) -> Size:
    """Measure a file.

    Args:
        path: The file to measure.
        unit: Count bytes or lines.
    """
    with open(path, "rb") as handle:
        data = handle.read()
    size = len(data) if unit is Unit.BYTES else data.count(b"\n")
    return {"path": path, "size": size, "unit": unit}


@tool
async def watch(
    times: Annotated[int, {"minimum": 1, "maximum": 10}], signal: AbortSignal
) -> AsyncIterator[str]:
    """Report a few times; each report streams to the host as it happens.

    Args:
        times: How many reports.
    """
    for index in range(times):
        signal.raise_if_aborted()
        yield f"report {index + 1} of {times}"
