"""The rulebook: per-tool and per-pack checks, one severity policy, and one set of codes for
``customtools validate`` and ``customtools.testing.check_pack``."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from customtools import CustomTool, Type
from customtools._loading._records import MetadataFile, ToolSource
from customtools._rules import (
    RULES,
    Finding,
    ToolSite,
    check_metadata,
    check_names,
    check_tool,
    empty_pack,
    severity_for,
)
from customtools.cli import run
from customtools.testing import Finding as PublicFinding
from customtools.testing import validate_pack

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures"


def _tool(parameters: Mapping[str, Any] | None = None, **fields: Any) -> CustomTool:
    fields.setdefault("name", "probe")
    fields.setdefault("description", "Probes.")
    return CustomTool(
        execute=lambda *args: "ok",
        parameters=parameters if parameters is not None else Type.Object({}),
        **fields,
    )


def _codes(findings: list[Finding]) -> list[tuple[str, str, str | None]]:
    return [(f.severity, f.code, f.pointer) for f in findings]


# -- the headline case -----------------------------------------------------------------------


def test_an_optional_default_below_its_minimum_is_an_invalid_default() -> None:
    tool = _tool(Type.Object({"n": Type.Optional(Type.Integer(minimum=1, default=0))}))

    (finding,) = check_tool(tool, path="/p/tool.py")

    assert (finding.severity, finding.code) == ("error", "invalid-default")
    assert (finding.tool_name, finding.path, finding.pointer) == (
        "probe",
        "/p/tool.py",
        "/properties/n",
    )
    assert finding.message == (
        "the default of property 'n' breaks its own schema: 0 is less than the minimum of 1;"
        " the adapter fills it in when the model leaves it out, and the call then fails: fix"
        " the default or the constraint"
    )


def test_headline_tool_fails_validate_strict_and_check_pack_with_the_same_code(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copy(FIXTURES / "rulebook" / "bad_default.py", tmp_path / "bad_default.py")

    code = run(["validate", "--strict", "--format", "json", str(tmp_path)])
    cli = json.loads(capsys.readouterr().out)["findings"]
    report = _validate(tmp_path, strict=True)

    assert code == 1
    assert [(f["severity"], f["code"]) for f in cli] == [("error", "invalid-default")]
    assert [(f.severity, f.code) for f in report.findings] == [("error", "invalid-default")]
    assert not report.passed()


# -- per-tool rules --------------------------------------------------------------------------


def test_valid_defaults_and_examples_give_no_finding() -> None:
    schema = Type.Object(
        {
            "n": Type.Optional(Type.Integer(minimum=1, default=5, examples=[1, 7])),
            "mode": Type.Optional(Type.StringEnum(["a", "b"], default="a")),
            "tags": Type.Optional(Type.Array(Type.String(), default=[])),
        }
    )

    assert check_tool(_tool(schema)) == []


def test_nested_defaults_and_examples_are_checked_where_they_are() -> None:
    schema = {
        "type": "object",
        "properties": {
            "opts": {
                "type": "object",
                "properties": {"depth": {"type": "integer", "maximum": 3, "default": 9}},
                "examples": [{"depth": 1}, {"depth": "deep"}],
            },
        },
        "examples": [{"opts": {"depth": 2}}],
    }

    found = check_tool(_tool(schema))

    assert _codes(found) == [
        ("error", "invalid-example", "/properties/opts/examples/1"),
        ("error", "invalid-default", "/properties/opts/properties/depth"),
    ]
    assert "example 1 of property 'opts' breaks its own schema: /depth: \"deep\"" in (
        found[0].message
    )
    assert "the schema at /properties/opts/properties/depth" in found[1].message


def test_a_default_is_checked_against_the_definition_it_refers_to() -> None:
    schema = {
        "type": "object",
        "$defs": {"Mode": {"enum": ["fast", "slow"]}},
        "properties": {"mode": {"$ref": "#/$defs/Mode", "default": "medium"}},
    }

    assert _codes(check_tool(_tool(schema))) == [("error", "invalid-default", "/properties/mode")]


def test_required_names_must_be_defined_at_every_object_level() -> None:
    schema = {
        "type": "object",
        "properties": {
            "a": {"type": "string"},
            "inner": {"type": "object", "properties": {}, "required": ["x/y"]},
        },
        "required": ["a", "b"],
    }

    found = check_tool(_tool(schema))

    assert _codes(found) == [
        ("error", "required-not-defined", ""),
        ("error", "required-not-defined", "/properties/inner"),
    ]
    assert found[0].message.startswith("'b' is required (at the root) but has no entry")
    assert "'x/y' is required (at /properties/inner)" in found[1].message


def test_required_in_a_branch_or_matched_by_a_pattern_is_defined() -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
        "patternProperties": {"^x-": {"type": "string"}},
        "required": ["x-trace"],
        "properties_note": "ignored",
        "anyOf": [{"required": ["a"]}, {"required": ["b"]}],
    }

    codes = {f.code for f in check_tool(_tool(schema))}

    assert "required-not-defined" not in codes


def test_an_empty_description_is_an_error() -> None:
    (finding,) = check_tool(_tool(description="  "))

    assert (finding.severity, finding.code) == ("error", "empty-description")
    assert "say what it does and when to use it" in finding.message


@pytest.mark.parametrize(
    ("fields", "schema", "pointer", "words"),
    [
        ({"description": "Reads\u200b files."}, None, None, "the description of tool 'probe'"),
        ({"label": "Re\u202eader"}, None, None, "the label of tool 'probe'"),
        (
            {},
            Type.Object({"path": Type.String(description="A path\U000e0041")}),
            "/properties/path/description",
            "the description of property 'path'",
        ),
        (
            {},
            Type.Object({"pa\u200dth": Type.String()}),
            "/properties/pa\u200dth",
            "the property name 'pa\\u200dth'",
        ),
    ],
)
def test_invisible_characters_in_prompt_text_are_flagged(
    fields: dict[str, str], schema: dict[str, Any] | None, pointer: str | None, words: str
) -> None:
    (finding,) = check_tool(_tool(schema, **fields))

    assert (finding.severity, finding.code, finding.pointer) == (
        "warning",
        "invisible-unicode",
        pointer,
    )
    assert words in finding.message
    assert "invisible or direction-changing character(s) (U+" in finding.message
    (strict,) = check_tool(_tool(schema, **fields), strict=True)
    assert strict.severity == "error"


def test_long_listings_of_invisible_characters_are_cut() -> None:
    (finding,) = check_tool(_tool(description="x" + "\u200b" * 5))

    assert "5 invisible or direction-changing character(s)" in finding.message
    assert "U+200B ZERO WIDTH SPACE at 3 and 2 more" in finding.message


def test_provider_rules_are_warnings_with_a_pointer() -> None:
    tool = _tool(Type.Object({"n": Type.Optional(Type.Integer(default=1))}), strict=True)

    found = check_tool(tool)

    assert ("warning", "openai-strict-keyword", "/properties/n") in _codes(found)
    assert ("warning", "openai-strict-optional-property", "/properties/n") in _codes(found)


def test_a_schema_changed_after_building_the_tool_is_invalid_and_never_raises() -> None:
    class Exploding(dict):  # type: ignore[type-arg]
        def get(self, *args: Any) -> Any:
            raise RuntimeError("no reading me")

    schema: dict[str, Any] = {"type": "object", "properties": {"x": {"type": "string"}}}
    tool = _tool(schema)
    schema["properties"]["x"] = {"type": "nonsense"}
    schema["properties"]["y"] = Exploding(type="string")

    found = check_tool(tool)

    assert found
    assert {f.code for f in found} == {"invalid-schema"}
    assert any("RuntimeError: no reading me" in f.message for f in found)


def test_a_schema_made_cyclic_after_building_the_tool_is_invalid_and_bounded() -> None:
    schema: dict[str, Any] = {"type": "object", "properties": {}}
    tool = _tool(schema, strict=True)
    schema["properties"] = {"a": schema, "b": schema}

    (finding,) = check_tool(tool)

    assert (finding.code, finding.pointer) == ("invalid-schema", "")
    assert "(or refers to itself)" in finding.message


# -- pack rules ------------------------------------------------------------------------------


def test_names_conflict_with_builtins_and_earlier_tools_and_case_twins_are_similar() -> None:
    sites = [
        ToolSite(name="read", path="a.py", line=3, pack="p1"),
        ToolSite(name="fetch", path="a.py", line=9, pack="p1"),
        ToolSite(name="fetch", path="b.py", line=2, pack="p2"),
        ToolSite(name="Fetch", path="b.py", line=5, pack="p2"),
    ]

    found = check_names(sites, builtins=["read"])

    assert [(site.path, f.code, f.severity, f.line) for site, f in found] == [
        ("a.py", "name-conflict", "error", 3),
        ("b.py", "name-conflict", "error", 2),
        ("b.py", "similar-name", "warning", 5),
    ]
    assert "built-in" in found[0][1].message
    assert found[1][1].message == (
        "tool name 'fetch' is already taken by the tool from a.py (pack p1); the tool from b.py"
        " (pack p2) was left out: rename one of them"
    )
    assert check_names(sites[3:], strict=True) == []
    assert check_names(sites[1:2] + sites[3:], strict=True)[0][1].severity == "error"


def test_metadata_named_like_a_tool_or_with_hidden_text_is_a_warning() -> None:
    source = ToolSource(provider="configured", provider_name="Configured path", level="user")
    items = [
        MetadataFile(
            path=f"/p/{name}.md",
            resolved_path=f"/p/{name}.md",
            name=name,
            description=description,
            source=source,
            format="md",
        )
        for name, description in (("fetch", "Gets."), ("notes", "Takes\u2066 notes."))
    ]

    found = check_metadata(items, {"fetch": "/p/fetch.py"})

    assert [(f.code, f.path, f.severity) for f in found] == [
        ("metadata-name-taken", "/p/fetch.md", "warning"),
        ("invisible-unicode", "/p/notes.md", "warning"),
    ]
    assert "also a tool from /p/fetch.py" in found[0].message


def test_an_empty_pack_names_itself() -> None:
    finding = empty_pack("tools/", path="/abs/tools")

    assert (finding.severity, finding.code, finding.path) == ("error", "empty-pack", "/abs/tools")
    assert finding.message.startswith("no tool loaded from tools/: check the path")


# -- policy ----------------------------------------------------------------------------------


def test_strict_makes_warnings_errors_and_leaves_notices_alone() -> None:
    assert severity_for("similar-name") == "warning"
    assert severity_for("similar-name", strict=True) == "error"
    assert severity_for("skipped-file", strict=True) == "notice"
    assert severity_for("invalid-default") == "error"
    assert severity_for("some-new-diagnostic") == "notice"
    assert severity_for("some-new-load-error", unknown="error") == "error"


def test_every_rule_has_a_code_matching_its_key_and_a_summary() -> None:
    for code, rule in RULES.items():
        assert rule.code == code
        assert re.fullmatch(r"[a-z]+(-[a-z]+)*", code)
        assert rule.summary


def test_docs_show_one_table_with_every_code_and_its_severity() -> None:
    text = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    section = text.split("### What is checked", 1)[1].split("\n### ", 1)[0].splitlines()
    first = next(i for i, line in enumerate(section) if line.startswith("|"))
    table = [line for line in section[first:] if line.startswith("|")]
    assert section[first : first + len(table)] == table  # one table in the section
    documented: dict[str, str] = {}
    for row in table[2:]:
        cells = [cell.strip() for cell in row.strip("|").split("|")]
        for code in re.findall(r"`([a-z-]+)`", cells[0]):
            assert code not in documented, f"{code} is in the table twice"
            documented[code] = cells[1]

    assert documented == {code: rule.severity for code, rule in RULES.items()}


def test_a_finding_round_trips_through_its_json_form() -> None:
    finding = Finding(
        severity="warning",
        code="x",
        message="m",
        path="/a.py",
        tool_name="t",
        pointer="/properties/a~1b",
        line=3,
        detail="tb",
    )

    assert Finding.from_dict(finding.to_dict()) == finding
    assert PublicFinding is Finding
    assert str(finding) == "warning: /a.py:3 tool 't' [x]: m"
    assert Finding(severity="notice", code="y", message="m").to_dict() == {
        "severity": "notice",
        "code": "y",
        "message": "m",
    }


# -- one rulebook: the command and the test helper agree ----------------------------------------


def _validate(path: Path, *, strict: bool) -> Any:
    import anyio

    return anyio.run(lambda: validate_pack(path, strict=strict))


def _where(path: str | None) -> str | None:
    if path is None:
        return None
    parts = Path(path).parts
    return parts[-2] if parts[-1] == "__init__.py" else parts[-1]


def _pack_copy(tmp_path: Path, name: str) -> Path:
    target = tmp_path / name
    # The hanging factory costs the loader's 10 s bound in both; the loader's own tests cover it.
    shutil.copytree(
        FIXTURES / name, target, ignore=shutil.ignore_patterns("*hangs*", "__pycache__")
    )
    return target


@pytest.mark.parametrize("name", ["good", "broken", "rulebook", "empty"])
@pytest.mark.parametrize("strict", [False, True])
def test_validate_and_check_pack_report_the_same_codes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, strict: bool
) -> None:
    if name == "empty":
        pack = tmp_path / "empty"
        pack.mkdir()
    else:
        pack = _pack_copy(tmp_path, name)
    # slow-import is the CLI's own timing check (validate_pack has none): on a loaded machine
    # a module of the broken pack once took over the default half second, in strict mode
    flags = ["--slow-import", "600", *(["--strict"] if strict else [])]

    code = run(["validate", "--format", "json", *flags, str(pack)])
    cli = json.loads(capsys.readouterr().out)
    report = _validate(pack, strict=strict)

    from_cli = sorted((f["code"], f["severity"], _where(f["file"])) for f in cli["findings"])
    from_testing = sorted((f.code, f.severity, _where(f.path)) for f in report.findings)
    assert from_cli == from_testing
    assert (code == 0) == report.passed() == cli["summary"]["passed"]
    if name == "good":
        assert from_cli == []
    else:
        assert from_cli
