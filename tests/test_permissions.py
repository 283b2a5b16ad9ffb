"""Declared permissions: the value object and how the host reads it without importing."""

from __future__ import annotations

from pathlib import Path

import pytest

from customtools._loading._records import Candidate, ToolSource
from customtools._permissions import (
    DEFAULT_PERMISSIONS,
    Permissions,
    PermissionsError,
    read_declarations,
    resolve_path,
)


def candidate(path: Path) -> Candidate:
    return Candidate(
        path=str(path),
        resolved_path=str(path),
        kind="module",
        source=ToolSource(provider="explicit", provider_name="explicit", level="user"),
    )


def declaring(tmp_path: Path, text: str) -> Candidate:
    path = tmp_path / "pack.py"
    path.write_text("from customtools.isolation import Permissions\n" + text)
    return candidate(path)


def test_the_default_reads_the_project_and_nothing_else() -> None:
    assert DEFAULT_PERMISSIONS.to_dict() == {
        "read": ["."],
        "write": [],
        "net": "none",
        "run": False,
        "env": [],
    }
    assert DEFAULT_PERMISSIONS.describe() == (
        "may read the project, write only its temporary directory, no network, start no programs"
    )


def test_permissions_round_trip_and_normalize() -> None:
    made = Permissions(read="data", write=["out"], net=[443, 80, 443], run=True, env="KEY")
    assert made.net == (80, 443)
    assert made.read == ("data",)
    assert Permissions.from_dict(made.to_dict()) == made
    assert Permissions(net=True).net == "all"
    assert Permissions(net=None).net == "none"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"net": [0]}, "TCP port numbers"),
        ({"net": "some"}, "TCP port numbers"),
        ({"read": [""]}, "non-empty path strings"),
        ({"run": "yes"}, "True or False"),
        ({"env": ["A=B"]}, "variable names"),
    ],
)
def test_invalid_permissions_say_what_is_wrong(kwargs: dict, message: str) -> None:
    with pytest.raises(PermissionsError, match=message):
        Permissions(**kwargs)


def test_a_permissions_error_is_a_customtools_error_and_a_value_error() -> None:
    from customtools import CustomToolsError
    from customtools.isolation import PermissionsError as public

    assert public is PermissionsError
    assert public.__module__ == "customtools.isolation"
    with pytest.raises(CustomToolsError) as caught:
        Permissions(net="some")
    assert isinstance(caught.value, ValueError)


def test_paths_resolve_against_project_home_and_temporary_directory() -> None:
    where = {"cwd": "/p", "home": "/h", "tmp": "/t"}
    assert resolve_path(".", **where) == "/p"
    assert resolve_path("data/x", **where) == "/p/data/x"
    assert resolve_path("~/.cache", **where) == "/h/.cache"
    assert resolve_path("$TMP/a", **where) == "/t/a"
    assert resolve_path("/etc/hosts", **where) == "/etc/hosts"


def test_a_declaration_is_read_without_importing(tmp_path: Path) -> None:
    found = declaring(
        tmp_path, "raise SystemExit('never run')\nPERMISSIONS = Permissions(net=[8080])\n"
    )
    declared = read_declarations(found)
    assert declared.module == Permissions(net=[8080])
    assert declared.module_line == found.path


def test_a_module_without_declaration_has_none(tmp_path: Path) -> None:
    declared = read_declarations(declaring(tmp_path, "X = 1\n"))
    assert (declared.module, declared.module_line) == (None, None)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("PERMISSIONS = Permissions(read=[str(1)])\n", "must be literals"),
        ("PERMISSIONS = dict(read=[])\n", "must be a call"),
        ("PERMISSIONS = Permissions(reed=[])\n", "unknown Permissions argument 'reed'"),
        ("PERMISSIONS = Permissions(net='x')\n", "pack.py:2: Permissions.net"),
        (
            "PERMISSIONS = Permissions()\nPERMISSIONS = Permissions(net='all')\n",
            "assigned more than once",
        ),
    ],
)
def test_an_unreadable_declaration_is_an_error_naming_the_file(
    tmp_path: Path, text: str, message: str
) -> None:
    with pytest.raises(PermissionsError, match=message) as caught:
        read_declarations(declaring(tmp_path, text))
    assert str(tmp_path / "pack.py") in str(caught.value)


def test_tool_declarations_are_read_per_tool_and_grouped(tmp_path: Path) -> None:
    found = declaring(
        tmp_path,
        "from customtools import tool\n"
        "@tool(permissions=Permissions(net=[443]))\ndef fetch() -> str: ...\n"
        "@tool(name='post', permissions=Permissions(net=[443]))\nasync def send() -> str: ...\n"
        "@tool(permissions=Permissions(run=True))\ndef shell() -> str: ...\n"
        "@tool\ndef plain() -> str: ...\n",
    )
    declared = read_declarations(found)
    assert declared.module is None
    assert set(declared.tools) == {"fetch", "post", "shell"}
    groups = {names: permissions for permissions, names in declared.tool_groups()}
    assert groups == {
        frozenset({"fetch", "post"}): Permissions(net=[443]),
        frozenset({"shell"}): Permissions(run=True),
    }
    assert declared.tool_lines["fetch"] == f"{found.path}:3"


def test_a_tool_permission_must_be_literal_and_its_name_too(tmp_path: Path) -> None:
    with pytest.raises(PermissionsError, match="must be literals"):
        read_declarations(
            declaring(tmp_path, "@tool(permissions=Permissions(env=names))\ndef f(): ...\n")
        )
    with pytest.raises(PermissionsError, match="literal name"):
        read_declarations(
            declaring(tmp_path, "@tool(name=1, permissions=Permissions())\ndef f(): ...\n")
        )


def test_the_tool_decorator_accepts_permissions_and_checks_their_type() -> None:
    from customtools import ToolDefinitionError, tool

    @tool(permissions=Permissions(net=[443]))
    def fetch() -> str:
        """Fetch."""
        return "ok"

    assert fetch.name == "fetch"
    with pytest.raises(ToolDefinitionError, match="permissions must be a"):
        tool(permissions={"net": "all"})(lambda: "x")


@pytest.mark.parametrize("path", ["$TMP/..", "~/a/../..", "/proc/../home", "data/../../x", ".."])
def test_a_path_with_a_dot_dot_component_is_refused(path: str) -> None:
    with pytest.raises(PermissionsError, match=r"has a '\.\.' component; declare the path it"):
        Permissions(write=[path])


def test_described_paths_are_the_ones_the_sandbox_grants(tmp_path: Path) -> None:
    project, home = tmp_path / "p", tmp_path / "h"
    (home / "real").mkdir(parents=True)
    project.mkdir()
    (home / "link").symlink_to(home / "real")
    (project / "data").symlink_to(home / "real", target_is_directory=True)
    made = Permissions(read=[".", "data", "~/link", "/etc/hosts"], write=["$TMP/x"])
    assert made.describe(project=str(project), home=str(home)) == (
        f"may read the project `{project}`, `~/real`, `~/real`, `/etc/hosts`, write `$TMP/x` and"
        " its temporary directory, no network, start no programs"
    )
    assert made.describe().startswith("may read the project, `data`, `~/link`, `/etc/hosts`")


def test_growth_names_only_what_was_not_granted_before() -> None:
    before = Permissions(read=[".", "~/.config"], write=["out"], net=[443], env=["A"])
    assert before.growth(before) == ()
    assert Permissions(read=["data", "~/.config/x"], write=["out/sub"]).growth(before) == ()
    wider = Permissions(read=["~/.aws"], write=["logs"], net=[443, 8443], run=True, env=["A", "B"])
    assert wider.growth(before) == (
        "read `~/.aws`",
        "write `logs`",
        "connect to TCP port(s) 8443",
        "start programs",
        "receive the environment variable(s) B",
    )
    assert Permissions(net="all").growth(before) == ("use the network",)
    assert Permissions(net=[80]).growth(Permissions(net="all")) == ()
    assert Permissions(net=[80]).growth(DEFAULT_PERMISSIONS) == ("connect to TCP port(s) 80",)
