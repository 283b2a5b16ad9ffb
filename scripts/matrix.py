"""Run the capability matrix and write ``docs/matrix.md`` from its results.

``python scripts/matrix.py`` runs ``tests/matrix/test_matrix.py`` (every cell that works or
has a gap), checks that each result is what ``tests/matrix/table.py`` states (a ``works``
cell passed, a ``gap`` cell failed as expected), and only then writes the page. A cell whose
result disagrees is printed and nothing is written (exit status 1): change the table (or fix
the code), then run it again. Extra arguments go to pytest (``-x``, ...); the page is written
only when every cell ran as the table states. ``--check`` runs and compares, writing nothing.
"""

from __future__ import annotations

import resource
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "matrix.md"


class Results:
    """A pytest plugin keeping each cell's outcome."""

    def __init__(self) -> None:
        self.outcomes: dict[str, str] = {}

    def pytest_runtest_logreport(self, report: Any) -> None:
        if "::test_cell[" not in report.nodeid:
            return
        cell = report.nodeid.split("[", 1)[1].rstrip("]")
        if report.when == "call":
            if hasattr(report, "wasxfail"):
                outcome = "xfailed" if report.skipped else "xpassed"
            else:
                outcome = report.outcome
            self.outcomes[cell] = outcome
        elif report.failed or report.skipped:  # setup or teardown
            self.outcomes[cell] = f"{report.when} {report.outcome}"


def main(argv: list[str]) -> int:
    import pytest

    sys.path.insert(0, str(ROOT))
    from tests.matrix import table

    check = "--check" in argv
    args = [arg for arg in argv if arg != "--check"]
    results = Results()
    started = time.monotonic()
    pytest.main([str(ROOT / "tests" / "matrix"), "-q", *args], plugins=[results])
    wall = time.monotonic() - started
    usage = [resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
    cpu = sum(u.ru_utime + u.ru_stime for u in usage)
    wrong = []
    for cell in table.cells():
        expected = table.status(*cell)
        got = results.outcomes.get(table.cell_id(*cell))
        want = {"works": "passed", "gap": "xfailed", "cannot": None}[expected.kind]
        if got != want:
            wrong.append(f"  {table.cell_id(*cell)}: the table says {expected.kind}, got {got}")
    counts = table.counts()
    print(
        f"matrix: {counts['works']} works, {counts['cannot']} cannot, {counts['gap']} gaps;"
        f" {len(results.outcomes)} cells run in {wall:.0f} s ({cpu:.0f} s of CPU)"
    )
    if wrong:
        print("cells whose result is not what the table states:", *wrong, sep="\n")
        return 1
    if not check:
        PAGE.write_text(table.render_page(), encoding="utf-8")
        print(f"wrote {PAGE.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
