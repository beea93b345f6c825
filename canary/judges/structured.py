"""Check ``structured_output``: a json_schema reply must be strict JSON valid for the schema.

The parse ladder and its classes follow docs/sources/text-checks.md, "Structured output"; validation uses jsonschema
Draft 2020-12 with format checking on ("Structured output": without a format checker ``format`` is only
an annotation; the packages of jsonschema's "format-nongpl" extra, pinned in requirements.txt
less the iri parser, supply date-time, uri, …).

Only ``ok_strict`` can pass. A probe sends ``response_format: json_schema`` with strict
mode, so a fenced or prose-wrapped object is a failure even when the object inside is
valid (field cases schema-fenced, schema-ignored-prose); the object inside is still
validated so the evidence says whether the data itself was right. Python's ``json``
quirks are closed: ``NaN``/``Infinity`` and duplicate keys are rejected ("Structured output").
Whether the endpoint advertises structured outputs is the caller's decision
(``not_applicable``), not this judge's.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from typing import Any

import regex
from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError

from canary.judges._guard import never_raise
from canary.judges.schemas import SchemaRefused, schema_validator
from canary.verdicts import Judgement, Reply, Verdict

CHECK = "structured_output"
# Structured replies are not clipped like prose (a clipped object would read as truncated);
# past this size the reply is judged oversized without parsing.
MAX_JSON_CHARS = 1_000_000
MAX_REPORTED_ERRORS = 10
_MAX_COUNTED_ERRORS = 100
# A validator message quotes the offending value, which may be the whole reply.
_REASON_MESSAGE_CHARS = 160

# Ladder classes (docs/sources/text-checks.md, "Structured output") and what each means for the evidence reader.
LADDER = {
    "ok_strict": "strict JSON",
    "double_encoded": "a JSON string holding JSON",
    "fenced": "JSON inside a markdown code fence",
    "prose_wrapped": "JSON with text before it",
    "trailing_text": "JSON with text after it",
    "truncated": "JSON cut off before its closing brackets",
    "invalid": "malformed JSON",
    "non_finite_number": "JSON with NaN or Infinity, which strict JSON does not allow",
    "duplicate_key": "JSON with a duplicate object key",
    "no_json": "free text with no JSON in it",
    "empty": "empty",
    "oversized": f"longer than {MAX_JSON_CHARS} characters",
}

_FENCE = regex.compile(
    r"\A```[ \t]*(?:json|JSON|json5)?[ \t]*\r?\n(?P<body>.*?)\r?\n?[ \t]*```\Z", regex.DOTALL
)


class _Rejected(ValueError):
    """A JSON text Python would accept but strict JSON does not."""

    def __init__(self, ladder: str, detail: str) -> None:
        super().__init__(detail)
        self.ladder = ladder


def _reject_constant(name: str) -> Any:
    raise _Rejected("non_finite_number", f"{name} is not valid JSON")


def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise _Rejected("duplicate_key", f"duplicate key {key[:80]!r}")
        result[key] = value
    return result


_DECODER = json.JSONDecoder(parse_constant=_reject_constant, object_pairs_hook=_unique_pairs)
_NOT_PARSED = object()


@dataclass
class Parsed:
    """Where the reply landed on the ladder, and the instance found (if any)."""

    ladder: str
    instance: Any = _NOT_PARSED
    detail: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def has_instance(self) -> bool:
        return self.instance is not _NOT_PARSED


def _strict(text: str) -> Any:
    return _DECODER.decode(text)


def parse_ladder(text: str) -> Parsed:
    """Classify ``text`` on the parse ladder; never raises.

    Returns ``Parsed(ladder, instance, detail)``; ``instance`` is set whenever some JSON
    value could be recovered (even from a fenced or wrapped reply).
    """
    stripped = text.strip()
    if not stripped:
        return Parsed("empty")
    if len(stripped) > MAX_JSON_CHARS:
        return Parsed("oversized", detail=f"{len(stripped)} characters")
    try:
        value = _strict(stripped)
    except _Rejected as exc:
        return Parsed(exc.ladder, detail=str(exc))
    except (ValueError, RecursionError) as exc:
        first_error = _describe(exc)
    else:
        if isinstance(value, str):
            inner = _try_strict(value.strip())
            if inner.has_instance and isinstance(inner.instance, dict | list):
                return Parsed("double_encoded", inner.instance, "the JSON is a string holding JSON")
        return Parsed("ok_strict", value)
    fence = _FENCE.match(stripped)
    if fence:
        inner = _try_strict(fence.group("body").strip())
        return Parsed("fenced", inner.instance, inner.detail, {"inside_fence": inner.ladder})
    starts = [i for i in (stripped.find("{"), stripped.find("[")) if i >= 0]
    if not starts:
        return Parsed("no_json", detail=first_error)
    start = min(starts)
    try:
        value, end = _DECODER.raw_decode(stripped, start)
    except _Rejected as exc:
        return Parsed(exc.ladder, detail=str(exc))
    except (ValueError, RecursionError) as exc:
        ladder = "truncated" if _unclosed(stripped[start:]) else "invalid"
        return Parsed(ladder, detail=_describe(exc))
    before, after = stripped[:start].strip(), stripped[end:].strip()
    ladder = "prose_wrapped" if before else "trailing_text"
    return Parsed(ladder, value, extra={"text_before": before[:80], "text_after": after[:80]})


def _try_strict(text: str) -> Parsed:
    try:
        return Parsed("ok_strict", _strict(text))
    except _Rejected as exc:
        return Parsed(exc.ladder, detail=str(exc))
    except (ValueError, RecursionError) as exc:
        return Parsed("invalid", detail=_describe(exc))


def _describe(exc: BaseException) -> str:
    if isinstance(exc, RecursionError):
        return "nesting too deep to parse"
    return str(exc)[:200]


def _unclosed(text: str) -> bool:
    """True when brackets or a string are still open at the end (a stack scan that
    respects strings and escapes). A trailing comma or a stray bracket is not truncation.
    """
    stack: list[str] = []
    in_string = escaped = False
    pairs = {"}": "{", "]": "["}
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "{[":
            stack.append(char)
        elif char in "}]":
            if not stack or stack.pop() != pairs[char]:
                return False
    return in_string or bool(stack)


# --- schema validation -------------------------------------------------------------------

_validators: dict[str, Draft202012Validator | SchemaRefused] = {}
_validators_lock = threading.Lock()
_MAX_CACHED_SCHEMAS = 64


def unwrap_schema(schema: Any) -> Any:
    """Accept a bare JSON Schema, a ``json_schema`` object (``{"name", "strict",
    "schema"}``) or a whole ``response_format`` (``{"type": "json_schema", ...}``)."""
    if isinstance(schema, dict) and schema.get("type") == "json_schema":
        schema = schema.get("json_schema", schema)
    if isinstance(schema, dict) and isinstance(schema.get("schema"), dict) and "name" in schema:
        schema = schema["schema"]
    return schema


def _validator(schema: dict[str, Any]) -> Draft202012Validator | SchemaRefused:
    key = json.dumps(schema, sort_keys=True, default=str)
    with _validators_lock:
        cached = _validators.get(key)
    if cached is not None:
        return cached
    built: Draft202012Validator | SchemaRefused
    try:
        built = schema_validator(schema)  # formats checked (core.json_schema)
    except SchemaRefused as exc:
        built = exc
    with _validators_lock:
        if len(_validators) >= _MAX_CACHED_SCHEMAS:
            _validators.clear()
        _validators[key] = built
    return built


def schema_errors(
    validator: Draft202012Validator, instance: Any
) -> tuple[list[dict[str, str]], int]:
    """Up to ten errors as ``{"json_path", "keyword", "message"}`` sorted by path, and the
    total count (counting stops at 100)."""
    errors: list[ValidationError] = []
    for error in validator.iter_errors(instance):
        errors.append(error)
        if len(errors) >= _MAX_COUNTED_ERRORS:
            break
    errors.sort(key=lambda e: (e.json_path, str(e.validator)))
    shown = [
        {"json_path": e.json_path, "keyword": str(e.validator), "message": e.message[:200]}
        for e in errors[:MAX_REPORTED_ERRORS]
    ]
    return shown, len(errors)


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


@never_raise(CHECK)
def judge_structured(reply: Reply, schema: dict[str, Any]) -> Judgement:
    """Judge a structured-output reply against ``schema`` (Draft 2020-12, formats checked).

    ``schema`` may be bare or wrapped (see ``unwrap_schema``). Pass only for strict JSON
    that validates. Fail for every other ladder class and for schema errors.
    Inconclusive when the schema itself is unusable (invalid, or a ``$ref`` that does not
    resolve within it: references are never fetched; a probe bug). A schema failure's
    reason names the first error's JSON path (``$.items[2].price``) and the validator's
    message; ``failure_kind`` (``"schema <keyword> at <path>"``) is that failure without
    the quoted value, for ``canary.round_judgement.failure_signature``. Evidence: ``ladder``,
    ``ladder_meaning``, ``parse_error``, ``schema_errors`` (``[{json_path, keyword,
    message}]``), ``error_count``, ``finish_reason``.
    """
    bare = unwrap_schema(schema)
    if not isinstance(bare, dict):
        return Judgement(
            Verdict.INCONCLUSIVE, CHECK, "No JSON Schema object to validate against.", {}
        )
    validator = _validator(bare)
    if isinstance(validator, SchemaRefused):
        return Judgement(
            Verdict.INCONCLUSIVE,
            CHECK,
            "The probe's schema is not a usable Draft 2020-12 schema.",
            {"schema_error": str(validator)[:200]},
        )
    content = reply.content
    text = content if isinstance(content, str) else ("" if content is None else str(content))
    parsed = parse_ladder(text)
    evidence: dict[str, Any] = {
        "ladder": parsed.ladder,
        "ladder_meaning": LADDER[parsed.ladder],
        "finish_reason": reply.finish_reason,
        **parsed.extra,
    }
    if parsed.detail:
        evidence["parse_error"] = parsed.detail
    if isinstance(reply.refusal, str) and reply.refusal.strip():
        evidence["message_refusal"] = reply.refusal[:300]
    errors: list[dict[str, str]] = []
    if parsed.has_instance:
        try:
            errors, count = schema_errors(validator, parsed.instance)
        except RecursionError:
            errors, count = [{"json_path": "$", "keyword": "", "message": "nesting too deep"}], 1
        evidence["schema_errors"] = errors
        evidence["error_count"] = count
    if parsed.ladder == "ok_strict" and not errors:
        return Judgement(Verdict.PASS, CHECK, "Strict JSON, valid for the schema.", evidence)
    if parsed.ladder == "ok_strict":
        # The first error (by path) in the reason: where in the reply, and the validator's
        # own words, so an operator sees the defect without opening the evidence.
        first = errors[0]
        evidence["failure_kind"] = f"schema {first['keyword']} at {first['json_path']}"
        return Judgement(
            Verdict.FAIL,
            CHECK,
            f"The JSON violates the schema at {first['json_path']}: {_clip(first['message'], _REASON_MESSAGE_CHARS)}"
            f" ({evidence['error_count']} error(s)).",
            evidence,
        )
    reason = f"Not strict JSON: the reply is {LADDER[parsed.ladder]}"
    if parsed.ladder == "truncated" and reply.finish_reason == "length":
        reason += " (the token budget ran out)"
    elif parsed.has_instance and not errors:
        reason += " (the value inside is schema-valid)"
    return Judgement(Verdict.FAIL, CHECK, reason + ".", evidence)
