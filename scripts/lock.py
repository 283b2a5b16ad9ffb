"""Print the pinned test environment's constraints file (run by ``make lock``).

``python scripts/lock.py VENV`` prints the constraints file for the environment in VENV
(``requirements/test.lock``): every installed distribution but customtools itself, pip and
the build backend included, so a new machine installs exactly what the last green run tested.
``tests/test_environment.py`` checks it against ``pyproject.toml``.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def freeze(venv: str) -> str:
    """The constraints file for the environment in ``venv``."""
    python = Path(venv) / "bin" / "python"
    listing = subprocess.run(
        [str(python), "-m", "pip", "freeze", "--all", "--exclude-editable"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    lines = sorted(
        (line for line in listing.splitlines() if line and not line.startswith("#")),
        key=str.lower,
    )
    version = subprocess.run(
        [str(python), "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    header = (
        "# The pinned test environment: pip constraints for `make test` (and `make demo`).\n"
        f"# Made by `make lock` on Python {version}; do not edit by hand.\n"
    )
    return header + "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        sys.stderr.write("usage: python scripts/lock.py VENV\n")
        return 2
    sys.stdout.write(freeze(argv[0]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
