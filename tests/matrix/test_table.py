"""The matrix's table covers every cell, and ``docs/matrix.md`` is what the table gives."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from . import table
from .table import CAPABILITIES, CANNOT, ENTRIES, MODES, cell_id, parse_cell_id, status

PAGE = Path(__file__).resolve().parents[2] / "docs" / "matrix.md"


def test_the_table_covers_every_cell() -> None:
    # Full coverage, not pairwise: every cell of the cross product has a status, and every
    # `works` or `gap` cell is one test of test_matrix.py.
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

    run = {param.id for param in _params()}
    expected = {cell_id(*cell) for cell in table.cells() if status(*cell).kind != "cannot"}
    assert run == expected


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
    # Regenerate with `python scripts/matrix.py` (docs/development.md).
    assert PAGE.read_text(encoding="utf-8") == table.render_page()


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
                assert mark.split(" ")[0] == expected.kind, (mode, entry, capability)
                if expected.kind != "works":
                    number = mark.split("[")[1].rstrip("]")
                    assert f"\n{number}. {expected.kind}: {expected.why}\n" in section + "\n"
