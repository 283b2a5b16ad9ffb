"""Reading metadata files: YAML frontmatter of ``.md`` files and the object of ``.json`` files.

Metadata describes a tool for people (a name and a description); it is never executed and
never takes a name from a module. A file that cannot be read or parsed becomes a
``Diagnostic`` with code ``"invalid-metadata"``: it is not a tool, so it is not a load error.

Limits
    Metadata comes from places an attacker may write to, and hosts serialise it
    (``LoadResult.to_dict()``), so reading it is bounded: files over
    :data:`MAX_METADATA_BYTES` are not read; YAML aliases (``*name``, and so ``<<`` merges) are
    refused, because a few hundred bytes of nested aliases expand to gigabytes once
    serialised; a block nests at most :data:`MAX_FRONTMATTER_DEPTH` (64) collections deep and
    holds at most :data:`MAX_FRONTMATTER_VALUES` (10,000) values. These limits are enforced
    while composing, before anything is built, so a hostile block costs at most that many
    nodes. Files are read under the data-file rules of ``_files`` (regular files only, JSON at
    most 64 levels deep), shared with plugin manifests and the host toolkit.

Two readers, one answer
    The common frontmatter, flat ``key: plain text`` lines, is read by :func:`_plain_mapping`
    without PyYAML; everything else goes to PyYAML (its C parser when libyaml is present) with
    the guarded composer above. The fast reader only answers for lines it can prove PyYAML
    reads as the same strings (ASCII keys of at most 128 characters that are not YAML 1.1
    words; printable values without tabs that start with a letter and hold no ``: ``, `` #``
    or trailing ``:``). A hypothesis test generates the separators and scalars YAML cares
    about and checks that wherever the fast reader answers, ``yaml.safe_load`` agrees.

    Why keep it, decided by measurement (``benchmarks/bench_frontmatter.py``; Python 3.11,
    PyYAML 6.0.3 with libyaml, a shared and busy 2-CPU VM, so ranges over four runs):
    importing PyYAML costs 20-90 ms once per process, 0.5-1.2x an ``import customtools``; per
    block the guarded loader costs 8-17x the fast reader (25-60 us against 2-4 us) and at
    most 1.7x a bare ``CSafeLoader``. One import is worth about 900-3,000 blocks, so a host or
    ``customtools list`` whose metadata is all plain (the usual case) saves the import on
    every start; the property test is what makes the shortcut safe.

    Why libyaml's parser under a Python composer: the parser is iterative and 30-60x faster
    than PyYAML's pure-Python one on a 1 MiB block (12 ms against 0.4-0.7 s), while
    libyaml's own composer recurses in C and crashes the process on ``"- " * 300000``; the
    Python composer checks depth and size before it recurses.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from functools import cache
from typing import Any, Literal

from customtools._error_results import LoadCode
from customtools._format import describe_exception, escape_control
from customtools._loading._files import (
    MAX_FILE_BYTES,
    MAX_JSON_DEPTH,
    FileRuleError,
    load_json,
    read_text_file,
)
from customtools._loading._paths import display_path
from customtools._loading._records import Diagnostic, MetadataFile, ToolSource

__all__ = [
    "MAX_METADATA_BYTES",
    "MetadataError",
    "parse_frontmatter",
    "parse_frontmatter_block",
    "read_metadata_file",
    "split_frontmatter",
]

MAX_METADATA_BYTES = MAX_FILE_BYTES
"""Metadata files larger than this are not read (a diagnostic says so)."""

MAX_FRONTMATTER_DEPTH = MAX_JSON_DEPTH
"""How deeply collections may nest in frontmatter (the top-level mapping is level 1)."""

MAX_FRONTMATTER_VALUES = 10_000
"""How many values (scalars and collections) one frontmatter block may hold."""

_OPENERS = ("---\n", "---\r\n")
_CLOSERS = frozenset({"---", "..."})


# A flat `key: value` line whose value YAML reads as the same plain string: the key is ASCII
# and short enough to be a YAML simple key (limit 1024); the value starts with a letter (so it
# is no number, date, quote, flow collection, anchor, alias, tag or block scalar). The checks
# in _plain_mapping exclude the rest (comments, nested mappings, YAML 1.1 words, characters
# PyYAML refuses).
_PLAIN_LINE = re.compile(r"([A-Za-z_][A-Za-z0-9_-]{0,127}): +([A-Za-z][^\n]*)")
_YAML_WORDS = frozenset({"y", "n", "yes", "no", "on", "off", "true", "false", "null", "nan", "inf"})


def _plain_mapping(block: str) -> dict[str, Any] | None:
    """Read ``block`` without PyYAML when every line is ``key: plain text``; else ``None``.

    The result is what ``yaml.safe_load`` returns for such a block (a property test checks
    both agree on every accepted form); anything this does not recognise goes to PyYAML.
    """
    data: dict[str, Any] = {}
    for raw_line in block.split("\n"):
        line = raw_line.removesuffix("\r").rstrip(" ")
        if not line:
            continue
        if "\t" in line:
            return None  # PyYAML refuses some tabs (a trailing one, for example)
        match = _PLAIN_LINE.fullmatch(line)
        if match is None:
            return None
        key, value = match.groups()
        if (
            key in data
            or key.lower() in _YAML_WORDS  # YAML 1.1 reads `on:` or `yes:` as a boolean key
            or not value.isprintable()  # PyYAML refuses most controls
            or ": " in value
            or " #" in value
            or value.endswith(":")
            or value.lower() in _YAML_WORDS
        ):
            return None
        data[key] = value
    return data


class MetadataError(ValueError):
    """A metadata file's frontmatter or JSON is malformed or over a limit."""


def split_frontmatter(text: str) -> tuple[str | None, str]:
    """Split a Markdown text into its YAML frontmatter block and its body.

    The frontmatter is the block between a first line ``---`` and the next line ``---`` (or
    ``...``). Returns ``(None, text)`` when the text has no frontmatter.

    Raises:
        MetadataError: the text starts with ``---`` but the block is never closed.
    """
    if not text.startswith(_OPENERS):
        return None, text
    offset = len(text.split("\n", 1)[0]) + 1
    lines = text[offset:].splitlines(keepends=True)
    block_lines: list[str] = []
    for line in lines:
        offset += len(line)
        if line.rstrip() in _CLOSERS:
            return "".join(block_lines).rstrip("\r\n"), text[offset:]
        block_lines.append(line)
    raise MetadataError("frontmatter starts with '---' but has no closing '---' line")


def parse_frontmatter(text: str) -> dict[str, Any]:
    """Return the YAML frontmatter mapping of a Markdown text (``{}`` when there is none).

    Raises:
        MetadataError: the block is unterminated, is not valid YAML, or is not a mapping.
    """
    return parse_frontmatter_block(split_frontmatter(text)[0])


def parse_frontmatter_block(block: str | None) -> dict[str, Any]:
    """Parse a frontmatter block (as :func:`split_frontmatter` returns it) into a mapping.

    Aliases are refused and the block may nest at most 64 collections deep and hold at most
    10,000 values (see the module docstring).

    Raises:
        MetadataError: the block is not valid YAML, breaks a limit, or is not a mapping.
    """
    if block is None:
        return {}
    plain = _plain_mapping(block)
    if plain is not None:
        return plain
    if not block.strip():
        return {}
    data = _load_yaml(block)
    if not isinstance(data, dict):
        raise MetadataError(f"frontmatter must be a mapping, not {type(data).__name__}")
    return {str(key): value for key, value in data.items()}


REREAD_MAX_BYTES = 64 * 1024
"""The largest block libyaml refuses that the pure-Python parser reads again (see
:func:`_load_yaml`): it is 10-30x slower, and untrusted checkouts are scanned."""


def _load_yaml(block: str, *, pure_python: bool = False) -> Any:
    """Compose ``block`` under the guarded composer.

    libyaml's parser is tried first (fast). libyaml's scanner reads flow collections ahead of
    the composer and, since PyYAML 6.0.4, stops at its own nesting limit before the
    composer's 64-level guard sees the block. So when libyaml refuses a block that could nest
    deeper than the guard through flow collections (more ``[``/``{`` than the limit), the
    pure-Python parser, which has no such limit, reads it again and its answer is the one
    reported: the diagnostic is this module's whatever PyYAML or libyaml version is
    installed. The re-read happens only for a block that is rejected anyway, and only up to
    :data:`REREAD_MAX_BYTES`, so a hostile file costs at most that much pure-Python parsing; a
    larger refused block has its flow nesting measured by a scan (:func:`_flow_depth`): past
    the limit it gets this module's message, else libyaml's problem is reported.
    """
    try:
        import yaml
    except ImportError as exc:  # pragma: no cover - PyYAML is a declared dependency
        raise MetadataError("PyYAML is not installed; install it to read frontmatter") from exc
    fast, reference = _guarded_loaders()
    if fast is not None and not pure_python:
        try:
            return _compose(fast, block)
        except yaml.YAMLError as exc:
            if block.count("[") + block.count("{") <= MAX_FRONTMATTER_DEPTH:
                raise _not_valid(exc) from None  # cannot be a nesting limit: libyaml's answer
            if len(block) > REREAD_MAX_BYTES:
                if _flow_depth(block) > MAX_FRONTMATTER_DEPTH:
                    raise MetadataError(
                        f"frontmatter nests deeper than {MAX_FRONTMATTER_DEPTH} levels"
                    ) from None
                raise _not_valid(exc) from None
    try:
        return _compose(reference, block)
    except yaml.YAMLError as exc:
        raise _not_valid(exc) from None
    except RecursionError:  # pragma: no cover - the depth limit comes first
        raise MetadataError("frontmatter is nested too deeply") from None


# Quoted scalars and comments (skipped), and the flow indicators counted by _flow_depth.
# An opener counts only where a flow collection can start (after a space, an indicator or at
# the start), so ``x[`` inside a plain scalar is not nesting.
_FLOW_TOKENS = re.compile(
    r"'[^']*(?:''[^']*)*'|\"(?:[^\"\\]|\\.)*\"|\s#[^\n]*|(?<![^\s\[{,:])[\[{]|[\]}]"
)


def _flow_depth(block: str) -> int:
    """How deep ``block``'s flow collections nest, read without parsing (quoted scalars and
    comments skipped): the answer for a refused block too large to read twice."""
    depth = deepest = 0
    for token in _FLOW_TOKENS.findall(block):
        if token in ("[", "{"):
            depth += 1
            deepest = max(deepest, depth)
        elif token in ("]", "}"):
            depth = max(depth - 1, 0)
    return deepest


def _not_valid(exc: Any) -> MetadataError:
    import yaml

    problem = (
        _yaml_problem(exc) if isinstance(exc, yaml.MarkedYAMLError) else describe_exception(exc)
    )
    return MetadataError(f"frontmatter is not valid YAML ({problem})")


def _compose(loader_class: Any, block: str) -> Any:
    loader = loader_class(block)
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()


def _yaml_problem(exc: Any) -> str:
    problem = exc.problem if isinstance(exc.problem, str) else ""
    return escape_control(problem) or type(exc).__name__


@cache
def _guarded_loaders() -> tuple[Any, Any]:
    """PyYAML's safe loaders with a composer that refuses aliases and over-limit documents.

    Returns ``(fast, reference)``: a loader on libyaml's parser (``CParser``), or ``None`` when
    PyYAML was built without libyaml, and one on the pure-Python parser. Composition is always
    the Python ``Composer``, so the checks run on every node before anything is constructed.
    """
    import yaml
    from yaml.composer import Composer
    from yaml.constructor import SafeConstructor
    from yaml.events import AliasEvent, MappingStartEvent, SequenceStartEvent
    from yaml.resolver import Resolver

    class GuardedComposer(Composer):
        _nodes = 0
        _depth = 0

        def compose_node(self, parent: Any, index: Any) -> Any:
            event = self.peek_event()  # type: ignore[attr-defined]
            line = event.start_mark.line + 1 if event.start_mark is not None else 0
            if isinstance(event, AliasEvent):
                raise MetadataError(
                    f"frontmatter uses the YAML alias *{escape_control(str(event.anchor))} "
                    f"(line {line} of the frontmatter); aliases are not allowed in metadata, "
                    "write the value out"
                )
            self._nodes += 1
            if self._nodes > MAX_FRONTMATTER_VALUES:
                raise MetadataError(f"frontmatter holds more than {MAX_FRONTMATTER_VALUES} values")
            if not isinstance(event, (MappingStartEvent, SequenceStartEvent)):
                return super().compose_node(parent, index)
            self._depth += 1
            if self._depth > MAX_FRONTMATTER_DEPTH:
                raise MetadataError(
                    f"frontmatter nests deeper than {MAX_FRONTMATTER_DEPTH} levels "
                    f"(line {line} of the frontmatter)"
                )
            try:
                return super().compose_node(parent, index)
            finally:
                self._depth -= 1

    fast: Any = None
    try:
        import yaml.cyaml

        parser: Any = yaml.cyaml.CParser  # type: ignore[attr-defined]
    except (ImportError, AttributeError):  # pragma: no cover - PyYAML built without libyaml
        pass
    else:

        class CLoader(GuardedComposer, parser, SafeConstructor, Resolver):  # type: ignore[misc]
            def __init__(self, stream: str) -> None:
                parser.__init__(self, stream)
                SafeConstructor.__init__(self)
                Resolver.__init__(self)
                Composer.__init__(self)

        fast = CLoader

    class PyLoader(
        yaml.reader.Reader,
        yaml.scanner.Scanner,
        yaml.parser.Parser,
        GuardedComposer,
        SafeConstructor,
        Resolver,
    ):
        def __init__(self, stream: str) -> None:
            yaml.reader.Reader.__init__(self, stream)
            yaml.scanner.Scanner.__init__(self)
            yaml.parser.Parser.__init__(self)
            Composer.__init__(self)
            SafeConstructor.__init__(self)
            Resolver.__init__(self)

    return fast, PyLoader


def _parse_json(text: str) -> dict[str, Any]:
    data = load_json(text)
    if not isinstance(data, dict):
        raise MetadataError(f"the JSON top level must be an object, not {type(data).__name__}")
    return data


def _text_field(data: Mapping[str, Any], key: str) -> str | None:
    value = data.get(key)
    return value.strip() if isinstance(value, str) and value.strip() else None


def read_metadata_file(
    path: str,
    *,
    resolved_path: str,
    source: ToolSource,
) -> MetadataFile | Diagnostic:
    """Read one ``.md`` or ``.json`` file into a :class:`MetadataFile`.

    ``name`` comes from the ``name`` field, else the file stem; ``description`` from the
    ``description`` field, else ``""``. Every field read is kept in ``data``.

    Args:
        path: the file as found.
        resolved_path: its real path.
        source: where it was found.

    Returns:
        The record, or a ``Diagnostic`` (code ``"invalid-metadata"``) when the file cannot be
        read, cannot be parsed, or breaks a limit. Never raises for a bad file.
    """
    stem, ext = os.path.splitext(os.path.basename(path))
    fmt: Literal["md", "json"] = "json" if ext.lower() == ".json" else "md"
    try:
        text = read_text_file(path, max_bytes=MAX_METADATA_BYTES)
        data = _parse_json(text) if fmt == "json" else parse_frontmatter(text)
    except (OSError, FileRuleError, MetadataError) as exc:
        if isinstance(exc, OSError):
            cause = exc.strerror or type(exc).__name__
        elif isinstance(exc, FileRuleError):
            cause = f"it {exc}"
        else:
            cause = str(exc)
        return Diagnostic(
            code=LoadCode.INVALID_METADATA,
            message=(
                f"metadata file {display_path(path)} was ignored: {cause}; "
                "fix it (it is never executed, only read for a name and description)"
            ),
            path=path,
            source=source,
        )
    return MetadataFile(
        path=path,
        resolved_path=resolved_path,
        name=_text_field(data, "name") or stem,
        description=_text_field(data, "description") or "",
        source=source,
        format=fmt,
        data=data,
    )
