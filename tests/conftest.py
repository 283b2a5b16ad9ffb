"""Shared test configuration: every async test runs on asyncio and on trio; under
pytest-xdist, one worker runs each capability-matrix mode's cells; the fork server some tests
start their servers from stops with the session."""

from __future__ import annotations

import sys
from typing import Any

import pytest


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def pytest_sessionfinish(session: pytest.Session) -> None:
    """The test process's fork server (``tests/zygote.py``), if a test started it, stops
    with the session, and so does everything it forked."""
    zygote = sys.modules.get("zygote")
    if zygote is not None:
        zygote.stop()


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
