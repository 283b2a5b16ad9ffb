"""docs/ci.md shows what the gate really reports on its example pull request."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from ._helpers import ROOT, Outcome

DOC = (ROOT / "docs" / "ci.md").read_text(encoding="utf-8")
CHECK = (
    "contract",
    "check",
    "--baseline",
    "docs/examples/ci/notes.contract.json",
    "docs/examples/ci/tools",
)


def block_after(marker: str, fence: str) -> str:
    section = DOC[DOC.index(marker) :]
    match = re.search(rf"```{fence}\n(.*?)\n```", section, re.DOTALL)
    assert match is not None, f"no {fence} block after {marker!r}"
    return match.group(1)


@pytest.fixture
def at_root(monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(ROOT)
    return ROOT


def test_the_text_report_is_the_real_one(cli: Callable[..., Outcome], at_root: Path) -> None:
    shown = block_after("**Text** (the default)", "console").splitlines()

    outcome = cli(*CHECK)

    assert shown[0] == "$ customtools " + " ".join(CHECK)
    assert shown[1:] == outcome.out.splitlines()
    assert outcome.code == 1


def test_the_github_annotations_are_the_real_ones(
    cli: Callable[..., Outcome], at_root: Path
) -> None:
    shown = block_after("**GitHub annotations**", "").splitlines()

    assert shown == cli(*CHECK, "--format", "github").out.splitlines()


def test_the_json_and_sarif_examples_are_real_records(
    cli: Callable[..., Outcome], at_root: Path
) -> None:
    documented = json.loads(block_after("**JSON** (`--format json`)", "json"))
    real = json.loads(cli(*CHECK, "--format", "json").out)
    sarif = json.loads(block_after("**SARIF 2.1.0**", "json"))
    results = json.loads(cli(*CHECK, "--format", "sarif").out)["runs"][0]["results"]

    assert documented["findings"][0] == real["findings"][0]
    assert documented["summary"] == real["summary"]
    assert sarif in results


def test_the_diff_is_the_pull_request() -> None:
    changed = (ROOT / "docs" / "examples" / "ci" / "tools" / "search_notes.py").read_text(
        encoding="utf-8"
    )
    baseline = json.loads(
        (ROOT / "docs" / "examples" / "ci" / "notes.contract.json").read_text(encoding="utf-8")
    )
    diff = block_after("A pull request changes", "diff").splitlines()

    for line in diff:
        if line.startswith("+"):
            assert line[1:].strip() in changed
        elif line.startswith("-"):
            assert line[1:].strip() not in changed
    entry = baseline["packs"][0]["tools"]["search_notes"]
    assert entry["parameters"]["required"] == ["query"]
    assert entry["parameters"]["properties"]["sort"]["enum"] == ["relevance", "date", "title"]
