"""Tool definitions in the formats model providers and protocols expect.

Each ``to_*`` function turns a :class:`~customtools.CustomTool` into the dictionary one API
takes (OpenAI chat or responses, Anthropic, MCP, a plain JSON Schema); the ``*_issues``
functions list what a provider would reject or change, as :class:`CompatibilityIssue`
records. Nothing is sent anywhere. See ``docs/hosting.md``.
"""

from __future__ import annotations

from customtools._export import (
    CompatibilityIssue,
    anthropic_issues,
    openai_issues,
    openai_strict_issues,
    to_anthropic,
    to_json_schema,
    to_mcp,
    to_openai,
)
from customtools._public import rehome as _rehome

__all__ = [
    "CompatibilityIssue",
    "anthropic_issues",
    "openai_issues",
    "openai_strict_issues",
    "to_anthropic",
    "to_json_schema",
    "to_mcp",
    "to_openai",
]

_rehome(globals(), __name__, __all__)
