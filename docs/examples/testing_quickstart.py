"""Tests for a tool pack, written the way a tool author writes them (docs/testing.md).

This file tests the example pack in ``examples/tools``: with ``customtools_packs = ["tools"]``
in the pytest configuration, the ``tool_pack`` fixture is that pack, loaded fresh for each
test, and the tools see the test's ``tmp_path`` as ``api.cwd``.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from pathlib import Path

from customtools import ImageContent
from customtools.testing import (
    PackReport,
    ToolPack,
    assert_error,
    assert_ok,
    assert_text,
    check_pack,
)


def test_countdown_streams_each_step(tool_pack: ToolPack) -> None:
    call = tool_pack.call_sync("countdown", {"steps": 3, "interval": 0})

    assert_ok(call)
    assert call.update_texts == [
        "countdown: step 1/3",
        "countdown: step 2/3",
        "countdown: step 3/3",
    ]
    assert call.text == "countdown: finished 3 steps"


def test_search_text_applies_its_defaults(tool_pack: ToolPack, tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("x = 1  # TODO tidy up\n")

    call = tool_pack.call_sync("search_text", {"pattern": "TODO"})

    assert_text(assert_ok(call), "app.py:1: x = 1  # TODO tidy up")
    assert call.details["count"] == 1


def test_invalid_arguments_never_reach_the_tool(tool_pack: ToolPack) -> None:
    call = tool_pack.call_sync("swatch", {"colour": "red"})

    assert_error(call, match="/colour")


def test_swatch_returns_a_png(tool_pack: ToolPack) -> None:
    call = assert_ok(tool_pack.call_sync("swatch", {"colour": "#ff8800", "size": 2}))

    image = call.content[1]
    assert isinstance(image, ImageContent)
    assert base64.b64decode(image.data).startswith(b"\x89PNG\r\n\x1a\n")
    assert call.structured_content == {"rgb": [255, 136, 0], "size": 2}


def test_the_pack_is_valid(tool_pack_paths: list[Path]) -> None:
    report = check_pack(*tool_pack_paths, strict=True)

    assert "countdown" in report.tool_names


def test_the_pack_passes_every_rule(check_tool_pack: Callable[..., PackReport]) -> None:
    report = check_tool_pack(strict=True)

    assert report.findings == ()
