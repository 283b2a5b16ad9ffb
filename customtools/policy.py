"""The execution policy: how many calls run at once, how big a result may be, and which
calls may be retried or cached.

A host sets one :class:`Policy` (``CustomToolAdapter(tool, policy=...)``,
``ToolRegistry(..., policy=...)``, ``ToolServer(..., policy=...)``, ``serve(policy=...)``,
the framework adapters); a pack declares its own defaults as ``POLICY = Policy(...)``. The
stores behind caps, rates, trimmed results and the cache are the interfaces
:class:`PolicyBackend`, :class:`Slots`, :class:`Rates`, :class:`ResultStore` and
:class:`ResultCache`; :class:`MemoryBackend` keeps them in this process. See
``docs/policy.md``. A tool raises :class:`TransientToolError` for a failure worth retrying.
"""

from __future__ import annotations

from customtools._errors import TransientToolError
from customtools._policy import POLICY_META_KEY, Policy, PolicyError, _backends, read_result_tool
from customtools._policy._backends import *  # noqa: F403 - the stores' interfaces and memory kind
from customtools._public import rehome as _rehome

__all__ = [
    *_backends.__all__,
    "POLICY_META_KEY",
    "Policy",
    "PolicyError",
    "TransientToolError",
    "read_result_tool",
]

_rehome(globals(), __name__, __all__)
