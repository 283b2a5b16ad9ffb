"""What process isolation provides to the loader: :class:`ModuleIsolation`.

The loader defines the interface and ``customtools._isolation`` implements it
(:class:`~customtools.isolation.IsolationPool`), as the MCP edge implements
:class:`~customtools._loading._mcpjson.McpToolProvider`: the loader never imports the
isolation package, so the two do not know each other both ways.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from customtools._loading._import import ImportOutcome
from customtools._loading._records import Candidate

__all__ = ["ModuleIsolation"]


class ModuleIsolation(Protocol):
    """Imports candidates somewhere else (worker processes) and reports what they produced."""

    async def load_candidates(
        self,
        candidates: Sequence[Candidate],
        *,
        cwd: str,
        load_timeout: float | None,
        sandbox: Mapping[str, Any] | None = None,
    ) -> Sequence[ImportOutcome]:
        """One outcome per candidate, in order: tools (as proxies), load errors, diagnostics.

        ``sandbox`` (``{"home": str, "require": bool}``, or ``None``) asks for each worker to
        be confined to the permissions its module declares (see ``docs/sandbox.md``).
        """
        ...
