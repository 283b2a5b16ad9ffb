"""repo_stats: a package-directory tool whose helper module is not a tool itself."""

from __future__ import annotations

from pathlib import Path

import pytest

from customtools.testing import ToolPack, assert_ok


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    for name in ("a.py", "b.py", "c.py", "docs/index.md", "docs/api.md", "Makefile", "x.txt"):
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "config.py").write_text("")  # hidden folders are skipped
    return tmp_path


def test_the_package_loads_as_one_tool_and_its_helper_as_none(tool_pack: ToolPack) -> None:
    assert "repo_stats" in tool_pack
    assert all(not name.startswith("_count") for name in tool_pack.names)
    assert tool_pack.load_result is not None
    loaded = tool_pack.load_result.get("repo_stats")
    assert loaded is not None
    assert Path(loaded.path).name == "repo_stats"


def test_counts_files_by_extension(tool_pack: ToolPack, tree: Path) -> None:
    call = tool_pack.call_sync("repo_stats", {})

    assert_ok(call)
    assert call.details == {".py": 3, ".md": 2, "": 1, ".txt": 1}
    assert call.text.splitlines()[:2] == [".py: 3", ".md: 2"]
    assert "(none): 1" in call.text


def test_top_limits_the_listing_and_directory_narrows_it(tool_pack: ToolPack, tree: Path) -> None:
    assert tool_pack.call_sync("repo_stats", {"top": 1}).details == {".py": 3}
    assert tool_pack.call_sync("repo_stats", {"directory": "docs"}).details == {".md": 2}


def test_an_empty_directory_says_so(tool_pack: ToolPack, tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()

    assert tool_pack.call_sync("repo_stats", {"directory": "empty"}).text == "no files"
