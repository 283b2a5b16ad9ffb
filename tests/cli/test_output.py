"""Report helpers: GitHub workflow command escaping, colour choice, the progress line."""

from __future__ import annotations

import io

import pytest

from customtools.cli._output import (
    AnsiTheme,
    Progress,
    github_command,
    github_data,
    github_property,
    use_color,
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
