"""Shared test configuration: every async test runs on asyncio and on trio; under
pytest-xdist, one worker runs each capability-matrix mode's cells."""

from __future__ import annotations

from typing import Any

import pytest


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


_MATRIX_CELL = "tests/matrix/test_matrix.py::test_cell["


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """Under pytest-xdist's default distribution (``-n`` alone), one worker runs all the
    cells of one capability-matrix mode, in order, so the mode's servers start once; every
    other test is a unit of its own, spread over the workers as they become free."""
    if config.getvalue("dist") != "load":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class Scheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            if nodeid.startswith(_MATRIX_CELL):
                mode = nodeid.removeprefix(_MATRIX_CELL).split("-", 1)[0]
                return f"{_MATRIX_CELL}{mode}"
            return nodeid

    return Scheduling(config, log)
