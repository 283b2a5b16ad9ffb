"""swatch: returns an image block (a real PNG) plus structured details."""

from __future__ import annotations

import base64
import struct

from customtools import ImageContent, TextContent
from customtools.testing import ToolPack, assert_error, assert_ok

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def test_returns_a_png_image_and_structured_details(tool_pack: ToolPack) -> None:
    call = assert_ok(tool_pack.call_sync("swatch", {"colour": "#3366ff", "size": 4}))

    text, image = call.content
    assert isinstance(text, TextContent)
    assert text.text == "a 4x4 swatch of #3366ff"
    assert isinstance(image, ImageContent)
    assert image.mime_type == "image/png"
    data = base64.b64decode(image.data, validate=True)
    assert data[:8] == PNG_SIGNATURE
    assert data[12:16] == b"IHDR"
    assert struct.unpack(">II", data[16:24]) == (4, 4)
    assert call.details == {"rgb": [0x33, 0x66, 0xFF], "bytes": len(data)}
    assert call.structured_content == {"rgb": [0x33, 0x66, 0xFF], "size": 4}


def test_the_size_defaults_to_32_pixels(tool_pack: ToolPack) -> None:
    call = tool_pack.call_sync("swatch", {"colour": "00ff00"})

    image = call.content[1]
    assert isinstance(image, ImageContent)
    assert struct.unpack(">II", base64.b64decode(image.data)[16:24]) == (32, 32)
    assert call.structured_content == {"rgb": [0, 255, 0], "size": 32}


def test_the_result_survives_the_wire(tool_pack: ToolPack) -> None:
    wire = tool_pack.call_sync("swatch", {"colour": "#000000", "size": 1}).result.to_dict()

    assert [block["type"] for block in wire["content"]] == ["text", "image"]
    assert wire["content"][1]["mimeType"] == "image/png"
    assert wire["structuredContent"] == {"rgb": [0, 0, 0], "size": 1}


def test_a_colour_that_is_not_hex_is_rejected(tool_pack: ToolPack) -> None:
    assert_error(tool_pack.call_sync("swatch", {"colour": "red"}), match="/colour")
