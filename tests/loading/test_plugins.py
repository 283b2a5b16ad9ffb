"""Plugin roots: manifests in the three places, declared tool paths, containment."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from customtools._loading._plugins import find_manifest
from customtools._loading._records import ScanResult
from customtools._loading._scan import scan_sources

TOOL = "def factory(api):\n    return []\n"


def write(path: Path, text: str = TOOL) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def manifest(root: Path, data: object, where: str = ".plugin/plugin.json") -> Path:
    return write(root / where, data if isinstance(data, str) else json.dumps(data))


def scan(project: Path, home: Path, *roots: Path | str) -> ScanResult:
    return scan_sources(cwd=project, home=home, plugin_dirs=roots, entry_points=False)


def names(result: ScanResult) -> list[str]:
    return [os.path.basename(c.path) for c in result.candidates]


@pytest.mark.parametrize(
    "where", [".plugin/plugin.json", ".claude-plugin/plugin.json", "plugin.json"]
)
def test_manifest_in_each_place(home: Path, project: Path, tmp_path: Path, where: str) -> None:
    root = tmp_path / "acme"
    write(root / "tools" / "t.py")
    manifest(root, {"name": "acme-tools", "version": "3.1.0", "author": "x"}, where)
    result = scan(project, home, root)
    [candidate] = result.candidates
    source = candidate.source
    assert (source.provider, source.provider_name, source.level) == ("plugin", "Plugin", "user")
    assert (source.plugin_name, source.plugin_version) == ("acme-tools", "3.1.0")
    assert result.errors == ()


def test_first_manifest_location_wins(tmp_path: Path, home: Path, project: Path) -> None:
    root = tmp_path / "multi"
    write(root / "tools" / "t.py")
    manifest(root, {"name": "from-claude"}, ".claude-plugin/plugin.json")
    manifest(root, {"name": "from-root"}, "plugin.json")
    assert find_manifest(str(root)) == str(root / ".claude-plugin" / "plugin.json")
    assert scan(project, home, root).candidates[0].source.plugin_name == "from-claude"
    manifest(root, {"name": "from-open-plugins"})
    assert scan(project, home, root).candidates[0].source.plugin_name == "from-open-plugins"


def test_root_without_manifest_uses_its_directory_name(
    tmp_path: Path, home: Path, project: Path
) -> None:
    write(tmp_path / "bare-plugin" / "tools" / "t.py")
    [candidate] = scan(project, home, tmp_path / "bare-plugin").candidates
    assert candidate.source.plugin_name == "bare-plugin"
    assert candidate.source.plugin_version is None


def test_declared_paths(tmp_path: Path, home: Path, project: Path) -> None:
    root = tmp_path / "decl"
    write(root / "tools" / "a.py")
    write(root / "extra" / "x.py")
    write(root / "extra" / "not_declared.py")
    write(root / "pkgs" / "p" / "__init__.py")
    write(root / "more_tools" / "m1.py")
    write(root / "more_tools" / "deep" / "m2.py")
    manifest(root, {"name": "decl", "tools": ["extra/x.py", "pkgs/p", "more_tools/"]})
    result = scan(project, home, root)
    assert names(result) == ["a.py", "x.py", "p", "m1.py"]
    assert [c.kind for c in result.candidates] == ["module", "module", "package", "module"]
    assert {c.source.plugin_name for c in result.candidates} == {"decl"}
    assert result.errors == ()


def test_declared_single_string_and_tools_dir_again(
    tmp_path: Path, home: Path, project: Path
) -> None:
    root = tmp_path / "single"
    write(root / "tools" / "a.py")
    manifest(root, {"tools": "tools"})
    result = scan(project, home, root)
    assert names(result) == ["a.py"]
    assert result.diagnostics == ()  # the same directory twice in one provider is not news


@pytest.mark.parametrize(
    "entry", ["../outside.py", "tools/../../outside.py", "/etc/passwd", "~/x.py"]
)
def test_declared_path_escaping_the_root(
    tmp_path: Path, home: Path, project: Path, entry: str
) -> None:
    root = tmp_path / "esc"
    write(tmp_path / "outside.py")
    write(root / "tools" / "fine.py")
    path = manifest(root, {"name": "esc", "tools": [entry]})
    result = scan(project, home, root)
    assert names(result) == ["fine.py"]
    [error] = result.errors
    assert error.code == "path-outside-plugin"
    assert error.path == str(path)
    assert str(path) in error.error
    assert repr(entry) in error.error


def test_declared_symlink_out_of_the_root(tmp_path: Path, home: Path, project: Path) -> None:
    root = tmp_path / "sym"
    secret = write(tmp_path / "elsewhere" / "evil.py")
    (root / "lib").mkdir(parents=True)
    try:
        (root / "lib" / "evil.py").symlink_to(secret)
    except OSError as exc:  # pragma: no cover - no symlink privilege
        pytest.skip(str(exc))
    manifest(root, {"tools": ["lib/evil.py"]})
    result = scan(project, home, root)
    assert result.candidates == ()
    assert [e.code for e in result.errors] == ["path-outside-plugin"]


def test_declared_missing_and_metadata_paths(tmp_path: Path, home: Path, project: Path) -> None:
    root = tmp_path / "bad"
    write(root / "docs" / "tool.md", "# docs")
    path = manifest(root, {"tools": ["gone.py", "docs/tool.md", "", 5]})
    result = scan(project, home, root)
    assert result.candidates == ()
    assert [e.code for e in result.errors] == [
        "not-found",
        "metadata-not-executable",
        "invalid-manifest",
        "invalid-manifest",
    ]
    assert "'gone.py' declared by" in result.errors[0].error
    assert str(path) in result.errors[0].error
    assert '"tools"[3]' in result.errors[3].error


def test_malformed_manifest_still_scans_tools(tmp_path: Path, home: Path, project: Path) -> None:
    root = tmp_path / "broken"
    write(root / "tools" / "t.py")
    path = manifest(root, "{oops", ".claude-plugin/plugin.json")
    result = scan(project, home, root)
    [candidate] = result.candidates
    assert candidate.source.plugin_name == "broken"
    [error] = result.errors
    assert (error.code, error.path) == ("invalid-manifest", str(path))
    assert "tools/ directory is still scanned" in error.error


@pytest.mark.parametrize("data", [[1, 2], {"tools": {"a": "b"}}])
def test_manifest_wrong_shapes(tmp_path: Path, home: Path, project: Path, data: object) -> None:
    root = tmp_path / "shape"
    write(root / "tools" / "t.py")
    manifest(root, data)
    result = scan(project, home, root)
    assert names(result) == ["t.py"]
    assert [e.code for e in result.errors] == ["invalid-manifest"]


def test_missing_root_is_an_error(tmp_path: Path, home: Path, project: Path) -> None:
    result = scan(project, home, "~/no-such-plugin")
    [error] = result.errors
    assert error.code == "not-found"
    assert "'~/no-such-plugin'" in error.error
    assert str(home / "no-such-plugin") in error.error


def test_roots_keep_their_order(tmp_path: Path, home: Path, project: Path) -> None:
    write(tmp_path / "second" / "tools" / "a.py")
    write(tmp_path / "first" / "tools" / "z.py")
    result = scan(project, home, tmp_path / "first", tmp_path / "second")
    assert [c.source.plugin_name for c in result.candidates] == ["first", "second"]


def test_relative_root_resolves_from_cwd(home: Path, project: Path) -> None:
    write(project / "vendor" / "plug" / "tools" / "t.py")
    [candidate] = scan(project, home, "vendor/plug").candidates
    assert candidate.path == str(project / "vendor" / "plug" / "tools" / "t.py")


def test_unusable_root_and_integer_version(tmp_path: Path, home: Path, project: Path) -> None:
    root = tmp_path / "ver"
    write(root / "tools" / "t.py")
    manifest(root, {"name": "  ", "version": 7})
    result = scan(project, home, "file://remote/x", root)
    assert [e.code for e in result.errors] == ["invalid-path"]
    [candidate] = result.candidates
    assert (candidate.source.plugin_name, candidate.source.plugin_version) == ("ver", "7")
