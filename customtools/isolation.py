"""Process isolation: tool modules imported and run in supervised worker processes.

Hosts pass an :class:`IsolationPool` to ``discover_and_load(..., isolation=pool)``,
``load_custom_tools(..., isolation=pool)`` or ``load_scan(..., isolation=pool)``: every module
is then imported in a worker process of its own, and the load's tools are proxies, run behind
the same :class:`~customtools.CustomToolAdapter`. A crash, ``os._exit``, a segfault or a kill
becomes an error result or a load error naming the module and the exit cause; a tool that
ignores its abort signal is stopped by killing its worker; memory and CPU are limited per
worker (:class:`IsolationOptions`). See ``docs/isolation.md``.

With ``sandbox=True`` as well, each worker is confined by the kernel to the
:class:`Permissions` its module declares (``PERMISSIONS = Permissions(...)``); see
``docs/sandbox.md``.
"""

from __future__ import annotations

from customtools._isolation._options import IsolationOptions
from customtools._isolation._pool import IsolationPool
from customtools._permissions import Permissions, PermissionsError
from customtools._public import rehome as _rehome

__all__ = ["IsolationOptions", "IsolationPool", "Permissions", "PermissionsError"]

_rehome(globals(), __name__, __all__)
