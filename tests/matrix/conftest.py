"""The matrix's fixtures: event loops in threads, and one site per execution mode.

Each cell is a plain test that hands its probe to an event loop running in a thread of this
process (an anyio blocking portal: trio for the adapter, the host toolkit and stdio, asyncio
for the frameworks, HTTP and the mount). The loop outlives the tests, so one server, one load
and one client serve every cell of a mode: the ``mode`` fixture is module-scoped and
parametrized, so pytest runs one mode's cells together and closes its servers before the next
mode starts. Nothing is shared between processes; servers listen on ephemeral loopback ports.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

NEEDED = ("mcp", "opentelemetry.sdk", "watchfiles", "pydantic_ai", "langgraph", "agents")
if any(importlib.util.find_spec(name) is None for name in NEEDED):  # pragma: no cover
    collect_ignore_glob = ["test_matrix.py"]  # the matrix needs every extra (make test)


@pytest.fixture(scope="module")
def portals() -> Iterator[dict[str, Any]]:
    """An event loop per backend, each in a thread of its own."""
    from anyio.from_thread import start_blocking_portal

    with (
        start_blocking_portal("asyncio") as on_asyncio,
        start_blocking_portal("trio") as on_trio,
    ):
        yield {"asyncio": on_asyncio, "trio": on_trio}


class ModeSite:
    """Everything one execution mode's cells use, made on first use, closed together."""

    def __init__(self, mode: str, portals: dict[str, Any], root: Path) -> None:
        self.mode = mode
        self.portals = portals
        self.root = root
        self.stack = ExitStack()
        self.entries: dict[str, Any] = {}
        self.loads: dict[str, Any] = {}
        self.urls: dict[bool, str] = {}
        self.projects = 0

    def project(self) -> Any:
        from .peers import Project

        self.projects += 1
        return Project(self.root / f"project-{self.projects}")

    def load(self, backend: str) -> Any:
        """The pack loaded in this mode, in ``backend``'s event loop."""
        if backend not in self.loads:
            from .entries import open_load

            project = self.project()
            manager = self.portals[backend].wrap_async_context_manager(
                open_load(self.mode, project)
            )
            self.loads[backend] = (project, self.stack.enter_context(manager))
        return self.loads[backend]

    def http(self, *, stateless: bool) -> tuple[Any, str]:
        """A ``customtools serve --http`` process in this mode (after its reload, if
        reloaded); ``(project, url)``."""
        if stateless not in self.urls:
            from .entries import after_reload
            from .peers import http_server

            project = self.project()
            url = self.stack.enter_context(http_server(project, self.mode, stateless=stateless))
            if self.mode == "reloaded":
                self.portals["asyncio"].call(after_reload, project, url)
            self.urls[stateless] = (project, url)
        return self.urls[stateless]

    def entry(self, name: str) -> Any:
        """The driver of entry point ``name``, connected."""
        if name not in self.entries:
            from .entries import make_entry

            driver = make_entry(self, name)
            portal = self.portals[driver.backend]
            self.entries[name] = self.stack.enter_context(
                portal.wrap_async_context_manager(driver)
            )
        return self.entries[name]

    def run(self, entry: str, capability: str) -> None:
        from .probes import PROBES

        driver = self.entry(entry)
        self.portals[driver.backend].call(PROBES[capability], driver)

    def close(self) -> None:
        self.stack.close()


@pytest.fixture(scope="module")
def mode(
    request: pytest.FixtureRequest, portals: dict[str, Any], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ModeSite]:
    """The site of one execution mode (``indirect`` parametrization by mode name)."""
    name = str(request.param)
    if name == "sandboxed":
        import sys

        from customtools._isolation._confine import landlock_abi

        if not sys.platform.startswith("linux") or landlock_abi() < 6:  # pragma: no cover
            pytest.skip("the sandbox needs Linux with Landlock ABI >= 6")
    site = ModeSite(name, portals, tmp_path_factory.mktemp(f"matrix-{name}"))
    try:
        yield site
    finally:
        site.close()
