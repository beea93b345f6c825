"""A caller's schema (a tool's, or structured output's) against the contract's: equal, or
the first path that differs. Pure.

The gateway validates a tool call's arguments against the *contract's* schema. A caller
that sends its own, looser schema for the same tool (no ``maximum``, no ``format``) gets
replies that satisfy its schema and break the contract's: each one was a rejected reply
charged to the route, and enough of them opened the route's breaker for every caller.
So the rule (routing/README.md, "Tools"): a caller may send a tool the contract names
only with the contract's schema; any other schema is a 400 that names the tool and the
first JSON path where the two differ, before any route sees the request.

Annotations do not change what validates (JSON Schema 2020-12 Validation, section 9,
"A Vocabulary for Basic Meta-Data Annotations"): ``title``, ``description``,
``examples``, ``$comment``, ``default``, ``deprecated``, ``readOnly``, ``writeOnly`` are
ignored, so a caller may word its descriptions as it likes. A local reference
(``{"$ref": "#/$defs/LineItem"}``, what the ``openai`` SDK's ``parse`` and
``pydantic_function_tool`` send for a nested model) is read in place before comparing
(``inline_local_refs``): the same schema written with or without ``$defs`` is the same.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

ANNOTATIONS = frozenset({"title", "description", "examples", "$comment", "default", "deprecated", "readOnly", "writeOnly"})
# Keywords whose object value maps property names to subschemas: their keys are data, and
# an annotation's name there is a property, not an annotation.
_NAMED_SUBSCHEMAS = frozenset({"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"})
_IDENTIFIER = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")


def _step(path: str, key: str) -> str:
    return f"{path}.{key}" if _IDENTIFIER.fullmatch(key) else f"{path}[{key!r}]"


def _same_value(a: Any, b: Any) -> bool:
    # JSON equality: 1 == 1.0 but True is not 1.
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    return bool(a == b)


def _names(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def first_difference(expected: Any, given: Any, path: str = "$", *, in_names: bool = False) -> str | None:
    """The first JSON path (``$.properties.party_size.maximum``) where schema ``given``
    differs from ``expected``, annotations ignored; None when they are the same schema.
    Keys are compared in sorted order, so the answer does not depend on key order.
    ``in_names``: the two objects are a ``properties``-like map (every key is data)."""
    if isinstance(expected, Mapping) and isinstance(given, Mapping):
        keys_e = {k for k in expected if in_names or k not in ANNOTATIONS}
        keys_g = {k for k in given if in_names or k not in ANNOTATIONS}
        for key in sorted(keys_e | keys_g, key=str):
            where = _step(path, str(key))
            if key not in keys_e or key not in keys_g:
                return where
            e, g = expected[key], given[key]
            if key == "required" and not in_names and _names(e) and _names(g):
                # A set of property names (2020-12 Validation, 6.5.3): its order says
                # nothing, and the difference is the list itself.
                if set(e) != set(g):
                    return where
                continue
            found = first_difference(e, g, where, in_names=not in_names and key in _NAMED_SUBSCHEMAS)
            if found is not None:
                return found
        return None
    if isinstance(expected, list) and isinstance(given, list):
        for i, (e, g) in enumerate(zip(expected, given, strict=False)):
            found = first_difference(e, g, f"{path}[{i}]")
            if found is not None:
                return found
        return None if len(expected) == len(given) else f"{path}[{min(len(expected), len(given))}]"
    return None if _same_value(expected, given) else path


def describe(expected: Any, given: Any, path: str) -> str:
    """What the two schemas hold at ``path`` (a ``first_difference`` answer), for the 400:
    ``the contract has 20, the request has nothing``."""
    def at(schema: Any) -> str:
        node = schema
        for part in re.findall(r"\.([A-Za-z_$][A-Za-z0-9_$]*)|\[('(?:[^'\\]|\\.)*'|\d+)\]", path[1:]):
            name, index = part
            key: Any = name if name else (int(index) if index.isdigit() else index[1:-1])
            if isinstance(node, Mapping) and not isinstance(key, int) and key in node:
                node = node[key]
            elif isinstance(node, list) and isinstance(key, int) and key < len(node):
                node = node[key]
            else:
                return "nothing"
        text = repr(node)
        return text if len(text) <= 80 else text[:79] + "…"
    return f"the contract has {at(expected)}, the request has {at(given)}"


_LOCAL_DEFS = ("$defs", "definitions")


def inline_local_refs(schema: Any) -> Any:
    """``schema`` with every ``{"$ref": "#/$defs/<name>"}`` (or ``#/definitions/``) whose
    other keys are annotations replaced by its target, read in place, and the root's
    ``$defs``/``definitions`` dropped once nothing refers to them. A recursive reference,
    one with sibling keywords, or one that does not resolve stays as written (the
    comparison then sees it as it is). Returns a new value; ``schema`` is not changed."""
    if not isinstance(schema, Mapping):
        return schema
    defs = {f"#/{key}/{name}": target for key in _LOCAL_DEFS if isinstance(schema.get(key), Mapping)
            for name, target in schema[key].items()}
    if not defs:
        return schema
    kept: list[bool] = []

    def inline(node: Any, seen: tuple[str, ...]) -> Any:
        if isinstance(node, list):
            return [inline(item, seen) for item in node]
        if not isinstance(node, Mapping):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str) and ref in defs and ref not in seen and all(k == "$ref" or k in ANNOTATIONS for k in node):
            return inline(defs[ref], (*seen, ref))
        if isinstance(ref, str) and ref.startswith("#/"):
            kept.append(True)
        return {k: inline(v, seen) for k, v in node.items()}

    body = inline({k: v for k, v in schema.items() if k not in _LOCAL_DEFS}, ())
    if kept:
        return schema  # some reference stays: its $defs must too, so compare as written
    return body


def schema_difference(expected: Any, given: Any) -> tuple[str, str] | None:
    """(first differing path, what each side holds there) between the contract's schema
    ``expected`` and a caller's ``given``, annotations ignored and local ``$ref``s read in
    place (``inline_local_refs``); None when they are the same schema. The path reads in
    the inlined schemas (``$.properties.line_items.items.required``)."""
    expected, given = inline_local_refs(expected), inline_local_refs(given)
    path = first_difference(expected, given)
    return None if path is None else (path, describe(expected, given, path))
