"""The public surface of customtools.actions: __all__, docstrings, the error tree."""

from __future__ import annotations

import inspect

import customtools.actions as actions
from customtools import _errors


def test_all_matches_the_public_names() -> None:
    # only identifiers: pytest's assertion rewriting may add "@py_builtins" to a module
    public = {name for name in vars(actions) if name.isidentifier() and not name.startswith("_")}
    public -= {"annotations"}  # from __future__
    assert set(actions.__all__) == public
    assert len(actions.__all__) == len(set(actions.__all__))
    assert list(actions.__all__) == sorted(actions.__all__, key=lambda n: (not n.isupper(), n))


def test_every_public_class_and_function_has_a_docstring() -> None:
    for name in actions.__all__:
        obj = getattr(actions, name)
        if inspect.isclass(obj) or inspect.isfunction(obj):
            assert inspect.getdoc(obj), name
            for attr, member in vars(obj).items() if inspect.isclass(obj) else ():
                if not attr.startswith("_") and inspect.isfunction(member):
                    assert inspect.getdoc(member), f"{name}.{attr}"


def test_errors_hang_off_the_library_tree() -> None:
    assert issubclass(actions.ActionError, _errors.CustomToolsError)
    assert issubclass(actions.ActionDefinitionError, ValueError)
    assert issubclass(actions.DisplayError, actions.ActionResultError)
    assert issubclass(actions.ActionTimeoutError, actions.ActionFailedError)
    assert issubclass(actions.ActionTimeoutError, TimeoutError)
    assert issubclass(actions.ActionNotFoundError, LookupError)
    assert issubclass(actions.ReservedContextKeyWarning, UserWarning)


def test_standard_lifecycles() -> None:
    assert actions.STANDARD_LIFECYCLES == (
        "session_create",
        "session_save_prepare",
        "request_prepare",
        "request_complete",
        "request_error",
        "session_fork",
        "agent_switch_prepare",
        "agent_switch_complete",
        "session_delete_prepare",
    )
    assert actions.RESPONSE_FINALIZE not in actions.STANDARD_LIFECYCLES
    assert actions.SESSION_LIST == "session_list"
    assert actions.PLUGIN_ENTRY_POINT_GROUP == "customtools.plugins"
