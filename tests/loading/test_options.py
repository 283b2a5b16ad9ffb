"""DiscoveryOptions: the discovery and trust options of discover_and_load as one value."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from customtools import discover_and_load
from customtools.loading import DiscoveryOptions, TrustStore, scan

from ._helpers import write

pytestmark = pytest.mark.anyio

TOOL = 'from customtools import tool\n@tool\ndef hi() -> str:\n    """Hi."""\n    return "hi"\n'


def test_options_are_frozen_and_normalised() -> None:
    options = DiscoveryOptions(plugin_dirs=["a"], disabled_providers=["codex"], app_name="acme")
    assert options.plugin_dirs == ("a",)
    assert options.disabled_providers == frozenset({"codex"})
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.app_name = "other"  # type: ignore[misc]
    assert options.replace(trust="none").trust == "none"
    assert options.trust == "prompt"


def test_a_bad_trust_policy_is_refused() -> None:
    with pytest.raises(ValueError, match="trust"):
        DiscoveryOptions(trust="maybe")  # type: ignore[arg-type]


async def test_options_drive_the_load_like_keywords(tmp_path: Path) -> None:
    project, home = tmp_path / "project", tmp_path / "home"
    write(project / ".acme" / "tools" / "hi.py", TOOL)
    home.mkdir()
    options = DiscoveryOptions(home=home, app_name="acme", entry_points=False)
    pending = await discover_and_load((), project, options=options)
    assert pending.tool_names == ()
    assert len(pending.pending_trust) == 1
    trusting = await discover_and_load((), project, options=options.replace(trust="all"))
    assert trusting.tool_names == ("hi",)
    keyword = await discover_and_load((), project, options=options, trust="all")
    assert keyword.tool_names == ("hi",)  # a keyword not at its default wins
    store = TrustStore(home=home, app_name="acme")
    store.grant(pending.pending_trust[0])
    granted = await discover_and_load((), project, options=options)
    assert granted.tool_names == ("hi",)
    listed = scan((), project, options=options)
    assert [Path(c.path).name for c in listed.candidates] == ["hi.py"]
    assert scan((), project, options=options, app_name="other").candidates == ()


def test_an_explicit_keyword_wins_even_when_it_equals_the_default(tmp_path: Path) -> None:
    from customtools._loading._options import door_options

    options = DiscoveryOptions(app_name="x", entry_points=False)
    keywords = {"app_name": "customtools", "entry_points": True}
    merged, _ = door_options("scan", options, keywords)
    assert (merged.app_name, merged.entry_points) == ("customtools", True)
    write(tmp_path / ".customtools" / "tools" / "hi.py", TOOL)
    listed = scan((), tmp_path, options=DiscoveryOptions(app_name="acme"), app_name="customtools")
    assert [Path(c.path).name for c in listed.candidates] == ["hi.py"]


async def test_a_load_result_is_built_once_and_read_only(tmp_path: Path) -> None:
    write(tmp_path / "hi.py", TOOL)
    result = await discover_and_load([tmp_path / "hi.py"], tmp_path, entry_points=False)
    assert result.tool_names == ("hi",)
    with pytest.raises(AttributeError, match="read-only"):
        result.tools = ()  # type: ignore[misc]
    result.set_ui_context(None)  # the UI and talk-back handlers stay settable
    result.set_talkback(sampler=None)
