"""What a grant covers: every file Python could run for a project source, never bytecode.

Regression tests for the second adversarial review (H1, M2, M5): a committed unchecked-hash
``.pyc`` never runs, helper files beside a tool are hashed and listed (an edit asks again, an
edit to data does not), and a FIFO or a ``/dev/zero`` link in a project source is a finding,
never a hang. Each canary writes a marker file when it runs; the marker must not appear.
"""

from __future__ import annotations

import importlib.util
import os
import py_compile
import subprocess
import sys
from pathlib import Path

import pytest

from customtools import CustomToolAdapter
from customtools._loading._loader import discover_and_load, scan
from customtools._loading._reviewed import UnreviewedCodeError, register_root
from customtools._loading._trust_store import TrustStore

from ._helpers import write

pytestmark = pytest.mark.anyio

TOOL = """\
from customtools import tool

@tool
def {name}() -> str:
    \"\"\"Say hi.\"\"\"
    return "hi"
"""


def evil(marker: Path) -> str:
    return f"import pathlib\npathlib.Path({str(marker)!r}).write_text('ran')\n"


def forge_pyc(
    source: Path,
    code: str,
    tmp_path: Path,
    mode: py_compile.PycInvalidationMode = py_compile.PycInvalidationMode.UNCHECKED_HASH,
) -> Path:
    """Compile ``code`` as a .pyc where Python looks for ``source``'s cache: unchecked-hash
    (always run), checked-hash (run when the source's public hash matches: forged here), or
    timestamp-based with ``source``'s mtime and size (what an archive that keeps mtimes
    carries)."""
    forged = tmp_path / f"forged_{source.parent.name}_{source.name}"
    forged.write_text(code, encoding="utf-8")
    cfile = Path(importlib.util.cache_from_source(str(source.resolve())))
    py_compile.compile(
        str(forged), cfile=str(cfile), dfile=str(source), doraise=True, invalidation_mode=mode
    )
    data = bytearray(cfile.read_bytes())
    if mode is py_compile.PycInvalidationMode.CHECKED_HASH:
        import _imp

        data[8:16] = _imp.source_hash(importlib.util._RAW_MAGIC_NUMBER, source.read_bytes())  # type: ignore[attr-defined]
    elif mode is py_compile.PycInvalidationMode.TIMESTAMP:
        st = source.stat()
        data[8:12] = (int(st.st_mtime) & 0xFFFFFFFF).to_bytes(4, "little")
        data[12:16] = (st.st_size & 0xFFFFFFFF).to_bytes(4, "little")
    cfile.write_bytes(bytes(data))
    return cfile


TIMESTAMP = py_compile.PycInvalidationMode.TIMESTAMP


async def trust_everything(project: Path, home: Path) -> None:
    async def yes(pending: object) -> bool:
        return True

    result = await discover_and_load((), project, home=home, entry_points=False, trust=yes)
    assert result.pending_trust == ()
    assert result.errors == ()


# -- H1: bytecode ------------------------------------------------------------------------------


@pytest.mark.parametrize("where", ["tool", "package", "helper", "submodule"])
async def test_a_bytecode_cache_committed_after_trust_never_runs(
    home: Path, project: Path, tmp_path: Path, where: str
) -> None:
    tools = project / ".claude" / "tools"
    marker = tmp_path / f"PWNED_{where}"
    name = f"hello_{where}"
    if where == "tool":
        target = write(tools / "t.py", TOOL.format(name=name))
        code = evil(marker) + TOOL.format(name=name)
    elif where == "package":
        target = write(tools / "pkg" / "__init__.py", TOOL.format(name=name))
        code = evil(marker) + TOOL.format(name=name)
    elif where == "submodule":
        write(tools / "pkg2" / "__init__.py", "from . import helper\n" + TOOL.format(name=name))
        target = write(tools / "pkg2" / "helper.py", "X = 1\n")
        code = evil(marker) + "X = 1\n"
    else:
        helper = f"_shared_{os.getpid()}_{where}"
        write(
            tools / "t.py",
            "import os, sys\nsys.path.insert(0, os.path.dirname(__file__))\n"
            f"import {helper}\nsys.path.pop(0)\n" + TOOL.format(name=name),
        )
        target = write(tools / f"{helper}.py", "X = 1\n")
        code = evil(marker) + "X = 1\n"
    await trust_everything(project, home)
    sys.modules.pop(target.stem, None)  # a sibling helper is an ordinary, cached import
    assert not marker.exists()
    forge_pyc(target, code, tmp_path, TIMESTAMP)
    result = await discover_and_load((), project, home=home, entry_points=False)
    assert result.pending_trust == ()  # __pycache__ is not part of the grant ...
    sys.modules.pop(target.stem, None)
    assert name in result.tool_names
    assert not marker.exists()  # ... because customtools' imports never run it
    forge_pyc(target, code, tmp_path)  # hash-based: what a tool's own loader would run
    result = await discover_and_load((), project, home=home, entry_points=False)
    sys.modules.pop(target.stem, None)
    (pending,) = result.pending_trust  # so it revokes the grant
    assert any("is hash-based bytecode" in change for change in pending.changes)
    assert not marker.exists()


@pytest.mark.parametrize("mode", ["unchecked-hash", "checked-hash"])
async def test_hash_based_bytecode_of_a_helper_loaded_by_file_location_blocks_the_grant(
    home: Path, project: Path, tmp_path: Path, mode: str
) -> None:
    tools = project / ".claude" / "tools"
    write(
        tools / "t.py",
        "import importlib.util, os\n"
        "from customtools import tool\n"
        "_spec = importlib.util.spec_from_file_location(\n"
        f"    't_helper_{mode}', os.path.join(os.path.dirname(__file__), 'helper.py'))\n"
        "helper = importlib.util.module_from_spec(_spec)\n"
        "_spec.loader.exec_module(helper)\n"
        "@tool\n"
        "def t() -> str:\n"
        '    """T."""\n'
        "    return helper.answer()\n",
    )
    helper = write(tools / "helper.py", "def answer():\n    return 'reviewed helper'\n")
    marker = tmp_path / "PWNED_PYC"
    invalidation = (
        py_compile.PycInvalidationMode.UNCHECKED_HASH
        if mode == "unchecked-hash"
        else py_compile.PycInvalidationMode.CHECKED_HASH
    )
    cfile = forge_pyc(
        helper, evil(marker) + "def answer():\n    return 'FORGED'\n", tmp_path, invalidation
    )

    async def yes(pending: object) -> bool:
        return True

    result = await discover_and_load((), project, home=home, entry_points=False, trust=yes)

    assert result.tool_names == ()
    (pending,) = result.pending_trust
    assert not pending.source.trustable
    (problem,) = pending.source.problems
    assert problem == (
        f"__pycache__/{cfile.name} is hash-based bytecode, which Python would run instead of"
        " its reviewed source when a tool loads that source itself"
        " (importlib.util.spec_from_file_location); delete it"
    )
    assert not marker.exists()
    cfile.unlink()  # deleted: the source can be trusted, and runs the reviewed helper
    result = await discover_and_load((), project, home=home, entry_points=False, trust=yes)
    assert (await CustomToolAdapter(result.tools[0].tool).execute("c", {})).text == (
        "reviewed helper"
    )


async def test_a_changed_source_warns_about_bytecode_too(
    home: Path, project: Path, tmp_path: Path
) -> None:
    tools = project / ".claude" / "tools"
    target = write(tools / "t.py", TOOL.format(name="hello"))
    await trust_everything(project, home)
    write(target, "# a harmless edit\n" + TOOL.format(name="hello"))
    code = evil(tmp_path / "PWNED") + TOOL.format(name="hello")
    cfile = forge_pyc(target, code, tmp_path, TIMESTAMP)
    result = await discover_and_load((), project, home=home, entry_points=False)
    (pending,) = result.pending_trust
    assert pending.status == "changed"
    said = "customtools' own imports compile the reviewed source instead"
    assert any(cfile.name in w and said in w for w in pending.warnings)
    assert "spec_from_file_location), would run it" in pending.message()


async def test_the_trust_listing_names_ignored_bytecode_of_a_trusted_source(
    home: Path, project: Path, tmp_path: Path
) -> None:
    tools = project / ".claude" / "tools"
    target = write(tools / "t.py", TOOL.format(name="hello"))
    await trust_everything(project, home)
    code = evil(tmp_path / "PWNED") + TOOL.format(name="hello")
    cfile = forge_pyc(target, code, tmp_path, TIMESTAMP)
    out = run_cli(["trust"], project, home)
    assert "[trusted]" in out.stdout
    assert cfile.name in out.stdout
    assert "customtools' own imports compile the reviewed source instead" in out.stdout
    assert not (tmp_path / "PWNED").exists()


async def test_a_file_changed_after_the_gate_is_not_imported(
    home: Path, project: Path, tmp_path: Path
) -> None:
    tools = project / ".claude" / "tools"
    helper = f"_lazy_{os.getpid()}"
    write(
        tools / "t.py",
        "import os, sys\n"
        "from customtools import tool\n"
        "HERE = os.path.dirname(__file__)\n"
        "@tool\n"
        "def lazy() -> str:\n"
        '    """Import a helper when called."""\n'
        "    sys.path.insert(0, HERE)\n"
        "    try:\n"
        f"        import {helper}\n"
        "    finally:\n"
        "        sys.path.remove(HERE)\n"
        f"    return {helper}.X\n",
    )
    target = write(tools / f"{helper}.py", "X = 'fine'\n")
    await trust_everything(project, home)
    result = await discover_and_load((), project, home=home, entry_points=False)
    assert result.tool_names == ("lazy",)
    marker = tmp_path / "PWNED_LAZY"
    write(target, evil(marker) + "X = 'evil'\n")  # after the gate, before the import
    sys.modules.pop(helper, None)
    outcome = await CustomToolAdapter(result.tools[0].tool).execute("c", {})
    sys.modules.pop(helper, None)
    assert outcome.is_error
    assert "changed after it was reviewed" in outcome.text
    assert not marker.exists()


def test_a_file_added_under_a_reviewed_root_cannot_be_imported(tmp_path: Path) -> None:
    root = tmp_path / "reviewed_root"
    root.mkdir()
    name = f"_added_{os.getpid()}"
    register_root(str(root), files={})
    write(root / f"{name}.py", evil(tmp_path / "PWNED_ADDED"))
    sys.path.insert(0, str(root))
    try:
        with pytest.raises(UnreviewedCodeError, match="was not part of the project source"):
            importlib.import_module(name)
    finally:
        sys.path.remove(str(root))
        sys.modules.pop(name, None)
    assert not (tmp_path / "PWNED_ADDED").exists()


# -- M2: helper files ------------------------------------------------------------------------------


def helper_project(project: Path) -> Path:
    tools = project / ".claude" / "tools"
    write(tools / "t.py", TOOL.format(name="hello"))
    write(tools / "_shared.py", "def greet(n):\n    return 'hi ' + n\n")
    write(tools / "lib" / "x.py", "Y = 2\n")
    write(tools / "lib" / "deeper" / "z.sh", "echo hi\n")
    write(tools / "README.md", "# tools\n")
    write(tools / "data.json", "{}\n")
    write(tools / "hello.md", "---\nname: hello\ndescription: hi\n---\n")
    return tools


async def test_the_listing_names_every_helper_file(home: Path, project: Path) -> None:
    helper_project(project)
    result = await discover_and_load((), project, home=home, entry_points=False)
    (pending,) = result.pending_trust
    names = {item.name for item in pending.files}
    assert {"t.py", "_shared.py", "lib/x.py", "lib/deeper/z.sh"} <= names
    assert not names & {"README.md", "data.json", "hello.md"}
    for name in ("_shared.py", "lib/x.py"):
        assert name in pending.message()


@pytest.mark.parametrize("edited", ["_shared.py", "lib/x.py", "lib/deeper/z.sh", "lib/new.py"])
async def test_an_edit_to_any_executable_file_asks_again(
    home: Path, project: Path, edited: str
) -> None:
    tools = helper_project(project)
    await trust_everything(project, home)
    path = tools / edited
    write(path, (path.read_text() if path.exists() else "") + "# edited\n")
    result = await discover_and_load((), project, home=home, entry_points=False)
    (pending,) = result.pending_trust
    assert pending.status == "changed"
    assert edited in "; ".join(pending.changes)
    assert result.tool_names == ()


@pytest.mark.parametrize("edited", ["README.md", "data.json", "notes.txt", "LICENSE"])
async def test_an_edit_to_a_data_file_does_not_ask_again(
    home: Path, project: Path, edited: str
) -> None:
    tools = helper_project(project)
    await trust_everything(project, home)
    write(tools / edited, "changed\n")
    result = await discover_and_load((), project, home=home, entry_points=False)
    assert result.pending_trust == ()
    assert result.tool_names == ("hello",)


async def test_the_review_reproduction_of_an_edited_helper(
    home: Path, project: Path, tmp_path: Path
) -> None:
    tools = project / ".claude" / "tools"
    helper = f"_shared_m2_{os.getpid()}"
    write(
        tools / "t.py",
        "import os, sys\nsys.path.insert(0, os.path.dirname(__file__)); "
        f"import {helper}; sys.path.pop(0)\n" + TOOL.format(name="hello"),
    )
    write(tools / f"{helper}.py", "def greet(n):\n    return 'hi ' + n\n")
    await trust_everything(project, home)
    sys.modules.pop(helper, None)
    marker = tmp_path / "PWNED_SHARED"
    with (tools / f"{helper}.py").open("a") as handle:
        handle.write(evil(marker))
    result = await discover_and_load((), project, home=home, entry_points=False)
    sys.modules.pop(helper, None)
    (pending,) = result.pending_trust
    assert f"{helper}.py was edited" in pending.changes
    assert not marker.exists()


# -- M5: special files -----------------------------------------------------------------------------


def run_cli(args: list[str], project: Path, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HOME": str(home)}
    return subprocess.run(
        [sys.executable, "-P", "-m", "customtools", *args],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def plant_special(project: Path, where: str, kind: str) -> Path:
    tools = project / ".claude" / "tools"
    write(tools / "t.py", TOOL.format(name="hello"))
    if where == "package":
        write(tools / "pkg" / "__init__.py", TOOL.format(name="pkgtool"))
        directory = tools / "pkg"
    elif where == "helper":
        directory = tools / "lib" / "nested"
        directory.mkdir(parents=True)
    else:
        write(project / "plug" / "tools" / "p.py", TOOL.format(name="plugtool"))
        directory = project / "plug"
    path = directory / ("data.bin" if kind == "zero" else "pipe")
    if kind == "zero":
        path.symlink_to("/dev/zero")
    else:
        os.mkfifo(path)
    return path


SPECIAL = [
    pytest.param(where, kind, id=f"{kind}-{where}")
    for where in ("package", "helper", "plugin")
    for kind in ("zero", "fifo")
]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
@pytest.mark.parametrize(("where", "kind"), SPECIAL)
async def test_a_special_file_is_a_finding_not_a_hang(
    home: Path, project: Path, where: str, kind: str
) -> None:
    special = plant_special(project, where, kind)
    result = await discover_and_load(
        (), project, home=home, entry_points=False, plugin_dirs=[project / "plug"]
    )
    (pending,) = [p for p in result.pending_trust if special.name in p.message()]
    assert not pending.source.trustable
    problem = "; ".join(pending.source.problems)
    assert special.name in problem
    assert ("a device" if kind == "zero" else "a FIFO") in problem


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
@pytest.mark.parametrize(("where", "kind"), SPECIAL)
def test_no_command_hangs_on_a_special_file(
    home: Path, project: Path, where: str, kind: str
) -> None:
    special = plant_special(project, where, kind)
    plugin = ["--plugin-dir", "plug"] if where == "plugin" else []
    for args in (
        ["list", "--no-entry-points"],
        ["list", "--scan-only", "--no-entry-points"],
        ["trust"],
        ["trust", "--yes"],
    ):
        out = run_cli([*args, *plugin], project, home)  # bounded: 60 s each
        assert out.returncode in (0, 1, 2), out.stderr
        assert special.name in out.stdout + out.stderr, args
    for grant in TrustStore(home=home).grants():
        assert not any(special.name in name for name in grant.files)


# -- M7: isolation obeys the host -----------------------------------------------------------------


async def test_isolation_loads_what_the_host_trusted(home: Path, project: Path) -> None:
    from customtools.isolation import IsolationPool

    write(project / ".claude" / "tools" / "t.py", TOOL.format(name="hello"))
    other_home = home / "elsewhere"
    other_home.mkdir()

    async def yes(pending: object) -> bool:
        return True

    async with IsolationPool() as pool:
        by_callback = await discover_and_load(
            (), project, home=other_home, app_name="acme", entry_points=False,
            isolation=pool, trust=yes,
        )  # fmt: skip
        assert by_callback.tool_names == ("hello",)
        assert by_callback.pending_trust == ()
        trusted = await discover_and_load(
            (), project, home=other_home, app_name="acme", entry_points=False, isolation=pool
        )
        assert trusted.tool_names == ("hello",)
        everything = await discover_and_load(
            (), project, home=home, entry_points=False, isolation=pool, trust="all"
        )
        assert everything.tool_names == ("hello",)
        assert not [d for d in everything.diagnostics if d.code == "pending-trust"]
        untrusted = await discover_and_load(
            (), project, home=home, entry_points=False, isolation=pool
        )
        assert untrusted.tool_names == ()
        assert len(untrusted.pending_trust) == 1


# -- M4: entry points found through the project on sys.path ----------------------------------------


def fake_distribution(project: Path, marker: Path) -> None:
    info = project / "evil-1.0.dist-info"
    write(info / "METADATA", "Metadata-Version: 2.1\nName: evil\nVersion: 1.0\n")
    write(info / "entry_points.txt", "[customtools.tools]\nevil = evilmod_m4:factory\n")
    write(project / "evilmod_m4.py", evil(marker) + "def factory(api):\n    return []\n")


def run_python_m(args: list[str], project: Path, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HOME": str(home)}
    env.pop("PYTHONPATH", None)
    return subprocess.run(
        [sys.executable, "-m", "customtools", *args],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_python_m_does_not_run_a_project_distribution(
    home: Path, project: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "PWNED_EP"
    fake_distribution(project, marker)
    out = run_python_m(["list"], project, home)
    assert out.returncode in (0, 1), out.stderr
    assert not marker.exists()
    listing = run_python_m(["list", "--scan-only"], project, home)
    assert "evilmod_m4" not in listing.stdout  # the project is not on sys.path at all


async def test_a_distribution_on_a_project_sys_path_entry_is_project_scope(
    home: Path, project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from customtools._loading._entrypoints import EntryPointsProvider

    marker = tmp_path / "PWNED_EP2"
    fake_distribution(project, marker)
    monkeypatch.chdir(project)
    for entry in ("", str(project)):
        monkeypatch.setattr(sys, "path", [entry, *sys.path])
        result = await discover_and_load((), project, home=home, providers=(), entry_points=True)
        monkeypatch.undo()
        monkeypatch.chdir(project)
        assert not marker.exists()
        (pending,) = [p for p in result.pending_trust if p.source.provider == "entry-points"]
        assert pending.source.candidates[0].source.level == "project"
        assert not pending.source.trustable
        assert "python -P" in pending.message()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    host_path = EntryPointsProvider(path=[str(project)])  # the host's choice, outside cwd
    scanned = scan((), elsewhere, home=home, providers=(host_path,), entry_points=False)
    assert [c.source.level for c in scanned.candidates] == ["user"]


async def test_a_linked_package_outside_the_root_never_runs_its_bytecode(
    home: Path, project: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside_pkg"
    write(outside / "__init__.py", "from . import helper\n" + TOOL.format(name="linked"))
    helper = write(outside / "helper.py", "X = 1\n")
    tools = project / ".claude" / "tools"
    tools.mkdir(parents=True)
    (tools / "linked").symlink_to(outside, target_is_directory=True)
    await trust_everything(project, home)
    marker = tmp_path / "PWNED_LINKED"
    forge_pyc(helper, evil(marker) + "X = 1\n", tmp_path, TIMESTAMP)
    result = await discover_and_load((), project, home=home, entry_points=False)
    assert result.tool_names == ("linked",)
    assert not marker.exists()
    forge_pyc(helper, evil(marker) + "X = 1\n", tmp_path)  # hash-based: revokes the grant
    result = await discover_and_load((), project, home=home, entry_points=False)
    assert result.tool_names == ()
    assert not marker.exists()


async def test_a_bare_pyc_added_after_the_gate_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "bare_root"
    root.mkdir()
    name = f"_bare_{os.getpid()}"
    forged = write(tmp_path / "forged.py", evil(tmp_path / "PWNED_BARE"))
    py_compile.compile(str(forged), cfile=str(root / f"{name}.pyc"), doraise=True)
    register_root(str(root), files={})
    sys.path.insert(0, str(root))
    try:
        with pytest.raises(UnreviewedCodeError, match="is not the file that was reviewed"):
            importlib.import_module(name)
    finally:
        sys.path.remove(str(root))
        sys.modules.pop(name, None)
    assert not (tmp_path / "PWNED_BARE").exists()


# -- the user's code cache -------------------------------------------------------------------------


@pytest.fixture
def code_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    from customtools._loading import _reviewed

    monkeypatch.setenv("HOME", str(tmp_path / "cache_home"))
    monkeypatch.setattr(_reviewed, "_cache_state", {})
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    return tmp_path / "cache_home" / ".customtools" / "cache" / "bytecode"


def import_fresh(root: Path, name: str) -> object:
    sys.path.insert(0, str(root))
    try:
        sys.modules.pop(name, None)
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(root))
        sys.modules.pop(name, None)


@pytest.mark.skipif(os.name != "posix", reason="the code cache is POSIX-only")
def test_the_code_cache_is_keyed_by_the_reviewed_bytes(tmp_path: Path, code_cache: Path) -> None:
    import hashlib

    root = tmp_path / "cached_root"
    name = f"_cached_{os.getpid()}"
    module = write(root / f"{name}.py", "X = 1\n")
    register_root(str(root), files={str(module): hashlib.sha256(b"X = 1\n").hexdigest()})
    assert import_fresh(root, name).X == 1  # type: ignore[attr-defined]
    assert len(list(code_cache.iterdir())) == 1
    assert oct(code_cache.stat().st_mode & 0o777) == "0o700"
    assert import_fresh(root, name).X == 1  # type: ignore[attr-defined]  # from the cache
    write(module, "X = 2\n")
    register_root(str(root), files={str(module): hashlib.sha256(b"X = 2\n").hexdigest()})
    assert import_fresh(root, name).X == 2  # type: ignore[attr-defined]
    assert len(list(code_cache.iterdir())) == 1  # one entry per file: the edit replaced it


@pytest.mark.skipif(os.name != "posix", reason="the code cache is POSIX-only")
def test_a_cache_entry_is_used_only_for_the_bytes_it_was_compiled_from(
    tmp_path: Path, code_cache: Path
) -> None:
    import hashlib
    import marshal

    root = tmp_path / "forged_root"
    name = f"_forged_{os.getpid()}"
    module = write(root / f"{name}.py", "X = 1\n")
    register_root(str(root), files={str(module): hashlib.sha256(b"X = 1\n").hexdigest()})
    assert import_fresh(root, name).X == 1  # type: ignore[attr-defined]
    (entry,) = code_cache.iterdir()
    stale = hashlib.sha256(b"X = 0\n").hexdigest().encode()  # compiled from other bytes
    entry.write_bytes(stale + marshal.dumps(compile("X = 'forged'\n", str(module), "exec")))
    assert import_fresh(root, name).X == 1  # type: ignore[attr-defined]


@pytest.mark.skipif(os.name != "posix", reason="the code cache is POSIX-only")
def test_the_code_cache_is_pruned_of_entries_unused_for_a_month(
    tmp_path: Path, code_cache: Path
) -> None:
    import hashlib

    code_cache.mkdir(parents=True, mode=0o700)
    old = [code_cache / f"{index:064x}" for index in range(5)]
    for path in old:
        path.write_bytes(b"stale")
        os.utime(path, (0, 0))
    kept = code_cache / ("f" * 64)
    kept.write_bytes(b"recent")
    root = tmp_path / "pruned_root"
    name = f"_pruned_{os.getpid()}"
    module = write(root / f"{name}.py", "X = 1\n")
    register_root(str(root), files={str(module): hashlib.sha256(b"X = 1\n").hexdigest()})
    assert import_fresh(root, name).X == 1  # type: ignore[attr-defined]
    left = sorted(path.name for path in code_cache.iterdir())
    assert not any(path.name in left for path in old)
    assert kept.name in left
    assert len(left) == 2  # the recent entry and the new one


@pytest.mark.skipif(os.name != "posix", reason="the code cache is POSIX-only")
def test_a_code_cache_writable_by_others_is_not_used(tmp_path: Path, code_cache: Path) -> None:
    code_cache.mkdir(parents=True)
    code_cache.chmod(0o777)
    root = tmp_path / "open_root"
    name = f"_open_{os.getpid()}"
    write(root / f"{name}.py", "X = 3\n")
    register_root(str(root))
    assert import_fresh(root, name).X == 3  # type: ignore[attr-defined]
    assert list(code_cache.iterdir()) == []
