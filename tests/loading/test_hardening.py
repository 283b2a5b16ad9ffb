"""Regression tests for the loader findings of the 2026-11 adversarial review.

M1 metadata bombs, M5 hostile exception text, M6 metadata symlinked out of the project,
L1 deep metadata and manifests, L2 factories that swallow cancellation, L7 plugin files
symlinked out of the root, L8 process state, and control characters in file names.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import threading
from pathlib import Path

import pytest

from customtools._loading import _frontmatter, _import
from customtools._loading._files import FileRuleError, read_text_file
from customtools._loading._frontmatter import MetadataError, parse_frontmatter_block
from customtools._loading._loader import discover_and_load, load_custom_tools, load_scan
from customtools._loading._paths import display_path, encodable_path
from customtools._loading._records import ScanResult
from customtools._loading._scan import scan_sources

from ._helpers import tool_module, write

pytestmark = pytest.mark.anyio

NATIVE = Path(".customtools") / "tools"


def scan(project: Path, home: Path, **options: object) -> ScanResult:
    return scan_sources(cwd=project, home=home, entry_points=False, **options)  # type: ignore[arg-type]


def by_code(items: tuple[object, ...], code: str) -> list[object]:
    return [item for item in items if getattr(item, "code", None) == code]


def symlink(link: Path, target: Path) -> None:
    link.parent.mkdir(parents=True, exist_ok=True)
    try:
        link.symlink_to(target, target_is_directory=target.is_dir())
    except OSError as exc:  # pragma: no cover - Windows without the privilege
        pytest.skip(f"symlinks unavailable: {exc}")


# -- M1: metadata bombs -------------------------------------------------------------------

LOL = (
    "---\n"
    'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
    + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join([f'*{chr(97 + i)}'] * 9)}]\n" for i in range(8)
    )
    + "---\nbody\n"
)


def test_alias_bomb_is_refused_and_the_scan_stays_serialisable(project: Path, home: Path) -> None:
    assert len(LOL) < 700
    write(project / NATIVE / "lol.md", LOL)
    write(project / NATIVE / "ok.py", tool_module("ok"))
    result = scan(project, home)
    assert result.metadata == ()
    [diag] = by_code(result.diagnostics, "invalid-metadata")
    assert "lol.md" in diag.message  # type: ignore[attr-defined]
    assert "aliases are not allowed" in diag.message  # type: ignore[attr-defined]
    assert [os.path.basename(c.path) for c in result.candidates] == ["ok.py"]
    assert len(json.dumps([d.to_dict() for d in result.diagnostics])) < 10_000


@pytest.mark.parametrize(
    ("block", "fragment"),
    [
        ("a: &x 1\nb: *x", "alias *x (line 2 of the frontmatter)"),
        ("base: &b {k: 1}\nderived:\n  <<: *b", "alias *b"),
        ("a: " + "[" * 70 + "]" * 70, "frontmatter nests deeper than 64 levels"),
        ("a:\n" + "".join(f"{'  ' * i}k{i}:\n" for i in range(1, 70)), "nests deeper than 64"),
        ("a: [" + "1, " * 20_000 + "]", "more than 10000 values"),
        ("- " * 300_000, "nests deeper than 64"),  # libyaml's own composer overflows the stack
        # Past libyaml's own flow limit (1,000 since PyYAML 6.0.4): still this module's message.
        ("a: " + "[" * 5_000 + "]" * 5_000, "frontmatter nests deeper than 64 levels"),
        ("a: " + "{b: " * 2_000 + "1" + "}" * 2_000, "frontmatter nests deeper than 64 levels"),
    ],
)
@pytest.mark.parametrize("parser", ["libyaml", "pure-python"])
def test_frontmatter_limits(
    block: str, fragment: str, parser: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if parser == "pure-python":
        reference = _frontmatter._guarded_loaders()[1]
        monkeypatch.setattr(_frontmatter, "_guarded_loaders", lambda: (None, reference))
    elif _frontmatter._guarded_loaders()[0] is None:
        pytest.skip("PyYAML was built without libyaml")
    with pytest.raises(MetadataError) as info:
        parse_frontmatter_block(block)
    assert fragment in str(info.value)


@pytest.mark.parametrize(
    ("block", "fragment"),
    [
        # too large to read twice, and no flow collections: libyaml's refusal is the answer
        ("a: '" + "x" * (_frontmatter.REREAD_MAX_BYTES + 1), "frontmatter is not valid YAML ("),
        # too few brackets to nest past the limit
        ("a: [1, 2\nb: : ]", "frontmatter is not valid YAML ("),
        # too large to read twice but nested too deep: measured by a scan, this module's message
        ("a: " + "[" * (_frontmatter.REREAD_MAX_BYTES + 1), "frontmatter nests deeper than 64"),
    ],
)
def test_a_refused_block_is_read_again_only_when_it_could_nest_too_deep_and_is_small(
    block: str, fragment: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    fast = _frontmatter._guarded_loaders()[0]
    if fast is None:
        pytest.skip("PyYAML was built without libyaml")

    def slow_reader(_block: str) -> None:
        raise AssertionError("the pure-Python parser read a block libyaml had refused")

    monkeypatch.setattr(_frontmatter, "_guarded_loaders", lambda: (fast, slow_reader))
    with pytest.raises(MetadataError) as info:
        parse_frontmatter_block(block)
    assert str(info.value).startswith(fragment)


@pytest.mark.parametrize("parser", ["libyaml", "pure-python"])
def test_invalid_yaml_is_invalid_metadata_with_either_parser(
    parser: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if parser == "pure-python":
        reference = _frontmatter._guarded_loaders()[1]
        monkeypatch.setattr(_frontmatter, "_guarded_loaders", lambda: (None, reference))
    with pytest.raises(MetadataError) as info:
        parse_frontmatter_block("a: [unclosed\nb: 1")
    assert str(info.value).startswith("frontmatter is not valid YAML (")


def test_frontmatter_within_the_limits_still_parses() -> None:
    block = "a: &anchor-only 1\nb: [" + ", ".join(["x"] * 100) + "]\nc:" + " [" * 30 + "]" * 30
    data = parse_frontmatter_block(block)
    assert data["a"] == 1
    assert len(data["b"]) == 100


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "meta.md"
    os.mkfifo(fifo)
    with pytest.raises(FileRuleError, match="not a regular file"):
        read_text_file(str(fifo))


# -- L1: deep metadata and manifests fail alone --------------------------------------------


def test_deep_json_metadata_does_not_hide_later_files(project: Path, home: Path) -> None:
    write(project / NATIVE / "deep.json", "[" * 100_000)
    write(project / NATIVE / "deeper.json", '{"a": ' + "[" * 70 + "]" * 70 + "}")
    write(project / NATIVE / "zz_after.py", tool_module("zz_after"))
    result = scan(project, home)
    assert [os.path.basename(c.path) for c in result.candidates] == ["zz_after.py"]
    assert result.errors == ()
    diags = by_code(result.diagnostics, "invalid-metadata")
    assert sorted(os.path.basename(d.path) for d in diags) == ["deep.json", "deeper.json"]  # type: ignore[attr-defined]
    assert all("nests deeper than 64 levels" in d.message for d in diags)  # type: ignore[attr-defined]


def test_deep_yaml_metadata_is_invalid_metadata(project: Path, home: Path) -> None:
    write(project / NATIVE / "deep.md", "---\na: " + "[" * 100_000 + "\n---\n")
    write(project / NATIVE / "zz_after.py", tool_module("zz_after"))
    result = scan(project, home)
    assert len(result.candidates) == 1
    [diag] = by_code(result.diagnostics, "invalid-metadata")
    assert "frontmatter nests deeper than 64 levels" in diag.message  # type: ignore[attr-defined]


def test_deep_plugin_manifest_fails_alone(tmp_path: Path, project: Path, home: Path) -> None:
    p3, p4 = tmp_path / "p3", tmp_path / "p4"
    write(p3 / "plugin.json", "[" * 100_000)
    write(p3 / "tools" / "three.py", tool_module("three"))
    write(p4 / "tools" / "four.py", tool_module("four"))
    result = scan(project, home, plugin_dirs=[p3, p4])
    assert [os.path.basename(c.path) for c in result.candidates] == ["three.py", "four.py"]
    [error] = result.errors
    assert error.code == "invalid-manifest"
    assert "it nests deeper than 64 levels (100000)" in error.error
    assert "provider-error" not in {e.code for e in result.errors}


# -- M5: exceptions whose text cannot be read ------------------------------------------------


async def test_hostile_exception_text_does_not_abort_discover_and_load(
    project: Path, home: Path
) -> None:
    write(home / NATIVE / "mine.py", tool_module("mine"))
    write(
        project / NATIVE / "badstr.py",
        """
        class E(Exception):
            def __str__(self):
                raise RuntimeError("boom")

        def factory(api):
            raise E()
        """,
    )
    result = await discover_and_load(cwd=project, home=home, entry_points=False, trust="all")
    assert result.tool_names == ("mine",)
    [error] = result.errors
    assert error.code == "factory-error"
    assert "E (its message could not be read: __str__ failed)" in error.error
    assert error.traceback is not None
    assert "Traceback" in error.traceback


async def test_hostile_mapping_name_does_not_escape(tmp_path: Path) -> None:
    path = write(
        tmp_path / "hostile.py",
        """
        class Name(str):
            def __repr__(self):
                raise RuntimeError("no repr")

        class Weird(dict):
            def get(self, key, default=None):
                raise RuntimeError("no get")

        def factory(api):
            return [Weird(name="x"), {"name": Name("y")}]
        """,
    )
    result = await load_custom_tools([path], tmp_path)
    assert all(e.code == "invalid-tool" for e in result.errors), result.errors
    assert result.errors


@pytest.mark.parametrize(
    ("body", "code", "fragment"),
    [
        (
            "class Exit(SystemExit):\n    code = property(lambda self: 1 / 0)\nraise Exit()",
            "module-exit",
            "import failed: Exit with no message",
        ),
        (
            "class Bad(SyntaxError):\n    msg = property(lambda self: 1 / 0)\nraise Bad('x')",
            "syntax-error",
            "Bad: x",
        ),
        (
            "class G(Exception):\n    exceptions = property(lambda self: 1 / 0)\n"
            "G.__name__ = 'FakeExceptionGroup'\nraise G('faked')",
            "import-error",
            "G: faked",
        ),
    ],
)
async def test_exceptions_with_hostile_attributes_are_reported(
    tmp_path: Path, body: str, code: str, fragment: str
) -> None:
    path = tmp_path / "hostile_attrs.py"
    path.write_text(body + "\n", encoding="utf-8")
    result = await load_custom_tools([path], tmp_path)
    [error] = result.errors
    assert error.code == code
    assert fragment in error.error


# -- L2: a factory that swallows cancellation ----------------------------------------------


async def test_factory_still_running_after_the_grace_is_logged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(_import, "LOAD_TIMEOUT_GRACE", 0.05)
    path = write(
        tmp_path / "stubborn.py",
        """
        import time
        import anyio

        async def factory(api):
            end = time.monotonic() + 0.6
            while time.monotonic() < end:
                try:
                    await anyio.sleep(0.01)
                except BaseException:
                    pass
            return {"name": "stubborn", "execute": print}
        """,
    )
    with caplog.at_level(logging.WARNING, logger="customtools.loading"):
        result = await load_custom_tools([path], tmp_path, load_timeout=0.1)
    assert result.tools == ()
    [error] = result.errors
    assert error.code == "timeout"
    assert "ignored the cancellation" in error.error
    warnings = [r.getMessage() for r in caplog.records if r.name == "customtools.loading"]
    assert any("stubborn.py" in w and "ignores cancellation" in w for w in warnings), warnings


# -- M6: metadata that leads out of the project ---------------------------------------------


def test_project_metadata_symlinked_outside_is_not_read(
    tmp_path: Path, project: Path, home: Path
) -> None:
    secret = write(tmp_path / "credentials.json", '{"client_secret": "hunter2"}')
    symlink(project / NATIVE / "gcloud.json", secret)
    write(project / NATIVE / "inside.md", "---\nname: inside\n---\n")
    result = scan(project, home)
    assert [m.name for m in result.metadata] == ["inside"]
    [diag] = by_code(result.diagnostics, "metadata-outside-root")
    assert "gcloud.json" in diag.message  # type: ignore[attr-defined]
    assert "was not read" in diag.message  # type: ignore[attr-defined]
    assert "hunter2" not in json.dumps([d.to_dict() for d in result.diagnostics])


def test_project_tools_directory_symlinked_outside_reads_no_metadata(
    tmp_path: Path, project: Path, home: Path
) -> None:
    elsewhere = tmp_path / "gcloud"
    write(elsewhere / "application_default_credentials.json", '{"refresh_token": "t0k"}')
    symlink(project / NATIVE, elsewhere)
    result = scan(project, home)
    assert result.metadata == ()
    assert len(by_code(result.diagnostics, "metadata-outside-root")) == 1


def test_metadata_symlinked_inside_the_project_is_read(project: Path, home: Path) -> None:
    target = write(project / "docs" / "weather.md", "---\nname: weather\n---\n")
    symlink(project / NATIVE / "weather.md", target)
    assert [m.name for m in scan(project, home).metadata] == ["weather"]


def test_user_level_metadata_may_link_anywhere(tmp_path: Path, project: Path, home: Path) -> None:
    target = write(tmp_path / "dotfiles" / "mine.md", "---\nname: mine\n---\n")
    symlink(home / NATIVE / "mine.md", target)
    assert [m.name for m in scan(project, home).metadata] == ["mine"]


def test_plugin_manifest_symlinked_outside_is_not_read(
    tmp_path: Path, project: Path, home: Path
) -> None:
    secret = write(tmp_path / "secret.json", '{"name": "leaked-name", "token": "t"}')
    root = tmp_path / "plug"
    symlink(root / "plugin.json", secret)
    write(root / "tools" / "t.py", tool_module("t"))
    result = scan(project, home, plugin_dirs=[root])
    [error] = result.errors
    assert error.code == "path-outside-plugin"
    assert "was not read" in error.error
    [cand] = result.candidates
    assert cand.source.plugin_name == "plug"


# -- L7: plugin files that lead out of the root ---------------------------------------------


def test_plugin_tools_directory_symlinked_outside_is_refused(
    tmp_path: Path, project: Path, home: Path
) -> None:
    outside = tmp_path / "outside"
    write(outside / "evil.py", tool_module("evil"))
    root = tmp_path / "p1"
    symlink(root / "tools", outside)
    result = scan(project, home, plugin_dirs=[root])
    assert result.candidates == ()
    [error] = result.errors
    assert error.code == "path-outside-plugin"
    assert "tools directory" in error.error


def test_symlink_inside_a_declared_directory_pointing_outside_is_refused(
    tmp_path: Path, project: Path, home: Path
) -> None:
    outside = write(tmp_path / "outside" / "evil2.py", tool_module("evil2"))
    root = tmp_path / "p2"
    write(root / "plugin.json", json.dumps({"tools": ["sub"]}))
    write(root / "sub" / "fine.py", tool_module("fine"))
    symlink(root / "sub" / "inner_link.py", outside)
    symlink(root / "tools" / "also_out.py", outside)
    write(tmp_path / "outside" / "pkg" / "__init__.py", tool_module("pkg"))
    write(root / "tools" / "pkg2" / "helpers.py", "")
    symlink(root / "tools" / "pkg2" / "__init__.py", tmp_path / "outside" / "pkg" / "__init__.py")
    result = scan(project, home, plugin_dirs=[root])
    assert [os.path.basename(c.path) for c in result.candidates] == ["fine.py"]
    assert {e.code for e in result.errors} == {"path-outside-plugin"}
    refused = sorted(os.path.basename(e.path) for e in result.errors)
    assert refused == ["__init__.py", "also_out.py", "inner_link.py"]


def test_symlink_inside_the_plugin_is_fine(tmp_path: Path, project: Path, home: Path) -> None:
    root = tmp_path / "p3"
    target = write(root / "src" / "real.py", tool_module("real"))
    symlink(root / "tools" / "real.py", target)
    result = scan(project, home, plugin_dirs=[root])
    assert result.errors == ()
    assert [os.path.basename(c.path) for c in result.candidates] == ["real.py"]


# -- L8: process state ----------------------------------------------------------------------


async def test_environ_and_stdout_fd_are_restored(tmp_path: Path) -> None:
    path = write(
        tmp_path / "meddler.py",
        """
        import os

        os.environ["PATH"] = "/tmp/evil-bin"
        os.environ["CT_NEW_VAR"] = "x"

        def factory(api):
            return {"name": "meddler", "execute": print}
        """,
    )
    before_env = dict(os.environ)
    before_fd = os.fstat(1)
    result = await load_custom_tools([path], tmp_path)
    assert dict(os.environ) == before_env
    after_fd = os.fstat(1)
    assert (after_fd.st_dev, after_fd.st_ino) == (before_fd.st_dev, before_fd.st_ino)
    [error] = result.errors
    assert error.code == "changed-process-state"
    assert "os.environ (CT_NEW_VAR, PATH;" in error.error
    assert "/tmp/evil-bin" not in error.error


async def test_thread_started_at_import_is_reported(tmp_path: Path) -> None:
    stop = threading.Event()
    sys.modules["ct_test_stop_event"] = stop  # type: ignore[assignment]
    path = write(
        tmp_path / "threader.py",
        """
        import sys
        import threading

        stop = sys.modules["ct_test_stop_event"]
        threading.Thread(target=stop.wait, args=(5,), name="ct-background", daemon=True).start()

        def factory(api):
            return {"name": "threader", "execute": print}
        """,
    )
    try:
        result = await load_custom_tools([path], tmp_path)
    finally:
        stop.set()
        del sys.modules["ct_test_stop_event"]
    assert result.tool_names == ("threader",)
    [diag] = by_code(result.diagnostics, "started-threads")
    assert "ct-background" in diag.message  # type: ignore[attr-defined]


# -- control characters in file names -------------------------------------------------------


def test_display_path_escapes_control_characters_and_bad_bytes() -> None:
    assert display_path("a\nb\r\x1b[2J.py") == "a\\nb\\r\\x1b[2J.py"
    assert display_path(os.fsdecode(b"caf\xff.py")) == "caf\\xff.py"
    # For data (a JSON report escapes by itself) only the undecodable bytes change.
    assert encodable_path(os.fsdecode(b"a\nb\xff.py")) == "a\nb\\xff.py"


@pytest.mark.skipif(sys.platform == "win32", reason="newlines in file names are POSIX only")
async def test_file_name_with_a_newline_cannot_forge_a_log_line(tmp_path: Path) -> None:
    tools = tmp_path / "tools"
    write(tools / "nl\n::error file=x::INJECTED.py", "def factory(api):\n    return 3\n")
    write(tools / "x\x1b]0;title\x07.md", "---\nname: [unclosed\n---\n")
    scanned = scan_sources(
        cwd=tmp_path, home=tmp_path, configured_paths=[tools], entry_points=False
    )
    result = await load_scan(scanned, tmp_path)
    messages = [e.error for e in result.errors] + [d.message for d in result.diagnostics]
    assert len(messages) == 2
    for message in messages:
        assert "\n" not in message
        assert "\x1b" not in message
        assert "\x07" not in message


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="uses RLIMIT_AS")
def test_list_scan_only_on_an_alias_bomb_stays_within_a_memory_cap(project: Path) -> None:
    import resource
    import subprocess

    write(project / NATIVE / "lol.md", LOL)

    def cap_memory() -> None:  # pragma: no cover - runs in the child
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))

    argv = ["list", "--scan-only", "--no-entry-points", "--format", "json"]
    proc = subprocess.run(
        [sys.executable, "-m", "customtools", *argv],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=cap_memory,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["metadata"] == []
    assert [d["code"] for d in report["diagnostics"]] == ["invalid-metadata"]


@pytest.mark.parametrize(
    ("block", "depth"),
    [
        ("a: [[1], {b: [2]}]", 3),
        ('a: "[[[[" [x]', 1),  # brackets in a quoted scalar are text
        ("a: '[[' [b] # [[[[", 1),  # and in a comment
        ("a: x[y[z[", 0),  # and inside a plain scalar
        ("a: " + "[" * 100, 100),
    ],
)
def test_the_flow_depth_scan_counts_only_flow_collections(block: str, depth: int) -> None:
    assert _frontmatter._flow_depth(block) == depth
