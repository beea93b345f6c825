"""Self-contained JSON Schemas (``canary.judges.schemas``): no reference is ever fetched,
local ones resolve, and a schema that could not be used is refused in one line."""

from __future__ import annotations

from typing import Any

import pytest

from canary.judges.schemas import SchemaRefused, schema_validator, unresolved_ref


def nested(depth: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "integer"}
    for _ in range(depth):
        schema = {"type": "array", "items": schema}
    return schema


def test_a_remote_ref_is_refused_naming_the_ref_and_never_fetched(schema_host) -> None:
    with pytest.raises(SchemaRefused) as refused:
        schema_validator({"properties": {"a": {"$ref": schema_host.url}}})
    message = str(refused.value)
    assert f"$ref '{schema_host.url}' at $.properties.a does not resolve within the schema" in message
    assert "\n" not in message
    assert schema_host.gets == 0


@pytest.mark.parametrize(
    "schema",
    [
        {"$defs": {"n": {"type": "integer"}}, "properties": {"a": {"$ref": "#/$defs/n"}}},
        {"$defs": {"n": {"$anchor": "num", "type": "integer"}}, "properties": {"a": {"$ref": "#num"}}},
        {"$defs": {"n": {"$id": "num.json", "type": "integer"}}, "properties": {"a": {"$ref": "num.json"}}},
        {"$id": "https://example.test/root.json", "properties": {"a": {"$ref": "#/$defs/n"}},
         "$defs": {"n": {"type": "integer"}}},
    ],
)
def test_local_refs_keep_working(schema: dict[str, Any]) -> None:
    validator = schema_validator(schema)
    assert validator.is_valid({"a": 3})
    assert [e.json_path for e in validator.iter_errors({"a": "three"})] == ["$.a"]


def test_a_recursive_schema_validates_a_tree() -> None:
    tree = {"type": "object", "properties": {"kids": {"type": "array", "items": {"$ref": "#"}}},
            "required": ["kids"]}
    validator = schema_validator(tree)
    assert validator.is_valid({"kids": [{"kids": []}]})
    assert not validator.is_valid({"kids": [{}]})


@pytest.mark.parametrize(
    ("schema", "where"),
    [
        ({"$ref": "#/$defs/missing"}, ("$", "$ref", "#/$defs/missing")),
        ({"$ref": "#nowhere"}, ("$", "$ref", "#nowhere")),
        ({"anyOf": [{"type": "null"}, {"items": {"$ref": "other.json"}}]}, ("$.anyOf[1].items", "$ref", "other.json")),
        ({"properties": {"a b": {"$dynamicRef": "#meta"}}}, ("$.properties['a b']", "$dynamicRef", "#meta")),
    ],
)
def test_the_first_unresolvable_ref_is_named_with_its_path(schema: dict[str, Any], where: tuple[str, str, str]) -> None:
    assert unresolved_ref(schema) == where


def test_a_ref_inside_data_keywords_is_not_a_reference() -> None:
    schema = {"const": {"$ref": "https://example.test/x.json"}, "default": {"$ref": "y.json"}}
    assert unresolved_ref(schema) is None
    assert schema_validator(schema).is_valid({"$ref": "https://example.test/x.json"})


def test_the_bundled_metaschema_resolves_without_a_fetch() -> None:
    validator = schema_validator({"$ref": "https://json-schema.org/draft/2020-12/schema"})
    assert validator.is_valid({"type": "string"})
    assert not validator.is_valid({"type": 5})


def test_an_invalid_or_too_deep_schema_is_refused_in_one_line() -> None:
    with pytest.raises(SchemaRefused, match=r"^not a valid JSON Schema: 5 is not valid"):
        schema_validator({"type": 5})
    with pytest.raises(SchemaRefused, match="^nested too deeply to check$"):
        schema_validator(nested(3000))
    with pytest.raises(SchemaRefused, match="is an object, not list"):
        schema_validator([])
