"""What process isolation provides to the loader: :class:`ModuleIsolation`, and what the
loader asks of it: :class:`IsolationRequest`.

The loader defines the interface and ``customtools._isolation`` implements it
(:class:`~customtools.isolation.IsolationPool`), as the MCP edge implements
:class:`~customtools._loading._mcpjson.McpToolProvider`: the loader never imports the
isolation package, so the two do not know each other both ways.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from customtools._loading._import import ImportOutcome
from customtools._loading._records import Candidate

__all__ = ["IsolationRequest", "ModuleIsolation"]


class ModuleIsolation(Protocol):
    """Imports candidates somewhere else (worker processes) and reports what they produced."""

    async def load_candidates(
        self,
        candidates: Sequence[Candidate],
        *,
        cwd: str,
        load_timeout: float | None,
        request: IsolationRequest,
    ) -> Sequence[ImportOutcome]:
        """One outcome per candidate, in order: tools (as proxies), load errors, diagnostics.

        ``request.sandbox`` asks for each worker to be confined to the permissions its module
        declares (see ``docs/sandbox.md``). An outcome's ``cleanup`` stops its workers once a
        reload replaced it.
        """
        ...


@dataclass(frozen=True, slots=True, kw_only=True)
class IsolationRequest:
    """Import each module in a worker process of ``pool``, optionally kernel-confined.

    Args:
        pool: the :class:`~customtools.isolation.IsolationPool` (any :class:`ModuleIsolation`).
        sandbox: confine each worker to the permissions its module declares.
        require: refuse a module whose sandbox cannot be fully enforced (implies ``sandbox``).
        home: the directory ``~`` in declared permissions means (default: the user's home).
    """

    pool: ModuleIsolation
    sandbox: bool = False
    require: bool = False
    home: str | None = None

    def __post_init__(self) -> None:
        if self.require:
            object.__setattr__(self, "sandbox", True)
        if self.home is not None:
            object.__setattr__(self, "home", os.path.abspath(os.fspath(self.home)))
