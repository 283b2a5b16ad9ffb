"""The test suite's fork server (``tests/zygote.py``): a forked process is what ``python``
would have started (argv, paths, environment, working directory, stdio, signal handlers,
descriptors, exit status), its starter's signals reach it, and it dies with its starter."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import zygote

pytestmark = pytest.mark.skipif(not zygote.enabled(), reason="CUSTOMTOOLS_TEST_ZYGOTE=0")

PROBE = """
import json, os, signal, sys
seen = {
    "name": __name__,
    "file": globals().get("__file__"),
    "argv": sys.argv,
    "path": sys.path,
    "cwd": os.getcwd(),
    "env": dict(os.environ),
    "stdio": [
        [s.encoding, s.errors, s.line_buffering, s.write_through, s.name, s.mode]
        for s in (sys.stdin, sys.stdout, sys.stderr)
    ],
    "handlers": [str(signal.getsignal(n)) for n in sorted(signal.valid_signals())
                 if n not in (signal.SIGKILL, signal.SIGSTOP)],
    "fds": sorted(os.listdir("/proc/self/fd")),
    "bytecode": sys.dont_write_bytecode,
    "stdin": sys.stdin.read(),
}
print(json.dumps(seen))
"""


def both(args: list[str], **options: object) -> tuple[object, object]:
    """``python ARGS`` run plainly and through the zygote: each run's (status, out, err)."""
    runs = []
    for argv in ([sys.executable, *args], zygote.python_argv(*args)):
        done = subprocess.run(argv, capture_output=True, text=True, timeout=60, **options)  # type: ignore[call-overload]
        runs.append((done.returncode, done.stdout, done.stderr))
    return runs[0], runs[1]


@pytest.mark.parametrize("how", ["script", "module", "code"])
def test_a_forked_process_sees_what_a_fresh_interpreter_sees(tmp_path: Path, how: str) -> None:
    lib, work = tmp_path / "lib", tmp_path / "work"
    lib.mkdir()
    work.mkdir()
    (lib / "probe.py").write_text(PROBE)
    args = {
        "script": [str(lib / "probe.py"), "a", "b c"],
        "module": ["-m", "probe", "a"],
        "code": ["-c", PROBE, "a"],
    }[how]
    # No LANG: both interpreters coerce the C locale (LC_CTYPE=C.UTF-8 in their environment).
    env = {"PATH": os.environ["PATH"], "PYTHONPATH": str(lib), "MARK": "é"}
    plain, forked = both(args, env=env, cwd=work, input="line one\nline two\n")
    assert plain[0] == 0, plain[2]
    assert forked[0] == 0, forked[2]
    seen_plain, seen_forked = json.loads(str(plain[1])), json.loads(str(forked[1]))
    # Key by key, so that a failure names what differs.
    assert {k: v for k, v in seen_forked.items() if seen_plain.get(k) != v} == {}
    assert forked == plain
    assert seen_forked["stdin"] == "line one\nline two\n"


@pytest.mark.parametrize(
    "code",
    [
        "print('out'); import sys; sys.exit(3)",
        "raise SystemExit('bye')",
        "import sys; print('partial', end=''); raise ValueError(5)",
        "import os, signal; os.kill(os.getpid(), signal.SIGTERM)",
        "raise KeyboardInterrupt",
        "import atexit; atexit.register(print, 'at exit')",
        "import threading, time\n"
        "threading.Thread(target=lambda: (time.sleep(0.2), print('joined'))).start()",
    ],
    ids=["exit", "message", "error", "signal", "interrupt", "atexit", "thread"],
)
def test_a_forked_process_ends_as_a_fresh_interpreter_would(code: str) -> None:
    plain, forked = both(["-c", code], env={"PATH": os.environ["PATH"]})
    assert forked == plain


def test_an_interpreter_option_runs_plainly() -> None:
    code = "import sys; print(sys.flags.dev_mode, sys.orig_argv[1])"
    done = subprocess.run(
        zygote.python_argv("-X", "dev", "-c", code),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.stdout.split() == ["True", "-X"]


def test_an_unreachable_zygote_is_an_error_saying_how_to_go_without(tmp_path: Path) -> None:
    argv = zygote.python_argv("-c", "print('ran')")
    argv[argv.index("client") + 1] = str(tmp_path / "nothing")
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert done.returncode == 70
    assert "did not answer" in done.stderr
    assert "CUSTOMTOOLS_TEST_ZYGOTE=0" in done.stderr
    assert done.stdout == ""


@contextmanager
def started(argv: list[str]) -> Iterator[tuple[subprocess.Popen[str], list[int]]]:
    """``argv`` started with its stdout piped; yields it and the pids it printed on its first
    line. Killed on exit."""
    with subprocess.Popen(argv, stdout=subprocess.PIPE, text=True) as process:
        try:
            assert process.stdout is not None
            yield process, [int(pid) for pid in process.stdout.readline().split()]
        finally:
            process.kill()


def gone(pid: int) -> bool:
    """True once ``pid`` runs no more (a zombie counts as gone), waiting at most 10 s."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(") ", 1)[1][0]
        except (OSError, IndexError):
            return True
        if state == "Z":
            return True
        time.sleep(0.01)
    return False


SLEEPER = "import os, time\nprint(os.getpid(), flush=True)\ntime.sleep(30)\n"
PARENT = (
    "import os, subprocess, time\n"
    "sleep = subprocess.Popen(['sleep', '30'])\n"
    "print(os.getpid(), sleep.pid, flush=True)\n"
    "time.sleep(30)\n"
)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_to_the_starter_reaches_the_forked_process(signum: int) -> None:
    with started(zygote.python_argv("-c", SLEEPER)) as (process, (pid,)):
        assert pid != process.pid
        process.send_signal(signum)
        assert process.wait(timeout=30) == -signum
    assert gone(pid)


def test_a_killed_starter_takes_the_forked_process_and_its_group_with_it() -> None:
    with started(zygote.python_argv("-c", PARENT)) as (process, (pid, sleep)):
        process.kill()
        assert process.wait(timeout=30) == -signal.SIGKILL
    assert gone(pid)
    assert gone(sleep)
