"""The simulator's schema instances honour ``format``: a healthy host's structured reply
and tool arguments pass the project's one validator (core.json_schema, formats checked)."""

from __future__ import annotations

import random
import re

import pytest

from core.json_schema import FORMATS, schema_validator
from fake_openrouter.schema_instances import identifier_stem, schema_instance

# Every format the checker asserts (the iri pair is left unchecked on purpose: its parser
# is not installed, see requirements.txt).
CHECKED = sorted(FORMATS.checkers)


@pytest.mark.parametrize("fmt", CHECKED)
def test_every_checked_format_gets_a_valid_instance(fmt):
    schema = {"type": "object", "required": ["v"], "properties": {"v": {"type": "string", "format": fmt}}}
    for seed in range(3):
        instance = schema_instance(schema, random.Random(seed), ("a sentence of prose",))
        errors = [e.message for e in schema_validator(schema).iter_errors(instance)]
        assert not errors, (fmt, instance, errors)


def test_the_booking_tool_schema_gets_a_date_time():
    schema = {"type": "object", "required": ["restaurant_id", "party_size", "time"], "additionalProperties": False,
              "properties": {"restaurant_id": {"type": "string", "minLength": 1},
                             "party_size": {"type": "integer", "minimum": 1, "maximum": 20},
                             "time": {"type": "string", "format": "date-time"}}}
    for seed in range(20):
        assert schema_validator(schema).is_valid(schema_instance(schema, random.Random(seed), ("prose",)))


@pytest.mark.parametrize(("key", "stem"), [("restaurant_id", "restaurant"), ("guestId", "guest"), ("order-id", "order"),
                                           ("id", ""), ("ID", ""), ("paid", None), ("valid", None), ("idea", None)])
def test_a_property_named_as_an_identifier_is_told_apart_from_a_word(key, stem):
    assert identifier_stem(key) == stem


def test_a_free_string_named_as_an_identifier_gets_an_id_not_prose():
    schema = {"type": "object", "required": ["restaurant_id", "id", "note"],
              "properties": {"restaurant_id": {"type": "string", "minLength": 1}, "id": {"type": ["string", "null"]},
                             "note": {"type": "string"}}}
    prose = ("By the time the boat reached the island, the fog had swallowed the whole coastline.",)
    instances = [schema_instance(schema, random.Random(seed), prose) for seed in range(20)]
    assert all(re.fullmatch(r"restaurant_[0-9a-f]{8}", i["restaurant_id"]) for i in instances), instances[0]
    assert all(re.fullmatch(r"id_[0-9a-f]{8}", i["id"]) for i in instances)
    assert {i["note"] for i in instances} == set(prose)  # other free strings stay prose
    assert len({i["restaurant_id"] for i in instances}) == 20  # drawn, not one constant
    # Seeded: the same draws give the same ids.
    assert instances == [schema_instance(schema, random.Random(seed), prose) for seed in range(20)]


def test_an_identifier_keeps_its_schemas_bounds_and_what_the_schema_says_it_is():
    schema = {"type": "object", "required": ["a_id", "b_id", "c_id", "d_id"],
              "properties": {"a_id": {"type": "string", "maxLength": 6}, "b_id": {"type": "string", "minLength": 30},
                             "c_id": {"type": "string", "format": "uuid"}, "d_id": {"enum": ["r1", "r2"]}}}
    for seed in range(5):
        instance = schema_instance(schema, random.Random(seed), ("prose",))
        assert schema_validator(schema).is_valid(instance), instance
        assert re.fullmatch(r"[0-9a-f]{6}", instance["a_id"]) and instance["b_id"].startswith("b_")
        assert instance["d_id"] in ("r1", "r2")
