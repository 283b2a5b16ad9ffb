"""Path rules (``~``, relative, ``file://``) and explicit/configured paths."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from customtools._loading._paths import display_path, expand_home, resolve_path
from customtools._loading._scan import explicit_candidates, scan_sources

TOOL = "def factory(api):\n    return []\n"


def write(path: Path, text: str = TOOL) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


# -- resolve_path --------------------------------------------------------------------------


def test_tilde_alone_is_the_given_home(tmp_path: Path) -> None:
    assert resolve_path("~", "/somewhere", home=tmp_path) == str(tmp_path)


def test_tilde_slash_joins_onto_home(tmp_path: Path) -> None:
    assert resolve_path("~/tools/a.py", "/cwd", home=tmp_path) == str(tmp_path / "tools/a.py")


def test_tilde_defaults_to_home_environment(home: Path) -> None:
    assert resolve_path("~/x.py", "/cwd") == str(home / "x.py")


def test_tilde_user_is_not_joined_onto_home(tmp_path: Path) -> None:
    # "~someone/x" is that user's home, never "<home>/someone/x"; unknown users stay literal.
    result = expand_home("~no_such_user_4711/x", str(tmp_path))
    assert result == "~no_such_user_4711/x"
    assert resolve_path("~no_such_user_4711/x", "/cwd", home=tmp_path) == os.path.normpath(
        "/cwd/~no_such_user_4711/x"
    )


def test_relative_path_is_resolved_from_cwd(tmp_path: Path) -> None:
    assert resolve_path("tools/../lib/a.py", tmp_path) == str(tmp_path / "lib" / "a.py")


def test_absolute_path_is_kept(tmp_path: Path) -> None:
    assert resolve_path(str(tmp_path / "a.py"), "/elsewhere") == str(tmp_path / "a.py")


def test_pathlike_is_accepted(tmp_path: Path) -> None:
    assert resolve_path(Path("a") / "b.py", tmp_path) == str(tmp_path / "a" / "b.py")


def test_file_url_becomes_a_path(tmp_path: Path) -> None:
    target = tmp_path / "my tools" / "a.py"
    assert resolve_path(target.as_uri(), "/cwd") == str(target)
    assert resolve_path(f"file://localhost{target.as_posix()}", "/cwd") == str(target)


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("file://server/share/a.py", "remote host 'server'"),
        ("file:///tmp/a.py?x=1", "query or fragment"),
        ("file://", "has no path"),
    ],
)
def test_unusable_file_urls_are_rejected(url: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        resolve_path(url, "/cwd")


@pytest.mark.parametrize(("path", "message"), [("", "empty tool path"), ("a\x00b", "NUL byte")])
def test_empty_and_nul_paths_are_rejected(path: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        resolve_path(path, "/cwd")


def test_display_path_escapes_undecodable_bytes() -> None:
    name = os.fsdecode(b"/tools/caf\xe9.py")
    shown = display_path(name)
    assert shown == "/tools/caf\\xe9.py"
    shown.encode("utf-8")  # printable
    assert display_path("/tools/café.py") == "/tools/café.py"


# -- explicit / configured paths ------------------------------------------------------------


def test_configured_file_with_tilde_is_a_candidate(home: Path, project: Path) -> None:
    tool = write(home / "mine" / "a.py")
    result = explicit_candidates(["~/mine/a.py"], project, home=home)
    assert [c.path for c in result.candidates] == [str(tool)]
    candidate = result.candidates[0]
    assert candidate.kind == "module"
    assert candidate.resolved_path == os.path.realpath(tool)
    assert candidate.source.provider == "configured"
    assert candidate.source.level == "user"
    assert result.errors == ()


def test_configured_relative_path_resolves_from_cwd(home: Path, project: Path) -> None:
    tool = write(project / "tools" / "b.py")
    result = explicit_candidates(["tools/b.py"], project, home=home)
    assert [c.path for c in result.candidates] == [str(tool)]


def test_configured_file_url(home: Path, project: Path) -> None:
    tool = write(project / "with space" / "c.py")
    result = explicit_candidates([tool.as_uri()], project, home=home)
    assert [c.path for c in result.candidates] == [str(tool)]


def test_configured_markdown_is_metadata_not_executable(home: Path, project: Path) -> None:
    write(project / "a.md", "---\nname: a\n---\n")
    write(project / "b.json", '{"name": "b"}')
    result = explicit_candidates(["a.md", "b.json"], project, home=home)
    assert result.candidates == ()
    assert result.metadata == ()
    assert [e.code for e in result.errors] == ["metadata-not-executable"] * 2
    first = result.errors[0]
    assert first.path == str(project / "a.md")
    assert "a.md" in first.error
    assert "metadata file, not an executable tool" in first.error


def test_configured_missing_path_is_not_found(home: Path, project: Path) -> None:
    result = explicit_candidates(["nope/missing.py"], project, home=home)
    [error] = result.errors
    assert error.code == "not-found"
    assert error.path == str(project / "nope" / "missing.py")
    assert "'nope/missing.py' does not exist" in error.error
    assert str(project / "nope" / "missing.py") in error.error
    assert error.source is not None
    assert error.source.provider == "configured"


def test_configured_bad_url_is_invalid_path(home: Path, project: Path) -> None:
    result = explicit_candidates(["file://host/x.py"], project, home=home)
    [error] = result.errors
    assert error.code == "invalid-path"
    assert "file://host/x.py" in error.error


def test_configured_non_python_file_is_not_a_module(home: Path, project: Path) -> None:
    write(project / "run.sh", "echo hi\n")
    [error] = explicit_candidates(["run.sh"], project, home=home).errors
    assert error.code == "not-a-module"
    assert "run.sh" in error.error


def test_configured_package_directory_is_one_candidate(home: Path, project: Path) -> None:
    write(project / "pkg" / "__init__.py")
    write(project / "pkg" / "helper.py")
    [candidate] = explicit_candidates(["pkg"], project, home=home).candidates
    assert candidate.kind == "package"
    assert candidate.path == str(project / "pkg")


def test_configured_init_file_stands_for_its_package(home: Path, project: Path) -> None:
    write(project / "pkg" / "__init__.py")
    [candidate] = explicit_candidates(["pkg/__init__.py"], project, home=home).candidates
    assert candidate.kind == "package"
    assert candidate.path == str(project / "pkg")


def test_configured_directory_is_scanned_one_level(home: Path, project: Path) -> None:
    write(project / "more" / "b.py")
    write(project / "more" / "a.py")
    write(project / "more" / "deep" / "c.py")
    result = explicit_candidates(["more"], project, home=home)
    assert [os.path.basename(c.path) for c in result.candidates] == ["a.py", "b.py"]
    assert all(c.source.provider == "configured" for c in result.candidates)


def test_configured_paths_come_last_in_scan_sources(home: Path, project: Path) -> None:
    write(home / ".customtools" / "tools" / "a.py")
    extra = write(project / "extra.py")
    result = scan_sources(["extra.py"], project, home=home, entry_points=False)
    assert [c.source.provider for c in result.candidates] == ["native", "configured"]
    assert result.candidates[-1].path == str(extra)


def test_configured_duplicate_of_discovered_file_loads_once(home: Path, project: Path) -> None:
    tool = write(home / ".customtools" / "tools" / "a.py")
    result = scan_sources(["~/.customtools/tools/a.py"], project, home=home, entry_points=False)
    assert [c.source.provider for c in result.candidates] == ["native"]
    [diag] = [d for d in result.diagnostics if d.code == "duplicate-path"]
    assert diag.source is not None
    assert diag.source.provider == "configured"
    assert str(tool) in diag.message
