"""``customtools trust``, and the trust rules of the commands that load tools."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from ._helpers import FIXTURES


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A project whose .claude/tools holds a canary that writes MARKER when imported."""
    project = tmp_path / "checkout"
    tools = project / ".claude" / "tools"
    tools.mkdir(parents=True)
    source = (FIXTURES / "clean" / "echo.py").read_text()
    marker = project / "MARKER"
    (tools / "echo.py").write_text(f"open({str(marker)!r}, 'w').close()\n" + source)
    return project


def test_trust_lists_the_files_and_grants_nothing_without_yes(cli, checkout):
    result = cli("trust", str(checkout))
    assert result.code == 1
    assert "[untrusted]" in result.out
    assert "echo.py  sha256:" in result.out
    assert "--yes" in result.err
    assert cli("trust", "--list").out.endswith("no project sources are trusted\n")
    assert not (checkout / "MARKER").exists()


def test_trust_yes_grants_and_list_then_loads(cli, checkout, isolated_home):
    assert not (checkout / "MARKER").exists()
    result = cli("trust", "--yes", str(checkout))
    assert result.code == 0, result.err
    assert "[granted now]" in result.out
    assert not (checkout / "MARKER").exists()  # trusting runs nothing
    store = isolated_home / ".customtools" / "trust.json"
    assert (
        str((checkout / ".claude" / "tools").resolve()) in json.loads(store.read_text())["sources"]
    )
    listed = cli("trust", "--list", "--format", "json")
    (grant,) = json.loads(listed.out)["grants"]
    assert grant["provider"] == "claude"
    again = cli("trust", str(checkout))
    assert again.code == 0
    assert "[trusted]" in again.out
    loaded = cli("list", "--no-entry-points", "--cwd", str(checkout))
    assert loaded.code == 0
    assert (checkout / "MARKER").exists()


def test_revoke_forgets_the_grants_under_path(cli, checkout):
    cli("trust", "--yes", str(checkout))
    result = cli("trust", "--revoke", str(checkout))
    assert result.code == 0
    assert result.out.startswith("revoked ")
    assert "no project sources are trusted" in cli("trust", "--list").out


def test_list_run_schema_and_validate_follow_the_trust_rules(cli, checkout):
    where = ("--no-entry-points", "--cwd", str(checkout))
    listed = cli("list", *where, "--format", "json")
    report = json.loads(listed.out)
    assert report["tools"] == []
    (pending,) = report["pendingTrust"]
    assert [f["name"] for f in pending["files"]] == ["echo.py"]
    scan_only = json.loads(cli("list", "--scan-only", *where, "--format", "json").out)
    assert [c["trust"] for c in scan_only["candidates"]] == ["pending"]
    ran = cli("run", "echo", *where, "--params", '{"text": "hi"}')
    assert ran.code == 2
    assert "not trusted" in ran.err
    assert cli("schema", "echo", *where).code == 2
    validated = cli("validate", "--format", "json", *where)
    assert json.loads(validated.out)["packs"] == []
    assert "pending-trust" in {f["code"] for f in json.loads(validated.out)["findings"]}
    assert not (checkout / "MARKER").exists()


def test_an_edit_after_trust_is_pending_again(cli, checkout):
    cli("trust", "--yes", str(checkout))
    tool = checkout / ".claude" / "tools" / "echo.py"
    tool.write_text(tool.read_text() + "\n")
    listed = cli("list", "--no-entry-points", "--cwd", str(checkout))
    assert "echo.py was edited" in listed.out
    assert not (checkout / "MARKER").exists()


def test_validate_path_is_the_users_own_choice(cli, checkout):
    tools = checkout / ".claude" / "tools"
    result = cli("validate", "--format", "json", str(tools))
    assert [t["name"] for t in json.loads(result.out)["packs"][0]["tools"]] == ["echo"]


def test_a_corrupt_store_is_a_usage_error_naming_it(cli, checkout, isolated_home):
    store = isolated_home / ".customtools" / "trust.json"
    store.parent.mkdir()
    store.write_text("{broken")
    os.chmod(store, 0o600)
    result = cli("trust", "--yes", str(checkout))
    assert result.code == 2
    assert str(store) in result.err
    listed = cli("list", "--no-entry-points", "--cwd", str(checkout), "--format", "json")
    assert listed.code == 1
    assert [e["code"] for e in json.loads(listed.out)["errors"]] == ["trust-store-error"]
    assert not (checkout / "MARKER").exists()


def test_nothing_to_trust(cli, tmp_path):
    result = cli("trust", str(tmp_path))
    assert result.code == 0
    assert "none: no project tool code would run" in result.out


def test_trust_lists_the_declared_permissions(cli, checkout):
    tools = checkout / ".claude" / "tools"
    (tools / "fetch.py").write_text(
        "from customtools import tool\n"
        "from customtools.isolation import Permissions\n"
        "PERMISSIONS = Permissions(net=[443], env=['TOKEN'])\n"
        "@tool\ndef fetch() -> str:\n    '''Fetch.'''\n    return 'ok'\n"
    )
    result = cli("trust", str(checkout))
    assert result.code == 1
    assert (
        f"    when sandboxed: fetch.py may read the project `{checkout}`, write only its temporary"
        " directory, connect to TCP port(s) 443, start no programs, receive the environment"
        " variable(s) TOKEN\n"
    ) in result.out
    assert not (checkout / "MARKER").exists()


def test_trust_lists_the_declared_execution_policy(cli, checkout):
    tools = checkout / ".claude" / "tools"
    (tools / "paid.py").write_text(
        "from customtools import tool\n"
        "from customtools.policy import Policy\n"
        "POLICY = Policy(rate=(10, 60), retries=0)\n"
        "@tool\ndef paid() -> str:\n    'Pay.'\n    return 'ok'\n"
    )
    (tools / "odd.py").write_text(
        "from customtools.policy import Policy\nPOLICY = Policy(rate=1)\n"
    )
    result = cli("trust", str(checkout))
    assert "    execution policy: paid.py: 10 calls per 60 s, up to 0 retries\n" in result.out
    assert "    execution policy: odd.py: invalid POLICY, ignored (odd.py: Policy.rate must be" in (
        result.out
    )
    assert not (checkout / "MARKER").exists()


def test_a_widened_declaration_lists_what_grew(cli, checkout):
    tools = checkout / ".claude" / "tools"
    fetch = tools / "fetch.py"
    header = "from customtools import tool\nfrom customtools.isolation import Permissions\n"
    fetch.write_text(
        header + "PERMISSIONS = Permissions(net=[443])\n"
        "@tool\ndef fetch() -> str:\n    'Fetch.'\n    return 'ok'\n"
    )
    plain = tools / "plain.py"
    plain.write_text(header + "@tool\ndef plain() -> str:\n    'Plain.'\n    return ''\n")
    assert cli("trust", str(checkout), "--yes").code == 0
    fetch.write_text(
        fetch.read_text().replace(
            "Permissions(net=[443])",
            "Permissions(net=[443, 8443], read=['.', '~/.aws'], env=['TOKEN'], run=True)",
        )
    )
    plain.write_text(header + "PERMISSIONS = Permissions(write=['out'])\n" + plain.read_text())
    result = cli("trust", str(checkout))
    assert result.code == 1
    assert (
        "    changed: fetch.py now may also read `~/.aws`; connect to TCP port(s) 8443; start"
        " programs; receive the environment variable(s) TOKEN\n"
    ) in result.out
    assert f"    changed: plain.py now may also write `{checkout / 'out'}`\n" in result.out
