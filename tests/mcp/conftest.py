"""The MCP bridge's tests need the ``mcp`` extra (``make test`` installs it)."""

from __future__ import annotations

import pytest

pytest.importorskip("mcp", reason="the mcp extra is not installed: pip install -e '.[dev,mcp]'")
