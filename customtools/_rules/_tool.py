"""The rulebook's checks of one tool: :func:`check_tool`."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from customtools._format import describe_exception, find_invisible, safe_repr
from customtools._jsonpointer import format_pointer
from customtools._rules._table import Finding, severity_for

if TYPE_CHECKING:
    from customtools._tool import CustomTool

__all__ = ["check_tool", "describe_invisible"]

# Keywords whose value is a map of names to subschemas, a list of subschemas, or one subschema.
_SUBSCHEMA_MAPS: Final = (
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
)
_SUBSCHEMA_LISTS: Final = ("allOf", "anyOf", "oneOf", "prefixItems", "items")
_SUBSCHEMA_ONE: Final = (
    "items",
    "additionalItems",
    "additionalProperties",
    "unevaluatedItems",
    "unevaluatedProperties",
    "contains",
    "propertyNames",
    "not",
    "if",
    "then",
    "else",
    "contentSchema",
)
_MAX_LISTED: Final = 3
_REMOVE: Final = "a model reads them and a reviewer does not see them: remove them"

Tokens = tuple[str | int, ...]


def _subschemas(root: Any) -> Iterator[tuple[Tokens, Mapping[str, Any]]]:
    """Every subschema that is a mapping, with its path of tokens from the root (pre-order)."""
    from customtools._export import subschemas

    for tokens, node, _ in subschemas(root, _SUBSCHEMA_MAPS, _SUBSCHEMA_LISTS, _SUBSCHEMA_ONE):
        yield tokens, node


def _describe_place(tokens: Sequence[str | int]) -> str:
    """``property 'limit'`` for a property of the root, else ``the schema at /a/b``."""
    if len(tokens) == 2 and tokens[0] == "properties":
        return f"property {safe_repr(tokens[1])}"
    if not tokens:
        return "the parameters schema"
    return f"the schema at {format_pointer(tokens)}"


def describe_invisible(subject: str, text: str, *, advice: str = _REMOVE) -> str:
    """The message for invisible or direction-changing characters in ``text``: ``subject``
    (``"the label of tool 'x'"``), how many there are, the first few with their positions,
    and ``advice``."""
    found = find_invisible(text)
    shown = ", ".join(
        f"{item.codepoint} {item.name} at {item.position}" for item in found[:_MAX_LISTED]
    )
    more = f" and {len(found) - _MAX_LISTED} more" if len(found) > _MAX_LISTED else ""
    return (
        f"{subject} holds {len(found)} invisible or direction-changing character(s)"
        f" ({shown}{more}); {advice}"
    )


class _ToolChecker:
    """Runs the per-tool rules on one tool; each rule is contained on its own."""

    def __init__(self, tool: CustomTool, path: str | None, strict: bool) -> None:
        self.tool = tool
        self.path = path
        self.strict = strict
        self.found: list[Finding] = []

    def add(self, code: str, message: str, *, pointer: str | None = None) -> None:
        self.found.append(
            Finding(
                severity=severity_for(code, strict=self.strict, unknown="warning"),
                code=code,
                message=message,
                path=self.path,
                tool_name=self.tool.name,
                pointer=pointer,
            )
        )

    def run(self) -> list[Finding]:
        self._guarded("description", self.description)
        self._guarded("invisible-unicode", self.invisible_in_fields)
        # A schema changed after the tool was built can be huge or even cyclic: walk it only
        # once it is known to be bounded.
        if self._guarded("schema", self.schema_is_bounded):
            compiled = self._guarded("schema", self.schema_compiles)
            self._guarded("invisible-unicode", self.invisible_in_schema)
            self._guarded("required", self.required)
            if compiled:
                self._guarded("defaults and examples", self.defaults_and_examples)
            self._guarded("provider", self.providers)
        return self.found

    def _guarded(self, what: str, rule: Any) -> bool:
        # A schema is tool data: a mapping whose methods raise must not take the check down.
        try:
            return bool(rule())
        except Exception as exc:
            self.found.append(
                Finding(
                    severity="error",
                    code="invalid-schema",
                    message=f"the {what} check could not read the tool's definition:"
                    f" {describe_exception(exc)}; make parameters plain JSON data",
                    path=self.path,
                    tool_name=self.tool.name,
                )
            )
            return False

    # -- the rules ------------------------------------------------------------------------------

    def description(self) -> bool:
        if not self.tool.description.strip():
            self.add(
                "empty-description",
                f"tool {self.tool.name!r} has no description; models choose tools by it, so say"
                " what it does and when to use it",
            )
        return True

    def invisible_in_fields(self) -> bool:
        tool = self.tool
        for field_name, text in (("description", tool.description), ("label", tool.label)):
            if find_invisible(text):
                self.add(
                    "invisible-unicode",
                    describe_invisible(f"the {field_name} of tool {tool.name!r}", text),
                )
        return True

    def invisible_in_schema(self) -> bool:
        for tokens, node in _subschemas(self.tool.parameters):
            for keyword in ("title", "description"):
                value = node.get(keyword)
                if isinstance(value, str) and find_invisible(value):
                    self.add(
                        "invisible-unicode",
                        describe_invisible(f"the {keyword} of {_describe_place(tokens)}", value),
                        pointer=format_pointer((*tokens, keyword)),
                    )
            properties = node.get("properties")
            if isinstance(properties, Mapping):
                for name in properties:
                    if isinstance(name, str) and find_invisible(name):
                        self.add(
                            "invisible-unicode",
                            describe_invisible(
                                f"the property name {name!r}",
                                name,
                                advice="the model would have to send them back: rename the"
                                " property",
                            ),
                            pointer=format_pointer((*tokens, "properties", name)),
                        )
        return True

    def schema_is_bounded(self) -> bool:
        from customtools._validation import ValidationLimits

        limits = ValidationLimits()
        stack: list[tuple[Any, int]] = [(self.tool.parameters, 0)]
        nodes = 0
        while stack:
            value, depth = stack.pop()
            nodes += 1
            if nodes > limits.max_schema_nodes or depth > limits.max_schema_depth:
                self.add(
                    "invalid-schema",
                    f"the parameters schema has grown past {limits.max_schema_nodes} values or"
                    f" {limits.max_schema_depth} levels (or refers to itself) since the tool"
                    " was built; build it with customtools.Type and do not change it afterwards",
                    pointer="",
                )
                return False
            if isinstance(value, Mapping):
                stack.extend((item, depth + 1) for item in value.values())
            elif isinstance(value, list):
                stack.extend((item, depth + 1) for item in value)
        return True

    def schema_compiles(self) -> bool:
        from customtools._errors import SchemaError
        from customtools._validation import compile_validator

        try:
            compile_validator(
                self.tool.parameters, tool_name=self.tool.name, coerce=False, apply_defaults=False
            )
        except SchemaError as exc:
            self.add(
                "invalid-schema",
                f"the parameters schema does not compile: {describe_exception(exc)}; build it"
                " with customtools.Type and do not change it after building the tool",
                pointer="",
            )
            return False
        return True

    def required(self) -> bool:
        for tokens, node in _subschemas(self.tool.parameters):
            required = node.get("required")
            if not isinstance(required, list):
                continue
            properties = node.get("properties")
            kind = node.get("type")
            is_object = kind == "object" or (isinstance(kind, list) and "object" in kind)
            # A branch such as anyOf: [{"required": ["a"]}] names its parent's properties,
            # and $ref / allOf can bring properties in: only plain object schemas are judged.
            if not (isinstance(properties, Mapping) or is_object) or any(
                key in node for key in ("$ref", "$dynamicRef", "allOf")
            ):
                continue
            defined = properties if isinstance(properties, Mapping) else {}
            patterns = node.get("patternProperties")
            for name in required:
                if not isinstance(name, str) or name in defined:
                    continue
                if isinstance(patterns, Mapping) and _matches_any(name, patterns):
                    continue
                where = "the root" if not tokens else format_pointer(tokens)
                self.add(
                    "required-not-defined",
                    f"{name!r} is required (at {where}) but has no entry in 'properties', so"
                    " the model is never told about it: describe it there or drop it from"
                    " 'required'",
                    pointer=format_pointer(tokens),
                )
        return True

    def defaults_and_examples(self) -> bool:
        root = self.tool.parameters
        for tokens, node in _subschemas(root):
            has_default = "default" in node
            examples = node.get("examples")
            if not has_default and not isinstance(examples, list):
                continue
            validator = self._compile_alone(root, tokens, node)
            if validator is None:
                continue
            place = _describe_place(tokens)
            if has_default:
                for problem in _problems(validator, node["default"]):
                    self.add(
                        "invalid-default",
                        f"the default of {place} breaks its own schema: {problem}; the"
                        " adapter fills it in when the model leaves it out, and the call then"
                        " fails: fix the default or the constraint",
                        pointer=format_pointer(tokens),
                    )
            for index, example in enumerate(examples if isinstance(examples, list) else ()):
                for problem in _problems(validator, example):
                    self.add(
                        "invalid-example",
                        f"example {index} of {place} breaks its own schema: {problem}; the"
                        " model copies examples: fix the example or the constraint",
                        pointer=format_pointer((*tokens, "examples", index)),
                    )
        return True

    def _compile_alone(
        self, root: Mapping[str, Any], tokens: Tokens, node: Mapping[str, Any]
    ) -> Any:
        """A validator for ``node`` by itself, with the root's definitions for its ``$ref``s;
        ``None`` when it does not compile that way (then there is nothing sound to say)."""
        from customtools._errors import SchemaError
        from customtools._validation import compile_validator

        alone = dict(node)
        if tokens:
            for keyword in ("$schema", "$defs", "definitions"):
                if keyword in root and keyword not in alone:
                    alone[keyword] = root[keyword]
        try:
            return compile_validator(
                alone, tool_name=self.tool.name, coerce=False, apply_defaults=False
            )
        except SchemaError:
            return None

    def providers(self) -> bool:
        from customtools._export import anthropic_issues, openai_issues

        for issue in (*openai_issues(self.tool), *anthropic_issues(self.tool)):
            self.add(
                f"{issue.provider}-{issue.rule}",
                f"tool {self.tool.name!r}: {issue.message}",
                pointer=issue.path,
            )
        return True


def _matches_any(name: str, patterns: Mapping[str, Any]) -> bool:
    for pattern in patterns:
        try:
            if re.search(str(pattern), name):
                return True
        except re.error:
            continue
    return False


def _problems(validator: Any, value: Any) -> list[str]:
    _, _, violations, _ = validator.check(value)
    return [v.message if not v.path else str(v) for v in violations or ()]


def check_tool(tool: CustomTool, *, path: str | None = None, strict: bool = False) -> list[Finding]:
    """Every per-tool rule on ``tool``; an empty list when it is clean.

    Never raises for what the tool holds: a schema that cannot be read is an
    ``invalid-schema`` finding.

    Args:
        tool: the tool.
        path: the file it came from, copied into the findings.
        strict: the strict policy (warnings become errors).
    """
    return _ToolChecker(tool, path, strict).run()
