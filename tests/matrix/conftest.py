"""The matrix's fixtures: event loops in threads, and one site per execution mode.

Each cell is a plain test that hands its probe to an event loop running in a thread of this
process (an anyio blocking portal: trio for the adapter, the host toolkit and stdio, asyncio
for the frameworks, HTTP and the mount). The loop outlives the tests, so one server process,
one load per loop and one client per entry point serve every cell of a mode: the cells run
one mode after the other (``table.cells()`` order), and :class:`Sites` closes a mode's
servers before the next mode starts. Under pytest-xdist one worker runs all of a mode's cells
(the scheduler in ``tests/conftest.py``). Nothing is shared between processes; servers listen
on ephemeral loopback ports.

With ``CUSTOMTOOLS_UPDATE_DOCS=1`` every cell runs, and at the end of the run
``docs/matrix.md`` is written when each cell ran as ``table.py`` states (a ``works`` cell
passed, a ``gap`` cell failed as expected); otherwise the cells that did not are listed and
nothing is written.
"""

from __future__ import annotations

import importlib.util
import os
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
        self.urls: tuple[Any, dict[str, str]] | None = None
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

    def served(self) -> tuple[Any, dict[str, str]]:
        """The mode's server process (``launch.py``, started by the ``stdio`` entry's
        client) once it serves the pack over HTTP too (after its reload, if reloaded):
        ``(project, {"stateful": url, "stateless": url})``."""
        if self.urls is None:
            from .entries import until_version, until_version_at
            from .peers import served_urls

            stdio = self.entry("stdio")
            urls = self.portals["asyncio"].call(served_urls, stdio.project)
            if self.mode == "reloaded":
                stdio.project.bump()
                self.portals[stdio.backend].call(until_version, stdio.client)
                for url in urls.values():
                    self.portals["asyncio"].call(until_version_at, url)
            self.urls = (stdio.project, urls)
        return self.urls

    def entry(self, name: str) -> Any:
        """The driver of entry point ``name``, connected."""
        if name not in self.entries:
            from .entries import make_entry

            driver = make_entry(self, name)
            portal = self.portals[driver.backend]
            self.entries[name] = self.stack.enter_context(portal.wrap_async_context_manager(driver))
        return self.entries[name]

    def run(self, entry: str, capability: str) -> None:
        from .probes import PROBES

        if entry == "stdio":
            self.served()  # reloaded before the first call
        driver = self.entry(entry)
        self.portals[driver.backend].call(PROBES[capability], driver)

    def close(self) -> None:
        self.stack.close()


class Sites:
    """The site of the mode whose cells run now: the previous mode's is closed first, so one
    mode's servers and workers live at a time."""

    def __init__(self, portals: dict[str, Any], factory: pytest.TempPathFactory) -> None:
        self.portals = portals
        self.factory = factory
        self.current: ModeSite | None = None

    def site(self, mode: str) -> ModeSite:
        if self.current is not None and self.current.mode != mode:
            self.close()
        if self.current is None:
            if mode == "sandboxed":
                import sys

                from customtools._isolation._confine import landlock_abi

                if not sys.platform.startswith("linux") or landlock_abi() < 6:  # pragma: no cover
                    pytest.skip("the sandbox needs Linux with Landlock ABI >= 6")
            self.current = ModeSite(mode, self.portals, self.factory.mktemp(f"matrix-{mode}"))
        return self.current

    def close(self) -> None:
        current, self.current = self.current, None
        if current is not None:
            current.close()


@pytest.fixture(scope="module")
def sites(portals: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sites]:
    found = Sites(portals, tmp_path_factory)
    try:
        yield found
    finally:
        found.close()


# -- docs/matrix.md from a run of every cell ---------------------------------------------------

PAGE = Path(__file__).resolve().parents[2] / "docs" / "matrix.md"
_outcomes: dict[str, str] = {}
_verdict: list[str] = []


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if "test_matrix.py::test_cell[" not in report.nodeid:
        return
    cell = report.nodeid.split("[", 1)[1].removesuffix("]")
    if report.when == "call":
        if hasattr(report, "wasxfail"):
            _outcomes[cell] = "xfailed" if report.skipped else "xpassed"
        else:
            _outcomes[cell] = report.outcome
    elif report.failed or report.skipped:  # in setup or teardown
        _outcomes[cell] = f"{report.when} {report.outcome}"


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if not os.environ.get("CUSTOMTOOLS_UPDATE_DOCS") or hasattr(session.config, "workerinput"):
        return
    if not _outcomes:
        return  # the matrix did not run (another test file, or -k)
    from .table import cell_id, cells, render_page, status

    wanted = {"works": "passed", "gap": "xfailed"}
    run = [cell for cell in cells() if status(*cell).kind != "cannot"]
    missing = [cell for cell in run if cell_id(*cell) not in _outcomes]
    wrong = [
        f"  {cell_id(*cell)}: the table says {status(*cell).kind}, the run gave"
        f" {_outcomes[cell_id(*cell)]}"
        for cell in run
        if cell not in missing and _outcomes[cell_id(*cell)] != wanted[status(*cell).kind]
    ]
    if wrong or missing:
        _verdict.append("docs/matrix.md not written:")
        if missing:
            _verdict.append(f"  {len(missing)} cells did not run (run all of tests/matrix)")
        if wrong:
            _verdict.append("  cells that did not run as tests/matrix/table.py states:")
            _verdict.extend(wrong)
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
        return
    PAGE.write_text(render_page(), encoding="utf-8")
    _verdict.append("wrote docs/matrix.md: every cell ran as tests/matrix/table.py states")


def pytest_terminal_summary(terminalreporter: Any) -> None:
    for line in _verdict:
        terminalreporter.write_line(line)
