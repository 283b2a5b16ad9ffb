"""Building containers from disk (checklist item 6) and mapping loader reports to load states."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from customtools.host import (
    AgentCustomization,
    ClientPluginCustomization,
    CustomizationError,
    HookCustomization,
    McpServerCustomization,
    PromptCustomization,
    RuleCustomization,
    SkillCustomization,
    load_states_from_loader,
    parse_frontmatter,
    plugin_parser,
    scan_directory,
    scan_plugin,
)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def make_plugin(root: Path) -> Path:
    write(root / ".plugin" / "plugin.json", json.dumps({"name": "review-kit", "version": "1"}))
    write(
        root / "agents" / "reviewer.md",
        "---\nname: reviewer\ndescription: Reviews diffs\nmodel: small\ntools: [read, grep]\n"
        "---\nYou review code.\n",
    )
    write(
        root / "skills" / "lint" / "SKILL.md",
        "---\nname: lint\ndescription: Lint files\ndisable-model-invocation: true\n---\nbody",
    )
    write(root / "commands" / "fix.md", "---\ndescription: Fix it\n---\n")
    write(root / "prompts" / "summary.prompt.md", "---\ndescription: Summarize\n---\n")
    write(root / "rules" / "python.mdc", "---\ndescription: Python style\nglobs: '*.py'\n---\n")
    write(root / "rules" / "always.mdc", "---\ndescription: Always\nalwaysApply: true\n---\n")
    write(
        root / "hooks" / "hooks.json",
        json.dumps(
            {
                "hooks": {
                    "PreToolUse": [
                        {"matcher": "Bash", "hooks": []},
                        {"matcher": "Edit", "hooks": []},
                    ]
                }
            }
        ),
    )
    write(
        root / ".mcp.json",
        '{\n  "mcpServers": {\n    "files": {\n      "command": "x"\n    }\n  }\n}\n',
    )
    return root


def by_type(children: Any, cls: type) -> list[Any]:
    return [c for c in children if isinstance(c, cls)]


def test_plugin_root_parses_every_component(tmp_path: Path) -> None:
    plugin = scan_plugin(make_plugin(tmp_path / "kit"))
    assert plugin.name == "review-kit"
    assert plugin.load is not None
    assert plugin.load.kind == "loaded"
    assert plugin.children is not None
    (agent,) = by_type(plugin.children, AgentCustomization)
    assert (agent.name, agent.description, agent.model, agent.tools) == (
        "reviewer",
        "Reviews diffs",
        "small",
        ("read", "grep"),
    )
    assert agent.uri == (tmp_path / "kit" / "agents" / "reviewer.md").as_uri()
    skills = {s.name: s for s in by_type(plugin.children, SkillCustomization)}
    assert set(skills) == {"lint", "fix"}
    assert by_type(plugin.children, PromptCustomization)[0].name == "summary"
    hooks = by_type(plugin.children, HookCustomization)
    assert [(h.event, h.matcher) for h in hooks] == [("PreToolUse", "Bash"), ("PreToolUse", "Edit")]
    assert len({h.id for h in hooks}) == 2
    (server,) = by_type(plugin.children, McpServerCustomization)
    assert (server.name, server.state.kind) == ("files", "stopped")
    assert server.range is not None
    assert (server.range.start_line, server.range.start_character) == (2, 4)
    assert (server.range.end_line, server.range.end_character) == (4, 5)


def test_item6_disable_model_invocation_maps_to_camel_case(tmp_path: Path) -> None:
    plugin = scan_plugin(make_plugin(tmp_path / "kit"))
    assert plugin.children is not None
    lint = next(c for c in plugin.children if c.name == "lint")
    assert lint.to_dict()["disableModelInvocation"] is True


def test_item6_string_globs_become_a_list_and_missing_always_apply_stays_absent(
    tmp_path: Path,
) -> None:
    plugin = scan_plugin(make_plugin(tmp_path / "kit"))
    assert plugin.children is not None
    rules = {r.name: r for r in by_type(plugin.children, RuleCustomization)}
    assert rules["python"].globs == ("*.py",)
    assert rules["python"].always_apply is None
    assert "alwaysApply" not in rules["python"].to_dict()
    assert rules["always"].always_apply is True


def test_item6_skill_folder_name_mismatch_keeps_the_folder_name_with_a_note(
    tmp_path: Path,
) -> None:
    root = make_plugin(tmp_path / "kit")
    write(root / "skills" / "format" / "SKILL.md", "---\nname: formatter\n---\n")
    plugin = scan_plugin(root)
    assert plugin.load is not None
    assert plugin.load.kind == "degraded"
    assert plugin.load.message == (
        "skills/format/SKILL.md: frontmatter name 'formatter' differs from its folder 'format': "
        "the folder name is used (rename one so they match)"
    )
    assert plugin.children is not None
    names = {c.name for c in plugin.children}
    assert "format" in names
    assert "formatter" not in names


def test_a_broken_part_degrades_and_nothing_loading_is_an_error(tmp_path: Path) -> None:
    root = make_plugin(tmp_path / "kit")
    write(root / "agents" / "broken.md", "---\nname: [unclosed\n---\n")
    plugin = scan_plugin(root)
    assert plugin.load is not None
    assert plugin.load.kind == "degraded"
    assert "agents/broken.md: frontmatter is not valid YAML" in (plugin.load.message or "")
    only_broken = tmp_path / "only"
    write(only_broken / "hooks" / "hooks.json", "{not json")
    failed = scan_plugin(only_broken)
    assert failed.load is not None
    assert (failed.load.kind, failed.children) == ("error", ())
    assert failed.load.message == (
        "hooks/hooks.json: is not valid JSON (Expecting property name enclosed in double quotes "
        "at line 1 column 2), skipped"
    )


def test_missing_root_or_bad_manifest_is_an_error_with_children_absent(tmp_path: Path) -> None:
    missing = scan_plugin(tmp_path / "nope")
    assert missing.load is not None
    assert (missing.load.kind, missing.children) == ("error", None)
    root = tmp_path / "bad"
    write(root / ".claude-plugin" / "plugin.json", "{}")
    bad = scan_plugin(root)
    assert bad.load is not None
    assert "'name' must be a string" in (bad.load.message or "")


def test_watched_directories(tmp_path: Path) -> None:
    write(tmp_path / "skills" / "a" / "SKILL.md", "---\nname: a\n---\n")
    skills = scan_directory(tmp_path / "skills", contents="skill", writable=True)
    assert [c.name for c in skills.children or ()] == ["a"]
    assert skills.to_dict()["writable"] is True
    write(
        tmp_path / "instructions" / "plugin.instructions.md",
        "---\nname: other\napplyTo: '**/*.ts'\n---\n",
    )
    rules = scan_directory(tmp_path / "instructions", contents="rule")
    (rule,) = rules.children or ()
    assert isinstance(rule, RuleCustomization)
    assert (rule.name, rule.globs) == ("plugin", ("**/*.ts",))
    empty = scan_directory(tmp_path / "not-yet", contents="agent")
    assert empty.load is not None
    assert (empty.load.kind, empty.children) == ("loaded", ())
    with pytest.raises(ValueError, match="not a child customization type"):
        scan_directory(tmp_path, contents="plugin")


def test_frontmatter_parsing() -> None:
    assert parse_frontmatter("no frontmatter") == ({}, "no frontmatter")
    assert parse_frontmatter("---\na: 1\n---\nbody") == ({"a": 1}, "body")
    with pytest.raises(CustomizationError, match="must be a mapping"):
        parse_frontmatter("---\n- 1\n---\n", path="x.md")


def test_plugin_parser_maps_a_client_plugin_to_disk(tmp_path: Path) -> None:
    root = make_plugin(tmp_path / "kit")
    parse = plugin_parser(lambda plugin: root)
    published = ClientPluginCustomization(
        id="client-plugin-1", uri="virtual://ide/kit", name="Kit", nonce="n1"
    )
    parsed = parse(published)
    assert (parsed.id, parsed.uri, parsed.name) == ("client-plugin-1", "virtual://ide/kit", "Kit")
    assert parsed.children


@dataclass
class Source:
    path: str


@dataclass
class LoadError:
    path: str
    error: Any
    source: Any


@dataclass
class Metadata:
    path: str
    name: str
    description: str
    source: Any


@dataclass
class Loaded:
    source: Any


@dataclass
class Result:
    tools: list[Any]
    errors: list[Any]
    metadata: list[Any]


def test_loader_errors_and_metadata_map_onto_load_states() -> None:
    good, mixed, bad = Source("/u/.customtools/tools"), Source("/p/tools"), Source("/q/tools")
    result = Result(
        tools=[Loaded(good), Loaded(mixed)],
        errors=[
            LoadError("/p/tools/x.py", ImportError("no module named y"), mixed),
            LoadError("/q/tools/z.py", SyntaxError("bad"), bad),
            LoadError("/q/tools/w.py", "factory returned 3", bad),
        ],
        metadata=[Metadata("/r/tools/README.md", "readme", "docs", "/r/tools")],
    )
    states = load_states_from_loader(result)
    assert list(states) == ["/p/tools", "/q/tools", "/r/tools", "/u/.customtools/tools"]
    assert states["/u/.customtools/tools"].kind == "loaded"
    assert states["/r/tools"].kind == "loaded"
    assert states["/p/tools"].to_dict() == {
        "kind": "degraded",
        "message": "x.py: ImportError: no module named y",
    }
    assert states["/q/tools"].to_dict() == {
        "kind": "error",
        "message": "z.py: SyntaxError: bad; w.py: factory returned 3",
    }
    no_source = load_states_from_loader(errors=[LoadError("/s/a.py", ValueError(), None)])
    assert no_source == {"/s": no_source["/s"]}
    assert no_source["/s"].message == "a.py: ValueError with no message"


class Unprintable(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no")


def test_loader_errors_are_described_safely() -> None:
    states = load_states_from_loader(
        errors=[
            LoadError("/s/a\x1b[2J.py", Unprintable(), None),
            LoadError("/s/b.py", "line one\nline two", None),
        ]
    )
    assert states["/s"].message == (
        "a\\x1b[2J.py: Unprintable (its message could not be read: __str__ failed); "
        "b.py: line one\\nline two"
    )
