"""The worker-process core (``_isolation._process``): one exit describer for both modes."""

from __future__ import annotations

import signal
import sys
from pathlib import Path

import pytest

from customtools._isolation._audit import audit_modules
from customtools._isolation._limits import WorkerLimits
from customtools._isolation._pool import IsolationPool
from customtools._isolation._process import INTERNAL_EXIT, describe_exit, scrubbed_environment
from customtools._loading._scan import explicit_candidates

from ._helpers import load, options, write

SEGFAULT = (
    "was killed by SIGSEGV (the Python interpreter crashed, in the module or a C extension it uses)"
)
OS_EXIT = "exited with status 3 (without an exception: os._exit(), or a C extension ended it)"


@pytest.mark.parametrize(
    ("returncode", "limits", "words"),
    [
        (None, None, "ended"),
        (3, None, OS_EXIT),
        (
            INTERNAL_EXIT,
            None,
            "exited with status 70 (customtools' own worker code failed; its traceback is in"
            " the worker's stderr)",
        ),
        (-signal.SIGSEGV, None, SEGFAULT),
        (
            -signal.SIGXCPU,
            WorkerLimits(cpu_limit=4),
            "was killed by SIGXCPU (it used up its CPU time, 4 s)",
        ),
        (-signal.SIGXCPU, None, "was killed by SIGXCPU (it used up its CPU time)"),
        (
            -signal.SIGKILL,
            WorkerLimits(cpu_limit=4),
            "was killed by SIGKILL (it used up its CPU time, 4 s, or was killed from outside)",
        ),
        (-signal.SIGKILL, WorkerLimits(), "was killed by SIGKILL"),
        (-signal.SIGTERM, None, "was killed by SIGTERM"),
    ],
)
def test_describe_exit_words_every_way_a_worker_ends(
    returncode: int | None, limits: WorkerLimits | None, words: str
) -> None:
    assert describe_exit(returncode, limits) == words


def test_describe_exit_without_explanation_is_the_bare_fact() -> None:
    assert describe_exit(3, explain=False) == "exited with status 3"
    assert describe_exit(-signal.SIGSEGV, explain=False) == "was killed by SIGSEGV"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="POSIX signals")
@pytest.mark.anyio
async def test_a_crash_reads_the_same_in_validate_and_in_a_pool(tmp_path: Path) -> None:
    write(tmp_path, "segv.py", "import ctypes\nctypes.string_at(0)\n")
    write(tmp_path, "quits.py", "os._exit(3)\n")
    candidates = list(explicit_candidates([tmp_path / "segv.py", tmp_path / "quits.py"]).candidates)
    audited = audit_modules(candidates, cwd=str(tmp_path), timeout=30)
    async with IsolationPool(**options()) as pool:
        loaded = await load(pool, tmp_path, "segv.py", "quits.py")
    pooled = {Path(error.path).name: error.error for error in loaded.errors}
    assert (
        audited[0].errors[0]["error"]
        == f"loading the module ended its worker process: it {SEGFAULT}"
    )
    assert (
        audited[1].errors[0]["error"]
        == f"loading the module ended its worker process: it {OS_EXIT}"
    )
    assert f"the worker process importing {tmp_path / 'segv.py'} {SEGFAULT};" in pooled["segv.py"]
    assert f"the worker process importing {tmp_path / 'quits.py'} {OS_EXIT};" in pooled["quits.py"]


def test_a_scrubbed_environment_keeps_the_allowlist_what_is_passed_and_prefixes() -> None:
    base = {"PATH": "/bin", "GITHUB_TOKEN": "t", "MINE": "m", "LC_ALL": "C", "path": "x"}
    assert scrubbed_environment(base, ("MINE",)) == {"PATH": "/bin", "MINE": "m", "LC_ALL": "C"}
    assert scrubbed_environment(base, names=("GITHUB_TOKEN",), prefixes=()) == {"GITHUB_TOKEN": "t"}
