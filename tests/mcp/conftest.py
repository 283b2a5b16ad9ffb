"""The MCP bridge's tests need the ``mcp`` extra (``make test`` installs it).

Without it they are not collected (the rest of the suite still runs); with it they always are.
"""

from __future__ import annotations

import importlib.util

if importlib.util.find_spec("mcp") is None:  # pragma: no cover - only without the extra
    collect_ignore_glob = ["test_*.py"]
