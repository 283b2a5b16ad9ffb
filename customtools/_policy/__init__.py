"""The execution policy: concurrency caps, rates, result budgets, retries and caching for
every call the adapter runs (see docs/policy.md).

:class:`Policy` holds the settings; :class:`ToolPlan` applies them to one tool's calls; the
stores behind them are small interfaces with in-memory implementations (:mod:`._backends`).
"""

from customtools._policy._apply import (
    POLICY_META_KEY,
    PackFacts,
    PackInfo,
    ToolPlan,
    read_result_tool,
)
from customtools._policy._backends import (
    Gate,
    MemoryBackend,
    MemoryCache,
    MemoryGate,
    MemoryRates,
    MemorySlots,
    MemoryStore,
    PolicyBackend,
    Rates,
    ResultCache,
    ResultStore,
    Slots,
)
from customtools._policy._settings import Effects, Policy, PolicyError, declared_policy, effects

__all__ = [
    "POLICY_META_KEY",
    "Effects",
    "Gate",
    "MemoryBackend",
    "MemoryCache",
    "MemoryGate",
    "MemoryRates",
    "MemorySlots",
    "MemoryStore",
    "PackFacts",
    "PackInfo",
    "Policy",
    "PolicyBackend",
    "PolicyError",
    "Rates",
    "ResultCache",
    "ResultStore",
    "Slots",
    "ToolPlan",
    "declared_policy",
    "effects",
    "read_result_tool",
]
