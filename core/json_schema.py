"""The one JSON Schema validator of the project: Draft 2020-12, formats checked, never
touching the network. Pure. The canary's structured-output judge and the gateway's
structured output and tool arguments are both checked by validators built here, so a
reply the canary would fail is never accepted by the gateway (and the reverse).

Formats: jsonschema's ``FORMAT_CHECKER`` with the packages of its "format-nongpl" extra
pinned in requirements.txt (less the iri parser): ``date-time``, ``date``, ``time``,
``email``, ``uri``, ``uuid``, ``ipv4`` ... are asserted, not annotations (JSON Schema
2020-12 Validation, section 7: format assertion is opt-in; we opt in everywhere). An
unknown format stays an annotation.

A schema given to us (a judge's, a routing contract's ``output_schema`` or tool
arguments) must be self-contained. jsonschema's default registry fetches any remote
``$ref`` over HTTP, with no timeout, each time a validation reaches it: one GET per
judged line, and a request that outlives its deadline when the host never answers.
Here every validator is built with a ``referencing.Registry`` that retrieves nothing
(the Draft 2020-12 metaschemas, bundled with jsonschema, stay resolvable), and a
schema whose ``$ref``/``$dynamicRef`` does not resolve inside the schema itself
(``#/$defs/...``, ``#anchor``, an embedded ``$id``) is refused when it is loaded, so no
validation ever meets an unresolvable reference.
"""

from __future__ import annotations

from typing import Any

import regex
from jsonschema import Draft202012Validator, FormatChecker
from jsonschema.exceptions import SchemaError
from jsonschema_specifications import REGISTRY as SPECIFICATIONS
from referencing import Registry
from referencing.exceptions import Unresolvable
from referencing.jsonschema import DRAFT202012

# The default ``retrieve`` of an empty Registry raises NoSuchResource: nothing is fetched.
# jsonschema adds its bundled metaschemas (jsonschema_specifications) to any registry it
# is given.
_NO_RETRIEVAL: Registry[Any] = Registry()
# What a validator built on it resolves: the schema itself and those metaschemas.
_LOCAL: Registry[Any] = _NO_RETRIEVAL.combine(SPECIFICATIONS)

# Where Draft 2020-12 holds subschemas (as referencing.jsonschema.DRAFT202012 walks them):
# a ``$ref`` anywhere else (inside ``const``, ``enum``, ``default``) is data, not a reference.
_IN_VALUE = frozenset({
    "additionalProperties", "contains", "contentSchema", "else", "if", "items", "not",
    "propertyNames", "then", "unevaluatedItems", "unevaluatedProperties",
})
_IN_SUBARRAY = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
_IN_SUBVALUES = frozenset({"$defs", "definitions", "dependentSchemas", "patternProperties", "properties"})
_REF_KEYWORDS = ("$ref", "$dynamicRef")
_IDENTIFIER = regex.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")


class SchemaRefused(ValueError):
    """A schema that cannot be used; the one-line message says why (an invalid schema,
    nesting too deep to check, or a reference, with its JSON path, that does not
    resolve inside the schema)."""


FORMATS: FormatChecker = Draft202012Validator.FORMAT_CHECKER


def schema_validator(schema: Any, format_checker: FormatChecker | None = FORMATS) -> Draft202012Validator:
    """A Draft 2020-12 validator for ``schema`` (a dict) that never retrieves a
    reference, with formats checked (``FORMATS``; pass None only where ``format`` must
    stay an annotation).

    Raises ``SchemaRefused`` when ``schema`` is not an object, is not a valid schema,
    is nested too deeply to be checked, or holds a ``$ref``/``$dynamicRef`` that does not
    resolve within it: ``$ref 'http://h/s.json' at $.properties.a does not resolve within
    the schema (references are never fetched)``.
    """
    if not isinstance(schema, dict):
        raise SchemaRefused(f"a JSON Schema is an object, not {type(schema).__name__}")
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        raise SchemaRefused(f"not a valid JSON Schema: {exc.message}") from exc
    except RecursionError as exc:
        raise SchemaRefused("nested too deeply to check") from exc
    unresolved = unresolved_ref(schema)
    if unresolved is not None:
        path, keyword, ref = unresolved
        raise SchemaRefused(
            f"{keyword} {ref!r} at {path} does not resolve within the schema (references are never fetched)"
        )
    return Draft202012Validator(schema, registry=_NO_RETRIEVAL, format_checker=format_checker)


def unresolved_ref(schema: dict[str, Any]) -> tuple[str, str, str] | None:
    """The first reference in ``schema`` that does not resolve without retrieval, as
    ``(JSON path of the subschema holding it, "$ref" or "$dynamicRef", the reference)``;
    None when every one resolves. Walks iteratively: a deep schema cannot exhaust the stack."""
    root = DRAFT202012.create_resource(schema)
    resolver = _LOCAL.resolver_with_root(root)
    # (subschema, its JSON path, the resolver of its parent: the base URI its $id changes)
    stack: list[tuple[Any, str, Any]] = [(schema, "$", resolver)]
    while stack:
        node, path, parent = stack.pop()
        if not isinstance(node, dict):
            continue
        here = parent.in_subresource(DRAFT202012.create_resource(node))
        for keyword in _REF_KEYWORDS:
            ref = node.get(keyword)
            if isinstance(ref, str):
                try:
                    here.lookup(ref)
                except (Unresolvable, RecursionError):
                    return path, keyword, ref
        children: list[tuple[Any, str]] = []
        for key, value in node.items():
            if key in _IN_VALUE:
                children.append((value, _step(path, key)))
            elif key in _IN_SUBARRAY and isinstance(value, list):
                children += [(v, f"{_step(path, key)}[{i}]") for i, v in enumerate(value)]
            elif key in _IN_SUBVALUES and isinstance(value, dict):
                children += [(v, _step(_step(path, key), str(k))) for k, v in value.items()]
        # Reversed so the first reference in document order is the one reported.
        stack += [(child, child_path, here) for child, child_path in reversed(children)]
    return None


def _step(path: str, key: str) -> str:
    return f"{path}.{key}" if _IDENTIFIER.fullmatch(key) else f"{path}[{key!r}]"
