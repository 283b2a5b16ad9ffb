"""search_text: a rich schema whose defaults the adapter fills in before the tool runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from customtools.testing import ToolPack, assert_error, assert_ok, assert_text


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A small project in the tools' working directory (the tool_pack fixture's tmp_path)."""
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("import os\n\ndef main():\n    return 'TODO later'\n")
    (tmp_path / "README.md").write_text("# Demo\n\nTODO: write docs\n")
    (tmp_path / "notes.txt").write_text("TODO in a .txt file, not searched by default\n")
    (tmp_path / ".hidden").mkdir()
    (tmp_path / ".hidden" / "secret.py").write_text("TODO hidden\n")
    return tmp_path


def test_finds_lines_with_the_defaults_applied(tool_pack: ToolPack, project: Path) -> None:
    # Only `pattern` is given: directory ".", extensions [".py", ".md"], case "sensitive" and
    # max_results 50 come from the schema's defaults.
    call = tool_pack.call_sync("search_text", {"pattern": "TODO"})

    assert_ok(call)
    assert call.text.splitlines() == [
        "README.md:3: TODO: write docs",
        "src/app.py:4:     return 'TODO later'",
    ]
    assert call.details["count"] == 2
    assert_text(call, contains=["README.md:3", "src/app.py:4"])


def test_search_is_case_sensitive_by_default(tool_pack: ToolPack, project: Path) -> None:
    assert_text(tool_pack.call_sync("search_text", {"pattern": "todo"}), "no matches")

    call = tool_pack.call_sync("search_text", {"pattern": "todo", "case": "insensitive"})

    assert call.details["count"] == 2


def test_extensions_and_max_results_narrow_the_search(tool_pack: ToolPack, project: Path) -> None:
    call = tool_pack.call_sync(
        "search_text", {"pattern": "TODO", "extensions": [".txt", ".md"], "max_results": 1}
    )

    assert_ok(call)
    assert call.details["count"] == 1
    assert call.text == "README.md:3: TODO: write docs"


def test_a_numeric_string_is_coerced_for_the_model(tool_pack: ToolPack, project: Path) -> None:
    call = tool_pack.call_sync("search_text", {"pattern": "TODO", "max_results": "1"})

    assert_ok(call)
    assert call.details["count"] == 1
    assert call.result.meta is not None
    assert "customtools/coercions" in call.result.meta


def test_schema_violations_are_all_reported(tool_pack: ToolPack) -> None:
    call = tool_pack.call_sync("search_text", {"pattern": "", "case": "loud", "extensions": ["py"]})

    assert_error(call, match="/pattern")
    assert_text(call, contains=["/pattern", "/case", "/extensions/0"])


def test_an_invalid_regular_expression_is_an_error_result(tool_pack: ToolPack) -> None:
    assert_error(tool_pack.call_sync("search_text", {"pattern": "("}), match="invalid regular")
