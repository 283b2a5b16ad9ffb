"""Tests for customtools._exec: real subprocesses on asyncio and trio."""

from __future__ import annotations

import os
import shutil
import signal
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import pytest

from customtools._abort import AbortController
from customtools._adapter import CustomToolAdapter
from customtools._content import TextContent
from customtools._exec import MINIMAL_ENV, ExecResult, exec_command
from customtools._loading._loader import load_custom_tools

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(sys.platform == "win32", reason="exec is POSIX only"),
]

SH = "sh"
# Starts a background grandchild, publishes "<sh pid> <grandchild pid>" atomically in the file
# named by $1, then waits. Extra shell code to run first goes in $2.
ROOT = Path(__file__).resolve().parent.parent
EXAMPLE_RUN_COMMAND = ROOT / "examples" / "tools" / "run_command.py"
TREE = 'eval "$2"; sleep 30 & echo "$$ $!" > "$1.tmp" && mv "$1.tmp" "$1"; wait'


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def _is_gone(pid: int) -> bool:
    """True when ``pid`` no longer runs: it does not exist, or it is a zombie.

    Orphaned grandchildren are re-parented to PID 1; an init that does not reap leaves them as
    zombies, which run no code, so a zombie counts as gone.
    """
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return False
    return stat[stat.rfind(b")") + 2 :].split()[0] == b"Z"


async def _assert_gone(pid: int) -> None:
    """Allow a short while for the kernel and init to finish with ``pid``."""
    with anyio.move_on_after(5):
        while not _is_gone(pid):
            await anyio.sleep(0.01)
    assert _is_gone(pid), f"process {pid} survived"


async def _read_pids(path: Path) -> tuple[int, int]:
    with anyio.fail_after(10):
        while not path.exists():
            await anyio.sleep(0.005)
    shell, grandchild = path.read_text().split()
    return int(shell), int(grandchild)


@pytest.fixture
async def reap_leftovers() -> AsyncIterator[list[int]]:
    """Pids a test started; any still running at the end are killed so a failure leaks none."""
    pids: list[int] = []
    yield pids
    for pid in pids:
        if not _is_gone(pid):
            os.kill(pid, signal.SIGKILL)


# --- exit codes, output, input ----------------------------------------------------------


async def test_success_reports_code_zero_and_stdout() -> None:
    result = await exec_command("printf", ["%s|", "a b", "c"])
    assert result.ok
    assert (result.code, result.signal, result.killed, result.timed_out) == (0, None, False, False)
    assert result.stdout == "a b|c|"  # one argv entry per argument, no shell splitting
    assert result.stderr == ""
    assert (result.command, result.args) == ("printf", ("%s|", "a b", "c"))
    assert result.duration >= 0


async def test_nonzero_exit_is_a_result_with_both_streams() -> None:
    result = await exec_command(SH, ["-c", "echo out; echo err >&2; exit 7"])
    assert not result.ok
    assert result.code == 7
    assert result.signal is None
    assert not result.killed
    assert result.stdout == "out\n"
    assert result.stderr == "err\n"


async def test_input_str_is_written_to_stdin_and_closed() -> None:
    result = await exec_command("cat", input="hello\nwörld")
    assert result.stdout == "hello\nwörld"


async def test_input_bytes_round_trip_larger_than_a_pipe_buffer() -> None:
    data = os.urandom(1 << 18).hex().encode()  # 512 KiB: needs concurrent write and read
    result = await exec_command("cat", input=data, max_output=len(data))
    assert result.ok
    assert result.stdout.encode() == data
    assert not result.stdout_truncated


async def test_without_input_stdin_is_dev_null() -> None:
    with anyio.fail_after(10):  # cat would block forever on an inherited, open stdin
        result = await exec_command("cat")
    assert result.ok
    assert result.stdout == ""


async def test_child_that_ignores_its_input_is_not_an_error() -> None:
    result = await exec_command(SH, ["-c", "exit 3"], input=b"x" * (1 << 20))
    assert result.code == 3


async def test_output_is_decoded_with_replacement() -> None:
    result = await exec_command("printf", ["\\377ok"])
    assert result.stdout == "\ufffdok"


async def test_truncation_does_not_split_a_character() -> None:
    result = await exec_command("cat", input="é" * 10, max_output=3)
    assert result.stdout == "é"
    assert result.stdout_truncated
    assert not result.stderr_truncated


# --- cwd and env ---------------------------------------------------------------------------


async def test_cwd_sets_the_working_directory(tmp_path: Path) -> None:
    result = await exec_command("pwd", cwd=tmp_path)
    assert Path(result.stdout.strip()).resolve() == tmp_path.resolve()


async def test_relative_command_path_resolves_against_cwd(tmp_path: Path) -> None:
    script = tmp_path / "hello.sh"
    script.write_text("#!/bin/sh\necho from-script\n")
    script.chmod(0o755)
    result = await exec_command("./hello.sh", cwd=tmp_path)
    assert result.stdout == "from-script\n"


async def test_env_is_set_over_the_minimal_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CT_EXEC_INHERITED", "inherited")
    result = await exec_command(
        SH, ["-c", 'echo "[$CT_EXEC_INHERITED] $CT_EXEC_GIVEN"'], env={"CT_EXEC_GIVEN": "given"}
    )
    assert result.stdout == "[] given\n"


async def test_default_environment_keeps_path_and_home_but_not_secrets(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-ct-secret")
    monkeypatch.setenv("LC_CT_TEST", "kept")
    env_program = shutil.which("env")
    assert env_program is not None
    result = await exec_command(env_program)
    names = {line.partition("=")[0] for line in result.stdout.splitlines()}
    assert "sk-ct-secret" not in result.stdout
    assert "OPENAI_API_KEY" not in names
    assert {"PATH", "LC_CT_TEST"} <= names
    assert names <= MINIMAL_ENV | {n for n in names if n.startswith("LC_")}


async def test_env_policy_inherit_passes_everything(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CT_EXEC_INHERITED", "inherited")
    result = await exec_command(
        SH, ["-c", 'echo "$CT_EXEC_INHERITED $CT_EXEC_GIVEN"'],
        env={"CT_EXEC_GIVEN": "given"}, env_policy="inherit",
    )  # fmt: skip
    assert result.stdout == "inherited given\n"


async def test_env_policy_none_passes_only_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CT_EXEC_INHERITED", "inherited")
    env_program = shutil.which("env")
    assert env_program is not None
    result = await exec_command(env_program, env={"ONLY": "1"}, env_policy="none")
    assert result.stdout == "ONLY=1\n"


async def test_unknown_env_policy_is_a_value_error_naming_the_choices() -> None:
    with pytest.raises(ValueError, match="env_policy must be 'minimal', 'inherit' or 'none'"):
        await exec_command("true", env_policy="all")  # type: ignore[arg-type]


async def test_example_run_command_tool_does_not_hand_host_secrets_to_the_model(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-ct-secret")
    loaded = await load_custom_tools([EXAMPLE_RUN_COMMAND], ROOT)
    assert loaded.errors == ()
    adapter = CustomToolAdapter(loaded.tools[0].tool)
    result = await adapter.execute("c1", {"command": "env"})
    text = "".join(block.text for block in result.content if isinstance(block, TextContent))
    assert not result.is_error, text
    assert "PATH=" in text
    assert "OPENAI_API_KEY" not in text
    assert "sk-ct-secret" not in text


# --- programs that cannot start ----------------------------------------------------------


async def test_missing_program_raises_file_not_found_naming_it(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError) as info:
        await exec_command("ct-no-such-program-xyz", cwd=tmp_path)
    message = str(info.value)
    assert "cannot start 'ct-no-such-program-xyz'" in message
    assert str(tmp_path) in message
    assert "PATH" in message
    assert isinstance(info.value.__cause__, FileNotFoundError)


async def test_missing_cwd_raises_file_not_found_naming_the_directory(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"
    with pytest.raises(FileNotFoundError, match=r"working directory '.*nowhere' does not exist"):
        await exec_command("true", cwd=missing)


async def test_file_as_cwd_raises_not_a_directory(tmp_path: Path) -> None:
    a_file = tmp_path / "file.txt"
    a_file.write_text("")
    with pytest.raises(NotADirectoryError, match="is not a directory"):
        await exec_command("true", cwd=a_file)


async def test_non_executable_file_raises_permission_error(tmp_path: Path) -> None:
    script = tmp_path / "plain.sh"
    script.write_text("echo never\n")
    with pytest.raises(PermissionError, match=r"cannot start .*plain\.sh.*executable"):
        await exec_command(str(script))


async def test_args_given_as_one_string_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="split it yourself"):
        await exec_command("ls", "-l -a")


@pytest.mark.parametrize("timeout", [0, -1.0])
async def test_non_positive_timeout_is_rejected(timeout: float) -> None:
    with pytest.raises(ValueError, match="timeout must be a positive number"):
        await exec_command("true", timeout=timeout)


# --- signals, abort, timeout, cancellation ------------------------------------------------


async def test_process_killed_by_its_own_signal_is_not_reported_as_killed_by_us() -> None:
    result = await exec_command(SH, ["-c", "kill -9 $$"])
    assert result.code is None
    assert result.signal == signal.SIGKILL
    assert not result.killed
    assert not result.ok


async def test_abort_kills_the_whole_tree(tmp_path: Path, reap_leftovers: list[int]) -> None:
    controller = AbortController()
    pidfile = tmp_path / "pids"
    results: list[ExecResult] = []

    async def run() -> None:
        results.append(
            await exec_command(
                SH, ["-c", TREE, "sh", str(pidfile), ":"], signal=controller.signal,
                kill_grace=1.0,
            )
        )  # fmt: skip

    async with anyio.create_task_group() as tg:
        tg.start_soon(run)
        shell, grandchild = await _read_pids(pidfile)
        reap_leftovers.extend([shell, grandchild])
        controller.abort("stop")

    [result] = results
    assert result.killed
    assert not result.timed_out
    assert result.code is None
    assert result.signal == signal.SIGTERM
    with pytest.raises(ProcessLookupError):
        os.kill(shell, 0)  # our child is dead *and reaped* when exec_command returns
    await _assert_gone(grandchild)


async def test_timeout_kills_the_whole_tree(tmp_path: Path, reap_leftovers: list[int]) -> None:
    pidfile = tmp_path / "pids"
    result = await exec_command(
        SH, ["-c", TREE + "; echo unreachable", "sh", str(pidfile), ":"], timeout=0.5,
        kill_grace=1.0,
    )  # fmt: skip
    shell, grandchild = await _read_pids(pidfile)
    reap_leftovers.extend([shell, grandchild])
    assert result.timed_out
    assert result.killed
    assert result.code is None
    assert result.signal == signal.SIGTERM
    assert "unreachable" not in result.stdout
    with pytest.raises(ProcessLookupError):
        os.kill(shell, 0)
    await _assert_gone(grandchild)


async def test_term_ignoring_group_gets_sigkill_after_grace(
    tmp_path: Path, reap_leftovers: list[int]
) -> None:
    controller = AbortController()
    pidfile = tmp_path / "pids"
    results: list[ExecResult] = []

    async def run() -> None:
        results.append(
            await exec_command(
                SH, ["-c", TREE, "sh", str(pidfile), "trap '' TERM"], signal=controller.signal,
                kill_grace=0.2,
            )
        )  # fmt: skip

    async with anyio.create_task_group() as tg:
        tg.start_soon(run)
        shell, grandchild = await _read_pids(pidfile)
        reap_leftovers.extend([shell, grandchild])
        controller.abort()

    [result] = results
    assert result.killed
    assert result.code is None
    assert result.signal == signal.SIGKILL
    with pytest.raises(ProcessLookupError):
        os.kill(shell, 0)
    await _assert_gone(grandchild)


async def test_grace_waits_for_group_members_outliving_the_child(tmp_path: Path) -> None:
    # The outer sh dies at once on SIGTERM; the inner one cleans up slowly. Returning as soon
    # as the direct child is gone would report success before the cleanup ran (or cut it off).
    controller = AbortController()
    ready, cleaned = tmp_path / "ready", tmp_path / "cleaned"
    inner = tmp_path / "inner.sh"
    inner.write_text(
        f"trap 'sleep 0.3; echo done > \"{cleaned}\"; exit 0' TERM\n"
        f'touch "{ready}"\n'
        "while :; do sleep 0.05; done\n"
    )
    results: list[ExecResult] = []

    async def run() -> None:
        results.append(
            await exec_command(
                SH, ["-c", f'sh "{inner}" & wait'], signal=controller.signal, kill_grace=10.0
            )
        )

    async with anyio.create_task_group() as tg:
        tg.start_soon(run)
        with anyio.fail_after(10):
            while not ready.exists():
                await anyio.sleep(0.005)
        controller.abort()

    [result] = results
    assert result.killed
    assert result.signal == signal.SIGTERM
    assert cleaned.read_text() == "done\n"


async def test_process_that_exits_zero_on_sigterm_still_reports_killed(tmp_path: Path) -> None:
    controller = AbortController()
    ready = tmp_path / "ready"
    script = f'trap "exit 0" TERM; touch "{ready}"; while :; do sleep 0.05; done'
    results: list[ExecResult] = []

    async def run() -> None:
        results.append(
            await exec_command(SH, ["-c", script], signal=controller.signal, kill_grace=2.0)
        )

    async with anyio.create_task_group() as tg:
        tg.start_soon(run)
        with anyio.fail_after(10):
            while not ready.exists():
                await anyio.sleep(0.005)
        controller.abort()

    [result] = results
    assert result.killed
    assert result.code is None  # never 0 for a process we stopped
    assert result.signal == signal.SIGTERM


async def test_cancelling_the_callers_scope_kills_the_tree_before_propagating(
    tmp_path: Path, reap_leftovers: list[int]
) -> None:
    pidfile = tmp_path / "pids"
    after_call: list[bool] = []
    scope = anyio.CancelScope()

    async def run() -> None:
        with scope:
            await exec_command(SH, ["-c", TREE, "sh", str(pidfile), ":"], kill_grace=1.0)
            after_call.append(True)

    async with anyio.create_task_group() as tg:
        tg.start_soon(run)
        shell, grandchild = await _read_pids(pidfile)
        reap_leftovers.extend([shell, grandchild])
        scope.cancel()

    assert scope.cancelled_caught
    assert after_call == []
    with pytest.raises(ProcessLookupError):
        os.kill(shell, 0)
    await _assert_gone(grandchild)


async def test_already_aborted_signal_starts_nothing(tmp_path: Path) -> None:
    controller = AbortController()
    controller.abort("too late")
    marker = tmp_path / "marker"
    result = await exec_command("touch", [str(marker)], signal=controller.signal)
    assert result.killed
    assert result.code is None
    assert result.signal is None
    assert (result.stdout, result.stderr) == ("", "")
    await anyio.sleep(0.05)
    assert not marker.exists()


async def test_already_cancelled_caller_starts_nothing(tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    with anyio.CancelScope() as scope:
        scope.cancel()
        await exec_command("touch", [str(marker)])
    assert scope.cancelled_caught
    await anyio.sleep(0.05)
    assert not marker.exists()


async def test_timeout_not_reached_is_a_normal_result() -> None:
    result = await exec_command("echo", ["quick"], timeout=30)
    assert result.ok
    assert not result.timed_out
    assert not result.killed


async def test_background_child_holding_the_pipe_does_not_hold_the_call(
    tmp_path: Path, reap_leftovers: list[int]
) -> None:
    pidfile = tmp_path / "pid"
    with anyio.fail_after(10):
        result = await exec_command(
            SH, ["-c", 'sleep 30 & echo "$!" > "$1"; echo done', "sh", str(pidfile)]
        )
    background = int(pidfile.read_text())
    reap_leftovers.append(background)
    assert result.ok
    assert result.stdout == "done\n"
    assert not _is_gone(background)  # a normal exit leaves descendants alone


# --- large output ------------------------------------------------------------------------


async def test_64_mib_on_both_streams_is_drained_and_capped() -> None:
    size = 64 << 20
    script = f"head -c {size} /dev/zero >&2 & head -c {size} /dev/zero; wait"
    with anyio.fail_after(50):
        result = await exec_command(SH, ["-c", script], max_output=1 << 20)
    assert result.ok
    assert result.stdout_truncated
    assert result.stderr_truncated
    assert len(result.stdout) == 1 << 20
    assert len(result.stderr) == 1 << 20
    assert set(result.stdout) == {"\0"}


async def test_output_at_exactly_the_cap_is_not_truncated() -> None:
    result = await exec_command("printf", ["abcd"], max_output=4)
    assert result.stdout == "abcd"
    assert not result.stdout_truncated


# --- hygiene and result shape -------------------------------------------------------------


async def test_no_file_descriptors_leak(tmp_path: Path) -> None:
    async def each_outcome() -> None:
        await exec_command("echo", ["ok"], input="x")
        with pytest.raises(FileNotFoundError):
            await exec_command("ct-no-such-program-xyz")
        await exec_command("sleep", ["30"], timeout=0.05, kill_grace=0.5)

    await each_outcome()  # warm up lazily created loop resources
    before = set(os.listdir("/proc/self/fd"))
    await each_outcome()
    assert set(os.listdir("/proc/self/fd")) == before


async def test_result_dict_round_trip() -> None:
    result = await exec_command(SH, ["-c", "echo hi; exit 2"])
    data = result.to_dict()
    assert data["code"] == 2
    assert data["stdout"] == "hi\n"
    assert data["timedOut"] is False
    assert data["args"] == ["-c", "echo hi; exit 2"]
    assert ExecResult.from_dict(data) == result


async def test_abort_during_the_spawn_stops_the_new_process(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    controller = AbortController()
    real_open_process = anyio.open_process
    started: list[int] = []

    async def open_then_abort(*args: object, **kwargs: object) -> object:
        process = await real_open_process(*args, **kwargs)  # type: ignore[arg-type]
        started.append(process.pid)
        controller.abort("while starting")
        return process

    monkeypatch.setattr(anyio, "open_process", open_then_abort)
    result = await exec_command("sleep", ["30"], signal=controller.signal, kill_grace=1.0)
    assert result.killed
    assert result.signal == signal.SIGTERM
    with pytest.raises(ProcessLookupError):
        os.kill(started[0], 0)


async def test_empty_input_closes_stdin_at_once() -> None:
    with anyio.fail_after(10):
        result = await exec_command("cat", input=b"")
    assert result.ok
    assert result.stdout == ""


async def test_descendant_that_keeps_writing_cannot_hold_the_call(
    tmp_path: Path, reap_leftovers: list[int]
) -> None:
    pidfile = tmp_path / "pid"
    script = '(while :; do echo tick; sleep 0.01; done) & echo "$!" > "$1"; echo parent-done'
    with anyio.fail_after(20):
        result = await exec_command(SH, ["-c", script, "sh", str(pidfile)])
    reap_leftovers.append(int(pidfile.read_text()))
    assert result.ok
    assert "parent-done\n" in result.stdout
    assert "tick" in result.stdout


@pytest.mark.parametrize(
    ("command", "options", "message"),
    [
        ("", {}, "command must be a non-empty string"),
        ("true", {"max_output": -1}, "max_output must be >= 0"),
        ("true", {"kill_grace": -0.5}, "kill_grace must be >= 0"),
    ],
)
async def test_bad_options_are_rejected_before_starting(
    command: str, options: dict[str, float], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        await exec_command(command, **options)  # type: ignore[arg-type]
