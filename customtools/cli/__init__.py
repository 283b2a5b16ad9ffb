"""The customtools command (being written)."""

from __future__ import annotations


def main() -> None:
    """Entry point of the ``customtools`` command."""
    raise SystemExit("customtools: the command is not written yet")
