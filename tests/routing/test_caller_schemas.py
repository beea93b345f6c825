"""A caller's tools and response_format under a contract (pure): a tool names what is
missing or misspelt, and a structured-output contract's schema is the contract's or a
400 naming the first path that differs, as for tools (routing/README.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from openai.lib._pydantic import to_strict_json_schema

from routing.contracts import contract_from_dict
from routing.request_check import RequestInvalid, check_request
from routing.request_shape import upstream_body
from tests.invoice_model import Invoice

WORKLOADS = json.loads((Path(__file__).resolve().parents[2] / "routing/contract_files/workloads.json").read_text())
BOOKING = contract_from_dict(next(c for c in WORKLOADS if c["name"] == "booking-agent"))
INVOICE = contract_from_dict(next(c for c in WORKLOADS if c["name"] == "invoice-extract"))
JSON_OBJECT = contract_from_dict({"name": "notes", "version": 1, "workload": "structured", "output_mode": "json_object"})
CHAT = contract_from_dict({"name": "chat", "version": 1, "workload": "text"})
MESSAGES = [{"role": "user", "content": "Extract the invoice: 2 coffees, 3.00 EUR."}]


def refusal(body: dict, contract) -> RequestInvalid:
    with pytest.raises(RequestInvalid) as caught:
        check_request(body, contract)
    return caught.value


def test_a_misspelt_function_key_names_itself_not_tool_none():
    # Found by a new user's trial: "tool None is not registered".
    tool = {"type": "function", "functoin": {"name": "book_table", "parameters": BOOKING.tools["book_table"]}}
    error = refusal({"messages": MESSAGES, "tools": [tool]}, BOOKING)
    assert error.path == "tools[0].functoin" and "None" not in str(error)
    assert "unknown field" in str(error) and '"function"' in str(error)


@pytest.mark.parametrize(("tool", "path", "says"), [
    ({"type": "function"}, "tools[0].function", "required"),
    ({"type": "function", "function": {"parameters": {}}}, "tools[0].function.name", "required"),
    ("book_table", "tools[0]", "got str"),
    ({"type": "function", "function": {"name": "cancel_table"}}, "tools[0].function.name", "not registered"),
])
def test_a_tool_without_its_function_or_name_says_which_is_missing(tool, path, says):
    error = refusal({"messages": MESSAGES, "tools": [tool]}, BOOKING)
    assert error.path == path and says in str(error)


def schema(contract=INVOICE) -> dict:
    return json.loads(json.dumps(contract.output_schema))


def json_schema(value: dict, name: str = "invoice") -> dict:
    return {"type": "json_schema", "json_schema": {"name": name, "schema": value, "strict": True}}


def test_a_callers_own_invoice_schema_is_refused_naming_the_first_path_that_differs():
    # Found by a new user's trial: a looser schema was silently replaced by the contract's.
    loose = schema()
    loose["required"] = ["currency", "total"]
    error = refusal({"messages": MESSAGES, "response_format": json_schema(loose)}, INVOICE)
    assert error.path == "response_format.json_schema.schema"
    assert "contract invoice-extract@1's output schema at $.required " in str(error)
    assert "the contract has ['currency', 'total', 'line_items'], the request has ['currency', 'total']" in str(error)
    no_schema = {"type": "json_schema", "json_schema": {"name": "invoice"}}
    error = refusal({"messages": MESSAGES, "response_format": no_schema}, INVOICE)
    # Found by a new user's trial: "differs ... at $.additionalProperties" for a schema never sent.
    assert error.path == "response_format.json_schema.schema" and str(error).startswith(f"{error.path}: missing")


def test_a_tool_without_parameters_is_told_they_are_missing():
    tool = {"type": "function", "function": {"name": "book_table"}}
    error = refusal({"messages": MESSAGES, "tools": [tool]}, BOOKING)
    assert error.path == "tools[0].function.parameters" and "missing" in str(error) and "differs" not in str(error)


@pytest.mark.parametrize(("contract", "given"), [
    (INVOICE, {"type": "text"}),
    (INVOICE, {"type": "json_object"}),
    (JSON_OBJECT, {"type": "text"}),
    (JSON_OBJECT, json_schema({"type": "object"})),
])
def test_another_output_mode_than_the_contracts_is_refused(contract, given):
    error = refusal({"messages": MESSAGES, "response_format": given}, contract)
    assert error.path == "response_format.type" and contract.key in str(error) and "omit response_format" in str(error)




def test_the_contracts_schema_passes_as_sent_or_as_the_sdks_parse_writes_it():
    check_request({"messages": MESSAGES}, INVOICE)  # omitted: the gateway sends the contract's
    check_request({"messages": MESSAGES, "response_format": json_schema(schema())}, INVOICE)
    described = schema()
    described["description"] = "An invoice"
    described["required"] = list(reversed(described["required"]))  # a set: its order says nothing
    check_request({"messages": MESSAGES, "response_format": json_schema(described, name="Mine")}, INVOICE)
    # chat.completions.parse(response_format=Invoice): titles and a $defs reference.
    sdk = to_strict_json_schema(Invoice)
    assert "$defs" in sdk
    check_request({"messages": MESSAGES, "response_format": json_schema(sdk, name="Invoice")}, INVOICE)
    check_request({"messages": MESSAGES, "response_format": {"type": "json_object"}}, JSON_OBJECT)


@pytest.mark.parametrize("given", [json_schema({"type": "object"}), {"type": "json_object"}])
def test_a_contract_without_structured_output_refuses_a_json_format_naming_those_that_take_it(given):
    # Before, passed on unvalidated: the routes were not chosen for honouring it and no
    # reply was checked against it.
    offered = {"json_schema": ["invoice-extract@1"], "json_object": ["notes@1"]}
    with pytest.raises(RequestInvalid) as caught:
        check_request({"messages": MESSAGES, "response_format": given}, CHAT, output_contracts=offered.__getitem__)
    error = caught.value
    assert error.path == "response_format.type" and "chat@1 has no structured output" in str(error)
    assert f"({offered[given['type']][0]})" in str(error) and "omit response_format" in str(error)
    # Without a contract of that mode loaded, it says there is none.
    with pytest.raises(RequestInvalid) as none:
        check_request({"messages": MESSAGES, "response_format": given}, CHAT, output_contracts=lambda mode: [])
    assert f"no contract loaded here has {given['type']} output" in str(none.value)
    # A gateway that cannot list them says where to send it all the same.
    assert "send it under a contract with" in str(refusal({"messages": MESSAGES, "response_format": given}, CHAT))


def test_a_contract_without_structured_output_takes_a_text_format_as_sent():
    given = {"type": "text"}
    check_request({"messages": MESSAGES, "response_format": given}, CHAT)
    assert upstream_body(CHAT, {"messages": MESSAGES, "response_format": given})["response_format"] == given


def test_a_recursive_or_unresolved_reference_is_compared_as_written():
    node = {"$defs": {"n": {"type": "object", "properties": {"next": {"$ref": "#/$defs/n"}}}}, "$ref": "#/$defs/n"}
    tree = contract_from_dict({"name": "tree", "version": 1, "workload": "structured", "output_mode": "json_schema",
                               "output_schema": node})
    check_request({"messages": MESSAGES, "response_format": json_schema(node)}, tree)
    other = {**node, "$defs": {"n": {"type": "object"}}}
    assert refusal({"messages": MESSAGES, "response_format": json_schema(other)}, tree).path == "response_format.json_schema.schema"
