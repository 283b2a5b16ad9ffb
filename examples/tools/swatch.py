"""Returns an image: a PNG colour swatch, drawn without third-party libraries."""

from __future__ import annotations

import base64
import struct
import zlib
from typing import Any

from customtools import CustomTool, ImageContent, TextContent, ToolResult


def _png(width: int, height: int, rgb: tuple[int, int, int]) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    row = b"\x00" + bytes(rgb) * width
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(row * height))
        + chunk(b"IEND", b"")
    )


def factory(api: Any) -> CustomTool:
    Type = api.typebox

    def execute(tool_call_id: str, params: Any, on_update: Any, ctx: Any, signal: Any) -> Any:
        hex_colour = params["colour"].lstrip("#")
        rgb = (int(hex_colour[0:2], 16), int(hex_colour[2:4], 16), int(hex_colour[4:6], 16))
        data = _png(params["size"], params["size"], rgb)
        return ToolResult(
            content=(
                TextContent(text=f"a {params['size']}x{params['size']} swatch of #{hex_colour}"),
                ImageContent(data=base64.b64encode(data).decode("ascii"), mime_type="image/png"),
            ),
            details={"rgb": list(rgb), "bytes": len(data)},
            structured_content={"rgb": list(rgb), "size": params["size"]},
        )

    return CustomTool(
        name="swatch",
        label="Colour swatch",
        description="Draws a square PNG filled with one colour, given as #RRGGBB.",
        parameters=Type.Object(
            {
                "colour": Type.String(pattern="^#?[0-9A-Fa-f]{6}$"),
                "size": Type.Optional(Type.Integer(minimum=1, maximum=256, default=32)),
            }
        ),
        execute=execute,
    )
