"""Structured output: the parse ladder (docs/sources/text-checks.md, "Structured output") and Draft 2020-12 validation."""

from __future__ import annotations

import json
from typing import Any

import pytest

from canary.judges import judge_structured
from canary.judges.structured import parse_ladder
from canary.verdicts import Reply, Verdict

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "mood": {"enum": ["happy", "sad", "calm"]},
        "score": {"type": "integer", "minimum": 0, "maximum": 10},
        "when": {"type": "string", "format": "date"},
        "at": {"type": "string", "format": "date-time"},
        "email": {"type": "string", "format": "email"},
        "link": {"type": "string", "format": "uri"},
    },
    "required": ["mood", "score"],
    "additionalProperties": False,
}
GOOD = '{"mood": "happy", "score": 7}'


def judge(content: str | None, schema: Any = SCHEMA, **envelope: Any) -> Any:
    return judge_structured(Reply(content=content, **envelope), schema)


def test_strict_valid_json_passes() -> None:
    judgement = judge(GOOD)
    assert (judgement.check, judgement.verdict) == ("structured_output", Verdict.PASS)
    assert judgement.evidence["ladder"] == "ok_strict"


def test_valid_json_with_every_format_passes() -> None:
    value = {
        "mood": "calm",
        "score": 0,
        "when": "2024-12-31",
        "at": "2024-12-31T23:59:00Z",
        "email": "ana@example.com",
        "link": "https://example.com/a",
    }
    assert judge(json.dumps(value)).verdict is Verdict.PASS


@pytest.mark.parametrize(
    ("content", "ladder"),
    [
        ("```json\n" + GOOD + "\n```", "fenced"),
        ("```\n" + GOOD + "\n```", "fenced"),
        ("Claro! Aqui está o JSON:\n" + GOOD, "prose_wrapped"),
        ("<think>ok</think>\n" + GOOD, "prose_wrapped"),
        (GOOD + "\n\nEspero ter ajudado!", "trailing_text"),
        ('{"mood": "happy", "score": ', "truncated"),
        ('{"mood": "happy", "note": "cortado no mei', "truncated"),
        ("```json\n" + GOOD[:-1], "truncated"),
        ("{'mood': 'happy', 'score': 7}", "invalid"),
        ('{"mood": "happy", "score": 7,}', "invalid"),
        ('{"mood": "happy", "score": NaN}', "non_finite_number"),
        ('{"mood": "happy", "score": Infinity}', "non_finite_number"),
        ('{"mood": "happy", "score": 7, "score": 8}', "duplicate_key"),
        ('"{\\"mood\\": \\"happy\\", \\"score\\": 7}"', "double_encoded"),
        ("Não posso ajudar com isso.", "no_json"),
        ("", "empty"),
        ("   ", "empty"),
        (None, "empty"),
    ],
)
def test_every_rung_below_strict_fails(content: str | None, ladder: str) -> None:
    judgement = judge(content)
    assert (judgement.check, judgement.verdict) == ("structured_output", Verdict.FAIL)
    assert judgement.evidence["ladder"] == ladder


def test_wrapped_but_valid_value_says_so_in_the_evidence() -> None:
    judgement = judge("Aqui:\n" + GOOD)
    assert judgement.evidence["schema_errors"] == []
    assert "schema-valid" in judgement.reason


def test_truncation_at_the_token_budget_is_named_in_the_reason() -> None:
    judgement = judge('{"mood": "happy", "sco', finish_reason="length")
    assert judgement.verdict is Verdict.FAIL
    assert "budget" in judgement.reason


@pytest.mark.parametrize(
    ("content", "json_path", "keyword"),
    [
        ('{"score": 7}', "$", "required"),
        ('{"mood": "feliz", "score": 7}', "$.mood", "enum"),
        ('{"mood": "happy", "score": "7"}', "$.score", "type"),
        ('{"mood": "happy", "score": 11}', "$.score", "maximum"),
        ('{"mood": "happy", "score": 7, "extra": 1}', "$", "additionalProperties"),
        ('{"mood": "happy", "score": 7, "when": "31/12/2024"}', "$.when", "format"),
        ('{"mood": "happy", "score": 7, "at": "ontem à noite"}', "$.at", "format"),
        ('{"mood": "happy", "score": 7, "email": "nope"}', "$.email", "format"),
        ('{"mood": "happy", "score": 7, "link": "not a uri"}', "$.link", "format"),
        ('["happy", 7]', "$", "type"),
    ],
)
def test_schema_violations_fail_with_json_path_and_keyword(
    content: str, json_path: str, keyword: str
) -> None:
    judgement = judge(content)
    assert judgement.verdict is Verdict.FAIL
    assert judgement.evidence["ladder"] == "ok_strict"
    assert {"json_path": json_path, "keyword": keyword} in [
        {"json_path": e["json_path"], "keyword": e["keyword"]}
        for e in judgement.evidence["schema_errors"]
    ]


def test_all_errors_are_counted_and_reported_sorted_by_path() -> None:
    judgement = judge('{"mood": "feliz", "score": "7", "extra": 1}')
    assert judgement.evidence["error_count"] == 3
    paths = [e["json_path"] for e in judgement.evidence["schema_errors"]]
    assert paths == sorted(paths)


def test_response_format_wrapper_is_accepted_as_schema() -> None:
    wrapped = {
        "type": "json_schema",
        "json_schema": {"name": "mood", "strict": True, "schema": SCHEMA},
    }
    assert judge(GOOD, wrapped).verdict is Verdict.PASS
    assert judge(GOOD, wrapped["json_schema"]).verdict is Verdict.PASS


def test_an_invalid_probe_schema_is_inconclusive() -> None:
    judgement = judge(GOOD, {"type": "objeto"})
    assert judgement.verdict is Verdict.INCONCLUSIVE
    assert "schema_error" in judgement.evidence


def test_no_schema_is_inconclusive() -> None:
    assert judge(GOOD, None).verdict is Verdict.INCONCLUSIVE


def test_message_refusal_is_carried_in_the_evidence() -> None:
    judgement = judge(None, refusal="I can't share that.")
    assert judgement.verdict is Verdict.FAIL
    assert judgement.evidence["message_refusal"] == "I can't share that."


@pytest.mark.parametrize(
    "content",
    [
        "[" * 100_000,
        '{"a": ' * 50_000,
        '"\\ud800"',
        "{" + '"k": 1,' * 200_000 + '"z": 2}',
        "\x00{}",
    ],
)
def test_pathological_input_is_a_verdict_not_a_crash(content: str) -> None:
    judgement = judge(content)
    assert judgement.verdict is Verdict.FAIL
    assert "judge_error" not in judgement.evidence
    # Storable: UTF-8 encodable (no lone surrogate) and no NUL, as PostgreSQL jsonb needs.
    stored = json.dumps(judgement.evidence, ensure_ascii=False)
    stored.encode("utf-8")
    assert "\\u0000" not in json.dumps(judgement.evidence)


def test_parse_ladder_trailing_comma_is_invalid_not_truncated() -> None:
    assert parse_ladder('{"a": [1, 2,]}').ladder == "invalid"


def test_a_schema_failure_reason_names_the_json_path_and_the_validators_reason() -> None:
    schema = {
        "type": "object",
        "properties": {"items": {"type": "array", "items": {"type": "object", "properties": {"price": {"type": "number"}}}}},
    }
    judgement = judge('{"items": [{"price": 1}, {"price": 2.5}, {"price": "3 EUR"}]}', schema)
    assert judgement.verdict is Verdict.FAIL
    assert judgement.reason == (
        "The JSON violates the schema at $.items[2].price: '3 EUR' is not of type 'number' (1 error(s))."
    )


def test_a_schema_failure_reason_clips_a_long_value() -> None:
    judgement = judge(json.dumps({"mood": "x" * 5000, "score": 7}))
    assert judgement.reason.startswith("The JSON violates the schema at $.mood: 'xxx")
    assert len(judgement.reason) < 300


def test_a_schema_with_a_remote_ref_is_inconclusive_and_never_fetched(schema_host) -> None:
    judgement = judge(GOOD, {"type": "object", "properties": {"mood": {"$ref": schema_host.url}}})
    assert judgement.verdict == Verdict.INCONCLUSIVE
    assert f"$ref '{schema_host.url}' at $.properties.mood" in judgement.evidence["schema_error"]
    assert schema_host.gets == 0


def test_a_local_ref_in_the_schema_is_followed() -> None:
    schema = {"type": "object", "$defs": {"mood": {"enum": ["happy", "sad"]}},
              "properties": {"mood": {"$ref": "#/$defs/mood"}}, "required": ["mood"]}
    assert judge('{"mood": "happy"}', schema).verdict == Verdict.PASS
    failed = judge('{"mood": "bored"}', schema)
    assert failed.verdict == Verdict.FAIL and failed.evidence["schema_errors"][0]["json_path"] == "$.mood"
