"""The capability matrix: one test per cell that works or has a gap (``table.py``).

A gap is a strict expected failure: the day it works, the test fails until the table says
``works``. Cells the protocol cannot carry are not run; ``test_table.py`` checks every cell
has a status. A CI run checks the cells :func:`~.table.in_ci` selects (pairwise, and every
cell in-process and at the adapter); ``CUSTOMTOOLS_UPDATE_DOCS=1`` runs every cell and, when
each ran as the table states, writes ``docs/matrix.md`` (``conftest.py``).
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Iterator
from typing import Any

import pytest

from .table import CAPABILITIES, cell_id, cells, in_ci, status

# What the framework and MCP test modules import at collection (a CI worker collects the whole
# suite): imported here too, a cell costs its own work, not the import of its entry point.
for _name in (
    "customtools.integrations.langchain",
    "customtools.integrations.openai_agents",
    "customtools.integrations.pydantic_ai",
    "customtools.mcp",
    "agents",
    "langgraph.prebuilt",
    "mcp.client.stdio",
    "opentelemetry.sdk.trace",
    "pydantic_ai",
):
    importlib.import_module(_name)

pytestmark = [
    # The SDK's HTTP client leaves SSE generators to the garbage collector, and the handshake
    # era's logging is deprecated in the 2026-07-28 one: both are the SDK's, not ours.
    pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
]


def _params(*, every: bool) -> Iterator[Any]:
    for mode, entry, capability in cells():
        expected = status(mode, entry, capability)
        if expected.kind == "cannot" or not (every or in_ci(mode, entry, capability)):
            continue
        marks = []
        if expected.kind == "gap":
            marks.append(pytest.mark.xfail(strict=True, reason=expected.why))
        yield pytest.param(
            mode, entry, capability, id=cell_id(mode, entry, capability), marks=marks
        )


@pytest.mark.parametrize(
    ("mode", "entry", "capability"),
    list(_params(every=bool(os.environ.get("CUSTOMTOOLS_UPDATE_DOCS")))),
)
def test_cell(sites: Any, mode: str, entry: str, capability: str) -> None:
    # Cells run in the order of table.cells(), a mode's together (under pytest-xdist too:
    # tests/conftest.py), so each mode's servers start once.
    assert capability in CAPABILITIES
    sites.site(mode).run(entry, capability)
