"""Resource limits are hard in isolation workers and in the ``validate`` worker (review L2): a
module that lifts its soft limit still cannot allocate past it."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from customtools import CustomToolAdapter
from customtools._isolation._audit import audit_modules
from customtools._isolation._limits import WorkerLimits
from customtools._isolation._pool import IsolationPool
from customtools.loading import explicit_candidates

from ._helpers import load, options, write

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_DATA")

LIFT = """
import resource
_, HARD = resource.getrlimit(resource.RLIMIT_DATA)
try:
    resource.setrlimit(resource.RLIMIT_DATA, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
    LIFTED = "infinity"
except (ValueError, OSError):
    try:
        resource.setrlimit(resource.RLIMIT_DATA, (HARD, HARD))
        LIFTED = "to the hard limit"
    except (ValueError, OSError):
        LIFTED = "no"
"""


@linux_only
@pytest.mark.anyio
async def test_an_isolated_module_cannot_lift_its_memory_limit(tmp_path: Path) -> None:
    write(
        tmp_path,
        "lifter.py",
        """
        def factory(api):
            def grab(call_id, params, on_update, ctx, signal):
                block = bytearray(600 << 20)
                return f"allocated {len(block)} bytes (lifted: {LIFTED}, hard {HARD})"
            return CustomTool(name="grab", execute=grab)
        """,
        prelude=LIFT,
    )
    async with IsolationPool(**options(memory_limit_mib=256)) as pool:
        result = await load(pool, tmp_path, "lifter.py")
        outcome = await CustomToolAdapter(result.tools[0].tool).execute("1", {})
    assert outcome.is_error, outcome.text
    assert "MemoryError" in outcome.text


@linux_only
def test_a_validated_module_cannot_lift_its_memory_limit(tmp_path: Path) -> None:
    (tmp_path / "lifter.py").write_text(LIFT + "BLOCK = bytearray(1536 << 20)\n")
    candidates = list(explicit_candidates([tmp_path]).candidates)
    limits = WorkerLimits(memory_limit_mib=256)
    (report,) = audit_modules(candidates, cwd=str(tmp_path), timeout=30, limits=limits)
    assert report.status == "failed"
    assert "MemoryError" in report.errors[0]["error"]


def test_set_limits_lowers_the_hard_limits(tmp_path: Path) -> None:
    """In a fresh interpreter: every limit's hard value equals its soft one (CPU: one second
    above, so SIGXCPU still names the cause)."""
    import subprocess

    code = (
        "import resource\n"
        "from customtools._isolation._limits import WorkerLimits, set_limits\n"
        "set_limits(WorkerLimits(memory_limit_mib=300, cpu_limit=7, file_size_limit_mib=5))\n"
        "for name in ('RLIMIT_DATA', 'RLIMIT_CPU', 'RLIMIT_FSIZE', 'RLIMIT_CORE'):\n"
        "    print(name, *resource.getrlimit(getattr(resource, name)))\n"
    )
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=root
    )
    assert out.returncode == 0, out.stderr
    limits = {
        line.split()[0]: tuple(map(int, line.split()[1:])) for line in out.stdout.splitlines()
    }
    assert limits["RLIMIT_CPU"] == (7, 8)
    assert limits["RLIMIT_FSIZE"] == (5 << 20, 5 << 20)
    assert limits["RLIMIT_CORE"] == (0, 0)
    if sys.platform.startswith("linux"):
        assert limits["RLIMIT_DATA"] == (300 << 20, 300 << 20)
