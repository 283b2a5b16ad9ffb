"""docs/observability.md: its set-up example runs, and it names every span and metric."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from customtools import _observe
from customtools.telemetry import _names

DOC = Path(__file__).resolve().parents[2] / "docs" / "observability.md"


def test_the_setup_example_observes_adapters_built_after_it(tmp_path: Path) -> None:
    text = DOC.read_text(encoding="utf-8")
    block = re.search(r"```python\n(.*?)```", text, re.DOTALL)
    assert block is not None
    check = (
        "\nfrom customtools import CustomTool, CustomToolAdapter\n"
        "adapter = CustomToolAdapter(CustomTool(name='t', execute=lambda *a: 'ok'))\n"
        "print(type(adapter).__name__)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", block.group(1) + check],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=tmp_path,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "_ObservedAdapter"


def test_every_span_and_metric_name_is_documented() -> None:
    text = DOC.read_text(encoding="utf-8")
    names = [
        _observe.STEP_DISCOVER,
        _observe.STEP_TRUST,
        _observe.STEP_MODULE,
        _observe.STEP_IMPORT,
        _observe.STEP_FACTORY,
        _observe.STEP_WORKER_START,
        _names.CALL_DURATION,
        _names.CALL_COUNT,
        _names.EVENT_INVALID_ARGUMENTS,
        _names.EVENT_CANCELLED,
        _names.OUTCOME,
        _names.ENRICHED,
        _names.VIOLATIONS,
        _names.CANCEL_REASON,
    ]
    assert [name for name in names if f"`{name}" not in text] == []
