"""Typed-function tools: call overhead against a hand-written tool, and schema derivation cost.

Targets (issue: Python-native authoring):
- calling a ``@tool`` function through the adapter costs <= 1.2x the same tool written with
  ``Type`` and ``execute``, measured in the same run;
- deriving the schema of a 10-parameter function takes <= 1 ms;
- ``import customtools`` does not move (see bench_adapter.py's import figure).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Annotated, Any, Literal

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import (
    VALID,
    Case,
    cases_table,
    compile_case,
    emit,
    fmt_time,
    measure,
    ratio,
    run_main,
)

from customtools import CustomTool, CustomToolAdapter, Type, tool


async def read_file(
    path: Annotated[str, {"pattern": "^[A-Za-z0-9_./-]+$", "minLength": 1}],
    limit: Annotated[int, {"minimum": 1}],
    mode: Literal["read", "write", "append"],
    tags: list[str] | None = None,
) -> str:
    """Read a file."""
    return "ok"


async def execute(tool_call_id: str, params: Any, on_update: Any, ctx: Any, signal: Any) -> str:
    return "ok"


HAND_WRITTEN = CustomTool(
    name="read_file",
    description="Read a file.",
    parameters=Type.Object(
        {
            "path": Type.String(pattern="^[A-Za-z0-9_./-]+$", min_length=1),
            "limit": Type.Integer(minimum=1),
            "mode": Type.Union(
                [Type.Literal("read"), Type.Literal("write"), Type.Literal("append")]
            ),
            # the same contract as `tags: list[str] | None = None`: null is accepted too
            "tags": Type.Optional(Type.Union([Type.Array(Type.String()), Type.Null()])),
        }
    ),
    execute=execute,
)


def ten_parameters(
    a: str,
    b: int,
    c: float = 1.0,
    d: bool = False,
    e: list[str] | None = None,
    f: Literal["x", "y"] = "x",
    g: dict[str, int] | None = None,
    h: tuple[int, int] = (0, 0),
    i: Annotated[int, {"minimum": 0}] = 0,
    j: Annotated[str, "free text"] = "",
) -> str:
    """Ten parameters.

    Args:
        a: first.
        b: second.
    """
    return "ok"


def derivation_time(repeats: int = 200) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        tool(ten_parameters)
        best = min(best, time.perf_counter() - start)
    return best


async def main_async(repeats: int) -> None:
    decorated = CustomToolAdapter(tool(read_file))
    hand = CustomToolAdapter(HAND_WRITTEN)
    for adapter in (decorated, hand):
        result = await adapter.execute("c", VALID)
        assert not result.is_error and result.text == "ok", result
    ns = {"decorated": decorated, "hand": hand, "VALID": VALID}
    cases = [
        Case("hand-written `Type` + `execute`", compile_case('await hand.execute("c", VALID)', ns)),
        Case("`@tool` function", compile_case('await decorated.execute("c", VALID)', ns)),
    ]
    await measure(cases, repeats=repeats)
    table = cases_table(
        cases, baseline=cases[0], note=f"Best and median of {repeats} round-robin repeats."
    )
    value = cases[1].best / cases[0].best
    table.target("`@tool` call ≤ 1.2× hand-written (best)", ratio(value), value <= 1.2)
    derive = derivation_time()
    table.target(
        "schema derivation, 10-parameter function ≤ 1 ms", fmt_time(derive), derive <= 1e-3
    )
    emit(table)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    anyio.run(main_async, parser.parse_args().repeats)


if __name__ == "__main__":
    run_main(main)
