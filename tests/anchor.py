"""The 4-property tool schema of the performance anchors, with valid and invalid arguments.

Shared by the adapter, validation and property tests (the benchmarks keep their own copy in
``benchmarks/_harness.py`` so they run without the test suite).
"""

from __future__ import annotations

from typing import Any

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "pattern": "^[A-Za-z0-9_./-]+$", "minLength": 1},
        "limit": {"type": "integer", "minimum": 1},
        "tags": {"type": "array", "items": {"type": "string"}},
        "mode": {"type": "string", "enum": ["read", "write", "append"]},
    },
    "required": ["path", "limit", "mode"],
    "additionalProperties": False,
}
VALID: dict[str, Any] = {
    "path": "src/pkg/main.py",
    "limit": 10,
    "tags": ["a", "b", "c"],
    "mode": "read",
}
INVALID: dict[str, Any] = {"path": "bad path!", "limit": 0, "mode": "delete", "extra": 1}
"""Four independent violations: pattern, minimum, enum, and an unexpected property."""
