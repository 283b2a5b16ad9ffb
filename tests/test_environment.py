"""The pinned test environment stays honest: lock files agree with pyproject.toml.

``requirements/test.lock`` is what ``make test`` installs (``make lock`` writes it). When the
suite runs under
``make``, ``CUSTOMTOOLS_LOCK`` names the constraints file it was installed from, and the
environment is checked against it: a machine that drifted from the pinned set fails here
instead of testing something else.
"""

from __future__ import annotations

import importlib.metadata
import os
import re
import sys
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parent.parent


def _pins(path: Path) -> dict[str, str]:
    pins: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            name, _, version = line.partition("==")
            assert version, f"{path.name}: {line!r} is not pinned with '=='"
            pins[canonicalize_name(name)] = version
    return pins


def _direct_requirements() -> list[Requirement]:
    if sys.version_info < (3, 11):
        pytest.skip("reading pyproject.toml needs tomllib (Python 3.11)")
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    lines = list(project["dependencies"])
    for extra in _test_extras():
        lines += project["optional-dependencies"][extra]
    return [Requirement(line) for line in lines]


def _test_extras() -> list[str]:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    match = re.search(r"^TEST_EXTRAS := (.+)$", makefile, re.MULTILINE)
    assert match is not None, "the Makefile names the extras the tests install in TEST_EXTRAS"
    return match.group(1).strip().split(",")


def test_every_direct_dependency_is_locked_within_its_range() -> None:
    pins = _pins(ROOT / "requirements" / "test.lock")
    for requirement in _direct_requirements():
        name = canonicalize_name(requirement.name)
        assert name in pins, f"{requirement.name} is not in requirements/test.lock: run make lock"
        assert requirement.specifier.contains(Version(pins[name]), prereleases=True), (
            f"requirements/test.lock pins {name}=={pins[name]}, outside {requirement}: "
            "run make lock"
        )


def test_customtools_itself_is_not_locked() -> None:
    assert "customtools" not in _pins(ROOT / "requirements" / "test.lock")


def test_the_environment_is_the_one_it_was_installed_from() -> None:
    lock = os.environ.get("CUSTOMTOOLS_LOCK")
    if not lock:
        pytest.skip("not run through make (CUSTOMTOOLS_LOCK is unset, or empty for test-newest)")
    drifted = []
    for name, version in _pins(ROOT / lock).items():
        try:
            installed = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue  # locked for another extra (bench) or another Python: not installed here
        if Version(installed) != Version(version):
            drifted.append(f"{name} {installed} (pinned {version})")
    assert not drifted, f"the environment differs from {lock}: {', '.join(drifted)}"
