"""``customtools validate``: findings, formats, exit codes, and packs that crash or hang."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from ._helpers import EXAMPLES, FIXTURES, run_command

MIXED = str(FIXTURES / "mixed")
CLEAN = str(FIXTURES / "clean")


def _findings(out: str) -> list[dict]:
    return json.loads(out)["findings"]


def _codes(out: str) -> set[str]:
    return {item["code"] for item in _findings(out)}


def test_examples_pack_is_clean_even_in_strict_mode(cli):
    result = cli("validate", "--strict", str(EXAMPLES))
    assert result.code == 0, result.out
    assert "9 tools: 0 errors, 0 warnings" in result.out
    assert "passed (strict)" in result.out


def test_json_report_has_the_documented_shape(cli):
    result = cli("validate", "--format", "json", MIXED)
    assert result.code == 1
    report = json.loads(result.out)
    assert set(report) == {"version", "packs", "findings", "summary"}
    assert report["version"] == 1
    (pack,) = report["packs"]
    assert set(pack) == {"path", "resolvedPath", "modules", "tools", "metadata"}
    assert pack["resolvedPath"] == MIXED
    modules = {Path(m["path"]).name: m for m in pack["modules"]}
    assert modules["good.py"]["status"] == "loaded"
    assert modules["good.py"]["tools"] == ["shout"]
    assert isinstance(modules["good.py"]["importSeconds"], float)
    assert modules["import_error.py"]["status"] == "failed"
    assert set(modules["good.py"]) == {"path", "kind", "status", "importSeconds", "tools"}
    tool = next(t for t in pack["tools"] if t["name"] == "undescribed")
    assert tool["strict"] is True
    assert tool["openaiStrictCompatible"] is False
    assert tool["line"] == 12
    for finding in report["findings"]:
        assert set(finding) == {
            "severity",
            "code",
            "message",
            "file",
            "line",
            "pack",
            "tool",
            "pointer",
            "detail",
        }
    summary = report["summary"]
    assert summary == {
        "packs": 1,
        "modules": 5,
        "tools": 4,
        "errors": 4,
        "warnings": 3,
        "notices": 0,
        "strict": False,
        "passed": False,
    }


def test_each_problem_of_the_mixed_pack_is_a_finding_with_file_and_line(cli):
    findings = _findings(cli("validate", "--format", "json", MIXED).out)
    by_code: dict[str, list[dict]] = {}
    for item in findings:
        by_code.setdefault(item["code"], []).append(item)
    (raised,) = by_code["import-error"]
    assert raised["severity"] == "error"
    assert raised["file"].endswith("mixed/import_error.py")
    assert raised["line"] == 4
    assert "the database is not configured" in raised["message"]
    assert "RuntimeError" in raised["detail"]
    (missing,) = by_code["no-factory"]
    assert missing["line"] == 1
    (conflict,) = by_code["name-conflict"]
    assert conflict["tool"] == "shout"
    assert conflict["file"].endswith("twins.py")
    assert conflict["line"] == 12
    assert "good.py" in conflict["message"]
    (undescribed,) = by_code["empty-description"]
    assert undescribed["severity"] == "error"
    assert undescribed["tool"] == "undescribed"
    assert {"openai-strict-optional-property", "openai-strict-keyword"} <= set(by_code)
    (keyword,) = by_code["openai-strict-keyword"]
    assert keyword["pointer"] == "/properties/limit"
    assert keyword["severity"] == "warning"
    (similar,) = by_code["similar-name"]
    assert similar["tool"] == "Shout"


def test_strict_turns_warnings_into_errors(cli, tmp_path):
    pack = tmp_path / "pack"
    pack.mkdir()
    (pack / "quiet.py").write_text(
        "from customtools import CustomTool\n\n"
        "def factory(api):\n"
        "    return CustomTool(name='quiet', description='Says ok.\\u200b',"
        " execute=lambda *a: 'ok')\n"
    )
    lenient = cli("validate", str(pack))
    assert lenient.code == 0
    assert "warning [invisible-unicode]" in lenient.out
    assert "U+200B ZERO WIDTH SPACE at 8" in lenient.out
    strict = cli("validate", "--strict", str(pack))
    assert strict.code == 1
    assert "error [invisible-unicode]" in strict.out
    assert "FAILED (strict)" in strict.out


def test_a_default_that_breaks_its_own_schema_fails_even_without_strict(cli, tmp_path):
    (tmp_path / "limits.py").write_text(
        "from customtools import CustomTool, Type\n\n"
        "def factory(api):\n"
        "    return CustomTool(\n"
        "        name='limits', description='Lists things.', execute=lambda *a: 'ok',\n"
        "        parameters=Type.Object(\n"
        "            {'n': Type.Optional(Type.Integer(minimum=1, default=0))}\n"
        "        ),\n"
        "    )\n"
    )
    for flags in ((), ("--strict",)):
        result = cli("validate", "--format", "json", *flags, str(tmp_path))
        assert result.code == 1
        (finding,) = _findings(result.out)
        assert finding["code"] == "invalid-default"
        assert finding["severity"] == "error"
        assert finding["pointer"] == "/properties/n"
        assert finding["line"] == 4
        assert "0 is less than the minimum of 1" in finding["message"]


def test_metadata_named_like_a_tool_is_a_warning(cli, tmp_path):
    (tmp_path / "echo.py").write_text((FIXTURES / "clean" / "echo.py").read_text())
    (tmp_path / "echo.md").write_text("---\nname: echo\ndescription: Echoes.\n---\n")
    result = cli("validate", "--format", "json", str(tmp_path))
    assert result.code == 0
    (finding,) = _findings(result.out)
    assert (finding["severity"], finding["code"]) == ("warning", "metadata-name-taken")
    assert finding["file"].endswith("echo.md")


def test_syntax_error_reports_the_line_of_the_error(cli, tmp_path):
    (tmp_path / "broken.py").write_text("def factory(api):\n    return [\n\nx = )\n")
    result = cli("validate", "--format", "json", str(tmp_path))
    assert result.code == 1
    (finding,) = [f for f in _findings(result.out) if f["code"] == "syntax-error"]
    assert finding["file"].endswith("broken.py")
    assert finding["line"] in (2, 4)


def test_error_inside_a_package_helper_points_at_the_helper(cli, tmp_path):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text(
        "from . import helper\n\ndef factory(api):\n    return []\n"
    )
    (package / "helper.py").write_text("x = 1\ny = 1 / 0\n")
    findings = _findings(cli("validate", "--format", "json", str(package)).out)
    (finding,) = [f for f in findings if f["code"] == "import-error"]
    assert finding["file"].endswith(os.path.join("pkg", "helper.py"))
    assert finding["line"] == 2


def test_slow_import_is_a_warning_above_the_threshold(cli):
    slow = str(FIXTURES / "slow")
    result = cli("validate", "--format", "json", "--slow-import", "0.1", slow)
    assert result.code == 0
    (finding,) = _findings(result.out)
    assert finding["code"] == "slow-import"
    assert finding["file"].endswith("sluggish.py")
    assert cli("validate", "--strict", "--slow-import", "0.1", slow).code == 1


def test_name_conflicts_across_packs_are_errors(cli):
    a, b = str(FIXTURES / "conflict_a"), str(FIXTURES / "conflict_b")
    result = cli("validate", "--format", "json", a, b)
    assert result.code == 1
    (conflict,) = _findings(result.out)
    assert conflict["code"] == "name-conflict"
    assert conflict["file"].endswith(os.path.join("conflict_b", "pick.py"))
    assert conflict["pack"].endswith("conflict_b")
    assert "conflict_a" in conflict["message"]


def test_a_builtin_name_cannot_be_taken(cli):
    result = cli("validate", "--format", "json", "--builtin", "echo", CLEAN)
    assert result.code == 1
    (conflict,) = _findings(result.out)
    assert conflict["code"] == "name-conflict"
    assert "built-in" in conflict["message"]


def test_a_directory_without_tool_modules_is_an_error(cli, tmp_path):
    result = cli("validate", "--format", "json", str(tmp_path))
    assert result.code == 1
    assert _codes(result.out) == {"empty-pack"}


def test_a_pack_whose_factories_return_no_tools_is_empty(cli, tmp_path):
    (tmp_path / "nothing.py").write_text("def factory(api):\n    return []\n")
    result = cli("validate", "--format", "json", str(tmp_path))
    assert result.code == 1
    assert _codes(result.out) == {"no-tools", "empty-pack"}


def test_metadata_given_as_a_pack_is_an_error(cli):
    result = cli("validate", "--format", "json", str(EXAMPLES / "weather.md"))
    assert result.code == 1
    assert _codes(result.out) == {"metadata-not-executable"}


def test_missing_pack_path_exits_2_naming_it(cli, tmp_path):
    missing = tmp_path / "no-such-pack"
    result = cli("validate", str(missing))
    assert result.code == 2
    assert "no-such-pack" in result.err
    assert "does not exist" in result.err
    assert result.out == ""


def test_discovery_options_cannot_be_combined_with_paths(cli):
    result = cli("validate", "--no-entry-points", CLEAN)
    assert result.code == 2
    assert "--no-entry-points" in result.err


def test_bad_timeout_is_a_usage_error(cli):
    result = cli("validate", "--timeout", "0", CLEAN)
    assert result.code == 2
    assert "positive" in result.err


def test_without_paths_validate_checks_discovered_tools(cli, tmp_path):
    tools = tmp_path / ".customtools" / "tools"
    tools.mkdir(parents=True)
    (tools / "echo.py").write_text((FIXTURES / "clean" / "echo.py").read_text())
    (tools / "notes.txt").write_text("not a tool")
    assert cli("trust", "--yes", str(tmp_path)).code == 0  # project code loads once trusted
    result = cli("validate", "--format", "json", "--no-entry-points", "--cwd", str(tmp_path))
    assert result.code == 0, result.out
    report = json.loads(result.out)
    (pack,) = report["packs"]
    assert pack["resolvedPath"] == str(tools)
    assert [t["name"] for t in pack["tools"]] == ["echo"]
    (notice,) = report["findings"]
    assert (notice["severity"], notice["code"]) == ("notice", "skipped-file")


def test_nothing_discovered_is_a_warning(cli, tmp_path):
    result = cli("validate", "--format", "json", "--no-entry-points", "--cwd", str(tmp_path))
    assert result.code == 0
    assert _codes(result.out) == {"no-tools-found"}


def test_github_format_prints_escaped_annotations(cli, tmp_path):
    (tmp_path / "odd.py").write_text(
        "raise ValueError('100% broken, see: docs')\n\ndef factory(api):\n    return []\n"
    )
    result = cli("validate", "--format", "github", str(tmp_path))
    assert result.code == 1
    annotations = [line for line in result.out.splitlines() if line.startswith("::")]
    (line,) = annotations
    assert line.startswith("::error file=")
    assert ",line=1,title=customtools import-error::" in line
    assert "100%25 broken, see: docs" in line
    assert result.out.splitlines()[-1].endswith("FAILED")


def test_github_format_escapes_newlines_in_messages(cli, tmp_path):
    (tmp_path / "multi.py").write_text(
        "from customtools import CustomTool\n\n"
        "def factory(api):\n"
        "    return CustomTool(name='multi', description='a\\u202eb', execute=lambda *a: '')\n"
    )
    (tmp_path / "pkg,odd").mkdir()
    (tmp_path / "pkg,odd" / "__init__.py").write_text("raise ValueError('a\\r\\nb')\n")
    out = cli("validate", "--format", "github", str(tmp_path)).out
    error = next(line for line in out.splitlines() if line.startswith("::error"))
    assert "pkg%2Codd" in error  # a comma in a property value is escaped
    assert "\r" not in out
    warning = next(line for line in out.splitlines() if line.startswith("::warning"))
    assert "line=4" in warning


# -- real processes: modules that crash, exit or hang --------------------------------------------


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_crash_and_os_exit_are_findings_and_later_modules_still_load():
    result = run_command("validate", "--format", "json", str(FIXTURES / "crash"))
    assert result.code == 1, result.err
    report = json.loads(result.out)
    statuses = {Path(m["path"]).name: m["status"] for m in report["packs"][0]["modules"]}
    assert statuses == {
        "a_first.py": "loaded",
        "b_segfault.py": "crashed",
        "c_exit.py": "crashed",
        "d_last.py": "loaded",
    }
    crashes = {Path(f["file"]).name: f for f in report["findings"]}
    assert set(crashes) == {"b_segfault.py", "c_exit.py"}
    # Worded by the one exit describer, as at run time (tests/isolation/test_process.py).
    assert crashes["b_segfault.py"]["message"] == (
        "loading the module ended its worker process: it was killed by SIGSEGV (the Python"
        " interpreter crashed, in the module or a C extension it uses)"
    )
    assert crashes["b_segfault.py"]["line"] == 5
    assert crashes["c_exit.py"]["message"] == (
        "loading the module ended its worker process: it exited with status 3 (without an"
        " exception: os._exit(), or a C extension ended it)"
    )
    assert report["summary"]["tools"] == 2


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_a_hanging_module_times_out_and_is_reported_with_its_line():
    result = run_command("validate", "--timeout", "1", str(FIXTURES / "hang"))
    assert result.code == 1
    assert "a_hang.py:6: error [timeout]" in result.out
    assert "within 1 s" in result.out
    assert "after_hang" in result.out  # the next module loaded in a fresh child


def _declaring(directory: Path, name: str, declaration: str) -> None:
    (directory / name).write_text(
        "from customtools import tool\n"
        "from customtools.isolation import Permissions\n"
        f"PERMISSIONS = {declaration}\n"
        "@tool\ndef "
        + name.removesuffix(".py")
        + "() -> str:\n    '''Say ok.'''\n    return 'ok'\n"
    )


def test_declared_permissions_are_checked_without_running_the_module(cli, tmp_path, monkeypatch):
    pack = tmp_path / "pack"
    pack.mkdir()
    _declaring(pack, "ports.py", "Permissions(net=[443])")
    _declaring(pack, "broken.py", "Permissions(net=[int('443')])")
    _declaring(pack, "fine.py", "Permissions(read=['.'])")
    monkeypatch.setenv("CUSTOMTOOLS_SANDBOX_MAX_ABI", "3")
    result = cli("validate", "--format", "json", str(pack))
    assert result.code == 1, result.err
    found = {(Path(f.get("file") or "-").name, f["code"]): f for f in _findings(result.out)}
    assert found["broken.py", "invalid-permissions"]["severity"] == "error"
    assert "must be literals" in found["broken.py", "invalid-permissions"]["message"]
    notice = found["ports.py", "unenforceable-permissions"]
    assert notice["severity"] == "notice"
    assert "TCP port rules (Landlock ABI 3 here" in notice["message"]
    assert ("fine.py", "unenforceable-permissions") not in found
    monkeypatch.delenv("CUSTOMTOOLS_SANDBOX_MAX_ABI")
    if sys.platform.startswith("linux"):
        again = cli("validate", "--format", "json", str(pack))
        assert ("ports.py", "unenforceable-permissions") not in {
            (Path(f.get("file") or "-").name, f["code"]) for f in _findings(again.out)
        }


def test_a_policy_declaration_hosts_cannot_use_is_reported(cli, tmp_path):
    pack = tmp_path / "pack"
    pack.mkdir()
    header = "from customtools import tool\nfrom customtools.policy import Policy\n"
    body = "@tool\ndef {0}() -> str:\n    'Say ok.'\n    return 'ok'\n"
    (pack / "good.py").write_text(header + "POLICY = Policy(retries=1)\n" + body.format("good"))
    (pack / "unread.py").write_text(
        header + "POLICY = Policy(retries=int('1'))\n" + body.format("unread")
    )
    (pack / "wrong.py").write_text(header + "POLICY = Policy(retries=99)\n" + body.format("wrong"))
    result = cli("validate", "--format", "json", str(pack))
    assert result.code == 1, result.err
    found = {
        Path(f.get("file") or "-").name: f
        for f in _findings(result.out)
        if f["code"] == "invalid-policy"
    }
    assert set(found) == {"unread.py", "wrong.py"}
    assert found["unread.py"]["severity"] == "error"
    assert "POLICY arguments must be literals" in found["unread.py"]["message"]
    assert (
        "Policy.retries must be a whole number from 0 to 10, got 99"
        in (found["wrong.py"]["message"])
    )


def test_validate_writes_no_bytecode_so_a_same_second_edit_is_seen(cli, tmp_path, monkeypatch):
    # Python trusts a .pyc whose recorded mtime (whole seconds) and size match the source: had
    # the first run written one, the edit below (same size, same second) would go unseen.
    monkeypatch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)
    pack = tmp_path / "pack"
    pack.mkdir()
    source = (
        "from customtools import CustomTool\n\n"
        "def factory(api):\n"
        "    return CustomTool(name='{name}', description='Says ok.', execute=lambda *a: 'ok')\n"
    )
    (pack / "tool.py").write_text(source.format(name="one"))
    stamp = (pack / "tool.py").stat().st_mtime_ns
    assert cli("validate", "--format", "json", str(pack)).code == 0
    assert not (pack / "__pycache__").exists()
    (pack / "tool.py").write_text(source.format(name="two"))
    os.utime(pack / "tool.py", ns=(stamp, stamp))
    report = json.loads(cli("validate", "--format", "json", str(pack)).out)
    assert [tool["name"] for tool in report["packs"][0]["tools"]] == ["two"]
