"""Every OpenTelemetry name customtools emits, pinned in one place.

The GenAI names follow the semantic conventions' "Execute tool span" (Development stability;
they moved to the ``semantic-conventions-genai`` repository in 2026): if they are renamed,
this is the only module to change. The ``customtools.*`` names are ours.
"""

from __future__ import annotations

from typing import Final

INSTRUMENTATION_NAME: Final = "customtools"

# GenAI semantic conventions (execute_tool span).
OPERATION_NAME: Final = "gen_ai.operation.name"
EXECUTE_TOOL: Final = "execute_tool"
TOOL_NAME: Final = "gen_ai.tool.name"
TOOL_CALL_ID: Final = "gen_ai.tool.call.id"
TOOL_TYPE: Final = "gen_ai.tool.type"
ERROR_TYPE: Final = "error.type"

# customtools attributes.
OUTCOME: Final = "customtools.outcome"
"""``ok``, ``invalid_arguments``, ``error``, ``timeout``, ``cancelled`` or ``refused``."""
ENRICHED: Final = "customtools.enriched"
"""Set on an enclosing ``execute_tool`` span (MCP server, framework) that customtools enriched
instead of opening its own."""
VIOLATIONS: Final = "customtools.violations"
POLICY_QUEUED: Final = "customtools.policy.queued"
"""Seconds the call waited for a slot or its rate (set only when it waited)."""
POLICY_CACHE: Final = "customtools.policy.cache"
"""``hit`` (answered from the cache) or ``stored``."""
POLICY_RETRIES: Final = "customtools.policy.retries"
POLICY_TRIMMED: Final = "customtools.policy.trimmed_bytes"
POLICY_DECISION: Final = "customtools.policy.decision"
"""The metric attribute: ``queued``, ``cache_hit``, ``retried``, ``trimmed`` or ``refused``."""
CANCEL_REASON: Final = "customtools.cancel.reason"

# Events on the call span.
EVENT_INVALID_ARGUMENTS: Final = "customtools.invalid_arguments"
EVENT_CANCELLED: Final = "customtools.cancelled"

# Child spans.
SPAN_WAIT: Final = "customtools.wait"  # name: "customtools.wait approval"

# Metrics.
CALL_DURATION: Final = "customtools.tool.call.duration"
CALL_COUNT: Final = "customtools.tool.calls"
QUEUE_DURATION: Final = "customtools.tool.queue.duration"
POLICY_DECISIONS: Final = "customtools.policy.decisions"

# Load spans: named by the loader, which cannot import this module (see customtools._observe).
