"""customtools: model-callable custom tools for Python agent hosts."""

from __future__ import annotations

__version__ = "0.1.0.dev0"
