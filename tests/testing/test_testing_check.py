"""check_pack / validate_pack: the validate check a tool pack runs in its own test suite."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from customtools.testing import Finding, PackReport, check_pack, validate_pack


def _tool(
    path: Path, name: str, *, description: str = "Does a thing.", params: str = "Type.Object({})"
) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        textwrap.dedent(
            f"""
            from customtools import CustomTool

            def factory(api):
                Type = api.typebox
                return CustomTool(
                    name={name!r},
                    description={description!r},
                    parameters={params},
                    execute=lambda tool_call_id, params, on_update, ctx, signal: "ok",
                )
            """
        ),
        encoding="utf-8",
    )
    return path


def _codes(report: PackReport) -> list[tuple[str, str, str | None]]:
    return [(f.severity, f.code, f.tool_name) for f in report.findings]


def test_a_clean_pack_passes_and_reports_its_tools(tmp_path: Path) -> None:
    _tool(tmp_path / "pack" / "alpha.py", "alpha", params='Type.Object({"n": Type.Integer()})')
    _tool(tmp_path / "pack" / "beta.py", "beta")
    (tmp_path / "pack" / "gamma.md").write_text("---\nname: gamma\n---\n")

    report = check_pack(tmp_path / "pack", strict=True)

    assert report.findings == ()
    assert report.tool_names == ("alpha", "beta")
    assert report.metadata_names == ("gamma",)
    assert report.paths == (str(tmp_path / "pack"),)
    assert report.passed(strict=True)


def test_a_missing_description_is_an_error(tmp_path: Path) -> None:
    _tool(tmp_path / "bare.py", "bare", description="   ")

    with pytest.raises(AssertionError) as caught:
        check_pack(tmp_path / "bare.py")

    assert str(caught.value) == (
        "the tool pack check failed:\n"
        f"tool pack {tmp_path / 'bare.py'}: 1 tool(s), 1 error(s), 0 warning(s)\n"
        f"  error: {tmp_path / 'bare.py'} tool 'bare' [empty-description]: tool 'bare' has no"
        " description; models choose tools by it, so say what it does and when to use it"
    )


def test_a_default_that_breaks_its_own_schema_is_an_error(tmp_path: Path) -> None:
    params = (
        'Type.Object({"limit": Type.Optional(Type.Integer(minimum=1, default=0)),'
        ' "mode": Type.Optional(Type.StringEnum(["a", "b"], default="a")),'
        ' "path": Type.String()})'
    )
    _tool(tmp_path / "limits.py", "limits", params=params)

    report = _run(tmp_path / "limits.py")

    assert _codes(report) == [("error", "invalid-default", "limits")]
    assert report.findings[0].pointer == "/properties/limit"
    assert report.findings[0].message.startswith(
        "the default of property 'limit' breaks its own schema: 0 is less than the minimum of 1;"
    )
    with pytest.raises(AssertionError, match=r"\[invalid-default\]"):
        check_pack(tmp_path / "limits.py")


def test_a_schema_that_no_longer_compiles_is_an_error(tmp_path: Path) -> None:
    # CustomTool checks its schema when built; a factory that edits the mapping afterwards
    # slips past that check, and this one catches it.
    (tmp_path / "mutated.py").write_text(
        textwrap.dedent(
            """
            from customtools import CustomTool

            def factory(api):
                schema = {"type": "object", "properties": {"x": {"type": "string"}}}
                tool = CustomTool(name="mutated", description="d", parameters=schema,
                                  execute=lambda tool_call_id, params, on_update, ctx, signal: "")
                schema["properties"]["x"] = {"type": "nonsense"}
                return tool
            """
        ),
        encoding="utf-8",
    )

    report = _run(tmp_path / "mutated.py")

    assert _codes(report)[0] == ("error", "invalid-schema", "mutated")
    assert report.findings[0].message.startswith("the parameters schema does not compile: ")


def test_required_names_without_a_property_are_errors(tmp_path: Path) -> None:
    params = '{"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a", "b"]}'
    _tool(tmp_path / "loose.py", "loose", params=params)

    report = _run(tmp_path / "loose.py")

    assert _codes(report) == [("error", "required-not-defined", "loose")]
    assert "'b' is required (at the root) but has no entry in 'properties'" in (
        report.findings[0].message
    )


def test_strict_makes_warnings_errors(tmp_path: Path) -> None:
    _tool(tmp_path / "hidden.py", "hidden", description="Reads a file.\u202e")

    lenient = check_pack(tmp_path / "hidden.py")  # warnings pass unless strict

    assert _codes(lenient) == [("warning", "invisible-unicode", "hidden")]
    assert "U+202E RIGHT-TO-LEFT OVERRIDE at 13" in lenient.findings[0].message
    with pytest.raises(AssertionError, match=r"check failed \(strict\):") as caught:
        check_pack(tmp_path / "hidden.py", strict=True)
    assert "error: " in str(caught.value)
    assert _codes(_run(tmp_path / "hidden.py", strict=True)) == [
        ("error", "invisible-unicode", "hidden")
    ]


def test_loader_errors_keep_their_codes(tmp_path: Path) -> None:
    _tool(tmp_path / "a" / "same.py", "same")
    _tool(tmp_path / "b" / "same.py", "same")
    _tool(tmp_path / "b" / "bash.py", "bash")
    (tmp_path / "b" / "broken.py").write_text("def factory(api):\n    return 42\n")

    report = _run(tmp_path / "a", tmp_path / "b", builtin_tool_names=["bash"])

    assert sorted(_codes(report)) == [
        ("error", "invalid-return", None),
        ("error", "name-conflict", "bash"),
        ("error", "name-conflict", "same"),
    ]
    assert report.tool_names == ("same",)


def test_similar_names_and_metadata_named_like_a_tool_are_warnings(tmp_path: Path) -> None:
    _tool(tmp_path / "pack" / "fetch.py", "fetch")
    _tool(tmp_path / "pack" / "fetch_upper.py", "Fetch")
    (tmp_path / "pack" / "fetch.md").write_text("---\nname: fetch\ndescription: x\n---\n")

    report = _run(tmp_path / "pack")

    assert _codes(report) == [
        ("warning", "similar-name", None),
        ("warning", "metadata-name-taken", "fetch"),
    ]
    assert report.passed()
    assert not report.passed(strict=True)


def test_an_empty_pack_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()

    assert _codes(_run(tmp_path / "empty")) == [("error", "empty-pack", None)]


def test_skipped_files_are_notices_that_never_fail(tmp_path: Path) -> None:
    _tool(tmp_path / "pack" / "alpha.py", "alpha")
    (tmp_path / "pack" / "notes.txt").write_text("not a tool")

    report = check_pack(tmp_path / "pack", strict=True)

    assert _codes(report) == [("notice", "skipped-file", None)]
    assert report.notices == report.findings
    assert "1 notice(s)" in report.format()


def test_the_report_has_a_json_form(tmp_path: Path) -> None:
    _tool(tmp_path / "bare.py", "bare", description="")

    data = _run(tmp_path / "bare.py").to_dict()

    assert data == {
        "paths": [str(tmp_path / "bare.py")],
        "tools": ["bare"],
        "metadata": [],
        "findings": [
            {
                "severity": "error",
                "code": "empty-description",
                "message": data["findings"][0]["message"],
                "path": str(tmp_path / "bare.py"),
                "toolName": "bare",
            }
        ],
        "strict": False,
    }
    assert Finding(severity="warning", code="x", message="m").to_dict() == {
        "severity": "warning",
        "code": "x",
        "message": "m",
    }
    assert str(Finding(severity="warning", code="x", message="m")) == "warning: (pack) [x]: m"


@pytest.mark.anyio
async def test_validate_pack_is_awaitable_and_never_fails_by_itself(tmp_path: Path) -> None:
    _tool(tmp_path / "bare.py", "bare", description="")

    report = await validate_pack(tmp_path / "bare.py")

    assert not report.passed()
    assert [f.code for f in report.errors] == ["empty-description"]
    assert report.warnings == ()
    with pytest.raises(ValueError, match="needs at least one tool file"):
        await validate_pack()


def _run(*paths: Path, **options: object) -> PackReport:
    import anyio

    return anyio.run(lambda: validate_pack(*paths, **options))  # type: ignore[arg-type]
