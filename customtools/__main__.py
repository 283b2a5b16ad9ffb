"""``python -m customtools``: the same command as the ``customtools`` console script.

``python -m`` puts the working directory first on ``sys.path``; in a project checkout that
would let the project's files shadow lazy imports (``yaml.py``) and its ``*.dist-info``
directories pose as installed distributions. The entry is dropped before anything else is
imported (``python -P -m customtools`` never adds it).
"""

from __future__ import annotations

import os
import sys


def _run() -> None:
    if sys.path and sys.path[0] in ("", ".", os.getcwd()):
        del sys.path[0]
    from customtools.cli import main

    main()


if __name__ == "__main__":
    _run()
