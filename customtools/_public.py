"""Give public objects the module path users import them from.

Implementation lives in private modules; a public namespace (``customtools``,
``customtools.loading``, ...) re-exports it. Without this, reprs, ``help()`` and pickles
would show ``customtools._loading._loader.LoadResult`` instead of the name a user can import.
Each namespace calls :func:`rehome` on the classes and functions it exports; a test checks
that every exported object's ``__module__`` is the namespace it is listed in.
"""

from __future__ import annotations

import types
from collections.abc import Iterable, Mapping

__all__ = ["rehome"]


def rehome(namespace: Mapping[str, object], home: str, names: Iterable[str]) -> None:
    """Set ``__module__`` to ``home`` on each class and function in ``names``.

    Constants, instances and type aliases keep theirs (they have no ``__module__`` of their
    own to set). Objects defined elsewhere and merely re-exported (a stdlib type, say) are
    left alone: only objects from a ``customtools`` module are re-homed.
    """
    for name in names:
        obj = namespace.get(name)
        if not isinstance(obj, (type, types.FunctionType)):
            continue
        module = getattr(obj, "__module__", "") or ""
        if module == "customtools" or module.startswith("customtools."):
            obj.__module__ = home
