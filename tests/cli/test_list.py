"""``customtools list``: tools with their origin, metadata, diagnostics, and scan-only mode."""

from __future__ import annotations

import json
from pathlib import Path

from ._helpers import EXAMPLES, FIXTURES

EXAMPLE_TOOLS = [
    "countdown",
    "notes",
    "repo_stats",
    "run_command",
    "search_text",
    "swatch",
    "convert_temperature",
    "ticker",
    "count_words",
]


def test_text_lists_each_tool_with_label_provider_level_and_path(cli):
    result = cli("list", "--no-entry-points", "--path", str(EXAMPLES))
    assert result.code == 0, result.err
    lines = result.out.splitlines()
    assert lines[0].split() == ["NAME", "LABEL", "PROVIDER", "LEVEL", "TRUST", "PATH"]
    row = next(line for line in lines if line.startswith("countdown "))
    name, label, provider, level, trust, path = row.split()
    assert (name, label, provider, level) == ("countdown", "Countdown", "configured", "user")
    assert trust == "user"
    assert Path(path).resolve() == EXAMPLES / "countdown.py"  # relative to the current dir
    assert "metadata (described, never imported):" in result.out
    assert "weather" in result.out


def test_json_lists_tools_metadata_and_candidates(cli):
    result = cli("list", "--no-entry-points", "--format", "json", "--path", str(EXAMPLES))
    assert result.code == 0
    report = json.loads(result.out)
    assert report["version"] == 1
    assert report["scanOnly"] is False
    assert [tool["name"] for tool in report["tools"]] == EXAMPLE_TOOLS
    countdown = report["tools"][0]
    assert countdown["label"] == "Countdown"
    assert countdown["provider"] == "configured"
    assert countdown["level"] == "user"
    assert countdown["source"]["providerName"] == "Configured path"
    assert countdown["description"].startswith("Counts through")
    assert len(report["candidates"]) == len(EXAMPLE_TOOLS)
    (weather,) = report["metadata"]
    assert weather["name"] == "weather"
    assert report["errors"] == []


def test_discovers_project_tools_under_cwd(cli, tmp_path):
    tools = tmp_path / ".claude" / "tools"
    tools.mkdir(parents=True)
    (tools / "echo.py").write_text((FIXTURES / "clean" / "echo.py").read_text())
    assert cli("trust", "--yes", str(tmp_path)).code == 0  # project code loads once trusted
    result = cli("list", "--no-entry-points", "--format", "json", "--cwd", str(tmp_path))
    (tool,) = json.loads(result.out)["tools"]
    assert (tool["name"], tool["provider"], tool["level"]) == ("echo", "claude", "project")
    assert tool["trust"] == "trusted"


def test_discovers_user_tools_in_home(cli, isolated_home):
    tools = isolated_home / ".customtools" / "tools"
    tools.mkdir(parents=True)
    (tools / "echo.py").write_text((FIXTURES / "clean" / "echo.py").read_text())
    result = cli("list", "--no-entry-points", "--format", "json")
    (tool,) = json.loads(result.out)["tools"]
    assert (tool["provider"], tool["level"]) == ("native", "user")


def test_disabled_provider_is_not_scanned_and_is_reported(cli, tmp_path):
    tools = tmp_path / ".claude" / "tools"
    tools.mkdir(parents=True)
    (tools / "echo.py").write_text((FIXTURES / "clean" / "echo.py").read_text())
    result = cli(
        "list",
        "--no-entry-points",
        "--format",
        "json",
        "--cwd",
        str(tmp_path),
        "--disable",
        "claude",
    )
    report = json.loads(result.out)
    assert report["tools"] == []
    assert [d["code"] for d in report["diagnostics"]] == ["provider-disabled"]


def test_scan_only_runs_no_tool_code(cli, tmp_path):
    marker = tmp_path / "imported"
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "spy.py").write_text(
        f"open({str(marker)!r}, 'w').close()\n\ndef factory(api):\n    return []\n"
    )
    result = cli("list", "--scan-only", "--no-entry-points", "--path", str(tmp_path / "tools"))
    assert result.code == 0
    assert not marker.exists()
    assert "no tool code was run" in result.out
    assert "spy.py" in result.out
    as_json = cli(
        "list",
        "--scan-only",
        "--no-entry-points",
        "--format",
        "json",
        "--path",
        str(tmp_path / "tools"),
    )
    report = json.loads(as_json.out)
    assert report["scanOnly"] is True
    assert report["tools"] is None
    assert [c["kind"] for c in report["candidates"]] == ["module"]
    assert not marker.exists()
    cli("list", "--no-entry-points", "--path", str(tmp_path / "tools"))
    assert marker.exists()  # a full list does import it


def test_load_errors_are_listed_and_exit_1(cli):
    result = cli("list", "--no-entry-points", "--path", str(FIXTURES / "mixed"))
    assert result.code == 1
    assert "errors:" in result.out
    assert "[no-factory]" in result.out
    assert "[name-conflict]" in result.out


def test_builtin_names_cannot_be_taken(cli):
    result = cli(
        "list",
        "--no-entry-points",
        "--format",
        "json",
        "--builtin",
        "echo",
        "--path",
        str(FIXTURES / "clean"),
    )
    assert result.code == 1
    report = json.loads(result.out)
    assert [tool["name"] for tool in report["tools"]] == ["fail"]
    assert report["errors"][0]["code"] == "name-conflict"


def test_nothing_found_says_so(cli, tmp_path):
    result = cli("list", "--no-entry-points", "--cwd", str(tmp_path))
    assert result.code == 0
    assert result.out == "no tools found\n"


def test_cwd_that_is_not_a_directory_exits_2(cli, tmp_path):
    result = cli("list", "--cwd", str(tmp_path / "missing"))
    assert result.code == 2
    assert "is not a directory" in result.err


_BAD_STR = """\
class Unprintable(Exception):
    def __str__(self):
        raise RuntimeError("boom")

raise Unprintable()
"""


def test_control_characters_in_file_names_are_escaped_in_text(cli, tmp_path):
    tools = tmp_path / "tools"
    tools.mkdir()
    name = "nl\n::error file=x::INJECTED.py"
    (tools / name).write_text(
        "from customtools import CustomTool\n\n"
        "def factory(api):\n"
        "    return CustomTool(name='odd', description='Odd file.', execute=lambda *a: '')\n"
    )
    (tools / "esc\x1b[2J.py").write_text("raise RuntimeError('broken \\x1b]0;title\\x07')\n")
    result = cli("list", "--no-entry-points", "--path", str(tools))
    assert result.code == 1
    assert not any(line.startswith("::") for line in result.out.splitlines())
    assert "nl\\n::error file=x::INJECTED.py" in result.out
    assert "\x1b" not in result.out
    assert "esc\\x1b[2J.py" in result.out
    # The JSON report keeps the real name (JSON escapes it).
    data = json.loads(
        cli("list", "--no-entry-points", "--format", "json", "--path", str(tools)).out
    )
    assert any(tool["path"].endswith(name) for tool in data["tools"])


def test_an_exception_whose_str_raises_does_not_crash_list(cli, tmp_path):
    tools = tmp_path / "tools"
    tools.mkdir()
    (tools / "badstr.py").write_text(_BAD_STR)
    result = cli("list", "--no-entry-points", "--path", str(tools))
    assert result.code in (1, 2)  # 1 once the loader reports it as a load error
    assert "Traceback" not in result.err
    assert "Unprintable" in result.out + result.err or "boom" in result.err


def test_lazy_shows_which_tools_come_from_the_manifest_cache(cli, tmp_path):
    marker = tmp_path / "imported"
    tools = tmp_path / "tools"
    tools.mkdir()
    (tools / "echo.py").write_text(
        f"open({str(marker)!r}, 'a').close()\n"
        "from customtools import CustomTool\n\n"
        "def factory(api):\n"
        "    return CustomTool(name='echo', execute=lambda *args: 'ok')\n"
    )
    args = ("list", "--no-entry-points", "--lazy", "--path", str(tools))
    first = cli(*args)
    assert first.code == 0
    assert "LOAD" in first.out.splitlines()[0]
    assert " eager " in first.out.splitlines()[1]
    marker.unlink()
    second = cli(*args)
    assert " lazy " in second.out.splitlines()[1]
    assert not marker.exists()  # listed from the manifest cache, not imported
    report = json.loads(cli(*args, "--format", "json").out)
    assert report["lazy"] is True
    assert [tool["lazy"] for tool in report["tools"]] == [True]
    plain = cli("list", "--no-entry-points", "--format", "json", "--path", str(tools))
    plain = json.loads(plain.out)
    assert [tool["lazy"] for tool in plain["tools"]] == [False]
    assert "LOAD" not in cli("list", "--no-entry-points", "--path", str(tools)).out
