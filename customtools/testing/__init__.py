"""Helpers for testing tool packs, and the pytest plugin built on them.

Tool authors test a pack the way a host runs it: load it with the host's loader, call tools
through the host's adapter, and look at the final result and every streamed update::

    from customtools.testing import assert_ok, load_pack_sync

    def test_countdown_streams_each_step():
        pack = load_pack_sync("tools")
        call = pack.call_sync("countdown", {"steps": 3, "interval": 0})
        assert_ok(call)
        assert call.update_texts[-1] == "countdown: step 3/3"

The pytest plugin (registered through the ``pytest11`` entry point, so installing customtools
is enough) adds the fixtures ``tool_pack``, ``load_tool_pack``, ``tool_pack_paths``,
``check_tool_pack`` and ``abort_controller``, and the ``customtools_packs`` configuration key.
See ``docs/testing.md`` for the guide.

Nothing here needs pytest: the helpers raise plain :class:`AssertionError` and work under any
test runner.

The names are imported on first use (PEP 562), so that the plugin, which pytest imports in
every run where customtools is installed, does not pull in the loader and the adapter until a
test asks for a fixture.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from customtools._public import rehome as _rehome

if TYPE_CHECKING:
    from customtools.testing._assertions import (
        assert_cancelled,
        assert_error,
        assert_ok,
        assert_text,
        describe_outcome,
    )
    from customtools.testing._call import ToolCall
    from customtools.testing._check import (
        Finding,
        PackReport,
        check_pack,
        validate_pack,
    )
    from customtools.testing._pack import ToolPack, load_pack, load_pack_sync

__all__ = [
    "Finding",
    "PackReport",
    "ToolCall",
    "ToolPack",
    "assert_cancelled",
    "assert_error",
    "assert_ok",
    "assert_text",
    "check_pack",
    "describe_outcome",
    "load_pack",
    "load_pack_sync",
    "validate_pack",
]

_HOMES = {
    "Finding": "_check",
    "PackReport": "_check",
    "ToolCall": "_call",
    "ToolPack": "_pack",
    "assert_cancelled": "_assertions",
    "assert_error": "_assertions",
    "assert_ok": "_assertions",
    "assert_text": "_assertions",
    "check_pack": "_check",
    "describe_outcome": "_assertions",
    "load_pack": "_pack",
    "load_pack_sync": "_pack",
    "validate_pack": "_check",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'customtools.testing' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"customtools.testing.{home}"), name)
    _rehome({name: value}, __name__, [name])
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
