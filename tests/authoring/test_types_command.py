"""`customtools types`: TypedDicts for params and results, drift checks, and a type checker
that accepts a correctly typed tool and rejects a wrong key or value type."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from customtools import CustomTool, Type
from customtools._typegen import class_name, render_types
from customtools.cli import run

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "tools"


def noop(*args: Any) -> str:
    return "ok"


def test_class_names_follow_the_tool_name() -> None:
    assert class_name("search_text", "Params") == "SearchTextParams"
    assert class_name("9lives") == "T9lives"


def test_types_cover_nesting_unions_refs_tuples_and_odd_keys() -> None:
    tool = CustomTool(
        name="odd",
        execute=noop,
        parameters={
            "type": "object",
            "properties": {
                "box": Type.Object({"x": Type.Integer(), "y": Type.Optional(Type.Number())}),
                "either": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                "pair": {
                    "type": "array",
                    "prefixItems": [{"type": "integer"}, {"type": "string"}],
                    "items": False,
                },
                "ref": {"$ref": "#/$defs/Point"},
                "free": {},
                "map": {"type": "object", "additionalProperties": {"type": "boolean"}},
                "dash-key": {"type": ["string", "integer"]},
            },
            "required": ["box"],
            "$defs": {"Point": Type.Object({"x": Type.Integer()})},
        },
    )
    text = render_types([tool])
    namespace: dict[str, Any] = {}
    exec(compile(text, "<types>", "exec"), namespace)  # the module is valid Python
    assert '"either": "str | None"' in text
    assert '"pair": "tuple[int, str]"' in text
    assert '"ref": "Point"' in text
    assert '"map": "dict[str, bool]"' in text
    assert '"dash-key": "str | int"' in text
    assert "class OddParamsBox(OddParamsBoxRequired, total=False):\n    y: float\n" in text
    assert "class Point(TypedDict):\n    x: int\n" in text


def test_check_passes_when_current_and_fails_on_drift(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "tool_types.py"
    assert run(["types", "--path", str(EXAMPLES), "-o", str(out)]) == 0
    assert "class ConvertTemperatureResult(TypedDict):" in out.read_text()
    assert run(["types", "--path", str(EXAMPLES), "-o", str(out), "--check"]) == 0
    out.write_text(out.read_text().replace("digits: int", "digits: str"))
    assert run(["types", "--path", str(EXAMPLES), "-o", str(out), "--check"]) == 1
    assert "is out of date" in capsys.readouterr().err


def test_check_needs_an_output_file(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["types", "--path", str(EXAMPLES), "--check"]) == 2
    assert "--check needs --output" in capsys.readouterr().err


GOOD = """
from __future__ import annotations
from typing import Any
from tool_types import SearchTextParams

def execute(
    tool_call_id: str, params: SearchTextParams, on_update: Any, ctx: Any, signal: Any
) -> str:
    pattern: str = params["pattern"]
    limit: int = params.get("max_results", 10)
    return f"{pattern} {limit}"
"""

BAD = """
from __future__ import annotations
from typing import Any
from tool_types import SearchTextParams

def execute(
    tool_call_id: str, params: SearchTextParams, on_update: Any, ctx: Any, signal: Any
) -> str:
    missing = params["nope"]
    wrong: int = params["pattern"]
    return str(missing) + str(wrong)
"""


def test_mypy_accepts_a_typed_tool_and_rejects_wrong_keys_and_types(tmp_path: Path) -> None:
    pytest.importorskip("mypy")
    assert run(["types", "--path", str(EXAMPLES), "-o", str(tmp_path / "tool_types.py")]) == 0
    (tmp_path / "good.py").write_text(GOOD)
    (tmp_path / "bad.py").write_text(BAD)
    env = {**os.environ, "MYPYPATH": str(tmp_path)}
    out = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--cache-dir",
         os.devnull, "good.py", "bad.py", "tool_types.py"],
        cwd=tmp_path, capture_output=True, text=True, env=env, timeout=240, check=False,
    )  # fmt: skip
    lines = [line for line in out.stdout.splitlines() if ": error:" in line]
    assert not [line for line in lines if line.startswith(("good.py", "tool_types.py"))], lines
    bad = [line for line in lines if line.startswith("bad.py")]
    assert any('"nope"' in line for line in bad), out.stdout
    assert any("Incompatible types in assignment" in line for line in bad), out.stdout
    assert len(bad) == 2, out.stdout
