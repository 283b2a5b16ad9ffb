"""The ``customtools`` command (also ``python -m customtools``).

Subcommands: ``list``, ``validate``, ``contract``, ``run``, ``schema``, ``types``, ``init``,
``trust``, ``serve``; the reference is ``docs/cli.md``. Exit status: 0 ok, 1 findings
(``validate`` problems, breaking ``contract`` changes, load errors in ``list``, an error result
from ``run``), 2 usage or load error, 130 interrupted.

Tests and embedding code call :func:`run`; the console script calls :func:`main`. The report
goes to stdout; diagnostics and progress go to stderr. Each subcommand lives in a private
module imported only when it runs, so ``customtools --help`` stays quick.
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
from collections.abc import Sequence as _Sequence

from customtools.cli._common import EXIT_USAGE as _EXIT_USAGE
from customtools.cli._common import UsageError as _UsageError

__all__ = ["main", "run"]

_COMMANDS = (
    "_list",
    "_validate",
    "_contract",
    "_run",
    "_schema",
    "_types",
    "_init",
    "_trust",
    "_serve",
)


def _parser() -> argparse.ArgumentParser:
    import importlib

    from customtools import __version__

    parser = argparse.ArgumentParser(
        prog="customtools",
        description="List, validate, run and scaffold model-callable custom tools.",
        epilog="Exit status: 0 ok, 1 findings, 2 usage or load error. See docs/cli.md.",
    )
    parser.add_argument("--version", action="version", version=f"customtools {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in _COMMANDS:
        importlib.import_module(f"customtools.cli.{name}").add_parser(subparsers)
    return parser


def run(argv: _Sequence[str] | None = None) -> int:
    """Run the command with ``argv`` (default: ``sys.argv[1:]``) and return the exit status.

    Never raises ``SystemExit``: usage errors return 2 (with the message on stderr),
    ``--help`` and ``--version`` return 0, and Ctrl-C outside a running tool returns 130.
    """
    parser = _parser()
    try:
        args = parser.parse_args(list(argv) if argv is not None else None)
    except SystemExit as exc:  # argparse exits on --help, --version and usage errors
        return exc.code if isinstance(exc.code, int) else _EXIT_USAGE
    try:
        status: int = args.handler(args)
    except _UsageError as exc:
        print(f"customtools {args.command}: {exc}", file=sys.stderr)
        return _EXIT_USAGE
    except KeyboardInterrupt:
        print(f"customtools {args.command}: interrupted", file=sys.stderr)
        return 130
    return status


def main() -> None:
    """Entry point of the ``customtools`` console script."""
    status = run()
    # A sync tool abandoned by a cancelled `run` keeps its worker thread until it returns;
    # the command must not wait for it at interpreter exit.
    if any(
        thread.is_alive() and not thread.daemon and thread is not threading.main_thread()
        for thread in threading.enumerate()
    ):
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status)
    sys.exit(status)
