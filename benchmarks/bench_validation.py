"""Micro-benchmark of the validation engine. Run by hand: ``python benchmarks/bench_validation.py``.

Times ``CompiledValidator.validate`` on the 4-property schema of the performance anchors,
valid and invalid (all 4 violations collected), against both engines, plus ``check_schema``
(cached and uncached) and ``parse_arguments``. Prints medians of 9 repeats in microseconds.
"""

from __future__ import annotations

import copy
import json
import statistics
import time
import timeit
from collections.abc import Callable
from typing import Any

from _harness import INVALID, SCHEMA, VALID

from customtools._errors import ToolArgumentsError
from customtools._validation import check_schema, compile_validator, parse_arguments
from customtools._validation._engines import default_engine
from customtools._validation._schema import _INFO_CACHE

COERCIBLE = {"path": "src/pkg/main.py", "limit": "10", "tags": '["a","b"]', "mode": "read"}
WITH_DEFAULTS = copy.deepcopy(SCHEMA)
WITH_DEFAULTS["properties"]["tags"]["default"] = []


def measure(func: Callable[[], object], chunks: int = 200) -> tuple[float, float]:
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
    rows.append(("check_schema x 1,000 distinct schemas (µs each, one pass)", (each, each)))
    width = max(len(name) for name, _ in rows)
    print(f"{'case':<{width}}  {'best µs':>9}  {'median µs':>9}")
    for name, (best, median) in rows:
        print(f"{name:<{width}}  {best:9.2f}  {median:9.2f}")


if __name__ == "__main__":
    main()
