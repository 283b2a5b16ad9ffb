"""run_command: runs a program without a shell; aborting the call kills its whole tree."""

from __future__ import annotations

import os
from pathlib import Path

import anyio
import pytest

from customtools import AbortController
from customtools.testing import ToolPack, assert_cancelled, assert_error, assert_ok, assert_text


def _gone(pid: int) -> bool:
    """True when ``pid`` runs no more: it does not exist or it is a zombie awaiting its reaper."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] == "Z"


def test_returns_the_output_of_echo(tool_pack: ToolPack) -> None:
    call = tool_pack.call_sync("run_command", {"command": "echo", "args": ["hello", "tools"]})

    assert_ok(call)
    assert call.text == "hello tools\n"
    assert call.details == {"code": 0, "truncated": False}
    assert call.update_texts == ["running echo ..."]


def test_runs_in_the_tools_working_directory(tool_pack: ToolPack, tmp_path: Path) -> None:
    # The tool_pack fixture gives the tools api.cwd == tmp_path.
    (tmp_path / "marker.txt").write_text("x")

    call = tool_pack.call_sync("run_command", {"command": "ls"})

    assert_text(assert_ok(call), "marker.txt")


def test_a_failing_program_is_an_error_result_with_its_exit_code(tool_pack: ToolPack) -> None:
    call = tool_pack.call_sync(
        "run_command", {"command": "sh", "args": ["-c", "echo broken >&2; exit 3"]}
    )

    assert_error(call, match="broken")
    assert call.details["code"] == 3


def test_arguments_are_not_interpreted_by_a_shell(tool_pack: ToolPack) -> None:
    call = tool_pack.call_sync("run_command", {"command": "echo", "args": ["$HOME", "*"]})

    assert call.text == "$HOME *\n"


@pytest.mark.anyio
async def test_aborting_a_long_command_kills_it_and_leaves_no_survivor(
    tool_pack: ToolPack, abort_controller: AbortController, tmp_path: Path
) -> None:
    pid_file = tmp_path / "sleep.pid"
    # `sleep 30` runs as a grandchild, in the background of the shell the tool started.
    script = f"sleep 30 & echo $! > {pid_file}.tmp && mv {pid_file}.tmp {pid_file}; wait"

    async def abort_once_sleep_runs() -> None:
        while not pid_file.exists():  # noqa: ASYNC110 - polls a file another process writes
            await anyio.sleep(0.01)
        abort_controller.abort("stop the sleep")

    async with anyio.create_task_group() as group:
        group.start_soon(abort_once_sleep_runs)
        call = await tool_pack.call(
            "run_command",
            {"command": "sh", "args": ["-c", script]},
            signal=abort_controller.signal,
        )

    assert_cancelled(call, match="stop the sleep", timed_out=False)
    pid = int(pid_file.read_text())
    # The process group was killed; give the orphaned grandchild's reaper a moment, bounded.
    for _ in range(500):
        if _gone(pid):
            break
        await anyio.sleep(0.01)
    assert _gone(pid), f"sleep 30 (pid {pid}) survived the abort"


def test_a_missing_command_argument_is_reported_to_the_model(tool_pack: ToolPack) -> None:
    call = tool_pack.call_sync("run_command", {"args": ["x"]})

    assert_error(call, match="command")
    assert call.updates == ()
