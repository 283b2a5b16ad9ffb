"""Fixture: writes to stdout at import, with print(), to fd 1 and from a child process."""

from __future__ import annotations

import os
import subprocess
from typing import Any

from customtools import CustomTool

print("noise-import")


def factory(api: Any) -> CustomTool:
    def execute(call_id: str, params: Any, on_update: Any, ctx: Any, signal: Any) -> Any:
        print("noise-print", flush=True)
        os.write(1, b"noise-fd\n")
        subprocess.run(["echo", "noise-child"], check=True)
        return "quiet result"

    return CustomTool(name="noisy", execute=execute)
