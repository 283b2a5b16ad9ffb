"""Importing one tool module and calling its factory, with every failure turned into data.

Module names
    Each file or package is imported as ``customtools._tool_modules.<stem>_<hash>_<generation>``:
    ``hash`` is derived from the real path (so two plugins' ``run.py`` never collide) and
    ``generation`` grows with every load (so a second load imports edited files afresh instead of
    reusing ``sys.modules``). Tool directories are never put on ``sys.path``: a ``json.py`` in a
    tools directory shadows nothing. A package tool is imported with its directory as its
    ``__path__``, so its relative imports (``from . import helpers``) work. Entry points are
    ordinary installed modules and are imported under their own names.

Containment
    The module body and the factory run under a guard that catches ``Exception`` and
    ``SystemExit`` (``sys.exit()`` in a tool must not end the host). ``KeyboardInterrupt`` and
    cancellation are let through: a real Ctrl-C during a load must still stop the host, and a
    module cannot be told apart from the user. The guard also snapshots the working directory,
    ``sys.path``, ``sys.argv`` and the standard streams; a module or factory that changes one of
    them gets it restored and becomes a load error. A failed import leaves nothing behind in
    ``sys.modules``. An awaitable factory is bounded by the load timeout; a *synchronous*
    module body or factory that never returns cannot be interrupted in-process (validate
    untrusted packs with ``customtools validate`` in a separate process).
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import importlib
import importlib.util
import inspect
import itertools
import logging
import operator
import os
import re
import signal
import sys
import threading
import traceback
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field, fields
from types import ModuleType
from typing import Any

import anyio

from customtools._error_results import LoadCode
from customtools._errors import ToolDefinitionError
from customtools._format import describe_exception, escape_control, safe_repr, safe_str
from customtools._loading._paths import display_path
from customtools._loading._records import Candidate, Diagnostic, LoadError
from customtools._observe import STEP_FACTORY, STEP_IMPORT, LoadStep, load_step
from customtools._tool import CustomTool

__all__ = [
    "MODULES_PACKAGE",
    "ImportOutcome",
    "StdFds",
    "load_candidate",
    "module_level_tools",
    "module_name_for",
    "new_generation",
    "release_modules",
]

MODULES_PACKAGE = "customtools._tool_modules"
"""The synthetic package every tool file is imported under."""

_generations = itertools.count(1)
_SLUG_RE = re.compile(r"\W")
_TOOL_FIELDS = frozenset(f.name for f in fields(CustomTool) if f.init)
_TRACEBACK_FRAMES = 8
_CAUSE_CHARS = 300
_log = logging.getLogger("customtools.loading")


def new_generation() -> int:
    """A number unique to one load in this process (part of every module name it imports)."""
    return next(_generations)


def _stem(candidate: Candidate) -> str:
    if candidate.kind == "entry_point":
        value = candidate.entry_point or candidate.path
        return value.partition(":")[0].rpartition(".")[2]
    name = os.path.basename(candidate.path.rstrip("/\\"))
    if candidate.kind == "package" or not name.endswith(".py") or name[0] == ".":
        return name if candidate.kind == "package" else os.path.splitext(name)[0]
    return name[:-3]  # splitext's answer, without its generic code (once per module)


def module_name_for(candidate: Candidate, generation: int, *, stem: str | None = None) -> str:
    """The private module name ``candidate`` is imported under in load ``generation``."""
    slug = _stem(candidate) if stem is None else stem
    if not (slug.isascii() and slug.isidentifier()):  # else nothing to replace (most names)
        slug = _SLUG_RE.sub("_", slug) or "tool"
        if slug[0].isdigit():
            slug = f"m{slug}"
    digest = hashlib.sha1(  # noqa: S324 - a name, not security
        candidate.resolved_path.encode("utf-8", "surrogateescape")
    ).hexdigest()[:10]
    return f"{MODULES_PACKAGE}.{slug}_{digest}_{generation}"


def logger_stem(candidate: Candidate) -> str:
    """The stem used in the module's logger name (``customtools.tools.<stem>``)."""
    return _stem(candidate)


def _ensure_modules_package() -> None:
    if MODULES_PACKAGE not in sys.modules:
        package = ModuleType(MODULES_PACKAGE, "Tool modules loaded by customtools (synthetic).")
        package.__path__ = []
        sys.modules[MODULES_PACKAGE] = package


# -- failure records ----------------------------------------------------------------------------


def _one_line(exc: BaseException) -> str:
    """One printable line for an exception raised by tool code (never raises)."""
    try:
        if isinstance(exc, SystemExit):
            code = escape_control(safe_repr(exc.code))[:_CAUSE_CHARS]
            return f"SystemExit (sys.exit({code})) was raised; tool code must not exit the host"
        if (
            isinstance(exc, SyntaxError)
            and type(exc) in (SyntaxError, IndentationError, TabError)
            and isinstance(exc.lineno, int)
            and isinstance(exc.msg, str)
        ):
            return f"SyntaxError: {escape_control(exc.msg)[:_CAUSE_CHARS]} (line {exc.lineno})"
    except Exception:  # a subclass whose attributes raise
        pass
    return describe_exception(exc, limit=_CAUSE_CHARS)


def traceback_summary(exc: BaseException) -> str:
    """The last few frames of ``exc`` that belong to tool code, plus the exception line.

    Never raises: a traceback that cannot be formatted gives a one-line stand-in.
    """
    try:
        frames = [
            frame
            for frame in traceback.extract_tb(exc.__traceback__)
            if not frame.filename.startswith("<frozen importlib")
            and f"{os.sep}customtools{os.sep}_loading{os.sep}" not in frame.filename
        ]
        if len(frames) > _TRACEBACK_FRAMES:
            skipped = len(frames) - _TRACEBACK_FRAMES
            frames = frames[-_TRACEBACK_FRAMES:]
            head = [f"  ... {skipped} earlier frame(s) omitted\n"]
        else:
            head = []
        body = traceback.StackSummary.from_list(frames).format()
        if type(exc) in (SyntaxError, IndentationError, TabError):
            tail = traceback.format_exception_only(type(exc), exc)  # keeps the caret display
        else:
            tail = [_one_line(exc) + "\n"]
        text = "".join(["Traceback (most recent call last):\n", *head, *body, *tail]).rstrip()
        return "\n".join(escape_control(line) for line in text.split("\n"))
    except Exception:
        return f"(the traceback could not be formatted) {_one_line(exc)}"


def _classify_import(exc: BaseException, module_name: str) -> str:
    if isinstance(exc, SyntaxError):
        return LoadCode.SYNTAX_ERROR
    if (
        isinstance(exc, ModuleNotFoundError)
        and isinstance(exc.name, str)
        and exc.name
        and not exc.name.startswith(module_name)
    ):
        return LoadCode.MISSING_DEPENDENCY
    if isinstance(exc, SystemExit):
        return LoadCode.MODULE_EXIT
    return LoadCode.IMPORT_ERROR


# -- the guard ----------------------------------------------------------------------------------


_STD_FDS = ((0, "stdin"), (1, "stdout"), (2, "stderr"))
_POOL_THREADS = ("AnyIO worker thread", "Trio thread", "asyncio_", "customtools-")
"""Name prefixes of threads started by thread pools and by customtools itself (not reported)."""


def _fd_identity(fd: int) -> tuple[int, int] | None:
    try:
        st = os.fstat(fd)
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


class StdFds:
    """File descriptors 0, 1 and 2 as they were, with duplicates to put them back from, and
    the rest of the process state (:meth:`state`).

    A loader takes one for a whole load and hands it to every candidate; :meth:`close` it
    when the load is done.
    """

    __slots__ = ("_entries", "_fds", "_identities", "_state", "_threads")

    def __init__(self) -> None:
        self._state: _StateGuard | None = None
        self._threads: tuple[int, set[int]] | None = None
        entries = []
        for fd, name in _STD_FDS:
            identity = _fd_identity(fd)
            saved = None
            if identity is not None:
                with contextlib.suppress(OSError):
                    saved = os.dup(fd)
            entries.append((fd, name, identity, saved))
        self._entries = entries
        self._fds = [fd for fd, _name, identity, _saved in entries if identity is not None]
        self._identities = [entry[2] for entry in entries if entry[2] is not None]

    def restore(self) -> list[str]:
        """Put back every descriptor that now names another file; return their names."""
        try:  # the common case, all unchanged, in one pass
            if [(st.st_dev, st.st_ino) for st in map(os.fstat, self._fds)] == self._identities:
                return []
        except OSError:
            pass
        changed = []
        for fd, name, identity, saved in self._entries:
            if identity is not None and _fd_identity(fd) != identity:
                if saved is not None:
                    with contextlib.suppress(OSError):
                        os.dup2(saved, fd)
                changed.append(f"file descriptor {fd} ({name})")
        return changed

    def state(self) -> _StateGuard:
        """The snapshot of the process state a candidate is checked against: taken once per
        load (every restore puts the state back as it was, so the next candidate starts from
        the same state), and again after a candidate changed something, in case it could
        not all be undone (a deleted working directory)."""
        if self._state is None or self._state.dirty:
            self._state = _StateGuard()
        return self._state

    def threads(self) -> tuple[int, set[int]]:
        """``(count, idents)`` of the running threads: listed again only when the count
        moved since the last candidate."""
        count = threading.active_count()
        if self._threads is None or self._threads[0] != count:
            self._threads = (count, _thread_ids())
        return self._threads

    def close(self) -> None:
        for _fd, _name, _identity, saved in self._entries:
            if saved is not None:
                with contextlib.suppress(OSError):
                    os.close(saved)
        self._entries = []


_GUARDED_SIGNALS: tuple[int, ...] = tuple(
    getattr(signal, name)
    for name in (
        "SIGINT",
        "SIGTERM",
        "SIGHUP",
        "SIGQUIT",
        "SIGPIPE",
        "SIGCHLD",
        "SIGALRM",
        "SIGUSR1",
        "SIGUSR2",
        "SIGWINCH",
        "SIGTSTP",
        "SIGCONT",
    )
    if hasattr(signal, name)
)


# The C function behind signal.getsignal: the wrapper converts each value to a Handlers enum,
# and for a Python handler that conversion fails by formatting a ValueError with the handler's
# repr (under asyncio, the running task's): 40 % of a load once. The raw table read is 0.1 us.
_getsignal: Any = getattr(getattr(signal, "_signal", None), "getsignal", signal.getsignal)


_sys_objects = operator.attrgetter("path", "argv", "stdin", "stdout", "stderr")


def _environ_snapshot() -> dict[Any, Any]:
    # os.environ keeps the encoded strings in ``_data``; copying and comparing that is ~30x
    # cheaper than decoding every variable, and only a difference needs decoding.
    data = getattr(os.environ, "_data", None)
    return dict(data) if isinstance(data, dict) else dict(os.environ)


class _StateGuard:
    """Snapshots process state a tool module must not change, and restores it.

    Covered: the working directory, ``sys.path``, ``sys.argv``, ``sys.stdin/stdout/stderr``
    ``os.environ`` and the Python signal handlers of the usual signals (``SIGINT``,
    ``SIGTERM``, ...); the file descriptors 0, 1 and 2 are checked once per candidate by
    :class:`StdFds` (system calls are the expensive part). Not covered, and not coverable
    cheaply in-process: monkeypatched modules, ``os.putenv``, other file descriptors, signal
    masks, threads that act later (see docs/security.md).
    """

    __slots__ = (
        "_argv", "_argv_list", "_cwd", "_environ_raw", "_handlers", "_objects", "_path",
        "_path_list", "dirty",
    )  # fmt: skip

    def __init__(self) -> None:
        self.dirty = False  # a restore found changes: take a fresh snapshot next time
        self._cwd = _getcwd()
        # The list objects themselves (a module may rebind sys.path: the host and importlib
        # must keep the one they hold) and their contents.
        self._objects = _sys_objects(sys)
        self._path_list, self._argv_list = self._objects[:2]
        self._path = list(sys.path)
        self._argv = list(sys.argv)
        self._environ_raw = _environ_snapshot()
        self._handlers = tuple(map(_getsignal, _GUARDED_SIGNALS))

    def restore(self) -> list[str]:
        """Undo changes; return one phrase per thing that had changed. The snapshot stays
        valid afterwards (a candidate's import and factory share one guard)."""
        data = getattr(os.environ, "_data", None)  # compared in place: no copy when unchanged
        if (
            # By identity: an object's own __eq__ (tool code) must not decide, or raise.
            all(map(operator.is_, _sys_objects(sys), self._objects))
            and sys.path == self._path
            and sys.argv == self._argv
            and (data if isinstance(data, dict) else _environ_snapshot()) == self._environ_raw
            and all(map(operator.is_, map(_getsignal, _GUARDED_SIGNALS), self._handlers))
            and (_getcwd() == self._cwd or self._cwd is None)
        ):
            return []  # the common case, in one pass
        return self._undo()

    def _undo(self) -> list[str]:
        changed: list[str] = []
        cwd = _getcwd()
        if cwd != self._cwd and self._cwd is not None:
            with contextlib.suppress(OSError):  # the old directory vanished: stay put
                os.chdir(self._cwd)
            changed.append(f"the working directory (to {cwd!r}; pass cwd= to api.exec instead)")
        if sys.path is not self._path_list or sys.path != self._path:
            sys.path = self._path_list
            sys.path[:] = self._path
            changed.append("sys.path (use relative imports in a package tool instead)")
        if sys.argv is not self._argv_list or sys.argv != self._argv:
            sys.argv = self._argv_list
            sys.argv[:] = self._argv
            changed.append("sys.argv")
        for name, original in zip(("stdin", "stdout", "stderr"), self._objects[2:], strict=True):
            if getattr(sys, name) is not original:
                setattr(sys, name, original)
                changed.append(f"sys.{name}")
        if _environ_snapshot() != self._environ_raw:
            environ = self._restore_environ()
            if environ:
                changed.append(f"os.environ ({environ}; pass env= to api.exec instead)")
        if not all(map(operator.is_, map(_getsignal, _GUARDED_SIGNALS), self._handlers)):
            changed.append(f"signal handlers ({self._restore_handlers()}; leave them to the host)")
        if changed:
            self.dirty = True
        return changed

    def _restore_handlers(self) -> str:
        """Put the signal handlers back; return the changed signals' names."""
        names = []
        for signum, before in zip(_GUARDED_SIGNALS, self._handlers, strict=True):
            if _getsignal(signum) is not before and before is not None:
                names.append(signal.Signals(signum).name)
                # Outside the main thread Python cannot set handlers: reported all the same.
                with contextlib.suppress(ValueError, OSError, TypeError):
                    signal.signal(signum, before)
        return ", ".join(names)

    def _restore_environ(self) -> str:
        """Put ``os.environ`` back; return the changed names for a message ("" if none)."""
        decode = getattr(os.environ, "decodekey", None), getattr(os.environ, "decodevalue", None)
        if decode[0] is not None and decode[1] is not None:
            before = {decode[0](k): decode[1](v) for k, v in self._environ_raw.items()}
        else:  # pragma: no cover - an os.environ without the encoded mapping
            before = dict(self._environ_raw)
        now = dict(os.environ)
        names = sorted({k for k in now.keys() | before.keys() if now.get(k) != before.get(k)})
        for name in names:
            with contextlib.suppress(Exception):
                if name in before:
                    os.environ[name] = before[name]
                else:
                    del os.environ[name]
        shown = ", ".join(escape_control(name)[:40] for name in names[:5])
        more = f" and {len(names) - 5} more" if len(names) > 5 else ""
        return f"{shown}{more}"


def _thread_ids() -> set[int]:
    return {t.ident for t in threading.enumerate() if t.ident is not None}


def _new_threads(before: set[int]) -> list[str]:
    """Names of threads alive now that were not before (thread pools and ours left out)."""
    return [
        escape_control(thread.name)[:60]
        for thread in threading.enumerate()
        if thread.ident not in before
        and thread.is_alive()
        and not thread.name.startswith(_POOL_THREADS)
    ]


def _getcwd() -> str | None:
    try:
        return os.getcwd()
    except OSError:  # the cwd was deleted under us
        return None


# -- outcome ------------------------------------------------------------------------------------


@dataclass(slots=True, kw_only=True)
class ImportOutcome:
    """What importing one candidate produced (internal; the loader merges these)."""

    module_name: str | None = None
    tools: list[Any] = field(default_factory=list)
    """The tools (a lazy load gives what builds each: ``_lazy.LazyTool``)."""
    errors: list[LoadError] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    cleanup: list[Callable[[], Awaitable[None]]] = field(default_factory=list)
    """Stops what serves the tools elsewhere (isolation workers) once a reload replaced them."""
    lazy: bool = False
    """The tools come from the manifest cache; the module is imported on a first call."""


def _error(
    candidate: Candidate,
    message: str,
    code: str,
    *,
    exc: BaseException | None = None,
    tool_name: str | None = None,
) -> LoadError:
    summary = traceback_summary(exc) if exc is not None else None
    return LoadError.of(candidate, message, code, tool_name=tool_name, traceback=summary)


def release_modules(module_name: str) -> None:
    """Remove a private tool module and its submodules from ``sys.modules``."""
    sys.modules.pop(module_name, None)
    prefix = module_name + "."
    for name in [n for n in sys.modules if n.startswith(prefix)]:
        sys.modules.pop(name, None)


def _exec_file(candidate: Candidate, module_name: str) -> ModuleType:
    if candidate.source.level == "project":
        # Compiled from the bytes the trust gate hashed, never from __pycache__ (_reviewed).
        from customtools._loading._reviewed import reviewed_spec

        if candidate.kind == "package":
            directory = candidate.resolved_path
            reviewed = reviewed_spec(
                module_name, os.path.join(directory, "__init__.py"), package_dir=directory
            )
        else:
            reviewed = reviewed_spec(module_name, candidate.resolved_path)
        module = importlib.util.module_from_spec(reviewed)
        sys.modules[module_name] = module
        reviewed.loader.exec_module(module)  # type: ignore[union-attr]
        return module
    if candidate.kind == "package":
        directory = candidate.resolved_path
        spec = importlib.util.spec_from_file_location(
            module_name,
            os.path.join(directory, "__init__.py"),
            submodule_search_locations=[directory],
        )
    else:
        spec = importlib.util.spec_from_file_location(module_name, candidate.resolved_path)
    if spec is None or spec.loader is None:
        raise ImportError(f"Python cannot import {candidate.resolved_path!r} as a module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return module


def _import_entry_point(value: str) -> Any:
    module_part, _, attr_part = value.partition(":")
    attr_part = attr_part.split("[", 1)[0].strip()  # drop "[extras]"
    module = importlib.import_module(module_part.strip())
    if not attr_part:
        return module
    target: Any = module
    for attr in attr_part.split("."):
        target = getattr(target, attr)
    return target


def _restored_note(changed: list[str]) -> str:
    return "; it also changed " + ", ".join(changed) + " (restored)" if changed else ""


def _is_interrupt(exc: BaseException, *, cancellation: bool) -> bool:
    """Whether ``exc`` is the user's Ctrl-C (or, with ``cancellation``, the caller's cancel).

    Synchronous tool code cannot receive a cancellation, so there a cancellation exception is
    the tool's own doing; only ``KeyboardInterrupt`` is let through.
    """
    kinds: tuple[type[BaseException], ...] = (KeyboardInterrupt,)
    if cancellation:
        kinds += (anyio.get_cancelled_exc_class(),)
    if isinstance(exc, kinds):
        return True
    if not type(exc).__name__.endswith("ExceptionGroup"):
        return False
    try:  # a BaseExceptionGroup (3.11+ or the backport), or tool code faking one
        inner = exc.exceptions  # type: ignore[attr-defined]
    except Exception:
        return False
    if isinstance(inner, tuple):
        return any(
            isinstance(item, BaseException) and _is_interrupt(item, cancellation=cancellation)
            for item in inner
        )
    return False


def _find_factory(
    candidate: Candidate, module_name: str, out: ImportOutcome, guard: _StateGuard
) -> Any:
    """Import ``candidate`` and return its factory, or record why there is none."""
    try:
        if candidate.kind == "entry_point":
            target = _import_entry_point(candidate.entry_point or candidate.path)
        else:
            _ensure_modules_package()
            target = _exec_file(candidate, module_name)
    except BaseException as exc:
        if candidate.kind != "entry_point":
            release_modules(module_name)
        changed = guard.restore()
        if _is_interrupt(exc, cancellation=False):
            raise  # Ctrl-C during a load: the host must still stop
        code = _classify_import(exc, module_name)
        message = f"import failed: {_one_line(exc)}{_restored_note(changed)}"
        out.errors.append(_error(candidate, message, code, exc=exc))
        return None
    changed = guard.restore()
    if changed:
        if candidate.kind != "entry_point":
            release_modules(module_name)
        message = "importing the module changed " + ", ".join(changed) + "; it was restored"
        out.errors.append(_error(candidate, message, LoadCode.CHANGED_PROCESS_STATE))
        return None
    if candidate.kind == "entry_point" and not isinstance(target, ModuleType):
        factory = target
    else:
        try:
            factory = getattr(target, "factory", None)
            if factory is None:
                factory = module_level_tools(target)
        except Exception as exc:  # a module-level __getattr__ or a tool attribute that raises
            message = f"reading the module's 'factory' raised {_one_line(exc)}"
            out.errors.append(_error(candidate, message, LoadCode.IMPORT_ERROR, exc=exc))
            return None
        if factory is None:
            out.errors.append(
                _error(
                    candidate,
                    "the module defines no 'factory' and no tools; add `def factory(api):`"
                    " returning a CustomTool or a list of them, or decorate functions with"
                    " @customtools.tool",
                    LoadCode.NO_FACTORY,
                )
            )
            return None
    if not callable(factory):
        out.errors.append(
            _error(
                candidate,
                f"'factory' is not callable (it is {type(factory).__name__}); define it with"
                " `def factory(api):`",
                LoadCode.FACTORY_NOT_CALLABLE,
            )
        )
        return None
    return factory


def module_level_tools(module: ModuleType) -> Any:
    """A stand-in factory for a module without one: the tools defined at its top level.

    A tool counts when it is a :class:`~customtools.CustomTool` bound to a module-level name
    and its function was written in this module (``@customtools.tool`` keeps the function as
    ``execute.__wrapped__``), so tools imported from elsewhere are not loaded twice. Returns
    ``None`` when there are none.
    """
    tools = [
        value
        for value in vars(module).values()
        if isinstance(value, CustomTool)
        and getattr(getattr(value.execute, "__wrapped__", value.execute), "__module__", None)
        == module.__name__
    ]
    if not tools:
        return None

    def factory(api: Any) -> list[CustomTool]:
        return tools

    return factory


_NOT_AWAITABLE = frozenset({CustomTool, list, tuple, dict})  # no inspect.isawaitable needed

LOAD_TIMEOUT_GRACE = 1.0
"""Seconds after the load timeout at which a factory still running is logged as a warning."""


class _FactoryTimeoutError(Exception):
    """The factory was still running at the load timeout (``late``: it ignored the cancel)."""

    def __init__(self, *, late: float | None) -> None:
        super().__init__()
        self.late = late


def _overrun_watchdog(path: str, limit: float) -> threading.Timer:
    """A timer that logs a warning if the factory is still running at limit + grace."""

    def warn() -> None:
        _log.warning(
            "the factory of %s is still running %g s after its load timeout of %g s: it "
            "ignores cancellation, and the load waits until it returns (load untrusted tool "
            "packs in a separate process)",
            escape_control(path),
            LOAD_TIMEOUT_GRACE,
            limit,
        )

    timer = threading.Timer(limit + LOAD_TIMEOUT_GRACE, warn)
    timer.name = "customtools-load-watchdog"
    timer.daemon = True
    timer.start()
    return timer


async def _call_factory(factory: Any, api: Any, limit: float | None, path: str) -> Any:
    """Call the factory; await an awaitable result for at most ``limit`` seconds.

    At ``limit`` the awaitable is cancelled. Whatever it does after that, returning a value
    (it swallowed the cancellation) or raising, is a :class:`_FactoryTimeoutError`: a late
    result is never a success.
    """
    result = factory(api)
    if type(result) in _NOT_AWAITABLE or not inspect.isawaitable(result):
        return result
    if limit is None:
        return await result
    deadline = anyio.current_time() + limit
    watchdog = _overrun_watchdog(path, limit)
    try:
        with anyio.move_on_after(limit) as scope:
            try:
                value = await result
            except BaseException as exc:
                if scope.cancel_called and not _is_interrupt(exc, cancellation=True):
                    raise _FactoryTimeoutError(late=anyio.current_time() - deadline) from exc
                raise
    finally:
        watchdog.cancel()
    if scope.cancelled_caught:
        raise _FactoryTimeoutError(late=None)
    if scope.cancel_called:
        _discard(value)
        raise _FactoryTimeoutError(late=anyio.current_time() - deadline)
    return value


def _describe_type(value: Any) -> str:
    return "None" if value is None else f"a {type(value).__name__}"


def _discard(value: Any) -> None:
    """Close coroutines/generators we refuse, so they neither warn nor run later."""
    if inspect.iscoroutine(value) or inspect.isgenerator(value):
        with contextlib.suppress(Exception):
            value.close()


def _tool_from(value: Any) -> CustomTool:
    """Turn one returned element into a :class:`CustomTool` or raise ``ToolDefinitionError``.

    Foreign code runs here (a mapping's ``__iter__`` and ``__getitem__``); what it raises
    propagates and the caller records it.
    """
    if isinstance(value, CustomTool):
        return value
    if isinstance(value, Mapping):
        fields = dict(value)
        unknown = sorted(str(k) for k in fields if k not in _TOOL_FIELDS)
        missing = [k for k in ("name", "execute") if k not in fields]
        name = fields.get("name")
        label = repr(name) if type(name) is str else "mapping"
        if missing:
            raise ToolDefinitionError(
                f"tool {label}: missing field(s) {', '.join(map(repr, missing))}"
            )
        if unknown:
            shown = ", ".join(escape_control(repr(k))[:60] for k in unknown[:10])
            raise ToolDefinitionError(
                f"tool {label}: unknown field(s) {shown}; use CustomTool's field names (snake_case)"
            )
        return CustomTool(**fields)
    _discard(value)
    raise ToolDefinitionError(
        f"expected a CustomTool or a mapping of its fields, got {_describe_type(value)}"
    )


async def load_candidate(
    candidate: Candidate,
    module_name: str,
    api: Any,
    *,
    load_timeout: float | None,
    std_fds: StdFds | None = None,
) -> ImportOutcome:
    """Import ``candidate``, call its factory with ``api`` and check what it returned.

    Never raises for anything the tool does, except ``KeyboardInterrupt`` and cancellation.
    ``std_fds`` is a snapshot of file descriptors 0-2 shared by a whole load (a loader of
    many modules takes it once: duplicating descriptors is the guard's costly part); without
    one, the candidate takes and closes its own.
    """
    out = ImportOutcome(module_name=module_name if candidate.kind != "entry_point" else None)
    fds = std_fds if std_fds is not None else StdFds()
    threads = fds.threads()
    # One snapshot for the import and the factory (and, through a shared StdFds, for the
    # whole load): each restore() puts the state back as it was.
    guard = fds.state()
    try:
        with load_step(STEP_IMPORT, {"customtools.module": module_name}) as step:
            factory = _find_factory(candidate, module_name, out, guard)
            _report_step(step, out)
        if factory is not None:
            with load_step(STEP_FACTORY) as step:
                await _run_factory(candidate, factory, api, load_timeout, out, guard)
                _report_step(step, out)
        else:
            out.module_name = None
        replaced = fds.restore()
    finally:
        if std_fds is None:
            fds.close()
    if replaced:
        _report_replaced_fds(candidate, replaced, out)
    # Counting is enough to see a thread start (two lock-held dict lengths, where listing
    # them costs ten times more); only a start hidden by another thread's end goes unseen.
    started = _new_threads(threads[1]) if threading.active_count() != threads[0] else []
    if started:
        out.diagnostics.append(
            Diagnostic(
                code=LoadCode.STARTED_THREADS,
                message=f"{display_path(candidate.path)} started {len(started)} thread(s) that "
                f"are still running ({', '.join(started[:5])}); the load guard cannot see what "
                "they do later (validate untrusted packs in a separate process)",
                path=candidate.path,
                source=candidate.source,
            )
        )
    return out


def _report_step(step: LoadStep, out: ImportOutcome) -> None:
    """Mark a load step failed with the candidate's first error (observation)."""
    if out.errors:
        error = out.errors[0]
        step.failed(error.code or LoadCode.LOAD_ERROR)


def _report_replaced_fds(candidate: Candidate, replaced: list[str], out: ImportOutcome) -> None:
    """Turn a replaced standard descriptor into the candidate's (one) error; drop its tools."""
    what = ", ".join(replaced)
    if out.errors:
        first = out.errors[0]
        note = f"; it also replaced {what} (restored)"
        out.errors[0] = dataclasses.replace(first, error=first.error + note)
        return
    out.tools.clear()
    message = f"importing the module or calling its factory replaced {what}; it was restored"
    out.errors.append(_error(candidate, message, LoadCode.CHANGED_PROCESS_STATE))


async def _run_factory(
    candidate: Candidate,
    factory: Any,
    api: Any,
    load_timeout: float | None,
    out: ImportOutcome,
    guard: _StateGuard,
) -> None:
    try:
        value = await _call_factory(factory, api, load_timeout, candidate.path)
    except _FactoryTimeoutError as timeout:
        note = _restored_note(guard.restore())
        message = (
            f"the factory did not finish within the load timeout of {load_timeout:g} s;"
            " make it return sooner or raise load_timeout"
        )
        if timeout.late is not None:
            message = (
                f"the factory did not finish within the load timeout of {load_timeout:g} s and"
                f" ignored the cancellation (it ended {max(timeout.late, 0.0):.1f} s later);"
                " what it returned or raised was discarded; let cancellation through"
                " (no bare except: or except BaseException:)"
            )
        out.errors.append(_error(candidate, message + note, LoadCode.TIMEOUT))
        return
    except BaseException as exc:
        changed = guard.restore()
        if _is_interrupt(exc, cancellation=True):
            raise
        out.errors.append(
            _error(
                candidate,
                f"the factory raised {_one_line(exc)}{_restored_note(changed)}",
                LoadCode.FACTORY_EXIT if isinstance(exc, SystemExit) else LoadCode.FACTORY_ERROR,
                exc=exc,
            )
        )
        return
    changed = guard.restore()
    if changed:
        _discard(value)
        message = "the factory changed " + ", ".join(changed) + "; it was restored"
        out.errors.append(_error(candidate, message, LoadCode.CHANGED_PROCESS_STATE))
        return
    try:
        _collect(candidate, value, out)
    except Exception as exc:  # a returned object whose type checks or iteration raise
        out.errors.append(
            _error(
                candidate,
                f"the factory returned a value that could not be read: {_one_line(exc)}",
                LoadCode.INVALID_RETURN,
                exc=exc,
            )
        )


def _collect(candidate: Candidate, value: Any, out: ImportOutcome) -> None:
    if isinstance(value, (list, tuple)):
        if not value:
            out.diagnostics.append(
                Diagnostic(
                    code=LoadCode.NO_TOOLS,
                    message=f"{display_path(candidate.path)}: the factory returned an empty list",
                    path=candidate.path,
                    source=candidate.source,
                )
            )
        for index, element in enumerate(value):
            _add_tool(candidate, element, out, index=index)
        return
    if isinstance(value, (CustomTool, Mapping)):
        _add_tool(candidate, value, out, index=None)
        return
    _discard(value)
    if inspect.isgenerator(value) or inspect.isasyncgen(value):
        hint = "a generator; return a list instead (generators are not consumed)"
    else:
        hint = _describe_type(value)
    out.errors.append(
        _error(
            candidate,
            f"the factory returned {hint}; return a CustomTool, a list of them,"
            " or an awaitable of either",
            LoadCode.INVALID_RETURN,
        )
    )


def _element_name(element: Any) -> str | None:
    try:
        name = element.get("name") if isinstance(element, Mapping) else element.name
    except Exception:
        return None
    return name if type(name) is str else None


def _add_tool(candidate: Candidate, element: Any, out: ImportOutcome, *, index: int | None) -> None:
    try:
        out.tools.append(_tool_from(element))
    except Exception as exc:
        where = "an invalid tool" if index is None else f"an invalid tool at index {index}"
        text = safe_str(exc) if type(exc) is ToolDefinitionError else None
        detail = escape_control(text) if text is not None else _one_line(exc)
        out.errors.append(
            _error(
                candidate,
                f"the factory returned {where}: {detail}",
                LoadCode.INVALID_TOOL,
                exc=None if type(exc) is ToolDefinitionError else exc,
                tool_name=_element_name(element),
            )
        )
