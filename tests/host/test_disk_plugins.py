"""Real plugins as Claude Code lays them out (fixtures under tests/host/fixtures/), and the file
rules the host shares with the tool loader (review finding M2)."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from customtools.host import (
    AgentCustomization,
    HookCustomization,
    McpServerCustomization,
    PluginCustomization,
    SkillCustomization,
    parse_frontmatter,
    scan_directory,
    scan_plugin,
)

FIXTURES = Path(__file__).parent / "fixtures"

posix_only = pytest.mark.skipif(sys.platform == "win32", reason="symlinks, FIFOs and /dev/zero")


def copy_fixture(name: str, tmp_path: Path) -> Path:
    return Path(shutil.copytree(FIXTURES / name, tmp_path / name))


def children(plugin: PluginCustomization, cls: type) -> list[Any]:
    return [c for c in plugin.children or () if isinstance(c, cls)]


def message(plugin: Any) -> str:
    assert plugin.load is not None
    return plugin.load.message or ""


def notes(plugin: Any) -> list[str]:
    return message(plugin).split("; ") if message(plugin) else []


# -- the manifest's component paths -----------------------------------------------------------


def test_manifest_agents_commands_and_skills_replace_the_default_folders() -> None:
    plugin = scan_plugin(FIXTURES / "manifest-paths")
    assert plugin.name == "release-tools"
    assert [a.name for a in children(plugin, AgentCustomization)] == ["planner", "solo"]
    skills = [s.name for s in children(plugin, SkillCustomization)]
    assert skills == ["release", "triage", "ship"]  # ${CLAUDE_PLUGIN_ROOT}/skill-packs, commands
    names = {c.name for c in plugin.children or ()}
    assert "not-declared" not in names
    assert "default-only" not in names


def test_manifest_hooks_are_read_as_a_file_and_inline_besides_the_default_file() -> None:
    plugin = scan_plugin(FIXTURES / "manifest-paths")
    root = (FIXTURES / "manifest-paths").resolve()
    hooks = {h.event: h for h in children(plugin, HookCustomization)}
    assert set(hooks) == {"Stop", "PostToolUse", "SessionStart"}
    assert hooks["PostToolUse"].matcher == "Write|Edit"
    assert hooks["PostToolUse"].uri == (root / "config" / "hooks.json").as_uri() + (
        "#/hooks/PostToolUse/0"
    )
    manifest_uri = (root / ".claude-plugin" / "plugin.json").as_uri()
    assert hooks["SessionStart"].uri == manifest_uri + "#/hooks/1/SessionStart/0"


def test_manifest_mcp_servers_by_path_and_inline_with_ranges() -> None:
    plugin = scan_plugin(FIXTURES / "manifest-paths")
    servers = {s.name: s for s in children(plugin, McpServerCustomization)}
    assert set(servers) == {"changelog", "tickets"}
    manifest = (FIXTURES / "manifest-paths" / ".claude-plugin" / "plugin.json").read_text()
    line = manifest.splitlines()[servers["tickets"].range.start_line]
    declared = line[
        servers["tickets"].range.start_character : servers["tickets"].range.end_character
    ]
    assert json.loads("{" + declared + "}") == {
        "tickets": {"command": "tickets-mcp", "args": ["--stdio"]}
    }


def test_manifest_paths_that_cannot_be_followed_are_notes_on_the_container() -> None:
    plugin = scan_plugin(FIXTURES / "manifest-paths")
    assert plugin.load is not None
    assert plugin.load.kind == "degraded"
    assert notes(plugin) == [
        ".claude-plugin/plugin.json: mcpServers path '../outside.json' leads outside the plugin "
        "root (through '..' or a symlink), not followed",
        ".claude-plugin/plugin.json: mcpServers path './config/missing.json' does not exist, "
        "not followed",
    ]


@posix_only
def test_a_declared_path_symlinked_out_of_the_root_is_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    (outside / "agents").mkdir(parents=True)
    (outside / "agents" / "secret.md").write_text("---\nname: secret\n---\n", encoding="utf-8")
    root = tmp_path / "plugin"
    (root / ".claude-plugin").mkdir(parents=True)
    (root / ".claude-plugin" / "plugin.json").write_text(
        json.dumps({"name": "p", "agents": ["./linked", "/etc", 7]}), encoding="utf-8"
    )
    (root / "linked").symlink_to(outside / "agents")
    plugin = scan_plugin(root)
    assert plugin.children == ()
    assert notes(plugin) == [
        ".claude-plugin/plugin.json: agents path './linked' leads outside the plugin root "
        "(through '..' or a symlink), not followed",
        ".claude-plugin/plugin.json: agents path '/etc' is absolute, not followed (declare "
        "paths relative to the root: ./x)",
        ".claude-plugin/plugin.json: 'agents' must be a path or a list of paths, not int, so "
        "that entry was not followed",
    ]
    assert plugin.load is not None
    assert plugin.load.kind == "error"


# -- .mcp.json in both forms, ranges from a tokenizer -------------------------------------------


def test_mcp_json_mapping_server_names_directly_is_accepted() -> None:
    plugin = scan_plugin(FIXTURES / "direct-mcp")
    assert plugin.load is not None
    assert plugin.load.kind == "loaded"
    servers = {s.name: s for s in children(plugin, McpServerCustomization)}
    assert list(servers) == ["search", "files"]
    assert servers["files"].enabled is False
    assert servers["files"].uri.endswith("/.mcp.json#/files")


def test_range_points_at_the_declaration_not_an_earlier_value_with_the_same_text() -> None:
    plugin = scan_plugin(FIXTURES / "direct-mcp")
    (files,) = (s for s in children(plugin, McpServerCustomization) if s.name == "files")
    lines = (FIXTURES / "direct-mcp" / ".mcp.json").read_text(encoding="utf-8").splitlines()
    assert files.range is not None
    assert lines[files.range.start_line][files.range.start_character :].startswith('"files": {')
    assert (files.range.end_line, files.range.end_character) == (9, 3)
    assert lines[files.range.end_line][: files.range.end_character] == "  }"


def test_wrapped_form_range_ignores_the_name_used_as_a_value_and_at_another_depth(
    tmp_path: Path,
) -> None:
    root = tmp_path / "p"
    root.mkdir()
    text = (
        '{"about": "files", "files": 1,\n'
        ' "mcpServers": {"docs": {"args": ["files", {"files": 2}]},\n'
        '  "fil\\u0065s": {"command": "x"}}}\n'
    )
    (root / ".mcp.json").write_text(text, encoding="utf-8")
    plugin = scan_plugin(root)
    servers = {s.name: s for s in children(plugin, McpServerCustomization)}
    rng = servers["files"].range
    assert rng is not None
    assert (rng.start_line, rng.start_character, rng.end_line, rng.end_character) == (2, 2, 2, 32)
    assert text.splitlines()[2][2:32] == '"fil\\u0065s": {"command": "x"}'


def test_server_names_with_slash_and_tilde_are_escaped_json_pointers(tmp_path: Path) -> None:
    (tmp_path / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"a/b~c d": {"command": "x"}}}), encoding="utf-8"
    )
    (server,) = scan_plugin(tmp_path).children or ()
    assert server.uri.endswith("/.mcp.json#/mcpServers/a~1b~0c%20d")


# -- frontmatter as people write it ------------------------------------------------------------


def test_invalid_yaml_degrades_only_that_child_and_recovers_its_fields() -> None:
    plugin = scan_plugin(FIXTURES / "messy-frontmatter")
    (review,) = (s for s in children(plugin, SkillCustomization) if s.name == "review")
    assert review.description == "Review code: style, tests and docs"
    assert review.disable_model_invocation is True
    # The YAML problem in the parentheses is PyYAML's wording: not pinned here.
    assert any(
        note.startswith("skills/review/SKILL.md: frontmatter is not valid YAML (")
        and note.endswith("), its fields were read line by line (quote the values)")
        for note in notes(plugin)
    ), notes(plugin)


def test_skill_names_missing_or_differing_use_the_folder_with_a_note() -> None:
    plugin = scan_plugin(FIXTURES / "messy-frontmatter")
    skills = {s.name: s for s in children(plugin, SkillCustomization)}
    assert skills["bump-version"].description == "Bump the version"
    assert skills["changelog"].description == "Write the changelog entry"
    found = notes(plugin)
    assert (
        "skills/bump-version/SKILL.md: frontmatter name 'version-bump' differs from its folder "
        "'bump-version': the folder name is used (rename one so they match)"
    ) in found
    assert (
        "skills/changelog/SKILL.md: frontmatter has no 'name', the folder name 'changelog' is used"
    ) in found
    assert "skills/notes: has no SKILL.md, not a skill" in found


def test_a_command_shadowed_by_a_skill_of_the_same_name_is_noted() -> None:
    plugin = scan_plugin(FIXTURES / "messy-frontmatter")
    skills = [s for s in children(plugin, SkillCustomization) if s.name == "review"]
    assert [s.uri.rsplit("/", 2)[-2:] for s in skills] == [["review", "SKILL.md"]]
    assert (
        "commands/review.md: command 'review' has the same name as a skill: the skill is used and "
        "the command is hidden (rename one)"
    ) in notes(plugin)
    assert "lint" in {s.name for s in skills + children(plugin, SkillCustomization)}


def test_agent_tools_split_only_on_top_level_commas() -> None:
    plugin = scan_plugin(FIXTURES / "messy-frontmatter")
    (explorer,) = children(plugin, AgentCustomization)
    assert explorer.tools == ("Read", "Bash(git log:*, git show:*)", "Agent(a, b)")
    assert explorer.model == "fast"


def test_rule_globs_keep_brace_alternatives_together(tmp_path: Path) -> None:
    (tmp_path / "style.md").write_text('---\nglobs: "*.{ts,tsx}, docs/**"\n---\n', encoding="utf-8")
    (rule,) = scan_directory(tmp_path, contents="rule").children or ()
    assert rule.to_dict()["globs"] == ["*.{ts,tsx}", "docs/**"]


def test_frontmatter_rules_are_the_loaders_a_tab_after_the_colon_is_valid() -> None:
    assert parse_frontmatter("---\nname:\tvalue\n---\nbody") == ({"name": "value"}, "body")


# -- file rules (M2) ---------------------------------------------------------------------------


@posix_only
def test_symlink_to_dev_zero_and_a_fifo_are_refused_and_siblings_load(tmp_path: Path) -> None:
    root = copy_fixture("messy-frontmatter", tmp_path)
    (root / "agents" / "zero.md").symlink_to("/dev/zero")
    os.mkfifo(root / "agents" / "pipe.md")
    plugin = scan_plugin(root)
    assert [a.name for a in children(plugin, AgentCustomization)] == ["explorer"]
    found = notes(plugin)
    assert "agents/pipe.md: is a FIFO (named pipe), not a regular file, skipped" in (found)
    assert "agents/zero.md: is a device, not a regular file, skipped" in found


@posix_only
def test_watched_directory_applies_the_same_rules(tmp_path: Path) -> None:
    (tmp_path / "ok.md").write_text("---\ndescription: fine\n---\n", encoding="utf-8")
    (tmp_path / "x.md").symlink_to("/dev/zero")
    (tmp_path / "gone.md").symlink_to(tmp_path / "missing.md")
    agents = scan_directory(tmp_path, contents="agent")
    assert [a.name for a in agents.children or ()] == ["ok"]
    assert notes(agents) == [
        "gone.md: is a broken symlink (its target does not exist), skipped",
        "x.md: is a device, not a regular file, skipped",
    ]


@posix_only
def test_broken_symlinks_in_a_plugin_are_noted(tmp_path: Path) -> None:
    root = copy_fixture("direct-mcp", tmp_path)
    (root / "skills" / "gone").mkdir(parents=True)
    (root / "skills" / "gone" / "SKILL.md").symlink_to(root / "nowhere.md")
    (root / "hooks").mkdir()
    (root / "hooks" / "hooks.json").symlink_to(root / "nowhere.json")
    plugin = scan_plugin(root)
    assert plugin.load is not None
    assert plugin.load.kind == "degraded"
    assert notes(plugin) == [
        "skills/gone/SKILL.md: is a broken symlink (its target does not exist), skipped",
        "hooks/hooks.json: is a broken symlink (its target does not exist), skipped",
    ]


@pytest.mark.parametrize("name", ["hooks/hooks.json", ".mcp.json"])
def test_100000_levels_of_json_are_a_note_not_a_recursion_error(tmp_path: Path, name: str) -> None:
    root = copy_fixture("messy-frontmatter", tmp_path)
    (root / name).parent.mkdir(exist_ok=True)
    (root / name).write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    plugin = scan_plugin(root)
    assert plugin.load is not None
    assert plugin.load.kind == "degraded"
    assert f"{name}: nests deeper than 64 levels (100000), skipped" in notes(plugin)


def test_a_deep_manifest_is_an_error_for_that_plugin_only(tmp_path: Path) -> None:
    root = tmp_path / "p"
    (root / ".claude-plugin").mkdir(parents=True)
    (root / ".claude-plugin" / "plugin.json").write_text("{" * 5000, encoding="utf-8")
    plugin = scan_plugin(root)
    assert plugin.load is not None
    assert (plugin.load.kind, plugin.children) == ("error", None)
    assert message(plugin) == (".claude-plugin/plugin.json: nests deeper than 64 levels (5000)")


def test_an_oversized_file_is_not_read(tmp_path: Path) -> None:
    big = tmp_path / "big.md"
    with big.open("wb") as handle:
        handle.truncate(1024 * 1024 + 1)  # sparse: no real allocation
    agents = scan_directory(tmp_path, contents="agent")
    assert notes(agents) == ["big.md: is larger than 1048576 bytes, skipped"]


def test_a_relative_plugin_root_works(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    copy_fixture("direct-mcp", tmp_path)
    monkeypatch.chdir(tmp_path)
    plugin = scan_plugin("direct-mcp")
    assert plugin.uri == (tmp_path / "direct-mcp").as_uri()
    assert [s.name for s in children(plugin, McpServerCustomization)] == ["search", "files"]
    relative_dir = scan_directory("direct-mcp", contents="mcpServer")
    assert relative_dir.uri == (tmp_path / "direct-mcp").as_uri()


def test_declared_skills_may_name_a_skill_file_a_skill_folder_or_nothing_usable(
    tmp_path: Path,
) -> None:
    root = copy_fixture("manifest-paths", tmp_path)
    manifest = root / ".claude-plugin" / "plugin.json"
    data = json.loads(manifest.read_text(encoding="utf-8"))
    data["skills"] = [
        "./skill-packs/release/SKILL.md",
        "./skill-packs/triage",
        "./config/hooks.json",
    ]
    manifest.write_text(json.dumps(data), encoding="utf-8")
    plugin = scan_plugin(root)
    assert [s.name for s in children(plugin, SkillCustomization)] == ["release", "triage", "ship"]
    assert "config/hooks.json: is not a skill folder or a folder of skills, skipped" in notes(
        plugin
    )
