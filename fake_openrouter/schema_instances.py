"""Instances of a JSON schema, valid or broken on purpose, for structured-output replies.

Covers the keywords a response schema uses in practice: type (or a list of types), object
properties/required, array items/minItems/maxItems, enum, const, minimum/maximum (and the
exclusive forms), minLength/maxLength, format (every format jsonschema's format checker asserts: date, date-time, time,
email, uri, uuid, ipv4, ipv6, duration ...; a healthy host's reply passes a validator that
checks formats),
anyOf/oneOf/allOf and local $ref. ``pattern`` is not honoured. A free string property
named as an identifier (``id``, ``restaurant_id``, ``restaurantId``) gets an id-like value
(``restaurant_5f1c09ab``), as a model filling a tool call's arguments writes one; other free
strings are drawn from the reply's sentences.
"""

from __future__ import annotations

import json
import math
import random
import re
import uuid
from collections.abc import Mapping
from typing import Any

_MAX_DEPTH = 8
_FORMATS: dict[str, str] = {
    "date": "2025-03-14",
    "date-time": "2025-03-14T18:30:00Z",
    "time": "18:30:00Z",  # RFC 3339 full-time carries its offset
    "email": "mira.lindqvist@example.org",
    "uri": "https://example.org/stories/lantern",
    "url": "https://example.org/stories/lantern",
    "hostname": "example.org",
    "ipv4": "192.0.2.7",
    "ipv6": "2001:db8::7",
    "uri-reference": "/stories/lantern",
    "idn-email": "mira.lindqvist@example.org",
    "idn-hostname": "example.org",
    "duration": "P3DT4H",
    "json-pointer": "/stories/0",
    "relative-json-pointer": "0/stories",
    "regex": "^[a-z]+$",
    "uri-template": "https://example.org/stories/{id}",
}


def schema_instance(
    schema: Mapping[str, Any], rng: random.Random, sentences: tuple[str, ...]
) -> Any:
    """A value valid against ``schema``; free-text strings are drawn from ``sentences``."""
    return _Generator(schema, rng, sentences).value(schema, 0)


def without_required_field(
    instance: Any, schema: Mapping[str, Any], rng: random.Random
) -> Any | None:
    """``instance`` with one required top-level property removed (any property if none is
    required); None when the instance is not an object with a property to remove."""
    if not isinstance(instance, dict) or not instance:
        return None
    required = [key for key in schema.get("required", []) if key in instance]
    key = rng.choice(required or sorted(instance))
    return {k: v for k, v in instance.items() if k != key}


def with_wrong_type(instance: Any, schema: Mapping[str, Any], rng: random.Random) -> Any:
    """``instance`` with one top-level property (a required one if any) given a value of
    another JSON type; a non-object instance is replaced whole."""
    if not isinstance(instance, dict) or not instance:
        return _wrong(instance)
    required = [key for key in schema.get("required", []) if key in instance]
    key = rng.choice(required or sorted(instance))
    return {k: (_wrong(v) if k == key else v) for k, v in instance.items()}


def broken_json(text: str, rng: random.Random) -> str:
    """``text`` (valid JSON) damaged so that a strict parser refuses it."""
    if len(text) < 2:
        return text + "{"
    kind = rng.choice(("trailing_comma", "unclosed", "single_quotes"))
    if kind == "trailing_comma" and text.endswith(("}", "]")):
        return text[:-1] + "," + text[-1]
    if kind == "single_quotes" and '"' in text:
        return text.replace('"', "'")
    return text[: max(1, len(text) * 3 // 4)]


# A model extracting a document writes a currency as its ISO 4217 code.
_CURRENCY = "EUR"
# A property named as an identifier: ``id`` itself, or a stem before ``_id``/``-id`` or a
# camel-case ``Id`` ("paid", "valid" are words, not identifiers).
_ID_KEY = re.compile(r"^(?:(?P<stem>.+?)(?:[_-][Ii][Dd]|(?<=[a-z0-9])Id)|[Ii][Dd])$")
# Keywords that say what the string is: an id-like filler would override them.
_SAYS_WHAT = {"const", "enum", "format", "pattern", "anyOf", "oneOf", "allOf"}


def identifier_stem(key: str) -> str | None:
    """The stem of a property name that names an identifier (``"restaurant_id"`` ->
    ``"restaurant"``, ``"guestId"`` -> ``"guest"``, ``"id"`` -> ``""``), None when
    ``key`` does not."""
    match = _ID_KEY.match(key)
    if match is None:
        return None
    return re.sub(r"[^a-z0-9]+", "_", (match.group("stem") or "").lower()).strip("_")


def _coherent(out: dict[str, Any], properties: Mapping[str, Any]) -> dict[str, Any]:
    """What a healthy model's extraction keeps consistent and a schema cannot say: a free
    string ``currency`` is an ISO 4217 code, and a number ``total`` next to a list of items
    with number ``amount`` fields is their sum (an invoice, an order). Draws nothing, so
    the rest of the instance is the same as without it."""
    currency = properties.get("currency")
    if isinstance(out.get("currency"), str) and isinstance(currency, Mapping) and not (
            {"enum", "const", "format", "pattern"} & set(currency)):
        out["currency"] = _CURRENCY
    total = out.get("total")
    if isinstance(total, (int, float)) and not isinstance(total, bool):
        for value in out.values():
            if isinstance(value, list) and value and all(
                    isinstance(item, dict) and isinstance(item.get("amount"), (int, float))
                    and not isinstance(item.get("amount"), bool) for item in value):
                amounts = sum(item["amount"] for item in value)
                out["total"] = round(amounts, 2) if isinstance(total, float) or not float(amounts).is_integer() else int(amounts)
                break
    return out


def _wrong(value: Any) -> Any:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, str):
        return len(value)
    if isinstance(value, list):
        return ", ".join(str(item) for item in value)
    if isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False)
    return 0


class _Generator:
    def __init__(self, root: Mapping[str, Any], rng: random.Random, sentences: tuple[str, ...]):
        self.root = root
        self.rng = rng
        self.sentences = sentences or ("text",)

    def value(self, schema: Any, depth: int) -> Any:
        if not isinstance(schema, Mapping):
            return self.text({}) if schema is not False else None
        schema = self.resolve(schema)
        if "const" in schema:
            return schema["const"]
        if isinstance(schema.get("enum"), list) and schema["enum"]:
            return self.rng.choice(schema["enum"])
        for key in ("anyOf", "oneOf"):
            options = schema.get(key)
            if isinstance(options, list) and options:
                non_null = [
                    o for o in options if not (isinstance(o, Mapping) and o.get("type") == "null")
                ]
                return self.value((non_null or options)[0], depth + 1)
        if isinstance(schema.get("allOf"), list):
            return self.value(self.merged(schema), depth + 1)
        kind = self.kind(schema)
        if kind == "object":
            return self.obj(schema, depth)
        if kind == "array":
            return self.array(schema, depth)
        if kind == "integer":
            return self.integer(schema)
        if kind == "number":
            return self.number(schema)
        if kind == "boolean":
            return self.rng.choice((True, False))
        if kind == "null":
            return None
        return self.text(schema)

    def resolve(self, schema: Mapping[str, Any]) -> Mapping[str, Any]:
        seen = 0
        while isinstance(schema.get("$ref"), str) and seen < 16:
            ref: str = schema["$ref"]
            target: Any = self.root
            for part in ref.lstrip("#").strip("/").split("/") if ref != "#" else []:
                target = (
                    target.get(part.replace("~1", "/").replace("~0", "~"), {})
                    if isinstance(target, Mapping)
                    else {}
                )
            schema = target if isinstance(target, Mapping) else {}
            seen += 1
        return schema

    def merged(self, schema: Mapping[str, Any]) -> dict[str, Any]:
        merged: dict[str, Any] = {k: v for k, v in schema.items() if k != "allOf"}
        for part in schema["allOf"]:
            part = self.resolve(part) if isinstance(part, Mapping) else {}
            for key, val in part.items():
                if key == "properties":
                    merged.setdefault("properties", {}).update(val)
                elif key == "required":
                    merged["required"] = [*merged.get("required", []), *val]
                else:
                    merged.setdefault(key, val)
        return merged

    @staticmethod
    def kind(schema: Mapping[str, Any]) -> str:
        declared = schema.get("type")
        if isinstance(declared, list):
            declared = next((t for t in declared if t != "null"), declared[0] if declared else None)
        if isinstance(declared, str):
            return declared
        if "properties" in schema:
            return "object"
        if "items" in schema:
            return "array"
        return "string"

    def obj(self, schema: Mapping[str, Any], depth: int) -> dict[str, Any]:
        properties = schema.get("properties") or {}
        required = [k for k in schema.get("required", []) if isinstance(k, str)]
        # Deep in a recursive schema, stop at what is required so generation terminates.
        keys = (
            required
            if depth >= _MAX_DEPTH
            else [*properties, *(k for k in required if k not in properties)]
        )
        out = {key: self.field(key, properties.get(key, {}), depth + 1) for key in keys}
        return _coherent(out, properties)

    def field(self, key: str, schema: Any, depth: int) -> Any:
        """The value of property ``key``: an id-like string for a free string named as an
        identifier, else ``value``."""
        stem = identifier_stem(key)
        if stem is not None and isinstance(schema, Mapping):
            resolved = self.resolve(schema)
            if self.kind(resolved) == "string" and not (_SAYS_WHAT & set(resolved)):
                return self.identifier(stem, resolved)
        return self.value(schema, depth)

    def identifier(self, stem: str, schema: Mapping[str, Any]) -> str:
        """``<stem>_<8 hex digits>`` (one 32-bit draw; ``id_...`` without a stem), padded
        with more hex digits to ``minLength`` and cut to ``maxLength``."""
        text = f"{stem or 'id'}_{self.rng.getrandbits(32):08x}"
        low = int(schema.get("minLength", 0))
        while len(text) < low:
            text += f"{self.rng.getrandbits(32):08x}"
        high = schema.get("maxLength")
        if isinstance(high, int) and len(text) > high:
            # The drawn digits tell one id from another: keep those.
            text = text[len(text) - high:] if high > 0 else ""
        return text

    def array(self, schema: Mapping[str, Any], depth: int) -> list[Any]:
        low = int(schema.get("minItems", 0))
        high = schema.get("maxItems")
        count = max(low, 2 if depth < _MAX_DEPTH else 0)
        if isinstance(high, int):
            count = min(count, high)
        prefix = schema.get("prefixItems")
        items = schema.get("items", {})
        out = []
        for i in range(count):
            item_schema = prefix[i] if isinstance(prefix, list) and i < len(prefix) else items
            out.append(self.value(item_schema, depth + 1))
        return out

    def bounds(self, schema: Mapping[str, Any], step: float) -> tuple[float, float]:
        low = float(schema.get("minimum", -math.inf))
        high = float(schema.get("maximum", math.inf))
        if "exclusiveMinimum" in schema:
            low = max(low, float(schema["exclusiveMinimum"]) + step)
        if "exclusiveMaximum" in schema:
            high = min(high, float(schema["exclusiveMaximum"]) - step)
        if low == -math.inf and high == math.inf:
            return 1.0, 100.0
        if low == -math.inf:
            return min(1.0, high) if high >= 1 else high - 10, high
        if high == math.inf:
            return low, low + 99
        return low, high

    def integer(self, schema: Mapping[str, Any]) -> int:
        low, high = self.bounds(schema, 1)
        value = self.rng.randint(math.ceil(low), max(math.ceil(low), math.floor(high)))
        multiple = schema.get("multipleOf")
        if isinstance(multiple, int) and multiple > 0:
            value = math.ceil(value / multiple) * multiple
            if value > high:
                value -= multiple
        return value

    def number(self, schema: Mapping[str, Any]) -> float:
        low, high = self.bounds(schema, 0.01)
        return round(self.rng.uniform(low, high), 2) if high > low else low

    def text(self, schema: Mapping[str, Any]) -> str:
        fmt = schema.get("format")
        if fmt == "uuid":
            return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))
        if isinstance(fmt, str) and fmt in _FORMATS:
            return _FORMATS[fmt]
        low = int(schema.get("minLength", 0))
        high = schema.get("maxLength")
        text = self.rng.choice(self.sentences)
        while len(text) < low:
            text += " " + self.rng.choice(self.sentences)
        if isinstance(high, int) and len(text) > high:
            cut = text[:high]
            # End on a word boundary when that still satisfies minLength.
            if " " in cut and cut.rfind(" ") >= max(low, 1):
                cut = cut[: cut.rfind(" ")]
            text = cut
        return text
