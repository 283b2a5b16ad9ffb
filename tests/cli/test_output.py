"""Report helpers: GitHub workflow command escaping, colour choice, the progress line."""

from __future__ import annotations

import io
import json

import pytest

from customtools.cli._output import (
    AnsiTheme,
    Progress,
    github_command,
    github_data,
    github_property,
    to_json_text,
    use_color,
    without_surrogates,
)


def test_github_message_escapes_percent_cr_and_lf():
    assert github_data("100%\r\nnext: a,b") == "100%25%0D%0Anext: a,b"


def test_github_property_also_escapes_colon_and_comma():
    assert github_property("C:\\a,b%\n") == "C%3A\\a%2Cb%25%0A"


def test_github_command_leaves_out_missing_properties():
    assert github_command("warning", "m", file="a.py", line=None, title="t") == (
        "::warning file=a.py,title=t::m"
    )
    assert github_command("notice", "only a message") == "::notice::only a message"
    assert github_command("error", "x", file="a,b.py", line=3) == "::error file=a%2Cb.py,line=3::x"


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_color_follows_the_terminal_and_no_color(monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    assert use_color(_Tty(), "auto") is True
    assert use_color(io.StringIO(), "auto") is False
    assert use_color(io.StringIO(), "always") is True
    assert use_color(_Tty(), "never") is False
    monkeypatch.setenv("NO_COLOR", "1")
    assert use_color(_Tty(), "auto") is False


def test_ansi_theme_wraps_known_colours_only():
    theme = AnsiTheme()
    assert theme.fg("error", "x") == "\x1b[31mx\x1b[0m"
    assert theme.fg("chartreuse", "x") == "x"
    assert theme.bold("x") == "\x1b[1mx\x1b[0m"


def test_plain_progress_prints_every_update_line():
    stream = io.StringIO()
    progress = Progress(stream, live=False)
    progress.update("step 1\nstep 1 detail")
    progress.tick(0.5)  # silent when not live
    progress.update("")
    assert stream.getvalue() == "... step 1\n... step 1 detail\n... \n"


@pytest.mark.parametrize("encoding", ["utf-8", "ascii"])
def test_live_progress_redraws_one_line_in_place(encoding):
    stream = io.TextIOWrapper(io.BytesIO(), encoding=encoding, write_through=True)
    progress = Progress(stream, live=True)
    progress.update("first\nlast line")
    progress.tick(1.25)
    progress.message("a note")
    progress.clear()
    stream.seek(0)
    text = stream.buffer.getvalue().decode(encoding)
    assert text.count("\r\x1b[2K") == 3  # two draws, one clear before the note
    assert "1.2s last line" in text or "1.3s last line" in text
    assert "a note\n" in text
    assert "first" not in text


# -- L4 / L5: hostile text ---------------------------------------------------------------------


def test_progress_escapes_control_characters_in_updates():
    stream = io.StringIO()
    progress = Progress(stream, live=False)
    progress.update("\x1b]52;c;cGF5bG9hZA==\x07done\r\nnext\x1b[2J")
    assert stream.getvalue() == "... \\x1b]52;c;cGF5bG9hZA==\\x07done\n... next\\x1b[2J\n"


def test_the_live_progress_line_escapes_control_characters():
    stream = io.StringIO()
    progress = Progress(stream, live=True)
    progress.update("first\n\x1b]0;title\x07")
    drawn = stream.getvalue()
    assert "\\x1b]0;title\\x07" in drawn
    assert "\x07" not in drawn
    assert drawn.count("\x1b") == 1  # only the progress line's own erase-line code


def test_json_text_escapes_lone_surrogates_and_keeps_other_text():
    text = to_json_text({"a": "x\ud800y", "b": "é😀", "c": "\x1b"})
    text.encode("utf-8")  # writable to any UTF-8 stream
    assert "\\ud800" in text
    assert "é😀" in text
    assert json.loads(text) == {"a": "x\ud800y", "b": "é😀", "c": "\x1b"}


def test_without_surrogates_leaves_ansi_codes_alone():
    assert without_surrogates("\x1b[31mred\x1b[0m \udc80") == "\x1b[31mred\x1b[0m \\udc80"


_ODD_NAME = "nl\n::error file=x::INJECTED.py"


@pytest.fixture
def odd_pack(tmp_path):
    pack = tmp_path / "pack"
    pack.mkdir()
    (pack / _ODD_NAME).write_text("raise RuntimeError('broken\\r\\n::warning::also injected')\n")
    return pack


def test_validate_text_escapes_file_names_and_messages(cli, odd_pack):
    result = cli("validate", str(odd_pack))
    assert result.code == 1
    assert not any(line.startswith("::") for line in result.out.splitlines())
    assert "nl\\n::error file=x::INJECTED.py" in result.out


def test_validate_github_format_keeps_its_own_escaping(cli, odd_pack):
    result = cli("validate", "--format", "github", str(odd_pack))
    assert result.code == 1
    lines = result.out.splitlines()
    commands = [line for line in lines if line.startswith("::")]
    assert len(commands) == 1  # the one finding: nothing injected a second command
    assert commands[0].startswith("::error file=")
    assert "nl%0A%3A%3Aerror file=x%3A%3AINJECTED.py" in commands[0]
