"""docs/testing.md: its examples are real files, and they pass against the example pack."""

from __future__ import annotations

import re
import shutil
import textwrap
from pathlib import Path

import pytest

import customtools.testing

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "testing.md"
EXAMPLES = sorted((ROOT / "docs" / "examples").glob("testing_*.py"))


def _contains_block(block: str, text: str) -> bool:
    want = textwrap.dedent(block).strip("\n").splitlines()
    have = text.splitlines()
    return any(have[i : i + len(want)] == want for i in range(len(have) - len(want) + 1))


def test_every_python_block_of_the_page_is_in_an_example_file() -> None:
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    sources = [path.read_text(encoding="utf-8") for path in EXAMPLES]

    assert len(blocks) >= 8
    missing = [block for block in blocks if not any(_contains_block(block, s) for s in sources)]
    assert missing == []


def test_the_page_lists_every_public_name_and_fixture() -> None:
    text = DOC.read_text(encoding="utf-8")
    listed = re.search(r"`customtools.testing` exports these names: (.*?)\.\n", text, re.S)

    assert listed is not None
    assert sorted(re.findall(r"`(\w+)`", listed.group(1))) == sorted(customtools.testing.__all__)
    for fixture in (
        "tool_pack",
        "load_tool_pack",
        "tool_pack_paths",
        "abort_controller",
        "check_tool_pack",
    ):
        assert f"| `{fixture}` |" in text


def test_the_examples_pass_against_the_example_pack(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    shutil.copytree(
        ROOT / "examples" / "tools",
        pytester.path / "tools",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    pytester.makeini(
        """
        [pytest]
        customtools_packs = tools
        filterwarnings = error
        addopts = --strict-markers --strict-config
        """
    )
    for path in EXAMPLES:
        shutil.copy(path, pytester.path / f"test_{path.stem}.py")

    result = pytester.runpytest(
        "-p", "customtools.testing._plugin", "-p", "anyio.pytest_plugin", "-v"
    )

    # quickstart: 6 tests; async: 5 tests on 2 event loops; inline: 1 test.
    result.assert_outcomes(passed=17)
