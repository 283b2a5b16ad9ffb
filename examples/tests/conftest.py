"""Configuration for the example pack's tests: which pack, and which event loops.

A tool pack of your own would set ``customtools_packs = ["tools"]`` in its pytest
configuration instead of overriding ``tool_pack_paths``; this repository's configuration is
shared by every test suite, so the example suite points the fixture at its pack here.
"""

from __future__ import annotations

from pathlib import Path

import pytest

EXAMPLE_TOOLS = Path(__file__).resolve().parent.parent / "tools"


@pytest.fixture
def tool_pack_paths() -> list[Path]:
    """The ``tool_pack`` fixture loads ``examples/tools``."""
    return [EXAMPLE_TOOLS]


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    """Every ``@pytest.mark.anyio`` test runs on asyncio and on trio."""
    return str(request.param)
