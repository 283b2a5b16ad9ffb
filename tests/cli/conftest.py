"""Fixtures of the CLI tests: call ``run(argv)`` in-process; an empty home directory."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from customtools.cli import run

from ._helpers import Outcome


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> Callable[..., Outcome]:
    """Run the command in-process; returns its exit status, stdout and stderr."""

    def invoke(*argv: str) -> Outcome:
        capsys.readouterr()
        code = run(list(argv))
        captured = capsys.readouterr()
        return Outcome(code, captured.out, captured.err)

    return invoke


@pytest.fixture(autouse=True)
def isolated_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """An empty home directory, so the user's own tools never leak into a test."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("NO_COLOR", raising=False)
    return home
