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
import hashlib
import importlib
import importlib.util
import inspect
import itertools
import os
import re
import sys
import traceback
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from types import ModuleType
from typing import Any

import anyio

from customtools._errors import ToolDefinitionError
from customtools._loading._records import Candidate, Diagnostic, LoadError
from customtools._tool import CustomTool

__all__ = [
    "MODULES_PACKAGE",
    "ImportOutcome",
    "load_candidate",
    "module_level_tools",
    "module_name_for",
    "new_generation",
]

MODULES_PACKAGE = "customtools._tool_modules"
"""The synthetic package every tool file is imported under."""

_generations = itertools.count(1)
_SLUG_RE = re.compile(r"\W")
_TOOL_FIELDS = frozenset(f.name for f in fields(CustomTool) if f.init)
_TRACEBACK_FRAMES = 8
_CAUSE_CHARS = 300


def new_generation() -> int:
    """A number unique to one load in this process (part of every module name it imports)."""
    return next(_generations)


def _stem(candidate: Candidate) -> str:
    if candidate.kind == "entry_point":
        value = candidate.entry_point or candidate.path
        return value.partition(":")[0].rpartition(".")[2]
    name = os.path.basename(candidate.path.rstrip("/\\"))
    return name if candidate.kind == "package" else os.path.splitext(name)[0]


def module_name_for(candidate: Candidate, generation: int, *, stem: str | None = None) -> str:
    """The private module name ``candidate`` is imported under in load ``generation``."""
    slug = _SLUG_RE.sub("_", _stem(candidate) if stem is None else stem) or "tool"
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
    text = str(exc).strip()
    name = type(exc).__name__
    if isinstance(exc, SystemExit):
        return f"SystemExit (sys.exit({exc.code!r})) was raised; tool code must not exit the host"
    if isinstance(exc, SyntaxError) and exc.lineno is not None:
        return f"SyntaxError: {exc.msg} (line {exc.lineno})"
    if not text:
        return f"{name} with no message"
    first = text.splitlines()[0]
    if len(first) > _CAUSE_CHARS:
        first = first[: _CAUSE_CHARS - 3] + "..."
    return f"{name}: {first}"


def traceback_summary(exc: BaseException) -> str:
    """The last few frames of ``exc`` that belong to tool code, plus the exception line."""
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
    tail = traceback.format_exception_only(type(exc), exc)
    return "".join(["Traceback (most recent call last):\n", *head, *body, *tail]).rstrip()


def _classify_import(exc: BaseException, module_name: str) -> str:
    if isinstance(exc, SyntaxError):
        return "syntax-error"
    if isinstance(exc, ModuleNotFoundError) and exc.name and not exc.name.startswith(module_name):
        return "missing-dependency"
    if isinstance(exc, SystemExit):
        return "module-exit"
    return "import-error"


# -- the guard ----------------------------------------------------------------------------------


class _StateGuard:
    """Snapshots process state a tool module must not change, and restores it."""

    __slots__ = ("_argv", "_cwd", "_path", "_stderr", "_stdin", "_stdout")

    def __init__(self) -> None:
        self._cwd = _getcwd()
        self._path = list(sys.path)
        self._argv = list(sys.argv)
        self._stdin, self._stdout, self._stderr = sys.stdin, sys.stdout, sys.stderr

    def restore(self) -> list[str]:
        """Undo changes; return one phrase per thing that had changed."""
        changed: list[str] = []
        cwd = _getcwd()
        if cwd != self._cwd and self._cwd is not None:
            with contextlib.suppress(OSError):  # the old directory vanished: stay put
                os.chdir(self._cwd)
            changed.append(f"the working directory (to {cwd!r}; pass cwd= to api.exec instead)")
        if sys.path != self._path:
            sys.path[:] = self._path
            changed.append("sys.path (use relative imports in a package tool instead)")
        if sys.argv != self._argv:
            sys.argv[:] = self._argv
            changed.append("sys.argv")
        streams = (("stdin", self._stdin), ("stdout", self._stdout), ("stderr", self._stderr))
        for name, original in streams:
            if getattr(sys, name) is not original:
                setattr(sys, name, original)
                changed.append(f"sys.{name}")
        return changed


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
    tools: list[CustomTool] = field(default_factory=list)
    errors: list[LoadError] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)


def _error(
    candidate: Candidate,
    message: str,
    code: str,
    *,
    exc: BaseException | None = None,
    tool_name: str | None = None,
) -> LoadError:
    return LoadError(
        path=candidate.path,
        error=message,
        source=candidate.source,
        resolved_path=candidate.resolved_path,
        code=code,
        tool_name=tool_name,
        traceback=traceback_summary(exc) if exc is not None else None,
    )


def _drop_modules(module_name: str) -> None:
    sys.modules.pop(module_name, None)
    prefix = module_name + "."
    for name in [n for n in sys.modules if n.startswith(prefix)]:
        sys.modules.pop(name, None)


def _exec_file(candidate: Candidate, module_name: str) -> ModuleType:
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


def _find_factory(candidate: Candidate, module_name: str, out: ImportOutcome) -> Any:
    """Import ``candidate`` and return its factory, or record why there is none."""
    guard = _StateGuard()
    try:
        if candidate.kind == "entry_point":
            target = _import_entry_point(candidate.entry_point or candidate.path)
        else:
            _ensure_modules_package()
            target = _exec_file(candidate, module_name)
    except (Exception, SystemExit) as exc:
        if candidate.kind != "entry_point":
            _drop_modules(module_name)
        note = _restored_note(guard.restore())
        code = _classify_import(exc, module_name)
        out.errors.append(
            _error(candidate, f"import failed: {_one_line(exc)}{note}", code, exc=exc)
        )
        return None
    except BaseException:  # KeyboardInterrupt, cancellation: clean up and let it through
        if candidate.kind != "entry_point":
            _drop_modules(module_name)
        guard.restore()
        raise
    changed = guard.restore()
    if changed:
        if candidate.kind != "entry_point":
            _drop_modules(module_name)
        message = "importing the module changed " + ", ".join(changed) + "; it was restored"
        out.errors.append(_error(candidate, message, "changed-process-state"))
        return None
    if candidate.kind == "entry_point" and not isinstance(target, ModuleType):
        factory = target
    else:
        factory = getattr(target, "factory", None)
        if factory is None:
            factory = module_level_tools(target)
        if factory is None:
            out.errors.append(
                _error(
                    candidate,
                    "the module defines no 'factory' and no tools; add `def factory(api):`"
                    " returning a CustomTool or a list of them, or decorate functions with"
                    " @customtools.tool",
                    "no-factory",
                )
            )
            return None
    if not callable(factory):
        out.errors.append(
            _error(
                candidate,
                f"'factory' is not callable (it is {type(factory).__name__}); define it with"
                " `def factory(api):`",
                "factory-not-callable",
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


class _FactoryTimeoutError(Exception):
    pass


async def _call_factory(factory: Any, api: Any, limit: float | None) -> Any:
    result = factory(api)
    if not inspect.isawaitable(result):
        return result
    if limit is None:
        return await result
    value: Any = _FactoryTimeoutError
    with anyio.move_on_after(limit):
        value = await result
    if value is _FactoryTimeoutError:
        raise _FactoryTimeoutError
    return value


def _describe_type(value: Any) -> str:
    return "None" if value is None else f"a {type(value).__name__}"


def _discard(value: Any) -> None:
    """Close coroutines/generators we refuse, so they neither warn nor run later."""
    close = getattr(value, "close", None)
    if (inspect.iscoroutine(value) or inspect.isgenerator(value)) and close is not None:
        close()


def _tool_from(value: Any) -> CustomTool:
    """Turn one returned element into a :class:`CustomTool` or raise ``ToolDefinitionError``."""
    if isinstance(value, CustomTool):
        return value
    if isinstance(value, Mapping):
        unknown = sorted(k for k in value if k not in _TOOL_FIELDS)
        missing = [k for k in ("name", "execute") if k not in value]
        label = repr(value["name"]) if isinstance(value.get("name"), str) else "mapping"
        if missing:
            raise ToolDefinitionError(
                f"tool {label}: missing field(s) {', '.join(map(repr, missing))}"
            )
        if unknown:
            raise ToolDefinitionError(
                f"tool {label}: unknown field(s) {', '.join(map(repr, unknown))};"
                " use CustomTool's field names (snake_case)"
            )
        return CustomTool(**value)
    _discard(value)
    raise ToolDefinitionError(
        f"expected a CustomTool or a mapping of its fields, got {_describe_type(value)}"
    )


async def load_candidate(
    candidate: Candidate, module_name: str, api: Any, *, load_timeout: float | None
) -> ImportOutcome:
    """Import ``candidate``, call its factory with ``api`` and check what it returned.

    Never raises for anything the tool does, except ``KeyboardInterrupt`` and cancellation.
    """
    out = ImportOutcome(module_name=module_name if candidate.kind != "entry_point" else None)
    factory = _find_factory(candidate, module_name, out)
    if factory is None:
        out.module_name = None
        return out
    guard = _StateGuard()
    try:
        value = await _call_factory(factory, api, load_timeout)
    except _FactoryTimeoutError:
        guard.restore()
        out.errors.append(
            _error(
                candidate,
                f"the factory did not finish within the load timeout of {load_timeout:g} s;"
                " make it return sooner or raise load_timeout",
                "timeout",
            )
        )
        return out
    except (Exception, SystemExit) as exc:
        note = _restored_note(guard.restore())
        out.errors.append(
            _error(
                candidate,
                f"the factory raised {_one_line(exc)}{note}",
                "factory-exit" if isinstance(exc, SystemExit) else "factory-error",
                exc=exc,
            )
        )
        return out
    except BaseException:
        guard.restore()
        raise
    changed = guard.restore()
    if changed:
        _discard(value)
        message = "the factory changed " + ", ".join(changed) + "; it was restored"
        out.errors.append(_error(candidate, message, "changed-process-state"))
        return out
    _collect(candidate, value, out)
    return out


def _collect(candidate: Candidate, value: Any, out: ImportOutcome) -> None:
    if isinstance(value, (list, tuple)):
        if not value:
            out.diagnostics.append(
                Diagnostic(
                    code="no-tools",
                    message=f"{candidate.path}: the factory returned an empty list",
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
            "invalid-return",
        )
    )


def _add_tool(candidate: Candidate, element: Any, out: ImportOutcome, *, index: int | None) -> None:
    try:
        out.tools.append(_tool_from(element))
    except ToolDefinitionError as exc:
        where = "an invalid tool" if index is None else f"an invalid tool at index {index}"
        name = getattr(element, "name", None)
        if isinstance(element, Mapping):
            name = element.get("name")
        out.errors.append(
            _error(
                candidate,
                f"the factory returned {where}: {exc}",
                "invalid-tool",
                tool_name=name if isinstance(name, str) else None,
            )
        )
