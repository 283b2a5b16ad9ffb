"""Micro-benchmark of the validation engine. Run by hand: ``python benchmarks/bench_validation.py``.

Times ``CompiledValidator.validate`` on the 4-property schema of the performance anchors,
valid and invalid (all 4 violations collected), against both engines, plus ``check_schema``
(cached and uncached) and ``parse_arguments``. Prints the best and the median of many short timed loops.
"""

from __future__ import annotations

import argparse
import copy
import json
import statistics
import time
import timeit
from collections.abc import Callable
from typing import Any

from _harness import INVALID, SCHEMA, VALID, Table, emit, fmt_time, run_main

from customtools._errors import ToolArgumentsError
from customtools._validation import check_schema, compile_validator, parse_arguments
from customtools._validation._engines import default_engine
from customtools._validation._schema import _INFO_CACHE

COERCIBLE = {"path": "src/pkg/main.py", "limit": "10", "tags": '["a","b"]', "mode": "read"}
WITH_DEFAULTS = copy.deepcopy(SCHEMA)
WITH_DEFAULTS["properties"]["tags"]["default"] = []


def measure_chunks(func: Callable[[], object], chunks: int) -> tuple[float, float]:
    """(best, median) µs per call over ``chunks`` short timed loops of about 2 ms each.

    Short loops and the best chunk keep the figure meaningful on a shared, busy machine;
    the median shows how much other load there was.
    """
    timer = timeit.Timer(func)
    number = 1
    while timer.timeit(number) < 0.002:
        number *= 2
    samples = [t / number * 1e6 for t in timer.repeat(repeat=chunks, number=number)]
    return min(samples), statistics.median(samples)


def expect_error(validate: Callable[[Any], object], value: Any) -> Callable[[], None]:
    def run() -> None:
        try:
            validate(value)
        except ToolArgumentsError:
            return
        raise AssertionError("expected invalid")

    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=200, help="timed loops per case")
    chunks = parser.parse_args().chunks

    def measure(func: Callable[[], object]) -> tuple[float, float]:
        return measure_chunks(func, chunks)

    rows: list[tuple[str, tuple[float, float]]] = []
    for engine in ("rust", "reference"):
        validator = compile_validator(SCHEMA, tool_name="read_file", engine=engine)
        assert validator.validate(VALID)[0] is VALID
        rows.append((f"{engine}: validate(valid)", measure(lambda v=validator: v.validate(VALID))))
        rows.append(
            (
                f"{engine}: validate(invalid, 4 violations)",
                measure(expect_error(validator.validate, INVALID)),
            )
        )
        rows.append(
            (
                f"{engine}: validate(coercible: 2 coercions)",
                measure(lambda v=validator: v.validate(COERCIBLE)),
            )
        )
    with_defaults = compile_validator(WITH_DEFAULTS, tool_name="read_file")
    rows.append(
        (
            "rust: validate(valid, schema with a default, all given)",
            measure(lambda: with_defaults.validate(VALID)),
        )
    )
    import jsonschema_rs

    raw = jsonschema_rs.validator_for(SCHEMA)
    rows.append(("baseline: jsonschema_rs is_valid(valid)", measure(lambda: raw.is_valid(VALID))))
    rows.append(
        (
            "baseline: jsonschema_rs iter_errors(invalid), 4 messages+paths",
            measure(lambda: [(e.message, e.instance_path) for e in raw.iter_errors(INVALID)]),
        )
    )

    def uncached() -> None:
        _INFO_CACHE.clear()
        default_engine()._cache.clear()
        check_schema(SCHEMA)

    rows.append(("check_schema (cached)", measure(lambda: check_schema(SCHEMA))))
    rows.append(("check_schema (uncached: analyse + compile)", measure(uncached)))
    text = json.dumps(VALID)
    rows.append(("parse_arguments(valid text)", measure(lambda: parse_arguments(text))))
    start = time.perf_counter()
    for index in range(1000):
        schema = copy.deepcopy(SCHEMA)
        schema["description"] = f"tool {index}"
        check_schema(schema)
    each = (time.perf_counter() - start) * 1e3
    rows.append(("check_schema, 1,000 distinct schemas (each, one pass)", (each, each)))
    table = Table(
        ["case", "best", "median"], note=f"Best and median of {chunks} timed loops of about 2 ms."
    )
    for name, (best, median) in rows:
        table.row(name, fmt_time(best / 1e6), fmt_time(median / 1e6))
    emit(table)


if __name__ == "__main__":
    run_main(main)
