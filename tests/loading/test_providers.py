"""Providers: built-in directories, precedence, the app dir, switching off, custom providers,
and the Claude marketplace registry."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path

import pytest

from customtools._loading._providers import (
    ClaudePluginsProvider,
    DirectoryProvider,
    ProviderItem,
    ScanContext,
    ToolLocation,
    ToolProvider,
    default_providers,
    native_provider,
)
from customtools._loading._records import Candidate, Diagnostic, ScanResult, ToolSource
from customtools._loading._scan import scan_sources

TOOL = "def factory(api):\n    return []\n"


def write(path: Path, text: str = TOOL) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def scan(project: Path, home: Path, **options: object) -> ScanResult:
    return scan_sources(cwd=project, home=home, entry_points=False, **options)  # type: ignore[arg-type]


def origins(result: ScanResult) -> list[tuple[str, str, str]]:
    return [
        (c.source.provider, c.source.level, os.path.basename(c.path)) for c in result.candidates
    ]


def registry(home: Path, data: object) -> Path:
    path = home / ".claude" / "plugins" / "installed_plugins.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


# -- built-in directory providers and precedence -------------------------------------------


def test_every_provider_in_precedence_order(home: Path, project: Path, tmp_path: Path) -> None:
    write(project / ".customtools" / "tools" / "native_p.py")
    write(home / ".customtools" / "tools" / "native_u.py")
    write(project / ".claude" / "tools" / "claude_p.py")
    write(home / ".claude" / "tools" / "claude_u.py")
    write(project / ".codex" / "tools" / "codex_p.py")
    write(home / ".codex" / "tools" / "codex_u.py")
    install = tmp_path / "cache" / "market" / "helper" / "1.0"
    write(install / "tools" / "market.py")
    registry(
        home,
        {
            "version": 2,
            "plugins": {"helper@market": [{"scope": "user", "installPath": str(install)}]},
        },
    )
    write(tmp_path / "plug" / "tools" / "plugin_tool.py")
    write(project / "configured.py")
    result = scan(
        project, home, plugin_dirs=[tmp_path / "plug"], configured_paths=["configured.py"]
    )
    assert origins(result) == [
        ("native", "user", "native_u.py"),
        ("native", "project", "native_p.py"),
        ("claude", "user", "claude_u.py"),
        ("claude", "project", "claude_p.py"),
        ("claude-plugins", "user", "market.py"),
        ("codex", "user", "codex_u.py"),
        ("codex", "project", "codex_p.py"),
        ("plugin", "user", "plugin_tool.py"),
        ("configured", "user", "configured.py"),
    ]
    assert [c.source.provider_name for c in result.candidates[:7:2]] == [
        "customtools",
        "Claude Code",
        "Claude Code Marketplace",
        "OpenAI Codex",
    ]
    assert result.errors == ()
    assert result.diagnostics == ()


def test_user_level_comes_before_project_level(home: Path, project: Path) -> None:
    # A checked-out repository's "a.py" is listed after the user's own "z.py".
    write(home / ".claude" / "tools" / "z.py")
    write(project / ".claude" / "tools" / "a.py")
    assert origins(scan(project, home)) == [
        ("claude", "user", "z.py"),
        ("claude", "project", "a.py"),
    ]


def test_host_app_name_changes_the_native_directories(home: Path, project: Path) -> None:
    write(home / ".customtools" / "tools" / "default.py")
    write(home / ".xcsh" / "tools" / "u.py")
    write(project / ".xcsh" / "tools" / "p.py")
    result = scan(project, home, app_name="xcsh")
    assert origins(result) == [("native", "user", "u.py"), ("native", "project", "p.py")]
    assert result.candidates[0].source.provider_name == "xcsh"


def test_host_native_dirs_override(home: Path, project: Path) -> None:
    write(home / ".xcsh" / "agent" / "tools" / "u.py")
    write(project / ".xcsh" / "tools" / "p.py")
    write(home / ".customtools" / "tools" / "ignored.py")
    result = scan(project, home, native_dirs=(["~/.xcsh/agent/tools"], [".xcsh/tools"]))
    assert origins(result) == [("native", "user", "u.py"), ("native", "project", "p.py")]


def test_relative_user_dirs_are_relative_to_home(home: Path, project: Path) -> None:
    write(home / "agent" / "tools" / "u.py")
    result = scan(project, home, native_dirs=(["agent/tools"], []))
    assert [c.path for c in result.candidates] == [str(home / "agent" / "tools" / "u.py")]


@pytest.mark.parametrize("bad", ["", "a/b", " spaced ", "x\\y"])
def test_app_name_must_be_a_plain_name(bad: str) -> None:
    with pytest.raises(ValueError, match="plain directory name"):
        native_provider(bad)


def test_disabled_provider_is_skipped_and_reported(home: Path, project: Path) -> None:
    write(home / ".claude" / "tools" / "c.py")
    write(home / ".codex" / "tools" / "x.py")
    result = scan(project, home, disabled_providers={"claude"})
    assert origins(result) == [("codex", "user", "x.py")]
    [diag] = result.diagnostics
    assert diag.code == "provider-disabled"
    assert "'claude' (Claude Code) is switched off" in diag.message


def test_disabling_entry_points_and_unknown_ids(home: Path, project: Path) -> None:
    result = scan_sources(
        cwd=project, home=home, disabled_providers=["entry-points", "cluade"], entry_points=True
    )
    assert [d.code for d in result.diagnostics] == ["unknown-provider", "provider-disabled"]
    assert "'cluade'" in result.diagnostics[0].message
    assert result.candidates == ()


# -- custom providers ------------------------------------------------------------------------


class TeamProvider:
    """A host's own provider: one shared directory plus one ready candidate."""

    id = "team"
    display_name = "Team tools"

    def __init__(self, directory: Path, extra: Path) -> None:
        self.directory = directory
        self.extra = extra

    def locate(self, context: ScanContext) -> Iterable[ProviderItem]:
        source = ToolSource(provider=self.id, provider_name=self.display_name, level="user")
        yield ToolLocation(path=str(self.directory), source=source)
        yield Candidate(
            path=str(self.extra), resolved_path=str(self.extra), kind="module", source=source
        )
        yield Diagnostic(code="team-note", message=f"scanned for {context.cwd}")


def test_custom_provider_is_a_tool_provider(tmp_path: Path) -> None:
    assert isinstance(TeamProvider(tmp_path, tmp_path), ToolProvider)
    assert all(isinstance(p, ToolProvider) for p in default_providers())


def test_custom_provider_after_the_defaults(home: Path, project: Path, tmp_path: Path) -> None:
    write(home / ".codex" / "tools" / "x.py")
    write(tmp_path / "team" / "t.py")
    extra = write(tmp_path / "extra.py")
    provider = TeamProvider(tmp_path / "team", extra)
    result = scan(project, home, providers=[*default_providers(), provider])
    assert origins(result) == [
        ("codex", "user", "x.py"),
        ("team", "user", "t.py"),
        ("team", "user", "extra.py"),
    ]
    assert [d.code for d in result.diagnostics] == ["team-note"]
    assert str(project) in result.diagnostics[0].message
    # and the host can switch its own provider off by id
    off = scan(project, home, providers=[provider], disabled_providers=["team"])
    assert off.candidates == ()


def test_a_directory_provider_from_the_host(home: Path, project: Path) -> None:
    write(project / "ci-tools" / "lint.py")
    provider = DirectoryProvider(id="ci", display_name="CI", project_dirs=["ci-tools"])
    assert origins(scan(project, home, providers=[provider])) == [("ci", "project", "lint.py")]


class Exploding:
    id = "boom"
    display_name = "Exploding"

    def locate(self, context: ScanContext) -> Iterable[ProviderItem]:
        yield Diagnostic(code="before", message="yielded before failing")
        raise RuntimeError("disk on fire")


class Garbage:
    id = "garbage"
    display_name = "Garbage"

    def locate(self, context: ScanContext) -> Iterable[ProviderItem]:
        return [42]  # type: ignore[list-item]


def test_failing_providers_become_errors(home: Path, project: Path) -> None:
    write(home / ".codex" / "tools" / "x.py")
    result = scan(project, home, providers=[Exploding(), Garbage(), *default_providers()])
    assert origins(result) == [("codex", "user", "x.py")]
    assert [e.code for e in result.errors] == ["provider-error", "provider-error"]
    assert "'boom' (Exploding) failed: RuntimeError: disk on fire" in result.errors[0].error
    assert result.errors[0].path == "provider:boom"
    assert "yielded int" in result.errors[1].error
    assert [d.code for d in result.diagnostics] == ["before"]


# -- the Claude marketplace cache ----------------------------------------------------------


def plugin_install(tmp_path: Path, name: str, tool: str = "t.py") -> Path:
    root = tmp_path / "cache" / name
    write(root / "tools" / tool)
    return root


def test_marketplace_registry(home: Path, project: Path, tmp_path: Path) -> None:
    user = plugin_install(tmp_path, "user-plugin", "u.py")
    proj = plugin_install(tmp_path, "project-plugin", "p.py")
    registry(
        home,
        {
            "version": 2,
            "plugins": {
                "proj@acme": [{"scope": "project", "installPath": str(proj), "version": "2.0.0"}],
                "helper@acme-market": [
                    {"scope": "user", "installPath": str(user), "version": "1.4.2", "enabled": True}
                ],
            },
        },
    )
    result = scan(project, home)
    assert origins(result) == [
        ("claude-plugins", "user", "u.py"),
        ("claude-plugins", "project", "p.py"),
    ]
    source = result.candidates[0].source
    assert (source.plugin_name, source.plugin_version) == ("helper", "1.4.2")
    assert result.candidates[1].source.plugin_name == "proj"
    assert result.diagnostics == ()


def test_marketplace_disabled_plugin(home: Path, project: Path, tmp_path: Path) -> None:
    off = plugin_install(tmp_path, "off")
    on = plugin_install(tmp_path, "on", "on.py")
    registry(
        home,
        {
            "version": 1,
            "plugins": {
                "off@market": [{"scope": "user", "installPath": str(off), "enabled": False}],
                "on@market": [{"scope": "user", "installPath": str(on)}],
            },
        },
    )
    result = scan(project, home)
    assert origins(result) == [("claude-plugins", "user", "on.py")]
    [diag] = result.diagnostics
    assert diag.code == "plugin-disabled"
    assert "'off@market'" in diag.message


def test_marketplace_missing_registry_is_silent(home: Path, project: Path) -> None:
    result = scan(project, home)
    assert (result.candidates, result.diagnostics, result.errors) == ((), (), ())


@pytest.mark.parametrize(
    "content",
    [
        "{not json",
        "[]",
        json.dumps({"plugins": {}}),
        json.dumps({"version": "2", "plugins": {}}),
        json.dumps({"version": True, "plugins": {}}),
        json.dumps({"version": 2, "plugins": []}),
    ],
)
def test_marketplace_malformed_registry(home: Path, project: Path, content: str) -> None:
    write(home / ".claude" / "tools" / "still.py")
    path = registry(home, content)
    result = scan(project, home)
    assert origins(result) == [("claude", "user", "still.py")]
    [diag] = result.diagnostics
    assert diag.code == "invalid-registry"
    assert diag.path == str(path)
    assert str(path) in diag.message


def test_marketplace_wrong_entry_shapes(home: Path, project: Path, tmp_path: Path) -> None:
    good = plugin_install(tmp_path, "good", "good.py")
    registry(
        home,
        {
            "version": 2,
            "plugins": {
                "a@m": ["not an object"],
                "b@m": [{"scope": "user"}],
                "c@m": [{"scope": "galaxy", "installPath": str(good)}],
                "d@m": [{"installPath": 7}],
                "good@m": {"installPath": str(good)},  # a single object is accepted
            },
        },
    )
    result = scan(project, home)
    assert origins(result) == [("claude-plugins", "user", "good.py")]
    assert [d.code for d in result.diagnostics] == ["invalid-registry-entry"] * 4
    assert "'a@m'" in result.diagnostics[0].message
    assert "installPath" in result.diagnostics[1].message
    assert "unknown scope 'galaxy'" in result.diagnostics[2].message


def test_marketplace_project_install_for_another_project(
    home: Path, project: Path, tmp_path: Path
) -> None:
    here = plugin_install(tmp_path, "here", "here.py")
    there = plugin_install(tmp_path, "there", "there.py")
    registry(
        home,
        {
            "version": 2,
            "plugins": {
                "here@m": [
                    {"scope": "local", "installPath": str(here), "projectPath": str(project)}
                ],
                "there@m": [
                    {
                        "scope": "project",
                        "installPath": str(there),
                        "projectPath": str(tmp_path / "x"),
                    }
                ],
            },
        },
    )
    assert origins(scan(project, home)) == [("claude-plugins", "project", "here.py")]
    (project / "sub").mkdir()  # a directory below the project counts as the project
    assert origins(scan(project / "sub", home)) == [("claude-plugins", "project", "here.py")]


def test_marketplace_relative_install_path_and_bare_id(home: Path, project: Path) -> None:
    write(home / ".claude" / "plugins" / "cache" / "solo" / "tools" / "s.py")
    registry(home, {"version": 2, "plugins": {"solo": [{"installPath": "cache/solo"}]}})
    [candidate] = scan(project, home).candidates
    assert candidate.source.plugin_name == "solo"
    assert candidate.source.plugin_version is None


def test_claude_plugins_provider_with_another_registry(project: Path, tmp_path: Path) -> None:
    root = plugin_install(tmp_path, "p", "p.py")
    reg = write(
        tmp_path / "reg.json",
        json.dumps({"version": 1, "plugins": {"p@m": [{"installPath": str(root)}]}}),
    )
    provider = ClaudePluginsProvider(registry=str(reg))
    result = scan_sources(cwd=project, home=tmp_path, providers=[provider], entry_points=False)
    assert [os.path.basename(c.path) for c in result.candidates] == ["p.py"]


def test_marketplace_unusable_install_path(home: Path, project: Path) -> None:
    registry(home, {"version": 2, "plugins": {"r@m": [{"installPath": "file://remote/p"}]}})
    [diag] = scan(project, home).diagnostics
    assert diag.code == "invalid-registry-entry"
    assert "remote host" in diag.message
