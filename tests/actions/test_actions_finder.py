"""Finding plugins in plugin roots and installed entry points (real files, real dist-info)."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from customtools.actions import (
    REQUEST_PREPARE,
    ActionDispatcher,
    PluginError,
    Session,
    find_plugins,
)

ROOTS = Path(__file__).parent / "fixtures" / "roots"


def test_flat_and_package_roots_load_in_order() -> None:
    before_path = list(sys.path)
    found = find_plugins([ROOTS / "flat_pack", ROOTS / "package_pack"], entry_points=False)
    assert found.errors == ()
    assert [(p.name, p.kind) for p in found.plugins] == [
        ("flat_auth", "application"),
        ("flat_cache", "session"),
        ("package_counter", "session"),
    ]
    assert found.plugins[0].version == "1.0"
    assert found.plugins[0].source == f"plugin module {ROOTS / 'flat_pack' / 'actions.py'}"
    assert sys.path == before_path
    assert "actions" not in sys.modules
    module_name = type(found.plugins[0].plugin).__module__
    assert module_name.startswith("_customtools_actions_flat_pack_")


def test_relative_roots_resolve_against_cwd() -> None:
    found = find_plugins(["flat_pack", "./flat_pack"], cwd=ROOTS, entry_points=False, trust="all")
    assert [p.name for p in found.plugins] == ["flat_auth", "flat_cache"]  # deduped by realpath


@pytest.mark.parametrize(
    ("root", "message"),
    [
        (
            "broken_import",
            "actions.py: failed to load: ModuleNotFoundError: No module named"
            " 'customtools_fixture_module_that_does_not_exist'",
        ),
        ("exits", "actions.py: failed to load: SystemExit: 3"),
        (
            "no_plugins_attr",
            "actions.py: defines no 'plugins'; add `def plugins(): return [MyPlugin()]`",
        ),
        ("ambiguous", "both actions.py and actions/__init__.py exist; keep one"),
        ("missing_dir", "not a directory"),
    ],
)
def test_bad_roots_are_contained(root: str, message: str) -> None:
    found = find_plugins([ROOTS / root, ROOTS / "flat_pack"], entry_points=False)
    [error] = found.errors
    assert message in error.message
    assert str(ROOTS / root) in error.source
    assert [p.name for p in found.plugins] == ["flat_auth", "flat_cache"]


def test_failed_import_leaves_no_module_behind() -> None:
    before = set(sys.modules)
    find_plugins([ROOTS / "broken_import"], entry_points=False)
    assert not {m for m in set(sys.modules) - before if "broken_import" in m}


def test_root_without_actions_is_skipped_silently() -> None:
    found = find_plugins([ROOTS / "tools_only"], entry_points=False)
    assert found.plugins == ()
    assert found.errors == ()


def test_nameless_single_plugin_takes_the_root_name() -> None:
    found = find_plugins([ROOTS / "nameless"], entry_points=False)
    assert [(p.name, p.kind) for p in found.plugins] == [("nameless", "application")]


def test_duplicate_names_keep_the_first_and_report_both(tmp_path: Path) -> None:
    clone = tmp_path / "clone"
    clone.mkdir()
    (clone / "actions.py").write_text((ROOTS / "flat_pack" / "actions.py").read_text())
    found = find_plugins([ROOTS / "flat_pack", clone], entry_points=False)
    assert [p.source for p in found.plugins] == [
        f"plugin module {ROOTS / 'flat_pack' / 'actions.py'}"
    ] * 2
    assert len(found.errors) == 2
    assert "plugin name 'flat_auth' is already taken by plugin module" in found.errors[0].message
    assert str(clone / "actions.py") in found.errors[0].source


def test_same_file_names_in_two_roots_do_not_collide(tmp_path: Path) -> None:
    for name in ("one", "two"):
        root = tmp_path / name
        root.mkdir()
        (root / "actions.py").write_text(
            textwrap.dedent(
                f"""
                class P:
                    name = "{name}"
                    def get_actions(self, state):
                        return []
                    def execute_action(self, app, action_id, params, context, state):
                        return None
                plugins = [P()]
                """
            )
        )
    found = find_plugins([tmp_path / "one", tmp_path / "two"], entry_points=False)
    assert [p.name for p in found.plugins] == ["one", "two"]
    modules = {type(p.plugin).__module__ for p in found.plugins}
    assert len(modules) == 2


def test_unusable_plugin_objects_are_reported(tmp_path: Path) -> None:
    root = tmp_path / "weird"
    root.mkdir()
    (root / "actions.py").write_text(
        textwrap.dedent(
            """
            class NoKind:
                name = "nokind"
                def get_actions(self, state):
                    return []
                def execute_action(self, a, b):
                    return None
            plugins = [NoKind(), "not a plugin"]
            """
        )
    )
    found = find_plugins([root], entry_points=False)
    [error] = found.errors
    assert "list item 'not a plugin' is not a plugin" in error.message

    (root / "actions.py").write_text(
        textwrap.dedent(
            """
            class NoKind:
                name = "nokind"
                def get_actions(self, state):
                    return []
                def execute_action(self, a, b):
                    return None
            def plugins():
                return NoKind()
            """
        )
    )
    found = find_plugins([root], entry_points=False)
    [error] = found.errors
    assert isinstance(error.error, PluginError)
    assert "plugin 'nokind': execute_action takes 2 positional parameters" in error.message


def _install_dist(site: Path, dist: str, module: str, entry_points: str, code: str) -> None:
    info = site / f"{dist}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[customtools.plugins]\n{entry_points}\n")
    (site / f"{module}.py").write_text(textwrap.dedent(code))


PLUGIN_MODULE = """
    class Session:
        name = "ep_session"
        def get_actions(self, state):
            return [{"id": "tag", "trigger": "request_prepare"}]
        def execute_action(self, action_id, session, native_messages, params, context, state):
            return {"session_metadata": {"tagged_by": "ep_session"}}

    class Nameless:
        def get_actions(self, state):
            return [{"id": "hello"}]
        def execute_action(self, app, action_id, params, context, state):
            return {"display": {"body": "hello"}}

    def make_both():
        return [Nameless(), Session()]

    def broken():
        raise RuntimeError("plugin factory exploded")
"""


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    site = tmp_path / "site"
    site.mkdir()
    monkeypatch.syspath_prepend(str(site))
    return site


def test_entry_points_load_sorted_after_roots(site: Path) -> None:
    _install_dist(
        site,
        "ctfixture_plugins",
        "ctfixture_plugins_mod",
        "zz_session = ctfixture_plugins_mod:Session\naa_greeter = ctfixture_plugins_mod:Nameless",
        PLUGIN_MODULE,
    )
    found = find_plugins([ROOTS / "package_pack"])
    names = [p.name for p in found.plugins if p.source.startswith("entry point")]
    assert names == ["aa_greeter", "ep_session"]
    assert found.plugins[0].name == "package_counter"
    assert found.errors == ()
    greeter = next(p for p in found.plugins if p.name == "aa_greeter")
    assert greeter.source == (
        "entry point 'aa_greeter' (ctfixture_plugins_mod:Nameless) from ctfixture_plugins"
    )
    assert greeter.kind == "application"


def test_entry_point_failures_are_contained(site: Path) -> None:
    _install_dist(
        site,
        "ctfixture_broken",
        "ctfixture_broken_mod",
        "bad = ctfixture_broken_mod:broken\n"
        "missing = ctfixture_broken_mod:nope\n"
        "both = ctfixture_broken_mod:make_both",
        PLUGIN_MODULE,
    )
    found = find_plugins()
    messages = [e.message for e in found.errors]
    assert messages[0] == (
        "entry point 'bad' (ctfixture_broken_mod:broken) from ctfixture_broken: failed to load:"
        " RuntimeError: plugin factory exploded"
    )
    # a callable producing two plugins where one has no name: that one is an error
    assert "entry point 'both'" in messages[1]
    assert "needs a non-empty string 'name' attribute" in messages[1]
    assert "entry point 'missing'" in messages[2]
    assert "AttributeError" in messages[2]
    assert [p.name for p in found.plugins if "ctfixture" in p.source] == ["ep_session"]


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_found_plugins_dispatch(anyio_backend: str) -> None:
    found = find_plugins([ROOTS / "flat_pack", ROOTS / "package_pack"], entry_points=False)
    dispatcher = ActionDispatcher(found.registry())
    session = Session(id="s", messages=[{"role": "user", "content": "x"}])
    result = await dispatcher.run_lifecycle(REQUEST_PREPARE, session, {})
    assert result.session.metadata == {"overrides": {"cache": "on"}, "count": 1}
    manual = await dispatcher.execute_action("flat_auth", "login", session, {})
    assert manual.display is not None
    assert manual.display.variant == "success"


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("plugins = 42", "expected a plugin, a plugin class, a list of them, or a callable"),
        ("def plugins():\n    return lambda: []", "the plugins callable returned another callable"),
    ],
)
def test_unusable_plugins_attribute(tmp_path: Path, source: str, message: str) -> None:
    (tmp_path / "actions.py").write_text(source + "\n")
    found = find_plugins([tmp_path], entry_points=False)
    [error] = found.errors
    assert message in error.message


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            "class Outcome(BaseException):\n    pass\n\nraise Outcome('skip')\n",
            "failed to load: Outcome: skip",
        ),
        ("raise GeneratorExit\n", "failed to load: GeneratorExit with no message"),
        (
            "class BadStr(Exception):\n"
            "    def __str__(self):\n"
            "        raise RuntimeError('no')\n\n"
            "def plugins():\n"
            "    raise BadStr()\n",
            "failed to load: BadStr (its message could not be read: __str__ failed)",
        ),
    ],
    ids=["base-exception", "generator-exit", "unreadable-message"],
)
def test_any_fault_of_a_plugin_module_is_contained(tmp_path: Path, body: str, message: str) -> None:
    root = tmp_path / "faulty"
    root.mkdir()
    (root / "actions.py").write_text(body)
    found = find_plugins([root, ROOTS / "flat_pack"], entry_points=False)
    [error] = found.errors
    assert error.message.endswith(message)
    assert [p.name for p in found.plugins] == ["flat_auth", "flat_cache"]
