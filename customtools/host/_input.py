"""``ctx.ask`` forms as the protocol's chat input requests, and their answers back.

:func:`input_request` turns a checked form (see :func:`~customtools.talkback.check_form_schema`)
into a ``ChatInputRequest``: one question per property, in order, with the property name as
the question id. :func:`answer_values` reads the answers of a completed request back into the
form's values (unvalidated; ``ctx.ask`` validates them against the form).

======================  ====================================================================
form property           question
======================  ====================================================================
string                  ``text`` (``format``, ``minLength``/``maxLength`` as ``min``/``max``)
number                  ``number`` (``minimum``/``maximum`` as ``min``/``max``)
integer                 ``integer`` (the protocol's integer kind of a number question)
boolean                 ``boolean``
enum / ``oneOf`` const  ``single-select`` (``oneOf`` titles become option labels)
array of an enum        ``multi-select`` (``minItems``/``maxItems`` as ``min``/``max``)
======================  ====================================================================

``default`` becomes ``defaultValue`` (a select option is marked ``recommended`` instead), and a
property listed in the form's ``required`` is a ``required`` question.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["answer_values", "input_request"]

_SCALAR = {"string": "text", "number": "number", "integer": "integer", "boolean": "boolean"}
_DEFAULT_TYPES: dict[str, tuple[type, ...]] = {
    "text": (str,),
    "number": (int, float),
    "integer": (int, float),
    "boolean": (bool,),
}


def _options(prop: Mapping[str, Any], recommended: Any = None) -> list[dict[str, Any]] | None:
    chosen = recommended if isinstance(recommended, list) else [recommended]
    if isinstance(prop.get("enum"), list):
        pairs = [(str(v), str(v)) for v in prop["enum"]]
    else:
        consts = prop.get("oneOf") or prop.get("anyOf")
        if not isinstance(consts, list):
            return None
        pairs = [
            (str(c.get("const")), str(c.get("title") or c.get("const")))
            for c in consts
            if isinstance(c, Mapping) and "const" in c
        ]
    out: list[dict[str, Any]] = []
    for value, label in pairs:
        option: dict[str, Any] = {"id": value, "label": label}
        if value in chosen:
            option["recommended"] = True
        out.append(option)
    return out


def _bounds(question: dict[str, Any], prop: Mapping[str, Any], low: str, high: str) -> None:
    for key, name in ((low, "min"), (high, "max")):
        value = prop.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            question[name] = value


def _question(name: str, prop: Mapping[str, Any], required: bool) -> dict[str, Any]:
    title = prop.get("title")
    description = prop.get("description")
    question: dict[str, Any] = {
        "id": name,
        "message": str(description or title or name),
    }
    if isinstance(title, str) and title:
        question["title"] = title
    if required:
        question["required"] = True
    default = prop.get("default")
    if prop.get("type") == "array":
        items = prop.get("items")
        question["kind"] = "multi-select"
        question["options"] = _options(items if isinstance(items, Mapping) else {}, default) or []
        _bounds(question, prop, "minItems", "maxItems")
        return question
    options = _options(prop, default)
    if options is not None:
        question["kind"] = "single-select"
        question["options"] = options
        return question
    kind = _SCALAR[str(prop.get("type"))]
    question["kind"] = kind
    if kind == "text":
        if isinstance(prop.get("format"), str):
            question["format"] = prop["format"]
        _bounds(question, prop, "minLength", "maxLength")
    elif kind in ("number", "integer"):
        _bounds(question, prop, "minimum", "maximum")
    if isinstance(default, _DEFAULT_TYPES[kind]) and (
        kind == "boolean" or not isinstance(default, bool)
    ):
        question["defaultValue"] = default
    return question


def input_request(request_id: str, message: str, form: Mapping[str, Any]) -> dict[str, Any]:
    """The ``ChatInputRequest`` (wire JSON) asking ``form``, a checked form schema."""
    required = set(form.get("required") or ())
    properties: Mapping[str, Any] = form.get("properties") or {}
    return {
        "id": request_id,
        "message": message,
        "questions": [
            _question(str(name), prop, name in required) for name, prop in properties.items()
        ],
    }


def answer_values(answers: Any) -> tuple[dict[str, Any], int]:
    """``(values, skipped)``: the answered values by question id, and how many were skipped.

    An answer in state ``submitted`` or ``draft`` gives its ``value.value``; ``skipped`` (or
    anything malformed) gives nothing.
    """
    values: dict[str, Any] = {}
    skipped = 0
    if not isinstance(answers, Mapping):
        return values, skipped
    for question, answer in answers.items():
        if not isinstance(answer, Mapping):
            continue
        if answer.get("state") == "skipped":
            skipped += 1
            continue
        value = answer.get("value")
        answered = answer.get("state") in ("submitted", "draft")
        if answered and isinstance(value, Mapping) and "value" in value:
            values[str(question)] = value["value"]
    return values, skipped
