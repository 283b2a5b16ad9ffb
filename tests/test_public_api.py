"""The public surface: __all__ matches the real exports, and every export is documented."""

from __future__ import annotations

import importlib
import inspect
import subprocess
import sys
import types
import typing

import pytest

PUBLIC_MODULES = ["customtools", "customtools.host", "customtools.actions"]


@pytest.mark.parametrize("module_name", PUBLIC_MODULES)
def test_all_matches_the_public_attributes(module_name: str) -> None:
    module = importlib.import_module(module_name)
    exported = set(module.__all__)
    public = {
        name
        for name in dir(module)  # includes names the package loads lazily
        if name.isidentifier()  # pytest's assertion rewriting adds "@py_builtins"
        and not name.startswith("_")
        and not isinstance(getattr(module, name), types.ModuleType)
        and name not in {"annotations", "TYPE_CHECKING", "Any", "importlib"}
    }
    assert exported - {"__version__"} == public
    assert len(module.__all__) == len(exported), "duplicates in __all__"
    for name in module.__all__:
        getattr(module, name)  # every lazy name resolves


@pytest.mark.parametrize("module_name", PUBLIC_MODULES)
def test_every_exported_class_and_function_has_a_docstring(module_name: str) -> None:
    module = importlib.import_module(module_name)
    undocumented = [
        name
        for name in module.__all__
        if (inspect.isclass(obj := getattr(module, name)) or inspect.isfunction(obj))
        and typing.get_origin(obj) is None  # type aliases (a class on 3.10) document in source
        and not (obj.__doc__ or "").strip()
    ]
    assert undocumented == []


def test_import_does_not_load_heavy_dependencies() -> None:
    code = (
        "import sys, customtools\n"
        "heavy = [m for m in ('jsonschema', 'jsonschema_rs', 'yaml') if m in sys.modules]\n"
        "print(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_package_imports_no_asyncio_module_directly() -> None:
    import pathlib

    import customtools

    root = pathlib.Path(customtools.__file__).parent
    offenders = [
        str(path.relative_to(root))
        for path in root.rglob("*.py")
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.strip().startswith(("import asyncio", "from asyncio"))
    ]
    assert offenders == []
