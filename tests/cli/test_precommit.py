"""The pre-commit hook definitions (``.pre-commit-hooks.yaml``), read by pre-commit itself."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from pre_commit.clientlib import load_manifest

from ._helpers import ROOT, Outcome

HOOKS = ROOT / ".pre-commit-hooks.yaml"
CLEAN = ROOT / "tests" / "cli" / "fixtures" / "clean"


def test_pre_commit_reads_the_hook_definitions() -> None:
    hooks = {hook["id"]: hook for hook in load_manifest(str(HOOKS))}

    assert set(hooks) == {"customtools-validate", "customtools-contract"}
    for hook in hooks.values():
        assert hook["language"] == "python"
        assert hook["pass_filenames"] is False
        assert hook["entry"].startswith("customtools ")


@pytest.mark.parametrize("hook_id", ["customtools-validate", "customtools-contract"])
def test_each_hook_entry_runs_as_pre_commit_runs_it(
    hook_id: str, cli: Callable[..., Outcome], tmp_path: Path
) -> None:
    hook = next(hook for hook in load_manifest(str(HOOKS)) if hook["id"] == hook_id)
    command = shlex.split(hook["entry"])
    baseline = tmp_path / "base.json"
    assert cli("contract", "export", str(CLEAN), "-o", str(baseline)).code == 0
    args = (
        [str(CLEAN)]
        if hook_id == "customtools-validate"
        else ["--baseline", str(baseline), str(CLEAN)]
    )

    outcome = cli(*command[1:], *args)

    assert outcome.code == 0, outcome.out


@pytest.mark.skipif(
    os.environ.get("CUSTOMTOOLS_TEST_PRE_COMMIT") != "1",
    reason="pre-commit installs the hooks' environment from PyPI (about a minute and a half);"
    " set CUSTOMTOOLS_TEST_PRE_COMMIT=1 to run it",
)
def test_pre_commit_installs_and_runs_the_hooks(tmp_path: Path) -> None:
    revision = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.strip()
    project = tmp_path / "project"
    (project / "tools").mkdir(parents=True)
    for module in CLEAN.glob("*.py"):
        (project / "tools" / module.name).write_text(module.read_text(encoding="utf-8"))
    (project / ".pre-commit-config.yaml").write_text(
        f"repos:\n- repo: {ROOT}\n  rev: {revision}\n  hooks:\n"
        "  - id: customtools-validate\n    args: [tools/]\n"
    )
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "cache")}
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    subprocess.run(["git", "add", "-A"], cwd=project, check=True)

    run = subprocess.run(
        [sys.executable, "-m", "pre_commit", "run", "--all-files"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )

    assert run.returncode == 0, run.stdout + run.stderr
    assert "customtools validate" in run.stdout
    assert "Passed" in run.stdout
