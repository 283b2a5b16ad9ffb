"""docs/cli.md documents the JSON reports: its examples must have the real reports' keys."""

from __future__ import annotations

import json
import re

from ._helpers import EXAMPLES, FIXTURES, ROOT

DOC = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")


def _json_block_after(heading: str) -> dict:
    section = DOC[DOC.index(heading) :]
    match = re.search(r"```json\n(.*?)\n```", section, re.DOTALL)
    assert match is not None, f"no JSON example after {heading!r}"
    return json.loads(match.group(1))


def test_validate_json_example_matches_the_report(cli):
    documented = _json_block_after("### JSON report")
    real = json.loads(cli("validate", "--format", "json", str(FIXTURES / "mixed")).out)
    assert set(documented) == set(real)
    assert documented["version"] == real["version"]
    assert set(documented["packs"][0]) == set(real["packs"][0])
    assert set(documented["packs"][0]["modules"][0]) == set(real["packs"][0]["modules"][0])
    assert set(documented["packs"][0]["tools"][0]) == set(real["packs"][0]["tools"][0])
    assert set(documented["findings"][0]) == set(real["findings"][0])
    assert set(documented["summary"]) == set(real["summary"])


def test_list_json_example_matches_the_report(cli):
    documented = _json_block_after("## `customtools list`")
    real = json.loads(
        cli("list", "--no-entry-points", "--format", "json", "--path", str(EXAMPLES)).out
    )
    assert set(documented) == set(real)
    assert set(documented["tools"][0]) == set(real["tools"][0])
    assert set(documented["candidates"][0]) == set(real["candidates"][0])
    assert set(documented["metadata"][0]) == set(real["metadata"][0])


def test_every_subcommand_has_a_section():
    for command in ("list", "validate", "run", "schema", "init"):
        assert f"## `customtools {command}`" in DOC
