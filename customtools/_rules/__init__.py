"""The rulebook: every check ``customtools validate``, ``customtools.testing`` and the pytest
plugin run on a tool pack, in one place.

A check turns what it looks at (a :class:`~customtools.CustomTool`, a
:class:`~customtools.LoadResult`, the tools of several packs) into :class:`Finding` records
with stable kebab-case codes. The checks never decide how bad a finding is: :data:`RULES` is
the one table of default severities, and :func:`severity_for` applies the policy (the default,
or ``strict``, where every warning is an error). So a code means the same thing, with the same
severity, whichever front end reports it; ``docs/cli.md`` prints the table.

Checks of one tool (:func:`check_tool`)
    ``empty-description``, ``invisible-unicode`` (in the description, the label, or a title,
    description or property name of the schema), ``invalid-schema``,
    ``required-not-defined``, ``invalid-default`` and ``invalid-example`` (a ``default`` or an
    ``examples`` entry that breaks its own subschema), and the provider rules
    (``openai-*``, ``anthropic-*``) of :mod:`customtools._export`.

Checks of a pack
    :func:`check_load_result` maps a load (errors, diagnostics, metadata) to findings and
    runs :func:`check_tool` on each tool; :func:`check_names` finds ``name-conflict`` and
    ``similar-name`` across tools loaded separately (``validate`` loads each module in a child
    process); :func:`check_metadata` and :func:`empty_pack` are the pack rules both share.

Only ``validate`` reports what needs a child process or a clock (``crash``, ``timeout`` of a
module, ``worker-error``, ``slow-import``) or discovery (``no-tools-found``); those codes are in
the table too, so their severity is policy like the rest.
"""

from __future__ import annotations

from customtools._rules._pack import (
    ToolSite,
    check_load_result,
    check_metadata,
    check_names,
    empty_pack,
)
from customtools._rules._table import RULES, Finding, Rule, Scope, Severity, severity_for
from customtools._rules._tool import check_tool, describe_invisible

__all__ = [
    "RULES",
    "Finding",
    "Rule",
    "Scope",
    "Severity",
    "ToolSite",
    "check_load_result",
    "check_metadata",
    "check_names",
    "check_tool",
    "describe_invisible",
    "empty_pack",
    "severity_for",
]
