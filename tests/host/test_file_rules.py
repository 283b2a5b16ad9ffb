"""The file rules every scanner shares (customtools._loading._files), tested where the host uses
them: regular files only, a size cap, UTF-8, bounded JSON nesting."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from customtools._loading._files import (
    MAX_JSON_DEPTH,
    FileRuleError,
    json_depth,
    load_json,
    read_text_file,
)


def test_a_regular_file_is_read_with_its_bom_dropped(tmp_path: Path) -> None:
    path = tmp_path / "a.md"
    path.write_bytes(b"\xef\xbb\xbfhello")
    assert read_text_file(path) == "hello"


def test_size_cap_and_encoding(tmp_path: Path) -> None:
    path = tmp_path / "a.md"
    path.write_bytes(b"x" * 11)
    with pytest.raises(FileRuleError, match=r"^is larger than 10 bytes$"):
        read_text_file(path, max_bytes=10)
    path.write_bytes(b"\xff\xfe")
    with pytest.raises(FileRuleError, match=r"^is not UTF-8 text$"):
        read_text_file(path)


@pytest.mark.skipif(sys.platform == "win32", reason="FIFOs and /dev/zero")
def test_special_files_are_refused_without_blocking(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    with pytest.raises(FileRuleError, match=r"^is a FIFO \(named pipe\), not a regular file$"):
        read_text_file(tmp_path / "pipe")
    (tmp_path / "zero").symlink_to("/dev/zero")
    with pytest.raises(FileRuleError, match=r"^is a device, not a regular file$"):
        read_text_file(tmp_path / "zero")
    with pytest.raises(FileRuleError, match=r"^is a directory, not a regular file$"):
        read_text_file(tmp_path)
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    with pytest.raises(FileRuleError, match="broken symlink"):
        read_text_file(tmp_path / "dangling")
    with pytest.raises(FileNotFoundError):
        read_text_file(tmp_path / "absent")


def test_json_depth_ignores_brackets_inside_strings() -> None:
    assert json_depth('{"a": "[[[{{{", "b": [1, {"c": "\\"]"}]}') == 3
    assert json_depth("3") == 0


def test_deep_json_is_refused_before_parsing_and_shallow_json_parses() -> None:
    limit = MAX_JSON_DEPTH
    assert load_json("[" * limit + "]" * limit) is not None
    with pytest.raises(FileRuleError, match=f"^nests deeper than {limit} levels \\(100000\\)$"):
        load_json("[" * 100_000)
    with pytest.raises(FileRuleError, match=r"^is not valid JSON \(Expecting value at line 1"):
        load_json("[1,]")
