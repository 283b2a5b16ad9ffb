"""Plugin roots inside the project run no code before the user trusts exactly their content."""

from __future__ import annotations

from pathlib import Path

from customtools.actions import find_plugins
from customtools.loading import PendingSource, TrustStore

CANARY = """\
import pathlib
pathlib.Path({marker!r}).write_text("ran")

class Plugin:
    name = "canary"

    def get_actions(self, state):
        return [{{"id": "hello", "label": "Hello"}}]

    def execute_action(self, app, action_id, params, context, state):
        return {{"display": {{"body": "hi", "variant": "info"}}}}

def plugins():
    return [Plugin()]
"""


def make_root(project: Path, marker: Path) -> Path:
    root = project / "plugins" / "canary"
    root.mkdir(parents=True)
    (root / "actions.py").write_text(CANARY.format(marker=str(marker)))
    return root


def test_an_untrusted_project_root_is_listed_and_never_imported(tmp_path: Path) -> None:
    project, marker = tmp_path / "project", tmp_path / "marker"
    root = make_root(project, marker)
    store = TrustStore(path=tmp_path / "home" / "trust.json")

    found = find_plugins([root], cwd=project, entry_points=False, trust_store=store)

    assert not marker.exists()
    assert found.plugins == ()
    [pending] = found.pending_trust
    assert [Path(f.real_path).name for f in pending.files] == ["actions.py"]

    store.grant(pending)
    found = find_plugins([root], cwd=project, entry_points=False, trust_store=store)
    assert marker.read_text() == "ran"
    assert [p.name for p in found.plugins] == ["canary"]

    marker.unlink()
    (root / "actions.py").write_text((root / "actions.py").read_text() + "\n# edited\n")
    found = find_plugins([root], cwd=project, entry_points=False, trust_store=store)
    assert not marker.exists()
    assert [p.status for p in found.pending_trust] == ["changed"]


def test_policies_none_all_and_callback(tmp_path: Path) -> None:
    project, marker = tmp_path / "project", tmp_path / "marker"
    root = make_root(project, marker)
    store = TrustStore(path=tmp_path / "home" / "trust.json")

    blocked = find_plugins([root], cwd=project, entry_points=False, trust="none")
    assert [p.status for p in blocked.pending_trust] == ["blocked"]
    assert not marker.exists()

    asked: list[PendingSource] = []

    def deny(pending: PendingSource) -> bool:
        asked.append(pending)
        return False

    denied = find_plugins([root], cwd=project, entry_points=False, trust=deny, trust_store=store)
    assert len(asked) == 1
    assert denied.plugins == ()
    assert not marker.exists()

    granted = find_plugins(
        [root], cwd=project, entry_points=False, trust=lambda p: True, trust_store=store
    )
    assert [p.name for p in granted.plugins] == ["canary"], granted.errors
    assert store.grants()  # the callback's yes was recorded

    marker.unlink()
    everything = find_plugins([root], cwd=project, entry_points=False, trust="all")
    assert marker.exists()
    assert everything.pending_trust == ()


def test_roots_outside_the_project_are_the_users_own(tmp_path: Path) -> None:
    project, marker = tmp_path / "project", tmp_path / "marker"
    project.mkdir()
    root = make_root(tmp_path / "elsewhere", marker)
    store = TrustStore(path=tmp_path / "home" / "trust.json")

    found = find_plugins([root], cwd=project, entry_points=False, trust_store=store)

    assert marker.exists()
    assert found.pending_trust == ()


def test_a_project_symlink_to_a_root_elsewhere_is_still_project_code(tmp_path: Path) -> None:
    project, marker = tmp_path / "project", tmp_path / "marker"
    elsewhere = make_root(tmp_path / "elsewhere", marker)
    (project / "plugins").mkdir(parents=True)
    link = project / "plugins" / "linked"
    link.symlink_to(elsewhere, target_is_directory=True)
    store = TrustStore(path=tmp_path / "home" / "trust.json")

    found = find_plugins([link], cwd=project, entry_points=False, trust_store=store)

    assert not marker.exists()
    assert len(found.pending_trust) == 1
