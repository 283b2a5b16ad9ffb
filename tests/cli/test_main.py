"""The command's entry points: ``python -m customtools``, ``main()`` and ``run()``."""

from __future__ import annotations

import pytest

import customtools
from customtools.cli import main

from ._helpers import EXAMPLES, run_command


def test_python_dash_m_runs_the_command():
    result = run_command("--version")
    assert result.code == 0
    assert result.out.strip() == f"customtools {customtools.__version__}"


def test_help_lists_every_subcommand_and_exits_0(cli):
    result = cli("--help")
    assert result.code == 0
    for command in ("list", "validate", "run", "schema", "init"):
        assert command in result.out


def test_no_command_is_a_usage_error(cli):
    result = cli()
    assert result.code == 2
    assert "required: COMMAND" in result.err


def test_unknown_option_is_a_usage_error(cli):
    result = cli("list", "--frobnicate")
    assert result.code == 2
    assert "unrecognized arguments: --frobnicate" in result.err


def test_main_exits_with_the_status_of_run(monkeypatch, capsys):
    monkeypatch.setattr("sys.argv", ["customtools", "validate", str(EXAMPLES / "missing")])
    with pytest.raises(SystemExit) as exit_info:
        main()
    assert exit_info.value.code == 2
    assert "does not exist" in capsys.readouterr().err
