"""The directory scan: depth, skipped entries, metadata, symlinks, real-path dedupe."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from customtools._loading._records import Candidate, ScanResult, ToolSource
from customtools._loading._scan import Scanner, scan_sources

TOOL = "def factory(api):\n    return []\n"
NATIVE = Path(".customtools") / "tools"


@pytest.fixture
def tools(home: Path) -> Path:
    path = home / NATIVE
    path.mkdir(parents=True)
    return path


def write(path: Path, text: str = TOOL) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def scan(project: Path, home: Path, **options: object) -> ScanResult:
    return scan_sources(cwd=project, home=home, entry_points=False, **options)  # type: ignore[arg-type]


def names(result: ScanResult) -> list[str]:
    return [os.path.basename(c.path) for c in result.candidates]


def codes(result: ScanResult) -> list[str]:
    return [d.code for d in result.diagnostics]


# -- depth -------------------------------------------------------------------------------


def test_flat_modules_and_packages_are_candidates(tools: Path, home: Path, project: Path) -> None:
    write(tools / "b.py")
    write(tools / "a.py")
    write(tools / "pkg" / "__init__.py")
    result = scan(project, home)
    assert names(result) == ["a.py", "b.py", "pkg"]
    assert [c.kind for c in result.candidates] == ["module", "module", "package"]
    assert result.candidates[2].path == str(tools / "pkg")


def test_nothing_deeper_than_one_level(tools: Path, home: Path, project: Path) -> None:
    write(tools / "pkg" / "__init__.py")
    write(tools / "pkg" / "helpers.py")
    write(tools / "lib" / "support.py")
    write(tools / "lib" / "nested" / "__init__.py")
    result = scan(project, home)
    assert names(result) == ["pkg"]
    [skipped] = [d for d in result.diagnostics if d.code == "skipped-directory"]
    assert skipped.path == str(tools / "lib")
    assert "__init__.py" in skipped.message


def test_hidden_private_and_pycache_are_skipped_silently(
    tools: Path, home: Path, project: Path
) -> None:
    write(tools / ".hidden.py")
    write(tools / "_private.py")
    write(tools / "__init__.py")
    write(tools / "__pycache__" / "a.cpython-311.pyc", "")
    write(tools / ".git" / "config", "")
    write(tools / "_internal" / "__init__.py")
    write(tools / "visible.py")
    result = scan(project, home)
    assert names(result) == ["visible.py"]
    assert result.diagnostics == ()


def test_order_is_sorted_by_name(tools: Path, home: Path, project: Path) -> None:
    for name in ["zeta.py", "Alpha.py", "mid.py", "beta.py"]:
        write(tools / name)
    assert names(scan(project, home)) == ["Alpha.py", "beta.py", "mid.py", "zeta.py"]


def test_missing_directories_contribute_nothing(home: Path, project: Path) -> None:
    result = scan(project, home)
    assert result.candidates == ()
    assert result.diagnostics == ()
    assert result.errors == ()


def test_non_python_files_are_diagnosed_by_name(tools: Path, home: Path, project: Path) -> None:
    write(tools / "tool.ts", "export default 1")
    write(tools / "run.sh", "echo")
    write(tools / "README", "hi")
    write(tools / "ok.py")
    result = scan(project, home)
    assert names(result) == ["ok.py"]
    skipped = [d for d in result.diagnostics if d.code == "skipped-file"]
    assert [d.path for d in skipped] == [str(tools / n) for n in ["README", "run.sh", "tool.ts"]]
    assert "tool.ts was skipped" in skipped[2].message
    assert skipped[0].source is not None
    assert skipped[0].source.provider == "native"


def test_non_utf8_file_name_does_not_crash(tools: Path, home: Path, project: Path) -> None:
    if sys.platform in ("darwin", "win32"):
        pytest.skip("the file system rejects undecodable names")
    raw = os.path.join(os.fsencode(tools), b"caf\xe9.sh")
    with open(raw, "w") as handle:
        handle.write("echo")
    [diag] = scan(project, home).diagnostics
    assert diag.code == "skipped-file"
    assert "caf\\xe9.sh" in diag.message
    diag.message.encode("utf-8")


def test_unreadable_directory_is_a_diagnostic(tools: Path, home: Path, project: Path) -> None:
    write(tools / "a.py")
    os.chmod(tools, 0)
    try:
        if os.access(tools, os.R_OK):
            pytest.skip("running with privileges that ignore permissions")
        result = scan(project, home)
    finally:
        os.chmod(tools, 0o755)
    assert result.candidates == ()
    [diag] = result.diagnostics
    assert diag.code == "unreadable-directory"
    assert str(tools) in diag.message
    assert result.errors == ()


def test_scan_runs_no_tool_code(tools: Path, home: Path, project: Path, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    write(tools / "side_effect.py", f"open({str(marker)!r}, 'w').close()\n")
    write(tools / "pkg" / "__init__.py", f"open({str(marker)!r}, 'w').close()\n")
    result = scan(project, home)
    assert len(result.candidates) == 2
    assert not marker.exists()


# -- metadata ------------------------------------------------------------------------------


def test_markdown_frontmatter_is_metadata(tools: Path, home: Path, project: Path) -> None:
    write(tools / "search.md", "---\nname: web_search\ndescription: Search the web\n---\n# Hi\n")
    result = scan(project, home)
    assert result.candidates == ()
    [meta] = result.metadata
    assert (meta.name, meta.description, meta.format) == ("web_search", "Search the web", "md")
    assert meta.data == {"name": "web_search", "description": "Search the web"}
    assert meta.path == str(tools / "search.md")


def test_json_fields_are_metadata(tools: Path, home: Path, project: Path) -> None:
    write(tools / "fetch.json", json.dumps({"name": "fetch", "description": "Get", "x": 1}))
    [meta] = scan(project, home).metadata
    assert (meta.name, meta.description, meta.format) == ("fetch", "Get", "json")
    assert meta.data["x"] == 1


def test_metadata_without_fields_uses_the_stem(tools: Path, home: Path, project: Path) -> None:
    write(tools / "plain.md", "# Just docs\n")
    write(tools / "empty.json", "{}")
    result = scan(project, home)
    assert [(m.name, m.description) for m in result.metadata] == [("empty", ""), ("plain", "")]


def test_metadata_never_shadows_a_module(tools: Path, home: Path, project: Path) -> None:
    # Same stem and a metadata "name" naming another module: both modules still load.
    write(tools / "foo.json", '{"name": "foo"}')
    write(tools / "foo.md", "---\nname: bar\n---\n")
    write(tools / "foo.py")
    write(tools / "bar.py")
    result = scan(project, home)
    assert names(result) == ["bar.py", "foo.py"]
    assert sorted(m.name for m in result.metadata) == ["bar", "foo"]
    assert all(not c.path.endswith((".md", ".json")) for c in result.candidates)


@pytest.mark.parametrize(
    ("name", "text", "cause"),
    [
        ("bad.json", "{not json", "not valid JSON"),
        ("list.json", "[1, 2]", "must be an object"),
        ("bad.md", "---\nname: [unclosed\n---\n", "not valid YAML"),
        ("scalar.md", "---\njust text\n---\n", "must be a mapping"),
        ("open.md", "---\nname: x\n", "no closing"),
    ],
)
def test_malformed_metadata_is_a_diagnostic(
    tools: Path, home: Path, project: Path, name: str, text: str, cause: str
) -> None:
    write(tools / name, text)
    write(tools / "ok.py")
    result = scan(project, home)
    assert names(result) == ["ok.py"]
    assert result.metadata == ()
    [diag] = result.diagnostics
    assert diag.code == "invalid-metadata"
    assert name in diag.message
    assert cause in diag.message
    assert result.errors == ()


def test_non_utf8_metadata_is_a_diagnostic(tools: Path, home: Path, project: Path) -> None:
    (tools / "latin.md").write_bytes(b"---\nname: caf\xe9\n---\n")
    [diag] = scan(project, home).diagnostics
    assert diag.code == "invalid-metadata"
    assert "not UTF-8" in diag.message


# -- symlinks and dedupe --------------------------------------------------------------------


def symlink(link: Path, target: Path) -> None:
    link.parent.mkdir(parents=True, exist_ok=True)
    try:
        link.symlink_to(target, target_is_directory=target.is_dir())
    except OSError as exc:  # pragma: no cover - Windows without the privilege
        pytest.skip(f"symlinks unavailable: {exc}")


def test_file_symlink_and_target_load_once(tools: Path, home: Path, project: Path) -> None:
    target = write(tools / "a.py")
    symlink(project / ".claude" / "tools" / "linked.py", target)
    result = scan(project, home)
    assert [c.path for c in result.candidates] == [str(target)]
    [diag] = result.diagnostics
    assert diag.code == "duplicate-path"
    assert str(project / ".claude" / "tools" / "linked.py") in diag.message
    assert str(target) in diag.message
    assert "(claude)" in diag.message
    assert "(native)" in diag.message


def test_symlink_found_first_keeps_its_source(tools: Path, home: Path, project: Path) -> None:
    outside = write(home / "src" / "real.py")
    symlink(tools / "real.py", outside)
    result = scan(project, home, configured_paths=[str(outside)])
    [candidate] = result.candidates
    assert candidate.path == str(tools / "real.py")
    assert candidate.resolved_path == os.path.realpath(outside)
    assert candidate.source.provider == "native"
    assert codes(result) == ["duplicate-path"]


def test_directory_symlink_is_scanned_once(tools: Path, home: Path, project: Path) -> None:
    write(tools / "a.py")
    write(tools / "b.py")
    symlink(home / ".codex" / "tools", tools)
    result = scan(project, home)
    assert names(result) == ["a.py", "b.py"]
    assert {c.source.provider for c in result.candidates} == {"native"}
    [diag] = result.diagnostics
    assert diag.code == "duplicate-path"
    assert diag.path == str(home / ".codex" / "tools")


def test_symlinked_package_directory_is_followed(tools: Path, home: Path, project: Path) -> None:
    write(home / "checkout" / "pkgtool" / "__init__.py")
    symlink(tools / "pkgtool", home / "checkout" / "pkgtool")
    [candidate] = scan(project, home).candidates
    assert candidate.kind == "package"
    assert candidate.path == str(tools / "pkgtool")
    assert candidate.resolved_path == os.path.realpath(home / "checkout" / "pkgtool")


def test_symlink_loop_is_a_diagnostic(tools: Path, home: Path, project: Path) -> None:
    symlink(tools / "loop_a", tools / "loop_b")
    symlink(tools / "loop_b", tools / "loop_a")
    symlink(tools / "dangling.py", tools / "missing.py")
    write(tools / "ok.py")
    result = scan(project, home)
    assert names(result) == ["ok.py"]
    assert codes(result) == ["broken-symlink"] * 3
    assert [os.path.basename(d.path or "") for d in result.diagnostics] == [
        "dangling.py",
        "loop_a",
        "loop_b",
    ]


def test_directory_link_to_ancestor_does_not_recurse(
    tools: Path, home: Path, project: Path
) -> None:
    write(tools / "a.py")
    symlink(tools / "up", tools)  # a cycle back to the tools directory itself
    result = scan(project, home)
    assert names(result) == ["a.py"]
    assert codes(result) == ["skipped-directory"]


def test_hard_links_load_once(tools: Path, home: Path, project: Path) -> None:
    first = write(tools / "a.py")
    try:
        os.link(first, tools / "b.py")
    except OSError as exc:  # pragma: no cover - file systems without hard links
        pytest.skip(f"hard links unavailable: {exc}")
    result = scan(project, home)
    assert names(result) == ["a.py"]
    assert codes(result) == ["duplicate-path"]


def test_same_directory_twice_in_one_provider_is_silent(home: Path) -> None:
    # Running from the home directory: the project dir is the user dir.
    write(home / ".claude" / "tools" / "a.py")
    result = scan(home, home)
    assert names(result) == ["a.py"]
    assert result.candidates[0].source.level == "user"
    assert result.diagnostics == ()


def test_scanner_rejects_unknown_provider_items() -> None:
    scanner = Scanner()
    with pytest.raises(TypeError, match="yielded str"):
        scanner.add("nonsense")  # type: ignore[arg-type]


def test_scan_directory_directly(tmp_path: Path) -> None:
    write(tmp_path / "t" / "x.py")
    scanner = Scanner()
    source = ToolSource(provider="mine", provider_name="Mine", level="project")
    scanner.scan_directory(str(tmp_path / "t"), source)
    [candidate] = scanner.result().candidates
    assert candidate.source is source


def test_result_is_json_serialisable(tools: Path, home: Path, project: Path) -> None:
    write(tools / "a.py")
    write(tools / "a.md", "---\nname: a\n---\n")
    write(tools / "x.sh", "")
    result = scan(project, home, configured_paths=["missing.py"])
    data = json.loads(json.dumps(result.to_dict()))
    assert [c["kind"] for c in data["candidates"]] == ["module"]
    assert data["metadata"][0]["name"] == "a"
    assert data["diagnostics"][0]["code"] == "skipped-file"
    assert data["errors"][0]["code"] == "not-found"


def test_permission_denied_is_a_diagnostic_even_as_root(
    tools: Path, home: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The chmod test above is skipped for root; this one denies access at the call instead.
    write(tools / "a.py")
    real_scandir = os.scandir

    def denying(path: str) -> object:
        if os.fspath(path) == str(tools):
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", denying)
    result = scan(project, home)
    assert result.candidates == ()
    [diag] = result.diagnostics
    assert diag.code == "unreadable-directory"
    assert "Permission denied" in diag.message
    # An explicitly configured directory that cannot be read is an error instead.
    explicit = scan(project, home, configured_paths=[str(tools)], disabled_providers=["native"])
    assert [e.code for e in explicit.errors] == ["unreadable"]


def test_oversized_metadata_is_not_read(tools: Path, home: Path, project: Path) -> None:
    write(tools / "huge.md", "---\nname: huge\n---\n" + "x" * (1024 * 1024 + 1))
    [diag] = scan(project, home).diagnostics
    assert diag.code == "invalid-metadata"
    assert "larger than" in diag.message


def test_special_files_are_skipped(tools: Path, home: Path, project: Path) -> None:
    if not hasattr(os, "mkfifo"):
        pytest.skip("no named pipes here")
    os.mkfifo(tools / "pipe.py")
    [diag] = scan(project, home).diagnostics
    assert diag.code == "skipped-file"
    assert "not a regular file or directory" in diag.message


def test_provider_candidates_are_deduplicated_too(tmp_path: Path) -> None:
    source = ToolSource(provider="mine", provider_name="Mine", level="user")
    real = write(tmp_path / "r.py")
    scanner = Scanner()
    for path in (str(real), str(real), str(tmp_path / "gone.py"), str(tmp_path / "gone.py")):
        scanner.add(Candidate(path=path, resolved_path=path, kind="module", source=source))
    result = scanner.result()
    assert [c.path for c in result.candidates] == [str(real), str(tmp_path / "gone.py")]
    assert codes(result) == ["duplicate-path", "duplicate-path"]
