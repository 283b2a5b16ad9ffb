"""Map the tool loader's report onto customization load states.

The loader (``discover_and_load``) reports, per file, ``errors`` (``.path``, ``.error``,
``.source``), ``metadata`` files (``.path``, ``.name``, ``.description``, ``.source``) and loaded
``tools`` (``.source``). Grouped by source -- the tools directory or plugin they came from --
they give the same states a customization container shows:

* no error from the source: ``loaded``;
* errors, and at least one tool or metadata file from the same source: ``degraded``;
* errors only: ``error``.

The message lists every failing file with its cause, so a user sees what to fix. The records
are read duck-typed; nothing here imports the loader.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from customtools._format import describe_exception, escape_control, safe_repr
from customtools._loading._paths import display_path
from customtools.host._parts import CustomizationLoadState

__all__ = ["load_states_from_loader", "source_key"]


def source_key(record: Any) -> str:
    """The key a loader record is grouped under.

    ``record.source.path`` when the source has a path, ``record.source`` when it is a string,
    otherwise the directory of ``record.path``.
    """
    source = getattr(record, "source", None)
    path = getattr(source, "path", None)
    if path is not None:
        return str(path)
    if isinstance(source, (str, Path)):
        return str(source)
    return str(Path(str(getattr(record, "path", ""))).parent)


def _cause(error: Any) -> str:
    if isinstance(error, BaseException):
        return describe_exception(error)  # raised by tool code: never str() it directly
    return escape_control(error) if isinstance(error, str) else safe_repr(error)


def load_states_from_loader(
    result: Any = None,
    *,
    errors: Iterable[Any] = (),
    metadata: Iterable[Any] = (),
    tools: Iterable[Any] = (),
) -> dict[str, CustomizationLoadState]:
    """Return one load state per source of a load.

    Args:
        result: a ``LoadResult``-like object (its ``errors``, ``metadata`` and ``tools`` are
            read when present); or pass the three lists directly.
        errors: error records (``.path``, ``.error``, ``.source``).
        metadata: metadata records (``.path``, ``.name``, ``.description``, ``.source``).
        tools: loaded-tool records (``.source``).

    Returns:
        ``{source_key: CustomizationLoadState}`` in first-seen order.
    """
    if result is not None:
        errors = [*errors, *getattr(result, "errors", ())]
        metadata = [*metadata, *getattr(result, "metadata", ())]
        tools = [*tools, *getattr(result, "tools", ())]
    failures: dict[str, list[str]] = {}
    successes: dict[str, int] = {}
    order: list[str] = []
    for record in errors:
        key = source_key(record)
        order.append(key)
        name = escape_control(display_path(Path(str(getattr(record, "path", "?"))).name))
        failures.setdefault(key, []).append(f"{name}: {_cause(getattr(record, 'error', None))}")
    for record in (*metadata, *tools):
        key = source_key(record)
        order.append(key)
        successes[key] = successes.get(key, 0) + 1
    states: dict[str, CustomizationLoadState] = {}
    for key in dict.fromkeys(order):
        problems = failures.get(key)
        if not problems:
            states[key] = CustomizationLoadState.loaded()
        elif successes.get(key):
            states[key] = CustomizationLoadState.degraded("; ".join(problems))
        else:
            states[key] = CustomizationLoadState.error("; ".join(problems))
    return states
