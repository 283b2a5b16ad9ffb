"""``customtools contract``: the contract file, the gate's baselines and its report formats."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import jsonschema
import pytest
import xmlschema

from ._helpers import ROOT, Outcome

SPECS = ROOT / "tests" / "fixtures" / "specs"
CI = ROOT / "docs" / "examples" / "ci"

SEARCH = """\
from customtools import CustomTool, Type
{permissions}

def factory(api):
    return CustomTool(
        name="search",
        description="Search the notes.",
        parameters=Type.Object({{{params}}}),
        execute=lambda *args: "ok",{extra}
    )
"""
QUERY = '"query": Type.String(), "limit": Type.Optional(Type.Integer(minimum=1))'


def write_pack(
    root: Path, params: str = QUERY, *, permissions: str = "", extra: str = "", version: str = ""
) -> Path:
    tools = root / "tools"
    tools.mkdir(parents=True, exist_ok=True)
    (tools / "search.py").write_text(
        SEARCH.format(params=params, permissions=permissions, extra=extra), encoding="utf-8"
    )
    if version:
        (root / "plugin.json").write_text(json.dumps({"name": "notes", "version": version}))
    return tools


@pytest.fixture
def in_repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A git work tree as the current directory."""
    monkeypatch.chdir(tmp_path)
    subprocess.run(["git", "init", "-q"], check=True)
    return tmp_path


def commit(message: str = "change") -> None:
    subprocess.run(["git", "add", "-A"], check=True)
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", message], check=True
    )


Cli = Callable[..., Outcome]


# -- export


def test_export_writes_a_deterministic_contract(cli: Cli, in_repo: Path) -> None:
    write_pack(
        in_repo,
        permissions="from customtools.isolation import Permissions\n"
        "PERMISSIONS = Permissions(net=[443])",
        version="1.2.0",
    )

    first = cli("contract", "export", "tools")
    second = cli("contract", "export", "tools", "-o", "tools.contract.json")

    assert first.code == second.code == 0
    assert first.out == (in_repo / "tools.contract.json").read_text(encoding="utf-8")
    document = json.loads(first.out)
    assert document["format"] == "customtools-contract/1"
    (pack,) = document["packs"]
    assert pack["path"] == "tools"
    assert pack["version"] == "1.2.0"
    entry = pack["tools"]["search"]
    assert entry["module"] == "search.py"
    assert entry["permissions"]["net"] == [443]
    assert entry["parameters"]["required"] == ["query"]
    assert "policy" not in pack
    assert str(in_repo) not in first.out  # nothing depends on the machine


def test_export_shows_the_execution_policy_a_pack_declares(cli: Cli, in_repo: Path) -> None:
    write_pack(in_repo)
    assert cli("contract", "export", "tools", "-o", "base.json").code == 0
    declare = "from customtools.policy import Policy\nPOLICY = Policy({})"
    write_pack(in_repo, permissions=declare.format("rate=(10, 60), max_concurrent=2"))
    assert cli("contract", "export", "tools", "-o", "declared.json").code == 0
    (pack,) = json.loads((in_repo / "declared.json").read_text(encoding="utf-8"))["packs"]
    assert pack["policy"] == {"search.py": {"maxConcurrent": 2, "rate": [10, 60.0]}}
    # The gate reads the key as information: declaring a policy, or changing it, breaks no
    # caller (even under --strict).
    declared = cli("contract", "check", "--strict", "--baseline", "base.json", "tools")
    write_pack(in_repo, permissions=declare.format("max_concurrent=1"))
    changed = cli("contract", "check", "--strict", "--baseline", "declared.json", "tools")
    assert declared.code == changed.code == 0, declared.out + changed.out
    assert "policy" not in declared.out + changed.out


def test_export_writes_nothing_when_a_module_fails(cli: Cli, in_repo: Path) -> None:
    tools = write_pack(in_repo)
    (tools / "broken.py").write_text("raise RuntimeError('no database')\n", encoding="utf-8")

    outcome = cli("contract", "export", "tools", "-o", "out.json")

    assert outcome.code == 1
    assert "no database" in outcome.err
    assert "nothing written" in outcome.err
    assert not (in_repo / "out.json").exists()


# -- check


def test_a_breaking_change_fails_naming_the_tool_the_field_and_why(cli: Cli, in_repo: Path) -> None:
    write_pack(in_repo)
    assert cli("contract", "export", "tools", "-o", "base.json").code == 0
    write_pack(in_repo, '"query": Type.String(), "limit": Type.Optional(Type.Integer(minimum=5))')

    outcome = cli("contract", "check", "--baseline", "base.json", "tools")

    assert outcome.code == 1
    assert (
        "tools/search.py:5: breaking [type-narrowed] tool 'search': parameter `limit` minimum 1"
        " -> 5; calls that pass such values are refused"
    ) in outcome.out
    assert outcome.out.rstrip().endswith("FAILED")


def test_compatible_changes_pass(cli: Cli, in_repo: Path) -> None:
    write_pack(in_repo)
    assert cli("contract", "export", "tools", "-o", "base.json").code == 0
    write_pack(in_repo, QUERY + ', "tags": Type.Optional(Type.Array(Type.String()))')

    outcome = cli("contract", "check", "--baseline", "base.json", "tools")

    assert outcome.code == 0, outcome.out
    assert "compatible [parameter-added] tool 'search': parameter `tags` was added" in outcome.out


def test_a_rename_with_former_names_passes_and_without_fails(cli: Cli, in_repo: Path) -> None:
    write_pack(in_repo)
    assert cli("contract", "export", "tools", "-o", "base.json").code == 0
    source = (in_repo / "tools" / "search.py").read_text(encoding="utf-8")
    (in_repo / "tools" / "search.py").write_text(source.replace('"search"', '"find_notes"'))

    broken = cli("contract", "check", "--baseline", "base.json", "tools")
    (in_repo / "tools" / "search.py").write_text(
        source.replace('name="search",', 'name="find_notes", former_names=["search"],')
    )
    renamed = cli("contract", "check", "--baseline", "base.json", "tools")

    assert broken.code == 1
    assert "[tool-removed] tool 'search' was removed (renamed to 'find_notes'?" in broken.out
    assert renamed.code == 0, renamed.out
    assert "[tool-renamed] tool 'find_notes' was renamed from 'search'" in renamed.out


def test_a_major_version_step_accepts_breaking_changes(cli: Cli, in_repo: Path) -> None:
    write_pack(in_repo, version="1.4.0")
    assert cli("contract", "export", "tools", "-o", "base.json").code == 0
    write_pack(in_repo, '"query": Type.String()', version="1.5.0")
    minor = cli("contract", "check", "--baseline", "base.json", "tools")
    write_pack(in_repo, '"query": Type.String()', version="2.0.0")

    major = cli("contract", "check", "--baseline", "base.json", "tools")

    assert minor.code == 1
    assert major.code == 0, major.out
    assert (
        "breaking (accepted) [parameter-removed] tool 'search': parameter `limit` was removed;"
        " calls that pass it are refused (accepted: the pack's version went from 1.4.0 to"
        " 2.0.0, a major step)"
    ) in major.out


def test_an_acknowledgement_accepts_a_change_and_an_unused_one_is_noted(
    cli: Cli, in_repo: Path
) -> None:
    write_pack(in_repo)
    assert cli("contract", "export", "tools", "-o", "base.json").code == 0
    write_pack(in_repo, '"query": Type.String()')
    (in_repo / "accept.json").write_text(
        json.dumps(
            {
                "accept": [
                    {
                        "tool": "search",
                        "code": "parameter-removed",
                        "pointer": "/parameters/properties/limit",
                        "reason": "limit was never honoured",
                    },
                    {"tool": "other", "reason": "stale"},
                ]
            }
        )
    )

    outcome = cli(
        "contract", "check", "--baseline", "base.json", "--accept", "accept.json", "tools"
    )

    assert outcome.code == 0, outcome.out
    assert "(accepted: acknowledged in accept.json: limit was never honoured)" in outcome.out
    assert "[unused-acknowledgement] the acknowledgement of tool 'other' matches no change" in (
        outcome.out
    )


def test_strict_fails_on_what_the_gate_cannot_decide(cli: Cli, in_repo: Path) -> None:
    write_pack(in_repo, '"query": Type.String(pattern="^[a-z]+$")')
    assert cli("contract", "export", "tools", "-o", "base.json").code == 0
    write_pack(in_repo, '"query": Type.String(pattern="^[a-z0-9]+$")')

    lenient = cli("contract", "check", "--baseline", "base.json", "tools")
    strict = cli("contract", "check", "--baseline", "base.json", "tools", "--strict")

    assert lenient.code == 0
    assert "undecided [contract-undecided] tool 'search': parameter `query` pattern changed" in (
        lenient.out
    )
    assert strict.code == 1


def test_a_module_that_fails_to_load_is_undecided_not_removed(cli: Cli, in_repo: Path) -> None:
    write_pack(in_repo)
    assert cli("contract", "export", "tools", "-o", "base.json").code == 0
    (in_repo / "tools" / "search.py").write_text("import no_such_module_here\n")

    outcome = cli("contract", "check", "--baseline", "base.json", "tools")

    assert outcome.code == 1
    assert "[missing-dependency]" in outcome.out or "[import-error]" in outcome.out
    assert "[contract-undecided] tool 'search' its module tools/search.py failed to load" in (
        outcome.out
    )
    assert "[tool-removed]" not in outcome.out


# -- baselines from git


def test_a_git_revision_is_exported_as_the_baseline(cli: Cli, in_repo: Path) -> None:
    write_pack(in_repo, version="1.0.0")
    commit("base")
    write_pack(in_repo, '"query": Type.String()', version="1.0.0")
    (in_repo / "tools" / "new.py").write_text(
        "from customtools import CustomTool\n\ndef factory(api):\n"
        "    return CustomTool(name='fresh', description='New.', execute=lambda *a: 'ok')\n"
    )

    outcome = cli("contract", "check", "--baseline", "HEAD", "tools")

    assert outcome.code == 1
    assert "[parameter-removed] tool 'search': parameter `limit` was removed" in outcome.out
    assert "compatible [tool-added] tool 'fresh' was added" in outcome.out
    assert "1 tool against 1 in HEAD" not in outcome.out  # two tools now
    assert "2 tools against 1 in HEAD" in outcome.out


def test_a_committed_contract_file_is_read_at_a_revision(cli: Cli, in_repo: Path) -> None:
    write_pack(in_repo)
    assert cli("contract", "export", "tools", "-o", "tools.contract.json").code == 0
    commit("lock")
    (in_repo / "tools.contract.json").write_text("not the committed one")
    write_pack(in_repo, '"query": Type.String()')

    outcome = cli("contract", "check", "--baseline", "HEAD:tools.contract.json", "tools")

    assert outcome.code == 1
    assert "[parameter-removed]" in outcome.out


@pytest.mark.parametrize(
    ("baseline", "message"),
    [
        ("nope", "--baseline 'nope' is neither a file nor a git revision"),
        ("HEAD:missing.json", "--baseline 'HEAD:missing.json': git cannot show it"),
        ("bad.json", "bad.json: not a contract document (format None"),
    ],
)
def test_a_baseline_that_cannot_be_read_is_a_usage_error(
    cli: Cli, in_repo: Path, baseline: str, message: str
) -> None:
    write_pack(in_repo)
    (in_repo / "bad.json").write_text("{}")
    commit()

    outcome = cli("contract", "check", "--baseline", baseline, "tools")

    assert outcome.code == 2
    assert message in outcome.err


# -- formats


def _sarif_validator() -> jsonschema.Draft4Validator:
    schema = json.loads((SPECS / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
    return jsonschema.Draft4Validator(
        schema, format_checker=jsonschema.Draft4Validator.FORMAT_CHECKER
    )


def _junit_schema() -> xmlschema.XMLSchema:
    return xmlschema.XMLSchema(str(SPECS / "JUnit.xsd"))


CHECK = ("contract", "check", "--baseline", str(CI / "notes.contract.json"), str(CI / "tools"))


def test_contract_sarif_is_valid_sarif_2_1_0(cli: Cli) -> None:
    outcome = cli(*CHECK, "--format", "sarif")

    log = json.loads(outcome.out)
    _sarif_validator().validate(log)
    results = log["runs"][0]["results"]
    assert outcome.code == 1
    assert {r["ruleId"] for r in results} >= {"parameter-removed", "output-type-changed"}
    removed = next(r for r in results if r["ruleId"] == "parameter-removed")
    assert removed["level"] == "error"
    assert removed["properties"] == {
        "tool": "search_notes",
        "pointer": "/parameters/properties/query",
        "kind": "breaking",
    }
    location = removed["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"].endswith("docs/examples/ci/tools/search_notes.py")


def test_contract_junit_is_valid_against_the_published_xsd(cli: Cli) -> None:
    outcome = cli(*CHECK, "--format", "junit")

    _junit_schema().validate(outcome.out)
    assert '<testcase name="search_notes" classname="customtools contract"' in outcome.out
    assert 'type="parameter-removed"' in outcome.out


def test_validate_sarif_and_junit_are_valid(cli: Cli) -> None:
    mixed = str(ROOT / "tests" / "cli" / "fixtures" / "mixed")

    sarif = cli("validate", "--format", "sarif", mixed)
    junit = cli("validate", "--format", "junit", mixed)

    assert sarif.code == junit.code == 1
    log = json.loads(sarif.out)
    _sarif_validator().validate(log)
    assert any(r["ruleId"] == "import-error" for r in log["runs"][0]["results"])
    _junit_schema().validate(junit.out)
    assert 'type="import-error"' in junit.out


def test_accepted_findings_are_suppressed_in_sarif(cli: Cli, in_repo: Path) -> None:
    write_pack(in_repo, version="1.0.0")
    assert cli("contract", "export", "tools", "-o", "base.json").code == 0
    write_pack(in_repo, '"query": Type.String()', version="2.0.0")

    log = json.loads(
        cli("contract", "check", "--baseline", "base.json", "tools", "--format", "sarif").out
    )

    _sarif_validator().validate(log)
    (result,) = log["runs"][0]["results"]
    assert result["level"] == "note"
    assert result["suppressions"][0]["status"] == "accepted"
