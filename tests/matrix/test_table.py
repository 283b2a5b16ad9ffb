"""The matrix's table covers every cell, and ``docs/matrix.md`` is what the table gives."""

from __future__ import annotations

import itertools
import os
from pathlib import Path

import pytest

from . import table
from .table import CANNOT, CAPABILITIES, ENTRIES, MODES, cell_id, in_ci, parse_cell_id, status

PAGE = Path(__file__).resolve().parents[2] / "docs" / "matrix.md"


def test_the_table_covers_every_cell() -> None:
    # Every cell of the cross product has a status; every `works` or `gap` cell is one test
    # of test_matrix.py (test_every_cell_that_is_not_cannot_is_a_test).
    product = set(itertools.product(MODES, ENTRIES, CAPABILITIES))
    assert set(table.cells()) == product
    kinds = {status(*cell).kind for cell in product}
    assert kinds <= {"works", "cannot", "gap"}
    assert sum(table.counts().values()) == len(MODES) * len(ENTRIES) * len(CAPABILITIES)
    for cell in product:
        found = status(*cell)
        assert (found.kind == "works") == (found.why == ""), cell


def test_every_cell_that_is_not_cannot_is_a_test() -> None:
    pytest.importorskip("mcp")
    from .test_matrix import _params

    every = {param.id for param in _params(every=True)}
    expected = {cell_id(*cell) for cell in table.cells() if status(*cell).kind != "cannot"}
    assert every == expected
    in_a_ci_run = {param.id for param in _params(every=False)}
    assert in_a_ci_run == {cell_id(*cell) for cell in table.cells() if in_ci(*cell)}
    assert in_a_ci_run < every


def test_a_ci_run_covers_every_pair_and_every_cell_where_cheap() -> None:
    runnable = [cell for cell in table.cells() if status(*cell).kind != "cannot"]
    checked = [cell for cell in runnable if in_ci(*cell)]
    for first, second in ((0, 1), (0, 2), (1, 2)):
        pairs = {(cell[first], cell[second]) for cell in runnable}
        assert pairs == {(cell[first], cell[second]) for cell in checked}, (first, second)
    # Full in-process and at the adapter; a few capabilities per entry point elsewhere.
    assert {cell for cell in runnable if "inprocess" in cell or "adapter" in cell} <= set(checked)
    for mode, entry in itertools.product(MODES, ENTRIES):
        if mode != "inprocess" and entry != "adapter":
            found = [c for c in CAPABILITIES if in_ci(mode, entry, c)]
            assert len(found) == table.PER_ENTRY, (mode, entry, found)
    # Each gap is checked in every mode where it is one: its fix fails a CI run at once.
    gaps = {(cell[0], status(*cell).why) for cell in runnable if status(*cell).kind == "gap"}
    assert gaps == {(cell[0], status(*cell).why) for cell in checked if status(*cell).kind == "gap"}


def test_a_protocol_that_cannot_carry_a_capability_cannot_in_any_mode() -> None:
    for (capability, entry), reason in CANNOT.items():
        assert capability in CAPABILITIES
        assert entry in ENTRIES
        assert reason
        assert {status(mode, entry, capability) for mode in MODES} == {
            table.Status("cannot", reason)
        }


def test_cell_ids_name_their_cell() -> None:
    for cell in table.cells():
        assert parse_cell_id(cell_id(*cell)) == cell
    with pytest.raises(ValueError, match="not a matrix cell id"):
        parse_cell_id("inprocess-nowhere-validation")


def test_the_page_is_the_tables() -> None:
    if os.environ.get("CUSTOMTOOLS_UPDATE_DOCS"):
        pytest.skip("this run writes docs/matrix.md at its end, if every cell runs as stated")
    assert PAGE.read_text(encoding="utf-8") == table.render_page(), (
        "docs/matrix.md is stale: CUSTOMTOOLS_UPDATE_DOCS=1 pytest tests/matrix"
    )


def test_the_page_states_every_cell_with_its_status() -> None:
    page = table.render_page()
    for capability, title in CAPABILITIES.items():
        section = page.split(f"## {title[0].upper()}{title[1:]}\n", 1)[1].split("\n## ", 1)[0]
        rows = [line for line in section.splitlines() if line.startswith("| `") or "| " in line]
        for entry, name in ENTRIES.items():
            [row] = [line for line in rows if line.startswith(f"| {name} |")]
            marks = [cell.strip() for cell in row.strip("|").split("|")[1:]]
            for mode, mark in zip(MODES, marks, strict=True):
                expected = status(mode, entry, capability)
                kind = mark.split(" ")[0]
                assert kind.strip("*") == expected.kind, (mode, entry, capability)
                assert kind.startswith("**") == in_ci(mode, entry, capability)
                if expected.kind != "works":
                    number = mark.split("[")[1].rstrip("]")
                    assert f"\n{number}. {expected.kind}: {expected.why}\n" in section + "\n"


def test_a_gap_is_a_strict_expected_failure_with_its_reason(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pytest.importorskip("mcp")
    from .test_matrix import _params

    def gaps(mode: str, entry: str, capability: str) -> list[str]:
        return ["not carried yet"] if (mode, capability) == ("isolated", "log") else []

    monkeypatch.setattr(table, "_gaps", gaps)
    assert status("isolated", "stdio", "log") == table.Status("gap", "not carried yet")
    # A protocol's `cannot` wins over a gap: the cell is not run at all.
    assert status("isolated", "stateless", "log").kind == "cannot"
    params = {param.id: param for param in _params(every=True)}
    [mark] = params["isolated-stdio-log"].marks
    assert mark.name == "xfail"
    assert mark.kwargs == {"strict": True, "reason": "not carried yet"}
    assert not params["inprocess-stdio-log"].marks
    assert "isolated-stateless-log" not in params
    assert "gap [1]" in table.render_page()
