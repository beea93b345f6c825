"""Validate before accept: each kind of check."""

from __future__ import annotations

import json

from routing.contracts import contract_from_dict
from routing.stream import Answer, ToolCall
from routing.validation import validate_answer

SCHEMA = {
    "type": "object", "required": ["total", "currency", "line_items"], "additionalProperties": False,
    "properties": {
        "total": {"type": "number"}, "currency": {"type": "string"},
        "status": {"enum": ["paid", "open"]},
        "line_items": {"type": "array", "items": {"type": "object", "required": ["amount"], "properties": {"amount": {"type": "number"}}}},
    },
}
INVOICE = contract_from_dict({
    "name": "invoice", "version": 1, "workload": "structured", "output_mode": "json_schema", "output_schema": SCHEMA,
    "semantic_checks": ["invoice_totals_non_negative", "currency_code_valid",
                        {"name": "line_items_sum_to_total", "params": {"tolerance": 0.01}}],
})
GOOD = {"total": 30.0, "currency": "EUR", "status": "paid", "line_items": [{"amount": 10.0}, {"amount": 20.0}]}


def answer(content, finish="stop", tools=()):
    return Answer(content=content, tool_calls=tuple(tools), finish_reason=finish)


def problems(contract, ans):
    return " | ".join(validate_answer(contract, ans).problems)


def test_a_valid_invoice_passes_and_is_parsed():
    result = validate_answer(INVOICE, answer("  " + json.dumps(GOOD) + "\n"))
    assert result.ok and result.value == GOOD


def test_truncation_is_rejected_when_full_output_is_required():
    assert "truncated (finish_reason length) not accepted" in problems(INVOICE, answer(json.dumps(GOOD), finish="length"))


def test_a_missing_finish_reason_is_never_accepted():
    assert "no finish reason" in problems(INVOICE, answer(json.dumps(GOOD), finish=None))


def test_a_missing_required_field_is_not_guessed():
    bad = {k: v for k, v in GOOD.items() if k != "currency"}
    assert "'currency' is a required property" in problems(INVOICE, answer(json.dumps(bad)))


def test_an_enum_outside_the_schema_fails():
    assert "'refunded' is not one of ['paid', 'open']" in problems(INVOICE, answer(json.dumps({**GOOD, "status": "refunded"})))


def test_fenced_json_is_not_unwrapped():
    assert "not JSON" in problems(INVOICE, answer("```json\n" + json.dumps(GOOD) + "\n```"))


def test_semantic_checks_negative_total_bad_currency_and_sum():
    negative = {**GOOD, "total": -30.0, "line_items": [{"amount": -30.0}]}
    assert "total is negative" in problems(INVOICE, answer(json.dumps(negative)))
    assert "'EURO' is not an ISO 4217" in problems(INVOICE, answer(json.dumps({**GOOD, "currency": "EURO"})))
    assert "line items sum to 30.0, total is 31.0" in problems(INVOICE, answer(json.dumps({**GOOD, "total": 31.0})))
    assert validate_answer(INVOICE, answer(json.dumps({**GOOD, "total": 30.005}))).ok  # within tolerance


def test_a_classification_label_must_be_from_the_allowed_set():
    contract = contract_from_dict({
        "name": "triage", "version": 1, "workload": "text",
        "semantic_checks": [{"name": "label_in_allowed_set", "params": {"allowed": ["billing", "bug", "other"]}}],
    })
    assert validate_answer(contract, answer(" billing\n")).ok
    assert "label 'Billing please' is not one of" in problems(contract, answer("Billing please"))


TOOLS = contract_from_dict({
    "name": "agent", "version": 1, "workload": "tools", "finish_reasons": ["tool_calls", "stop"],
    "tools": {"refund": {"type": "object", "required": ["order_id", "amount"],
                         "properties": {"order_id": {"type": "string"}, "amount": {"type": "number", "minimum": 0}}}},
})


def test_tool_calls_must_use_registered_names():
    call = ToolCall("c1", "delete_account", '{"user": 1}')
    assert "tool 'delete_account' is not registered" in problems(TOOLS, answer(None, "tool_calls", [call]))


def test_tool_arguments_are_validated_against_the_tools_schema_and_never_rewritten():
    ok = ToolCall("c1", "refund", '{"order_id": "A7", "amount": 12.5}')
    assert validate_answer(TOOLS, answer(None, "tool_calls", [ok])).ok
    negative = ToolCall("c1", "refund", '{"order_id": "A7", "amount": -1}')
    assert "-1 is less than the minimum of 0" in problems(TOOLS, answer(None, "tool_calls", [negative]))
    broken = ToolCall("c1", "refund", '{"order_id": "A7", "amount": 12.5')
    assert "arguments are not JSON" in problems(TOOLS, answer(None, "tool_calls", [broken]))


def test_empty_output_fails_the_minimum_length():
    text = contract_from_dict({"name": "chat", "version": 1, "workload": "text", "min_output_chars": 5})
    assert "output is 0 characters" in problems(text, answer("   "))


def test_structured_output_nested_too_deeply_is_a_problem_not_a_crash():
    too_deep = "[" * 100_000 + "]" * 100_000  # beyond what the JSON decoder walks
    assert "nested too deeply to decode" in problems(INVOICE, answer(too_deep))
    nested = contract_from_dict({
        "name": "tree", "version": 1, "workload": "structured", "output_mode": "json_schema",
        "output_schema": {"$defs": {"n": {"type": "array", "items": {"$ref": "#/$defs/n"}}}, "$ref": "#/$defs/n"},
    })
    walkable = "[" * 900 + "]" * 900  # decodes, deeper than the schema validator walks
    assert "nested too deeply to validate" in problems(nested, answer(walkable))


def test_a_schema_problem_names_the_json_path_and_the_validators_reason():
    bad = {**GOOD, "line_items": [{"amount": 10.0}, {"amount": 20.0}, {"amount": "12,50"}]}
    assert problems(INVOICE, answer(json.dumps(bad))) == "output $.line_items[2].amount: '12,50' is not of type 'number'"
    missing = {k: v for k, v in GOOD.items() if k != "currency"}
    assert problems(INVOICE, answer(json.dumps(missing))) == "output $: 'currency' is a required property"


def test_a_tool_argument_problem_names_the_json_path_and_a_long_value_is_clipped():
    call = ToolCall("c1", "refund", json.dumps({"order_id": "A7", "amount": "x" * 5000}))
    (problem,) = validate_answer(TOOLS, answer(None, "tool_calls", [call])).problems
    assert problem.startswith("tool_calls[0] refund $.amount: 'xxx")
    assert problem.endswith("…") and len(problem) < 300


def test_a_schema_with_local_refs_validates_through_them():
    contract = contract_from_dict({
        "name": "priced", "version": 1, "workload": "structured", "output_mode": "json_schema",
        "output_schema": {"$defs": {"money": {"type": "number", "minimum": 0}}, "type": "object",
                          "required": ["total"], "properties": {"total": {"$ref": "#/$defs/money"}}},
    })
    assert validate_answer(contract, answer('{"total": 3}')).ok
    assert problems(contract, answer('{"total": -1}')) == "output $.total: -1 is less than the minimum of 0"


BOOKING = contract_from_dict({
    "name": "booking", "version": 1, "workload": "tools", "finish_reasons": ["tool_calls"],
    "tools": {"book_table": {
        "type": "object", "required": ["restaurant_id", "party_size", "time"], "additionalProperties": False,
        "properties": {"restaurant_id": {"type": "string"}, "party_size": {"type": "integer", "maximum": 20},
                       "time": {"type": "string", "format": "date-time"}, "contact": {"type": "string", "format": "email"}},
    }},
})


def test_tool_arguments_formats_are_checked_as_the_canary_checks_them():
    def call(**arguments):
        return answer(None, finish="tool_calls", tools=[ToolCall(id="c1", name="book_table", arguments=json.dumps(arguments))])

    good = {"restaurant_id": "r1", "party_size": 2, "time": "2026-12-03T19:30:00Z"}
    assert validate_answer(BOOKING, call(**good)).ok
    prose = problems(BOOKING, call(**{**good, "time": "half past seven tonight"}))
    assert "$.time" in prose and "date-time" in prose
    assert "email" in problems(BOOKING, call(**good, contact="not an address"))


def test_structured_output_formats_are_checked():
    contract = contract_from_dict({"name": "s", "version": 1, "workload": "structured", "output_mode": "json_schema",
                                   "output_schema": {"type": "object", "properties": {
                                       "id": {"type": "string", "format": "uuid"},
                                       "url": {"type": "string", "format": "uri"}}}})
    assert validate_answer(contract, answer(json.dumps({"id": "3f2b8c1e-4d5a-4b6c-8d7e-9f0a1b2c3d4e",
                                                        "url": "https://example.org/x"}))).ok
    bad = problems(contract, answer(json.dumps({"id": "not-a-uuid", "url": "no scheme here"})))
    assert "$.id" in bad and "$.url" in bad
