"""The simulator's schema instances honour ``format``: a healthy host's structured reply
and tool arguments pass the project's one validator (core.json_schema, formats checked)."""

from __future__ import annotations

import random

import pytest

from core.json_schema import FORMATS, schema_validator
from fake_openrouter.schema_instances import schema_instance

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
