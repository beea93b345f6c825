"""The body check's verdicts on single fields (pure)."""

from __future__ import annotations

import pytest

from routing.request_check import BodyInvalid, body_check, caused_by_request

OK = {"messages": [{"role": "user", "content": "hi"}]}


@pytest.mark.parametrize(("extra", "path"), [
    ({"temperature": "hot"}, "temperature"),
    ({"temperature": 2.5}, "temperature"),
    ({"temperature": float("nan")}, "temperature"),
    ({"seed": 1.5}, "seed"),
    ({"stream": "yes"}, "stream"),
    ({"response_format": "json"}, "response_format"),
    ({"metadata": {"k\ud800": "v"}}, "metadata.k\ud800 (the key)"),
    ({"messages": [{"role": "user", "content": [{"type": "text"}]}]}, "messages[0].content[0].text"),
    ({"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": 3}}]}]}, "messages[0].content[0].image_url"),
    # Found by a new user's try: these went upstream and spent an attempt on a provider's 400.
    ({"response_format": {"type": "yaml"}}, "response_format.type"),
    ({"response_format": {"type": "json_schema"}}, "response_format.json_schema"),
    ({"response_format": {"type": "json_schema", "json_schema": {"schema": {}}}}, "response_format.json_schema.name"),
    ({"response_format": {"type": "json_schema", "json_schema": {"name": "x", "schema": []}}}, "response_format.json_schema.schema"),
    ({"max_tokens": 10**26}, "max_tokens"),
    ({"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": None, "tool_calls": [{"id": 1}]}]},
     "messages[1].tool_calls[0].id"),
    ({"messages": [{"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f"}}]}]},
     "messages[0].tool_calls[0].function.arguments"),
])
def test_a_bad_field_is_named_by_its_path(extra, path):
    with pytest.raises(BodyInvalid) as caught:
        body_check({**OK, **extra})
    assert caught.value.path == path


def test_a_well_formed_body_passes():
    body_check({**OK, "response_format": {"type": "json_schema", "json_schema": {"name": "x", "schema": {}, "strict": True}}})
    body_check({**OK, "response_format": {"type": "json_object"}})
    body_check({"messages": [{"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}, {"role": "tool", "tool_call_id": "c1", "content": "ok"}]})
    body_check({**OK, "temperature": 0, "top_p": 1, "stop": ["\n"], "max_tokens": 5, "tools": [],
                "messages": [{"role": "user", "content": [{"type": "text", "text": "é ✓ 😀"},
                                                          {"type": "image_url", "image_url": {"url": "https://x/y.png"}}]}]})


def test_deep_nesting_is_refused_not_recursed_into():
    deep: object = "x"
    for _ in range(200):
        deep = [deep]
    with pytest.raises(BodyInvalid, match="nested more than"):
        body_check({**OK, "metadata": {"deep": deep}})


def test_only_a_truncation_under_the_callers_own_max_tokens_is_the_requests_doing():
    assert caused_by_request("length", 3)
    assert not caused_by_request("length", None)
    assert not caused_by_request("stop", 3)


def test_an_integer_bound_is_said_as_an_integer():
    with pytest.raises(BodyInvalid, match=r"expected a number from 1 to 2147483647, got -5"):
        body_check({**OK, "max_tokens": -5})
    with pytest.raises(BodyInvalid, match=r"expected a number from 0 to 2, got 2.5"):
        body_check({**OK, "temperature": 2.5})
