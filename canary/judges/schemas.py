"""The canary's door to the one JSON Schema validator (``core.json_schema``): the same
builder, with formats checked, serves the canary's structured judge and the gateway's
structured output and tool arguments, so both halves judge a reply alike."""

from __future__ import annotations

from core.json_schema import SchemaRefused as SchemaRefused
from core.json_schema import schema_validator as schema_validator
from core.json_schema import unresolved_ref as unresolved_ref
