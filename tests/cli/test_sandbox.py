"""Loading modules in child processes (``customtools.cli._sandbox``), called in-process."""

from __future__ import annotations

import os
import sys

import pytest

from customtools.cli import _sandbox
from customtools.cli._sandbox import load_isolated
from customtools.loading import explicit_candidates

from ._helpers import FIXTURES

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX process groups")


def _candidates(pack: str):
    return list(explicit_candidates([FIXTURES / pack]).candidates)


def test_every_candidate_gets_one_report_in_order_despite_crashes():
    candidates = _candidates("crash")
    reports = load_isolated(candidates, cwd=str(FIXTURES), timeout=30)
    assert [r.candidate for r in reports] == candidates
    assert [r.status for r in reports] == ["loaded", "crashed", "crashed", "loaded"]
    segfault = reports[1].errors[0]
    assert segfault["code"] == "crash"
    assert segfault["line"] == 5
    assert "Segmentation fault" in segfault["traceback"]
    assert [tool["name"] for tool in reports[3].tools] == ["last"]
    assert reports[0].seconds is not None
    assert reports[1].seconds is None


def test_a_hang_is_dumped_killed_and_the_rest_still_loads():
    reports = load_isolated(_candidates("hang"), cwd=str(FIXTURES), timeout=0.5)
    assert [r.status for r in reports] == ["timeout", "loaded"]
    error = reports[0].errors[0]
    assert error["code"] == "timeout"
    assert error["file"].endswith("a_hang.py")
    assert error["line"] == 6
    assert "a_hang.py" in error["traceback"]  # faulthandler's dump of the stuck thread


def test_a_child_that_cannot_start_fails_every_module(monkeypatch):
    monkeypatch.setattr(_sandbox, "_BOOTSTRAP", "import sys; sys.exit('no worker here')")
    candidates = _candidates("clean")
    reports = load_isolated(candidates, cwd=str(FIXTURES), timeout=5)
    assert [r.status for r in reports] == ["failed", "failed"]
    assert all(r.errors[0]["code"] == "worker-error" for r in reports)
    assert "no worker here" in reports[0].errors[0]["message"]


def test_tool_output_cannot_corrupt_the_report(tmp_path):
    (tmp_path / "noisy.py").write_text(
        "import os, sys\n"
        'print(\'{"event": "end"}\')\n'
        'os.write(1, b\'{"event": "end"}\\n\')\n'
        "from customtools import CustomTool\n\n"
        "def factory(api):\n"
        "    print('more noise')\n"
        "    return CustomTool(name='noisy', description='Prints.', execute=lambda *a: '')\n"
    )
    (tmp_path / "quiet.py").write_text(
        "from customtools import CustomTool\n\n"
        "def factory(api):\n"
        "    return CustomTool(name='quiet', description='Silent.', execute=lambda *a: '')\n"
    )
    candidates = list(explicit_candidates([tmp_path]).candidates)
    reports = load_isolated(candidates, cwd=str(tmp_path), timeout=30)
    assert [[t["name"] for t in r.tools] for r in reports] == [["noisy"], ["quiet"]]


def test_children_run_in_the_project_directory_without_it_on_sys_path(tmp_path):
    (tmp_path / "json.py").write_text("raise RuntimeError('the project shadowed json')\n")
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "where.py").write_text(
        "import json, os\n"
        "from customtools import CustomTool\n\n"
        "def factory(api):\n"
        "    name = 'in_' + os.path.basename(os.getcwd()).replace('-', '_')[:40]\n"
        "    return CustomTool(name=name, description=json.dumps(api.cwd), execute=lambda *a: '')\n"
    )
    candidates = list(explicit_candidates([tmp_path / "tools"]).candidates)
    (report,) = load_isolated(candidates, cwd=str(tmp_path), timeout=30)
    assert report.errors == []
    (tool,) = report.tools
    assert tool["description"] == f'"{tmp_path}"'
    assert tool["name"].startswith("in_")
    assert os.path.basename(str(tmp_path)).replace("-", "_")[:40] in tool["name"]
