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
    for command in ("list", "validate", "run", "schema", "init", "serve", "dev"):
        assert f"## `customtools {command}`" in DOC


def test_serve_and_dev_options_are_documented():
    import argparse

    from customtools.cli import _parser

    subparsers = next(
        action for action in _parser()._actions if isinstance(action, argparse._SubParsersAction)
    )
    for command in ("serve", "dev"):
        section = DOC.split(f"## `customtools {command}`", 1)[1].split("\n## ", 1)[0]
        options = {
            option
            for action in subparsers.choices[command]._actions
            for option in action.option_strings
            if option.startswith("--") and option != "--help"
        }
        shared = {"--cwd", "--path", "--builtin", "--plugin-dir", "--disable", "--app-name"}
        missing = sorted(o for o in options - shared - {"--no-entry-points"} if o not in section)
        assert missing == [], f"{command}: {missing}"
