"""Entry points of real distributions installed on a temporary path."""

from __future__ import annotations

import importlib.metadata
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from customtools._loading._entrypoints import (
    TOOL_ENTRY_POINT_GROUP,
    EntryPointsProvider,
    entry_point_key,
)
from customtools._loading._providers import ScanContext
from customtools._loading._records import Candidate, Diagnostic, LoadError
from customtools._loading._scan import scan_sources


def install(
    site: Path,
    name: str,
    version: str = "1.0",
    entry_points: str | None = None,
    *,
    metadata: bool = True,
) -> Path:
    """Write a minimal installed distribution (dist-info) plus its module into ``site``."""
    info = site / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    if metadata:
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    if entry_points is not None:
        (info / "entry_points.txt").write_text(entry_points)
    module = name.replace("-", "_") + "_tools"
    (site / f"{module}.py").write_text("raise RuntimeError('must not be imported by a scan')\n")
    (info / "RECORD").write_text(f"{module}.py,,\n")
    return info


def group(*lines: str) -> str:
    return f"[{TOOL_ENTRY_POINT_GROUP}]\n" + "".join(line + "\n" for line in lines)


def entry_candidates(project: Path, home: Path) -> list[Candidate]:
    result = scan_sources(cwd=project, home=home)
    return [c for c in result.candidates if c.kind == "entry_point"]


def test_real_distribution_on_sys_path(
    tmp_path: Path, home: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "site"
    install(site, "mypack", "1.2.3", group("mypack = mypack_tools:factory"))
    monkeypatch.syspath_prepend(str(site))
    result = scan_sources(cwd=project, home=home)
    [candidate] = [c for c in result.candidates if c.kind == "entry_point"]
    assert candidate.path == "mypack_tools:factory"
    assert candidate.entry_point == "mypack_tools:factory"
    assert candidate.resolved_path == "entry-point:mypack:mypack"
    source = candidate.source
    assert (source.provider, source.provider_name, source.level) == (
        "entry-points",
        "Installed package",
        "user",
    )
    assert (source.distribution, source.plugin_name, source.plugin_version) == (
        "mypack",
        "mypack",
        "1.2.3",
    )
    assert "mypack_tools" not in sys.modules  # nothing was imported
    assert not [e for e in result.errors if "mypack" in e.error]


def test_entry_points_switched_off(
    tmp_path: Path, home: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    install(tmp_path / "site", "mypack", entry_points=group("a = mypack_tools:factory"))
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    result = scan_sources(cwd=project, home=home, entry_points=False)
    assert result.candidates == ()


def test_entry_points_come_after_plugins_and_before_configured(
    tmp_path: Path, home: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    install(tmp_path / "site", "mypack", entry_points=group("a = mypack_tools:factory"))
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    (tmp_path / "plug" / "tools").mkdir(parents=True)
    (tmp_path / "plug" / "tools" / "p.py").write_text("")
    (project / "c.py").write_text("")
    result = scan_sources(["c.py"], project, home=home, plugin_dirs=[tmp_path / "plug"])
    ours = [c for c in result.candidates if c.source.distribution in (None, "mypack")]
    assert [c.source.provider for c in ours] == ["plugin", "entry-points", "configured"]


def test_broken_distributions_do_not_hide_good_ones(
    tmp_path: Path, home: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "site"
    install(site, "aaa-unparsable", entry_points=group("this line has no equals sign"))
    install(site, "bbb-nometa", entry_points=group("nm = bbb_nometa_tools:factory"), metadata=False)
    install(site, "ccc-good", entry_points=group("good = ccc_good_tools:factory"))
    install(site, "ddd-badvalue", entry_points=group("bad = not a valid:reference!"))
    install(site, "eee-unrelated", entry_points="[console_scripts]\nbroken line\n")
    provider = EntryPointsProvider(path=[str(site)])
    items = list(provider.locate(ScanContext(cwd=str(project), home=str(home))))
    candidates = [i for i in items if isinstance(i, Candidate)]
    errors = [i for i in items if isinstance(i, LoadError)]
    diagnostics = [i for i in items if isinstance(i, Diagnostic)]
    assert [c.entry_point for c in candidates] == [
        "bbb_nometa_tools:factory",
        "ccc_good_tools:factory",
    ]
    assert [e.code for e in errors] == ["invalid-distribution", "invalid-entry-point"]
    assert "'aaa-unparsable'" in errors[0].error
    assert "reinstall" in errors[0].error
    assert "'bad'" in errors[1].error
    assert "'ddd-badvalue'" in errors[1].error
    [diag] = diagnostics
    assert diag.code == "broken-distribution"
    assert "bbb" in diag.message
    assert candidates[0].source.distribution == "bbb_nometa"  # named from the dist-info folder


def test_same_distribution_twice_counts_once(tmp_path: Path, project: Path, home: Path) -> None:
    first, second = tmp_path / "site1", tmp_path / "site2"
    install(first, "dup-pack", "2.0", group("t = dup_pack_tools:factory"))
    install(second, "dup-pack", "1.0", group("t = dup_pack_tools:factory", "old = x:factory"))
    provider = EntryPointsProvider(path=[str(first), str(second), str(first)])
    items = list(provider.locate(ScanContext(cwd=str(project), home=str(home))))
    assert [(i.source.plugin_version, i.path) for i in items if isinstance(i, Candidate)] == [
        ("2.0", "dup_pack_tools:factory")
    ]


def test_shadowing_copy_without_tools_hides_the_stale_one(
    tmp_path: Path, project: Path, home: Path
) -> None:
    # The copy import would use (first on the path) declares no tools; the stale one is ignored.
    first, second = tmp_path / "site1", tmp_path / "site2"
    install(first, "pack", "2.0", "[console_scripts]\npack = pack_tools:main\n")
    install(second, "pack", "1.0", group("t = pack_tools:factory"))
    provider = EntryPointsProvider(path=[str(first), str(second)])
    assert list(provider.locate(ScanContext(cwd=str(project), home=str(home)))) == []


def test_order_is_by_distribution_then_name(tmp_path: Path, project: Path, home: Path) -> None:
    site = tmp_path / "site"
    install(site, "zeta", entry_points=group("b = zeta_tools:b", "a = zeta_tools:a"))
    install(site, "alpha", entry_points=group("only = alpha_tools"))
    provider = EntryPointsProvider(path=[str(site)])
    items = list(provider.locate(ScanContext(cwd=str(project), home=str(home))))
    assert [i.path for i in items] == ["alpha_tools", "zeta_tools:a", "zeta_tools:b"]
    assert [i.resolved_path for i in items] == [  # type: ignore[union-attr]
        "entry-point:alpha:only",
        "entry-point:zeta:a",
        "entry-point:zeta:b",
    ]


def test_entry_point_key_normalises_the_distribution() -> None:
    assert entry_point_key("My_Pack.Tools", "x") == "entry-point:my-pack-tools:x"


class MemoryDistribution(importlib.metadata.Distribution):
    """A distribution that is not a dist-info folder (as custom finders produce)."""

    def __init__(self, files: dict[str, str], *, fail: bool = False) -> None:
        self.files_ = files
        self.fail = fail

    def read_text(self, filename: str) -> str | None:
        if self.fail:
            raise OSError("metadata store offline")
        return self.files_.get(filename)

    def locate_file(self, path: str | os.PathLike[str]) -> Path:
        return Path("/nowhere") / path


def test_custom_distributions_are_guarded(
    project: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    named = {"METADATA": "Name: mem-pack\nVersion: 0.1\n", "entry_points.txt": group("m = mem:f")}

    def distributions(**_: object) -> Iterator[importlib.metadata.Distribution]:
        yield MemoryDistribution(named)
        yield MemoryDistribution(named)  # the same name again: counted once
        yield MemoryDistribution({}, fail=True)  # reading raises: skipped
        yield MemoryDistribution({"entry_points.txt": group("n = nameless:f")})  # no name at all
        raise RuntimeError("a broken sys.path entry")  # ends the walk, keeps what was found

    monkeypatch.setattr(importlib.metadata, "distributions", distributions)
    items = list(EntryPointsProvider().locate(ScanContext(cwd=str(project), home=str(home))))
    errors = [i for i in items if isinstance(i, LoadError)]
    candidates = [i for i in items if isinstance(i, Candidate)]
    assert [(c.path, c.source.distribution, c.source.plugin_version) for c in candidates] == [
        ("mem:f", "mem-pack", "0.1")
    ]
    [error] = errors
    assert error.code == "invalid-distribution"
    assert "no readable name" in error.error
