"""The failure-containment corpus: every kind of broken module beside good tools.

Each file (or package ``__init__.py``) under ``tests/fixtures/broken/`` starts with
``# expect: <code> | <substring of the error>`` and optionally ``# loads: <tool>, ...`` for
good siblings it returns. Adding a case is adding a file.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import anyio
import pytest

from customtools._errors import LoadFailedError
from customtools._loading._loader import LoadResult, load_scan

from ._helpers import FIXTURES, copy_pack, scan_of

pytestmark = pytest.mark.anyio

GOOD_TOOLS = {
    "good_async",
    "good_echo",
    "good_json_named",
    "good_mapping",
    "good_multi_a",
    "good_multi_b",
    "good_pkg",
    "good_prints",
    "good_self_deleting",
}
BUILTINS = ("bash", "read")
LOAD_TIMEOUT = 0.3


@dataclass(frozen=True)
class Case:
    name: str
    code: str
    fragment: str
    loads: tuple[str, ...]


def _cases() -> list[Case]:
    cases = []
    for entry in sorted((FIXTURES / "broken").iterdir()):
        source = entry / "__init__.py" if entry.is_dir() else entry
        if entry.name.startswith(".") or source.suffix != ".py":
            continue
        head = source.read_bytes().decode("utf-8", "replace").splitlines()
        expect = next(line for line in head if line.startswith("# expect: "))
        code, _, fragment = expect.removeprefix("# expect: ").partition(" | ")
        loads = next((line for line in head if line.startswith("# loads: ")), "# loads: ")
        names = tuple(n.strip() for n in loads.removeprefix("# loads: ").split(",") if n.strip())
        cases.append(Case(entry.name, code.strip(), fragment.strip(), names))
    return cases


CASES = _cases()


def test_corpus_has_at_least_25_kinds() -> None:
    assert len(CASES) >= 25
    assert len({case.code for case in CASES}) >= 10


async def _load_corpus(tmp_path: Path) -> LoadResult:
    good = copy_pack("good", tmp_path)
    broken = copy_pack("broken", tmp_path)
    return await load_scan(scan_of(good, broken), tmp_path, BUILTINS, load_timeout=LOAD_TIMEOUT)


@pytest.fixture
async def corpus(tmp_path: Path) -> LoadResult:
    """The corpus loaded on the current backend (asyncio and trio)."""
    return await _load_corpus(tmp_path)


@pytest.fixture(scope="module")
def corpus_once(tmp_path_factory: pytest.TempPathFactory) -> LoadResult:
    """The corpus loaded once (on asyncio) for the per-case checks."""
    tmp_path = tmp_path_factory.mktemp("corpus")
    return anyio.run(_load_corpus, tmp_path)


async def test_every_good_tool_loads_beside_the_corpus(corpus: LoadResult) -> None:
    sibling_tools = {name for case in CASES for name in case.loads}
    assert set(corpus.tool_names) == GOOD_TOOLS | sibling_tools


async def test_no_good_file_is_reported(corpus: LoadResult) -> None:
    assert [e for e in corpus.errors if f"{os.sep}good{os.sep}" in e.path] == []


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_each_broken_module_is_reported(corpus_once: LoadResult, case: Case) -> None:
    errors = [e for e in corpus_once.errors if Path(e.path).name == case.name]
    assert len(errors) == 1, errors
    (error,) = errors
    assert error.code == case.code
    assert case.fragment in error.error
    assert "\n" not in error.error
    assert error.resolved_path is not None
    assert Path(error.resolved_path).is_absolute()
    assert error.source is not None


async def test_total_error_count_matches_the_corpus(corpus: LoadResult) -> None:
    assert len(corpus.errors) == len(CASES)


def test_exceptions_carry_a_traceback_summary(corpus_once: LoadResult) -> None:
    by_name = {Path(e.path).name: e for e in corpus_once.errors}
    for name in ("body_raises.py", "factory_raises.py", "async_factory_raises.py"):
        assert by_name[name].traceback is not None
        assert "Traceback" in by_name[name].traceback  # type: ignore[operator]
    assert by_name["returns_none.py"].traceback is None


def _fd_identities() -> list[tuple[int, int]]:
    return [(os.fstat(fd).st_dev, os.fstat(fd).st_ino) for fd in (0, 1, 2)]


async def test_process_state_is_intact_after_the_corpus(tmp_path: Path) -> None:
    cwd, path, argv, stdout = os.getcwd(), list(sys.path), list(sys.argv), sys.stdout
    environ, fds = dict(os.environ), _fd_identities()
    await load_scan(
        scan_of(copy_pack("broken", tmp_path)), tmp_path, BUILTINS, load_timeout=LOAD_TIMEOUT
    )
    assert (os.getcwd(), sys.path, sys.argv) == (cwd, path, argv)
    assert sys.stdout is stdout
    assert dict(os.environ) == environ
    assert _fd_identities() == fds


async def test_strict_raises_one_error_listing_all(tmp_path: Path) -> None:
    scanned = scan_of(copy_pack("good", tmp_path), copy_pack("broken", tmp_path))
    with pytest.raises(LoadFailedError) as caught:
        await load_scan(scanned, tmp_path, BUILTINS, strict=True, load_timeout=LOAD_TIMEOUT)
    assert len(caught.value.errors) == len(CASES)
    message = str(caught.value)
    assert message.startswith(f"{len(CASES)} custom tool load error(s):")
    for case in CASES:
        assert case.name in message


def test_host_process_survives_the_corpus_in_a_subprocess(tmp_path: Path) -> None:
    good = copy_pack("good", tmp_path)
    broken = copy_pack("broken", tmp_path)
    helpers = Path(__file__).resolve().parent
    script = f"""
import json, sys
import anyio
sys.path.insert(0, {str(helpers.parent)!r})
from loading._helpers import scan_of
from customtools._loading._loader import load_scan
from pathlib import Path

async def main():
    result = await load_scan(scan_of(Path({str(good)!r}), Path({str(broken)!r})),
                             {str(tmp_path)!r}, ("bash", "read"), load_timeout=0.3)
    return result

result = anyio.run(main)
print("RESULT " + json.dumps({{"tools": len(result.tools), "errors": len(result.errors)}}))
print("STILL ALIVE")
"""
    proc = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[-1] == "STILL ALIVE"
    summary = json.loads(lines[-2].removeprefix("RESULT "))
    assert summary["errors"] == len(CASES)
    assert summary["tools"] == len(GOOD_TOOLS) + sum(len(c.loads) for c in CASES)


# -- the metadata corpus: data files that must fail alone ---------------------------------

METADATA_CASES = {
    "alias_bomb.md": "aliases are not allowed in metadata",
    "merge_key.md": "uses the YAML alias *base",
    "deep_flow.md": "frontmatter nests deeper than 64 levels",
    "deep_block.md": "frontmatter nests deeper than 64 levels",
    "many_values.md": "more than 10000 values",
    "bad_yaml.md": "frontmatter is not valid YAML",
    "unterminated.md": "no closing '---' line",
    "python_tag.md": "could not determine a constructor",
    "deep.json": "it nests deeper than 64 levels (5000)",
    "deep_valid.json": "it nests deeper than 64 levels (71)",
    "not_object.json": "the JSON top level must be an object",
}


def test_each_broken_metadata_file_is_one_diagnostic_and_fails_alone(tmp_path: Path) -> None:
    from customtools._loading._scan import scan_sources

    corpus = copy_pack("broken_metadata", tmp_path)
    on_disk = {p.name for p in corpus.iterdir() if p.suffix in {".md", ".json"}}
    assert on_disk == set(METADATA_CASES)
    result = scan_sources(
        cwd=tmp_path, home=tmp_path, configured_paths=[corpus], entry_points=False
    )
    assert result.metadata == ()
    assert result.errors == ()
    assert [Path(c.path).name for c in result.candidates] == ["zz_good_sibling.py"]
    found = {Path(d.path).name: d for d in result.diagnostics if d.path is not None}
    assert set(found) == set(METADATA_CASES)
    for name, fragment in METADATA_CASES.items():
        assert found[name].code == "invalid-metadata", name
        assert fragment in found[name].message, (name, found[name].message)
        assert "\n" not in found[name].message
