"""``customtools init``: the scaffold passes validate --strict and its own test."""

from __future__ import annotations

import json
import subprocess
import sys

from ._helpers import subprocess_env


def test_scaffold_passes_strict_validation_and_its_test(cli, tmp_path):
    tools = tmp_path / "tools"
    result = cli("init", "word-count", "--dir", str(tools))
    assert result.code == 0, result.err
    module = tools / "word-count.py"
    test = tools / "tests" / "test_word_count.py"
    assert module.is_file()
    assert test.is_file()
    assert "word-count.py" in result.out

    validated = cli("validate", "--strict", "--format", "json", str(tools))
    assert validated.code == 0, validated.out
    (pack,) = json.loads(validated.out)["packs"]
    assert [tool["name"] for tool in pack["tools"]] == ["word-count"]

    pytest_run = subprocess.run(
        [
            *(sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"),
            # LangSmith's plugin (a langchain-core dependency) loads in every run: seconds.
            *("-p", "no:langsmith_plugin", str(test)),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=subprocess_env(),
        timeout=60,
    )
    assert pytest_run.returncode == 0, pytest_run.stdout + pytest_run.stderr
    assert "2 passed" in pytest_run.stdout


def test_refuses_to_overwrite_without_force(cli, tmp_path):
    assert cli("init", "mine", "--dir", str(tmp_path)).code == 0
    (tmp_path / "mine.py").write_text("# edited\n")
    again = cli("init", "mine", "--dir", str(tmp_path))
    assert again.code == 2
    assert "refusing to overwrite" in again.err
    assert "--force" in again.err
    assert (tmp_path / "mine.py").read_text() == "# edited\n"
    forced = cli("init", "mine", "--dir", str(tmp_path), "--force")
    assert forced.code == 0
    assert "def factory(api" in (tmp_path / "mine.py").read_text()


def test_invalid_names_are_usage_errors(cli, tmp_path):
    bad = cli("init", "no spaces", "--dir", str(tmp_path))
    assert bad.code == 2
    assert "invalid tool name 'no spaces'" in bad.err
    hidden = cli("init", "_private", "--dir", str(tmp_path))
    assert hidden.code == 2
    assert "skipped by the scan" in hidden.err
    assert list(tmp_path.iterdir()) == []


def test_test_dir_option_and_json_report(cli, tmp_path):
    result = cli(
        "init",
        "sum",
        "--dir",
        str(tmp_path / "tools"),
        "--test-dir",
        str(tmp_path / "t"),
        "--format",
        "json",
    )
    assert result.code == 0
    report = json.loads(result.out)
    assert report["version"] == 1
    assert report["tool"] == "sum"
    assert (tmp_path / "t" / "test_sum.py").is_file()
    assert "../tools/sum.py" in (tmp_path / "t" / "test_sum.py").read_text()
