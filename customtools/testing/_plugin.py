"""The customtools pytest plugin: fixtures for testing tool packs.

Registered through the ``pytest11`` entry point, so it is active in every pytest run where
customtools is installed. It therefore stays cheap and inert: importing it imports only
pytest, it adds no marker, no command-line option and no hook that changes collection, and its
fixtures import :mod:`customtools.testing` when a test first requests one.

Fixtures:
    abort_controller: a fresh :class:`~customtools.AbortController` per test.
    tool_pack_paths: the pack paths from the ``customtools_packs`` configuration key
        (override it in a ``conftest.py`` to compute them instead).
    load_tool_pack: ``load_tool_pack(*paths, cwd=None, **options)`` loads a pack (default:
        ``tool_pack_paths``) with ``api.cwd`` set to the test's ``tmp_path``.
    tool_pack: the pack of ``tool_pack_paths``, loaded fresh for each test.
    check_tool_pack: ``check_tool_pack(*paths, strict=False, **options)`` runs the rulebook
        (:func:`customtools.testing.check_pack`, the checks of ``customtools validate``) on a
        pack (default: ``tool_pack_paths``) and fails the test with every finding.

Configuration:
    customtools_packs: tool files or directories, relative to the configuration file.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import pytest

if TYPE_CHECKING:
    from customtools import AbortController
    from customtools.testing import PackReport, ToolPack

__all__ = [
    "PackChecker",
    "PackLoader",
    "abort_controller",
    "check_tool_pack",
    "load_tool_pack",
    "pytest_addoption",
    "tool_pack",
    "tool_pack_paths",
]

PACKS_INI = "customtools_packs"


class PackLoader(Protocol):
    """The callable the ``load_tool_pack`` fixture returns."""

    def __call__(
        self, *paths: str | Path, cwd: str | Path | None = None, **options: Any
    ) -> ToolPack: ...


class PackChecker(Protocol):
    """The callable the ``check_tool_pack`` fixture returns."""

    def __call__(
        self,
        *paths: str | Path,
        strict: bool = False,
        cwd: str | Path | None = None,
        **options: Any,
    ) -> PackReport: ...


def pytest_addoption(parser: pytest.Parser) -> None:
    """Register the ``customtools_packs`` configuration key."""
    parser.addini(
        PACKS_INI,
        type="paths",
        default=[],
        help="customtools: tool files or directories the tool_pack fixture loads"
        " (relative to the configuration file)",
    )


@pytest.fixture
def abort_controller() -> AbortController:
    """A fresh :class:`~customtools.AbortController`; pass ``abort_controller.signal`` to a
    call and abort it from the test."""
    from customtools import AbortController

    return AbortController()


@pytest.fixture
def tool_pack_paths(request: pytest.FixtureRequest) -> list[Path]:
    """The pack paths of the ``customtools_packs`` configuration key.

    Override this fixture in a ``conftest.py`` to load something else for ``tool_pack``.
    """
    paths: list[Path] = list(request.config.getini(PACKS_INI))
    if not paths:
        pytest.fail(
            f"no tool pack configured: set {PACKS_INI} in your pytest configuration"
            ' (for example `customtools_packs = ["tools"]` under [tool.pytest.ini_options]),'
            " override the tool_pack_paths fixture, or pass paths to load_tool_pack(...)",
            pytrace=False,
        )
    return paths


@pytest.fixture
def load_tool_pack(request: pytest.FixtureRequest, tmp_path: Path) -> PackLoader:
    """A function that loads a tool pack: ``load_tool_pack(*paths, cwd=None, **options)``.

    Without paths it loads ``tool_pack_paths``. ``cwd`` (what tools see as ``api.cwd``)
    defaults to the test's ``tmp_path``. Other options are those of
    :func:`customtools.testing.load_pack` (``builtin_tool_names``, ``allow_errors``,
    ``load_timeout``, ``backend``). Load errors fail the test unless ``allow_errors=True``.
    """
    from customtools.testing import load_pack_sync

    def load(*paths: str | Path, cwd: str | Path | None = None, **options: Any) -> ToolPack:
        __tracebackhide__ = True
        if not paths:
            paths = tuple(request.getfixturevalue("tool_pack_paths"))
        return load_pack_sync(*paths, cwd=tmp_path if cwd is None else cwd, **options)

    return load


@pytest.fixture
def tool_pack(load_tool_pack: PackLoader, tool_pack_paths: list[Path]) -> ToolPack:
    """The tool pack of ``tool_pack_paths``, loaded fresh for each test with ``api.cwd`` set
    to the test's ``tmp_path``; load errors fail the test."""
    __tracebackhide__ = True
    return load_tool_pack(*tool_pack_paths)


@pytest.fixture
def check_tool_pack(request: pytest.FixtureRequest, tmp_path: Path) -> PackChecker:
    """A function that validates a tool pack: ``check_tool_pack(*paths, strict=False,
    **options)``.

    It runs :func:`customtools.testing.check_pack` (the rulebook ``customtools validate``
    uses: same codes, same severities) and fails the test listing every finding; it returns
    the :class:`~customtools.testing.PackReport`. Without paths it checks ``tool_pack_paths``;
    ``cwd`` (what tools see as ``api.cwd``) defaults to the test's ``tmp_path``. Other options
    are those of ``check_pack`` (``builtin_tool_names``, ``load_timeout``, ``backend``).
    """
    from customtools.testing import check_pack

    def check(
        *paths: str | Path, strict: bool = False, cwd: str | Path | None = None, **options: Any
    ) -> PackReport:
        __tracebackhide__ = True
        if not paths:
            paths = tuple(request.getfixturevalue("tool_pack_paths"))
        return check_pack(*paths, strict=strict, cwd=tmp_path if cwd is None else cwd, **options)

    return check
