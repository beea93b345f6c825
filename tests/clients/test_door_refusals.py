"""Mistakes a new user's trial sent through the openai SDK, refused at the door over real
HTTP (gunicorn) with a 400 naming the field, before any route sees them."""

from __future__ import annotations

from typing import Any

import openai
import pytest

from tests.clients.conftest import Live
from tests.routing.conftest import MODEL

USER = {"role": "user", "content": "Say hello to the traveller."}


def refused(live: Live, contract: str, **kwargs: Any) -> dict[str, Any]:
    """The error body of a call the gateway answers 400, after checking no route saw it."""
    client = openai.OpenAI(base_url=live.url, api_key=live.token, max_retries=0)
    before = sum(live.sim_requests().values())
    with pytest.raises(openai.BadRequestError) as caught:
        client.chat.completions.create(model=MODEL, extra_headers=live.headers(contract), **kwargs)
    assert sum(live.sim_requests().values()) == before
    body = caught.value.body
    return body.get("error", body) if isinstance(body, dict) else {}


@pytest.mark.django_db
@pytest.mark.parametrize(("messages", "field", "says"), [
    ([{"role": "system", "content": ""}, USER], "messages[0].content", "a system message needs text"),
    ([{"role": "developer", "content": "  "}, USER], "messages[0].content", "a developer message needs text"),
    ([USER, {"role": "assistant", "content": "Hello!"}, {"role": "assistant", "content": " "}, USER],
     "messages[2].content", "an assistant message needs text"),
    ([USER, {"role": "assistant", "content": None}, USER], "messages[1].content", "unless tool_calls"),
], ids=["system-empty", "developer-blank", "assistant-blank", "assistant-null"])
def test_a_blank_system_or_assistant_message_is_a_400_naming_it(live: Live, messages: list, field: str, says: str) -> None:
    error = refused(live, "chat@1", messages=messages)
    assert (error["code"], error["field"]) == ("invalid_request", field) and says in error["message"]


@pytest.mark.django_db
def test_an_assistant_turn_of_tool_calls_alone_still_passes(live: Live) -> None:
    client = openai.OpenAI(base_url=live.url, api_key=live.token, max_retries=0)
    call = {"id": "c1", "type": "function", "function": {"name": "book_table", "arguments": "{}"}}
    messages = [USER, {"role": "assistant", "content": None, "tool_calls": [call]},
                {"role": "tool", "tool_call_id": "c1", "content": "booked"}, {"role": "user", "content": "Thanks!"}]
    completion = client.chat.completions.create(model=MODEL, messages=messages, extra_headers=live.headers("chat@1"))
    assert completion.choices[0].message.content


@pytest.mark.django_db
@pytest.mark.parametrize(("response_format", "names"), [
    ({"type": "json_schema", "json_schema": {"name": "greeting", "schema": {"type": "object"}}}, "invoice@1"),
    ({"type": "json_object"}, "no contract loaded here has json_object output"),
], ids=["json_schema", "json_object"])
def test_a_json_format_under_a_contract_without_structured_output_is_a_400_naming_those_that_take_it(
        live: Live, response_format: dict, names: str) -> None:
    # Before, passed on to the host unvalidated: any reply, JSON or not, was accepted.
    error = refused(live, "chat@1", messages=[USER], response_format=response_format)
    assert (error["code"], error["field"]) == ("invalid_request", "response_format.type")
    assert "chat@1 has no structured output" in error["message"] and names in error["message"]
