"""The package's import graph: layers point downward, no cycles, no private names borrowed.

Read from the source with :mod:`ast`, so type-only imports (under ``TYPE_CHECKING``) and
imports inside functions count like any other. The layers are those of ARCHITECTURE.md:

1. data, 2. execution, 3. loading, 4. supervision and host, 5. edges (CLI, testing, bridges).

A module may import from its own layer and the ones below. A new module must be given a
layer here, so that the decision is made once, in review.
"""

from __future__ import annotations

import ast
import functools
import pathlib
import re
from collections.abc import Iterator

import customtools

ROOT = pathlib.Path(customtools.__file__).parent

# Longest prefix wins.
LAYERS: dict[str, int] = {
    "customtools._errors": 1,
    "customtools._error_results": 1,  # the table of error-result kinds and codes
    "customtools._violations": 1,  # value objects (Violation, Coercion, limits)
    "customtools._format": 1,
    "customtools._jsonpointer": 1,
    "customtools._public": 1,
    "customtools._content": 1,
    "customtools._typebox": 1,
    "customtools._validation": 2,
    "customtools._abort": 2,
    "customtools._approval": 2,
    "customtools._tool": 2,
    "customtools._context": 2,
    "customtools._talkback": 2,  # ask the user, ask the model, log (the talk-back API)
    "customtools._session": 2,
    "customtools._adapter": 2,
    "customtools._containment": 2,  # which BaseExceptions of tool code are the caller's
    "customtools._runtime": 2,  # sync-tool threads and the driven async call
    "customtools._observe": 2,  # observer hooks of calls and loads (edges implement them)
    "customtools._kills": 2,  # the kills that outlive a cancelled call
    "customtools._exec": 2,
    "customtools._render": 2,
    "customtools._export": 2,
    "customtools._function": 2,
    "customtools._registry": 2,  # the one name -> tool map
    "customtools._policy": 2,  # the execution policy: caps, rates, budgets, retries, cache
    "customtools.policy": 2,
    "customtools._typeschema": 2,
    "customtools._typegen": 2,
    "customtools._docstrings": 1,
    "customtools._permissions": 1,  # declared permissions of a tool pack (value object)
    "customtools.validation": 2,
    "customtools.rendering": 2,
    "customtools.talkback": 2,
    "customtools.export": 2,
    "customtools._loading": 3,
    "customtools._rules": 3,
    "customtools.loading": 3,
    "customtools": 3,  # the root namespace re-exports layers 1-3
    "customtools.host": 4,
    "customtools.actions": 4,
    "customtools.cli": 5,
    "customtools.testing": 5,
    "customtools.mcp": 5,
    "customtools.integrations": 5,  # framework adapters; each imports its framework
    "customtools.telemetry": 5,  # OpenTelemetry, imported lazily
    "customtools._isolation": 4,  # process supervision: the pool, the audit, confinement
    "customtools.isolation": 4,
    "customtools.__main__": 5,
}

# Known exceptions still to be removed; an entry that no longer occurs fails the test too,
# so this list can only shrink.
ALLOWED_CYCLES: set[frozenset[str]] = set()
ALLOWED_PRIVATE: set[tuple[str, str]] = set()
ALLOWED_UPWARD: set[tuple[str, str]] = set()


def module_name(path: pathlib.Path) -> str:
    parts = ["customtools", *path.relative_to(ROOT).with_suffix("").parts]
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {module_name(path): path for path in sorted(ROOT.rglob("*.py"))}


def layer(module: str) -> int:
    for prefix in sorted(LAYERS, key=len, reverse=True):
        if module == prefix or module.startswith(prefix + "."):
            return LAYERS[prefix]
    raise AssertionError(f"{module} has no layer: add it to LAYERS in {__file__}")


def resolve(name: str) -> str:
    """The module ``name`` refers to: itself, or the nearest enclosing known module."""
    while name not in MODULES and "." in name:
        name = name.rsplit(".", 1)[0]
    return name


@functools.cache
def imports(module: str) -> tuple[tuple[str, str | None], ...]:
    """``(imported module, imported name or None)`` for every import statement in ``module``.

    Parsed once per process: the checks below all read the same graph.
    """
    return tuple(_imports(module))


def _imports(module: str) -> Iterator[tuple[str, str | None]]:
    path = MODULES[module]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("customtools"):
                    yield resolve(alias.name), None
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            if not base.startswith("customtools"):
                continue
            for alias in node.names:
                full = f"{base}.{alias.name}"
                if full in MODULES:  # `from customtools.host import _disk` imports a module
                    yield full, None
                else:
                    yield resolve(base), alias.name


def graph() -> dict[str, set[str]]:
    return {
        module: {target for target, _ in imports(module) if target != module} for module in MODULES
    }


def cycles(edges: dict[str, set[str]]) -> list[frozenset[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for succ in edges.get(node, ()):
            if succ not in index:
                visit(succ)
                low[node] = min(low[node], low[succ])
            elif succ in on_stack:
                low[node] = min(low[node], index[succ])
        if low[node] == index[node]:
            component = set()
            while True:
                item = stack.pop()
                on_stack.discard(item)
                component.add(item)
                if item == node:
                    break
            if len(component) > 1:
                found.append(frozenset(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def test_every_module_has_a_layer() -> None:
    for module in MODULES:
        layer(module)


def test_there_are_no_import_cycles() -> None:
    assert set(cycles(graph())) == ALLOWED_CYCLES


def test_no_module_imports_from_a_layer_above_it() -> None:
    upward = {
        (module, target)
        for module, targets in graph().items()
        for target in targets
        if layer(target) > layer(module)
    }
    assert upward == ALLOWED_UPWARD


def test_no_module_imports_another_modules_private_names() -> None:
    borrowed = {
        (module, f"{target}.{name}")
        for module in MODULES
        for target, name in imports(module)
        if name is not None
        and target != module
        and name.startswith("_")
        and not name.startswith("__")
    }
    assert borrowed == ALLOWED_PRIVATE


def test_the_checks_see_real_edges() -> None:
    edges = graph()
    assert "customtools._errors" in edges["customtools._adapter"]
    assert cycles({"a": {"b"}, "b": {"a"}, "c": {"a"}}) == [frozenset({"a", "b"})]


def from_own_package(module: str) -> list[str]:
    """``from <package> import ...`` statements in ``module`` naming its own package: they
    read the package's ``__init__``, which may still be importing ``module``."""
    path = MODULES[module]
    if path.name == "__init__.py":
        return []
    package = module.rsplit(".", 1)[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            if base == package:
                found.append(f"line {node.lineno}: from {base} import ...")
    return found


def test_no_module_imports_from_its_package_while_the_package_imports_it() -> None:
    # A module its package's __init__ imports must name sibling modules directly
    # (`import customtools.telemetry._names as n`), not through the half-built package.
    offenders = {
        f"{target}: {statement}"
        for package, path in MODULES.items()
        if path.name == "__init__.py"
        for target, _ in imports(package)
        if target.startswith(package + ".")
        for statement in from_own_package(target)
    }
    assert offenders == set()


def test_the_telemetry_observer_imports_first_in_a_fresh_interpreter() -> None:
    import subprocess
    import sys

    code = "import customtools.telemetry._otel as m; print(m.OpenTelemetryObserver.__name__)"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "OpenTelemetryObserver"


def test_the_design_page_puts_every_module_in_its_layer() -> None:
    """docs/design.md's layer table names each entry of LAYERS in the row of its layer."""
    text = (ROOT.parent / "docs" / "design.md").read_text(encoding="utf-8")
    rows = {int(m[1]): m[2] for m in re.finditer(r"^\| (\d)\. [^|]+\|(.+)$", text, re.MULTILINE)}
    for prefix, number in LAYERS.items():
        name = prefix.removeprefix("customtools").lstrip(".")
        if not name:
            continue  # the root namespace spans layers 1-3
        if name.startswith("_"):
            shown = (f"`{name}`", f"`{name}/`")
        elif (ROOT / name).is_dir():
            shown = (f"`{name}/_*`",)
        else:
            shown = (f"`{prefix}`",)
        assert any(item in rows[number] for item in shown), f"{shown[0]} in layer {number}"
