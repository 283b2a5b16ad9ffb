"""``customtools run``: results, rendering, updates, bad input, and Ctrl-C."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ._helpers import EXAMPLES, FIXTURES, subprocess_env

CLEAN = str(FIXTURES / "clean")


def test_prints_the_result_through_the_tools_render_hook(cli):
    result = cli("run", "echo", "--path", CLEAN, "--params", '{"text": "hello"}')
    assert result.code == 0, result.err
    assert result.out == "echo> hello\n"


def test_streamed_updates_go_to_stderr_as_plain_lines(cli):
    result = cli(
        "run", "countdown", "--path", str(EXAMPLES), "--params", '{"steps": 2, "interval": 0}'
    )
    assert result.code == 0
    assert result.out == "countdown: finished 2 steps\n"
    assert "... countdown: step 1/2\n... countdown: step 2/2\n" in result.err
    assert result.err.startswith("Countdown steps=2 interval=0\n")  # the call, rendered


def test_json_format_prints_the_wire_form(cli):
    result = cli("run", "echo", "--path", CLEAN, "--params", '{"text": "hi"}', "--format", "json")
    assert result.code == 0
    data = json.loads(result.out)
    assert data["content"] == [{"type": "text", "text": "hi"}]
    assert data["isError"] is False
    assert data["details"] == {"length": 2}


def test_an_error_result_exits_1(cli):
    result = cli("run", "fail", "--path", CLEAN)
    assert result.code == 1
    assert "[error] ValueError: this tool always fails" in result.out


def test_invalid_arguments_are_an_error_result(cli):
    result = cli("run", "echo", "--path", CLEAN, "--params", '{"text": 5}')
    assert result.code == 1
    assert "/text" in result.out


def test_params_file_is_read(cli, tmp_path):
    params = tmp_path / "params.json"
    params.write_text('{"text": "from a file"}')
    result = cli("run", "echo", "--path", CLEAN, "--params-file", str(params))
    assert result.code == 0
    assert result.out == "echo> from a file\n"


def test_missing_params_file_exits_2(cli, tmp_path):
    result = cli("run", "echo", "--path", CLEAN, "--params-file", str(tmp_path / "nope.json"))
    assert result.code == 2
    assert "nope.json" in result.err


def test_invalid_params_json_exits_2_with_line_and_column(cli):
    result = cli("run", "echo", "--path", CLEAN, "--params", '{\n  "text": "a",,\n}')
    assert result.code == 2
    assert result.out == ""
    assert "--params is not valid JSON" in result.err
    assert "line 2, column 15" in result.err
    assert '  "text": "a",,' in result.err
    assert "\n" + " " * 16 + "^" in result.err  # the caret under column 15


def test_params_outside_the_parser_limits_exit_2(cli):
    result = cli("run", "echo", "--path", CLEAN, "--params", '{"text": NaN}')
    assert result.code == 2
    assert "NaN" in result.err


def test_params_must_be_an_object(cli):
    result = cli("run", "echo", "--path", CLEAN, "--params", "[1, 2]")
    assert result.code == 2
    assert "must be a JSON object, got list" in result.err


def test_unknown_tool_lists_close_matches(cli):
    result = cli("run", "ecko", "--path", CLEAN)
    assert result.code == 2
    assert "no tool named 'ecko'; did you mean 'echo'?" in result.err


def test_unknown_tool_without_matches_lists_the_tools(cli):
    result = cli("run", "zzzz", "--path", CLEAN)
    assert result.code == 2
    assert "tools found: echo, fail" in result.err


def test_a_tool_that_failed_to_load_says_why(cli, tmp_path):
    (tmp_path / "broken.py").write_text(
        "def factory(api):\n"
        "    return {'name': 'broken', 'execute': lambda *a: '', 'colour': 'red'}\n"
    )
    result = cli("run", "broken", "--path", str(tmp_path))
    assert result.code == 2
    assert "tool 'broken' failed to load" in result.err
    assert "unknown field(s) 'colour'" in result.err


def test_timeout_aborts_the_call(cli):
    result = cli(
        "run",
        "countdown",
        "--path",
        str(EXAMPLES),
        "--params",
        '{"steps": 50, "interval": 1}',
        "--timeout",
        "0.2",
    )
    assert result.code == 1
    assert "cancelled" in result.out


def test_timeout_must_be_positive(cli):
    result = cli("run", "echo", "--path", CLEAN, "--timeout", "-1")
    assert result.code == 2


def _sleepers(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if marker.encode() in argv:
            found.append(int(entry.name))
    return found


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_ctrl_c_cancels_the_call_and_leaves_no_child_process():
    marker = f"30.{os.getpid()}"  # a unique sleep duration to find the child by
    params = json.dumps({"command": "sleep", "args": [marker]})
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "customtools",
            "run",
            "run_command",
            "--path",
            str(EXAMPLES),
            "--params",
            params,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=subprocess_env(),
        start_new_session=True,
    )
    try:
        assert proc.stderr is not None
        seen = ""
        while "running sleep" not in seen:
            line = proc.stderr.readline()
            assert line, f"the command ended early: {seen}"
            seen += line
        deadline = time.monotonic() + 10
        while not _sleepers(marker):
            assert time.monotonic() < deadline, "sleep never started"
            time.sleep(0.02)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
        for stream in (proc.stdout, proc.stderr):
            if stream is not None and not stream.closed:
                stream.close()
        proc.wait()
    assert proc.returncode == 130, err
    assert "tool 'run_command' was cancelled: interrupted by Ctrl-C" in out
    assert "cancelling the call" in err
    assert _sleepers(marker) == []


def test_on_a_terminal_progress_is_one_line_redrawn_in_place(cli, monkeypatch):
    monkeypatch.setattr("customtools.cli._run.is_terminal", lambda stream: True)
    result = cli(
        "run", "countdown", "--path", str(EXAMPLES), "--params", '{"steps": 2, "interval": 0.15}'
    )
    assert result.code == 0
    assert result.out == "countdown: finished 2 steps\n"
    assert "\r\x1b[2K" in result.err
    assert "countdown: step 2/2" in result.err
    assert "... countdown" not in result.err  # no plain lines
    assert result.err.endswith("\r\x1b[2K")  # the live line is cleared at the end


def test_color_always_styles_the_result(cli):
    result = cli("run", "fail", "--path", CLEAN, "--color", "always")
    assert result.code == 1
    assert "\x1b[31m[error]\x1b[0m" in result.out


def test_other_load_errors_are_mentioned_on_stderr(cli):
    good = str(FIXTURES / "mixed" / "good.py")
    broken = str(FIXTURES / "mixed" / "no_factory.py")
    result = cli("run", "shout", "--path", good, "--path", broken, "--params", '{"text": "hi"}')
    assert result.code == 0
    assert result.out == "HI\n"
    assert "1 other tool module(s) failed to load" in result.err


# -- L4, L5, M5: hostile text in updates and results -------------------------------------------

_HOSTILE = """\
from customtools import CustomTool, ToolResult

class Unprintable(Exception):
    def __str__(self):
        raise RuntimeError("boom")

def factory(api):
    async def execute(tool_call_id, params, on_update, ctx, signal):
        on_update(ToolResult.from_text("\\x1b]0;pwned-title\\x07\\x1b[2J"))
        on_update(ToolResult.from_text("line\\n::error file=x::INJECTED"))
        if params.get("mode") == "raise":
            raise Unprintable()
        return ToolResult.from_text("lone \\ud800 surrogate", details={"s": "\\udfff"})

    params = api.typebox.Object({"mode": api.typebox.Optional(api.typebox.String())})
    return CustomTool(
        name="hostile", description="Prints hostile text.", parameters=params, execute=execute
    )
"""


@pytest.fixture
def hostile(tmp_path: Path) -> str:
    (tmp_path / "hostile.py").write_text(_HOSTILE)
    return str(tmp_path)


def test_streamed_updates_are_escaped_on_stderr(cli, hostile):
    result = cli("run", "hostile", "--path", hostile)
    assert result.code == 0, result.err
    assert "\x1b" not in result.err
    assert "\x07" not in result.err
    assert "\\x1b]0;pwned-title\\x07\\x1b[2J" in result.err
    assert not any(line.startswith("::error") for line in result.err.splitlines())
    assert "... line\n" in result.err  # a newline still starts a new plain line, prefixed


def test_a_lone_surrogate_in_a_result_prints_as_json(tmp_path, hostile):
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "customtools",
            "run",
            "hostile",
            "--path",
            hostile,
            "--format",
            "json",
        ],
        capture_output=True,
        cwd=tmp_path,
        env={**subprocess_env(), "PYTHONIOENCODING": "utf-8"},
        timeout=30,
    )
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["content"][0]["text"] == "lone \ud800 surrogate"
    assert data["details"] == {"s": "\udfff"}


def test_a_lone_surrogate_in_a_result_prints_as_text(tmp_path, hostile):
    proc = subprocess.run(
        [sys.executable, "-m", "customtools", "run", "hostile", "--path", hostile],
        capture_output=True,
        cwd=tmp_path,
        env={**subprocess_env(), "PYTHONIOENCODING": "utf-8"},
        timeout=30,
    )
    assert proc.returncode == 0, proc.stderr
    assert b"lone " in proc.stdout
    assert b"Traceback" not in proc.stderr


def test_an_exception_whose_str_raises_is_an_error_result_not_a_traceback(cli, hostile):
    result = cli("run", "hostile", "--path", hostile, "--params", '{"mode": "raise"}')
    assert result.code == 1
    assert result.out.startswith("[error] ")
    # The adapter names the exception type; the CLI's own net names what broke its message.
    assert "Unprintable" in result.out or "RuntimeError: boom" in result.out


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Landlock is Linux only")
def test_sandbox_flag_confines_the_tool_and_reports_it(cli, tmp_path):
    tools = tmp_path / "tools"
    tools.mkdir()
    secret = tmp_path / "secret.txt"
    secret.write_text("SECRET")
    (tools / "reader.py").write_text(
        "from customtools import tool\n"
        "@tool\ndef peek(path: str) -> str:\n"
        "    '''Read a file.'''\n"
        "    with open(path) as handle:\n"
        "        return handle.read()\n"
    )
    params = json.dumps({"path": str(secret)})
    plain = cli("run", "peek", "--path", str(tools), "--params", params, "--cwd", str(tools))
    assert plain.code == 0, plain.err
    assert "SECRET" in plain.out
    boxed = cli(
        "run", "peek", "--path", str(tools), "--params", params, "--cwd", str(tools), "--sandbox"
    )
    assert boxed.code == 1, boxed.err
    assert "SECRET" not in boxed.out
    assert f"denied reading `{secret}`" in boxed.out
    assert "sandbox of" in boxed.err


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Landlock is Linux only")
def test_serve_sandbox_serves_from_confined_workers(tmp_path):
    pytest.importorskip("mcp")

    tools = tmp_path / "tools"
    tools.mkdir()
    (tools / "hello.py").write_text(
        "from customtools import tool\n@tool\ndef hello() -> str:\n    '''Hi.'''\n    return 'hi'\n"
    )
    served = subprocess.run(  # stdin at end of file: the stdio client leaves at once
        [sys.executable, "-m", "customtools", "serve", "--sandbox", str(tools / "hello.py")],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        cwd=tools,
        env=subprocess_env(),
        timeout=60,
    )
    assert served.returncode == 0, served.stderr
    assert "serving 1 tool" in served.stderr


def test_the_policy_run_applies_is_shown_on_stderr(cli):
    params = json.dumps({"text": "word " * 400})
    result = cli(
        "run", "echo", "--path", CLEAN, "--params", params, "--policy", '{"maxResultBytes": 500}'
    )
    assert result.code == 0, result.err
    assert "customtools: policy: trimmed " in result.err
    assert "of 2000 bytes (the whole result: read_result handle r-" in result.err
    plain = cli("run", "echo", "--path", CLEAN, "--params", params)
    assert "policy" not in plain.err


def test_a_bad_policy_is_a_usage_error(cli):
    result = cli("run", "echo", "--path", CLEAN, "--policy", '{"retries": -1}')
    assert result.code == 2
    assert "--policy: Policy.retries must be a whole number from 0 to 10, got -1" in result.err


def test_run_shows_the_retries_the_policy_made(cli, tmp_path):
    (tmp_path / "flaky.py").write_text(
        "from customtools import CustomTool\n"
        "from customtools.policy import TransientToolError\n"
        "FAILED = []\n\n"
        "def factory(api):\n"
        "    def once(*args):\n"
        "        if not FAILED:\n"
        "            FAILED.append(1)\n"
        "            raise TransientToolError('the service was busy')\n"
        "        return 'ok'\n"
        "    return CustomTool(name='flaky', description='Fails once.', execute=once,\n"
        "                      annotations={'idempotentHint': True})\n"
    )
    policy = '{"retryBackoff": 0}'
    result = cli("run", "flaky", "--path", str(tmp_path / "flaky.py"), "--policy", policy)
    assert result.code == 0, result.err
    assert "customtools: policy: retried 1 time(s)" in result.err
    assert result.out.strip() == "ok"
