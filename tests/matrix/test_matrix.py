"""The capability matrix: one test per cell that works or has a gap (``table.py``).

A gap is a strict expected failure: the day it works, the test fails until the table says
``works``. Cells the protocol cannot carry are not run; ``test_table.py`` checks every cell
has a status.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from .table import CAPABILITIES, cell_id, cells, status

pytestmark = [
    # The SDK's HTTP client leaves SSE generators to the garbage collector, and the handshake
    # era's logging is deprecated in the 2026-07-28 one: both are the SDK's, not ours.
    pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
]


def _params() -> Iterator[Any]:
    for mode, entry, capability in cells():
        expected = status(mode, entry, capability)
        if expected.kind == "cannot":
            continue
        marks = []
        if expected.kind == "gap":
            marks.append(pytest.mark.xfail(strict=True, reason=expected.why))
        yield pytest.param(
            mode, entry, capability, id=cell_id(mode, entry, capability), marks=marks
        )


@pytest.mark.parametrize(
    ("mode", "entry", "capability"), list(_params()), indirect=["mode"], scope="module"
)
def test_cell(mode: Any, entry: str, capability: str) -> None:
    assert capability in CAPABILITIES
    mode.run(entry, capability)
