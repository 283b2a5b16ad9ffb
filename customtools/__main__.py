"""``python -m customtools``: the same command as the ``customtools`` console script."""

from __future__ import annotations

from customtools.cli import main

if __name__ == "__main__":
    main()
