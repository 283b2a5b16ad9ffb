"""Fixtures for the host toolkit tests: async backends and the protocol's JSON Schemas."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pytest

SCHEMAS = Path(__file__).resolve().parents[1] / "conformance" / "ahp" / "schema"

# The generated schemas reference enum members (``#/$defs/CustomizationType.Plugin``) that they
# never define. These are the members this toolkit emits; each becomes a ``const``.
ENUM_MEMBERS = {
    "CustomizationType": {
        "Plugin": "plugin",
        "Directory": "directory",
        "Agent": "agent",
        "Skill": "skill",
        "Prompt": "prompt",
        "Rule": "rule",
        "Hook": "hook",
        "McpServer": "mcpServer",
    },
    "CustomizationLoadStatus": {
        "Loading": "loading",
        "Loaded": "loaded",
        "Degraded": "degraded",
        "Error": "error",
    },
    "McpServerStatus": {
        "Starting": "starting",
        "Ready": "ready",
        "AuthRequired": "authRequired",
        "Error": "error",
        "Stopped": "stopped",
    },
    "ToolCallContributorKind": {"Client": "client", "Mcp": "mcp"},
    "ChatInputQuestionKind": {
        "Text": "text",
        "Number": "number",
        "Integer": "integer",
        "Boolean": "boolean",
        "SingleSelect": "single-select",
        "MultiSelect": "multi-select",
    },
    "ChatInputAnswerValueKind": {
        "Text": "text",
        "Number": "number",
        "Boolean": "boolean",
        "Selected": "selected",
        "SelectedMany": "selected-many",
    },
    "ChatInputAnswerState": {"Draft": "draft", "Submitted": "submitted", "Skipped": "skipped"},
}
# Whole enums referenced without a member (``#/$defs/ChatInputResponseKind``) but not defined.
WHOLE_ENUMS = {"ChatInputResponseKind": ["accept", "decline", "cancel"]}


def _action_type(member: str) -> str:
    """``SessionActiveClientSet`` -> ``session/activeClientSet``."""
    words = re.findall(r"[A-Z][a-z]*", member)
    prefix = words[0].lower()
    rest = "".join(words[1:])
    return f"{prefix}/{rest[:1].lower()}{rest[1:]}"


def _patched(schema: dict[str, Any]) -> dict[str, Any]:
    """An in-memory copy of a generated schema made usable (the file on disk is untouched)."""
    text = json.dumps(schema)
    defs: dict[str, Any] = dict(schema["$defs"])
    defs["URI"] = {"type": "string"}
    for ref in set(re.findall(r'"#/\$defs/([^"]+)"', text)):
        if ref in defs:
            continue
        enum, _, member = ref.partition(".")
        if ref in WHOLE_ENUMS:
            defs[ref] = {"enum": WHOLE_ENUMS[ref]}
        elif enum in ENUM_MEMBERS and member in ENUM_MEMBERS[enum]:
            defs[ref] = {"const": ENUM_MEMBERS[enum][member]}
        elif enum == "ActionType" and member:
            defs[ref] = {"const": _action_type(member)}
        else:
            defs[ref] = {}  # an enum this toolkit never emits: left unchecked

    def fix(node: Any) -> Any:
        if isinstance(node, dict):
            out = {k: fix(v) for k, v in node.items()}
            # A leading ``{}`` in every ``oneOf`` is a generator artifact: it matches anything,
            # so a valid variant would match twice and fail ``oneOf``.
            if isinstance(out.get("oneOf"), list):
                out["oneOf"] = [v for v in out["oneOf"] if v != {}]
            return out
        if isinstance(node, list):
            return [fix(v) for v in node]
        return node

    fixed = fix({**schema, "$defs": defs})
    # ``ToolDefinition.inputSchema/outputSchema`` type ``properties`` as a string: another
    # artifact. They are JSON Schema objects with a ``type``.
    for name in ("inputSchema", "outputSchema"):
        fixed["$defs"]["ToolDefinition"]["properties"][name] = {
            "type": "object",
            "required": ["type"],
        }
    return fixed


@pytest.fixture(scope="session")
def validate_wire() -> Callable[[str, str, Any], None]:
    """``validate_wire(schema_file, definition, instance)`` raises if ``instance`` is invalid."""
    cache: dict[str, dict[str, Any]] = {}

    def validate(schema_file: str, definition: str, instance: Any) -> None:
        if schema_file not in cache:
            raw = json.loads((SCHEMAS / schema_file).read_text(encoding="utf-8"))
            cache[schema_file] = _patched(raw)
        schema = cache[schema_file]
        root = {**schema, "$ref": f"#/$defs/{definition}"}
        jsonschema.Draft202012Validator(root).validate(instance)

    return validate


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    """Run every ``@pytest.mark.anyio`` test on asyncio and on trio."""
    return str(request.param)
